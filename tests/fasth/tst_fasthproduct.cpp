// Correctness gates of the FastH benchmark (Mathiasen et al. 2020) for the products: every algorithm equals the sequential result,
// Q = apply(V, I) is orthogonal, applyTranspose undoes apply, and the convention H_1 ... H_k X holds.
#include "FasthTestUtil.h"
#include "fasth/Householder.h"

#include <QtTest>

using namespace wfs::fasth;
using namespace wfs::fasth::test;

Q_DECLARE_METATYPE(wfs::fasth::Algorithm)

class TestFasthProduct : public QObject {
    Q_OBJECT
private slots:
    void conventionMatchesExplicitReflections();
    void matchesSequential_data();
    void matchesSequential();
    void orthogonality_data();
    void orthogonality();
    void transposeRoundTrip_data();
    void transposeRoundTrip();
    void singleColumnAndSingleReflector();
    void rejectsBadInput();
};

namespace {
Options makeOptions(Algorithm algorithm, int block, int levels = 1, int threads = 2)
{
    Options options;
    options.algorithm = algorithm;
    options.blockSize = block;
    options.treeLevels = levels;
    options.threads = threads;
    return options;
}

// H_1 H_2 ... H_k as an explicit matrix, one dense reflection at a time.
Eigen::MatrixXd explicitProduct(const Eigen::MatrixXd& v)
{
    const Eigen::Index d = v.rows();
    Eigen::MatrixXd product = Eigen::MatrixXd::Identity(d, d);
    for (Eigen::Index i = 0; i < v.cols(); ++i) {
        const Eigen::VectorXd u = v.col(i);
        const Eigen::MatrixXd h = Eigen::MatrixXd::Identity(d, d) - 2.0 * u * u.transpose() / u.squaredNorm();
        product = product * h;
    }
    return product;
}

void addProductRows()
{
    QTest::addColumn<int>("d");
    QTest::addColumn<int>("k");
    QTest::addColumn<int>("block");
    QTest::addColumn<Algorithm>("algorithm");
    QTest::addColumn<int>("levels");
    QTest::addColumn<bool>("lapackLayout");
    // Block sizes chosen so that they divide neither d nor k: the last block is ragged.
    const int cases[][3] = {{7, 4, 3},     {7, 7, 3},      {64, 61, 12},   {64, 64, 12},
                            {100, 97, 16}, {100, 100, 16}, {512, 509, 48}, {512, 512, 48}};
    const std::pair<Algorithm, int> algorithms[] = {
        {Algorithm::FastH, 0}, {Algorithm::CompactWY, 0}, {Algorithm::TreeMerge, 1}, {Algorithm::TreeMerge, 3}};
    for (const auto& c : cases)
        for (const auto& [algorithm, levels] : algorithms)
            for (bool lapack : {false, true}) {
                const QByteArray name = QByteArray(algorithmName(algorithm)) + (levels > 1 ? "3" : "") + " d=" + QByteArray::number(c[0])
                                        + " k=" + QByteArray::number(c[1]) + " b=" + QByteArray::number(c[2])
                                        + (lapack ? " lapack" : " gaussian");
                QTest::newRow(name.constData()) << c[0] << c[1] << c[2] << algorithm << levels << lapack;
            }
}
} // namespace

void TestFasthProduct::conventionMatchesExplicitReflections()
{
    std::mt19937_64 generator(1);
    const Eigen::MatrixXd v = gaussian<double>(7, 5, generator);
    const Eigen::MatrixXd x = gaussian<double>(7, 3, generator);
    const Eigen::MatrixXd q = explicitProduct(v);
    for (Algorithm algorithm : {Algorithm::Sequential, Algorithm::FastH, Algorithm::CompactWY, Algorithm::TreeMerge}) {
        const Options options = makeOptions(algorithm, 2);
        WFS_VERIFY_CLOSE(maxAbsDifference(apply(v, x, options), q * x), 0.0, 0.0, 1e-13);
        WFS_VERIFY_CLOSE(maxAbsDifference(applyTranspose(v, x, options), q.transpose() * x), 0.0, 0.0, 1e-13);
    }
}

void TestFasthProduct::matchesSequential_data()
{
    addProductRows();
}

void TestFasthProduct::matchesSequential()
{
    QFETCH(int, d);
    QFETCH(int, k);
    QFETCH(int, block);
    QFETCH(Algorithm, algorithm);
    QFETCH(int, levels);
    QFETCH(bool, lapackLayout);
    std::mt19937_64 generator(std::uint64_t(d * 1000 + k));
    const int m = 5;
    {
        const Eigen::MatrixXd v = lapackLayout ? lapackReflectors<double>(d, k, generator) : gaussian<double>(d, k, generator);
        const Eigen::MatrixXd x = gaussian<double>(d, m, generator);
        const Options sequential = makeOptions(Algorithm::Sequential, 1);
        for (int threads : {1, 2}) {
            const Options options = makeOptions(algorithm, block, levels, threads);
            WFS_VERIFY_CLOSE(maxAbsDifference(apply(v, x, options), apply(v, x, sequential)), 0.0, 0.0, 1e-12);
            WFS_VERIFY_CLOSE(maxAbsDifference(applyTranspose(v, x, options), applyTranspose(v, x, sequential)), 0.0, 0.0, 1e-12);
        }
    }
    {
        const Eigen::MatrixXf v = lapackLayout ? lapackReflectors<float>(d, k, generator) : gaussian<float>(d, k, generator);
        const Eigen::MatrixXf x = gaussian<float>(d, m, generator);
        const Options sequential = makeOptions(Algorithm::Sequential, 1);
        const Options options = makeOptions(algorithm, block, levels);
        WFS_VERIFY_CLOSE(maxRelativeDifference(apply(v, x, options), apply(v, x, sequential)), 0.0, 0.0, 1e-4);
        WFS_VERIFY_CLOSE(maxRelativeDifference(applyTranspose(v, x, options), applyTranspose(v, x, sequential)), 0.0, 0.0, 1e-4);
    }
}

