#pragma once
// The composite fits reconstruct() dispatches to: several fits of the same data, each seeded by the one before,
// whose result reads as one fit (counts and time are the totals, the iteration limit is the whole run's).
// Internal to the engine: front ends set ReconstructionRequest's flags and call reconstruct().
#include "engine/ReconstructionEngine.h"

#include <atomic>
#include <functional>
#include <vector>

namespace wfs {

using ProgressFunction = std::function<void(const ProgressSnapshot&)>;

// The request's model at its start values (request.start, else the spec's), evaluated but not fitted: the result of a
// composite run whose iteration limit ended it before it reached the request's model, said not converged, with
// the run's counts `work`. May throw what makeEvaluator throws. (ReconstructionEngine.cpp.)
FitResult unfittedResult(const ReconstructionRequest& request, const SolverSummary& work);

// The model a sampling profile fits: `spec` less its zonal terms (a zonal amplitude becomes a centred Gaussian
// apodisation of fitted width, from kProfiledApodisationStart pupil radii unless the spec has its own), whose zonal
// maps are then fitted once at the chosen scale, from flat maps.
constexpr double kProfiledApodisationStart = 1.5; // amplitude exp(-1 / (2 x 1.5^2)) = 0.80 at the edge
ProblemSpec profiledModel(ProblemSpec spec);

// ReconstructionRequest::fitSampling: the aperture scale profiled, then the final fit at the best scale.
FitResult reconstructWithSamplingProfile(const ReconstructionRequest& request, const ProgressFunction& progress,
                                         const std::atomic<bool>* cancel);

// ReconstructionRequest::autoRegularization for a zonal pupil: the smoothness weight searched along
// regularizationSweepWeights().
FitResult reconstructWithRegularizationSweep(const ReconstructionRequest& request, const ProgressFunction& progress,
                                             const std::atomic<bool>* cancel);

// The weights a zonal fit from flat maps passes through before the requested weak one (empty: straight to it).
std::vector<double> continuationWeights(const ReconstructionRequest& request);

// A zonal fit reached through the weights `through`, strongest first, then at the request's own weight.
FitResult reconstructByContinuation(const ReconstructionRequest& request, const std::vector<double>& through,
                                    const ProgressFunction& progress, const std::atomic<bool>* cancel);

} // namespace wfs
