#pragma once
// The one place that chooses a backend. core knows no GPU code: a GPU backend, when one is linked in,
// registers its hooks here (gpu/GpuBackend.cpp); whether it is linked is decided once, by the top-level
// CMakeLists.txt (the wfs::backends target).
#include "optics/ModelEvaluator.h"

#include <functional>
#include <optional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace wfs {

struct BackendStatus {
    BackendKind kind = BackendKind::Cpu;
    bool available = false;
    std::string device; // CPU model or GPU name when available
    std::string reason; // why not, when unavailable: "CUDA not built", "no driver", "no device"
};

// Every backend with its availability, asked at run time.
std::vector<BackendStatus> backendStatuses();
BackendStatus backendStatus(BackendKind kind);

// Thrown when the asked-for backend cannot run here; what() says why in words.
class BackendUnavailable : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// Creates the evaluator (with finite differences around it when asked). Throws BackendUnavailable,
// or std::invalid_argument for bad options.
std::unique_ptr<ModelEvaluator> makeEvaluator(BackendKind kind, std::shared_ptr<const Problem> problem, const EvaluatorOptions& options,
                                              GradientKind gradient);

} // namespace wfs

namespace wfs::fasth {
class HouseholderRunner;
}

namespace wfs {
// The FastH runner of a backend: the Eigen one for Cpu, the CUDA one for Gpu. Throws BackendUnavailable
// with the reason in words ("no GPU: ...", "CUDA not built") when the GPU runner cannot be made here.
std::unique_ptr<fasth::HouseholderRunner> makeFasthRunner(BackendKind kind);

// What a GPU backend offers the factory. Each hook throws BackendUnavailable saying why it cannot run
// (no driver, no device, out of memory: the CPU can), or std::invalid_argument for bad options.
struct GpuBackendHooks {
    std::function<BackendStatus()> status;
    std::function<std::unique_ptr<ModelEvaluator>(std::shared_ptr<const Problem>, const EvaluatorOptions&)> makeEvaluator;
    std::function<std::unique_ptr<fasth::HouseholderRunner>()> makeFasthRunner;
};

// The CUDA backend is a module of its own (gpu/GpuModule.cpp, libwfs_gpu_backend.so), loaded the first time a GPU
// is asked about (a status, an evaluator, a FastH runner), so that a program that never asks maps none of the CUDA
// libraries (about 1.5 GB of address space): the CLI starts under a tight address-space limit, and where the module
// cannot be loaded the GPU is unavailable with dlerror's reason. The module is looked for in WFS_GPU_MODULE (a file)
// when set, else beside the program (../lib/wavefront-studio/ from the program's or the Python module's folder, as in
// the build tree), else where `cmake --install` puts it. Its entry point, named by kGpuModuleEntry, is
// `extern "C" void wfs_gpu_backend_hooks(wfs::GpuBackendHooks*)`. Builds without CUDA report "CUDA not built".
inline constexpr const char* kGpuModuleEntry = "wfs_gpu_backend_hooks";

// Where the module was looked for and what came of it (for `wavefront-cli --version`-style reports and tests):
// empty `loadedFrom` and the reason in `error` when it did not load. Loads it on the first call.
struct GpuModuleState {
    std::string loadedFrom;
    std::string error;
};
GpuModuleState gpuModuleState();

} // namespace wfs
