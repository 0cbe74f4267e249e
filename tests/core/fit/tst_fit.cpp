// Fits: recovery from simulated demo data, noise-free recovery, adjoint and finite-difference fits
// reaching the same solution, coarse-to-fine stages, cancellation keeping a usable state.
#include "TestSupport.h"

#include "engine/BackendFactory.h"
#include "engine/Presets.h"
#include "engine/ReconstructionEngine.h"
#include "fit/Solver.h"

#include <condition_variable>

using namespace wfs;

namespace {
ReconstructionRequest demoRequest(int grid, bool noise, int order = 4)
{
    PresetOptions options;
    options.grid = grid;
    options.noise = noise;
    options.order = order;
    PresetCase c = makePreset("demo", options);
    ReconstructionRequest request;
    request.spec = c.spec;
    request.start = c.start;
    request.solver = c.solver;
    request.evaluator.measurePlans = false;
    return request;
}

// Fitted minus injected, in waves, for every term of the fit (terms not injected have truth 0).
std::vector<double> errorsAgainstTruth(const FitResult& r, const Truth& truth)
{
    std::vector<double> errors;
    for (const CoefficientResult& c : r.coefficients) {
        double t = 0;
        for (const TruthTerm& term : truth.terms)
            if (zernike::modeFromIndex(term.index, truth.ordering) == c.mode)
                t = term.valueWaves;
        errors.push_back(c.waves - t);
    }
    return errors;
}

// Passes evaluations through to `inner`, counting them, and sets `cancel` at the `cancelAt`-th one, as a
// user pressing Esc in the middle of a gradient would.
class CancellingEvaluator final : public ModelEvaluator {
public:
    CancellingEvaluator(std::unique_ptr<ModelEvaluator> inner, std::atomic<bool>& cancel, int cancelAt)
        : m_inner(std::move(inner))
        , m_cancel(cancel)
        , m_cancelAt(cancelAt)
    {
    }
    const Problem& problem() const override { return m_inner->problem(); }
    double evaluate(const double* parameters, double* gradient) override
    {
        if (++evaluations == m_cancelAt)
            m_cancel = true;
        return m_inner->evaluate(parameters, gradient);
    }
    std::vector<std::vector<double>> modelImages(const double* parameters) override { return m_inner->modelImages(parameters); }
    BackendInfo info() const override { return m_inner->info(); }
    double measureFftMs(int repeats) override { return m_inner->measureFftMs(repeats); }
    int evaluations = 0;

private:
    std::unique_ptr<ModelEvaluator> m_inner;
    std::atomic<bool>& m_cancel;
    int m_cancelAt;
};

Truth demoTruth()
{
    return makePreset("demo", PresetOptions{64, 2, 1, false, std::nullopt}).truth;
}
} // namespace

class TestFit : public QObject {
    Q_OBJECT

private slots:
    void recoversDemoWithNoise()
    {
        const FitResult r = reconstruct(demoRequest(128, true), {}, nullptr);
        QVERIFY2(r.solver.termination == Termination::Converged, r.solver.message.c_str());
        const Truth truth = demoTruth();
        for (double e : errorsAgainstTruth(r, truth))
            QVERIFY2(std::abs(e) < 0.01, qPrintable(QStringLiteral("coefficient error %1 waves").arg(e)));
        double injected = 0;
        for (const TruthTerm& t : truth.terms)
            injected += t.valueWaves * t.valueWaves;
        injected = std::sqrt(injected); // RMS of an orthonormal expansion (none of the truth is tip/tilt)
        WFS_VERIFY_CLOSE(r.rmsWaves, injected, 0.05, 0.0);
        for (const PlaneResult& plane : r.planes)
            QVERIFY2(plane.reducedChiSquare > 0.8 && plane.reducedChiSquare < 1.2,
                     "chi-square per pixel should be about 1 at the truth's noise");
        for (const CoefficientResult& c : r.coefficients)
            QVERIFY(std::isfinite(c.uncertaintyWaves) && c.uncertaintyWaves > 0 && c.uncertaintyWaves < 0.01);
        QVERIFY(r.strehl > 0 && r.strehl < 1);
    }

    void recoversNoiseFreeDataExactly()
    {
        ReconstructionRequest request = demoRequest(64, false);
        request.solver.gradientTolerance = 1e-10;
        request.solver.functionTolerance = 1e-16;
        request.analysis.computeUncertainty = false;
        const FitResult r = reconstruct(request, {}, nullptr);
        for (double e : errorsAgainstTruth(r, demoTruth()))
            QVERIFY2(std::abs(e) < 1e-6, qPrintable(QStringLiteral("coefficient error %1 waves").arg(e)));
    }

