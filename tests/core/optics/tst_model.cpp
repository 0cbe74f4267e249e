// The adjoint gradient against central differences, for every parameter kind and objective, in
// float64 (tight) and float32 (looser); the pruned FFT layout against a plain model.
#include "ModelFixtures.h"

#include "engine/BackendFactory.h"
#include "engine/Presets.h"

#include <QScopeGuard>

#include <cmath>
#include <random>
#include <set>

using namespace wfs;

namespace {
std::shared_ptr<const Problem> richProblem(ObjectiveKind objective)
{
    return test::richProblem(objective, 32, 28, 4, 7);
}
} // namespace

class TestModel : public QObject {
    Q_OBJECT

private slots:
    void adjointMatchesCentralDifferences_data()
    {
        QTest::addColumn<int>("objective");
        QTest::addColumn<int>("precision");
        for (auto [name, o] : {std::pair{"least-squares", ObjectiveKind::LeastSquares}, std::pair{"poisson", ObjectiveKind::Poisson},
                               std::pair{"weighted", ObjectiveKind::WeightedLeastSquares}}) {
            QTest::newRow(QByteArray(name) + " double") << int(o) << int(Precision::Double);
            QTest::newRow(QByteArray(name) + " float") << int(o) << int(Precision::Float);
        }
    }

    void adjointMatchesCentralDifferences()
    {
        QFETCH(int, objective);
        QFETCH(int, precision);
        auto problem = richProblem(ObjectiveKind(objective));
        // Every parameter kind takes part.
        std::set<ParameterKind> kinds;
        for (const ParameterInfo& info : problem->parameters())
            kinds.insert(info.kind);
        QCOMPARE(int(kinds.size()), 9);

        EvaluatorOptions options;
        options.precision = Precision(precision);
        options.measurePlans = false;
        auto evaluator = makeEvaluator(BackendKind::Cpu, problem, options, GradientKind::Adjoint);
        // A point away from the data's truth, so that no gradient component vanishes by symmetry.
        std::vector<double> x = problem->initialParameters();
        for (size_t i = 0; i < x.size(); ++i)
            x[i] += 0.02 * std::sin(1.0 + double(i)) * problem->parameterScales()[i];
        // Central differences always in float64, on a float64 model.
        EvaluatorOptions exact;
        exact.measurePlans = false;
        auto reference = makeEvaluator(BackendKind::Cpu, problem, exact, GradientKind::Adjoint);
        std::vector<size_t> all(x.size());
        for (size_t i = 0; i < all.size(); ++i)
            all[i] = i;
        const QString mismatch =
            test::adjointMismatch(*problem, *evaluator, *reference, x, all, Precision(precision) == Precision::Double ? 1e-6 : 2e-3);
        if (!mismatch.isEmpty())
            QFAIL(qPrintable(mismatch));
    }

    void finiteDifferenceGradientApproximatesAdjoint()
    {
        auto problem = richProblem(ObjectiveKind::LeastSquares);
        EvaluatorOptions options;
        options.measurePlans = false;
        auto adjoint = makeEvaluator(BackendKind::Cpu, problem, options, GradientKind::Adjoint);
        auto fd = makeEvaluator(BackendKind::Cpu, problem, options, GradientKind::FiniteDifference);
        const std::vector<double> x = problem->initialParameters();
        std::vector<double> ga(x.size()), gf(x.size());
        const double ca = adjoint->evaluate(x.data(), ga.data());
        const double cf = fd->evaluate(x.data(), gf.data());
        QCOMPARE(ca, cf);
        double largest = 0;
        for (size_t i = 0; i < x.size(); ++i)
            largest = std::max(largest, std::abs(ga[i]) * problem->parameterScales()[i]);
        for (size_t i = 0; i < x.size(); ++i)
            WFS_VERIFY_CLOSE(gf[i] * problem->parameterScales()[i], ga[i] * problem->parameterScales()[i], 1e-3, 1e-4 * largest);
    }

    void threadsGiveTheSameResult()
    {
        auto problem = richProblem(ObjectiveKind::Poisson);
        EvaluatorOptions one, two;
        one.measurePlans = two.measurePlans = false;
        two.threads = 2;
        auto a = makeEvaluator(BackendKind::Cpu, problem, one, GradientKind::Adjoint);
        auto b = makeEvaluator(BackendKind::Cpu, problem, two, GradientKind::Adjoint);
        const std::vector<double> x = problem->initialParameters();
        std::vector<double> ga(x.size()), gb(x.size());
        WFS_VERIFY_CLOSE(a->evaluate(x.data(), ga.data()), b->evaluate(x.data(), gb.data()), 1e-12, 0.0);
        for (size_t i = 0; i < x.size(); ++i)
            WFS_VERIFY_CLOSE(ga[i], gb[i], 1e-9, 1e-9 * std::abs(ga[0]));
    }

