#pragma once
// A field map: one Zernike coefficient against field position, one coloured disc per input of a batch
// (viridis, with a colour bar, round ticks, axis labels and the unit), drawn with QPainter. Inputs
// whose fit failed are drawn as grey crosses so a gap in the field is visible. A surface (a field model sampled on a
// grid) may lie under the points, so that each measured point is seen against the model. Text needs a
// QGuiApplication (wavefront-cli makes one on the offscreen platform).
#include <QByteArray>
#include <QImage>

#include "base/Image.h"

#include <optional>
#include <string>
#include <vector>

namespace wfs {

struct FieldMapPoint {
    double x = 0.0, y = 0.0; // field position, in the manifest's unit
    double value = 0.0;      // the coefficient; NaN = no result at this position
    std::string label;       // drawn beside the point when there are few points (the input's name)
};

// A quantity sampled on a regular grid over the field (a field model), drawn under the points with the same colours:
// sample (row r, column c) of `values` (row 0 at the bottom) lies at (x0 + c step, y0 + r step).
struct FieldMapSurface {
    Image values;
    double x0 = 0.0, y0 = 0.0, step = 1.0;
};

struct FieldMapOptions {
    std::string title;                      // e.g. "Noll 4 (defocus) across the field"
    std::string valueLabel;                 // the colour bar's label with its unit, e.g. "Noll 4 [waves]"
    std::string axisUnit;                   // the field position's unit, for the axis labels; empty = none stated
    int size = 640;                         // width of the map square in pixels
    std::optional<FieldMapSurface> surface; // drawn first, its extent and values part of the map's and the bar's ranges
};

// Throws std::invalid_argument when no point has a finite position.
QImage renderFieldMap(const std::vector<FieldMapPoint>& points, const FieldMapOptions& options);
QByteArray fieldMapPngBytes(const std::vector<FieldMapPoint>& points, const FieldMapOptions& options);

} // namespace wfs
