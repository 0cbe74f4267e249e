#include "engine/ReconstructionEngine.h"

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

void seedSpec(ProblemSpec& spec, const ModelParameters& p)
{
    spec.basis.start = p.zernike;
    spec.pupil.illumination.x0 = p.centreX;
    spec.pupil.illumination.y0 = p.centreY;
    spec.pupil.illumination.amplitude = p.amplitude;
    spec.pupil.illumination.sigma = p.sigma;
    for (size_t k = 0; k < spec.planes.size(); ++k) {
        spec.planes[k].flux = p.flux[k];
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

// Chi-square per pixel over every plane of a result.
double overallReducedChiSquare(const FitResult& result, long* pixels)
{
    double chi = 0.0;
    long used = 0;
    for (const PlaneResult& p : result.planes) {
        chi += p.reducedChiSquare * p.usedPixels;
        used += p.usedPixels;
    }
    *pixels = used;
    return used > 0 ? chi / double(used) : std::nan("");
}

// The progress of a fit that continues earlier ones (a sweep's, a profile's): its iterations and seconds count on
// from `before`, so the live convergence history runs on instead of starting again at each fit.
std::function<void(const ProgressSnapshot&)> continuing(const std::function<void(const ProgressSnapshot&)>& progress,
                                                        const SolverSummary& before)
{
    if (!progress)
        return {};
    return [&progress, before](const ProgressSnapshot& snap) {
        ProgressSnapshot shifted = snap;
        shifted.iteration.iteration += before.iterations;
        shifted.iteration.elapsedSeconds += before.seconds;
        progress(shifted);
    };
}

// Adds the work of `more` (time, iterations, evaluations) to `to`.
void addWork(SolverSummary& to, const SolverSummary& more)
{
    to.seconds += more.seconds;
    to.iterations += more.iterations;
    to.costEvaluations += more.costEvaluations;
    to.gradientEvaluations += more.gradientEvaluations;
}

// `request` at smoothness weight `weight`, started where `previous` ended (its Zernike and zonal values).
ReconstructionRequest seededAt(const ReconstructionRequest& request, double weight, const FitResult& previous,
                               const ProblemSpec& previousSpec)
{
    ReconstructionRequest next = request;
    next.autoRegularization = false;
    next.spec.regularization = weight;
    seedSpec(next.spec, Problem(previousSpec).unpack(previous.solver.parameters.data()));
    next.start.clear();
    next.stages.clear();
    return next;
}

// The fitted entry nearest to index i, or none.
std::optional<size_t> nearestFitted(const std::vector<std::optional<FitResult>>& fits, size_t i)
{
    const auto distance = [i](size_t k) { return k > i ? k - i : i - k; };
    std::optional<size_t> nearest;
    for (size_t k = 0; k < fits.size(); ++k)
        if (fits[k] && (!nearest || distance(k) < distance(*nearest)))
            nearest = k;
    return nearest;
}

// The sweep in the result: each weight fitted with its chi-square (in the order fitted), and the choice in words.
void recordSweep(FitResult& result, const std::vector<double>& weights, const std::vector<double>& chi, const std::vector<size_t>& order,
                 double weight, const std::string& rule, const SolverSummary& done)
{
    std::string sweep;
    result.regularizationSweep.clear();
    for (size_t j : order) {
        result.regularizationSweep.push_back({weights[j], chi[j]});
        char text[64];
        std::snprintf(text, sizeof text, "%s%g: %.3f", sweep.empty() ? "" : ", ", weights[j], chi[j]);
        sweep += text;
    }
    char head[96];
    std::snprintf(head, sizeof head, "weight %g chosen by ", weight);
    result.regularizationChoice = head + rule + "; chi2/pixel by weight, in the order fitted: " + sweep + "; "
                                  + std::to_string(order.size()) + " fits, " + std::to_string(done.iterations) + " iterations, "
                                  + std::to_string(int(std::lround(done.seconds))) + " s";
}

// ReconstructionRequest::autoRegularization: a bracketing search over the weights, then the choice and the fits in
// words. The discrepancy principle wants the strongest weight at the noise level, and chi-square only falls as the
// weight does, so the search starts in the middle of the ladder and walks one way: stronger while the noise level
// holds, weaker until it does. Each fit starts from the nearest weight already fitted. Only when no weight reaches the noise
// level are the rest fitted, for the fallback rule (the strongest within 2 % of the least chi-square).
// Kept whole (86 lines): the search's steps share its fits, chi-squares and counts and read in the order it walks.
FitResult reconstructWithRegularizationSweep(const ReconstructionRequest& request,
                                             const std::function<void(const ProgressSnapshot&)>& progress, const std::atomic<bool>* cancel)
{
    const std::vector<double> weights = regularizationSweepWeights(); // strongest first
    std::vector<std::optional<FitResult>> fits(weights.size());
    std::vector<std::optional<ProblemSpec>> fittedSpecs(weights.size()); // the spec each fit ran with
    std::vector<double> chi(weights.size(), std::nan(""));
    ReconstructionRequest first = request;
    first.autoRegularization = false;
    first.analysis.computeUncertainty = false; // for the chosen fit only, below
    SolverSummary done;                        // the sweep's fits so far
    long pixels = 0;
    std::optional<FitResult> stopped; // a cancelled or failed fit ends the sweep
    std::vector<size_t> order;        // the weights in the order they were fitted
    auto fitAt = [&](size_t i) {
        if (fits[i])
            return true;
        // Seeded by the fitted weight nearest to this one (the search walks from neighbour to neighbour): a strong
        // weight started from a much weaker weight's rough map may stall where it starts and inherit its chi-square.
        const std::optional<size_t> nearest = nearestFitted(fits, i);
        ReconstructionRequest step = nearest ? seededAt(first, weights[i], *fits[*nearest], *fittedSpecs[*nearest]) : first;
        step.spec.regularization = weights[i];
        FitResult result = reconstruct(step, continuing(progress, done), cancel);
        addWork(done, result.solver);
        if (result.solver.termination == Termination::Cancelled || result.solver.termination == Termination::Failed) {
            stopped = std::move(result);
            return false;
        }
        chi[i] = overallReducedChiSquare(result, &pixels);
        fits[i] = std::move(result);
        fittedSpecs[i] = step.spec;
        order.push_back(i);
        return true;
    };
    auto noiseLevel = [&] { return 1.0 + 3.0 * std::sqrt(2.0 / double(std::max(1L, pixels))); };
    auto atNoise = [&](size_t i) { return chi[i] <= noiseLevel(); };

    size_t i = weights.size() / 2;
    if (!fitAt(i))
        return std::move(*stopped);
    std::optional<size_t> chosen;
    if (atNoise(i)) {
        while (i > 0) { // stronger while the noise level holds
            if (!fitAt(i - 1))
                return std::move(*stopped);
            if (!atNoise(i - 1))
                break;
            --i;
        }
        chosen = i;
    } else {
        while (i + 1 < weights.size()) { // weaker until it does
            if (!fitAt(++i))
                return std::move(*stopped);
            if (atNoise(i)) {
                chosen = i;
                break;
            }
        }
    }
    std::string rule;
    if (chosen) {
        rule = "the discrepancy principle (chi2/pixel at the noise level " + std::to_string(noiseLevel()).substr(0, 5) + ")";
    } else {
        for (size_t j = 0; j < weights.size(); ++j)
            if (!fitAt(j))
                return std::move(*stopped);
        const double least = *std::min_element(chi.begin(), chi.end());
        for (size_t j = 0; j < weights.size() && !chosen; ++j)
            if (chi[j] <= 1.02 * least)
                chosen = j;
        rule = "no weight reaches the noise level, so the strongest within 2 % of the least chi2/pixel";
    }
    // The sweep's fits skip the uncertainties (2 P gradients each); when they are asked for, the chosen weight is
    // refitted from its own solution (a few iterations) with the full analysis.
    const double weight = weights[*chosen];
    FitResult result = std::move(*fits[*chosen]);
    if (request.analysis.computeUncertainty) {
        ReconstructionRequest last = seededAt(request, weight, result, *fittedSpecs[*chosen]);
        last.start = result.solver.parameters;
        result = reconstruct(last, continuing(progress, done), cancel);
    }
    recordSweep(result, weights, chi, order, weight, rule, done);
    return result;
}

// The weights a zonal fit at `request`'s smoothness weight passes through first, strongest first: the search's
// ladder from its middle weight down to the requested one, when that lies below the middle and the fit starts from
// flat zonal maps. Empty when the fit goes straight to its weight.
std::vector<double> continuationWeights(const ReconstructionRequest& request)
{
    const ProblemSpec& spec = request.spec;
    if (!spec.zonalPhaseStart.empty() || !spec.zonalAmplitudeStart.empty())
        return {};                // already seeded: a step of a search, a profile or a continuation, or the caller's own maps
    if (!request.start.empty()) { // the caller's start vector: flat zonal maps only if the problem's own
        const Problem problem(spec);
        if (int(request.start.size()) != problem.parameterCount())
            return {};
        const ModelParameters given = problem.unpack(request.start.data());
        const ModelParameters flat = problem.unpack(problem.initialParameters().data());
        if (given.zonalPhase != flat.zonalPhase || given.zonalAmplitude != flat.zonalAmplitude)
            return {};
    }
    const std::vector<double> ladder = regularizationSweepWeights(); // strongest first
    std::vector<double> weights;
    for (size_t i = ladder.size() / 2; i < ladder.size() && ladder[i] > spec.regularization; ++i)
        weights.push_back(ladder[i]);
    return weights;
}

// A zonal fit at a weak smoothness weight, reached by continuation: fitted first at the ladder's middle weight, then
// at each weaker ladder weight above the requested one, each seeded by the one before, and last at the requested
// weight. From flat zonal maps a weak weight lets every pupil pixel move on its own and L-BFGS crawls (the bead
// stack at weight 1: 798 iterations, to a higher cost); the strong weight first settles the smooth part of the
// pupil in a few dozen iterations, and the weak weight only refines it (361 in all). The result reads as one fit:
// its counts and time are the totals, and the weights passed through are said in FitResult::regularizationSweep.
FitResult reconstructByContinuation(const ReconstructionRequest& request, const std::vector<double>& through,
                                    const std::function<void(const ProgressSnapshot&)>& progress, const std::atomic<bool>* cancel)
{
    ReconstructionRequest step = request;
    step.analysis.computeUncertainty = false; // for the requested weight only
    step.analysis.psfAnalysis = false;
    SolverSummary done; // the work of the fits before the current one
    std::vector<FitResult::SweepPoint> path;
    std::optional<FitResult> previous;
    ProblemSpec previousSpec;
    double initialCost = 0.0; // the first fit's
    // Fits `at`; its summary's counts become the totals so far.
    const auto fitAt = [&](const ReconstructionRequest& at) {
        FitResult result = reconstruct(at, continuing(progress, done), cancel);
        const SolverSummary own = result.solver;
        addWork(result.solver, done);
        addWork(done, own);
        long pixels = 0;
        path.push_back({at.spec.regularization, overallReducedChiSquare(result, &pixels)});
        return result;
    };
    for (double weight : through) {
        ReconstructionRequest at = previous ? seededAt(step, weight, *previous, previousSpec) : step;
        at.spec.regularization = weight;
        FitResult fitted = fitAt(at);
        if (fitted.solver.termination == Termination::Cancelled || fitted.solver.termination == Termination::Failed)
            return fitted;
        if (!previous)
            initialCost = fitted.solver.initialCost;
        previousSpec = at.spec;
        previous = std::move(fitted);
    }
    FitResult result = fitAt(seededAt(request, request.spec.regularization, *previous, previousSpec));
    result.solver.initialCost = initialCost;
    result.regularizationSweep = std::move(path);
    return result;
}

// The largest aperture scale the planes' axial defocus allows (NA below 0.99 n), or +infinity.
double apertureScaleLimit(const ProblemSpec& spec)
{
    double limit = std::numeric_limits<double>::infinity();
    for (const PlaneSpec& plane : spec.planes) {
        const DiversitySpec& d = plane.diversity;
        if ((d.kind == DiversityKind::AxialParaxial || d.kind == DiversityKind::AxialHighNa) && d.numericalAperture > 0.0)
            limit = std::min(limit, 0.99 * d.immersionIndex / d.numericalAperture);
    }
    return limit;
}

double axialNumericalAperture(const ProblemSpec& spec)
{
    for (const PlaneSpec& plane : spec.planes)
        if (plane.diversity.kind == DiversityKind::AxialParaxial || plane.diversity.kind == DiversityKind::AxialHighNa)
            return plane.diversity.numericalAperture;
    return 0.0;
}

// The sampling fit's profile: one fit per aperture scale, each seeded from the best fit so far.
class SamplingProfile {
public:
    SamplingProfile(const ReconstructionRequest& request, const std::function<void(const ProgressSnapshot&)>& progress,
                    const std::atomic<bool>* cancel)
        : m_request(request)
        , m_progress(progress)
        , m_cancel(cancel)
    {
        m_request.fitSampling = false;
        m_request.autoRegularization = false;
        m_request.analysis.computeUncertainty = false;
        m_request.analysis.psfAnalysis = false;
    }

    // Fits at `scale`; false when the fit was cancelled or failed (then stopped() holds it).
    bool fitAt(double scale)
    {
        ReconstructionRequest step = m_request;
        step.spec = withApertureScale(m_request.spec, scale);
        if (m_best) {
            seedSpec(step.spec, Problem(m_bestSpec).unpack(m_best->solver.parameters.data()));
            step.spec.zonalPhaseStart.clear(); // per pupil pixel of another pupil
            step.spec.zonalAmplitudeStart.clear();
            step.start.clear();
            step.stages.clear();
        }
        FitResult result = reconstruct(step, continuing(m_progress, m_work), m_cancel);
        addWork(m_work, result.solver);
        m_work.costEvaluations += result.solver.costEvaluations;
        m_work.gradientEvaluations += result.solver.gradientEvaluations;
        if (result.solver.termination == Termination::Cancelled || result.solver.termination == Termination::Failed) {
            m_stopped = std::move(result);
            return false;
        }
        m_points.emplace_back(scale, result.solver.finalCost);
        if (!m_best || result.solver.finalCost < m_best->solver.finalCost) {
            m_best = std::move(result);
            m_bestSpec = step.spec;
            m_bestScale = scale;
        }
        return true;
    }

    double cost(double scale) const
    {
        for (const auto& [s, c] : m_points)
            if (s == scale)
                return c;
        return std::numeric_limits<double>::infinity();
    }
    double bestScale() const { return m_bestScale; }
    const ProblemSpec& bestSpec() const { return m_bestSpec; }
    FitResult& best() { return *m_best; }
    FitResult& stopped() { return *m_stopped; }
    const std::vector<std::pair<double, double>>& points() const { return m_points; }
    // The profile's fits together (seconds, iterations and evaluations), for the result's summary.
    const SolverSummary& work() const { return m_work; }

private:
    ReconstructionRequest m_request;
    const std::function<void(const ProgressSnapshot&)>& m_progress;
    const std::atomic<bool>* m_cancel;
    std::vector<std::pair<double, double>> m_points; // (scale, final cost) in the order fitted
    std::optional<FitResult> m_best, m_stopped;
    ProblemSpec m_bestSpec;
    double m_bestScale = 1.0;
    SolverSummary m_work;
};

// The vertex and curvature (second derivative) of the parabola through three points (x ascending).
std::pair<double, double> parabola(const std::pair<double, double>& a, const std::pair<double, double>& b,
                                   const std::pair<double, double>& c)
{
    const double d1 = (b.second - a.second) / (b.first - a.first), d2 = (c.second - b.second) / (c.first - b.first);
    const double curvature = 2.0 * (d2 - d1) / (c.first - a.first);
    const double vertex = 0.5 * (a.first + b.first) - d1 / curvature;
    return {vertex, curvature};
}

// ReconstructionRequest::fitSampling: walk from scale 1 in 4 % steps downhill, then the parabola's vertex; the
// final fit at the best scale with the request's own analysis (and smoothness sweep).
FitResult reconstructWithSamplingProfile(const ReconstructionRequest& request, const std::function<void(const ProgressSnapshot&)>& progress,
                                         const std::atomic<bool>* cancel)
{
    constexpr double kStep = 0.04;
    const double lo = 0.8, hi = std::min(1.25, apertureScaleLimit(request.spec));
    SamplingProfile profile(request, progress, cancel);
    if (!profile.fitAt(1.0))
        return std::move(profile.stopped());
    for (double direction : {1.0, -1.0}) {
        double scale = 1.0;
        while (true) {
            const double next = scale + direction * kStep;
            if (next < lo - 1e-12 || next > hi + 1e-12)
                break;
            if (!profile.fitAt(next))
                return std::move(profile.stopped());
            if (profile.cost(next) >= profile.cost(scale))
                break;
            scale = next;
        }
        if (profile.bestScale() != 1.0 && direction > 0.0)
            break; // downhill was up: no need to look down
    }
    auto points = profile.points();
    std::sort(points.begin(), points.end());
    SamplingFit fit;
    const auto bestAt = std::find_if(points.begin(), points.end(), [&](const auto& p) { return p.first == profile.bestScale(); });
    double curvature = std::nan("");
    fit.atLimit = bestAt == points.begin() || bestAt + 1 == points.end();
    if (!fit.atLimit) {
        const auto [vertex, c] = parabola(*(bestAt - 1), *bestAt, *(bestAt + 1));
        curvature = c;
        if (c > 0.0 && std::abs(vertex - bestAt->first) < kStep && !profile.fitAt(vertex))
            return std::move(profile.stopped());
    }
    // The final fit at the best scale, from its own solution, with what the request asks for.
    ReconstructionRequest last = request;
    last.fitSampling = false;
    last.spec = profile.bestSpec();
    last.start = profile.best().solver.parameters;
    last.stages.clear();
    FitResult result = reconstruct(last, continuing(progress, profile.work()), cancel);
    fit.scale = profile.bestScale();
    for (const auto& [s, c] : profile.points()) {
        fit.scales.push_back(s);
        fit.costs.push_back(c);
    }
    const Problem problem(last.spec);
    if (curvature > 0.0)
        fit.scaleSigma = std::sqrt(covarianceScale(problem, result.solver.finalCost, problem.parameterCount() + 1) / curvature);
    fit.samplingQSigma = result.samplingQ * fit.scaleSigma / fit.scale;
    fit.numericalAperture = axialNumericalAperture(last.spec);
    if (fit.numericalAperture > 0.0)
        fit.numericalApertureSigma = fit.numericalAperture * fit.scaleSigma / fit.scale;
    result.samplingFit = fit;
    // The summary counts the whole search: every profile fit and the final one.
    addWork(result.solver, profile.work());
    if (fit.atLimit)
        result.warnings.push_back("the sampling fit's least cost lies at the end of the searched range (aperture scale "
                                  + std::to_string(fit.scale).substr(0, 5) + "): check the NA, pixel size and wavelength");
    return result;
}

} // namespace

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
    auto lastImages = std::chrono::steady_clock::now() - std::chrono::hours(1);
    for (size_t s = 0; s < stages.size(); ++s) {
        if (s > 0) {
            // Seed this stage from the previous one: lower-order terms come first in both orderings.
            seedSpec(spec, previous->unpack(result->solver.parameters.data()));
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
        const SolverOptions solver = stageSolver(request.solver, *problem, cancel);
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
        if (summary.termination != Termination::Cancelled && summary.termination != Termination::Failed)
            unwrapNote = continueUnwrapped(*problem, *evaluator, solver, callback, summary, soFar);
        const bool last =
            s + 1 == stages.size() || summary.termination == Termination::Cancelled || summary.termination == Termination::Failed;
        if (last) {
            result = finishedFit(*evaluator, *problem, summary, request, switchedToLbfgs);
            if (!unwrapNote.empty())
                result->warnings.push_back(unwrapNote);
            break;
        }
        result = FitResult();
        result->solver = summary;
        previous = problem;
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
