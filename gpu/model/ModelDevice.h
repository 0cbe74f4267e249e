#pragma once
// The forward model and its adjoint on a CUDA device: the kernels, the two batched cuFFT plans, the
// resident arrays and the CUDA graphs of one evaluation. Plain types only (no Eigen, no core headers),
// so that nvcc never parses the C++20 engine; GpuModel.cpp turns a Problem into a ModelInput and the
// result block back into a gradient.
//
// Per evaluation only the parameter block (a few hundred bytes) goes down and the result block comes
// back; everything else stays on the device. The whole evaluation (copy in, fill, FFTs, objective,
// adjoint FFTs, gather, reductions, copy out) is captured once into a CUDA graph per kind (cost only,
// cost and gradient) and replayed with one launch, because at small grids the dozen separate launches
// cost more than the work.
#include "gpu/DeviceResources.h"
#include "gpu/model/ModelLayout.h"

#include <memory>
#include <string>
#include <vector>

namespace wfs::gpu {

class ModelDevice {
public:
    // Selects the device, checks that the arrays fit in its free memory (a clean "out of memory"
    // error naming the sizes otherwise), uploads the input, makes the cuFFT plans and, when
    // useGraphs, captures the evaluations into CUDA graphs (falling back to stream launches, and
    // saying so in launchMode(), when capture is refused). Throws CudaError naming the failed call.
    ModelDevice(int deviceOrdinal, const ModelInput& input, bool useGraphs);
    ~ModelDevice();
    ModelDevice(const ModelDevice&) = delete;
    ModelDevice& operator=(const ModelDevice&) = delete;

    const ModelDims& dims() const;

    // One evaluation at the parameter block (dims().parameterBlockSize() doubles). Returns the result
    // block (dims().resultSize() doubles; the pupil rows only when gradient), valid until the next call.
    const double* evaluate(const double* parameterBlock, bool gradient);

    // Model intensities intensity_k |S|^2 + background_k, plane after plane, each N x N row-major.
    std::vector<double> intensities(const double* parameterBlock);

    // Median of `repeats` timings (CUDA events) of one N x N complex FFT in the model's precision.
    double measureFftMs(int repeats);

    // "graph" (one CUDA graph launch per evaluation) or "stream" with the reason graphs are not used.
    const std::string& launchMode() const;

    struct Impl;

private:
    std::unique_ptr<Impl> m_impl;
};

// The resident arrays of `dims` plus cuFFT's shared work area (`workBytes`) and a small reserve against
// `freeBytes`; throws CudaError with an "out of GPU memory" message naming the sizes and what to do when
// they do not fit. Host arithmetic only (exposed for tests without a device).
void checkDeviceMemory(const ModelDims& dims, std::size_t workBytes, std::size_t freeBytes, std::size_t totalBytes,
                       const std::string& device);

} // namespace wfs::gpu
