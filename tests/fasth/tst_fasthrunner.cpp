// The CPU benchmark runner: every method and pass computes what the sequential reference computes (so
// the benchmark's max_abs_error column means something), including Eigen's HouseholderSequence on the
// LAPACK-layout reflectors, dense GEMM, LU solve and LU log-determinant.
#include "fasth/HouseholderRunner.h"

#include <QtTest>

using namespace wfs;
using namespace wfs::fasth;

class TestFasthRunner : public QObject {
    Q_OBJECT
private slots:
    void namesRoundTrip();
    void nominalFlopCounts();
    void methodsMatchReference_data();
    void methodsMatchReference();
    void lapackDataIsConsistent();
    void unsupportedCombinations();
    void gaussianLayout();
    void effectiveBlocks();
};

void TestFasthRunner::namesRoundTrip()
{
    for (BenchMethod method : allMethods())
        QCOMPARE(methodFromName(methodName(method)), std::optional<BenchMethod>(method));
    QCOMPARE(methodFromName("fasth"), std::optional<BenchMethod>(BenchMethod::FastH));
    QCOMPARE(methodFromName("ut"), std::optional<BenchMethod>(BenchMethod::CompactWY));
    QVERIFY(!methodFromName("householder").has_value());
    for (Pass pass : {Pass::Forward, Pass::Backward, Pass::Both})
        QCOMPARE(passFromName(passName(pass)), std::optional<Pass>(pass));
    QCOMPARE(precisionFromName("float32"), std::optional<Precision>(Precision::Float));
    QCOMPARE(precisionFromName("double"), std::optional<Precision>(Precision::Double));
}

void TestFasthRunner::nominalFlopCounts()
{
    QCOMPARE(nominalFlops(BenchMethod::FastH, Pass::Forward, 1024, 1024, 32), 4.0 * 1024 * 1024 * 32);
    QCOMPARE(nominalFlops(BenchMethod::Sequential, Pass::Backward, 100, 50, 8), 12.0 * 100 * 50 * 8);
    QCOMPARE(nominalFlops(BenchMethod::Dense, Pass::Both, 100, 50, 8), 16.0 * 100 * 50 * 8);
}

void TestFasthRunner::methodsMatchReference_data()
{
    QTest::addColumn<int>("d");
    QTest::addColumn<int>("k");
    QTest::addColumn<int>("m");
    QTest::addColumn<Precision>("precision");
    // k >= 96 makes Eigen's HouseholderSequence use its blocked path with 48 reflectors per block.
    QTest::newRow("double d=100 k=100 m=8") << 100 << 100 << 8 << Precision::Double;
    QTest::newRow("double d=130 k=97 m=3") << 130 << 97 << 3 << Precision::Double;
    QTest::newRow("double d=40 k=40 m=1") << 40 << 40 << 1 << Precision::Double;
    QTest::newRow("float d=100 k=100 m=8") << 100 << 100 << 8 << Precision::Float;
}

void TestFasthRunner::methodsMatchReference()
{
    QFETCH(int, d);
    QFETCH(int, k);
    QFETCH(int, m);
    QFETCH(Precision, precision);
    const auto data = BenchData::generate(d, k, m, 42, true);
    auto runner = makeCpuRunner();
    QCOMPARE(QString::fromStdString(runner->backend()), QStringLiteral("cpu"));
    QVERIFY(!runner->device().empty());
    BenchConfig config;
    config.precision = precision;
    config.blockSize = 12;
    config.threads = 2;
    runner->setProblem(data, config);
    const double tolerance = precision == Precision::Double ? 1e-11 : 2e-4;
    for (BenchMethod method : allMethods()) {
        for (Pass pass : {Pass::Forward, Pass::Backward, Pass::Both}) {
            if (!runner->supports(method, pass))
                continue;
            runner->prepare(method, pass);
            const double ms = runner->run(method, pass);
            QVERIFY(ms >= 0.0);
            const BenchResult result = runner->result();
            const BenchResult reference = runner->reference(method, pass);
            const QString what = QStringLiteral("%1 %2").arg(QLatin1String(methodName(method)), QLatin1String(passName(pass)));
            QVERIFY2(result.output.rows() == reference.output.rows() && result.output.cols() == reference.output.cols(),
                     qPrintable(what + QStringLiteral(": output shape")));
            const double scale = std::max(1.0, reference.output.cwiseAbs().maxCoeff());
            const double error = (result.output - reference.output).cwiseAbs().maxCoeff() / scale;
            QVERIFY2(error < tolerance, qPrintable(what + QStringLiteral(": error %1").arg(error)));
            const bool hasGradients =
                pass != Pass::Forward && !isUseCase(method) && method != BenchMethod::Library && method != BenchMethod::Dense;
            QCOMPARE(result.gradV.size() > 0, hasGradients);
            if (hasGradients) {
                const double gradScale = std::max(1.0, reference.gradV.cwiseAbs().maxCoeff());
                const double gradError = (result.gradV - reference.gradV).cwiseAbs().maxCoeff() / gradScale;
                QVERIFY2(gradError < tolerance, qPrintable(what + QStringLiteral(": dL/dV error %1").arg(gradError)));
            }
        }
    }
}

