// The forward model and its adjoint on the device. Same mathematics as core/optics/CpuModel.cpp (read
// that first): the checkerboard instead of fftshift, the row FFTs pruned to the band of pupil rows, the
// objectives' per-pixel formulas in the same order of operations, every reduction in float64.
//
// One evaluation, all planes at once:
//   copy in   the parameter block (pinned host -> device)
//   factors   the vectorial model only: each field's factor per pupil pixel at the block's emitter depth
//   fill      pupil pixels: phase = basis . c (+ diversity + tip/tilt), field = checkerboard * a e^{i phase}
//             (times each factor: F fields per plane, vectorial); every other element 0 (the whole buffer is
//             rewritten, since the FFTs leave it dirty)
//   FFT       inverse rows of the band, then inverse columns: two cuFFT executions for all planes (and fields)
//   objective cost per pixel, reduced per block; with the gradient, dL/dS written in place
//   FFT       forward columns, then forward rows of the band (the adjoint)
//   gather    per pupil pixel dL/dphase and a dL/da from every plane (the vectorial fields' adjoints summed into
//             one pupil field first), then block sums of basis * dL/dphase (the Zernike gradient), tip/tilt,
//             illumination and emitter-depth terms
//   reduce    one block per result value sums the blocks' partial sums (fixed order: reproducible)
//   copy out  the result block (device -> pinned host)
// Captured into one CUDA graph per kind of evaluation and replayed with a single launch.
#include "gpu/model/ModelDevice.h"

#include "gpu/model/ModelKernels.cuh"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace wfs::gpu {

namespace {

constexpr int kObjectiveElementsPerThread = 4;
constexpr int kMaxObjectiveBlocksPerPlane = 1024;
// Context, graphs, reduction buffers and the parameter/result blocks: what the memory check keeps back.
constexpr std::size_t kReserveBytes = std::size_t(64) << 20;

int blocksFor(std::size_t count, std::size_t perBlock, std::size_t cap)
{
    return int(std::max<std::size_t>(1, std::min(cap, (count + perBlock - 1) / perBlock)));
}

std::string gibText(std::size_t bytes)
{
    char text[32];
    std::snprintf(text, sizeof text, "%.2f GiB", double(bytes) / double(std::size_t(1) << 30));
    return text;
}

template <typename Real>
std::vector<Real> converted(const std::vector<double>& values)
{
    return std::vector<Real>(values.begin(), values.end());
}

} // namespace

void checkDeviceMemory(const ModelDims& dims, std::size_t workBytes, std::size_t freeBytes, std::size_t totalBytes,
                       const std::string& device)
{
    const std::size_t resident = dims.residentBytes();
    const std::size_t needed = resident + workBytes + kReserveBytes;
    if (needed <= freeBytes)
        return;
    throw CudaError("out of GPU memory: grid " + std::to_string(dims.n) + " x " + std::to_string(dims.n) + ", "
                    + std::to_string(dims.planes) + " planes, " + (dims.realBytes == 8 ? "float64" : "float32") + " needs "
                    + gibText(needed) + " of device memory (" + gibText(resident) + " of arrays, " + gibText(workBytes)
                    + " of FFT work area) but " + gibText(freeBytes) + " of " + gibText(totalBytes) + " are free on " + device
                    + "; use a smaller grid, float precision or the CPU backend");
}

struct ModelDevice::Impl {
    virtual ~Impl() = default;
    virtual const ModelDims& dims() const = 0;
    virtual const double* evaluate(const double* parameterBlock, bool gradient) = 0;
    virtual std::vector<double> intensities(const double* parameterBlock) = 0;
    virtual double measureFftMs(int repeats) = 0;
    virtual const std::string& launchMode() const = 0;
};

namespace {

template <typename Real>
class TypedModel final : public ModelDevice::Impl {
public:
    using Complex = typename Fft<Real>::Complex;

