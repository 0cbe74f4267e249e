#include "optics/Sampling.h"

#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace wfs {

namespace {
void requirePositive(double value, const char* what)
{
    if (!(value > 0.0) || !std::isfinite(value))
        throw std::invalid_argument(std::string(what) + " must be a positive number");
}
} // namespace

bool samplingReaches(double q, double threshold)
{
    return q >= threshold * (1.0 - 1e-9);
}

Sampling computeSampling(const SamplingInput& in)
{
    Sampling s;
    if (in.samplingQ) {
        requirePositive(*in.samplingQ, "sampling Q");
        s.q = *in.samplingQ;
    } else {
        requirePositive(in.wavelength, "wavelength");
        if (in.pixelAngle || in.aperture) {
            if (!in.pixelAngle || !in.aperture)
                throw std::invalid_argument(
                    "an angular pixel scale needs the aperture diameter, and the aperture needs an angular pixel scale");
            requirePositive(*in.pixelAngle, "pixel scale");
            requirePositive(*in.aperture, "aperture");
            s.q = in.wavelength / (*in.aperture * *in.pixelAngle);
        } else if (in.pixelPitch && in.fNumber) {
            requirePositive(*in.pixelPitch, "pixel pitch");
            requirePositive(*in.fNumber, "f-number");
            s.q = in.wavelength * *in.fNumber / *in.pixelPitch;
        } else if (in.pixelPitch && in.numericalAperture) {
            requirePositive(*in.pixelPitch, "pixel pitch");
            requirePositive(*in.numericalAperture, "numerical aperture");
            if (*in.numericalAperture >= in.immersionIndex)
                throw std::invalid_argument("numerical aperture must be below the immersion index");
            s.q = in.wavelength / (2.0 * *in.numericalAperture * *in.pixelPitch);
        } else {
            throw std::invalid_argument("sampling is undetermined: give Q, or a pixel pitch with an f-number or NA, "
                                        "or an angular pixel scale with the aperture");
        }
    }
    if (!samplingReaches(s.q, kNyquistSampling)) {
        char text[160];
        std::snprintf(text, sizeof text, "sampling Q = %.3g is below Nyquist (Q < 2): the PSF is undersampled and aliased", s.q);
        s.warnings.emplace_back(text);
    }
    return s;
}

} // namespace wfs