    void adjointAndFiniteDifferencesAgree()
    {
        ReconstructionRequest request = demoRequest(64, true, 3);
        request.analysis.computeUncertainty = false;
        const FitResult adjoint = reconstruct(request, {}, nullptr);
        request.gradient = GradientKind::FiniteDifference;
        const FitResult fd = reconstruct(request, {}, nullptr);
        QCOMPARE(fd.gradient, GradientKind::FiniteDifference);
        QVERIFY(fd.solver.costEvaluations > 5 * adjoint.solver.costEvaluations); // (P + 1) cost evaluations per gradient
        WFS_VERIFY_CLOSE(fd.solver.finalCost, adjoint.solver.finalCost, 1e-6, 0.0);
        for (size_t i = 0; i < adjoint.coefficients.size(); ++i)
            WFS_VERIFY_CLOSE(fd.coefficients[i].waves, adjoint.coefficients[i].waves, 0.0, 1e-4);
    }

    void coarseToFineStagesReachTheSameSolution()
    {
        ReconstructionRequest request = demoRequest(64, true, 4);
        request.analysis.computeUncertainty = false;
        const FitResult direct = reconstruct(request, {}, nullptr);
        request.stages = {2, 3, 4};
        request.start.clear(); // a start vector belongs to the first stage's problem
        int stagesSeen = 0;
        const FitResult staged = reconstruct(
            request, [&](const ProgressSnapshot& s) { stagesSeen = std::max(stagesSeen, s.stage + 1); }, nullptr);
        QCOMPARE(stagesSeen, 3);
        QCOMPARE(staged.coefficients.size(), direct.coefficients.size());
        for (size_t i = 0; i < direct.coefficients.size(); ++i)
            WFS_VERIFY_CLOSE(staged.coefficients[i].waves, direct.coefficients[i].waves, 0.0, 1e-3);
    }

    void cancellationKeepsTheLastGoodState()
    {
        ReconstructionRequest request = demoRequest(128, true, 6);
        request.solver.gradientTolerance = 0;
        request.solver.functionTolerance = 0;
        request.solver.parameterTolerance = 0;
        request.solver.maxIterations = 100000;
        ReconstructionEngine engine;
        engine.start(request);
        // Wait (without sleeping blindly) for a few iterations, then cancel.
        for (int i = 0; i < 6000; ++i) {
            const auto snap = engine.latest();
            if (snap && snap->iteration.iteration >= 3)
                break;
            QTest::qWait(5);
        }
        QVERIFY(engine.latest().has_value());
        engine.cancel();
        engine.wait();
        QVERIFY(!engine.isRunning());
        QVERIFY2(engine.error().empty(), engine.error().c_str());
        const auto result = engine.result();
        QVERIFY(result.has_value());
        QCOMPARE(result->solver.termination, Termination::Cancelled);
        QVERIFY(result->solver.finalCost < result->solver.initialCost);
        for (const CoefficientResult& c : result->coefficients) {
            QVERIFY(std::isfinite(c.waves));
            // The uncertainties' Hessian (2 P gradients) is not waited for after a cancel, and says so.
            QVERIFY(std::isnan(c.uncertaintyWaves));
        }
        QVERIFY(std::find(result->warnings.begin(), result->warnings.end(), "no uncertainties: the fit was cancelled before it converged")
                != result->warnings.end());
        QVERIFY(std::isfinite(result->rmsWaves));

        // The engine runs again after a cancel.
        ReconstructionRequest quick = demoRequest(64, true, 2);
        quick.analysis.computeUncertainty = false;
        engine.start(quick);
        engine.wait();
        QVERIFY(engine.result().has_value());
        QCOMPARE(engine.result()->solver.termination, Termination::Converged);
    }

