#include "engine/BackendFactory.h"

#include "optics/CpuModel.h"

#ifdef WFS_HAVE_CUDA
#include "GpuDevice.h"
#endif

namespace wfs {

const char* backendName(BackendKind kind)
{
    return kind == BackendKind::Cpu ? "cpu" : "gpu";
}

BackendStatus backendStatus(BackendKind kind)
{
    BackendStatus status;
    status.kind = kind;
    if (kind == BackendKind::Cpu) {
        status.available = true;
        status.device = cpuName();
        return status;
    }
#ifdef WFS_HAVE_CUDA
    const gpu::DeviceProbe probe = gpu::probeDevices();
    if (probe.status != gpu::DeviceProbe::Status::Ok) {
        status.reason = probe.message;
        return status;
    }
    status.device = probe.devices.front().name;
    status.reason = "no GPU forward model in this version: the CUDA backend only detects devices so far";
    return status;
#else
    status.reason = "no GPU: this build has no CUDA backend (CUDA not built; configure with -DWFS_CUDA=ON and the CUDA toolkit)";
    return status;
#endif
}

std::vector<BackendStatus> backendStatuses()
{
    return {backendStatus(BackendKind::Cpu), backendStatus(BackendKind::Gpu)};
}

std::unique_ptr<ModelEvaluator> makeEvaluator(BackendKind kind, std::shared_ptr<const Problem> problem,
                                              const EvaluatorOptions& options, GradientKind gradient)
{
    std::unique_ptr<ModelEvaluator> evaluator;
    if (kind == BackendKind::Cpu) {
        evaluator = makeCpuEvaluator(std::move(problem), options);
    } else {
        const BackendStatus status = backendStatus(kind);
        throw BackendUnavailable(status.reason);
    }
    if (gradient == GradientKind::FiniteDifference)
        evaluator = makeFiniteDifferenceEvaluator(std::move(evaluator));
    return evaluator;
}

} // namespace wfs

// ---- FastH benchmark runners (issue 6) ----
#include "fasth/HouseholderRunner.h"
#ifdef WFS_HAVE_CUDA
#include "fasth/GpuHouseholderRunner.h"
#endif

namespace wfs {

std::unique_ptr<fasth::HouseholderRunner> makeFasthRunner(BackendKind kind)
{
    if (kind == BackendKind::Cpu)
        return fasth::makeCpuRunner();
#ifdef WFS_HAVE_CUDA
    const gpu::DeviceProbe probe = gpu::probeDevices();
    if (probe.status != gpu::DeviceProbe::Status::Ok || probe.devices.empty())
        throw BackendUnavailable(probe.message); // already says "no GPU: ..." and why
    const gpu::DeviceInfo& device = probe.devices.front();
    const std::string name = device.name + " (compute capability " + std::to_string(device.computeMajor) + "."
                             + std::to_string(device.computeMinor) + ")";
    try {
        return gpu::makeGpuHouseholderRunner(device.ordinal, name);
    } catch (const std::runtime_error& error) {
        throw BackendUnavailable(std::string("no GPU: the CUDA device could not be used: ") + error.what());
    }
#else
    throw BackendUnavailable("no GPU: this build has no CUDA backend (CUDA not built; configure with -DWFS_CUDA=ON "
                             "and the CUDA toolkit)");
#endif
}

} // namespace wfs
