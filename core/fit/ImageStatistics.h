#pragma once
// Statistics of images that preparation and analysis share: the median, sigma-clipped (robust) mean
// and deviation, and where a PSF is (its smoothed peak, an iterated centroid). Plain numbers in, plain
// numbers out; nothing here knows files or datasets.
#include "base/Image.h"

#include <cstddef>
#include <string>
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

// ---- Photon transfer: the camera's gain from the data themselves ----
//
// A PSF sampled at Q > 1 has no light at spatial frequencies above 1 / Q cycles per pixel (the OTF's
// cut-off), so the image's power there is noise only, and white: E|X(f)|^2 = sum_i w_i^2 var_i for the
// windowed image w d. With var_i = s_i / gain + floor (photon noise of the signal s above the background,
// plus the background's and the read noise, measured on the border), each plane gives
//     out-of-band power - floor sum w^2 = (sum w^2 s) / gain,
// and the gain is the least-squares slope over the planes (brighter planes weigh more). A separable Hann
// window keeps the crop's edges from leaking power; frequencies within 3 / size of the cut-off are left out.
struct PhotonTransferPlane {
    double signal = 0.0;      // sum w^2 s (data units)
    double excessPower = 0.0; // out-of-band power less the floor's share (data units^2)
};
struct PhotonTransfer {
    double gain = 0.0;              // electrons per data unit; 0 when there is no estimate (see `problem`)
    double outOfBandFraction = 0.0; // of the frequencies used
    std::vector<PhotonTransferPlane> planes;
    std::string problem; // why there is no estimate; empty when there is one
};
// `planes`: background-subtracted images (NaN where masked), all of one size; `floorVariance`: each plane's
// noise floor (data units^2, the border's variance); `samplingQ`: lambda / (2 NA pixel) or lambda F# / pixel.
PhotonTransfer estimatePhotonTransfer(const std::vector<Image>& planes, const std::vector<double>& floorVariance, double samplingQ);

} // namespace wfs
