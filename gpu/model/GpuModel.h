#pragma once
// The GPU backend's ModelEvaluator: a Problem compiled for the device (ModelDevice) plus the host-side
// translation between the engine's parameter vector and the device's parameter and result blocks.
// Created only through engine/BackendFactory, with which gpu/GpuBackend.cpp registers this backend.
#include "optics/ModelEvaluator.h"
#include "gpu/model/ModelTranslation.h"

#include <memory>
#include <string>

namespace wfs::gpu {

// An evaluator on device options.device. Throws CudaError (a std::runtime_error naming the failed
// call, or saying "out of GPU memory" with the sizes) when the device cannot hold or run the problem,
// std::invalid_argument for a problem without data.
std::unique_ptr<ModelEvaluator> makeGpuEvaluator(std::shared_ptr<const Problem> problem, const EvaluatorOptions& options,
                                                 const std::string& deviceName);

} // namespace wfs::gpu
