#pragma once
// The model reference cases of wfs-device-check: read from the CPU backend's files, checked on the host
// against each other and the OOF generator, then on the device (double and float, graphs and streams)
// against the CPU's costs, gradients and images; out of memory, then recovery.
#include "CheckSupport.h"
#include "gpu/model/ReferenceFormat.h"
#include "gpu/model/ModelDevice.h"

#include <string>
#include <vector>

namespace wfs::devicecheck {

struct ModelPoint {
    std::vector<double> block, gradient, mapCoefficient, images;
    std::vector<int> mapFree, mapRow;
    double cost = 0.0;
    // What the host adds whatever the result block holds (a zonal pupil's smoothness prior): the gradient
    // is offsetGradient + map * result, the cost offsetCost + the device's.
    double offsetCost = 0.0;
    std::vector<double> offsetGradient;
};

struct ModelCase {
    std::string name, about;
    gpu::ModelInput input; // realBytes 8 as read
    std::vector<double> scales;
    std::vector<ModelPoint> points;
};

ModelCase loadModelCase(const ReferenceFile& f, const std::string& name);
// The input with its real numbers in float (4) or double (8).
gpu::ModelInput withPrecision(gpu::ModelInput input, int realBytes);
// Host checks: the cost recomputed from the file's images, and the OOF generator against the engine's preset.
void checkModelFile(Tally& tally, const ModelCase& c);
// Device checks: double and float, graphs and streams against the file, then against each other.
void checkModelOnDevice(Tally& tally, const ModelCase& c, bool quick, const std::string& noDevice);
// A model too large for the memory left is refused with a clear message; afterwards the device still works.
void checkOutOfMemory(Tally& tally, const std::vector<ModelCase>& models, bool quick, const std::string& noDevice);

} // namespace wfs::devicecheck
