#include "optics/Vectorial.h"

#include "base/Units.h"

#include <cmath>
#include <cstdio>

namespace wfs {

const char* imagingModelName(ImagingModel model)
{
    return model == ImagingModel::Vectorial ? "vectorial" : "scalar";
}

namespace {
using Complex = std::complex<double>;

// cos(theta) for sin(theta) = s: real below 1, +i sqrt(s^2 - 1) above (the branch whose wave decays into the sample).
Complex cosine(double s)
{
    const double c2 = 1.0 - s * s;
    return c2 >= 0.0 ? Complex(std::sqrt(c2), 0.0) : Complex(0.0, std::sqrt(-c2));
}

std::string number(double value)
{
    char text[32];
    std::snprintf(text, sizeof text, "%g", value);
    return text;
}
} // namespace

std::optional<DipoleSpec> dipoleFromText(const std::string& text)
{
    DipoleSpec d;
    if (text == "free")
        return d;
    d.free = false;
    if (text == "x" || text == "y" || text == "z") {
        d.theta = text == "z" ? 0.0 : M_PI / 2;
        d.phi = text == "y" ? M_PI / 2 : 0.0;
        return d;
    }
    // THETA,PHI as bare decimal numbers, read by core's one parser (base/Units.h): sscanf's %lf would also take
    // hexadecimal ("0x10" as 16), "nan" and "inf", which no other number of the program accepts.
    const size_t comma = text.find(',');
    if (comma == std::string::npos)
        return std::nullopt;
    const auto thetaValue = valueFromText(text.substr(0, comma)), phiValue = valueFromText(text.substr(comma + 1));
    if (!thetaValue || !phiValue || thetaValue->kind != ValueWithUnit::Kind::Bare || phiValue->kind != ValueWithUnit::Kind::Bare)
        return std::nullopt;
    const double theta = thetaValue->value, phi = phiValue->value;
    d.theta = theta * M_PI / 180.0;
    d.phi = phi * M_PI / 180.0;
    return d;
}

std::string dipoleText(const DipoleSpec& dipole)
{
    if (dipole.free)
        return "free";
    char text[64];
    std::snprintf(text, sizeof text, "theta %g deg, phi %g deg", dipole.theta * 180.0 / M_PI, dipole.phi * 180.0 / M_PI);
    return text;
}

std::string vectorialSpecError(const VectorialSpec& s)
{
    const auto index = [](double n) { return std::isfinite(n) && n >= 1.0 && n <= 4.0; };
    if (!index(s.immersionIndex))
        return "the immersion index must be from 1 to 4 (air 1, water 1.33, silicone 1.40, oil 1.515), got " + number(s.immersionIndex);
    if (!(s.numericalAperture > 0.0) || !(s.numericalAperture < s.immersionIndex))
        return "the numerical aperture must be above 0 and below the immersion index " + number(s.immersionIndex) + ", got "
               + number(s.numericalAperture);
    if (!index(s.sampleIndex))
        return "the sample's refractive index must be from 1 to 4 (water 1.33, cytosol about 1.37, mounting media 1.4-1.52), got "
               + number(s.sampleIndex);
    for (double n : {s.coverslipIndex, s.designCoverslipIndex})
        if (n != 0.0 && !index(n))
            return "the coverslip's refractive index must be from 1 to 4 (glass 1.52), got " + number(n);
    // The objective is designed to carry every ray of its aperture through the coverslip it is corrected for: a design
    // index at or below the NA has no real ray there, and its correction term would not be a phase.
    if (s.designCoverslipIndex != 0.0 && !(s.designCoverslipIndex > s.numericalAperture))
        return "the coverslip index the objective is designed for must be above the numerical aperture " + number(s.numericalAperture)
               + ", got " + number(s.designCoverslipIndex);
    for (double t : {s.coverslipThickness, s.designCoverslipThickness})
        if (!(t >= 0.0) || t > 2e-3)
            return "the coverslip's thickness must be from 0 to 2 mm (a #1.5 coverslip is 170 um), got " + number(t * 1e6) + " um";
    if (!(s.emitterDepth >= 0.0) || s.emitterDepth > 1e-3)
        return "the emitter's depth below the coverslip must be from 0 to 1 mm, got " + number(s.emitterDepth * 1e6) + " um";
    if (!s.dipole.free) {
        if (!(s.dipole.theta >= 0.0 && s.dipole.theta <= M_PI + 1e-12))
            return "the dipole's polar angle must be from 0 to 180 degrees (from the optical axis), got "
                   + number(s.dipole.theta * 180.0 / M_PI);
        if (!(std::abs(s.dipole.phi) <= 2.0 * M_PI + 1e-12))
            return "the dipole's azimuth must be from -360 to 360 degrees (from +x), got " + number(s.dipole.phi * 180.0 / M_PI);
    }
    return {};
}

VectorialPupil::VectorialPupil(const VectorialSpec& spec, double wavelength, const std::vector<double>& x, const std::vector<double>& y)
    : m_spec(spec)
{
    const double ni = spec.immersionIndex, ns = spec.sampleIndex;
    const double ng = spec.coverslipIndex > 0.0 ? spec.coverslipIndex : ni;
    const double ngDesign = spec.designCoverslipIndex > 0.0 ? spec.designCoverslipIndex : ng;
    const double tg = spec.coverslipThickness;
    const double tgDesign = spec.designCoverslipThickness > 0.0 ? spec.designCoverslipThickness : tg;
    const double k0 = 2.0 * M_PI / wavelength;
    const size_t pixels = x.size();
    const int fields = spec.dipole.free ? 6 : 2;
    m_matrix.assign(size_t(fields), std::vector<Complex>(pixels));
    m_depthRate.resize(pixels);
    m_coverslipPhase.resize(pixels);
    const double mu[3] = {std::sin(spec.dipole.theta) * std::cos(spec.dipole.phi), std::sin(spec.dipole.theta) * std::sin(spec.dipole.phi),
                          std::cos(spec.dipole.theta)};
    for (size_t i = 0; i < pixels; ++i) {
        const double rho = std::hypot(x[i], y[i]);
        const double phi = std::atan2(y[i], x[i]);
        const double sinI = spec.numericalAperture * rho / ni;
        const double cosI = std::sqrt(1.0 - sinI * sinI);
        const double sinS = spec.numericalAperture * rho / ns;
        const Complex cosS = cosine(sinS), cosG = cosine(spec.numericalAperture * rho / ng),
                      cosGDesign = cosine(spec.numericalAperture * rho / ngDesign);
        // t / cos(theta_s) for the sample -> coverslip interface (finite at the critical angle, where both vanish),
        // times t for coverslip -> immersion (1 when the coverslip is the immersion's index).
        const Complex pSample = 2.0 * ns / (ng * cosS + ns * cosG), sSample = 2.0 * ns / (ns * cosS + ng * cosG);
        const Complex pCover = 2.0 * ng * cosG / (ni * cosG + ng * cosI), sCover = 2.0 * ng * cosG / (ng * cosG + ni * cosI);
        // (n_i cos_i / n_s) x (t / cos_s) x 1 / sqrt(cos_i): the plane-wave Jacobian and the aplanatic apodisation.
        const double amplitude = ni * std::sqrt(cosI) / ns;
        const Complex p = amplitude * pSample * pCover, s = amplitude * sSample * sCover;
        const double c = std::cos(phi), sn = std::sin(phi);
        const Complex m[2][3] = {{p * cosS * c * c + s * sn * sn, (p * cosS - s) * c * sn, -p * sinS * c},
                                 {(p * cosS - s) * c * sn, p * cosS * sn * sn + s * c * c, -p * sinS * sn}};
        for (int cam = 0; cam < 2; ++cam) {
            if (spec.dipole.free) {
                for (int d = 0; d < 3; ++d)
                    m_matrix[size_t(cam * 3 + d)][i] = m[cam][d];
            } else {
                m_matrix[size_t(cam)][i] = m[cam][0] * mu[0] + m[cam][1] * mu[1] + m[cam][2] * mu[2];
            }
        }
        m_depthRate[i] = k0 * (ns * cosS - ni * cosI);
        m_coverslipPhase[i] = k0 * (tg * ng * cosG - tgDesign * ngDesign * cosGDesign);
    }
}

void VectorialPupil::depthFactor(double depth, double phaseScale, std::vector<Complex>& out) const
{
    out.resize(m_depthRate.size());
    const Complex is(0.0, phaseScale);
    for (size_t i = 0; i < out.size(); ++i)
        out[i] = std::exp(is * (depth * m_depthRate[i] + m_coverslipPhase[i]));
}

std::vector<double> VectorialPupil::powerFactor(double depth) const
{
    std::vector<Complex> factor;
    depthFactor(depth, 1.0, factor);
    std::vector<double> power(factor.size(), 0.0);
    for (const auto& m : m_matrix)
        for (size_t i = 0; i < power.size(); ++i)
            power[i] += std::norm(m[i] * factor[i]);
    return power;
}

} // namespace wfs