    TypedModel(int deviceOrdinal, const ModelInput& input, bool useGraphs)
        : m_device(deviceOrdinal)
        , m_dims(input.dims)
    {
        WFS_CUDA_CHECK(cudaSetDevice(m_device));
        cudaDeviceProp prop{};
        WFS_CUDA_CHECK(cudaGetDeviceProperties(&prop, m_device));
        m_stream = std::make_unique<CudaStream>();

        // Launch shapes, fixed for the life of the model (the graphs bake them in).
        const std::size_t perPlane = std::size_t(m_dims.n) * std::size_t(m_dims.n);
        m_fillBlocks = blocksFor(perPlane, kThreads, std::size_t(1) << 20);
        m_gridBlocks = blocksFor(m_dims.gridElements(), kThreads, std::size_t(1) << 20);
        m_objectiveBlocks = blocksFor(perPlane, std::size_t(kThreads) * kObjectiveElementsPerThread, kMaxObjectiveBlocksPerPlane);
        m_gatherBlocks = blocksFor(std::size_t(m_dims.pixels), kThreads, std::size_t(1) << 30);
        m_partialStride = std::max(m_objectiveBlocks, m_gatherBlocks);

        makePlans();
        std::size_t freeBytes = 0, totalBytes = 0;
        WFS_CUDA_CHECK(cudaMemGetInfo(&freeBytes, &totalBytes));
        checkDeviceMemory(m_dims, m_workBytes, freeBytes, totalBytes, prop.name);

        upload(input);
        if (m_workBytes > 0) {
            m_work.resize(m_workBytes);
            for (const CufftPlan* plan : plans())
                WFS_CUFFT_CHECK(cufftSetWorkArea(plan->get(), m_work.data()));
        }
        if (useGraphs)
            captureGraphs();
        else
            m_launchMode = "stream (CUDA graphs switched off)";
    }

    const ModelDims& dims() const override { return m_dims; }
    const std::string& launchMode() const override { return m_launchMode; }

    const double* evaluate(const double* parameterBlock, bool gradient) override
    {
        WFS_CUDA_CHECK(cudaSetDevice(m_device));
        std::copy(parameterBlock, parameterBlock + m_dims.parameterBlockSize(), m_hostBlock.data());
        const CudaGraphExec& graph = gradient ? m_gradientGraph : m_costGraph;
        if (graph.isValid())
            graph.launch(m_stream->get());
        else
            enqueue(gradient);
        WFS_CUDA_CHECK(cudaStreamSynchronize(m_stream->get()));
        return m_hostResult.data();
    }

    std::vector<double> intensities(const double* parameterBlock) override
    {
        WFS_CUDA_CHECK(cudaSetDevice(m_device));
        std::copy(parameterBlock, parameterBlock + m_dims.parameterBlockSize(), m_hostBlock.data());
        const cudaStream_t s = m_stream->get();
        WFS_CUDA_CHECK(cudaMemcpyAsync(m_block.data(), m_hostBlock.data(), m_block.size() * sizeof(double), cudaMemcpyHostToDevice, s));
        enqueueForward();
        // One plane at a time through a resident N x N buffer: the live display asks for images
        // repeatedly, and a K N^2 buffer would be the largest allocation of all at big grids.
        const std::size_t perPlane = std::size_t(m_dims.n) * std::size_t(m_dims.n);
        std::vector<double> out(m_dims.gridElements());
        for (int k = 0; k < m_dims.planes; ++k) {
            intensityKernel<Real><<<m_fillBlocks, kThreads, 0, s>>>(m_dims, m_block.data(), k, objectiveInput(), m_image.data());
            WFS_KERNEL_CHECK("intensityKernel");
            WFS_CUDA_CHECK(cudaMemcpyAsync(out.data() + std::size_t(k) * perPlane, m_image.data(), perPlane * sizeof(double),
                                           cudaMemcpyDeviceToHost, s));
        }
        WFS_CUDA_CHECK(cudaStreamSynchronize(s));
        return out;
    }

