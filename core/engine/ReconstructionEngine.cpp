#include "engine/ReconstructionEngine.h"

#include "engine/CompositeFits.h"
#include "optics/PhaseUnwrap.h"

#include <system_error>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <optional>

namespace wfs {

namespace {
constexpr int kLargeProblem = 400; // free parameters beyond which BFGS becomes L-BFGS
} // namespace

void applySolverSettings(const SolverSettings& s, ReconstructionRequest& request)
{
    request.backend = s.backend;
    request.gradient = s.gradient;
    request.solver.optimizer = s.optimizer;
    request.evaluator.precision = s.precision;
    request.evaluator.threads = s.threads;
    request.solver.maxIterations = s.maxIterations;
    request.solver.gradientTolerance = s.gradientTolerance;
    request.solver.functionTolerance = s.functionTolerance;
    request.stages = s.stages;
    request.analysis.removeDefocus = s.removeDefocus.value_or(false); // unset: prepareRun decides for the data
    request.analysis.computeUncertainty = s.computeUncertainty;
}

std::vector<double> regularizationSweepWeights()
{
    return {1000.0, 100.0, 10.0, 1.0, 0.1};
}

namespace {
// Flux is the total of an unaberrated plane under the fit's *start* illumination (Problem's intensity scale), so a
// fitted Gaussian seeded as the next start changes its unit: the factor that keeps each plane's photons.
double photonsKept(const Problem& previous, const ModelParameters& p)
{
    const ProblemSpec& was = previous.spec();
    const Illumination& illumination = was.pupil.illumination;
    if (!illumination.gaussian || was.intensityScale > 0.0
        || (illumination.sigma == p.sigma && illumination.x0 == p.centreX && illumination.y0 == p.centreY))
        return 1.0;
    ProblemSpec fitted = was;
    fitted.pupil.illumination.sigma = p.sigma;
    fitted.pupil.illumination.x0 = p.centreX;
    fitted.pupil.illumination.y0 = p.centreY;
    for (PlaneSpec& plane : fitted.planes)
        plane.data = Image(); // the scale needs the pupil only
    return previous.intensityScale() / Problem(fitted).intensityScale();
}
} // namespace

void seedSpec(ProblemSpec& spec, const Problem& previous, const std::vector<double>& parameters)
{
    const ModelParameters p = previous.unpack(parameters.data());
    const double photons = photonsKept(previous, p);
    spec.basis.start = p.zernike;
    spec.pupil.illumination.x0 = p.centreX;
    spec.pupil.illumination.y0 = p.centreY;
    spec.pupil.illumination.amplitude = p.amplitude;
    spec.pupil.illumination.sigma = p.sigma;
    for (size_t k = 0; k < spec.planes.size(); ++k) {
        spec.planes[k].flux = p.flux[k] * photons;
        spec.planes[k].background = p.background[k];
        spec.planes[k].shiftX = p.shiftX[k];
        spec.planes[k].shiftY = p.shiftY[k];
    }
    spec.zonalPhaseStart = p.zonalPhase;
    spec.zonalAmplitudeStart = p.zonalAmplitude;
    spec.nuisance.defocusScale = p.defocusScale;
    spec.nuisance.defocusOffsets = p.defocusOffset;
}

namespace {
// Fewer data than this many pixels a fitted parameter leave the parameters undetermined (a 4 x 4 image
// fitted with 20 parameters "converged" on anything).
constexpr int kPixelsPerParameter = 5;

// A warning when the pixels that take part do not determine the parameters; empty otherwise.
std::string tooFewPixelsWarning(const Problem& problem)
{
    long pixels = 0;
    for (int k = 0; k < problem.planeCount(); ++k)
        for (double w : problem.weights(k))
            pixels += w > 0.0 ? 1 : 0;
    const long parameters = problem.parameterCount();
    if (pixels >= kPixelsPerParameter * parameters)
        return {};
    return std::to_string(pixels) + " data pixels for " + std::to_string(parameters) + " fitted parameters: "
           + (pixels <= parameters ? "more parameters than the data support" : "too few pixels to determine them") + " (at least "
           + std::to_string(kPixelsPerParameter) + " pixels a parameter, " + std::to_string(kPixelsPerParameter * parameters)
           + " here); the coefficients are not determined by the data: use larger images (--crop) or a lower --order";
}
// A live snapshot of iterate `it`: its Zernike terms in waves and phase map, and with `images` the model and residual
// images (K transforms; taken between iterations, when the evaluator is idle).
ProgressSnapshot snapshotOf(const Problem& problem, ModelEvaluator& evaluator, const IterationSnapshot& it, bool images)
{
    ProgressSnapshot snap;
    snap.iteration = it;
    const ModelParameters p = problem.unpack(it.parameters.data());
    for (double c : p.zernike)
        snap.zernikeWaves.push_back(c / (2.0 * M_PI));
    snap.phase = phaseMap(problem, p);
    snap.phaseGeometry = phaseMapGeometry(problem);
    if (images) {
        snap.models = modelImagesInDataLayout(evaluator, it.parameters);
        for (size_t k = 0; k < snap.models.size(); ++k)
            snap.residuals.push_back(planeResiduals(problem, int(k), snap.models[k]));
    }
    return snap;
}
// The last stage's fit analysed (uncertainties, PSF analysis as asked), with the warnings a reader needs: too few
// pixels for the terms, and L-BFGS where BFGS was asked.
FitResult finishedFit(ModelEvaluator& evaluator, const Problem& problem, const SolverSummary& summary, const ReconstructionRequest& request,
                      bool switchedToLbfgs)
{
    FitResult result = analyseFit(evaluator, summary, request.gradient, request.analysis);
    if (const std::string thin = tooFewPixelsWarning(problem); !thin.empty())
        result.warnings.push_back(thin);
    if (switchedToLbfgs)
        result.warnings.push_back("L-BFGS instead of BFGS: " + std::to_string(problem.parameterCount()) + " parameters (more than "
                                  + std::to_string(kLargeProblem) + ")");
    return result;
}
// A run the iteration limit ended before its model was fitted, as that model's result: `start` evaluated, with the
// run's counts in `work` and said not converged (so that it reads, saves and restores as the run's model).
FitResult heldAtStart(ModelEvaluator& evaluator, const Problem& problem, const std::vector<double>& start, SolverSummary work,
                      const ReconstructionRequest& request)
{
    work.termination = Termination::MaxIterations;
    work.parameters = start;
    work.finalCost = evaluator.evaluate(start.data(), nullptr);
    ReconstructionRequest unfitted = request;
    unfitted.analysis.computeUncertainty = false; // a point no fit reached has no curvature worth the cost
    return finishedFit(evaluator, problem, work, unfitted, false);
}

// The request's solver for one stage's problem, cancellable. BFGS keeps a dense P x P inverse Hessian: past a
// few hundred parameters (zonal pupils) its O(P^2) work per iteration outweighs the model's, and L-BFGS is the
// method (said in the result).
SolverOptions stageSolver(const SolverOptions& requested, const Problem& problem, const std::atomic<bool>* cancel)
{
    SolverOptions solver = requested;
    solver.cancel = cancel;
    if (solver.optimizer == OptimizerKind::Bfgs && problem.parameterCount() > kLargeProblem)
        solver.optimizer = OptimizerKind::Lbfgs;
    return solver;
}

// The solver's counts over the stages so far: each stage's summary goes on from them, so the result reads as
// one fit (its time, evaluations and iterations) and the progress's iterations count on.
struct RunningTotals {
    double seconds = 0.0;
    long cost = 0, gradient = 0;
    int iterations = 0;
    // Adds the totals to the summary of the fit since, whose sums become the totals.
    void carryInto(SolverSummary& summary)
    {
        summary.seconds += seconds;
        summary.costEvaluations += cost;
        summary.gradientEvaluations += gradient;
        summary.iterations += iterations;
        seconds = summary.seconds;
        cost = summary.costEvaluations;
        gradient = summary.gradientEvaluations;
        iterations = summary.iterations;
    }
};

// A zonal phase fitted with zones a whole wave apart (the same field): unwrapped, the fit goes on from the
// smooth map, whose smoothness prior is lower (optics/PhaseUnwrap.h). Returns the note saying so (the summary
// then the continued fit's), or empty when there was nothing to unwrap or the continued fit failed.
std::string continueUnwrapped(const Problem& problem, ModelEvaluator& evaluator, const SolverOptions& solver,
                              const IterationCallback& callback, SolverSummary& summary, RunningTotals& soFar)
{
    const auto unwrapped = unwrappedPupilPhase(problem, summary.parameters);
    if (!unwrapped)
        return {};
    SolverSummary more = minimise(evaluator, *unwrapped, solver, callback);
    if (more.termination == Termination::Failed)
        return {};
    char note[200];
    more.initialCost = summary.initialCost;
    soFar.carryInto(more);
    if (more.termination != Termination::Cancelled && more.finalCost >= summary.finalCost) {
        // The unwrapped map led to a higher minimum: the fit as it was stands, with the continued fit's work counted.
        std::snprintf(note, sizeof note,
                      "zonal phase unwrapped (zones a whole wave apart), but the continued fit ended higher "
                      "(cost %.6g -> %.6g): the fit before it is kept",
                      summary.finalCost, more.finalCost);
        summary.seconds = more.seconds;
        summary.iterations = more.iterations;
        summary.costEvaluations = more.costEvaluations;
        summary.gradientEvaluations = more.gradientEvaluations;
        return note;
    }
    std::snprintf(note, sizeof note, "zonal phase unwrapped (zones a whole wave apart) and the fit continued: cost %.6g -> %.6g",
                  summary.finalCost, more.finalCost);
    summary = std::move(more);
    return note;
}
} // namespace

FitResult unfittedResult(const ReconstructionRequest& request, const SolverSummary& work)
{
    const auto problem = std::make_shared<const Problem>(request.spec);
    auto evaluator = makeEvaluator(request.backend, problem, request.evaluator, request.gradient);
    const std::vector<double> start = request.start.empty() ? problem->initialParameters() : request.start;
    return heldAtStart(*evaluator, *problem, start, work, request);
}

FitResult reconstruct(const ReconstructionRequest& request, const std::function<void(const ProgressSnapshot&)>& progress,
                      const std::atomic<bool>* cancel)
{
    const bool zonal = hasZonalTerms(request.spec.phaseModel, request.spec.amplitudeModel);
    if (request.fitSampling)
        return reconstructWithSamplingProfile(request, progress, cancel);
    if (request.autoRegularization && zonal)
        return reconstructWithRegularizationSweep(request, progress, cancel);
    if (zonal)
        if (const std::vector<double> through = continuationWeights(request); !through.empty())
            return reconstructByContinuation(request, through, progress, cancel);
    std::vector<int> stages = request.stages;
    if (stages.empty())
        stages.push_back(request.spec.basis.maxOrder);
    // Requests built in code (presets, benchmarks) come here unchecked: the settings' one rule for the stages.
    SolverSettings staged;
    staged.stages = stages;
    if (const auto error = staged.stagesError())
        throw *error;

    ProblemSpec spec = request.spec;
    std::vector<double> start = request.start;
    std::optional<FitResult> result;
    std::shared_ptr<const Problem> previous;
    RunningTotals soFar;
    bool limitSpent = false; // the stages' shared iteration limit reached
    int previousOrder = 0;
    auto lastImages = std::chrono::steady_clock::now() - std::chrono::hours(1);
    for (size_t s = 0; s < stages.size(); ++s) {
        if (s > 0) {
            // Seed this stage from the previous one: lower-order terms come first in both orderings.
            seedSpec(spec, *previous, result->solver.parameters);
            start.clear();
        }
        spec.basis.maxOrder = stages[s];
        auto problem = std::make_shared<const Problem>(spec);
        auto evaluator = makeEvaluator(request.backend, problem, request.evaluator, request.gradient);
        if (start.empty())
            start = problem->initialParameters();
        if (int(start.size()) != problem->parameterCount())
            throw std::invalid_argument("start vector has " + std::to_string(start.size()) + " values, the problem has "
                                        + std::to_string(problem->parameterCount()) + " parameters");
        if (limitSpent) {
            // The limit ended an earlier stage: the result is in the last stage's model (so that it reads, saves and
            // restores as the run's), at the earlier stage's values with the higher orders at zero.
            result = heldAtStart(*evaluator, *problem, start, result->solver, request);
            result->warnings.push_back("the iteration limit (" + std::to_string(request.solver.maxIterations) + ") ended the run at order "
                                       + std::to_string(previousOrder) + " of the stages: the higher orders are not fitted");
            break;
        }
        SolverOptions solver = stageSolver(request.solver, *problem, cancel);
        solver.maxIterations = request.solver.maxIterations - soFar.iterations; // the stages share the limit
        const bool switchedToLbfgs = solver.optimizer != request.solver.optimizer;
        const int stage = int(s);
        const IterationCallback callback = [&](const IterationSnapshot& it) {
            if (progress) {
                const auto now = std::chrono::steady_clock::now();
                const bool images = request.liveImageInterval >= 0.0
                                    && std::chrono::duration<double>(now - lastImages).count() >= request.liveImageInterval;
                if (images)
                    lastImages = now;
                ProgressSnapshot snap = snapshotOf(*problem, *evaluator, it, images);
                snap.stage = stage;
                snap.stageCount = int(stages.size());
                snap.order = stages[size_t(stage)];
                snap.iteration.iteration += soFar.iterations;
                snap.iteration.elapsedSeconds += soFar.seconds;
                progress(snap);
            }
            return CallbackResult::Continue;
        };
        SolverSummary summary = minimise(*evaluator, start, solver, callback);
        soFar.carryInto(summary);
        std::string unwrapNote;
        solver.maxIterations = request.solver.maxIterations - soFar.iterations;
        if (summary.termination != Termination::Cancelled && summary.termination != Termination::Failed && solver.maxIterations > 0)
            unwrapNote = continueUnwrapped(*problem, *evaluator, solver, callback, summary, soFar);
        const bool stopped = summary.termination == Termination::Cancelled || summary.termination == Termination::Failed;
        limitSpent = !stopped && (summary.termination == Termination::MaxIterations || soFar.iterations >= request.solver.maxIterations);
        if (s + 1 == stages.size() || stopped) {
            result = finishedFit(*evaluator, *problem, summary, request, switchedToLbfgs);
            if (!unwrapNote.empty())
                result->warnings.push_back(unwrapNote);
            break;
        }
        result = FitResult();
        result->solver = summary;
        previous = problem;
        previousOrder = stages[s];
        if (limitSpent)
            s = stages.size() - 2; // on to the last stage's model, unfitted
    }
    return *result;
}

ReconstructionEngine::~ReconstructionEngine()
{
    cancel();
    wait();
}

void ReconstructionEngine::start(ReconstructionRequest request)
{
    cancel();
    wait();
    {
        std::lock_guard lock(m_mutex);
        m_latest.reset();
        m_history.clear();
        m_result.reset();
        m_error.clear();
    }
    m_cancel = false;
    m_running = true;
    try {
        m_thread = startThread(std::move(request));
    } catch (const std::system_error& e) {
        // No thread (a process or address-space limit): the job fails with a message instead of the
        // std::terminate an escaping exception would mean for the front end.
        std::lock_guard lock(m_mutex);
        m_error = std::string("cannot start the reconstruction thread (") + e.what()
                  + "); the system refused a new thread: raise the process or memory limit (ulimit -u, ulimit -v)";
        m_running = false;
    }
}

std::thread ReconstructionEngine::startThread(ReconstructionRequest request)
{
    if (s_threadCreationFailsForTesting.load())
        throw std::system_error(std::make_error_code(std::errc::resource_unavailable_try_again), "thread creation refused (test)");
    return std::thread([this, request = std::move(request)] {
        try {
            FitResult r = reconstruct(
                request,
                [this](const ProgressSnapshot& snap) {
                    std::lock_guard lock(m_mutex);
                    m_history.push_back({snap.iteration.iteration, snap.iteration.cost, snap.iteration.gradientMaxNorm,
                                         snap.iteration.elapsedSeconds, snap.stage});
                    m_latest = snap;
                    ++m_version;
                },
                &m_cancel);
            std::lock_guard lock(m_mutex);
            m_result = std::make_shared<const FitResult>(std::move(r));
        } catch (const std::bad_alloc&) {
            std::lock_guard lock(m_mutex);
            m_error = "out of memory: the problem (grid " + std::to_string(request.spec.grid.size) + ", "
                      + std::to_string(request.spec.planes.size())
                      + " planes) needs more memory than this process may use; "
                        "use a smaller --grid or --crop"
                      + std::string(request.evaluator.threads > 1 ? " or fewer threads (each takes memory of its own)" : "");
        } catch (const std::exception& e) {
            std::lock_guard lock(m_mutex);
            m_error = e.what();
        }
        m_running = false;
    });
}

std::atomic<bool> ReconstructionEngine::s_threadCreationFailsForTesting{false};

void ReconstructionEngine::setThreadCreationFailsForTesting(bool fails)
{
    s_threadCreationFailsForTesting = fails;
}

void ReconstructionEngine::cancel()
{
    m_cancel = true;
}

void ReconstructionEngine::wait()
{
    if (m_thread.joinable())
        m_thread.join();
}

std::optional<ProgressSnapshot> ReconstructionEngine::latest(unsigned long* version) const
{
    std::lock_guard lock(m_mutex);
    if (version)
        *version = m_version;
    return m_latest;
}

std::vector<HistoryRow> ReconstructionEngine::history(size_t from) const
{
    std::lock_guard lock(m_mutex);
    if (from >= m_history.size())
        return {};
    return std::vector<HistoryRow>(m_history.begin() + long(from), m_history.end());
}

size_t ReconstructionEngine::historySize() const
{
    std::lock_guard lock(m_mutex);
    return m_history.size();
}

std::optional<FitResult> ReconstructionEngine::result() const
{
    std::lock_guard lock(m_mutex);
    return m_result ? std::optional<FitResult>(*m_result) : std::nullopt;
}

std::shared_ptr<const FitResult> ReconstructionEngine::sharedResult() const
{
    std::lock_guard lock(m_mutex);
    return m_result;
}

std::string ReconstructionEngine::error() const
{
    std::lock_guard lock(m_mutex);
    return m_error;
}

} // namespace wfs
