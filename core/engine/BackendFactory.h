#pragma once
// The one place that chooses a backend, and the only one that knows whether CUDA was compiled in.
#include "fit/ModelEvaluator.h"

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace wfs {

enum class BackendKind { Cpu, Gpu };
const char* backendName(BackendKind kind); // "cpu" / "gpu"

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
std::unique_ptr<ModelEvaluator> makeEvaluator(BackendKind kind, std::shared_ptr<const Problem> problem,
                                              const EvaluatorOptions& options, GradientKind gradient);

} // namespace wfs

// ---- FastH benchmark runners (issue 6) ----
namespace wfs::fasth {
class HouseholderRunner;
}

namespace wfs {
// The FastH runner of a backend: the Eigen one for Cpu, the CUDA one for Gpu. Throws BackendUnavailable
// with the reason in words ("no GPU: ...", "CUDA not built") when the GPU runner cannot be made here.
std::unique_ptr<fasth::HouseholderRunner> makeFasthRunner(BackendKind kind);
} // namespace wfs