    double measureFftMs(int repeats) override
    {
        WFS_CUDA_CHECK(cudaSetDevice(m_device));
        const cudaStream_t s = m_stream->get();
        // The values do not change the time; the next evaluation rewrites the whole buffer anyway.
        Complex* buffer = objectiveInput(); // N^2 K elements, whichever the model keeps
        WFS_CUDA_CHECK(cudaMemsetAsync(buffer, 0, std::size_t(m_dims.n) * std::size_t(m_dims.n) * sizeof(Complex), s));
        CudaEvent start, stop;
        Fft<Real>::exec(m_fullPlan.get(), buffer, CUFFT_INVERSE, __FILE__, __LINE__); // warm-up
        std::vector<float> times;
        for (int r = 0; r < std::max(1, repeats); ++r) {
            WFS_CUDA_CHECK(cudaEventRecord(start.get(), s));
            Fft<Real>::exec(m_fullPlan.get(), buffer, CUFFT_INVERSE, __FILE__, __LINE__);
            WFS_CUDA_CHECK(cudaEventRecord(stop.get(), s));
            WFS_CUDA_CHECK(cudaEventSynchronize(stop.get()));
            float ms = 0.0f;
            WFS_CUDA_CHECK(cudaEventElapsedTime(&ms, start.get(), stop.get()));
            times.push_back(ms);
        }
        std::nth_element(times.begin(), times.begin() + long(times.size() / 2), times.end());
        return double(times[times.size() / 2]);
    }

private:
    std::vector<const CufftPlan*> plans() const
    {
        std::vector<const CufftPlan*> all = {&m_rowPlan, &m_columnPlan, &m_fullPlan};
        if (m_dims.blur)
            all.push_back(&m_blurPlan);
        for (const Channel& c : m_channels)
            all.push_back(&c.plan);
        return all;
    }

    // Three plans, all on the model's stream, sharing one work area (they never run concurrently):
    // rows of the band of all planes, columns of all planes, and one plain N x N transform for fft_ms;
    // with the blur a fourth, the 2-D transforms of every plane (ModelDims::planeEmbedColumns).
    void makePlans()
    {
        const int n = m_dims.n;
        std::size_t rowWork = 0, columnWork = 0, fullWork = 0;
        int length[1] = {n};
        int embed[1] = {n}; // non-null: the advanced layout (stride, distance) applies
        const ModelDims::BatchedTransform rows = m_dims.bandRowTransforms(), columns = m_dims.columnTransforms();
        m_rowPlan.create();
        WFS_CUFFT_CHECK(cufftSetAutoAllocation(m_rowPlan.get(), 0));
        WFS_CUFFT_CHECK(cufftMakePlanMany(m_rowPlan.get(), 1, length, embed, rows.stride, rows.distance, embed, rows.stride, rows.distance,
                                          Fft<Real>::kType, rows.batch, &rowWork));
        m_columnPlan.create();
        WFS_CUFFT_CHECK(cufftSetAutoAllocation(m_columnPlan.get(), 0));
        WFS_CUFFT_CHECK(cufftMakePlanMany(m_columnPlan.get(), 1, length, embed, columns.stride, columns.distance, embed, columns.stride,
                                          columns.distance, Fft<Real>::kType, columns.batch, &columnWork));
        m_fullPlan.create();
        WFS_CUFFT_CHECK(cufftSetAutoAllocation(m_fullPlan.get(), 0));
        WFS_CUFFT_CHECK(cufftMakePlan2d(m_fullPlan.get(), n, n, Fft<Real>::kType, &fullWork));
        std::size_t blurWork = 0;
        if (m_dims.blur) {
            int sizes[2] = {n, n};
            int planeEmbed[2] = {n, m_dims.planeEmbedColumns()};
            m_blurPlan.create();
            WFS_CUFFT_CHECK(cufftSetAutoAllocation(m_blurPlan.get(), 0));
            WFS_CUFFT_CHECK(cufftMakePlanMany(m_blurPlan.get(), 2, sizes, planeEmbed, 1, n, planeEmbed, 1, n, Fft<Real>::kType,
                                              m_dims.planes, &blurWork));
        }
        m_channels.resize(std::size_t(m_dims.channels));
        for (int c = 0; c < m_dims.channels; ++c) {
            const int nc = m_dims.channel[c].n;
            int sizes[2] = {nc, nc};
            int planeEmbed[2] = {nc, nc * m_dims.slices()}; // every plane's (and vectorial field's) slice
            std::size_t work = 0;
            CufftPlan& plan = m_channels[std::size_t(c)].plan;
            plan.create();
            WFS_CUFFT_CHECK(cufftSetAutoAllocation(plan.get(), 0));
            WFS_CUFFT_CHECK(
                cufftMakePlanMany(plan.get(), 2, sizes, planeEmbed, 1, nc, planeEmbed, 1, nc, Fft<Real>::kType, m_dims.slices(), &work));
            blurWork = std::max(blurWork, work);
        }
        for (const CufftPlan* plan : plans())
            WFS_CUFFT_CHECK(cufftSetStream(plan->get(), m_stream->get()));
        m_workBytes = std::max({rowWork, columnWork, fullWork, blurWork});
    }

