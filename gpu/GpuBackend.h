#pragma once
// The CUDA backend as the engine's factory sees it (engine/BackendFactory.h): its status, evaluator and FastH
// runner. Handed to the factory by the module's entry point (gpu/GpuModule.cpp) when the factory loads it.
#include "engine/BackendFactory.h"

namespace wfs::gpu {

GpuBackendHooks gpuBackendHooks();

} // namespace wfs::gpu
