#pragma once
// The CPU backend: the multi-plane Fourier-optics forward model and its exact adjoint with FFTW.
#include "optics/ModelEvaluator.h"

#include <memory>

namespace wfs {

// Throws std::invalid_argument for bad options. The problem must outlive nothing: it is shared.
std::unique_ptr<ModelEvaluator> makeCpuEvaluator(std::shared_ptr<const Problem> problem, const EvaluatorOptions& options);

// A short description of this machine's CPU ("AMD EPYC 7B13", from /proc/cpuinfo), for reports.
std::string cpuName();

} // namespace wfs