    template <typename T>
    static void put(DeviceBuffer<T>& buffer, const std::vector<T>& values)
    {
        buffer.resize(values.size());
        if (!values.empty())
            WFS_CUDA_CHECK(cudaMemcpy(buffer.data(), values.data(), values.size() * sizeof(T), cudaMemcpyHostToDevice));
    }

    void upload(const ModelInput& input)
    {
        const ModelDims& d = m_dims;
        const std::size_t pixels = std::size_t(d.pixels);
        if (input.pupilIndex.size() != pixels || input.x.size() != pixels || input.y.size() != pixels || input.transmission.size() != pixels
            || input.basis.size() != pixels * std::size_t(d.terms) || input.diversity.size() != pixels * std::size_t(d.planes)
            || input.data.size() != d.gridElements() || input.defocusUnit.size() != (d.defocusTerms ? pixels * std::size_t(d.planes) : 0)
            || input.transfer.size() != (d.blur ? std::size_t(d.n) * std::size_t(d.n) : 0)
            || input.channelIndex.size() != std::size_t(d.channels) || (d.channels > 0 && !d.hostPupil)
            || input.weights.size() != (d.weighted ? d.gridElements() : 0)
            || input.vectorialMatrix.size() != pixels * std::size_t(d.fields) * 2
            || input.depthRate.size() != (d.vectorial() ? pixels * 2 : 0)
            || input.coverslipPhase.size() != (d.vectorial() ? pixels * 2 : 0))
            throw std::invalid_argument("ModelDevice: input arrays do not match their dimensions");

        if (d.channels == 0)
            m_field.resize(d.fieldElements()); // a spectrum's fields are the channels'
        put(m_vectorialMatrix, input.vectorialMatrix);
        put(m_depthRate, input.depthRate);
        put(m_coverslipPhase, input.coverslipPhase);
        m_factor.resize(input.vectorialMatrix.size() * std::size_t(d.factorSets()));
        put(m_data, converted<Real>(input.data));
        if (d.weighted)
            put(m_weights, converted<Real>(input.weights));
        put(m_basis, converted<Real>(input.basis));
        put(m_diversity, converted<Real>(input.diversity));
        put(m_defocusUnit, converted<Real>(input.defocusUnit));
        put(m_transfer, converted<Real>(input.transfer));
        if (d.intensityPath())
            m_intensity.resize(d.gridElements());
        for (int c = 0; c < d.channels; ++c) {
            m_channels[std::size_t(c)].field.resize(d.channel[c].elements(d.slices()));
            put(m_channels[std::size_t(c)].index, input.channelIndex[std::size_t(c)]);
        }
        if (d.channels > 0) {
            m_dPhasePlane.resize(pixels * std::size_t(d.planes));
            m_dAmplitude.resize(pixels);
            if (d.vectorial())
                m_dDepth.resize(pixels);
        }
        put(m_x, converted<Real>(input.x));
        put(m_y, converted<Real>(input.y));
        put(m_transmission, converted<Real>(input.transmission));
        put(m_pupilIndex, input.pupilIndex);
        m_phase.resize(pixels);
        m_amplitude.resize(pixels);
        m_image.resize(std::size_t(d.n) * std::size_t(d.n));

        const std::vector<int> bandMap = makeBandMap(d, input.pupilIndex);
        put(m_bandMap, bandMap);

        m_block.resize(std::size_t(d.parameterBlockSize()));
        m_result.resize(std::size_t(d.resultSize()));
        m_partials.resize(std::size_t(d.resultSize()) * std::size_t(m_partialStride));
        m_hostBlock = PinnedBuffer<double>(std::size_t(d.parameterBlockSize()));
        m_hostResult = PinnedBuffer<double>(std::size_t(d.resultSize()));
        std::fill(m_hostBlock.data(), m_hostBlock.data() + m_hostBlock.size(), 0.0);
        std::fill(m_hostResult.data(), m_hostResult.data() + m_hostResult.size(), 0.0);
    }

