// The composite fits (engine/CompositeFits.h): one iteration limit over a whole composite run (a sampling profile, the
// smoothness weight's search, a continuation, coarse-to-fine stages), which then ends as not converged with the best
// result so far; and the sampling profile of a zonal pupil run on the Zernike model, the zonal maps fitted once.
#include "ModelFixtures.h"

#include "engine/Presets.h"
#include "engine/ReconstructionEngine.h"
#include "optics/CpuModel.h"

#include <algorithm>

using namespace wfs;

namespace {

ReconstructionRequest pupilPresetRequest()
{
    return test::presetRequest(makePreset("pupil", PresetOptions{}));
}

bool anyWarningHas(const FitResult& result, const std::string& text)
{
    return std::any_of(result.warnings.begin(), result.warnings.end(),
                       [&](const std::string& w) { return w.find(text) != std::string::npos; });
}

} // namespace

class TestCompositeFits : public QObject {
    Q_OBJECT

private slots:
    // --max-iterations bounds the whole run, however many fits it is made of: the live history (which counts on
    // across the fits) never passes the limit, and the result says it is not converged. Before, the limit bounded
    // each fit, and a profile of searches of continuations ran past 17 000 iterations.
    void iterationLimitBoundsTheWholeRun_data()
    {
        QTest::addColumn<QString>("run");
        QTest::addColumn<int>("limit");
        QTest::newRow("profile ends in its first fit") << "profile" << 10;
        QTest::newRow("profile and search") << "profile" << 40;
        QTest::newRow("profile ends in the final fit") << "profile" << 150;
        QTest::newRow("search") << "search" << 40;
        QTest::newRow("continuation") << "continuation" << 30;
        QTest::newRow("stages") << "stages" << 25;
    }
    void iterationLimitBoundsTheWholeRun()
    {
        QFETCH(QString, run);
        QFETCH(int, limit);
        ReconstructionRequest request = pupilPresetRequest();
        request.solver.maxIterations = limit;
        if (run == "profile")
            request.fitSampling = request.autoRegularization = true;
        else if (run == "search")
            request.autoRegularization = true;
        else if (run == "continuation")
            request.spec.regularization = 0.1; // below the ladder's middle, from flat maps: through 10 and 1 first
        else {
            request.stages = {2, 3, request.spec.basis.maxOrder};
            request.start.clear(); // the preset's start has the last stage's parameters
        }
        int lastIteration = 0;
        const FitResult result = reconstruct(
            request, [&](const ProgressSnapshot& snap) { lastIteration = std::max(lastIteration, snap.iteration.iteration); }, nullptr);
        qInfo("%s: %d iterations seen, termination %s", qPrintable(run), lastIteration, terminationName(result.solver.termination));
        QVERIFY2(lastIteration <= limit, qPrintable(QString::number(lastIteration)));
        QVERIFY(lastIteration > limit / 2); // it ran, and was stopped by the limit rather than before it
        QCOMPARE(result.solver.termination, Termination::MaxIterations);
        QVERIFY(result.solver.iterations <= limit);
        QVERIFY2(anyWarningHas(result, "iteration limit"), "no warning says the limit ended the run");
        QVERIFY(result.solver.finalCost < result.solver.initialCost || run == "profile"); // the best so far, not the start
        QVERIFY(std::isfinite(result.solver.finalCost));
        // Stopped at an early stage, or in the profile's first fit (of the Zernike model, at scale 1), the result is still
        // the request's model: it saves and restores as the run's.
        if (run == "stages" || limit == 10)
            QCOMPARE(int(result.solver.parameters.size()), Problem(request.spec).parameterCount());
    }

