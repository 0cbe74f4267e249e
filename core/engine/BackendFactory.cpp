#include "engine/BackendFactory.h"

#include "fasth/HouseholderRunner.h"
#include "optics/CpuModel.h"

namespace wfs {

namespace {
constexpr const char* kCudaNotBuilt =
    "no GPU: this build has no CUDA backend (CUDA not built; configure with -DWFS_CUDA=ON and the CUDA toolkit)";

// A function-local static, so that a registration from another translation unit's static initialiser
// never meets an unconstructed registry.
std::optional<GpuBackendHooks>& gpuBackend()
{
    static std::optional<GpuBackendHooks> hooks;
    return hooks;
}
} // namespace

bool registerGpuBackend(GpuBackendHooks hooks)
{
    gpuBackend() = std::move(hooks);
    return true;
}

BackendStatus backendStatus(BackendKind kind)
{
    if (kind == BackendKind::Gpu && gpuBackend())
        return gpuBackend()->status();
    BackendStatus status;
    status.kind = kind;
    if (kind == BackendKind::Cpu) {
        status.available = true;
        status.device = cpuName();
    } else {
        status.reason = kCudaNotBuilt;
    }
    return status;
}

std::vector<BackendStatus> backendStatuses()
{
    return {backendStatus(BackendKind::Cpu), backendStatus(BackendKind::Gpu)};
}

std::unique_ptr<ModelEvaluator> makeEvaluator(BackendKind kind, std::shared_ptr<const Problem> problem, const EvaluatorOptions& options,
                                              GradientKind gradient)
{
    std::unique_ptr<ModelEvaluator> evaluator;
    if (kind == BackendKind::Cpu)
        evaluator = makeCpuEvaluator(std::move(problem), options);
    else if (gpuBackend())
        evaluator = gpuBackend()->makeEvaluator(std::move(problem), options);
    else
        throw BackendUnavailable(kCudaNotBuilt);
    if (gradient == GradientKind::FiniteDifference)
        evaluator = makeFiniteDifferenceEvaluator(std::move(evaluator));
    return evaluator;
}

std::unique_ptr<fasth::HouseholderRunner> makeFasthRunner(BackendKind kind)
{
    if (kind == BackendKind::Cpu)
        return fasth::makeCpuRunner();
    if (gpuBackend())
        return gpuBackend()->makeFasthRunner();
    throw BackendUnavailable(kCudaNotBuilt);
}

} // namespace wfs
