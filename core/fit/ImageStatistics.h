#pragma once
// Statistics of images that preparation and analysis share: the median, sigma-clipped (robust) mean
// and deviation, and where a PSF is (its smoothed peak, an iterated centroid). Plain numbers in, plain
// numbers out; nothing here knows files or datasets.
#include <cstddef>
#include <utility>
#include <vector>

namespace wfs {

struct RobustStats {
    double mean = 0.0;
    double sigma = 0.0;
    size_t count = 0;
};

// The median (NaN for no values).
double median(std::vector<double> values);

// Sigma clipping: reject values more than `clip` robust deviations (1.4826 MAD) from the median until
// nothing changes, then the mean and standard deviation of what is left (the standard deviation corrected
// for the cut, as for a normal distribution).
RobustStats sigmaClipped(std::vector<double> values, double clip);

// An image to locate a PSF in: background-subtracted values, masked pixels 0, row-major.
struct WorkImage {
    int width = 0, height = 0;
    std::vector<double> v;
    // The value at (row, col), 0 outside the image.
    double at(int r, int c) const { return r < 0 || c < 0 || r >= height || c >= width ? 0.0 : v[size_t(r) * size_t(width) + size_t(c)]; }
    // The 3 x 3 mean around (row, col).
    double box(int r, int c) const
    {
        double s = 0.0;
        for (int dr = -1; dr <= 1; ++dr)
            for (int dc = -1; dc <= 1; ++dc)
                s += at(r + dr, c + dc);
        return s / 9.0;
    }
};

// The brightest pixel after 3 x 3 smoothing, as (x = column, y = row).
std::pair<double, double> peakOf(const WorkImage& image);

// The centroid of the positive pixels in a (2 radius + 1)-wide window around the peak, iterated as the
// window follows it; (x, y).
std::pair<double, double> centroidOf(const WorkImage& image, int radius);

} // namespace wfs
