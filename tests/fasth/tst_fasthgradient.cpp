// Backward pass gates of the FastH benchmark (Mathiasen et al. 2020): dL/dX and dL/dV agree with central differences, every blocked
// algorithm agrees with the sequential backward, the block inputs are recovered, and v^T dL/dv = 0.
#include "FasthTestUtil.h"
#include "fasth/Householder.h"

#include <QtTest>

using namespace wfs;
using namespace wfs::fasth;
using namespace wfs::fasth::test;

Q_DECLARE_METATYPE(wfs::fasth::Algorithm)

class TestFasthGradient : public QObject {
    Q_OBJECT
private slots:
    void centralDifferences_data();
    void centralDifferences();
    void blockedMatchesSequential_data();
    void blockedMatchesSequential();
    void reflectorGradientIsOrthogonalToReflector_data();
    void reflectorGradientIsOrthogonalToReflector();
    void singlePrecision();
};

namespace {
Options makeOptions(Algorithm algorithm, int block, int threads = 2)
{
    Options options;
    options.algorithm = algorithm;
    options.blockSize = block;
    options.treeLevels = 1;
    options.threads = threads;
    return options;
}

void addAlgorithmRows(bool withTranspose)
{
    QTest::addColumn<Algorithm>("algorithm");
    QTest::addColumn<bool>("transposed");
    QTest::addColumn<bool>("lapackLayout");
    for (Algorithm algorithm : {Algorithm::Sequential, Algorithm::FastH, Algorithm::CompactWY, Algorithm::TreeMerge})
        for (bool transposed : {false, true})
            for (bool lapack : {false, true}) {
                if (transposed && !withTranspose)
                    continue;
                const QByteArray name =
                    QByteArray(algorithmName(algorithm)) + (transposed ? " transpose" : " apply") + (lapack ? " lapack" : " gaussian");
                QTest::newRow(name.constData()) << algorithm << transposed << lapack;
            }
}

// L = <G, P X> with P = apply or applyTranspose: linear in X, not in V, and its gradient for any G is
// the full vector-Jacobian product the backward pass computes.
double loss(const Eigen::MatrixXd& v, const Eigen::MatrixXd& x, const Eigen::MatrixXd& g, bool transposed)
{
    Options options;
    options.algorithm = Algorithm::Sequential;
    const Eigen::MatrixXd a = transposed ? applyTranspose(v, x, options) : apply(v, x, options);
    return (g.array() * a.array()).sum();
}

void runBackward(HouseholderProduct<double>& product, bool transposed, Eigen::MatrixXd& a, Eigen::MatrixXd& g, Eigen::MatrixXd& gradV)
{
    if (transposed)
        product.backwardTranspose(a, g, gradV);
    else
        product.backward(a, g, gradV);
}
} // namespace

void TestFasthGradient::centralDifferences_data()
{
    addAlgorithmRows(true);
}

void TestFasthGradient::centralDifferences()
{
    QFETCH(Algorithm, algorithm);
    QFETCH(bool, transposed);
    QFETCH(bool, lapackLayout);
    std::mt19937_64 generator(11);
    const int d = 9, k = 7, m = 3;
    const Eigen::MatrixXd v = lapackLayout ? lapackReflectors<double>(d, k, generator) : gaussian<double>(d, k, generator);
    const Eigen::MatrixXd x = gaussian<double>(d, m, generator);
    const Eigen::MatrixXd g = gaussian<double>(d, m, generator);

    HouseholderProduct<double> product(makeOptions(algorithm, 3)); // 3 does not divide 7: a ragged block
    product.prepare(v);
    Eigen::MatrixXd a = x;
    transposed ? product.applyTranspose(a) : product.apply(a);
    Eigen::MatrixXd gradX = g;
    Eigen::MatrixXd gradV;
    runBackward(product, transposed, a, gradX, gradV);
    WFS_VERIFY_CLOSE(maxAbsDifference(a, x), 0.0, 0.0, 1e-13);

    const double h = 1e-6;
    const double tolerance = 1e-7;
    for (Eigen::Index i = 0; i < v.size(); ++i) {
        Eigen::MatrixXd plus = v, minus = v;
        plus.data()[i] += h;
        minus.data()[i] -= h;
        const double numeric = (loss(plus, x, g, transposed) - loss(minus, x, g, transposed)) / (2 * h);
        const double analytic = gradV.data()[i];
        QVERIFY2(std::abs(numeric - analytic) <= tolerance * std::max(1.0, std::abs(numeric)),
                 qPrintable(QStringLiteral("dL/dV[%1]: analytic %2, central difference %3").arg(i).arg(analytic).arg(numeric)));
    }
    for (Eigen::Index i = 0; i < x.size(); ++i) {
        Eigen::MatrixXd plus = x, minus = x;
        plus.data()[i] += h;
        minus.data()[i] -= h;
        const double numeric = (loss(v, plus, g, transposed) - loss(v, minus, g, transposed)) / (2 * h);
        const double analytic = gradX.data()[i];
        QVERIFY2(std::abs(numeric - analytic) <= tolerance * std::max(1.0, std::abs(numeric)),
                 qPrintable(QStringLiteral("dL/dX[%1]: analytic %2, central difference %3").arg(i).arg(analytic).arg(numeric)));
    }
    // The gradient is not trivially zero (a loss independent of V would pass the comparison too).
    QVERIFY(gradV.norm() > 1e-3);
}

