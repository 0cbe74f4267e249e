// The CPU model's hot kernels (core/simd) built for AVX2 + FMA against the baseline build: the cost, the
// exact gradient and the model images agree to 1e-12 relative in float64 on the OOF preset (least squares)
// and the demo preset (Poisson), at the start and at a point away from it. Also: the level the
// evaluator reports is the level it runs, and WFS_SIMD=baseline (the registration *_simd_baseline of the
// model suites) selects the baseline.
#include "engine/BackendFactory.h"
#include "engine/Presets.h"
#include "simd/SimdLevel.h"

#include <QtTest>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>

using namespace wfs;

namespace {

struct Evaluation {
    double cost = 0.0;
    std::vector<double> gradient;
    std::vector<std::vector<double>> images;
    std::string simd;
};

Evaluation evaluateAt(std::shared_ptr<const Problem> problem, const std::vector<double>& x, simd::Level level)
{
    simd::forceLevel(level);
    EvaluatorOptions options;
    options.measurePlans = false;
    auto evaluator = makeEvaluator(BackendKind::Cpu, problem, options, GradientKind::Adjoint);
    simd::forceLevel(std::nullopt);
    Evaluation e;
    e.gradient.assign(x.size(), 0.0);
    e.cost = evaluator->evaluate(x.data(), e.gradient.data());
    e.images = evaluator->modelImages(x.data());
    e.simd = evaluator->info().simd;
    return e;
}

double maxAbs(const std::vector<double>& v)
{
    double m = 0.0;
    for (double x : v)
        m = std::max(m, std::abs(x));
    return m;
}

} // namespace

class TestModelSimd : public QObject {
    Q_OBJECT

private slots:
    void reportedLevel()
    {
        const char* env = std::getenv("WFS_SIMD");
        if (env && std::strcmp(env, "baseline") == 0)
            QCOMPARE(simd::active(), simd::Level::Baseline);
        else
            QCOMPARE(simd::active(), simd::supported());
        PresetOptions po;
        po.grid = 64;
        po.order = 4;
        const PresetCase c = makePreset("oof", po);
        auto problem = std::make_shared<const Problem>(c.spec);
        QCOMPARE(evaluateAt(problem, c.start, simd::Level::Baseline).simd, std::string("baseline"));
        QCOMPARE(evaluateAt(problem, c.start, simd::Level::Avx2Fma).simd, std::string(simd::name(simd::supported())));
    }

    void bothBuildsAgree_data()
    {
        QTest::addColumn<QString>("preset");
        QTest::addColumn<int>("grid");
        QTest::addColumn<int>("order");
        QTest::newRow("oof 128/8") << QStringLiteral("oof") << 128 << 8;
        QTest::newRow("demo 64/4 poisson") << QStringLiteral("demo") << 64 << 4;
    }

    void bothBuildsAgree()
    {
        if (simd::supported() != simd::Level::Avx2Fma)
            QSKIP("this CPU or build has no AVX2 + FMA kernels: only the baseline runs");
        QFETCH(QString, preset);
        QFETCH(int, grid);
        QFETCH(int, order);
        PresetOptions po;
        po.grid = grid;
        po.order = order;
        const PresetCase c = makePreset(preset.toStdString(), po);
        auto problem = std::make_shared<const Problem>(c.spec);
        std::mt19937_64 generator(15);
        std::normal_distribution<double> normal(0.0, 0.05);
        std::vector<double> away = c.start;
        for (double& v : away)
            v += normal(generator) * std::max(1.0, std::abs(v));
        for (const auto& x : {c.start, away}) {
            const Evaluation a = evaluateAt(problem, x, simd::Level::Avx2Fma);
            const Evaluation b = evaluateAt(problem, x, simd::Level::Baseline);
            QCOMPARE(a.simd, std::string("avx2-fma"));
            QCOMPARE(b.simd, std::string("baseline"));
            QVERIFY(std::isfinite(b.cost) && b.cost > 0.0);
            QVERIFY2(std::abs(a.cost - b.cost) <= 1e-12 * std::abs(b.cost),
                     qPrintable(QStringLiteral("cost %1 vs %2").arg(a.cost, 0, 'g', 17).arg(b.cost, 0, 'g', 17)));
            // Relative to the gradient's max-norm: a component near zero has no relative accuracy of its own.
            const double scale = maxAbs(b.gradient);
            QVERIFY(scale > 0.0);
            for (size_t i = 0; i < b.gradient.size(); ++i)
                QVERIFY2(std::abs(a.gradient[i] - b.gradient[i]) <= 1e-12 * scale,
                         qPrintable(QStringLiteral("gradient %1: %2 vs %3 (max-norm %4)")
                                        .arg(i)
                                        .arg(a.gradient[i], 0, 'g', 17)
                                        .arg(b.gradient[i], 0, 'g', 17)
                                        .arg(scale)));
            QCOMPARE(a.images.size(), b.images.size());
            for (size_t k = 0; k < b.images.size(); ++k) {
                const double peak = maxAbs(b.images[k]);
                QVERIFY(peak > 0.0);
                for (size_t i = 0; i < b.images[k].size(); ++i)
                    QVERIFY(std::abs(a.images[k][i] - b.images[k][i]) <= 1e-12 * peak);
            }
        }
    }
};

QTEST_GUILESS_MAIN(TestModelSimd)
#include "tst_modelsimd.moc"
