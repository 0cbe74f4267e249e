#include "fit/Solver.h"

#include <ceres/gradient_problem.h>
#include <ceres/gradient_problem_solver.h>
#include <ceres/iteration_callback.h>

#include <chrono>
#include <optional>
#include <cmath>
#include <cstdio>
#include <deque>
#include <random>

namespace wfs {

const char* optimizerName(OptimizerKind kind)
{
    return kind == OptimizerKind::Bfgs ? "bfgs" : "lbfgs";
}

const char* terminationName(Termination t)
{
    switch (t) {
    case Termination::Converged:
        return "converged";
    case Termination::MaxIterations:
        return "max-iterations";
    case Termination::Stalled:
        return "stalled";
    case Termination::Cancelled:
        return "cancelled";
    case Termination::Failed:
        return "failed";
    }
    return "?";
}

bool SolverOptions::isValid(std::string* error) const
{
    auto bad = [&](const char* text) {
        if (error)
            *error = text;
        return false;
    };
    if (maxIterations < 1)
        return bad("maximum iterations must be at least 1");
    if (!(gradientTolerance >= 0.0))
        return bad("gradient tolerance must not be negative");
    if (!(functionTolerance >= 0.0) || !(parameterTolerance >= 0.0))
        return bad("function and parameter tolerances must not be negative");
    if (lbfgsRank < 1)
        return bad("L-BFGS rank must be at least 1");
    if (!(plateauDecrease >= 0.0) || plateauIterations < 1)
        return bad("the plateau's decrease must not be negative and its iterations at least 1");
    return true;
}

namespace {

// Adapts an objective (a ModelEvaluator's, or a sum of them) to Ceres; counts evaluations, honours cancellation, and
// keeps a backend exception's message instead of letting it cross Ceres.
class CeresFunction final : public ceres::FirstOrderFunction {
public:
    CeresFunction(ObjectiveFunction objective, int costsPerGradient, const std::atomic<bool>* cancel, std::vector<double> scales)
        : m_objective(std::move(objective))
        , m_costsPerGradient(costsPerGradient)
        , m_cancel(cancel)
        , m_scales(std::move(scales))
        , m_x(m_scales.size())
    {
    }

    // Ceres sees u = x / scale; the evaluator sees x.
    std::vector<double> toScaled(const std::vector<double>& x) const
    {
        std::vector<double> u(x.size());
        for (size_t i = 0; i < x.size(); ++i)
            u[i] = x[i] / m_scales[i];
        return u;
    }
    std::vector<double> fromScaled(const double* u) const
    {
        std::vector<double> x(m_scales.size());
        for (size_t i = 0; i < x.size(); ++i)
            x[i] = u[i] * m_scales[i];
        return x;
    }

    bool Evaluate(const double* parameters, double* cost, double* gradient) const override
    {
        if ((m_cancel && m_cancel->load()) || !m_error.empty())
            return false;
        for (size_t i = 0; i < m_x.size(); ++i)
            m_x[i] = parameters[i] * m_scales[i];
        try {
            *cost = m_objective(m_x.data(), gradient);
        } catch (const std::exception& e) {
            m_error = e.what();
            return false;
        }
        if (gradient)
            for (size_t i = 0; i < m_x.size(); ++i)
                gradient[i] *= m_scales[i];
        m_costEvaluations += gradient ? m_costsPerGradient : 1;
        if (gradient)
            ++m_gradientEvaluations;
        if (!std::isfinite(*cost))
            return false;
        if (gradient)
            for (int i = 0; i < NumParameters(); ++i)
                if (!std::isfinite(gradient[i]))
                    return false;
        return true;
    }

    int NumParameters() const override { return int(m_scales.size()); }

    mutable long m_costEvaluations = 0;
    mutable long m_gradientEvaluations = 0;
    mutable std::string m_error;

private:
    ObjectiveFunction m_objective;
    int m_costsPerGradient = 1;
    const std::atomic<bool>* m_cancel;
    std::vector<double> m_scales;
    mutable std::vector<double> m_x;
};

class Callback final : public ceres::IterationCallback {
public:
    using Clock = std::chrono::steady_clock;

