// The sampling fit (--fit-sampling, ReconstructionRequest::fitSampling): the profile of whole fits over the
// aperture scale and the parabola through its lowest points, on data simulated at a known scale; and the aperture
// scale's own refusals.
#include "ModelFixtures.h"

#include "engine/ReconstructionEngine.h"
#include "io/ResultJson.h"

#include <algorithm>
#include <random>

using namespace wfs;

class TestSamplingFit : public QObject {
    Q_OBJECT

private slots:
    // --fit-sampling: data simulated at 1.07 times the metadata's NA (so a smaller Q and a stronger high-NA defocus) are
    // fitted from the metadata's NA. The profile walks in 4 % steps; the last fit is at the vertex of the parabola
    // through the lowest grid point and its neighbours, which this test computes itself (Numerical Recipes' form of
    // the vertex, 1e-9: the same three numbers), and that is where the truth is found: within 0.005, a quarter of half
    // a step (so a vertex on the wrong side of the lowest point, or no vertex at all, fails), the pupil edge's pixels
    // leaving about 0.001 on this data. The error is finite, and the result's Q and export JSON follow the scale.
    void samplingFitFindsTheAperture()
    {
        ProblemSpec s = test::richSpec(ObjectiveKind::WeightedLeastSquares, 32, 3);
        const double trueScale = 1.07;
        const ProblemSpec truthSpec = withApertureScale(s, trueScale);
        const Problem shape(truthSpec);
        std::vector<double> truth = shape.initialParameters();
        for (size_t i = 0; i + 1 < shape.modes().size(); ++i)
            truth[i] = 0.2 * std::cos(1.3 * double(i));
        std::mt19937_64 rng(5);
        const auto images = simulateImages(truthSpec, truth, 28, 28, {NoiseModel::PhotonAndRead, 3.0}, &rng);
        for (size_t k = 0; k < images.size(); ++k)
            s.planes[k].data = images[k];
        ReconstructionRequest request;
        request.spec = s;
        request.evaluator.measurePlans = false;
        request.analysis.computeUncertainty = false;
        request.fitSampling = true;
        // The live history runs on across the profile's fits (iterations and seconds never go back).
        std::vector<int> iterations;
        std::vector<double> seconds;
        const FitResult result = reconstruct(
            request,
            [&](const ProgressSnapshot& snap) {
                iterations.push_back(snap.iteration.iteration);
                seconds.push_back(snap.iteration.elapsedSeconds);
            },
            nullptr);
        QVERIFY(std::is_sorted(iterations.begin(), iterations.end()) && std::is_sorted(seconds.begin(), seconds.end()));
        QVERIFY(!iterations.empty() && iterations.back() <= result.solver.iterations);
        QVERIFY2(result.samplingFit.has_value(), "no sampling fit in the result");
        const SamplingFit& fit = *result.samplingFit;
        qInfo("aperture scale %.4f +/- %.4f (truth %.2f), %zu profile fits, Q %.4f", fit.scale, fit.scaleSigma, trueScale,
              fit.scales.size(), result.samplingQ);
        // The profile's grid points (all but the last fit) and the vertex of the parabola through the lowest and its neighbours.
        QVERIFY(fit.scales.size() >= 4);
        std::vector<std::pair<double, double>> grid;
        for (size_t i = 0; i + 1 < fit.scales.size(); ++i)
            grid.emplace_back(fit.scales[i], fit.costs[i]);
        std::sort(grid.begin(), grid.end());
        const auto lowest = std::min_element(grid.begin(), grid.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
        QVERIFY(lowest != grid.begin() && lowest + 1 != grid.end());
        const auto [a, fa] = *(lowest - 1);
        const auto [b, fb] = *lowest;
        const auto [c, fc] = *(lowest + 1);
        const double vertex =
            b - 0.5 * ((b - a) * (b - a) * (fb - fc) - (b - c) * (b - c) * (fb - fa)) / ((b - a) * (fb - fc) - (b - c) * (fb - fa));
        qInfo("profile minimum at %.2f, parabola vertex %.5f, last fit at %.5f", b, vertex, fit.scales.back());
        WFS_VERIFY_CLOSE(fit.scales.back(), vertex, 1e-9, 0.0);
        QVERIFY2(std::abs(fit.scale - trueScale) <= 0.005, qPrintable(QString::number(fit.scale)));
        QVERIFY(!fit.atLimit);
        QVERIFY(std::isfinite(fit.scaleSigma) && fit.scaleSigma > 0.0);
        QVERIFY(fit.scales.size() >= 3 && fit.scales.size() == fit.costs.size());
        const double metadataQ = s.grid.size * s.grid.spacing / 2.0;
        QVERIFY2(test::closeTo(result.samplingQ, metadataQ / fit.scale, 1e-9), qPrintable(QString::number(result.samplingQ)));
        QVERIFY(test::closeTo(fit.numericalAperture, s.planes[1].diversity.numericalAperture * fit.scale, 1e-12));
        // Saved and read back (sessions restore the result at this scale).
        const std::optional<SamplingFit> back = samplingFitFromJson(resultToJson(result));
        QVERIFY(back.has_value());
        QCOMPARE(back->scale, fit.scale);
        QCOMPARE(back->scales.size(), fit.scales.size());
        QVERIFY(!samplingFitFromJson(resultToJson(test::smallDemoResult())).has_value());
    }
};

QTEST_GUILESS_MAIN(TestSamplingFit)
#include "tst_samplingfit.moc"
