#pragma once
// BFGS / L-BFGS minimisation of a ModelEvaluator through Ceres' GradientProblemSolver (line search
// with Wolfe conditions), with a per-iteration callback that receives value snapshots and can stop.
#include "optics/ModelEvaluator.h"

#include <atomic>
#include <functional>
#include <string>
#include <vector>

namespace wfs {

enum class OptimizerKind { Bfgs, Lbfgs };
const char* optimizerName(OptimizerKind kind); // "bfgs" / "lbfgs"

// Two sets of stopping rules, each stated once. A user's fit stops at the settings' (settings/SolverSettings.h: every
// front end, preset and session starts there). The seed paper's OOF reference (Nikolic 2018, scipy's BFGS with gtol
// 1e-8) stops at the tighter pair, which the oof preset and the speed-up experiment keep so that their timings compare
// with the paper's; a SolverOptions built by hand (the fit layer's own tests) starts there too.
constexpr double kDefaultGradientTolerance = 1e-6, kDefaultFunctionTolerance = 1e-11;
constexpr double kReferenceGradientTolerance = 1e-8, kReferenceFunctionTolerance = 1e-12;

struct SolverOptions {
    OptimizerKind optimizer = OptimizerKind::Bfgs;
    int maxIterations = 2000;
    // Stop when max_i |dL/dx_i| <= gradientTolerance (scipy's BFGS gtol).
    double gradientTolerance = kReferenceGradientTolerance;
    // Stop when |delta cost| / cost < functionTolerance (a tiny relative change of the cost).
    double functionTolerance = kReferenceFunctionTolerance;
    // Stop when |delta x| / (|x| + parameterTolerance) < parameterTolerance.
    double parameterTolerance = 1e-14;
    // Stop once the cost has fallen by less than plateauDecrease over the last plateauIterations iterations (0: never).
    // For an exploratory fit whose cost is only compared with others at a precision far coarser than convergence
    // gives (a smoothness weight's search, engine/CompositeFits.h); the summary says it stopped there.
    double plateauDecrease = 0.0;
    int plateauIterations = 10;
    int lbfgsRank = 20; // history length of L-BFGS
    // Scale the first inverse-Hessian estimate by the curvature seen along the first step (Ceres'
    // approximate eigenvalue scaling). The OOF costs are ~1e-5 with gradients ~1e-7: with an identity
    // start BFGS takes tiny first steps and meets gmax <= 1e-8 early and far from the minimum; scaled,
    // it reaches lower costs in a similar number of iterations at every grid size.
    bool scaleInitialHessian = true;
    // Checked before every evaluation and after every iteration; set from another thread to cancel.
    const std::atomic<bool>* cancel = nullptr;

    bool isValid(std::string* error) const;
};

struct IterationSnapshot {
    int iteration = 0;
    double cost = 0.0;
    double gradientMaxNorm = 0.0;
    double gradientNorm = 0.0;
    double elapsedSeconds = 0.0;
    long costEvaluations = 0;
    long gradientEvaluations = 0;
    std::vector<double> parameters; // the accepted iterate, in the problem's parameter order
};

enum class CallbackResult { Continue, Abort, Finish };
using IterationCallback = std::function<CallbackResult(const IterationSnapshot&)>;

enum class Termination {
    Converged,     // a stopping rule was met
    MaxIterations, // the iteration limit was reached first
    Stalled,       // the line search could not lower the cost further (precision limit)
    Cancelled,     // the user stopped it; the result is the last accepted iterate
    Failed,        // the evaluation failed (backend error, non-finite cost at the start)
};
const char* terminationName(Termination t); // "converged", "max-iterations", "stalled", "cancelled", "failed"

struct SolverSummary {
    Termination termination = Termination::Failed;
    bool plateau = false; // Converged by SolverOptions::plateauDecrease, not by the tolerances
    std::string message;  // in words, for people
    std::vector<double> parameters;
    double initialCost = 0.0;
    double finalCost = 0.0;
    double gradientMaxNorm = 0.0;
    int iterations = 0;
    long costEvaluations = 0; // model evaluations, including those of finite-difference gradients
    long gradientEvaluations = 0;
    double seconds = 0.0;
};

// The scales the solver divides the parameters by (it works on x / scale): Problem::parameterScales, with the zonal
// terms' set pixel by pixel so that the curvature of data and smoothness prior together at `start` matches the
// Zernike terms' (a Jacobi preconditioner). Adds the gradients it evaluates (at the start, then one along the
// Zernike terms and one per zonal block) to `gradientEvaluations`. May throw what the evaluator throws.
std::vector<double> solverScales(ModelEvaluator& evaluator, const std::vector<double>& start, long& gradientEvaluations);

// Minimises from `start`. Never throws for numerical trouble: a backend exception or a non-finite
// start ends the run with Termination::Failed and its message, keeping the last good iterate.
SolverSummary minimise(ModelEvaluator& evaluator, const std::vector<double>& start, const SolverOptions& options,
                       const IterationCallback& callback = {});

// The cost at `parameters` and, when `gradient` is not null, its gradient; non-finite where it cannot be evaluated.
using ObjectiveFunction = std::function<double(const double* parameters, double* gradient)>;
// The same minimisation of any objective (a field's joint fit sums many beads' evaluators: fit/FieldJointFit.h), on
// parameters divided by `scales`, which the caller chooses as the single fits' parameterScales.
SolverSummary minimise(const ObjectiveFunction& objective, const std::vector<double>& start, const std::vector<double>& scales,
                       const SolverOptions& options, const IterationCallback& callback = {});

} // namespace wfs
