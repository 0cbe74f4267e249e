#pragma once
// Sampling of the PSF: Q = lambda F# / pixel (Q = 2 is Nyquist). The pupil then spans N / Q samples.
#include <optional>
#include <string>
#include <vector>

namespace wfs {

struct SamplingInput {
    double wavelength = 0.0;          // metres
    std::optional<double> samplingQ;  // given directly
    std::optional<double> pixelPitch; // metres: detector pitch (with fNumber) or sample pitch (with NA)
    std::optional<double> fNumber;
    std::optional<double> numericalAperture;
    double immersionIndex = 1.0;
    std::optional<double> pixelAngle; // radians per pixel (with aperture)
    std::optional<double> aperture;   // metres (telescope diameter)
};

struct Sampling {
    double q = 0.0;
    std::vector<std::string> warnings;
};

constexpr double kNyquistSampling = 2.0;

// Whether the sampling q reaches the threshold, allowing for rounding in q's computation: a pitch chosen for Q = 2
// (e.g. 500 nm / (2 x 0.75 x 166.67 nm)) computes to 1.9999999999999998, which is Nyquist and not below it.
// Every comparison of a sampling with a threshold goes through this one rule.
bool samplingReaches(double q, double threshold);

// Throws std::invalid_argument naming the missing or bad quantity.
Sampling computeSampling(const SamplingInput& input);

} // namespace wfs
