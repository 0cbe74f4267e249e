#include "fit/PsfAnalysis.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace wfs {

namespace {
double borderMedian(const Image& image)
{
    std::vector<double> border;
    for (int col = 0; col < image.width; ++col)
        for (int row : {0, image.height - 1})
            if (const double v = image.at(row, col); std::isfinite(v))
                border.push_back(v);
    for (int row = 1; row + 1 < image.height; ++row)
        for (int col : {0, image.width - 1})
            if (const double v = image.at(row, col); std::isfinite(v))
                border.push_back(v);
    if (border.empty())
        return 0.0;
    std::nth_element(border.begin(), border.begin() + long(border.size() / 2), border.end());
    return border[border.size() / 2];
}
} // namespace

PixelBox fluxBox(const Image& image, double fraction)
{
    if (image.isEmpty())
        return {};
    const double background = borderMedian(image);
    // The centre from clearly positive pixels; the enclosed flux from signed values, so that noise
    // about the background cancels instead of adding up over a large frame.
    double positive = 0.0, sx = 0.0, sy = 0.0, total = 0.0, peak = 0.0;
    for (double v : image.pixels)
        if (std::isfinite(v))
            peak = std::max(peak, v - background);
    for (int row = 0; row < image.height; ++row)
        for (int col = 0; col < image.width; ++col) {
            const double v = image.at(row, col) - background;
            if (!std::isfinite(v))
                continue;
            total += v;
            if (v > 0.05 * peak) {
                positive += v;
                sx += v * col;
                sy += v * row;
            }
        }
    if (!(positive > 0.0) || !(total > 0.0))
        return {};
    const double cx = sx / positive, cy = sy / positive;
    // Flux by Chebyshev distance (in whole pixels) from the centre, then the smallest half-size that
    // holds the fraction.
    const int largest = int(std::ceil(std::max({cx, image.width - 1 - cx, cy, image.height - 1 - cy}))) + 1;
    std::vector<double> byDistance(size_t(largest) + 1, 0.0);
    for (int row = 0; row < image.height; ++row)
        for (int col = 0; col < image.width; ++col) {
            const double v = image.at(row, col) - background;
            if (std::isfinite(v)) {
                const int d = int(std::ceil(std::max(std::abs(col - cx), std::abs(row - cy))));
                byDistance[size_t(std::min(d, largest))] += v;
            }
        }
    const double wanted = std::clamp(fraction, 0.0, 1.0) * total;
    double sum = 0.0;
    int half = largest;
    for (int d = 0; d <= largest; ++d) {
        sum += byDistance[size_t(d)];
        if (sum >= wanted) {
            half = d;
            break;
        }
    }
    half = std::max(half + 1, 8);
    const int side = std::min(2 * half, std::max(image.width, image.height));
    PixelBox box;
    box.width = std::min(side, image.width);
    box.height = std::min(side, image.height);
    box.col = std::clamp(int(std::lround(cx)) - box.width / 2, 0, image.width - box.width);
    box.row = std::clamp(int(std::lround(cy)) - box.height / 2, 0, image.height - box.height);
    return box;
}

} // namespace wfs
