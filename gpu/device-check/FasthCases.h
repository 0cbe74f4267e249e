#pragma once
// The FastH reference cases of wfs-device-check: the CPU's products and gradients, checked on the host
// (H X recomputed, v.dL/dv = 0), then every device method and pass against them in double and float.
#include "CheckSupport.h"
#include "gpu/model/ReferenceFormat.h"
#include "gpu/fasth/FasthDevice.h"

#include <string>
#include <vector>

namespace wfs::devicecheck {

struct FasthCase {
    std::string name, about;
    int d = 0, k = 0, m = 0, block = 0, levels = 0;
    std::vector<double> reflectors, tau, x, outputGradient, svdU, svdV, sigma, forward, gradX, gradV, inverse;
    double logdet = 0.0;
};

FasthCase loadFasthCase(const ReferenceFile& f, const std::string& name);
// H_1 ... H_k X computed here, sequentially.
std::vector<double> hostApply(const FasthCase& c);
const char* methodName(gpu::DeviceMethod m);
const std::vector<gpu::DeviceMethod>& allMethods();
gpu::DeviceMethod methodFromName(const std::string& name);
const char* passName(gpu::DevicePass p);

template <typename T>
std::vector<T> as(const std::vector<double>& v)
{
    return std::vector<T>(v.begin(), v.end());
}

// Host checks of one file: the sequential product recomputed, and the gradient's invariants.
void checkFasthFile(Tally& tally, const FasthCase& c);
// Every method and pass on the device against the file, double and (unless quick) float.
void checkFasthOnDevice(Tally& tally, const FasthCase& c, bool quick, const std::string& noDevice);

} // namespace wfs::devicecheck