    math::Arrays<Real> arrays() const
    {
        math::Arrays<Real> a;
        a.basis = m_basis.data();
        a.x = m_x.data();
        a.y = m_y.data();
        a.transmission = m_transmission.data();
        a.diversity = m_diversity.data();
        a.defocusUnit = m_dims.defocusTerms ? m_defocusUnit.data() : nullptr;
        a.transfer = m_dims.blur ? m_transfer.data() : nullptr;
        a.bandMap = m_bandMap.data();
        a.pupilIndex = m_pupilIndex.data();
        a.data = m_data.data();
        a.weights = m_dims.weighted ? m_weights.data() : nullptr;
        a.phase = m_phase.data();
        a.amplitude = m_amplitude.data();
        if (m_dims.vectorial()) {
            a.vectorialMatrix = m_vectorialMatrix.data();
            a.depthRate = m_depthRate.data();
            a.coverslipPhase = m_coverslipPhase.data();
            a.factor = m_factor.data();
        }
        return a;
    }

    // Parameter block in, the forward model into m_field (N^2 S of every plane).
    void enqueueForward()
    {
        const cudaStream_t s = m_stream->get();
        if (m_dims.vectorial()) {
            const std::size_t factors = std::size_t(m_dims.factorSets()) * std::size_t(m_dims.fields) * std::size_t(m_dims.pixels);
            factorKernel<Real><<<blocksFor(factors, kThreads, std::size_t(1) << 20), kThreads, 0, s>>>(m_dims, m_block.data(), arrays());
            WFS_KERNEL_CHECK("factorKernel");
        }
        if (m_dims.channels > 0) {
            enqueueSpectrum();
            return;
        }
        const std::size_t shared = std::size_t(m_dims.terms) * sizeof(Real);
        fillKernel<Real><<<m_fillBlocks, kThreads, shared, s>>>(m_dims, m_block.data(), arrays(), m_field.data());
        WFS_KERNEL_CHECK("fillKernel");
        Complex* band = m_field.data() + m_dims.bandRowTransforms().offset;
        Fft<Real>::exec(m_rowPlan.get(), band, CUFFT_INVERSE, __FILE__, __LINE__);
        Fft<Real>::exec(m_columnPlan.get(), m_field.data(), CUFFT_INVERSE, __FILE__, __LINE__);
        if (m_dims.blur) {
            powerKernel<Real><<<m_gridBlocks, kThreads, 0, s>>>(m_dims, m_field.data(), m_intensity.data());
            WFS_KERNEL_CHECK("powerKernel");
            enqueueBlur();
        }
    }

    // The intensity buffer convolved with the detector's kernel: FFT, times H / N^2, inverse FFT (self-adjoint).
    void enqueueBlur()
    {
        const cudaStream_t s = m_stream->get();
        Fft<Real>::exec(m_blurPlan.get(), m_intensity.data(), CUFFT_FORWARD, __FILE__, __LINE__);
        blurKernel<Real><<<m_gridBlocks, kThreads, 0, s>>>(m_dims, arrays(), m_intensity.data());
        WFS_KERNEL_CHECK("blurKernel");
        Fft<Real>::exec(m_blurPlan.get(), m_intensity.data(), CUFFT_INVERSE, __FILE__, __LINE__);
    }

    // A spectrum: each wavelength's field cleared, filled, transformed and its |field|^2 added to the intensity
    // buffer; then the blur, if any.
    void enqueueSpectrum()
    {
        const cudaStream_t s = m_stream->get();
        for (int c = 0; c < m_dims.channels; ++c) {
            Channel& ch = m_channels[std::size_t(c)];
            WFS_CUDA_CHECK(cudaMemsetAsync(ch.field.data(), 0, ch.field.size() * sizeof(Complex), s));
            channelFillKernel<Real>
                <<<m_gatherBlocks, kThreads, 0, s>>>(m_dims, c, m_block.data(), arrays(), ch.index.data(), ch.field.data());
            WFS_KERNEL_CHECK("channelFillKernel");
            Fft<Real>::exec(ch.plan.get(), ch.field.data(), CUFFT_INVERSE, __FILE__, __LINE__);
            channelPowerKernel<Real><<<m_gridBlocks, kThreads, 0, s>>>(m_dims, c, ch.field.data(), m_intensity.data(), c == 0);
            WFS_KERNEL_CHECK("channelPowerKernel");
        }
        if (m_dims.blur)
            enqueueBlur();
    }

