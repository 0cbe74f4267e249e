#pragma once
// Run-time detection of CUDA devices. Built only with the CUDA backend.
#include <string>
#include <vector>

namespace wfs::gpu {

struct DeviceInfo {
    int ordinal = 0;
    std::string name;
    std::size_t memoryBytes = 0;
    int computeMajor = 0;
    int computeMinor = 0;
};

struct DeviceProbe {
    enum class Status { Ok, NoDriver, NoDevice, Error };
    Status status = Status::Error;
    std::string message; // in words: "no NVIDIA driver ...", "no CUDA device ...", the CUDA error
    std::vector<DeviceInfo> devices;
};

// Asks the CUDA runtime once per call; never throws.
DeviceProbe probeDevices();

} // namespace wfs::gpu
