#include "engine/BackendFactory.h"

#include "optics/CpuModel.h"

#ifdef WFS_HAVE_CUDA
#include "GpuDevice.h"
#include "model/GpuModel.h"
#endif

namespace wfs {

namespace {
constexpr const char* kCudaNotBuilt
    = "no GPU: this build has no CUDA backend (CUDA not built; configure with -DWFS_CUDA=ON and the CUDA toolkit)";

#ifdef WFS_HAVE_CUDA
// What reports and the bench's `device` key call a GPU.
std::string deviceLabel(const gpu::DeviceInfo& device)
{
    return device.name + " (compute capability " + std::to_string(device.computeMajor) + "."
           + std::to_string(device.computeMinor) + ")";
}

// The device options.device names, or BackendUnavailable saying why there is none.
gpu::DeviceInfo chooseDevice(int ordinal)
{
    const gpu::DeviceProbe probe = gpu::probeDevices();
    if (probe.status != gpu::DeviceProbe::Status::Ok || probe.devices.empty())
        throw BackendUnavailable(probe.message); // "no GPU: ..." with the reason (no driver, no device, ...)
    for (const gpu::DeviceInfo& device : probe.devices)
        if (device.ordinal == ordinal)
            return device;
    std::string names;
    for (const gpu::DeviceInfo& device : probe.devices)
        names += (names.empty() ? "" : ", ") + std::to_string(device.ordinal) + ": " + device.name;
    throw BackendUnavailable("no GPU: CUDA device " + std::to_string(ordinal) + " does not exist (devices here: " + names + ")");
}
#endif
} // namespace

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
    status.available = true;
    status.device = deviceLabel(probe.devices.front());
    return status;
#else
    status.reason = kCudaNotBuilt;
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
#ifdef WFS_HAVE_CUDA
        const gpu::DeviceInfo device = chooseDevice(options.device);
        const std::string label = deviceLabel(device);
        try {
            evaluator = gpu::makeGpuEvaluator(std::move(problem), options, label);
        } catch (const std::invalid_argument&) {
            throw;
        } catch (const std::runtime_error& error) {
            // A CUDA, cuFFT or memory failure: the problem cannot run on this GPU, but can on the CPU.
            throw BackendUnavailable("the GPU backend cannot run this problem on " + label + ": " + error.what()
                                     + " (the CPU backend can: --backend cpu)");
        }
#else
        throw BackendUnavailable(kCudaNotBuilt);
#endif
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
