#pragma once
// The host-side translation between the engine's Problem and the GPU model's device layout
// (ModelLayout.h): plain C++, no CUDA, so that it is built in every configuration. The CUDA backend
// (GpuModel.cpp) uses it per evaluation; `wavefront-cli device-reference` uses it to write the device
// check's reference data (gpu/device-check/), which the GPU-only harness reads without the engine.
#include "optics/ModelEvaluator.h"
#include "gpu/model/ModelLayout.h"

#include <vector>

namespace wfs::gpu {

ModelDims modelDims(const Problem& problem, Precision precision);
// The problem's resident arrays in the device layout (ModelDims::element for grid arrays).
ModelInput modelInput(const Problem& problem, Precision precision);
// The parameter block of `p` (ModelDims' parameter offsets).
std::vector<double> parameterBlock(const Problem& problem, const ModelDims& dims, const ModelParameters& p);
// The cost from a result block (+infinity where the Poisson model is not positive under data), and with
// `gradient` the free-parameter gradient (needs the pupil rows, i.e. an evaluation with the gradient).
double costAndGradient(const Problem& problem, const ModelDims& dims, const ModelParameters& p, const double* result, double* gradient);

} // namespace wfs::gpu
