#pragma once
// How a fit runs: backend, gradient, optimiser, precision, threads, stopping rules, coarse-to-fine stages and the
// analysis after it. The defaults are the command line's, the desktop program's and a session's (one set).
#include "base/Precision.h"
#include "fit/Solver.h"
#include "settings/ModelSettings.h"
#include "settings/SettingsError.h"

#include <optional>
#include <string>
#include <vector>

namespace wfs {

// How to run the fit; mirrors wavefront-cli's solver options.
struct SolverSettings {
    BackendKind backend = BackendKind::Cpu;
    GradientKind gradient = GradientKind::Adjoint;
    OptimizerKind optimizer = OptimizerKind::Bfgs;
    Precision precision = Precision::Double;
    int threads = 1;                                      // 1..1024
    int maxIterations = 2000;                             // at least 1
    double gradientTolerance = kDefaultGradientTolerance; // stop when max |dL/dx| is at most this (scaled parameters); >= 0
    double functionTolerance = kDefaultFunctionTolerance; // stop when the relative cost change is below this; >= 0
    std::vector<int> stages;                              // coarse-to-fine orders; empty = one stage
    // The headline RMS, PV and Strehl without defocus. Unset: core decides (engine/Workflow.h prepareRun): removed for
    // defocus-diverse data, where the fitted defocus says where focus sits in the stack.
    std::optional<bool> removeDefocus;
    bool computeUncertainty = true;
    bool operator==(const SolverSettings&) const = default;

    // The coarse-to-fine stages: each order within zernike::orderError's range, strictly increasing.
    std::optional<SettingsError> stagesError() const;
    // Threads, the iteration limit and the tolerances.
    std::optional<SettingsError> limitsError() const;
    // The first of the two.
    std::optional<SettingsError> firstError() const;
    bool isValid(std::string* why) const { return detail::validFrom(firstError(), why); }
};

// The fitted Zernike order and the coarse-to-fine stages have one carrier: `solver.stages`, when not
// empty, lists the orders fitted in turn and its last entry *is* the model's order; otherwise
// `model.order` is fitted in one stage. Returns the orders to fit (at least one), after checking them
// (ModelSettings::orderError, SolverSettings::stagesError). Throws SettingsError.
std::vector<int> fittedOrders(const ModelSettings& model, const SolverSettings& solver);
// The rule above, applied once where settings are read (a session file, the options of the command line, Python and
// a batch manifest): with stages, the model's order becomes the last stage, so that everything after reads
// `model.order`. checkSettings refuses settings that were never settled.
void settleOrder(ModelSettings& model, const SolverSettings& solver);

// The checks of a fit's settings, in one place: the orders (fittedOrders, settled: the last stage is the order), the
// pupil function, the solver's
// limits (the model's physical quantities are checked by Problem). Throws SettingsError.
void checkSettings(const ModelSettings& model, const SolverSettings& solver);
// ModelSettings::pupilFunctionError and imagingModelError, thrown.
void checkPupilFunctionSettings(const ModelSettings& model);
// SolverSettings::limitsError, thrown: for runs without model settings (bench).
void checkSolverSettings(const SolverSettings& solver);

} // namespace wfs
