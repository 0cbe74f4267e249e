#pragma once
// A field map: one Zernike coefficient against field position, one coloured disc per input of a batch
// (viridis, with a colour bar, round ticks, axis labels and the unit), drawn with QPainter. Inputs
// whose fit failed are drawn as grey crosses so a gap in the field is visible. Text needs a
// QGuiApplication (wavefront-cli makes one on the offscreen platform).
#include <QByteArray>
#include <QImage>

#include <string>
#include <vector>

namespace wfs {

struct FieldMapPoint {
    double x = 0.0, y = 0.0; // field position, in the manifest's unit
    double value = 0.0;      // the coefficient; NaN = no result at this position
    std::string label;       // drawn beside the point when there are few points (the input's name)
};

struct FieldMapOptions {
    std::string title;      // e.g. "Noll 4 (defocus) across the field"
    std::string valueLabel; // the colour bar's label with its unit, e.g. "Noll 4 [waves]"
    std::string axisUnit;   // the field position's unit, for the axis labels; empty = none stated
    int size = 640;         // width of the map square in pixels
};

// Throws std::invalid_argument when no point has a finite position.
QImage renderFieldMap(const std::vector<FieldMapPoint>& points, const FieldMapOptions& options);
QByteArray fieldMapPngBytes(const std::vector<FieldMapPoint>& points, const FieldMapOptions& options);

} // namespace wfs
