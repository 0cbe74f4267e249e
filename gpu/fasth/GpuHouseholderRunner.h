#pragma once
// The CUDA implementation of core's fasth::HouseholderRunner. Created only through engine/BackendFactory,
// with which gpu/GpuBackend.cpp registers this backend.

#include "fasth/HouseholderRunner.h"

#include <memory>
#include <string>

namespace wfs::gpu {

// A runner on the given device. Throws wfs::gpu::CudaError (a std::runtime_error naming the failed call)
// when the device cannot be used.
std::unique_ptr<wfs::fasth::HouseholderRunner> makeGpuHouseholderRunner(int deviceOrdinal, const std::string& deviceName);

} // namespace wfs::gpu