void TestFasthRunner::lapackDataIsConsistent()
{
    const auto data = BenchData::generate(50, 50, 4, 7, false);
    QCOMPARE(data->reflectors.rows(), 50);
    QCOMPARE(data->reflectors.cols(), 50);
    for (int i = 0; i < 50; ++i) {
        QCOMPARE(data->reflectors(i, i), 1.0);
        QVERIFY(data->reflectors.col(i).head(i).isZero(0.0));
        QVERIFY(std::abs(data->tau(i) - 2.0 / data->reflectors.col(i).squaredNorm()) < 1e-15);
    }
    QCOMPARE(data->sigma.size(), 0);
    // Same seed, same numbers.
    QCOMPARE(BenchData::generate(50, 50, 4, 7, false)->x, data->x);
    // Another batch size keeps the reflectors and draws a new batch.
    const auto wider = data->withBatch(9, 7);
    QCOMPARE(wider->m, 9);
    QCOMPARE(wider->x.cols(), 9);
    QCOMPARE(wider->outputGradient.cols(), 9);
    QCOMPARE(wider->reflectors, data->reflectors);
    QCOMPARE(wider->tau, data->tau);
    QCOMPARE(data->withBatch(9, 7)->x, wider->x);
}

void TestFasthRunner::unsupportedCombinations()
{
    auto runner = makeCpuRunner();
    std::string why;
    QVERIFY(!runner->supports(BenchMethod::SequentialFused, Pass::Forward, &why));
    QVERIFY(!why.empty());
    QVERIFY(!runner->supports(BenchMethod::LuSolve, Pass::Backward, &why));
    QVERIFY(runner->supports(BenchMethod::LuSolve, Pass::Forward, &why));
    QVERIFY_THROWS_EXCEPTION(std::logic_error, runner->run(BenchMethod::FastH, Pass::Forward));
    BenchConfig config;
    config.threads = 0;
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, runner->setProblem(BenchData::generate(8, 8, 1, 1, false), config));
}

void TestFasthRunner::gaussianLayout()
{
    const auto data = BenchData::generate(60, 50, 3, 9, false, false);
    QVERIFY(!data->lapackLayout);
    QVERIFY(data->reflectors(0, 49) != 0.0); // no leading zeros
    auto runner = makeCpuRunner();
    BenchConfig config;
    config.blockSize = 7;
    config.threads = 2;
    runner->setProblem(data, config);
    std::string why;
    QVERIFY(!runner->supports(BenchMethod::Library, Pass::Forward, &why));
    QVERIFY(why.find("LAPACK") != std::string::npos);
    for (BenchMethod method : {BenchMethod::FastH, BenchMethod::CompactWY, BenchMethod::TreeMerge, BenchMethod::Dense}) {
        runner->prepare(method, Pass::Both);
        runner->run(method, Pass::Both);
        const BenchResult result = runner->result();
        const BenchResult reference = runner->reference(method, Pass::Both);
        QVERIFY((result.output - reference.output).cwiseAbs().maxCoeff() < 1e-11);
    }
}

void TestFasthRunner::effectiveBlocks()
{
    auto runner = makeCpuRunner();
    BenchConfig config;
    config.blockSize = 16;
    config.treeLevels = 2;
    config.threads = 1;
    runner->setProblem(BenchData::generate(200, 200, 4, 1, false), config);
    QCOMPARE(runner->effectiveBlock(BenchMethod::FastH), 16);
    QCOMPARE(runner->effectiveBlock(BenchMethod::TreeMerge), 64);
    QCOMPARE(runner->effectiveBlock(BenchMethod::Library), 48);
    QCOMPARE(runner->effectiveBlock(BenchMethod::Sequential), 1);
    QCOMPARE(runner->effectiveBlock(BenchMethod::Dense), 0);
}

QTEST_APPLESS_MAIN(TestFasthRunner)
#include "tst_fasthrunner.moc"
