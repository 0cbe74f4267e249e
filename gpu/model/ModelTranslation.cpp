// The host-side translation between a Problem and the GPU model's device layout (ModelTranslation.h).
#include "gpu/model/ModelTranslation.h"

#include <cmath>
#include <complex>
#include <limits>
#include <stdexcept>
#include <string>

namespace wfs::gpu {

ModelDims modelDims(const Problem& problem, Precision precision)
{
    ModelDims d;
    d.n = problem.gridSize();
    d.planes = problem.planeCount();
    d.rowBegin = problem.rowBegin();
    d.bandRows = problem.rowEnd() - problem.rowBegin();
    d.pixels = problem.pupilPixelCount();
    d.terms = int(problem.modes().size());
    switch (problem.spec().objective) {
    case ObjectiveKind::LeastSquares:
        d.objective = DeviceObjective::LeastSquares;
        break;
    case ObjectiveKind::Poisson:
        d.objective = DeviceObjective::Poisson;
        break;
    case ObjectiveKind::WeightedLeastSquares:
        d.objective = DeviceObjective::WeightedLeastSquares;
        break;
    }
    d.gaussian = problem.spec().pupil.illumination.gaussian;
    // A zonal pupil: the host sends each pixel's phase and amplitude (the Zernike part included) and chains the
    // per-pixel gradient back; the device keeps no basis.
    // A spectrum's fields are filled per wavelength from the host's pupil values too.
    d.hostPupil = problem.hasZonalPhase() || problem.hasZonalAmplitude() || !problem.spectrum().empty();
    if (d.hostPupil) {
        d.terms = 0;
        d.gaussian = false;
    }
    d.defocusTerms = problem.hasDefocusParameters();
    // The vectorial model: core's factors (optics/Vectorial.h) go down once, the depth per evaluation.
    if (const VectorialPupil* vectorial = problem.vectorial())
        d.fields = vectorial->fieldCount();
    d.blur = !problem.transferFunction().empty();
    const std::vector<Problem::SpectralChannel>& spectrum = problem.spectrum();
    if (int(spectrum.size()) > ModelDims::kMaxChannels)
        throw std::invalid_argument("the GPU model holds at most " + std::to_string(ModelDims::kMaxChannels) + " wavelengths");
    d.channels = int(spectrum.size());
    for (int c = 0; c < d.channels; ++c) {
        const Problem::SpectralChannel& s = spectrum[size_t(c)];
        ChannelDims& ch = d.channel[c];
        ch.n = s.grid;
        ch.shift = (s.grid - d.n) / 2;
        ch.phaseScale = s.phaseScale;
        // As core/optics/CpuImageFormation.h: Parseval's (N'/N)^2 keeps the flux, 1/N'^4 the unnormalised transform's.
        ch.powerScale = s.weight * (double(s.grid) / d.n) * (double(s.grid) / d.n) / std::pow(double(s.grid), 4);
    }
    // Most problems weight every pixel 1 (the OOF preset, unmasked data); then no weight array is kept
    // and the objective reads one array less per pixel.
    d.weighted = false;
    if (problem.hasData())
        for (int k = 0; k < d.planes && !d.weighted; ++k)
            for (double w : problem.weights(k))
                if (w != 1.0) {
                    d.weighted = true;
                    break;
                }
    d.realBytes = precision == Precision::Double ? 8 : 4;
    return d;
}

ModelInput modelInput(const Problem& problem, Precision precision)
{
    ModelInput in;
    in.dims = modelDims(problem, precision);
    const ModelDims& d = in.dims;
    in.pupilIndex = problem.pupilIndex();
    in.x = problem.pupilX();
    in.y = problem.pupilY();
    in.transmission = problem.transmission();
    // Eigen is column-major: column t (one basis term over the pupil pixels) is already contiguous.
    if (d.terms > 0)
        in.basis.assign(problem.basis().data(), problem.basis().data() + problem.basis().size());
    in.diversity.reserve(size_t(d.pixels) * size_t(d.planes));
    for (const auto& plane : problem.diversityPhase())
        in.diversity.insert(in.diversity.end(), plane.begin(), plane.end());
    if (d.blur)
        in.transfer = problem.transferFunction();
    for (const Problem::SpectralChannel& s : problem.spectrum())
        in.channelIndex.push_back(s.index);
    if (d.defocusTerms)
        for (int k = 0; k < d.planes; ++k)
            in.defocusUnit.insert(in.defocusUnit.end(), problem.diversityUnitPhase(k).begin(), problem.diversityUnitPhase(k).end());
    if (const VectorialPupil* vectorial = problem.vectorial()) {
        auto pairs = [](const std::vector<std::complex<double>>& values, std::vector<double>& out) {
            for (const std::complex<double>& v : values)
                out.insert(out.end(), {v.real(), v.imag()});
        };
        for (int f = 0; f < vectorial->fieldCount(); ++f)
            pairs(vectorial->matrix(f), in.vectorialMatrix);
        pairs(vectorial->depthRate(), in.depthRate);
        pairs(vectorial->coverslipPhase(), in.coverslipPhase);
    }
    if (problem.hasData()) {
        in.data.resize(d.gridElements());
        if (d.weighted)
            in.weights.resize(d.gridElements());
        for (int k = 0; k < d.planes; ++k) {
            const std::vector<double>& data = problem.data(k);
            const std::vector<double>& weights = problem.weights(k);
            for (int row = 0; row < d.n; ++row) {
                for (int col = 0; col < d.n; ++col) {
                    const size_t grid = size_t(row) * size_t(d.n) + size_t(col);
                    in.data[d.element(k, row, col)] = data[grid];
                    if (d.weighted)
                        in.weights[d.element(k, row, col)] = weights[grid];
                }
            }
        }
    } else {
        in.data.assign(d.gridElements(), 0.0); // modelImages() only
    }
    return in;
}

std::vector<double> parameterBlock(const Problem& problem, const ModelDims& d, const ModelParameters& p)
{
    std::vector<double> block(size_t(d.parameterBlockSize()), 0.0);
    for (int t = 0; t < d.terms; ++t)
        block[size_t(d.coefficient(t))] = p.zernike[size_t(t)];
    block[size_t(d.centreX())] = p.centreX;
    block[size_t(d.centreY())] = p.centreY;
    block[size_t(d.amplitude())] = p.amplitude;
    block[size_t(d.sigma())] = p.sigma;
    for (int k = 0; k < d.planes; ++k) {
        block[size_t(d.intensity(k))] = p.flux[size_t(k)] * problem.intensityScale();
        block[size_t(d.background(k))] = p.background[size_t(k)];
        block[size_t(d.shiftX(k))] = p.shiftX[size_t(k)];
        block[size_t(d.shiftY(k))] = p.shiftY[size_t(k)];
    }
    if (d.hostPupil) {
        const Eigen::VectorXd phase = problem.pupilPhase(p);
        const std::vector<double> amplitude = problem.pupilAmplitude(p);
        for (int i = 0; i < d.pixels; ++i) {
            block[size_t(d.pupilPhase(i))] = phase[i];
            block[size_t(d.pupilAmplitude(i))] = amplitude[size_t(i)];
        }
    }
    if (d.defocusTerms)
        for (int k = 0; k < d.planes; ++k)
            block[size_t(d.defocusDelta(k))] = problem.defocusAmountChange(p, k);
    if (d.vectorial())
        block[size_t(d.emitterDepth())] = p.emitterDepth;
    return block;
}

double costAndGradient(const Problem& problem, const ModelDims& d, const ModelParameters& p, const double* result, double* gradient)
{
    double cost = 0.0;
    bool invalid = false;
    for (int k = 0; k < d.planes; ++k) {
        cost += result[d.cost(k)];
        invalid = invalid || result[d.invalidCount(k)] > 0.0;
    }
    if (gradient) {
        ModelParameters g = problem.zeroLike();
        for (int t = 0; t < d.terms; ++t)
            g.zernike[size_t(t)] = result[d.zernikeGradient(t)];
        if (d.defocusTerms)
            for (int k = 0; k < d.planes; ++k)
                problem.chainDefocusGradient(k, result[d.defocusGradient(k)], g);
        for (int k = 0; k < d.planes; ++k) {
            g.flux[size_t(k)] = result[d.intensityGradient(k)] * problem.intensityScale();
            g.background[size_t(k)] = result[d.backgroundGradient(k)];
            g.shiftX[size_t(k)] = result[d.shiftXGradient(k)];
            g.shiftY[size_t(k)] = result[d.shiftYGradient(k)];
        }
        if (d.vectorial())
            g.emitterDepth = result[d.depthGradient()]; // packed only where the depth is fitted
        cost += problem.regularization(p, &g);
        if (d.hostPupil) {
            // Per pixel dL/dphase and dL/da: the Zernike terms through the basis, the rest as the CPU model does.
            const Eigen::Map<const Eigen::VectorXd> dPhase(result + d.pixelPhaseGradient(0), d.pixels);
            const Eigen::VectorXd dz = problem.basis().transpose() * dPhase;
            for (Eigen::Index t = 0; t < dz.size(); ++t)
                g.zernike[size_t(t)] = dz[t];
            problem.chainPupilGradient(p, result + d.pixelPhaseGradient(0), result + d.pixelAmplitudeGradient(0), problem.pupilAmplitude(p),
                                       g);
            problem.pack(g, gradient);
            return invalid ? std::numeric_limits<double>::infinity() : cost;
        }
        // The device summed q = a dL/da and its moments; a = amp * t * exp(-|r - r0|^2 / (2 sigma^2)).
        const double q = result[d.illuminationSum(0)];
        g.amplitude = p.amplitude != 0.0 ? q / p.amplitude : 0.0;
        if (d.gaussian) {
            const double s2 = p.sigma * p.sigma;
            g.centreX = result[d.illuminationSum(1)] / s2;
            g.centreY = result[d.illuminationSum(2)] / s2;
            g.sigma = result[d.illuminationSum(3)] / (s2 * p.sigma);
        }
        problem.pack(g, gradient);
    } else {
        cost += problem.regularization(p, nullptr);
    }
    return invalid ? std::numeric_limits<double>::infinity() : cost;
}

} // namespace wfs::gpu
