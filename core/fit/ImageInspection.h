#pragma once
// What an image viewer's tools measure, as plain numbers: the histogram of an image's values (behind a
// manual display range) and the values along a line drawn over it (a line profile). Image pixel
// coordinates throughout: pixel (column c, row r) has its centre at (c, r) and covers c - 0.5 .. c + 0.5.
#include "base/Image.h"

#include <cstddef>
#include <optional>
#include <utility>
#include <vector>

namespace wfs {

// Counts of values in `bins` equal bins over [low, high]: bin i holds the values in
// [low + i w, low + (i + 1) w) with w = (high - low) / bins; the last bin also holds `high` itself.
// NaN and infinities are left out (counted in nonFinite), finite values outside the range in below / above.
struct Histogram {
    double low = 0.0, high = 0.0;
    std::vector<size_t> counts; // empty when the range or the bin count was unusable
    size_t below = 0, above = 0, nonFinite = 0;

    double binWidth() const { return counts.empty() ? 0.0 : (high - low) / double(counts.size()); }
    double binCentre(size_t i) const { return low + (double(i) + 0.5) * binWidth(); }
};

// Empty counts when bins < 1, or low and high are not finite with low < high.
Histogram histogram(const std::vector<double>& values, double low, double high, int bins);

// The least and largest finite value; std::nullopt when there is none.
std::optional<std::pair<double, double>> finiteExtent(const std::vector<double>& values);

// Values sampled along the segment from (x0, y0) to (x1, y1) in image pixel coordinates, at
// n = ceil(length) + 1 equally spaced points from one end to the other (so no two samples are more than one
// pixel apart; a zero-length line gives the one value under its point), by bilinear interpolation between
// the four nearest pixel centres. A sample outside the image (beyond the outer pixels' edges, -0.5 and
// width - 0.5) is NaN, kept so that the distances stay evenly spaced; within the outer half pixel the edge
// pixels' values are extended. A sample touching a NaN pixel with a nonzero weight is NaN.
struct LineProfile {
    std::vector<double> distance; // from (x0, y0), in image pixels
    std::vector<double> value;
};
LineProfile lineProfile(const Image& image, double x0, double y0, double x1, double y1);

// The bilinear value at (x, y) as lineProfile samples it (NaN outside the image).
double bilinearAt(const Image& image, double x, double y);

} // namespace wfs
