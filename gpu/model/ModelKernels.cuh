// The forward model's kernels, part of ModelDevice.cu: the precision's complex type and cuFFT execution, the warp
// and block reductions, and the fill, factor, objective, blur, spectrum, gather, reduce and image kernels (templates
// for float and double). Included by ModelDevice.cu only, the file that launches them (one translation unit:
// no relocatable device code); everything here is in its anonymous namespace.
#pragma once
#include "gpu/DeviceResources.h"
#include "gpu/model/ModelMath.h"

#include <cstddef>

namespace wfs::gpu {

namespace {

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;

template <typename Real>
struct Fft;

template <>
struct Fft<double> {
    using Complex = cufftDoubleComplex;
    static constexpr cufftType kType = CUFFT_Z2Z;
    static void exec(cufftHandle plan, Complex* data, int direction, const char* file, int line)
    {
        checkCufft(cufftExecZ2Z(plan, data, data, direction), "cufftExecZ2Z", file, line);
    }
};

template <>
struct Fft<float> {
    using Complex = cufftComplex;
    static constexpr cufftType kType = CUFFT_C2C;
    static void exec(cufftHandle plan, Complex* data, int direction, const char* file, int line)
    {
        checkCufft(cufftExecC2C(plan, data, data, direction), "cufftExecC2C", file, line);
    }
};

__device__ inline double warpSum(double v)
{
    for (int offset = 16; offset > 0; offset >>= 1)
        v += __shfl_down_sync(0xffffffffu, v, offset);
    return v;
}

// Adds v over the warp into row[warp] of a kWarps-wide shared row; every thread must call it.
__device__ inline void warpPartial(double v, double* row)
{
    v = warpSum(v);
    if ((threadIdx.x & 31) == 0)
        row[threadIdx.x >> 5] = v;
}

// After a __syncthreads: the block's sums of every pupil row (its warps' partial sums in warpSums, [pupilRows][kWarps])
// into the partials' column for this block.
__device__ inline void blockPupilPartials(const ModelDims& d, const double* warpSums, double* partials, int stride)
{
    for (int r = threadIdx.x; r < d.pupilRows(); r += blockDim.x) {
        double total = 0.0;
        for (int w = 0; w < kWarps; ++w)
            total += warpSums[std::size_t(r) * kWarps + w];
        partials[std::size_t(d.objectiveRows() + r) * std::size_t(stride) + blockIdx.x] = total;
    }
}

// One thread per grid sample (row, col), writing it in every plane.
template <typename Real>
__global__ void __launch_bounds__(kThreads)
    fillKernel(ModelDims d, const double* __restrict__ block, math::Arrays<Real> a, typename Fft<Real>::Complex* __restrict__ field)
{
    extern __shared__ double sharedMemory[];
    Real* coefficients = reinterpret_cast<Real*>(sharedMemory);
    for (int t = threadIdx.x; t < d.terms; t += blockDim.x)
        coefficients[t] = Real(block[d.coefficient(t)]);
    __syncthreads();
    const std::size_t total = std::size_t(d.n) * std::size_t(d.n);
    for (std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += std::size_t(gridDim.x) * blockDim.x)
        math::fillSample(d, block, coefficients, a, int(i / std::size_t(d.n)), int(i % std::size_t(d.n)), field);
}

// The vectorial factors: one thread per (wavelength, field, pupil pixel).
template <typename Real>
__global__ void __launch_bounds__(kThreads) factorKernel(ModelDims d, const double* __restrict__ block, math::Arrays<Real> a)
{
    const std::size_t perSet = std::size_t(d.fields) * std::size_t(d.pixels), total = perSet * std::size_t(d.factorSets());
    for (std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += std::size_t(gridDim.x) * blockDim.x)
        math::factorSample(d, block, a, int(i / perSet), int((i % perSet) / std::size_t(d.pixels)), int(i % std::size_t(d.pixels)));
}

// blockIdx.y = plane. Block sums go to partials[row * stride + blockIdx.x] for the plane's four
// objective rows.
template <typename Real>
__global__ void __launch_bounds__(kThreads)
    objectiveKernel(ModelDims d, const double* __restrict__ block, math::Arrays<Real> a, typename Fft<Real>::Complex* __restrict__ field,
                    double* __restrict__ partials, int stride, bool gradient)
{
    __shared__ double sums[ModelDims::kObjectiveValues][kWarps];
    const int k = blockIdx.y;
    double local[ModelDims::kObjectiveValues] = {0.0, 0.0, 0.0, 0.0};
    const std::size_t perPlane = std::size_t(d.n) * std::size_t(d.n);
    for (std::size_t j = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; j < perPlane; j += std::size_t(gridDim.x) * blockDim.x) {
        const int row = int(j / std::size_t(d.n)), col = int(j % std::size_t(d.n));
        if (d.intensityPath()) // `field` is the intensity buffer then
            math::blurredObjectiveSample(d, block, a, k, d.element(k, row, col), gradient, field, local);
        else
            math::objectiveSample(d, block, a, k, row, col, gradient, field, local);
    }
    for (int v = 0; v < ModelDims::kObjectiveValues; ++v)
        warpPartial(local[v], sums[v]);
    __syncthreads();
    if (threadIdx.x < ModelDims::kObjectiveValues) {
        double total = 0.0;
        for (int w = 0; w < kWarps; ++w)
            total += sums[threadIdx.x][w];
        partials[std::size_t(d.cost(k) + int(threadIdx.x)) * std::size_t(stride) + blockIdx.x] = total;
    }
}

// ---- the detector blur (ModelDims::blur): one thread per grid element of every plane ----

template <typename Real>
__global__ void __launch_bounds__(kThreads)
    powerKernel(ModelDims d, const typename Fft<Real>::Complex* __restrict__ field, typename Fft<Real>::Complex* __restrict__ intensity)
{
    for (std::size_t e = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; e < d.gridElements(); e += std::size_t(gridDim.x) * blockDim.x)
        intensity[e] = math::powerSample<Real>(d, field, e);
}

// Element e = (row K + k) N + col of the intensity buffer: its grid sample is (row, col) whatever the plane.
template <typename Real>
__global__ void __launch_bounds__(kThreads)
    blurKernel(ModelDims d, math::Arrays<Real> a, typename Fft<Real>::Complex* __restrict__ intensity)
{
    for (std::size_t e = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; e < d.gridElements(); e += std::size_t(gridDim.x) * blockDim.x)
        math::blurSample(d, a, int(e / (std::size_t(d.n) * std::size_t(d.planes))), int(e % std::size_t(d.n)), intensity, e);
}

template <typename Real>
__global__ void __launch_bounds__(kThreads)
    scatterKernel(ModelDims d, const typename Fft<Real>::Complex* __restrict__ intensity, typename Fft<Real>::Complex* __restrict__ field)
{
    for (std::size_t e = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; e < d.gridElements(); e += std::size_t(gridDim.x) * blockDim.x)
        math::scatterSample<Real>(d, intensity, e, field);
}

// ---- a spectrum (ModelDims::channels): one wavelength's field at a time ----

// One thread per pupil pixel, writing it in every plane (and field) of channel c's (cleared) field.
template <typename Real>
__global__ void __launch_bounds__(kThreads)
    channelFillKernel(ModelDims d, int c, const double* __restrict__ block, math::Arrays<Real> a, const int* __restrict__ index,
                      typename Fft<Real>::Complex* __restrict__ field)
{
    const int p = int(blockIdx.x) * blockDim.x + threadIdx.x;
    if (p >= d.pixels)
        return;
    for (int k = 0; k < d.planes; ++k)
        math::channelFillSample(d, c, block, a, p, k, index[p], field);
}

// Every model element: the intensity buffer (re)set or added to with channel c's |field|^2.
template <typename Real>
__global__ void __launch_bounds__(kThreads) channelPowerKernel(ModelDims d, int c, const typename Fft<Real>::Complex* __restrict__ field,
                                                               typename Fft<Real>::Complex* __restrict__ intensity, bool first)
{
    const std::size_t rowLength = std::size_t(d.n) * std::size_t(d.planes);
    for (std::size_t e = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; e < d.gridElements(); e += std::size_t(gridDim.x) * blockDim.x)
        intensity[e] = math::channelPowerSample<Real>(d, d.channel[c], field, intensity, int((e % rowLength) / std::size_t(d.n)),
                                                      int(e / rowLength), int(e % std::size_t(d.n)), first);
}

// Every element of channel c: dL/d(buffer) from dL/d|S|^2 in the intensity buffer.
template <typename Real>
__global__ void __launch_bounds__(kThreads)
    channelScatterKernel(ModelDims d, int c, const typename Fft<Real>::Complex* __restrict__ intensity,
                         typename Fft<Real>::Complex* __restrict__ field)
{
    const ChannelDims& ch = d.channel[c];
    const std::size_t rowLength = std::size_t(ch.n) * std::size_t(d.slices());
    for (std::size_t j = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; j < ch.elements(d.slices());
         j += std::size_t(gridDim.x) * blockDim.x)
        math::channelScatterSample<Real>(d, ch, intensity, int((j % rowLength) / std::size_t(ch.n)), int(j / rowLength),
                                         int(j % std::size_t(ch.n)), field);
}

// One thread per pupil pixel: channel c's dL/dphase per plane, dL/da and (vectorial) dL/d(depth) added to the
// spectrum's sums.
template <typename Real>
__global__ void __launch_bounds__(kThreads)
    channelGatherKernel(ModelDims d, int c, const double* __restrict__ block, math::Arrays<Real> a, const int* __restrict__ index,
                        const typename Fft<Real>::Complex* __restrict__ field, double* __restrict__ dPhasePlane,
                        double* __restrict__ dAmplitude, double* __restrict__ dDepth, bool first)
{
    const int p = int(blockIdx.x) * blockDim.x + threadIdx.x;
    if (p >= d.pixels)
        return;
    double amplitudeSum = first ? 0.0 : dAmplitude[p];
    double depthSum = first || !d.vectorial() ? 0.0 : dDepth[p];
    for (int k = 0; k < d.planes; ++k) {
        Real dPhase, dA;
        double depth;
        math::channelAdjointSample(d, c, block, a, p, k, index[p], field, &dPhase, &dA, &depth);
        const std::size_t i = std::size_t(k) * std::size_t(d.pixels) + std::size_t(p);
        dPhasePlane[i] = (first ? 0.0 : dPhasePlane[i]) + double(dPhase);
        amplitudeSum += double(dA);
        depthSum += depth;
    }
    dAmplitude[p] = amplitudeSum;
    if (d.vectorial())
        dDepth[p] = depthSum;
}

// One thread per pupil pixel, after every channel's gather: the pupil rows' block sums (shifts, defocus; no basis
// and no illumination sums with hostPupil) and the pixel's own dL/dphase and dL/da, as gatherKernel's.
template <typename Real>
__global__ void __launch_bounds__(kThreads)
    pixelReduceKernel(ModelDims d, math::Arrays<Real> a, const double* __restrict__ dPhasePlane, const double* __restrict__ dAmplitude,
                      const double* __restrict__ dDepth, double* __restrict__ partials, int stride, double* __restrict__ result)
{
    extern __shared__ double warpSums[]; // [pupilRows][kWarps]
    const int p = int(blockIdx.x) * blockDim.x + threadIdx.x;
    const bool active = p < d.pixels;
    double dPhaseTotal = 0.0;
    for (int k = 0; k < d.planes; ++k) {
        const double dPhase = active ? dPhasePlane[std::size_t(k) * std::size_t(d.pixels) + std::size_t(p)] : 0.0;
        dPhaseTotal += dPhase;
        warpPartial(active ? dPhase * double(a.x[p]) : 0.0, warpSums + std::size_t(d.terms + k) * kWarps);
        warpPartial(active ? dPhase * double(a.y[p]) : 0.0, warpSums + std::size_t(d.terms + d.planes + k) * kWarps);
        if (d.defocusTerms)
            warpPartial(active ? math::defocusTerm(d, a, p, k, Real(dPhase)) : 0.0,
                        warpSums + std::size_t(d.defocusGradient(k) - d.objectiveRows()) * kWarps);
    }
    for (int v = 0; v < ModelDims::kIlluminationValues; ++v)
        warpPartial(0.0, warpSums + std::size_t(d.terms + 2 * d.planes + v) * kWarps);
    if (d.vectorial())
        warpPartial(active ? dDepth[p] : 0.0, warpSums + std::size_t(d.depthGradient() - d.objectiveRows()) * kWarps);
    if (active) {
        result[d.pixelPhaseGradient(p)] = dPhaseTotal;
        result[d.pixelAmplitudeGradient(p)] = dAmplitude[p];
    }
    __syncthreads();
    blockPupilPartials(d, warpSums, partials, stride);
}

// One thread per pupil pixel; field holds dL/dE (checkerboard-signed) after the forward FFTs. Block
// sums of every pupil row of the result block (ModelDims::pupilRows) go to the partials; with hostPupil
// the pixel's own dL/dphase and dL/da go straight to the result block.
template <typename Real>
__global__ void __launch_bounds__(kThreads)
    gatherKernel(ModelDims d, const double* __restrict__ block, math::Arrays<Real> a, const typename Fft<Real>::Complex* __restrict__ field,
                 double* __restrict__ partials, int stride, double* __restrict__ result)
{
    extern __shared__ double warpSums[]; // [pupilRows][kWarps]
    const int p = int(blockIdx.x) * blockDim.x + threadIdx.x;
    const bool active = p < d.pixels;
    double dPhaseTotal = 0.0, q = 0.0, dAmplitudeTotal = 0.0, depth = 0.0;
    for (int k = 0; k < d.planes; ++k) {
        double dPhaseX = 0.0, dPhaseY = 0.0, defocus = 0.0;
        if (active) {
            Real dPhase, qk, dAmplitude;
            math::adjointSample(d, block, a, p, k, field, &dPhase, &qk, &dAmplitude);
            dPhaseTotal += double(dPhase);
            q += double(qk);
            dAmplitudeTotal += double(dAmplitude);
            if (d.vectorial())
                depth += math::depthTerm(a, p, dPhase, qk);
            dPhaseX = double(dPhase) * double(a.x[p]);
            dPhaseY = double(dPhase) * double(a.y[p]);
            if (d.defocusTerms)
                defocus = math::defocusTerm(d, a, p, k, dPhase);
        }
        // Every thread reaches the shuffles (inactive ones add 0).
        warpPartial(dPhaseX, warpSums + std::size_t(d.terms + k) * kWarps);
        warpPartial(dPhaseY, warpSums + std::size_t(d.terms + d.planes + k) * kWarps);
        if (d.defocusTerms)
            warpPartial(defocus, warpSums + std::size_t(d.defocusGradient(k) - d.objectiveRows()) * kWarps);
    }
    if (d.hostPupil && active) {
        result[d.pixelPhaseGradient(p)] = dPhaseTotal;
        result[d.pixelAmplitudeGradient(p)] = dAmplitudeTotal;
    }
    for (int t = 0; t < d.terms; ++t) {
        const double v = active ? double(a.basis[std::size_t(t) * std::size_t(d.pixels) + std::size_t(p)]) * dPhaseTotal : 0.0;
        warpPartial(v, warpSums + std::size_t(t) * kWarps);
    }
    double illumination[ModelDims::kIlluminationValues] = {0.0, 0.0, 0.0, 0.0};
    if (active)
        math::illuminationTerms(d, block, a, p, q, illumination);
    for (int v = 0; v < ModelDims::kIlluminationValues; ++v)
        warpPartial(illumination[v], warpSums + std::size_t(d.terms + 2 * d.planes + v) * kWarps);
    if (d.vectorial())
        warpPartial(depth, warpSums + std::size_t(d.depthGradient() - d.objectiveRows()) * kWarps);
    __syncthreads();
    blockPupilPartials(d, warpSums, partials, stride);
}

// One block per result value: the sum of that row's partials, in a fixed order.
__global__ void __launch_bounds__(kThreads) reduceKernel(const double* __restrict__ partials, int stride, int objectiveRows,
                                                         int objectiveColumns, int pupilColumns, double* __restrict__ out)
{
    __shared__ double sums[kWarps];
    const int row = blockIdx.x;
    const int columns = row < objectiveRows ? objectiveColumns : pupilColumns;
    double sum = 0.0;
    for (int c = threadIdx.x; c < columns; c += blockDim.x)
        sum += partials[std::size_t(row) * std::size_t(stride) + std::size_t(c)];
    warpPartial(sum, sums);
    __syncthreads();
    if (threadIdx.x == 0) {
        double total = 0.0;
        for (int w = 0; w < kWarps; ++w)
            total += sums[w];
        out[row] = total;
    }
}

// Plane k's model image, N x N row-major (the CPU backend's layout); `field` is the blurred intensity with blur.
template <typename Real>
__global__ void intensityKernel(ModelDims d, const double* __restrict__ block, int k, const typename Fft<Real>::Complex* __restrict__ field,
                                double* __restrict__ out)
{
    const std::size_t perPlane = std::size_t(d.n) * std::size_t(d.n);
    for (std::size_t j = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; j < perPlane; j += std::size_t(gridDim.x) * blockDim.x) {
        const int row = int(j / std::size_t(d.n)), col = int(j % std::size_t(d.n));
        out[j] = d.intensityPath() ? math::blurredIntensitySample(d, block, k, field[d.element(k, row, col)])
                                   : math::intensitySample(d, block, k, field, row, col);
    }
}

} // namespace

} // namespace wfs::gpu
