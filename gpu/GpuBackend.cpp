// The CUDA backend's hooks for the engine's backend factory, handed over by the module's entry point
// (gpu/GpuModule.cpp); nothing in core names this file.
#include "gpu/GpuBackend.h"

#include "gpu/GpuDevice.h"
#include "gpu/fasth/GpuHouseholderRunner.h"
#include "gpu/model/GpuModel.h"

namespace wfs::gpu {

namespace {

// What reports and the bench's `device` key call a GPU.
std::string deviceLabel(const DeviceInfo& device)
{
    return device.name + " (compute capability " + std::to_string(device.computeMajor) + "." + std::to_string(device.computeMinor) + ")";
}

// The device `ordinal` names, or BackendUnavailable saying why there is none.
DeviceInfo chooseDevice(int ordinal)
{
    const DeviceProbe probe = probeDevices();
    if (probe.status != DeviceProbe::Status::Ok || probe.devices.empty())
        throw BackendUnavailable(probe.message); // "no GPU: ..." with the reason (no driver, no device, ...)
    for (const DeviceInfo& device : probe.devices)
        if (device.ordinal == ordinal)
            return device;
    std::string names;
    for (const DeviceInfo& device : probe.devices)
        names += (names.empty() ? "" : ", ") + std::to_string(device.ordinal) + ": " + device.name;
    throw BackendUnavailable("no GPU: CUDA device " + std::to_string(ordinal) + " does not exist (devices here: " + names + ")");
}

BackendStatus status()
{
    BackendStatus status;
    status.kind = BackendKind::Gpu;
    const DeviceProbe probe = probeDevices();
    if (probe.status != DeviceProbe::Status::Ok || probe.devices.empty()) {
        status.reason = probe.message;
        return status;
    }
    status.available = true;
    status.device = deviceLabel(probe.devices.front());
    return status;
}

std::unique_ptr<ModelEvaluator> makeEvaluator(std::shared_ptr<const Problem> problem, const EvaluatorOptions& options)
{
    const DeviceInfo device = chooseDevice(options.device);
    const std::string label = deviceLabel(device);
    try {
        return makeGpuEvaluator(std::move(problem), options, label);
    } catch (const std::invalid_argument&) {
        throw;
    } catch (const std::runtime_error& error) {
        // A CUDA, cuFFT or memory failure: the problem cannot run on this GPU, but can on the CPU.
        throw BackendUnavailable("the GPU backend cannot run this problem on " + label + ": " + error.what()
                                 + " (the CPU backend can: --backend cpu)");
    }
}

std::unique_ptr<fasth::HouseholderRunner> makeFasthRunner()
{
    const DeviceInfo device = chooseDevice(0);
    try {
        return makeGpuHouseholderRunner(device.ordinal, deviceLabel(device));
    } catch (const std::runtime_error& error) {
        throw BackendUnavailable(std::string("no GPU: the CUDA device could not be used: ") + error.what());
    }
}

} // namespace

GpuBackendHooks gpuBackendHooks()
{
    return {status, makeEvaluator, makeFasthRunner};
}

} // namespace wfs::gpu
