// SVD layer gates of the FastH benchmark (Mathiasen et al. 2020): W^{-1} W X = X, log|det W| equals the LU determinant's, the
// gradients agree with central differences, and the trainer decreases the loss, reports progress and
// stops when the callback says so.
#include "FasthTestUtil.h"
#include "fasth/SvdLayer.h"

#include <Eigen/LU>

#include <QtTest>

using namespace wfs::fasth;
using namespace wfs::fasth::test;

class TestSvdLayer : public QObject {
    Q_OBJECT
private slots:
    void denseMatchesDefinition();
    void inverseUndoesForward_data();
    void inverseUndoesForward();
    void logDeterminantMatchesLu_data();
    void logDeterminantMatchesLu();
    void gradientsMatchCentralDifferences_data();
    void gradientsMatchCentralDifferences();
    void adamReducesLoss();
    void gradientDescentStepDescends();
    void callbackCancels();
    void toleranceConverges();
    void rejectsBadInput();
};

namespace {
Options fasthOptions(int block)
{
    Options options;
    options.algorithm = Algorithm::FastH;
    options.blockSize = block;
    options.threads = 2;
    return options;
}

SvdLayer<double> randomLayer(int d, int k, std::uint64_t seed, int block = 5)
{
    std::mt19937_64 generator(seed);
    Eigen::VectorXd sigma(d);
    std::uniform_real_distribution<double> magnitude(0.5, 2.0);
    for (int i = 0; i < d; ++i)
        sigma(i) = (i % 3 == 0 ? -1.0 : 1.0) * magnitude(generator);
    Eigen::MatrixXd u = gaussian<double>(d, k, generator);
    Eigen::MatrixXd v = gaussian<double>(d, k, generator);
    return SvdLayer<double>(u, v, sigma, fasthOptions(block));
}
} // namespace

void TestSvdLayer::denseMatchesDefinition()
{
    const SvdLayer<double> layer = randomLayer(12, 9, 1);
    Options sequential;
    sequential.algorithm = Algorithm::Sequential;
    const Eigen::MatrixXd identity = Eigen::MatrixXd::Identity(12, 12);
    const Eigen::MatrixXd u = apply(layer.uReflectors(), identity, sequential);
    const Eigen::MatrixXd v = apply(layer.vReflectors(), identity, sequential);
    const Eigen::MatrixXd expected = u * layer.sigma().asDiagonal() * v.transpose();
    WFS_VERIFY_CLOSE(maxAbsDifference(layer.dense(), expected), 0.0, 0.0, 1e-13);
    std::mt19937_64 generator(2);
    const Eigen::MatrixXd x = gaussian<double>(12, 4, generator);
    WFS_VERIFY_CLOSE(maxAbsDifference(layer.forward(x), expected * x), 0.0, 0.0, 1e-13);
}

void TestSvdLayer::inverseUndoesForward_data()
{
    QTest::addColumn<int>("d");
    QTest::addColumn<int>("block");
    QTest::newRow("d=7") << 7 << 3;
    QTest::newRow("d=64") << 64 << 12;
    QTest::newRow("d=100") << 100 << 16;
    QTest::newRow("d=512") << 512 << 48;
}

void TestSvdLayer::inverseUndoesForward()
{
    QFETCH(int, d);
    QFETCH(int, block);
    const SvdLayer<double> layer = randomLayer(d, d, std::uint64_t(d), block);
    std::mt19937_64 generator(3);
    const Eigen::MatrixXd x = gaussian<double>(d, 8, generator);
    WFS_VERIFY_CLOSE(maxAbsDifference(layer.inverse(layer.forward(x)), x), 0.0, 0.0, 1e-12);
    WFS_VERIFY_CLOSE(maxAbsDifference(layer.forward(layer.inverse(x)), x), 0.0, 0.0, 1e-12);
    if (d <= 100) {
        // Against an independent solver: LU with partial pivoting on the dense W.
        const Eigen::MatrixXd lu = Eigen::PartialPivLU<Eigen::MatrixXd>(layer.dense()).solve(x);
        WFS_VERIFY_CLOSE(maxRelativeDifference(layer.inverse(x), lu), 0.0, 0.0, 1e-11);
    }
}

void TestSvdLayer::logDeterminantMatchesLu_data()
{
    inverseUndoesForward_data();
}