    Callback(const CeresFunction& function, const double* state, const SolverOptions& options, const wfs::IterationCallback& user,
             Clock::time_point start)
        : m_function(function)
        , m_state(state)
        , m_cancel(options.cancel)
        , m_plateauDecrease(options.plateauDecrease)
        , m_plateauIterations(options.plateauIterations)
        , m_user(user)
        , m_start(start)
    {
    }

    ceres::CallbackReturnType operator()(const ceres::IterationSummary& summary) override
    {
        m_last.iteration = summary.iteration;
        m_last.cost = summary.cost;
        m_last.gradientMaxNorm = summary.gradient_max_norm;
        m_last.gradientNorm = summary.gradient_norm;
        m_last.elapsedSeconds = std::chrono::duration<double>(Clock::now() - m_start).count();
        m_last.costEvaluations = m_function.m_costEvaluations;
        m_last.gradientEvaluations = m_function.m_gradientEvaluations;
        m_last.parameters = m_function.fromScaled(m_state);
        if (m_cancel && m_cancel->load())
            return ceres::SOLVER_ABORT;
        m_plateau = onPlateau(summary.cost);
        if (m_user) {
            switch (m_user(m_last)) {
            case CallbackResult::Continue:
                break;
            case CallbackResult::Abort:
                m_userAborted = true;
                return ceres::SOLVER_ABORT;
            case CallbackResult::Finish:
                m_plateau = false; // the caller's rule ended it
                return ceres::SOLVER_TERMINATE_SUCCESSFULLY;
            }
        }
        return m_plateau ? ceres::SOLVER_TERMINATE_SUCCESSFULLY : ceres::SOLVER_CONTINUE;
    }

    IterationSnapshot m_last;
    bool m_userAborted = false;
    bool m_plateau = false;

private:
    // Whether the cost fell by less than the plateau's decrease over its iterations (the costs kept are that many + 1).
    bool onPlateau(double cost)
    {
        if (!(m_plateauDecrease > 0.0))
            return false;
        m_costs.push_back(cost);
        if (int(m_costs.size()) <= m_plateauIterations)
            return false;
        m_costs.pop_front();
        return m_costs.front() - m_costs.back() < m_plateauDecrease;
    }

