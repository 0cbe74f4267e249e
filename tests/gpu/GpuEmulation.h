#pragma once
// The GPU model's evaluation emulated on the host (tst_gpumodel, tst_gpuvectorial): the kernels' per-sample
// functions (gpu/model/ModelMath.h) in the kernels' order, with FFTW plans of the cuFFT plans' batched layout in
// place of cuFFT, so that the device layout, the formulas and the result block are checked against the CPU backend
// on machines without a device; and the random points and comparisons both suites use.
#include "TestSupport.h"

#include "engine/DeviceReference.h"
#include "gpu/model/ModelLayout.h"
#include "gpu/model/ModelMath.h"
#include "gpu/model/ModelTranslation.h"

#include <fftw3.h>

#include <QString>

#include <algorithm>
#include <random>

#include <limits>
#include <vector>

namespace wfs::test {

template <typename Real>
struct HostComplex {
    Real x, y;
};

template <typename Real>
struct HostFft;

template <>
struct HostFft<double> {
    // One FFTW plan with the batched layout of a cuFFT plan, made on (and executed in place at) data.
    static fftw_plan plan(int n, const gpu::ModelDims::BatchedTransform& t, HostComplex<double>* data, int sign)
    {
        int length[1] = {n};
        auto* d = reinterpret_cast<fftw_complex*>(data);
        return fftw_plan_many_dft(1, length, t.batch, d, length, t.stride, t.distance, d, length, t.stride, t.distance, sign,
                                  FFTW_ESTIMATE);
    }
    // 2-D transforms of every plane in the interleaved layout: a spectrum channel's, or the blur's on the model grid.
    static fftw_plan channelPlan(const gpu::ChannelDims& ch, int planes, HostComplex<double>* data, int sign)
    {
        int sizes[2] = {ch.n, ch.n}, embed[2] = {ch.n, ch.n * planes};
        auto* p = reinterpret_cast<fftw_complex*>(data);
        return fftw_plan_many_dft(2, sizes, planes, p, embed, 1, ch.n, p, embed, 1, ch.n, sign, FFTW_ESTIMATE);
    }
    static void run(fftw_plan p)
    {
        fftw_execute(p);
        fftw_destroy_plan(p);
    }
};

template <>
struct HostFft<float> {
    static fftwf_plan plan(int n, const gpu::ModelDims::BatchedTransform& t, HostComplex<float>* data, int sign)
    {
        int length[1] = {n};
        auto* d = reinterpret_cast<fftwf_complex*>(data);
        return fftwf_plan_many_dft(1, length, t.batch, d, length, t.stride, t.distance, d, length, t.stride, t.distance, sign,
                                   FFTW_ESTIMATE);
    }
    static fftwf_plan channelPlan(const gpu::ChannelDims& ch, int planes, HostComplex<float>* data, int sign)
    {
        int sizes[2] = {ch.n, ch.n}, embed[2] = {ch.n, ch.n * planes};
        auto* p = reinterpret_cast<fftwf_complex*>(data);
        return fftwf_plan_many_dft(2, sizes, planes, p, embed, 1, ch.n, p, embed, 1, ch.n, sign, FFTW_ESTIMATE);
    }
    static void run(fftwf_plan p)
    {
        fftwf_execute(p);
        fftwf_destroy_plan(p);
    }
};

// A spectrum (ModelDims::channels), as ModelDevice's enqueueSpectrum: each wavelength's field filled, its 2-D inverse
// FFT (sign +1), |field|^2 added to the intensity buffer. Returns the fields for the way back.
template <typename Real>
std::vector<std::vector<HostComplex<Real>>> spectrumForward(const gpu::ModelInput& in, const std::vector<double>& block,
                                                            const gpu::math::Arrays<Real>& a, HostComplex<Real>* intensity)
{
    const gpu::ModelDims& d = in.dims;
    std::vector<std::vector<HostComplex<Real>>> fields(size_t(d.channels));
    for (int c = 0; c < d.channels; ++c) {
        const gpu::ChannelDims& ch = d.channel[c];
        std::vector<HostComplex<Real>>& field = fields[size_t(c)];
        field.assign(ch.elements(d.slices()), HostComplex<Real>{0, 0});
        for (int p = 0; p < d.pixels; ++p)
            for (int k = 0; k < d.planes; ++k)
                gpu::math::channelFillSample(d, c, block.data(), a, p, k, in.channelIndex[size_t(c)][size_t(p)], field.data());
        HostFft<Real>::run(HostFft<Real>::channelPlan(ch, d.slices(), field.data(), +1));
        const size_t rowLength = size_t(d.n) * size_t(d.planes);
        for (size_t e = 0; e < d.gridElements(); ++e)
            intensity[e] = gpu::math::channelPowerSample<Real>(
                d, ch, static_cast<const HostComplex<Real>*>(field.data()), static_cast<const HostComplex<Real>*>(intensity),
                int((e % rowLength) / size_t(d.n)), int(e / rowLength), int(e % size_t(d.n)), c == 0);
    }
    return fields;
}

// The way back, as enqueueSpectrumAdjoint: per wavelength dL/d(buffer), its forward FFT and the gather, then the
// pupil rows (pixelReduceKernel) into the result block.
template <typename Real>
void spectrumAdjoint(const gpu::ModelInput& in, const std::vector<double>& block, const gpu::math::Arrays<Real>& a,
                     const HostComplex<Real>* intensity, std::vector<std::vector<HostComplex<Real>>>& fields, std::vector<double>& result)
{
    const gpu::ModelDims& d = in.dims;
    std::vector<double> dPhasePlane(size_t(d.pixels) * size_t(d.planes), 0.0), dAmplitude(size_t(d.pixels), 0.0);
    for (int c = 0; c < d.channels; ++c) {
        const gpu::ChannelDims& ch = d.channel[c];
        HostComplex<Real>* field = fields[size_t(c)].data();
        const size_t rowLength = size_t(ch.n) * size_t(d.slices());
        for (size_t j = 0; j < ch.elements(d.slices()); ++j)
            gpu::math::channelScatterSample<Real>(d, ch, intensity, int((j % rowLength) / size_t(ch.n)), int(j / rowLength),
                                                  int(j % size_t(ch.n)), field);
        HostFft<Real>::run(HostFft<Real>::channelPlan(ch, d.slices(), field, -1));
        for (int p = 0; p < d.pixels; ++p)
            for (int k = 0; k < d.planes; ++k) {
                Real dPhase, dA;
                double depth;
                gpu::math::channelAdjointSample(d, c, block.data(), a, p, k, in.channelIndex[size_t(c)][size_t(p)],
                                                static_cast<const HostComplex<Real>*>(field), &dPhase, &dA, &depth);
                dPhasePlane[size_t(k) * size_t(d.pixels) + size_t(p)] += double(dPhase);
                dAmplitude[size_t(p)] += double(dA);
                if (d.vectorial())
                    result[size_t(d.depthGradient())] += depth;
            }
    }
    for (int p = 0; p < d.pixels; ++p) {
        double dPhaseTotal = 0.0;
        for (int k = 0; k < d.planes; ++k) {
            const double dPhase = dPhasePlane[size_t(k) * size_t(d.pixels) + size_t(p)];
            dPhaseTotal += dPhase;
            result[size_t(d.shiftXGradient(k))] += dPhase * double(a.x[p]);
            result[size_t(d.shiftYGradient(k))] += dPhase * double(a.y[p]);
            if (d.defocusTerms)
                result[size_t(d.defocusGradient(k))] += gpu::math::defocusTerm(d, a, p, k, Real(dPhase));
        }
        result[size_t(d.pixelPhaseGradient(p))] = dPhaseTotal;
        result[size_t(d.pixelAmplitudeGradient(p))] = dAmplitude[size_t(p)];
    }
}

// What ModelDevice::evaluate computes, in the same order: (the vectorial factors,) fill, inverse band-row and column FFTs (sign
// +1 as CUFFT_INVERSE), objective, forward column and band-row FFTs, gather, sums into the result
// block. With `images`, stops after the inverse FFTs and returns the model images there instead.
template <typename Real>
std::vector<double> emulate(const gpu::ModelInput& in, const std::vector<double>& block, bool gradient,
                            std::vector<double>* images = nullptr)
{
    const gpu::ModelDims& d = in.dims;
    auto real = [](const std::vector<double>& v) { return std::vector<Real>(v.begin(), v.end()); };
    const std::vector<Real> basis = real(in.basis), x = real(in.x), y = real(in.y), transmission = real(in.transmission),
                            diversity = real(in.diversity), data = real(in.data), weights = real(in.weights),
                            defocusUnit = real(in.defocusUnit), transfer = real(in.transfer);
    const std::vector<int> bandMap = gpu::makeBandMap(d, in.pupilIndex);
    std::vector<Real> phase(size_t(d.pixels)), amplitude(size_t(d.pixels)), coefficients(size_t(d.terms));
    for (int t = 0; t < d.terms; ++t)
        coefficients[size_t(t)] = Real(block[size_t(d.coefficient(t))]);
    gpu::math::Arrays<Real> a;
    a.basis = basis.data();
    a.x = x.data();
    a.y = y.data();
    a.transmission = transmission.data();
    a.diversity = diversity.data();
    a.defocusUnit = d.defocusTerms ? defocusUnit.data() : nullptr;
    a.transfer = d.blur ? transfer.data() : nullptr;
    a.bandMap = bandMap.data();
    a.pupilIndex = in.pupilIndex.data();
    a.data = data.data();
    a.weights = d.weighted ? weights.data() : nullptr;
    a.phase = phase.data();
    a.amplitude = amplitude.data();
    // The vectorial model: core's factors as sent, and the factors at the block's depth (factorKernel).
    std::vector<Real> factor(in.vectorialMatrix.size() * size_t(d.factorSets()));
    if (d.vectorial()) {
        a.vectorialMatrix = in.vectorialMatrix.data();
        a.depthRate = in.depthRate.data();
        a.coverslipPhase = in.coverslipPhase.data();
        a.factor = factor.data();
        for (int set = 0; set < d.factorSets(); ++set)
            for (int fi = 0; fi < d.fields; ++fi)
                for (int p = 0; p < d.pixels; ++p)
                    gpu::math::factorSample(d, block.data(), a, set, fi, p);
    }

    // Dirty, as the device's buffer is after an evaluation: the fill must write every element of every slice.
    const Real dirty = std::numeric_limits<Real>::quiet_NaN();
    std::vector<HostComplex<Real>> field(d.channels > 0 ? 0 : d.fieldElements(), HostComplex<Real>{dirty, dirty});
    HostComplex<Real>* f = field.data();
    std::vector<HostComplex<Real>> intensity(d.intensityPath() ? d.gridElements() : 0);
    HostComplex<Real>* in2 = intensity.data();
    std::vector<std::vector<HostComplex<Real>>> channelFields;
    const auto rows = d.bandRowTransforms(), columns = d.columnTransforms();
    if (d.channels > 0) {
        channelFields = spectrumForward(in, block, a, in2);
    } else {
        for (int row = 0; row < d.n; ++row)
            for (int col = 0; col < d.n; ++col)
                gpu::math::fillSample(d, block.data(), coefficients.data(), a, row, col, f);
        HostFft<Real>::run(HostFft<Real>::plan(d.n, rows, f + rows.offset, +1));
        HostFft<Real>::run(HostFft<Real>::plan(d.n, columns, f + columns.offset, +1));
    }
    // The blur (ModelDims::blur): |S|^2 into the intensity buffer, its 2-D FFT per plane, times H / N^2, back.
    gpu::ChannelDims modelGrid;
    modelGrid.n = d.n;
    auto blur = [&] {
        HostFft<Real>::run(HostFft<Real>::channelPlan(modelGrid, d.planes, in2, -1));
        for (size_t e = 0; e < d.gridElements(); ++e)
            gpu::math::blurSample(d, a, int(e / (size_t(d.n) * size_t(d.planes))), int(e % size_t(d.n)), in2, e);
        HostFft<Real>::run(HostFft<Real>::channelPlan(modelGrid, d.planes, in2, +1));
    };
    if (d.blur && d.channels == 0)
        for (size_t e = 0; e < d.gridElements(); ++e)
            in2[e] = gpu::math::powerSample<Real>(d, static_cast<const HostComplex<Real>*>(f), e);
    if (d.blur)
        blur();
    const size_t perPlane = size_t(d.n) * size_t(d.n);
    if (images) {
        images->resize(d.gridElements());
        for (int k = 0; k < d.planes; ++k)
            for (size_t j = 0; j < perPlane; ++j) {
                const int row = int(j / size_t(d.n)), col = int(j % size_t(d.n));
                (*images)[size_t(k) * perPlane + j] =
                    d.intensityPath() ? gpu::math::blurredIntensitySample(d, block.data(), k, in2[d.element(k, row, col)])
                                      : gpu::math::intensitySample(d, block.data(), k, static_cast<const HostComplex<Real>*>(f), row, col);
            }
        return {};
    }

    std::vector<double> result(size_t(d.resultSize()), 0.0);
    for (int k = 0; k < d.planes; ++k) {
        double sums[gpu::ModelDims::kObjectiveValues] = {0.0, 0.0, 0.0, 0.0};
        for (size_t j = 0; j < perPlane; ++j) {
            const int row = int(j / size_t(d.n)), col = int(j % size_t(d.n));
            if (d.intensityPath())
                gpu::math::blurredObjectiveSample(d, block.data(), a, k, d.element(k, row, col), gradient, in2, sums);
            else
                gpu::math::objectiveSample(d, block.data(), a, k, row, col, gradient, f, sums);
        }
        for (int v = 0; v < gpu::ModelDims::kObjectiveValues; ++v)
            result[size_t(d.cost(k) + v)] = sums[v];
    }
    if (!gradient)
        return result;
    if (d.blur)
        blur();
    if (d.channels > 0) {
        spectrumAdjoint(in, block, a, in2, channelFields, result);
        return result;
    }
    if (d.blur)
        for (size_t e = 0; e < d.gridElements(); ++e)
            gpu::math::scatterSample<Real>(d, static_cast<const HostComplex<Real>*>(in2), e, f);
    HostFft<Real>::run(HostFft<Real>::plan(d.n, columns, f + columns.offset, -1));
    HostFft<Real>::run(HostFft<Real>::plan(d.n, rows, f + rows.offset, -1));
    for (int p = 0; p < d.pixels; ++p) {
        double dPhaseTotal = 0.0, q = 0.0, dAmplitudeTotal = 0.0;
        for (int k = 0; k < d.planes; ++k) {
            Real dPhase, qk, dAmplitude;
            gpu::math::adjointSample(d, block.data(), a, p, k, static_cast<const HostComplex<Real>*>(f), &dPhase, &qk, &dAmplitude);
            dPhaseTotal += double(dPhase);
            q += double(qk);
            dAmplitudeTotal += double(dAmplitude);
            if (d.vectorial())
                result[size_t(d.depthGradient())] += gpu::math::depthTerm(a, p, dPhase, qk);
            result[size_t(d.shiftXGradient(k))] += double(dPhase) * double(x[size_t(p)]);
            result[size_t(d.shiftYGradient(k))] += double(dPhase) * double(y[size_t(p)]);
            if (d.defocusTerms)
                result[size_t(d.defocusGradient(k))] += gpu::math::defocusTerm(d, a, p, k, dPhase);
        }
        if (d.hostPupil) {
            result[size_t(d.pixelPhaseGradient(p))] = dPhaseTotal;
            result[size_t(d.pixelAmplitudeGradient(p))] = dAmplitudeTotal;
        }
        for (int t = 0; t < d.terms; ++t)
            result[size_t(d.zernikeGradient(t))] += double(basis[size_t(t) * size_t(d.pixels) + size_t(p)]) * dPhaseTotal;
        double terms[gpu::ModelDims::kIlluminationValues];
        gpu::math::illuminationTerms(d, block.data(), a, p, q, terms);
        for (int v = 0; v < gpu::ModelDims::kIlluminationValues; ++v)
            result[size_t(d.illuminationSum(v))] += terms[v];
    }
    return result;
}

// A random point around the start, as the device check's reference points are chosen (engine/DeviceReference.h).
inline std::vector<double> randomParameters(const Problem& problem, std::uint64_t seed)
{
    return perturbedParameters(problem, problem.initialParameters(), seed);
}

// The emulated device at x, in the input's precision: cost and gradient (through the host's chain rule, as GpuModel
// does), the cost-only evaluation's cost, and the model images plane after plane.
struct EmulatedPoint {
    double cost = 0.0, costOnly = 0.0;
    std::vector<double> gradient, images;
};

inline EmulatedPoint emulatePoint(const Problem& problem, const gpu::ModelInput& in, const std::vector<double>& x)
{
    const ModelParameters p = problem.unpack(x.data());
    const std::vector<double> block = gpu::parameterBlock(problem, in.dims, p);
    auto run = [&](bool gradient, std::vector<double>* images) {
        return in.dims.realBytes == 8 ? emulate<double>(in, block, gradient, images) : emulate<float>(in, block, gradient, images);
    };
    EmulatedPoint e;
    e.gradient.resize(x.size());
    const std::vector<double> result = run(true, nullptr);
    e.cost = gpu::costAndGradient(problem, in.dims, p, result.data(), e.gradient.data());
    const std::vector<double> costOnly = run(false, nullptr);
    e.costOnly = gpu::costAndGradient(problem, in.dims, p, costOnly.data(), nullptr);
    run(false, &e.images);
    return e;
}

// Cost and gradient against the float64 CPU backend's: the gradient component-wise to `tolerance` relative (float64)
// or to `tolerance` times the largest scaled component (float32, and as the floor of the relative rule).
inline QString costGradientMismatch(const Problem& problem, double cost, const std::vector<double>& g, double cpuCost,
                                    const std::vector<double>& gc, double tolerance, bool relative)
{
    if (!closeTo(cost, cpuCost, tolerance, 0.0))
        return QStringLiteral("cost %1, CPU %2").arg(cost, 0, 'g', 15).arg(cpuCost, 0, 'g', 15);
    const std::vector<double> scales = problem.parameterScales();
    double largest = 0.0;
    for (size_t i = 0; i < gc.size(); ++i)
        largest = std::max(largest, std::abs(gc[i] * scales[i]));
    for (size_t i = 0; i < g.size(); ++i)
        if (!closeTo(g[i] * scales[i], gc[i] * scales[i], relative ? tolerance : 0.0, tolerance * largest))
            return QStringLiteral("%1: %2, CPU %3 (largest scaled component %4)")
                .arg(QString::fromStdString(problem.parameters()[i].label))
                .arg(g[i], 0, 'g', 15)
                .arg(gc[i], 0, 'g', 15)
                .arg(largest, 0, 'g', 6);
    return {};
}

// Model images (plane after plane, N x N each) against the CPU's to `tolerance` of each plane's peak; empty when
// they agree, else the first pixel that does not.
inline QString imageMismatch(const std::vector<std::vector<double>>& reference, const std::vector<double>& images, int n, double tolerance)
{
    const size_t perPlane = size_t(n) * size_t(n);
    if (images.size() != reference.size() * perPlane)
        return QStringLiteral("%1 image values, expected %2").arg(images.size()).arg(reference.size() * perPlane);
    for (size_t k = 0; k < reference.size(); ++k) {
        const double peak = *std::max_element(reference[k].begin(), reference[k].end());
        for (size_t j = 0; j < perPlane; ++j)
            if (!closeTo(images[k * perPlane + j], reference[k][j], 0.0, tolerance * peak))
                return QStringLiteral("plane %1 pixel %2: %3, CPU %4").arg(k).arg(j).arg(images[k * perPlane + j]).arg(reference[k][j]);
    }
    return {};
}

} // namespace wfs::test
