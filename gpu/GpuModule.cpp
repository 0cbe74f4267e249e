// The entry point of the CUDA backend module (libwfs_gpu_backend.so), which the engine's backend factory loads with
// dlopen the first time a GPU is asked about (engine/BackendFactory.h). The only symbol the module exports
// (GpuModule.map): its copy of core stays its own.
#include "gpu/GpuBackend.h"

extern "C" __attribute__((visibility("default"))) void wfs_gpu_backend_hooks(wfs::GpuBackendHooks* hooks)
{
    *hooks = wfs::gpu::gpuBackendHooks();
}
