#include "fit/ImageInspection.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace wfs {

Histogram histogram(const std::vector<double>& values, double low, double high, int bins)
{
    Histogram h;
    h.low = low;
    h.high = high;
    if (bins < 1 || !std::isfinite(low) || !std::isfinite(high) || !(high > low) || !std::isfinite(high - low))
        return h;
    h.counts.assign(size_t(bins), 0);
    const double perUnit = double(bins) / (high - low);
    for (const double v : values) {
        if (!std::isfinite(v)) {
            ++h.nonFinite;
        } else if (v < low) {
            ++h.below;
        } else if (v > high) {
            ++h.above;
        } else {
            // Rounding may put a value just under a bin's edge into the next bin, never out of the range.
            const auto i = size_t(std::clamp((v - low) * perUnit, 0.0, double(bins - 1)));
            ++h.counts[i];
        }
    }
    return h;
}

std::optional<std::pair<double, double>> finiteExtent(const std::vector<double>& values)
{
    double low = std::numeric_limits<double>::infinity(), high = -low;
    for (const double v : values)
        if (std::isfinite(v)) {
            low = std::min(low, v);
            high = std::max(high, v);
        }
    if (!(high >= low))
        return std::nullopt;
    return std::make_pair(low, high);
}

double bilinearAt(const Image& image, double x, double y)
{
    const double nan = std::numeric_limits<double>::quiet_NaN();
    if (image.isEmpty() || !(x >= -0.5 && x <= image.width - 0.5 && y >= -0.5 && y <= image.height - 0.5))
        return nan;
    // Between the pixel centres; the outer half pixel takes the edge's value.
    x = std::clamp(x, 0.0, double(image.width - 1));
    y = std::clamp(y, 0.0, double(image.height - 1));
    const int c0 = std::min(int(std::floor(x)), std::max(0, image.width - 2));
    const int r0 = std::min(int(std::floor(y)), std::max(0, image.height - 2));
    const double fx = x - c0, fy = y - r0;
    double sum = 0.0;
    // Only the neighbours that weigh: on a pixel centre beside a NaN pixel the value is that pixel's own.
    for (int dr = 0; dr <= 1; ++dr)
        for (int dc = 0; dc <= 1; ++dc) {
            const double w = (dc ? fx : 1.0 - fx) * (dr ? fy : 1.0 - fy);
            if (w > 0.0)
                sum += w * image.at(r0 + dr, c0 + dc);
        }
    return sum;
}

LineProfile lineProfile(const Image& image, double x0, double y0, double x1, double y1)
{
    LineProfile p;
    const double length = std::hypot(x1 - x0, y1 - y0);
    if (!std::isfinite(length))
        return p;
    const size_t n = size_t(std::ceil(length)) + 1;
    p.distance.reserve(n);
    p.value.reserve(n);
    for (size_t i = 0; i < n; ++i) {
        // The ends exactly where the line ends (no drift from adding steps).
        const double t = n == 1 ? 0.0 : double(i) / double(n - 1);
        p.distance.push_back(t * length);
        p.value.push_back(bilinearAt(image, x0 + t * (x1 - x0), y0 + t * (y1 - y0)));
    }
    return p;
}

} // namespace wfs