void TestFasthGradient::blockedMatchesSequential_data()
{
    QTest::addColumn<int>("d");
    QTest::addColumn<int>("k");
    QTest::addColumn<int>("block");
    QTest::addColumn<Algorithm>("algorithm");
    QTest::addColumn<bool>("transposed");
    const int cases[][3] = {{7, 7, 3}, {64, 61, 12}, {100, 97, 16}, {512, 512, 48}};
    for (const auto& c : cases)
        for (Algorithm algorithm : {Algorithm::FastH, Algorithm::CompactWY, Algorithm::TreeMerge})
            for (bool transposed : {false, true})
                QTest::newRow(QByteArray(algorithmName(algorithm))
                                  .append(transposed ? " T d=" : " d=")
                                  .append(QByteArray::number(c[0]))
                                  .append(" k=")
                                  .append(QByteArray::number(c[1]))
                                  .constData())
                    << c[0] << c[1] << c[2] << algorithm << transposed;
}

void TestFasthGradient::blockedMatchesSequential()
{
    QFETCH(int, d);
    QFETCH(int, k);
    QFETCH(int, block);
    QFETCH(Algorithm, algorithm);
    QFETCH(bool, transposed);
    std::mt19937_64 generator(std::uint64_t(d + k));
    const int m = 6;
    const Eigen::MatrixXd v = gaussian<double>(d, k, generator);
    const Eigen::MatrixXd a0 = gaussian<double>(d, m, generator);
    const Eigen::MatrixXd g0 = gaussian<double>(d, m, generator);

    HouseholderProduct<double> sequential(makeOptions(Algorithm::Sequential, 1, 1));
    sequential.prepare(v);
    Eigen::MatrixXd refA = a0, refG = g0, refV;
    runBackward(sequential, transposed, refA, refG, refV);
    for (int threads : {1, 2}) {
        HouseholderProduct<double> product(makeOptions(algorithm, block, threads));
        product.prepare(v);
        Eigen::MatrixXd a = a0, g = g0, gradV;
        runBackward(product, transposed, a, g, gradV);
        WFS_VERIFY_CLOSE(maxAbsDifference(a, refA), 0.0, 0.0, 1e-12);
        WFS_VERIFY_CLOSE(maxAbsDifference(g, refG), 0.0, 0.0, 1e-12);
        WFS_VERIFY_CLOSE(maxAbsDifference(gradV, refV), 0.0, 0.0, 1e-11);
    }
}

void TestFasthGradient::reflectorGradientIsOrthogonalToReflector_data()
{
    addAlgorithmRows(true);
}

void TestFasthGradient::reflectorGradientIsOrthogonalToReflector()
{
    QFETCH(Algorithm, algorithm);
    QFETCH(bool, transposed);
    QFETCH(bool, lapackLayout);
    std::mt19937_64 generator(5);
    const int d = 64, k = 50, m = 8;
    const Eigen::MatrixXd v = lapackLayout ? lapackReflectors<double>(d, k, generator) : gaussian<double>(d, k, generator);
    Eigen::MatrixXd a = gaussian<double>(d, m, generator);
    Eigen::MatrixXd g = gaussian<double>(d, m, generator);
    HouseholderProduct<double> product(makeOptions(algorithm, 16));
    product.prepare(v);
    Eigen::MatrixXd gradV;
    runBackward(product, transposed, a, g, gradV);
    // The loss does not depend on ||v||, so the gradient has no component along v.
    double worst = 0.0;
    for (int i = 0; i < k; ++i)
        worst = std::max(worst, std::abs(v.col(i).dot(gradV.col(i))) / (v.col(i).norm() * gradV.col(i).norm()));
    WFS_VERIFY_CLOSE(worst, 0.0, 0.0, 1e-12);
}

void TestFasthGradient::singlePrecision()
{
    std::mt19937_64 generator(9);
    const int d = 100, k = 100, m = 4;
    const Eigen::MatrixXd v = gaussian<double>(d, k, generator);
    const Eigen::MatrixXd a0 = gaussian<double>(d, m, generator);
    const Eigen::MatrixXd g0 = gaussian<double>(d, m, generator);
    HouseholderProduct<double> reference(makeOptions(Algorithm::Sequential, 1));
    reference.prepare(v);
    Eigen::MatrixXd refA = a0, refG = g0, refV;
    reference.backward(refA, refG, refV);
    const Eigen::MatrixXf vf = v.cast<float>();
    for (Algorithm algorithm : {Algorithm::Sequential, Algorithm::FastH, Algorithm::CompactWY, Algorithm::TreeMerge}) {
        HouseholderProduct<float> product(makeOptions(algorithm, 16));
        product.prepare(vf);
        Eigen::MatrixXf a = a0.cast<float>(), g = g0.cast<float>(), gradV;
        product.backward(a, g, gradV);
        WFS_VERIFY_CLOSE(maxRelativeDifference(g, refG), 0.0, 0.0, 1e-4);
        WFS_VERIFY_CLOSE(maxRelativeDifference(gradV, refV), 0.0, 0.0, 1e-4);
    }
}

QTEST_APPLESS_MAIN(TestFasthGradient)
#include "tst_fasthgradient.moc"