    // Three threads against one on the unpruned path (the plain transform, WFS_FFT_PRUNING=off, and the general image
    // formation: a spectrum), where the model's element-wise passes split the pupil's, the grid's and the data's pixels
    // in three chunks, none of whose counts is a multiple of 3: a chunk rule that drops the remainder leaves pixels
    // out of the model and the cost. Two threads (and the pruned transform) never see a remainder here.
    void threeThreadsWithARemainder_data()
    {
        QTest::addColumn<bool>("general");
        QTest::newRow("plain, unpruned") << false;
        QTest::newRow("general formation") << true;
    }

    void threeThreadsWithARemainder()
    {
        QFETCH(bool, general);
        const QByteArray pruning = qgetenv("WFS_FFT_PRUNING");
        qputenv("WFS_FFT_PRUNING", "off");
        const auto restore = qScopeGuard([&] {
            if (pruning.isNull())
                qunsetenv("WFS_FFT_PRUNING");
            else
                qputenv("WFS_FFT_PRUNING", pruning);
        });
        ProblemSpec s = test::richSpec(ObjectiveKind::Poisson, 32, 4);
        if (general) {
            s.spectrum.bandwidth = 40e-9;
            s.spectrum.samples = 3;
        }
        auto problem = test::richProblemFrom(s, 28, 7);
        QVERIFY(problem->pupilPixelCount() % 3 != 0);
        QVERIFY(problem->gridSize() * problem->gridSize() % 3 != 0);
        QVERIFY(28 * 28 % 3 != 0);
        EvaluatorOptions one, three;
        one.measurePlans = three.measurePlans = false;
        three.threads = 3;
        auto a = makeEvaluator(BackendKind::Cpu, problem, one, GradientKind::Adjoint);
        auto b = makeEvaluator(BackendKind::Cpu, problem, three, GradientKind::Adjoint);
        std::vector<double> x = problem->initialParameters();
        for (size_t i = 0; i < x.size(); ++i)
            x[i] += 0.02 * std::sin(1.0 + double(i)) * problem->parameterScales()[i];
        std::vector<double> ga(x.size()), gb(x.size());
        // Sums over chunks added in another order: equal to rounding (1e-12 of the cost; a dropped pixel is ~1e-4).
        WFS_VERIFY_CLOSE(a->evaluate(x.data(), ga.data()), b->evaluate(x.data(), gb.data()), 1e-12, 0.0);
        double largest = 0.0;
        for (double g : ga)
            largest = std::max(largest, std::abs(g));
        for (size_t i = 0; i < x.size(); ++i)
            WFS_VERIFY_CLOSE(ga[i], gb[i], 1e-9, 1e-11 * largest);
        const auto ia = a->modelImages(x.data()), ib = b->modelImages(x.data());
        QCOMPARE(ia.size(), ib.size());
        for (size_t k = 0; k < ia.size(); ++k) {
            QCOMPARE(ia[k].size(), ib[k].size());
            double peak = 0.0, worst = 0.0;
            for (size_t i = 0; i < ia[k].size(); ++i) {
                peak = std::max(peak, std::abs(ia[k][i]));
                worst = std::max(worst, std::abs(ia[k][i] - ib[k][i]));
            }
            QVERIFY2(worst <= 1e-12 * peak, qPrintable(QStringLiteral("plane %1: %2 of the peak").arg(k).arg(worst / peak)));
        }
    }

    void gpuBackendSaysWhyNot()
    {
        const BackendStatus gpu = backendStatus(BackendKind::Gpu);
        if (gpu.available)
            QSKIP("a GPU backend is available here");
        QVERIFY(QString::fromStdString(gpu.reason).contains(QStringLiteral("GPU")));
        // A CUDA build's backend module is found and loads (the reason is then the CUDA runtime's); a build without
        // CUDA says so.
        const GpuModuleState module = gpuModuleState();
        QVERIFY2(module.loadedFrom.empty() == !module.error.empty(), module.error.c_str());
        QVERIFY2(module.error.find("not found") == std::string::npos && module.error.find("could not be loaded") == std::string::npos,
                 module.error.c_str());
        QVERIFY2(module.loadedFrom.empty() || gpu.reason.find("CUDA not built") == std::string::npos, gpu.reason.c_str());
        auto problem = richProblem(ObjectiveKind::Poisson);
        QVERIFY_THROWS_EXCEPTION(BackendUnavailable, makeEvaluator(BackendKind::Gpu, problem, {}, GradientKind::Adjoint));
    }
};

QTEST_APPLESS_MAIN(TestModel)
#include "tst_model.moc"
