// The parameter vector the solver sees: which model values are free (termIndex, zeroLike), their start
// values, scales, and the mapping between the vector and ModelParameters (unpack, pack). Problem's members.
#include "optics/Problem.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace wfs {

int Problem::termIndex(int position) const
{
    return zernike::firstIndex(m_spec.basis.ordering) + position;
}

ModelParameters Problem::zeroLike() const
{
    ModelParameters p;
    p.zernike.assign(m_modes.size(), 0.0);
    p.centreX = p.centreY = p.amplitude = p.sigma = 0.0;
    const size_t k = m_spec.planes.size();
    p.flux.assign(k, 0.0);
    p.background.assign(k, 0.0);
    p.shiftX.assign(k, 0.0);
    p.shiftY.assign(k, 0.0);
    p.zonalPhase.assign(hasZonalPhase() ? size_t(pupilPixelCount()) : 0, 0.0);
    p.zonalAmplitude.assign(hasZonalAmplitude() ? size_t(pupilPixelCount()) : 0, 0.0);
    p.defocusScale = 0.0;
    p.defocusOffset.assign(k, 0.0);
    p.emitterDepth = 0.0;
    return p;
}

namespace {
// The member of p (const or not) that a free parameter stands for.
template <class Parameters>
auto& slot(Parameters& p, const ParameterInfo& info)
{
    switch (info.kind) {
    case ParameterKind::Zernike:
        return p.zernike[size_t(info.index)];
    case ParameterKind::CentreX:
        return p.centreX;
    case ParameterKind::CentreY:
        return p.centreY;
    case ParameterKind::Amplitude:
        return p.amplitude;
    case ParameterKind::Sigma:
        return p.sigma;
    case ParameterKind::Flux:
        return p.flux[size_t(info.index)];
    case ParameterKind::Background:
        return p.background[size_t(info.index)];
    case ParameterKind::ShiftX:
        return p.shiftX[size_t(info.index)];
    case ParameterKind::ShiftY:
        return p.shiftY[size_t(info.index)];
    case ParameterKind::ZonalPhase:
        return p.zonalPhase[size_t(info.index)];
    case ParameterKind::ZonalAmplitude:
        return p.zonalAmplitude[size_t(info.index)];
    case ParameterKind::DefocusScale:
        return p.defocusScale;
    case ParameterKind::DefocusOffset:
        return p.defocusOffset[size_t(info.index)];
    case ParameterKind::EmitterDepth:
        return p.emitterDepth;
    }
    return p.amplitude;
}

ModelParameters fixedValues(const ProblemSpec& spec, size_t terms, size_t pupilPixels)
{
    ModelParameters p;
    p.zernike.assign(terms, 0.0);
    for (size_t t = 1; t < terms && t < spec.basis.start.size(); ++t)
        p.zernike[t] = spec.basis.start[t];
    const Illumination& ill = spec.pupil.illumination;
    p.centreX = ill.x0;
    p.centreY = ill.y0;
    p.amplitude = ill.amplitude;
    p.sigma = ill.sigma;
    for (const PlaneSpec& plane : spec.planes) {
        p.flux.push_back(plane.flux);
        p.background.push_back(plane.background);
        p.shiftX.push_back(plane.shiftX);
        p.shiftY.push_back(plane.shiftY);
    }
    const auto zonal = [&](bool used, const std::vector<double>& start) {
        return !used ? std::vector<double>{} : start.empty() ? std::vector<double>(pupilPixels, 0.0) : start;
    };
    p.zonalPhase = zonal(spec.phaseModel != PupilPhaseModel::Zernike, spec.zonalPhaseStart);
    p.zonalAmplitude = zonal(spec.amplitudeModel == PupilAmplitudeModel::Zonal, spec.zonalAmplitudeStart);
    p.defocusScale = spec.nuisance.defocusScale;
    p.defocusOffset = spec.nuisance.defocusOffsets.empty() ? std::vector<double>(spec.planes.size(), 0.0) : spec.nuisance.defocusOffsets;
    p.emitterDepth = spec.vectorial.emitterDepth;
    return p;
}
} // namespace

std::vector<double> Problem::initialParameters() const
{
    ModelParameters p = fixedValues(m_spec, m_modes.size(), size_t(pupilPixelCount()));
    std::vector<double> out(m_parameters.size());
    for (size_t i = 0; i < m_parameters.size(); ++i)
        out[i] = slot(p, m_parameters[i]);
    return out;
}

std::vector<double> Problem::parameterScales() const
{
    const std::vector<double> start = initialParameters();
    std::vector<double> scales(start.size(), 1.0);
    for (size_t i = 0; i < start.size(); ++i) {
        switch (m_parameters[i].kind) {
        case ParameterKind::Amplitude:
        case ParameterKind::Sigma:
        case ParameterKind::Flux:
            scales[i] = start[i] != 0.0 ? std::abs(start[i]) : 1.0;
            break;
        case ParameterKind::Background:
            scales[i] = std::max(std::abs(start[i]), 1.0);
            break;
        case ParameterKind::DefocusOffset: {
            // A tenth of the largest defocus in the same unit: 0.1 um in a +-1 um stack, 0.1 wave in +-1 wave.
            const std::string unit = m_spec.planes[size_t(m_parameters[i].index)].diversity.amountUnit();
            double largest = 0.0;
            for (size_t k = 0; k < m_diversityAmount.size(); ++k)
                if (unit == m_spec.planes[k].diversity.amountUnit())
                    largest = std::max(largest, std::abs(m_diversityAmount[k]));
            scales[i] = largest > 0.0 ? 0.1 * largest : 1.0;
            break;
        }
        case ParameterKind::EmitterDepth:
            scales[i] = m_spec.wavelength; // a wavelength of depth: a fraction of a wave of spherical aberration
            break;
        case ParameterKind::ZonalPhase:
        case ParameterKind::ZonalAmplitude:
            // A unit-RMS Zernike term moves all P pupil pixels, a zonal value one of them: the data's curvature
            // (Fisher information) along a zonal value is about 1/P of a Zernike term's. Scaled by sqrt(P), the
            // two look alike to the solver: on the bead stack at grid 256 (P ~ 8000) L-BFGS then converges in
            // 71 iterations instead of 909, to the same cost.
            scales[i] = std::sqrt(double(pupilPixelCount()));
            break;
        default:
            break;
        }
    }
    return scales;
}

ModelParameters Problem::unpack(const double* parameters) const
{
    ModelParameters p = fixedValues(m_spec, m_modes.size(), size_t(pupilPixelCount()));
    for (size_t i = 0; i < m_parameters.size(); ++i)
        slot(p, m_parameters[i]) = parameters[i];
    return p;
}

void Problem::pack(const ModelParameters& full, double* out) const
{
    for (size_t i = 0; i < m_parameters.size(); ++i)
        out[i] = slot(full, m_parameters[i]);
}

} // namespace wfs
