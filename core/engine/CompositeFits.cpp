// The composite fits: runs made of several fits of the same data, each seeded by the one before, that read as
// one result (their counts and time are the totals). The sampling profile (ReconstructionRequest::fitSampling), the
// smoothness weight's search (autoRegularization) and a weak weight reached by continuation. Each calls
// reconstruct() for its fits, so they compose: a profile's final fit may be a search, a search's first fit a
// continuation.
#include "engine/CompositeFits.h"

#include "fit/Uncertainty.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <optional>

namespace wfs {

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

// A weight or scale as people write it (%g).
std::string numberText(double value)
{
    char text[32];
    std::snprintf(text, sizeof text, "%g", value);
    return text;
}

// The composite's fits share the request's iteration limit (`--max-iterations` bounds the whole run, never each
// fit): a fit runs with what the work `done` before it left.
int iterationsLeft(const ReconstructionRequest& request, const SolverSummary& done)
{
    return request.solver.maxIterations - done.iterations;
}

// Whether a fit ends the composite run: cancelled, failed, or the iteration limit spent.
bool endsRun(const FitResult& fit, const ReconstructionRequest& request, const SolverSummary& done)
{
    const Termination t = fit.solver.termination;
    return t == Termination::Cancelled || t == Termination::Failed || t == Termination::MaxIterations || iterationsLeft(request, done) <= 0;
}

// A run its iteration limit ended: `result` (the best fit so far) is said not converged, and where it stopped.
FitResult outOfIterations(FitResult result, const std::string& during)
{
    if (result.solver.termination == Termination::Cancelled || result.solver.termination == Termination::Failed)
        return result;
    result.solver.termination = Termination::MaxIterations;
    result.warnings.push_back("the iteration limit (--max-iterations, the whole run's) ended the run during " + during
                              + ": the result is the best fit so far, not converged");
    return result;
}

// The summary of a composite's last fit made to read as the whole run's: its time, iterations and evaluations are
// the totals `all`.
void countWholeRun(SolverSummary& summary, const SolverSummary& all)
{
    summary.seconds = all.seconds;
    summary.iterations = all.iterations;
    summary.costEvaluations = all.costEvaluations;
    summary.gradientEvaluations = all.gradientEvaluations;
}

// `request` at smoothness weight `weight`, started where `previous` ended (its Zernike and zonal values).
ReconstructionRequest seededAt(const ReconstructionRequest& request, double weight, const FitResult& previous,
                               const ProblemSpec& previousSpec)
{
    ReconstructionRequest next = request;
    next.autoRegularization = false;
    next.spec.regularization = weight;
    seedSpec(next.spec, Problem(previousSpec), previous.solver.parameters);
    next.start.clear();
    next.stages.clear();
    return next;
}

// The plateau the exploratory fits of a weight's search and of a continuation stop at (SolverOptions::plateauDecrease).
// A search's fit is only judged by its chi2/pixel against the noise level 1 + 3 sqrt(2 / N), so its cost is needed to
// 1 % of that margin, 3 sqrt(2 N) in chi2; as cost, chi2 / 2 for the Poisson likelihood (its deviance) and chi2 for
// chi-square, of which the smaller is taken. A continuation's fit only starts the next. Plain least squares, whose
// cost is not in the noise's units, gets none (0): its fits run to convergence.
double explorationPlateau(const ProblemSpec& spec)
{
    if (spec.objective == ObjectiveKind::LeastSquares)
        return 0.0;
    double pixels = 0.0;
    for (const PlaneSpec& plane : spec.planes)
        for (size_t i = 0; i < plane.data.pixels.size(); ++i)
            pixels += std::isfinite(plane.data.pixels[i]) && (plane.mask.empty() || plane.mask[i] != 0);
    return 0.01 * 3.0 * std::sqrt(2.0 * pixels) / 2.0;
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

} // namespace

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
    first.solver.plateauDecrease = explorationPlateau(request.spec);
    SolverSummary done; // the sweep's fits so far
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
        step.solver.maxIterations = iterationsLeft(request, done);
        FitResult result = reconstruct(step, continuing(progress, done), cancel);
        addWork(done, result.solver);
        if (endsRun(result, request, done)) {
            if (result.solver.termination != Termination::Cancelled && result.solver.termination != Termination::Failed) {
                order.push_back(i);
                chi[i] = overallReducedChiSquare(result, &pixels);
                recordSweep(result, weights, chi, order, weights[i], "the iteration limit (the search did not finish)", done);
                countWholeRun(result.solver, done);
                result = outOfIterations(std::move(result), "the smoothness weight's search");
            }
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
    // The sweep's fits stop at the search's precision and skip the uncertainties (the curvature's P + 1 evaluations):
    // the chosen weight is fitted on from its own solution to the request's stopping rules, with the full analysis.
    const double weight = weights[*chosen];
    FitResult result = std::move(*fits[*chosen]);
    const bool plateau = result.solver.plateau;
    if ((plateau || request.analysis.computeUncertainty) && iterationsLeft(request, done) > 0) {
        ReconstructionRequest last = seededAt(request, weight, result, *fittedSpecs[*chosen]);
        last.start = result.solver.parameters;
        last.solver.maxIterations = iterationsLeft(request, done);
        result = reconstruct(last, continuing(progress, done), cancel);
        addWork(done, result.solver);
        if (endsRun(result, request, done) && result.solver.termination == Termination::MaxIterations)
            result = outOfIterations(std::move(result), "the chosen weight's final fit");
    } else if (request.analysis.computeUncertainty) { // (a fit that spends the limit ends the search above)
        result.warnings.push_back("no uncertainties: the search spent the iteration limit before the chosen weight's final fit");
    }
    recordSweep(result, weights, chi, order, weight, rule, done);
    countWholeRun(result.solver, done);
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
    step.solver.plateauDecrease = explorationPlateau(request.spec); // each weight passed through only starts the next
    SolverSummary done;                                             // the work of the fits before the current one
    std::vector<FitResult::SweepPoint> path;
    std::optional<FitResult> previous;
    ProblemSpec previousSpec;
    double initialCost = 0.0; // the first fit's
    // Fits `at`; its summary's counts become the totals so far.
    const auto fitAt = [&](ReconstructionRequest at) {
        at.solver.maxIterations = iterationsLeft(request, done);
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
        if (endsRun(fitted, request, done)) {
            fitted.regularizationSweep = std::move(path);
            return outOfIterations(std::move(fitted), "the continuation to weight " + numberText(request.spec.regularization));
        }
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

namespace {

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

class SamplingProfile;
ReconstructionRequest finalFitAfterProfile(const ReconstructionRequest& request, const SamplingProfile& profile);

// The sampling fit's profile: one fit per aperture scale, each seeded from the best fit so far, all within the
// request's iteration limit.
class SamplingProfile {
public:
    SamplingProfile(const ReconstructionRequest& request, const std::function<void(const ProgressSnapshot&)>& progress,
                    const std::atomic<bool>* cancel)
        : m_request(request)
        , m_limit(request)
        , m_progress(progress)
        , m_cancel(cancel)
    {
        m_request.spec = profiledModel(request.spec);
        m_request.fitSampling = false;
        m_request.autoRegularization = false;
        m_request.analysis.computeUncertainty = false;
        m_request.analysis.psfAnalysis = false;
        if (hasZonalTerms(request.spec.phaseModel, request.spec.amplitudeModel))
            m_request.start.clear(); // the caller's start is a vector of the zonal model's parameters
    }

    // Fits at `scale`; false when the fit ended the run (cancelled, failed or out of iterations: stopped() says).
    bool fitAt(double scale)
    {
        ReconstructionRequest step = m_request;
        step.spec = withApertureScale(m_request.spec, scale);
        if (m_best) {
            seedSpec(step.spec, Problem(m_bestSpec), m_best->solver.parameters);
            step.start.clear();
            step.stages.clear();
        }
        step.solver.maxIterations = iterationsLeft(m_limit, m_work);
        FitResult result = reconstruct(step, continuing(m_progress, m_work), m_cancel);
        addWork(m_work, result.solver);
        const bool ended = endsRun(result, m_limit, m_work);
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
        return !ended;
    }

    // The result of a run a profile fit ended: cancelled or failed as it is; out of iterations, the best fit so far.
    FitResult stopped()
    {
        if (m_stopped)
            return std::move(*m_stopped);
        if (hasZonalTerms(m_limit.spec.phaseModel, m_limit.spec.amplitudeModel)) {
            // The best profile fit is the Zernike model's: the result is the request's model started from it.
            FitResult held = unfittedResult(finalFitAfterProfile(m_limit, *this), m_work);
            held.warnings.push_back("the zonal terms are not fitted (flat maps)");
            return outOfIterations(std::move(held), "the sampling profile (the fit at aperture scale " + numberText(m_bestScale) + ")");
        }
        FitResult best = std::move(*m_best);
        countWholeRun(best.solver, m_work);
        return outOfIterations(std::move(best), "the sampling profile (the fit at aperture scale " + numberText(m_bestScale) + ")");
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
    const FitResult& best() const { return *m_best; }
    const std::vector<std::pair<double, double>>& points() const { return m_points; }
    // The profile's fits together (seconds, iterations and evaluations), for the result's summary.
    const SolverSummary& work() const { return m_work; }

private:
    ReconstructionRequest m_request;      // the profiled model's
    const ReconstructionRequest& m_limit; // the caller's: its iteration limit is the whole run's
    const std::function<void(const ProgressSnapshot&)>& m_progress;
    const std::atomic<bool>* m_cancel;
    std::vector<std::pair<double, double>> m_points; // (scale, final cost) in the order fitted
    std::optional<FitResult> m_best, m_stopped;      // m_stopped: a cancelled or failed fit
    ProblemSpec m_bestSpec;
    double m_bestScale = 1.0;
    SolverSummary m_work;
};

// The final fit's request after a profile: the caller's model at the best scale, started from the best profile fit
// (its own parameters when the models are the same; else its Zernike terms and nuisances, with the zonal phase
// started as the Zernike phase when there are no Zernike terms beside it, and flat maps otherwise).
ReconstructionRequest finalFitAfterProfile(const ReconstructionRequest& request, const SamplingProfile& profile)
{
    ReconstructionRequest last = request;
    last.fitSampling = false;
    last.stages.clear();
    last.solver.maxIterations = iterationsLeft(request, profile.work());
    if (!hasZonalTerms(request.spec.phaseModel, request.spec.amplitudeModel)) {
        last.spec = profile.bestSpec();
        last.start = profile.best().solver.parameters;
        return last;
    }
    last.spec = withApertureScale(request.spec, profile.bestScale());
    const Problem profiled(profile.bestSpec());
    const ModelParameters p = profiled.unpack(profile.best().solver.parameters.data());
    seedSpec(last.spec, profiled, profile.best().solver.parameters);
    // The profile's Gaussian only stood in for the zonal amplitude: the request's own illumination, its map from flat
    // (the fluxes above are in photons, seedSpec). Started from the Gaussian's log instead, the first zonal fit's line
    // search could stall.
    last.spec.pupil.illumination = request.spec.pupil.illumination;
    last.spec.zonalPhaseStart.clear();
    last.spec.zonalAmplitudeStart.clear();
    if (request.spec.phaseModel == PupilPhaseModel::Zonal && !p.zernike.empty()) {
        const Eigen::VectorXd phase =
            profiled.basis() * Eigen::Map<const Eigen::VectorXd>(p.zernike.data(), Eigen::Index(p.zernike.size()));
        last.spec.zonalPhaseStart.assign(phase.data(), phase.data() + phase.size());
    }
    last.start.clear();
    return last;
}

// The vertex and curvature (second derivative) of the parabola through three points (x ascending).
std::pair<double, double> parabola(const std::pair<double, double>& a, const std::pair<double, double>& b,
                                   const std::pair<double, double>& c)
{
    const double d1 = (b.second - a.second) / (b.first - a.first), d2 = (c.second - b.second) / (c.first - b.first);
    const double curvature = 2.0 * (d2 - d1) / (c.first - a.first);
    const double vertex = 0.5 * (a.first + b.first) - d1 / curvature;
    return {vertex, curvature};
}

} // namespace

// The model a sampling profile fits: the request's, less its zonal terms. A zonal pupil profiled point by point
// costs a zonal fit (hundreds of iterations, a continuation from flat maps) at every scale; the sampling moves the
// pupil's edge, which the Zernike terms and the planes' nuisances see as well, so the profile runs on the Zernike
// model and the zonal maps are fitted once, at the chosen scale.
ProblemSpec profiledModel(ProblemSpec spec)
{
    spec.phaseModel = PupilPhaseModel::Zernike;
    if (spec.amplitudeModel == PupilAmplitudeModel::Zonal) {
        // The zonal amplitude's broad shape, an apodisation, as a centred Gaussian of fitted width. Left out, a pupil
        // that darkens towards its edge reads as a larger aperture: the air preset's 30 % apodisation took the NA 2.2 %
        // high, 37 of the profile's own sigmas, and the zonal maps fitted there could not undo it.
        if (!spec.pupil.illumination.gaussian)
            spec.pupil.illumination.sigma = kProfiledApodisationStart;
        spec.amplitudeModel = PupilAmplitudeModel::Gaussian;
        spec.pupil.illumination.gaussian = true;
        spec.pupil.illumination.fitSigma = true;
    }
    spec.zonalPhaseStart.clear();
    spec.zonalAmplitudeStart.clear();
    return spec;
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
        return profile.stopped();
    for (double direction : {1.0, -1.0}) {
        double scale = 1.0;
        while (true) {
            const double next = scale + direction * kStep;
            if (next < lo - 1e-12 || next > hi + 1e-12)
                break;
            if (!profile.fitAt(next))
                return profile.stopped();
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
            return profile.stopped();
    }
    // The final fit at the best scale, with what the request asks for.
    const ReconstructionRequest last = finalFitAfterProfile(request, profile);
    FitResult result = reconstruct(last, continuing(progress, profile.work()), cancel);
    fit.scale = profile.bestScale();
    fit.zernikeProfile =
        last.spec.phaseModel != profile.bestSpec().phaseModel || last.spec.amplitudeModel != profile.bestSpec().amplitudeModel;
    for (const auto& [s, c] : profile.points()) {
        fit.scales.push_back(s);
        fit.costs.push_back(c);
    }
    // The profile's curvature is in the profiled model's cost, so its noise scale is that model's at the best point.
    const Problem profiled(profile.bestSpec());
    if (curvature > 0.0)
        fit.scaleSigma = std::sqrt(covarianceScale(profiled, profile.best().solver.finalCost, profiled.parameterCount() + 1) / curvature);
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

} // namespace wfs
