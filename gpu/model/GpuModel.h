#pragma once
// The GPU backend's ModelEvaluator: a Problem compiled for the device (ModelDevice) plus the host-side
// translation between the engine's parameter vector and the device's parameter and result blocks.
// Created only through engine/BackendFactory, with which gpu/GpuBackend.cpp registers this backend.
#include "fit/ModelEvaluator.h"
#include "model/ModelLayout.h"

#include <memory>
#include <string>

namespace wfs::gpu {

// An evaluator on device options.device. Throws CudaError (a std::runtime_error naming the failed
// call, or saying "out of GPU memory" with the sizes) when the device cannot hold or run the problem,
// std::invalid_argument for a problem without data.
std::unique_ptr<ModelEvaluator> makeGpuEvaluator(std::shared_ptr<const Problem> problem, const EvaluatorOptions& options,
                                                 const std::string& deviceName);

// ---- host-side translation, exposed for tests that run without a device ----

ModelDims modelDims(const Problem& problem, Precision precision);
// The problem's resident arrays in the device layout (ModelDims::element for grid arrays).
ModelInput modelInput(const Problem& problem, Precision precision);
// The parameter block of `p` (ModelDims' parameter offsets).
std::vector<double> parameterBlock(const Problem& problem, const ModelDims& dims, const ModelParameters& p);
// The cost from a result block (+infinity where the Poisson model is not positive under data), and with
// `gradient` the free-parameter gradient (needs the pupil rows, i.e. an evaluation with the gradient).
double costAndGradient(const Problem& problem, const ModelDims& dims, const ModelParameters& p, const double* result,
                       double* gradient);

} // namespace wfs::gpu