    // A spectrum's way back from dL/d|S|^2 (the intensity buffer): per wavelength dL/d(buffer), its forward FFT and
    // the gather into per-plane sums; then the pupil rows from those sums.
    void enqueueSpectrumAdjoint()
    {
        const cudaStream_t s = m_stream->get();
        for (int c = 0; c < m_dims.channels; ++c) {
            Channel& ch = m_channels[std::size_t(c)];
            const int blocks = blocksFor(m_dims.channel[c].elements(m_dims.slices()), kThreads, std::size_t(1) << 20);
            channelScatterKernel<Real><<<blocks, kThreads, 0, s>>>(m_dims, c, m_intensity.data(), ch.field.data());
            WFS_KERNEL_CHECK("channelScatterKernel");
            Fft<Real>::exec(ch.plan.get(), ch.field.data(), CUFFT_FORWARD, __FILE__, __LINE__);
            channelGatherKernel<Real><<<m_gatherBlocks, kThreads, 0, s>>>(m_dims, c, m_block.data(), arrays(), ch.index.data(),
                                                                          ch.field.data(), m_dPhasePlane.data(), m_dAmplitude.data(),
                                                                          m_dDepth.data(), c == 0);
            WFS_KERNEL_CHECK("channelGatherKernel");
        }
        const std::size_t shared = std::size_t(m_dims.pupilRows()) * kWarps * sizeof(double);
        pixelReduceKernel<Real><<<m_gatherBlocks, kThreads, shared, s>>>(m_dims, arrays(), m_dPhasePlane.data(), m_dAmplitude.data(),
                                                                         m_dDepth.data(), m_partials.data(), m_partialStride,
                                                                         m_result.data());
        WFS_KERNEL_CHECK("pixelReduceKernel");
    }

    // What the objective and the model images read: the intensity buffer (blurred, or a spectrum's), or the field.
    Complex* objectiveInput() { return m_dims.intensityPath() ? m_intensity.data() : m_field.data(); }

    // One whole evaluation on the stream (what the graphs hold).
    void enqueue(bool gradient)
    {
        const cudaStream_t s = m_stream->get();
        WFS_CUDA_CHECK(cudaMemcpyAsync(m_block.data(), m_hostBlock.data(), m_block.size() * sizeof(double), cudaMemcpyHostToDevice, s));
        enqueueForward();
        objectiveKernel<Real><<<dim3(unsigned(m_objectiveBlocks), unsigned(m_dims.planes)), kThreads, 0, s>>>(
            m_dims, m_block.data(), arrays(), objectiveInput(), m_partials.data(), m_partialStride, gradient);
        WFS_KERNEL_CHECK("objectiveKernel");
        int rows = m_dims.objectiveRows();
        if (gradient && m_dims.blur)
            enqueueBlur(); // dL/d(blurred intensity) -> dL/d|S|^2
        if (gradient && m_dims.channels > 0) {
            enqueueSpectrumAdjoint();
            rows = m_dims.reducedRows();
        } else if (gradient) {
            if (m_dims.blur) {
                scatterKernel<Real><<<m_gridBlocks, kThreads, 0, s>>>(m_dims, m_intensity.data(), m_field.data());
                WFS_KERNEL_CHECK("scatterKernel");
            }
            Fft<Real>::exec(m_columnPlan.get(), m_field.data(), CUFFT_FORWARD, __FILE__, __LINE__);
            Fft<Real>::exec(m_rowPlan.get(), m_field.data() + m_dims.bandRowTransforms().offset, CUFFT_FORWARD, __FILE__, __LINE__);
            const std::size_t shared = std::size_t(m_dims.pupilRows()) * kWarps * sizeof(double);
            gatherKernel<Real><<<m_gatherBlocks, kThreads, shared, s>>>(m_dims, m_block.data(), arrays(), m_field.data(), m_partials.data(),
                                                                        m_partialStride, m_result.data());
            WFS_KERNEL_CHECK("gatherKernel");
            rows = m_dims.reducedRows();
        }
        reduceKernel<<<rows, kThreads, 0, s>>>(m_partials.data(), m_partialStride, m_dims.objectiveRows(), m_objectiveBlocks,
                                               m_gatherBlocks, m_result.data());
        WFS_KERNEL_CHECK("reduceKernel");
        const int copied = gradient ? m_dims.resultSize() : rows; // with hostPupil, the gather's per-pixel rows too
        WFS_CUDA_CHECK(
            cudaMemcpyAsync(m_hostResult.data(), m_result.data(), std::size_t(copied) * sizeof(double), cudaMemcpyDeviceToHost, s));
    }