    // Issue 42: Esc during a finite-difference fit at order 15 stopped it 39 s later, after the whole gradient.
    // The cancel flag is now checked between the P + 1 model evaluations of a gradient: counted in
    // evaluations, the fit stops at the one during which the flag was set.
    void cancelStopsAFiniteDifferenceGradientWithinOneEvaluation()
    {
        const ReconstructionRequest request = demoRequest(64, true, 6);
        EvaluatorOptions evaluatorOptions;
        evaluatorOptions.measurePlans = false;
        std::atomic<bool> cancel{false};
        const int parameters = int(request.start.size());
        QVERIFY(parameters > 20);
        // Mid-way through the third gradient (the solver's scale balancing takes the first).
        const int cancelAt = 2 * (parameters + 1) + parameters / 2;
        auto counting = std::make_unique<CancellingEvaluator>(
            makeEvaluator(BackendKind::Cpu, std::make_shared<const Problem>(request.spec), evaluatorOptions, GradientKind::Adjoint), cancel,
            cancelAt);
        CancellingEvaluator* counter = counting.get();
        auto fd = makeFiniteDifferenceEvaluator(std::move(counting));
        SolverOptions options;
        options.cancel = &cancel;
        const SolverSummary summary = minimise(*fd, request.start, options, {});
        QCOMPARE(summary.termination, Termination::Cancelled);
        QCOMPARE(counter->evaluations, cancelAt);
        QCOMPARE(int(summary.parameters.size()), parameters);
        for (double p : summary.parameters)
            QVERIFY(std::isfinite(p));

        // The flag belongs to that run: the evaluator used again without one computes whole gradients.
        cancel = false;
        std::vector<double> gradient(size_t(parameters), 0.0);
        QVERIFY(std::isfinite(fd->evaluate(request.start.data(), gradient.data())));
    }

    // SolverOptions::plateauDecrease: a fit stops once its cost falls by less than that over the window, says so, and
    // without it runs on to its tolerances.
    void plateauEndsAnExploratoryFit()
    {
        const ReconstructionRequest request = demoRequest(64, true, 4);
        auto evaluator =
            makeEvaluator(BackendKind::Cpu, std::make_shared<const Problem>(request.spec), EvaluatorOptions{}, GradientKind::Adjoint);
        SolverOptions options;
        const SolverSummary full = minimise(*evaluator, request.start, options, {});
        QVERIFY(!full.plateau);
        QVERIFY(full.iterations > 12);
        options.plateauDecrease = 1e30; // every window is a plateau: it stops as soon as the window is full
        options.plateauIterations = 4;
        int lastSeen = -1;
        const SolverSummary stopped = minimise(*evaluator, request.start, options, [&](const IterationSnapshot& s) {
            return lastSeen = s.iteration, CallbackResult::Continue;
        });
        QCOMPARE(stopped.termination, Termination::Converged);
        QVERIFY(stopped.plateau);
        QCOMPARE(stopped.iterations, 4);
        QCOMPARE(lastSeen, 4); // the callback saw the last iterate
        QVERIFY2(stopped.message.find("fell by less than") != std::string::npos, stopped.message.c_str());
        // A plateau of 1e-9 in a cost of order 1e4 is not met before the tolerances end the fit.
        options.plateauDecrease = 1e-9;
        QVERIFY(!minimise(*evaluator, request.start, options, {}).plateau);
        options.plateauIterations = 0;
        QCOMPARE(minimise(*evaluator, request.start, options, {}).termination, Termination::Failed); // refused
    }

    void singleImageWarnsAboutTheSignAmbiguity()
    {
        ReconstructionRequest request = demoRequest(64, true, 2);
        request.spec.planes.resize(1);
        request.spec.planes[0].diversity = {};
        request.start.clear();
        request.analysis.computeUncertainty = false;
        const FitResult r = reconstruct(request, {}, nullptr);
        bool warned = false;
        for (const std::string& w : r.warnings)
            warned = warned || w.find("sign of even aberrations") != std::string::npos;
        QVERIFY(warned);
    }

    void oofPresetConvergesFromTheTruth()
    {
        PresetOptions options;
        options.grid = 64;
        options.order = 4;
        PresetCase c = makePreset("oof", options);
        ReconstructionRequest request;
        request.spec = c.spec;
        request.start = c.start;
        request.solver = c.solver;
        request.evaluator.measurePlans = false;
        request.analysis.computeUncertainty = false;
        const FitResult r = reconstruct(request, {}, nullptr);
        QVERIFY2(r.solver.termination == Termination::Converged, r.solver.message.c_str());
        QVERIFY(r.solver.gradientMaxNorm <= 1e-8);
        QVERIFY(r.solver.finalCost < r.solver.initialCost);
    }
};

QTEST_GUILESS_MAIN(TestFit)
#include "tst_fit.moc"
