// The Householder products' kernels (core/simd) built for AVX2 + FMA against the baseline build:
// sequential, FastH and UT apply and applyTranspose agree to 1e-12 relative (of max |X|) in float64,
// and to 1e-5 in float32, for d in {64, 100, 512}, k < d and k = d, a block size that does not divide k.
#include "FasthTestUtil.h"

#include "simd/SimdLevel.h"

using namespace wfs;
using namespace wfs::fasth;

namespace {

template <typename Scalar>
Matrix<Scalar> run(const Matrix<Scalar>& v, const Matrix<Scalar>& x, Algorithm algorithm, bool transposed, simd::Level level)
{
    Options options;
    options.algorithm = algorithm;
    options.blockSize = 24;
    options.threads = 1;
    HouseholderProduct<Scalar> product(options);
    product.prepare(v);
    Matrix<Scalar> y = x;
    simd::forceLevel(level);
    if (transposed)
        product.applyTranspose(y);
    else
        product.apply(y);
    simd::forceLevel(std::nullopt);
    return y;
}

template <typename Scalar>
void compareLevels(double tolerance)
{
    if (simd::supported() != simd::Level::Avx2Fma)
        QSKIP("this CPU or build has no AVX2 + FMA kernels: only the baseline runs");
    std::mt19937_64 generator(1515);
    for (int d : {64, 100, 512}) {
        for (int k : {d / 2 + 1, d}) {
            const Matrix<Scalar> v = fasth::test::gaussian<Scalar>(d, k, generator);
            const Matrix<Scalar> x = fasth::test::gaussian<Scalar>(d, 32, generator);
            for (Algorithm algorithm : {Algorithm::Sequential, Algorithm::FastH, Algorithm::CompactWY}) {
                for (bool transposed : {false, true}) {
                    const Matrix<Scalar> a = run(v, x, algorithm, transposed, simd::Level::Avx2Fma);
                    const Matrix<Scalar> b = run(v, x, algorithm, transposed, simd::Level::Baseline);
                    const double scale = double(b.cwiseAbs().maxCoeff());
                    const double error = fasth::test::maxAbsDifference(a, b);
                    QVERIFY2(error <= tolerance * scale,
                             qPrintable(QStringLiteral("d %1 k %2 %3%4: max |avx2 - baseline| = %5, max |X| = %6")
                                            .arg(d)
                                            .arg(k)
                                            .arg(algorithmName(algorithm))
                                            .arg(transposed ? " transposed" : "")
                                            .arg(error)
                                            .arg(scale)));
                    QVERIFY(scale > 0.0);
                }
            }
        }
    }
}

} // namespace

class TestFasthSimd : public QObject {
    Q_OBJECT

private slots:
    void double64() { compareLevels<double>(1e-12); }
    void float32() { compareLevels<float>(1e-5); }
};

QTEST_GUILESS_MAIN(TestFasthSimd)
#include "tst_fasthsimd.moc"
