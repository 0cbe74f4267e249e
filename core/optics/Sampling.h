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

// Throws std::invalid_argument naming the missing or bad quantity.
Sampling computeSampling(const SamplingInput& input);

} // namespace wfs
