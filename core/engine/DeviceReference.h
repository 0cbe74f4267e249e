#pragma once
// The writers of the GPU device check's reference data (gpu/model/ReferenceFormat.h, gpu/device-check/README.md), as
// a registry like the backend factory's (engine/BackendFactory.h): the GPU model's host-side library
// (gpu/model/DeviceReference.cpp, built with or without CUDA) registers them before main, and
// `wavefront-cli device-reference` chooses the cases and calls them, so that app/ names no gpu/ code.
#include "optics/ModelEvaluator.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace wfs {

struct DeviceReferenceWriters {
    // One model case: the problem in the device layout, and per point the parameter block, the CPU's cost and
    // gradient, and the map from the device's result block to the gradient. Throws std::runtime_error.
    std::function<void(const std::string& path, const std::string& about, const std::shared_ptr<const Problem>& problem,
                       const std::vector<std::vector<double>>& points)>
        modelCase;
    // One FastH case: BenchData(d, k, m, seed) with the CPU's sequential products, gradients, SVD inverse and
    // log-determinant at block size `block`.
    std::function<void(const std::string& path, int d, int k, int m, int block, std::uint64_t seed)> fasthCase;
};

// A point of a model case: `x` with its phases moved by N(0, 0.2) rad, the illumination's centre by N(0, 0.05) and the
// rest by N(0, 0.03) of their scale (mt19937_64 from `seed`). The device check's reference points and the GPU
// model's host tests share it, so that both look at the same kind of point.
std::vector<double> perturbedParameters(const Problem& problem, std::vector<double> x, std::uint64_t seed);

// Called once, before main; returns true so that it can initialise a static.
bool registerDeviceReferenceWriters(DeviceReferenceWriters writers);
// The registered writers; throws std::runtime_error when this program was linked without them.
const DeviceReferenceWriters& deviceReferenceWriters();

} // namespace wfs
