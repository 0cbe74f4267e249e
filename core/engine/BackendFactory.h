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
// Called once, before main, by the GPU backend when it is linked in; returns true so that it can
// initialise a static. Without a registration the GPU is reported as "CUDA not built".
bool registerGpuBackend(GpuBackendHooks hooks);

} // namespace wfs
