#pragma once
// The phase map as a picture: a PNG with a colour bar, tick labels, the unit and the conventions, drawn
// with Qt's GUI module (QImage, QPainter, fonts) from the colour maps and units of core/io/Exports.h.
// The rendering library, shared by wavefront-cli and the desktop program, so that core needs no GUI.
// Text needs a QGuiApplication (the CLI makes one on the offscreen platform); without one the PNG is
// drawn without labels and says so in its tEXt "Comment".
#include "io/Exports.h"

#include <QByteArray>
#include <QImage>

#include <string>
#include <vector>

namespace wfs {

struct PhaseImageOptions {
    PhaseUnit unit = PhaseUnit::Waves;
    // true: phase wrapped to one wave (-0.5..0.5 waves, -pi..pi rad) with the cyclic map; false: the
    // full range with viridis.
    bool wrapped = false;
    int mapSize = 0;         // drawn size of the map in pixels; 0 = the phase map's size scaled to >= 384
    std::string title;       // drawn above the map; empty = none
    double wavelength = 0.0; // metres; needed for nm (and written into the caption)
    // What the map shows when it is not a phase (e.g. "field amplitude [relative]"): its values as they are,
    // viridis, this text as the colour bar's label and caption; empty = a phase in `unit`.
    std::string quantity;
    // Where the map's pixels lie on the pupil (FitResult::phaseMapGeometry): with a spacing, the picture has axes in
    // pupil radii (ticks every 0.5); 0 = none (a map of unknown geometry).
    PupilMapGeometry geometry;
};
// Colour-bar ticks for values from lo to hi: every multiple of one step within [lo, hi], the step
// 1, 2 or 5 times a power of ten, the largest such step that gives at least four ticks (so at most
// about ten). Zero is exactly 0. lo >= hi (or not finite) gives {lo}.
std::vector<double> colorBarTicks(double lo, double hi);
// The colour bar's label: "phase [waves]", "phase [nm]", "phase [rad]".
std::string colorBarLabel(PhaseUnit unit);

// The phase map (row 0 at the bottom, so drawn with y up) with axes in pupil radii where the geometry is known (their
// ticks also in the PNG's text "Axes"), a colour bar, its label with the unit
// (drawn upright beside the tick labels; also the PNG's text "ColorBarLabel"), round tick labels (the
// values also in the text "Ticks") and a caption.
// NaN pixels (outside the pupil) are white. Returns Format_RGB32.
QImage renderPhaseImage(const Image& phase, const PhaseImageOptions& options);
// The result's phase map; the geometry, when the options have none, the result's.
QByteArray phasePngBytes(const FitResult& result, const PhaseImageOptions& options);
// Any pupil map (phase, zonal remainder, amplitude) drawn as renderPhaseImage draws it, encoded as PNG.
QByteArray mapPngBytes(const Image& map, const PhaseImageOptions& options);
void writePhasePng(const std::string& path, const FitResult& result, const PhaseImageOptions& options, bool overwrite);

} // namespace wfs