    const CeresFunction& m_function;
    const double* m_state;
    const std::atomic<bool>* m_cancel;
    double m_plateauDecrease;
    int m_plateauIterations;
    std::deque<double> m_costs;
    const wfs::IterationCallback& m_user;
    Clock::time_point m_start;
};

// Ceres' line-search options from ours: Wolfe line search, BFGS or L-BFGS, our stopping rules, no logging, and the
// state written back every iteration (the callback reads the live iterate).
ceres::GradientProblemSolver::Options ceresOptionsFor(const SolverOptions& options)
{
    ceres::GradientProblemSolver::Options ceresOptions;
    ceresOptions.line_search_direction_type = options.optimizer == OptimizerKind::Bfgs ? ceres::BFGS : ceres::LBFGS;
    ceresOptions.line_search_type = ceres::WOLFE;
    ceresOptions.use_approximate_eigenvalue_bfgs_scaling = options.scaleInitialHessian;
    ceresOptions.max_lbfgs_rank = options.lbfgsRank;
    ceresOptions.max_num_iterations = options.maxIterations;
    ceresOptions.gradient_tolerance = options.gradientTolerance;
    ceresOptions.function_tolerance = options.functionTolerance;
    ceresOptions.parameter_tolerance = options.parameterTolerance;
    ceresOptions.max_solver_time_in_seconds = 1e9;
    ceresOptions.logging_type = ceres::SILENT;
    ceresOptions.minimizer_progress_to_stdout = false;
    ceresOptions.update_state_every_iteration = true; // the callback reads the live iterate
    return ceresOptions;
}

// What a finished Ceres run means in our terms; a stall rewrites *message in words.
Termination terminationOf(const ceres::GradientProblemSolver::Summary& summary, std::string* message)
{
    switch (summary.termination_type) {
    case ceres::CONVERGENCE:
    case ceres::USER_SUCCESS:
        return Termination::Converged;
    case ceres::NO_CONVERGENCE:
        return Termination::MaxIterations;
    default:
        *message = "the line search could not lower the cost further (" + summary.message + ")";
        return Termination::Stalled;
    }
}

} // namespace

// Problem::parameterScales with the zonal terms' (sqrt(P), right for the data alone) made a Jacobi preconditioner
// of the data and the smoothness prior together, pixel by pixel. Each zonal block's mean
// curvature is estimated along a random +-1 direction from one gradient difference (Hutchinson's estimate of
// the mean diagonal). The prior's share of it is known exactly (weight x neighbour count per pixel), and the
// rest, the data's, is shared out in proportion to the pixel's squared field amplitude: a phase or
// log-amplitude value moves the field by amplitude x change, so its Fisher information goes as amplitude^2
// (small at the aperture's partial edge pixels, large where the apodisation brightens the pupil). Each pixel
// is then scaled so that its curvature matches the Zernike terms' mean. Without the prior's share a strong
// weight leaves the zonal block thousands of times stiffer than the rest and L-BFGS crawls; without the
// pixel-by-pixel split the bead stack's weight-1 fit takes 355 iterations instead of 320. Costs one gradient
// per block; the signs come from a fixed seed, so a fit is repeatable to the bit. Leaves the scales alone
// where an estimate is not positive.
std::vector<double> solverScales(ModelEvaluator& evaluator, const std::vector<double>& start, long& gradientEvaluations)
{
    const Problem& problem = evaluator.problem();
    std::vector<double> scales = problem.parameterScales();
    const std::vector<ParameterInfo>& info = problem.parameters();
    auto indices = [&](ParameterKind kind) {
        std::vector<size_t> out;
        for (size_t i = 0; i < info.size(); ++i)
            if (info[i].kind == kind)
                out.push_back(i);
        return out;
    };
    const std::vector<size_t> zernike = indices(ParameterKind::Zernike), phase = indices(ParameterKind::ZonalPhase),
                              amplitude = indices(ParameterKind::ZonalAmplitude);
    if (zernike.empty() || (phase.empty() && amplitude.empty()))
        return scales;
    std::vector<double> g0(start.size()), g1(start.size()), x(start);
    if (!std::isfinite(evaluator.evaluate(start.data(), g0.data())))
        return scales;
    ++gradientEvaluations;
    std::mt19937 random(20180518u);
    // The mean diagonal of the Hessian in the solver's variables over `block`.
    auto curvature = [&](const std::vector<size_t>& block) {
        std::vector<double> r(block.size());
        double step2 = 0.0;
        for (size_t j = 0; j < block.size(); ++j) {
            r[j] = (random() & 1u) ? 1.0 : -1.0;
            step2 += scales[block[j]] * scales[block[j]];
        }
        // A step of 1e-3 (radians, or log-amplitude) RMS in the model's own variables: well inside the
        // quadratic region, far above rounding.
        const double eps = 1e-3 / std::sqrt(step2 / double(block.size()));
        x = start;
        for (size_t j = 0; j < block.size(); ++j)
            x[block[j]] += eps * r[j] * scales[block[j]];
        ++gradientEvaluations;
        if (!std::isfinite(evaluator.evaluate(x.data(), g1.data())))
            return 0.0;
        double sum = 0.0;
        for (size_t j = 0; j < block.size(); ++j)
            sum += r[j] * scales[block[j]] * (g1[block[j]] - g0[block[j]]);
        return sum / (eps * double(block.size()));
    };
    const double reference = curvature(zernike);
    if (!(reference > 0.0))
        return scales;
    // Per pupil pixel: the prior's curvature (weight x neighbours) and the share of the data's (amplitude^2).
    const double weight = problem.spec().regularization;
    std::vector<double> prior(size_t(problem.pupilPixelCount()), 0.0);
    for (const auto& [i, j] : problem.neighbourPairs()) {
        prior[size_t(i)] += weight;
        prior[size_t(j)] += weight;
    }
    std::vector<double> share = problem.pupilAmplitude(problem.unpack(start.data()));
    double meanShare = 0.0, meanPrior = 0.0;
    for (size_t k = 0; k < share.size(); ++k) {
        share[k] *= share[k];
        meanShare += share[k] / double(share.size());
        meanPrior += prior[k] / double(share.size());
    }
    for (const std::vector<size_t>* block : {&phase, &amplitude}) {
        if (block->empty() || block->size() != share.size() || !(meanShare > 0.0))
            continue;
        const double base = scales[block->front()];            // every zonal value starts with the same scale
        const double mean = curvature(*block) / (base * base); // in the model's variables
        if (!(mean > 0.0))
            continue;
        // The data's mean curvature: what the estimate leaves beyond the prior's, and never under 5 % of it
        // (an estimate along one random direction; at a strong weight the prior is nearly all of it).
        const double data = std::max(mean - meanPrior, 0.05 * mean);
        for (size_t k = 0; k < block->size(); ++k) {
            const double own = data * share[k] / meanShare + prior[k];
            const double scale = own > 0.0 ? std::sqrt(reference / own) : 1e3 * base;
            scales[(*block)[k]] = std::clamp(scale, 1e-3 * base, 1e3 * base);
        }
    }
    return scales;
}

namespace {
// The run on parameters divided by `scales` (the balancing gradients already spent counted in its summary).
SolverSummary minimiseScaled(const ObjectiveFunction& objective, int costsPerGradient, const std::vector<double>& start,
                             std::vector<double> scales, long balancingGradients, const SolverOptions& options,
                             const IterationCallback& callback, std::chrono::steady_clock::time_point t0);

// Why a run cannot start (options out of range, a start of the wrong length) as a failed summary at `start`; nullopt
// when it can.
std::optional<SolverSummary> refusal(const SolverOptions& options, const std::vector<double>& start, size_t count, const char* what)
{
    SolverSummary result;
    result.parameters = start;
    if (!options.isValid(&result.message))
        return result;
    if (start.size() == count)
        return std::nullopt;
    result.message = "start vector has " + std::to_string(start.size()) + " values, " + what + " " + std::to_string(count);
    return result;
}
} // namespace

SolverSummary minimise(ModelEvaluator& evaluator, const std::vector<double>& start, const SolverOptions& options,
                       const IterationCallback& callback)
{
    if (std::optional<SolverSummary> refused = refusal(options, start, size_t(evaluator.parameterCount()), "the problem's parameters:"))
        return *refused;

    // Between the model evaluations of one gradient as well as between iterations (see ModelEvaluator).
    struct CancelFlagForThisRun {
        ModelEvaluator& evaluator;
        ~CancelFlagForThisRun() { evaluator.setCancelFlag(nullptr); }
    } cancelFlagForThisRun{evaluator};
    evaluator.setCancelFlag(options.cancel);

    const auto t0 = std::chrono::steady_clock::now();
    long balancingGradients = 0;
    std::vector<double> scales;
    try {
        scales = solverScales(evaluator, start, balancingGradients);
    } catch (const std::exception&) {
        scales = evaluator.problem().parameterScales(); // the first evaluation below reports the trouble
    }
    return minimiseScaled([&evaluator](const double* x, double* g) { return evaluator.evaluate(x, g); },
                          evaluator.costEvaluationsPerGradient(), start, std::move(scales), balancingGradients, options, callback, t0);
}

SolverSummary minimise(const ObjectiveFunction& objective, const std::vector<double>& start, const std::vector<double>& scales,
                       const SolverOptions& options, const IterationCallback& callback)
{
    if (std::optional<SolverSummary> refused = refusal(options, start, scales.size(), "scales given:"))
        return *refused;
    return minimiseScaled(objective, 1, start, scales, 0, options, callback, std::chrono::steady_clock::now());
}

namespace {

SolverSummary minimiseScaled(const ObjectiveFunction& objective, int costsPerGradient, const std::vector<double>& start,
                             std::vector<double> scales, long balancingGradients, const SolverOptions& options,
                             const IterationCallback& callback, std::chrono::steady_clock::time_point t0)
{
    SolverSummary result;
    result.parameters = start;
    const int count = int(start.size());
    auto* function = new CeresFunction(objective, costsPerGradient, options.cancel, std::move(scales)); // owned by the GradientProblem
    function->m_gradientEvaluations = balancingGradients;
    ceres::GradientProblem problem(function);
    std::vector<double> x = function->toScaled(start);

    // The starting cost decides whether there is anything to minimise.
    {
        std::vector<double> g(static_cast<size_t>(count));
        double cost = 0;
        if (!function->Evaluate(x.data(), &cost, g.data())) {
            const bool cancelled = options.cancel && options.cancel->load();
            result.message = cancelled                   ? "cancelled by the user before the first iteration"
                             : function->m_error.empty() ? "the objective is not finite at the start (check the data, flux and background)"
                                                         : "evaluation failed: " + function->m_error;
            result.termination = cancelled ? Termination::Cancelled : Termination::Failed;
            result.costEvaluations = function->m_costEvaluations;
            result.gradientEvaluations = function->m_gradientEvaluations;
            return result;
        }
        result.initialCost = cost;
    }

    ceres::GradientProblemSolver::Options ceresOptions = ceresOptionsFor(options);
    Callback iterationCallback(*function, x.data(), options, callback, t0);
    ceresOptions.callbacks.push_back(&iterationCallback);

    ceres::GradientProblemSolver::Summary summary;
    ceres::Solve(ceresOptions, problem, x.data(), &summary);

    const bool cancelled = (options.cancel && options.cancel->load()) || iterationCallback.m_userAborted;
    // On cancellation or a failed evaluation the array may hold a trial point; the last accepted
    // iterate (from the callback) is the good state.
    const bool haveSnapshot = !iterationCallback.m_last.parameters.empty();
    result.parameters = function->fromScaled(x.data());
    result.finalCost = summary.final_cost;
    result.iterations = int(summary.iterations.empty() ? 0 : summary.iterations.back().iteration);
    if (!summary.iterations.empty())
        result.gradientMaxNorm = summary.iterations.back().gradient_max_norm;
    if ((cancelled || !function->m_error.empty()) && haveSnapshot) {
        result.parameters = iterationCallback.m_last.parameters;
        result.finalCost = iterationCallback.m_last.cost;
        result.gradientMaxNorm = iterationCallback.m_last.gradientMaxNorm;
        result.iterations = iterationCallback.m_last.iteration;
    }
    result.message = summary.message;
    if (cancelled) {
        result.termination = Termination::Cancelled;
        result.message = "cancelled by the user; the result is the last accepted iterate";
    } else if (!function->m_error.empty()) {
        result.termination = Termination::Failed;
        result.message = "evaluation failed: " + function->m_error;
    } else if (iterationCallback.m_plateau) {
        result.termination = Termination::Converged;
        result.plateau = true;
        char text[160];
        std::snprintf(text, sizeof text,
                      "the cost fell by less than %.3g over the last %d iterations (the precision this exploratory fit needs)",
                      options.plateauDecrease, options.plateauIterations);
        result.message = text;
    } else {
        result.termination = terminationOf(summary, &result.message);
    }
    result.costEvaluations = function->m_costEvaluations;
    result.gradientEvaluations = function->m_gradientEvaluations;
    result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return result;
}

} // namespace

} // namespace wfs