void TestSvdLayer::logDeterminantMatchesLu()
{
    QFETCH(int, d);
    QFETCH(int, block);
    const SvdLayer<double> layer = randomLayer(d, d, std::uint64_t(d) + 1, block);
    const Eigen::PartialPivLU<Eigen::MatrixXd> lu(layer.dense());
    double luLog = 0.0;
    for (int i = 0; i < d; ++i)
        luLog += std::log(std::abs(lu.matrixLU()(i, i)));
    const double svdLog = layer.logAbsDeterminant();
    WFS_VERIFY_CLOSE(std::abs(svdLog - luLog) / std::max(1.0, std::abs(luLog)), 0.0, 0.0, 1e-11);
    if (d <= 64)
        WFS_VERIFY_CLOSE(std::abs(svdLog - std::log(std::abs(lu.determinant()))) / std::max(1.0, std::abs(svdLog)), 0.0, 0.0, 1e-11);
    // The float layer gives the same value to single precision.
    const SvdLayer<float> single(layer.uReflectors().cast<float>(), layer.vReflectors().cast<float>(), layer.sigma().cast<float>());
    WFS_VERIFY_CLOSE(std::abs(single.logAbsDeterminant() - luLog) / std::max(1.0, std::abs(luLog)), 0.0, 0.0, 1e-5);
}

void TestSvdLayer::gradientsMatchCentralDifferences_data()
{
    QTest::addColumn<int>("k");
    QTest::newRow("k=d") << 6;
    QTest::newRow("k<d") << 4;
}

void TestSvdLayer::gradientsMatchCentralDifferences()
{
    QFETCH(int, k);
    const int d = 6, m = 3;
    const SvdLayer<double> layer = randomLayer(d, k, 17, 4);
    std::mt19937_64 generator(4);
    const Eigen::MatrixXd x = gaussian<double>(d, m, generator);
    const Eigen::MatrixXd g = gaussian<double>(d, m, generator);
    const auto gradients = layer.backward(x, g);
    auto loss = [&](const Eigen::MatrixXd& u, const Eigen::MatrixXd& v, const Eigen::VectorXd& sigma, const Eigen::MatrixXd& input) {
        const SvdLayer<double> perturbed(u, v, sigma);
        return (g.array() * perturbed.forward(input).array()).sum();
    };
    const double h = 1e-6;
    auto check = [&](const char* what, const Eigen::MatrixXd& analytic, auto perturb) {
        for (Eigen::Index i = 0; i < analytic.size(); ++i) {
            const double numeric = (perturb(i, h) - perturb(i, -h)) / (2 * h);
            QVERIFY2(std::abs(numeric - analytic.data()[i]) <= 1e-7 * std::max(1.0, std::abs(numeric)),
                     qPrintable(QStringLiteral("%1[%2]: analytic %3, central difference %4")
                                    .arg(QLatin1String(what))
                                    .arg(i)
                                    .arg(analytic.data()[i])
                                    .arg(numeric)));
        }
        QVERIFY(analytic.norm() > 1e-3);
    };
    check("dL/dU", gradients.u, [&](Eigen::Index i, double step) {
        Eigen::MatrixXd u = layer.uReflectors();
        u.data()[i] += step;
        return loss(u, layer.vReflectors(), layer.sigma(), x);
    });
    check("dL/dV", gradients.v, [&](Eigen::Index i, double step) {
        Eigen::MatrixXd v = layer.vReflectors();
        v.data()[i] += step;
        return loss(layer.uReflectors(), v, layer.sigma(), x);
    });
    check("dL/dsigma", gradients.sigma, [&](Eigen::Index i, double step) {
        Eigen::VectorXd sigma = layer.sigma();
        sigma(i) += step;
        return loss(layer.uReflectors(), layer.vReflectors(), sigma, x);
    });
    check("dL/dX", gradients.x, [&](Eigen::Index i, double step) {
        Eigen::MatrixXd input = x;
        input.data()[i] += step;
        return loss(layer.uReflectors(), layer.vReflectors(), layer.sigma(), input);
    });
}