    // Both kinds of evaluation as graphs. First one eager evaluation of each kind: cuFFT and the
    // runtime load modules and set up lazily (and a build without this card's SASS JIT-compiles its
    // PTX at the first launch), which must happen outside a capture. cuFFT executions can be captured;
    // if this driver or library refuses, CudaGraphExec::capture has cleared the error and the model
    // keeps working with stream launches, saying why.
    void captureGraphs()
    {
        enqueue(true);
        enqueue(false);
        WFS_CUDA_CHECK(cudaStreamSynchronize(m_stream->get()));
        try {
            m_costGraph.capture(m_stream->get(), [&] { enqueue(false); });
            m_gradientGraph.capture(m_stream->get(), [&] { enqueue(true); });
            m_launchMode = "graph";
        } catch (const CudaError& error) {
            m_costGraph.reset();
            m_gradientGraph.reset();
            m_launchMode = std::string("stream (CUDA graph capture failed: ") + error.what() + ")";
        }
    }

    int m_device;
    ModelDims m_dims;
    std::unique_ptr<CudaStream> m_stream;
    int m_fillBlocks = 1, m_gridBlocks = 1, m_objectiveBlocks = 1, m_gatherBlocks = 1, m_partialStride = 1;
    CufftPlan m_rowPlan, m_columnPlan, m_fullPlan, m_blurPlan;
    std::size_t m_workBytes = 0;
    DeviceBuffer<char> m_work;
    DeviceBuffer<Complex> m_field, m_intensity; // m_intensity: the blur's or the spectrum's (ModelDims::intensityPath)
    struct Channel {                            // one wavelength of a spectrum (ModelDims::channels)
        CufftPlan plan;                         // its 2-D transforms, all planes
        DeviceBuffer<Complex> field;
        DeviceBuffer<int> index; // each pupil pixel's place in its grid
    };
    std::vector<Channel> m_channels;
    DeviceBuffer<double> m_dPhasePlane, m_dAmplitude, m_dDepth; // a spectrum's gathers summed over the wavelengths
    DeviceBuffer<Real> m_data, m_weights, m_basis, m_diversity, m_defocusUnit, m_transfer, m_x, m_y, m_transmission, m_phase, m_amplitude;
    DeviceBuffer<double> m_vectorialMatrix, m_depthRate, m_coverslipPhase; // the vectorial model's, as (re, im) pairs
    DeviceBuffer<Real> m_factor;                                           // its factors at the current depth (re, im)
    DeviceBuffer<int> m_pupilIndex, m_bandMap;
    DeviceBuffer<double> m_block, m_result, m_partials, m_image;
    PinnedBuffer<double> m_hostBlock, m_hostResult;
    CudaGraphExec m_costGraph, m_gradientGraph;
    std::string m_launchMode;
};

} // namespace

ModelDevice::ModelDevice(int deviceOrdinal, const ModelInput& input, bool useGraphs)
{
    if (input.dims.realBytes == 8)
        m_impl = std::make_unique<TypedModel<double>>(deviceOrdinal, input, useGraphs);
    else if (input.dims.realBytes == 4)
        m_impl = std::make_unique<TypedModel<float>>(deviceOrdinal, input, useGraphs);
    else
        throw std::invalid_argument("ModelDevice: realBytes must be 4 or 8");
}

ModelDevice::~ModelDevice() = default;

const ModelDims& ModelDevice::dims() const
{
    return m_impl->dims();
}

const double* ModelDevice::evaluate(const double* parameterBlock, bool gradient)
{
    return m_impl->evaluate(parameterBlock, gradient);
}

std::vector<double> ModelDevice::intensities(const double* parameterBlock)
{
    return m_impl->intensities(parameterBlock);
}

double ModelDevice::measureFftMs(int repeats)
{
    return m_impl->measureFftMs(repeats);
}

const std::string& ModelDevice::launchMode() const
{
    return m_impl->launchMode();
}

} // namespace wfs::gpu
