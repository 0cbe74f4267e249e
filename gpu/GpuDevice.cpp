#include "gpu/GpuDevice.h"

#include <cuda_runtime_api.h>

namespace wfs::gpu {

DeviceProbe probeDevices()
{
    DeviceProbe probe;
    int count = 0;
    const cudaError_t status = cudaGetDeviceCount(&count);
    if (status == cudaErrorInsufficientDriver || status == cudaErrorNoDevice) {
        // cudaErrorInsufficientDriver also covers "no driver at all": tell the two apart by the version.
        int driverVersion = 0;
        cudaDriverGetVersion(&driverVersion);
        if (driverVersion == 0) {
            probe.status = DeviceProbe::Status::NoDriver;
            probe.message = "no GPU: no NVIDIA driver is installed (CUDA backend built, but the driver library is missing)";
        } else if (status == cudaErrorInsufficientDriver) {
            probe.status = DeviceProbe::Status::NoDriver;
            probe.message = "no GPU: the NVIDIA driver (CUDA " + std::to_string(driverVersion / 1000) + "."
                            + std::to_string(driverVersion % 1000 / 10) + ") is older than this build needs; update the driver";
        } else {
            probe.status = DeviceProbe::Status::NoDevice;
            probe.message = "no GPU: the NVIDIA driver found no CUDA device";
        }
        return probe;
    }
    if (status != cudaSuccess) {
        probe.status = DeviceProbe::Status::Error;
        probe.message = std::string("no GPU: cudaGetDeviceCount failed: ") + cudaGetErrorString(status);
        return probe;
    }
    if (count == 0) {
        probe.status = DeviceProbe::Status::NoDevice;
        probe.message = "no GPU: the NVIDIA driver found no CUDA device";
        return probe;
    }
    for (int i = 0; i < count; ++i) {
        cudaDeviceProp prop{};
        if (cudaGetDeviceProperties(&prop, i) != cudaSuccess)
            continue;
        probe.devices.push_back({i, prop.name, prop.totalGlobalMem, prop.major, prop.minor});
    }
    probe.status = probe.devices.empty() ? DeviceProbe::Status::Error : DeviceProbe::Status::Ok;
    probe.message = probe.devices.empty() ? "no GPU: device properties unreadable" : probe.devices.front().name;
    return probe;
}

} // namespace wfs::gpu