void TestFasthProduct::orthogonality_data()
{
    QTest::addColumn<int>("d");
    QTest::addColumn<Algorithm>("algorithm");
    for (int d : {7, 64, 100, 512})
        for (Algorithm algorithm : {Algorithm::Sequential, Algorithm::FastH, Algorithm::CompactWY, Algorithm::TreeMerge})
            QTest::newRow(QByteArray(algorithmName(algorithm)).append(" d=").append(QByteArray::number(d)).constData()) << d << algorithm;
}

void TestFasthProduct::orthogonality()
{
    QFETCH(int, d);
    QFETCH(Algorithm, algorithm);
    std::mt19937_64 generator{std::uint64_t(d)};
    const Eigen::MatrixXd v = gaussian<double>(d, d, generator);
    const Eigen::MatrixXd q = apply(v, Eigen::MatrixXd(Eigen::MatrixXd::Identity(d, d)), makeOptions(algorithm, 12));
    const Eigen::MatrixXd defect = q.transpose() * q - Eigen::MatrixXd::Identity(d, d);
    WFS_VERIFY_CLOSE(defect.norm() / std::sqrt(double(d)), 0.0, 0.0, 1e-13);
    // Not the identity by accident: a product of d Gaussian reflections is far from it.
    QVERIFY((q - Eigen::MatrixXd::Identity(d, d)).norm() > 1.0);
}

void TestFasthProduct::transposeRoundTrip_data()
{
    orthogonality_data();
}

void TestFasthProduct::transposeRoundTrip()
{
    QFETCH(int, d);
    QFETCH(Algorithm, algorithm);
    std::mt19937_64 generator(std::uint64_t(d + 7));
    const int k = std::max(1, d - 2);
    const Eigen::MatrixXd v = gaussian<double>(d, k, generator);
    const Eigen::MatrixXd x = gaussian<double>(d, 9, generator);
    HouseholderProduct<double> product(makeOptions(algorithm, 10, 2));
    product.prepare(v);
    Eigen::MatrixXd y = x;
    product.apply(y);
    QVERIFY(maxAbsDifference(y, x) > 1e-3); // the product did something
    product.applyTranspose(y);
    WFS_VERIFY_CLOSE(maxAbsDifference(y, x), 0.0, 0.0, 1e-12);
    product.applyTranspose(y);
    product.apply(y);
    WFS_VERIFY_CLOSE(maxAbsDifference(y, x), 0.0, 0.0, 1e-12);
}

void TestFasthProduct::singleColumnAndSingleReflector()
{
    std::mt19937_64 generator(3);
    const Eigen::MatrixXd v1 = gaussian<double>(10, 1, generator);
    const Eigen::MatrixXd x1 = gaussian<double>(10, 1, generator);
    const Eigen::VectorXd u = v1.col(0);
    const Eigen::VectorXd expected = x1.col(0) - 2.0 * u * (u.dot(x1.col(0)) / u.squaredNorm());
    for (Algorithm algorithm : {Algorithm::Sequential, Algorithm::FastH, Algorithm::CompactWY, Algorithm::TreeMerge})
        WFS_VERIFY_CLOSE(maxAbsDifference(apply(v1, x1, makeOptions(algorithm, 4)), expected), 0.0, 0.0, 1e-14);
    // Block larger than k: a single ragged block.
    const Eigen::MatrixXd v = gaussian<double>(30, 5, generator);
    const Eigen::MatrixXd x = gaussian<double>(30, 1, generator);
    WFS_VERIFY_CLOSE(maxAbsDifference(apply(v, x, makeOptions(Algorithm::FastH, 64)), apply(v, x, makeOptions(Algorithm::Sequential, 1))),
                     0.0, 0.0, 1e-13);
}

void TestFasthProduct::rejectsBadInput()
{
    HouseholderProduct<double> product;
    Eigen::MatrixXd v = Eigen::MatrixXd::Random(5, 3);
    v.col(1).setZero();
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, product.prepare(v));
    const Eigen::MatrixXd tooMany = Eigen::MatrixXd::Random(3, 4);
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, product.prepare(tooMany));
    const Eigen::MatrixXd good = Eigen::MatrixXd::Random(5, 3);
    product.prepare(good);
    Eigen::MatrixXd wrongRows = Eigen::MatrixXd::Random(4, 2);
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, product.apply(wrongRows));
    Options bad;
    bad.blockSize = 0;
    QVERIFY(!bad.isValid());
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, HouseholderProduct<double>{bad});
    HouseholderProduct<double> unprepared;
    Eigen::MatrixXd x = Eigen::MatrixXd::Random(5, 2);
    QVERIFY_THROWS_EXCEPTION(std::logic_error, unprepared.apply(x));
}

QTEST_APPLESS_MAIN(TestFasthProduct)
#include "tst_fasthproduct.moc"