    // A zonal pupil's sampling profile runs on the Zernike model (a few dozen iterations a point, not a zonal fit at
    // each) and the zonal maps are fitted once at the chosen scale, by the weight search. On the pupil preset (simulated
    // at its own sampling, so the truth is scale 1) the run converges, finds the scale, and ends at a cost no higher
    // than the zonal model's own at the profile's neighbouring points (each a zonal fit from this result's Zernike terms and flat maps): the
    // Zernike model's minimum is the zonal model's too, to the profile's resolution.
    void zonalPupilIsProfiledOnTheZernikeModel()
    {
        ReconstructionRequest request = pupilPresetRequest();
        request.fitSampling = request.autoRegularization = true;
        const FitResult result = reconstruct(request, {}, nullptr);
        QVERIFY(result.samplingFit.has_value());
        const SamplingFit& fit = *result.samplingFit;
        qInfo("scale %.4f +/- %.4f, %zu profile fits, %d iterations in all, %s; %s", fit.scale, fit.scaleSigma, fit.scales.size(),
              result.solver.iterations, terminationName(result.solver.termination), result.regularizationChoice.c_str());
        QVERIFY(fit.zernikeProfile);
        QCOMPARE(result.solver.termination, Termination::Converged);
        QVERIFY2(std::abs(fit.scale - 1.0) <= 0.01, qPrintable(QString::number(fit.scale)));
        QVERIFY(std::isfinite(fit.scaleSigma) && fit.scaleSigma > 0.0);
        QVERIFY(!result.regularizationChoice.empty()); // the final fit was the weight's search
        // The summary counts the whole run: the profile's fits and every fit of the search.
        const size_t counted = result.regularizationChoice.find(" iterations, ");
        QVERIFY(counted != std::string::npos);
        const int searchIterations = std::stoi(result.regularizationChoice.substr(result.regularizationChoice.rfind(' ', counted - 1) + 1));
        QVERIFY2(result.solver.iterations > searchIterations, qPrintable(QString::number(result.solver.iterations)));
        const Problem fitted(withApertureScale(request.spec, fit.scale));
        QCOMPARE(int(result.solver.parameters.size()), fitted.parameterCount()); // the zonal model's parameters
        for (double neighbour : {fit.scale - 0.04, fit.scale + 0.04}) {
            ReconstructionRequest at = request;
            at.fitSampling = at.autoRegularization = false;
            at.spec = withApertureScale(request.spec, neighbour);
            at.spec.regularization = result.regularization;
            seedSpec(at.spec, fitted, result.solver.parameters);
            at.spec.zonalPhaseStart.clear(); // per pupil pixel of another sampling
            at.spec.zonalAmplitudeStart.clear();
            at.start.clear();
            const FitResult other = reconstruct(at, {}, nullptr);
            qInfo("zonal fit at scale %.4f: cost %.9g (chosen %.9g)", neighbour, other.solver.finalCost, result.solver.finalCost);
            QVERIFY(result.solver.finalCost <= other.solver.finalCost * (1.0 + 1e-6));
        }
    }

    // A fit seeded from another whose Gaussian illumination was fitted starts at the same model: flux is counted under
    // the start illumination, so seeding the fitted width (the sampling profile's apodisation) rescales every plane's
    // flux to keep its photons. Before, the profile's next fit started with each flux off by that ratio.
    void seedingKeepsTheModel()
    {
        ProblemSpec spec = richProblemSpec(ObjectiveKind::Poisson, 64, 3);
        const auto previous = std::make_shared<const Problem>(spec);
        std::vector<double> fitted = previous->initialParameters();
        ModelParameters p = previous->unpack(fitted.data());
        p.sigma *= 1.4;
        p.centreX += 0.05;
        previous->pack(p, fitted.data());
        ProblemSpec next = spec;
        seedSpec(next, *previous, fitted);
        const auto seeded = std::make_shared<const Problem>(next);
        EvaluatorOptions options;
        options.measurePlans = false;
        const auto before = makeCpuEvaluator(previous, options)->modelImages(fitted.data());
        const auto after = makeCpuEvaluator(seeded, options)->modelImages(seeded->initialParameters().data());
        QCOMPARE(after.size(), before.size());
        for (size_t k = 0; k < before.size(); ++k)
            for (size_t i = 0; i < before[k].size(); i += 37)
                WFS_VERIFY_CLOSE(after[k][i], before[k][i], 1e-9, 1e-9);
    }

    // The weight's search stops its exploratory fits at the precision its choice needs (a plateau), then fits the chosen
    // weight on to the request's own stopping rules, with or without uncertainties: the result is the same minimum as
    // that weight fitted directly (cost within 1e-6 relative, coefficients within their uncertainties).
    void searchFitsTheChosenWeightToConvergence()
    {
        ReconstructionRequest request = pupilPresetRequest();
        request.autoRegularization = true;
        request.analysis.computeUncertainty = false; // before, the chosen fit was then not fitted again
        const FitResult searched = reconstruct(request, {}, nullptr);
        QCOMPARE(searched.solver.termination, Termination::Converged);
        QVERIFY2(!searched.solver.plateau, searched.solver.message.c_str()); // ended by the tolerances
        ReconstructionRequest direct = pupilPresetRequest();
        direct.spec.regularization = searched.regularization;
        const FitResult fitted = reconstruct(direct, {}, nullptr);
        qInfo("weight %g: searched cost %.9g in %d iterations (the whole search), direct %.9g in %d", searched.regularization,
              searched.solver.finalCost, searched.solver.iterations, fitted.solver.finalCost, fitted.solver.iterations);
        QVERIFY(std::abs(searched.solver.finalCost - fitted.solver.finalCost) <= 1e-6 * fitted.solver.finalCost);
        for (size_t j = 0; j < fitted.coefficients.size(); ++j) {
            // (Tip, tilt and the terms a zonal map shares have no uncertainty of their own: NaN. Then 1e-4 wave.)
            const double sigma = fitted.coefficients[j].uncertaintyWaves;
            QVERIFY2(std::abs(searched.coefficients[j].waves - fitted.coefficients[j].waves) <= (sigma > 1e-4 ? sigma : 1e-4),
                     qPrintable(QStringLiteral("term %1: %2 against %3 +/- %4")
                                    .arg(fitted.coefficients[j].index)
                                    .arg(searched.coefficients[j].waves)
                                    .arg(fitted.coefficients[j].waves)
                                    .arg(sigma)));
        }
    }
};

QTEST_GUILESS_MAIN(TestCompositeFits)
#include "tst_compositefits.moc"