void TestSvdLayer::adamReducesLoss()
{
    const int d = 16, m = 64;
    const SvdLayer<double> teacher = randomLayer(d, d, 100);
    std::mt19937_64 generator(5);
    const Eigen::MatrixXd x = gaussian<double>(d, m, generator);
    const Eigen::MatrixXd targets = teacher.forward(x);
    TrainingOptions options;
    options.optimizer = Optimizer::Adam;
    options.learningRate = 0.02;
    options.maxIterations = 300;
    SvdTrainer<double> trainer(randomLayer(d, d, 200), x, targets, options);
    int calls = 0;
    int lastIteration = 0;
    const TrainingSummary summary = trainer.run([&](const TrainingProgress& progress) {
        ++calls;
        if (progress.iteration != lastIteration + 1 || !std::isfinite(progress.loss))
            return false;
        lastIteration = progress.iteration;
        return true;
    });
    QCOMPARE(summary.termination, TrainingTermination::MaxIterations);
    QCOMPARE(summary.iterations, 300);
    QCOMPARE(calls, 300);
    QCOMPARE(lastIteration, 300);
    QVERIFY2(summary.finalLoss < 0.1 * summary.initialLoss,
             qPrintable(QStringLiteral("loss %1 -> %2").arg(summary.initialLoss).arg(summary.finalLoss)));
    WFS_VERIFY_CLOSE(std::abs(summary.finalLoss - trainer.loss()), 0.0, 0.0, 1e-12);
}

void TestSvdLayer::gradientDescentStepDescends()
{
    const int d = 10, m = 20;
    std::mt19937_64 generator(6);
    const Eigen::MatrixXd x = gaussian<double>(d, m, generator);
    const Eigen::MatrixXd targets = gaussian<double>(d, m, generator);
    TrainingOptions options;
    options.optimizer = Optimizer::GradientDescent;
    options.learningRate = 1e-3;
    SvdTrainer<double> trainer(randomLayer(d, d, 7), x, targets, options);
    const double before = trainer.loss();
    const TrainingProgress progress = trainer.step();
    QCOMPARE(progress.iteration, 1);
    WFS_VERIFY_CLOSE(std::abs(progress.loss - before), 0.0, 0.0, 1e-12);
    // A small gradient step decreases the loss by about rate * ||gradient||^2.
    const double decrease = before - trainer.loss();
    const double predicted = options.learningRate * progress.gradientNorm * progress.gradientNorm;
    QVERIFY2(decrease > 0.5 * predicted && decrease < 1.5 * predicted,
             qPrintable(QStringLiteral("decrease %1, predicted %2").arg(decrease).arg(predicted)));
}

void TestSvdLayer::callbackCancels()
{
    std::mt19937_64 generator(8);
    const Eigen::MatrixXd x = gaussian<double>(8, 4, generator);
    TrainingOptions options;
    options.maxIterations = 100;
    SvdTrainer<double> trainer(randomLayer(8, 8, 9), x, gaussian<double>(8, 4, generator), options);
    const TrainingSummary summary = trainer.run([](const TrainingProgress& progress) { return progress.iteration < 3; });
    QCOMPARE(summary.termination, TrainingTermination::Cancelled);
    QCOMPARE(summary.iterations, 3);
    QCOMPARE(trainer.iteration(), 3);
    QCOMPARE(QString::fromLatin1(terminationName(summary.termination)), QStringLiteral("cancelled"));
}

void TestSvdLayer::toleranceConverges()
{
    std::mt19937_64 generator(10);
    const Eigen::MatrixXd x = gaussian<double>(8, 4, generator);
    const SvdLayer<double> layer = randomLayer(8, 8, 11);
    // Targets equal to the layer's own output: the loss is already zero.
    TrainingOptions options;
    options.lossTolerance = 1e-20;
    SvdTrainer<double> trainer(layer, x, layer.forward(x), options);
    const TrainingSummary summary = trainer.run();
    QCOMPARE(summary.termination, TrainingTermination::Converged);
    QCOMPARE(summary.iterations, 0);
}

void TestSvdLayer::rejectsBadInput()
{
    TrainingOptions options;
    options.learningRate = -1;
    QVERIFY(!options.isValid());
    const Eigen::MatrixXd x = Eigen::MatrixXd::Random(8, 4);
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, SvdTrainer<double>(randomLayer(8, 8, 1), x, x, options));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, SvdTrainer<double>(randomLayer(8, 8, 1), x, Eigen::MatrixXd::Random(8, 3)));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                             SvdLayer<double>(Eigen::MatrixXd::Random(8, 8), Eigen::MatrixXd::Random(7, 7), Eigen::VectorXd::Ones(8)));
}

QTEST_APPLESS_MAIN(TestSvdLayer)
#include "tst_svdlayer.moc"
