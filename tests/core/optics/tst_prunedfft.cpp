// The pruned far-field transform (core/optics/PrunedFft.h) against a full 2-D FFT, its adjoint by the
// dot-product test, and the CPU model with it against the model without it (WFS_FFT_PRUNING=off):
// cost and adjoint gradient where the pruning applies and where the model falls back.
#include "ModelFixtures.h"

#include "engine/BackendFactory.h"
#include "engine/Presets.h"
#include "optics/PrunedFft.h"

#include <complex>
#include <cstring>
#include <numbers>
#include <random>

using namespace wfs;

namespace {

struct Geometry {
    int n, rowBegin, rowEnd, colBegin, colEnd;
};

} // namespace

Q_DECLARE_METATYPE(Geometry)

namespace {

template <class Real>
std::vector<std::complex<Real>> randomBlock(size_t count, std::mt19937_64& rng)
{
    std::normal_distribution<double> normal;
    std::vector<std::complex<Real>> v(count);
    for (auto& z : v)
        z = std::complex<Real>(Real(normal(rng)), Real(normal(rng)));
    return v;
}

// The pruned synthesis against FFTW's full 2-D inverse DFT of the zero-padded pupil, after restoring
// the unit phase w^(rowBegin k + colBegin l) that the pruned transform leaves out. Largest difference
// relative to the largest output value.
template <class Real>
double synthesisError(const Geometry& g)
{
    const simd::OpticsKernels<Real>& kernels = simd::opticsKernels<Real>(simd::active());
    PrunedFft<Real> pruned(g.n, g.rowBegin, g.rowEnd, g.colBegin, g.colEnd, kernels, 1, false);
    const size_t n = size_t(g.n);
    std::vector<std::complex<double>> grid(n * n);
    std::mt19937_64 rng(3);
    pruned.clearBlock();
    for (int r = g.rowBegin; r < g.rowEnd; ++r)
        for (int c = g.colBegin; c < g.colEnd; ++c) {
            const auto z = randomBlock<Real>(1, rng)[0];
            grid[size_t(r) * n + size_t(c)] = std::complex<double>(z);
            pruned.block()[pruned.blockIndex(r * g.n + c)] = z;
        }
    fftw::ComplexBuffer<Real> out(n * n);
    pruned.synthesise(out.data());
    auto* raw = reinterpret_cast<fftw_complex*>(grid.data());
    fftw_plan full = fftw_plan_dft_2d(g.n, g.n, raw, raw, FFTW_BACKWARD, FFTW_ESTIMATE);
    fftw_execute(full);
    fftw_destroy_plan(full);
    double largest = 0, error = 0;
    for (size_t k = 0; k < n; ++k)
        for (size_t l = 0; l < n; ++l) {
            const long turns = (long(g.rowBegin) * long(k) + long(g.colBegin) * long(l)) % g.n;
            const std::complex<double> phase = std::polar(1.0, 2 * std::numbers::pi * double(turns) / g.n);
            const std::complex<double> got = phase * std::complex<double>(out.data()[pruned.outputIndex(k * n + l)]);
            largest = std::max(largest, std::abs(grid[k * n + l]));
            error = std::max(error, std::abs(got - grid[k * n + l]));
        }
    return error / largest;
}

// |<A x, y> - <x, A^H y>| / (|A x| |y|) for random x and y.
template <class Real>
double adjointError(const Geometry& g)
{
    const simd::OpticsKernels<Real>& kernels = simd::opticsKernels<Real>(simd::active());
    PrunedFft<Real> pruned(g.n, g.rowBegin, g.rowEnd, g.colBegin, g.colEnd, kernels, 1, false);
    const size_t n = size_t(g.n);
    std::mt19937_64 rng(5);
    std::vector<int> pupil;
    pruned.clearBlock();
    for (int r = g.rowBegin; r < g.rowEnd; ++r)
        for (int c = g.colBegin; c < g.colEnd; ++c)
            pupil.push_back(pruned.blockIndex(r * g.n + c));
    const auto x = randomBlock<Real>(pupil.size(), rng);
    for (size_t i = 0; i < pupil.size(); ++i)
        pruned.block()[pupil[i]] = x[i];
    fftw::ComplexBuffer<Real> ax(n * n), y(n * n);
    pruned.synthesise(ax.data());
    const auto yValues = randomBlock<Real>(n * n, rng);
    std::copy(yValues.begin(), yValues.end(), y.data());
    std::complex<double> lhs = 0, rhs = 0;
    double normAx = 0, normY = 0;
    for (size_t i = 0; i < n * n; ++i) {
        lhs += std::complex<double>(ax.data()[i]) * std::conj(std::complex<double>(yValues[i]));
        normAx += std::norm(std::complex<double>(ax.data()[i]));
        normY += std::norm(std::complex<double>(yValues[i]));
    }
    pruned.adjoint(y.data());
    for (size_t i = 0; i < pupil.size(); ++i)
        rhs += std::complex<double>(x[i]) * std::conj(std::complex<double>(pruned.block()[pupil[i]]));
    return std::abs(lhs - rhs) / std::sqrt(normAx * normY);
}

// The OOF preset's planes and objective on `grid` (N, pupil, sampling), with noise-free data at a
// random aberration.
std::shared_ptr<const Problem> oofProblem(const PupilGrid& grid, int order)
{
    PresetOptions options;
    options.grid = grid.size;
    options.order = order;
    options.noise = false;
    ProblemSpec spec = makePreset("oof", options).spec;
    spec.grid = grid;
    const Problem plain(spec);
    std::vector<double> truth = plain.initialParameters();
    std::mt19937_64 rng(11);
    std::normal_distribution<double> normal(0.0, 0.3);
    for (size_t i = 0; i < plain.modes().size(); ++i)
        truth[i] = normal(rng);
    const auto images = simulateImages(spec, truth, grid.size, grid.size, {}, nullptr);
    for (size_t k = 0; k < images.size(); ++k)
        spec.planes[k].data = images[k];
    return std::make_shared<const Problem>(spec);
}

bool prunes(const Problem& problem)
{
    const int n = problem.gridSize();
    int colBegin = n, colEnd = 0;
    for (int i : problem.pupilIndex()) {
        colBegin = std::min(colBegin, i % n);
        colEnd = std::max(colEnd, i % n + 1);
    }
    return PrunedFft<double>::applicable(n, problem.rowBegin(), problem.rowEnd(), colBegin, colEnd);
}

std::unique_ptr<ModelEvaluator> evaluator(std::shared_ptr<const Problem> problem, Precision precision, int threads, bool pruning)
{
    EvaluatorOptions options;
    options.precision = precision;
    options.threads = threads;
    options.measurePlans = false;
    if (!pruning)
        qputenv("WFS_FFT_PRUNING", "off");
    auto e = makeEvaluator(BackendKind::Cpu, std::move(problem), options, GradientKind::Adjoint);
    qunsetenv("WFS_FFT_PRUNING");
    return e;
}

} // namespace

class TestPrunedFft : public QObject {
    Q_OBJECT

private slots:
    void transformMatchesFullFft_data()
    {
        QTest::addColumn<Geometry>("geometry");
        QTest::newRow("oof 64: B = N / 4") << Geometry{64, 24, 40, 24, 40};
        QTest::newRow("odd supports, padded to 16") << Geometry{64, 23, 38, 25, 39};
        QTest::newRow("N = 48: B = 12, columns unpruned") << Geometry{48, 19, 29, 2, 46};
        QTest::newRow("support wraps past the last row") << Geometry{64, 50, 63, 3, 20};
        QTest::newRow("half the grid: two residues") << Geometry{32, 8, 24, 8, 24};
    }

    void transformMatchesFullFft()
    {
        QFETCH(Geometry, geometry);
        const Geometry& g = geometry;
        QVERIFY(PrunedFft<double>::applicable(g.n, g.rowBegin, g.rowEnd, g.colBegin, g.colEnd));
        // The pruned and the full transform round differently: float64 to 1e-13 of the largest value,
        // float32 to 1e-5 (a few ulps times log N).
        const double doubleError = synthesisError<double>(g), floatError = synthesisError<float>(g);
        QVERIFY2(doubleError < 1e-13, qPrintable(QString::number(doubleError)));
        QVERIFY2(floatError < 1e-5, qPrintable(QString::number(floatError)));
        const double doubleAdjoint = adjointError<double>(g), floatAdjoint = adjointError<float>(g);
        QVERIFY2(doubleAdjoint < 1e-13, qPrintable(QString::number(doubleAdjoint)));
        QVERIFY2(floatAdjoint < 1e-5, qPrintable(QString::number(floatAdjoint)));
    }

    void appliesWhereItPays()
    {
        QVERIFY(PrunedFft<double>::applicable(256, 96, 160, 96, 160));
        QVERIFY(PrunedFft<float>::applicable(1024, 384, 640, 384, 640));
        // Rows over half the grid: no proper divisor holds them, so nothing is pruned.
        QVERIFY(!PrunedFft<double>::applicable(32, 6, 26, 6, 26));
        // Blocks that would break FFTW's alignment for new-array execution.
        QVERIFY(!PrunedFft<double>::applicable(30, 10, 15, 10, 15));
    }

    void modelMatchesUnprunedModel_data()
    {
        QTest::addColumn<int>("grid");
        QTest::addColumn<double>("sampling"); // Q; 0 = the OOF preset's own grid
        QTest::addColumn<bool>("pruned");
        QTest::newRow("oof 64") << 64 << 0.0 << true;
        QTest::newRow("N = 96, Q = 3 (B = 32 of 96)") << 96 << 3.0 << true;
        QTest::newRow("N = 64, Q = 1.5: falls back") << 64 << 1.5 << false;
    }

    // Cost and gradient of the pruned model against the unpruned one (float64: 1e-12 and 1e-9 of the largest
    // component; float32: 1e-4 and 1e-3), with one and two threads, and the pruned adjoint against central
    // differences of the unpruned float64 cost (1e-6).
    void modelMatchesUnprunedModel()
    {
        QFETCH(int, grid);
        QFETCH(double, sampling);
        QFETCH(bool, pruned);
        const PupilGrid pupilGrid = sampling > 0 ? PupilGrid::centred(grid, sampling) : PupilGrid::oofSquare(grid);
        auto problem = oofProblem(pupilGrid, 4);
        QCOMPARE(prunes(*problem), pruned);
        std::vector<double> x = problem->initialParameters();
        for (size_t i = 0; i < x.size(); ++i)
            x[i] += 0.05 * std::sin(1.0 + double(i)) * problem->parameterScales()[i];
        auto reference = evaluator(problem, Precision::Double, 1, false);
        std::vector<double> expected(x.size());
        const double expectedCost = reference->evaluate(x.data(), expected.data());
        double largest = 0;
        for (double v : expected)
            largest = std::max(largest, std::abs(v));
        for (Precision precision : {Precision::Double, Precision::Float})
            for (int threads : {1, 2}) {
                const bool isDouble = precision == Precision::Double;
                auto model = evaluator(problem, precision, threads, true);
                std::vector<double> gradient(x.size());
                WFS_VERIFY_CLOSE(model->evaluate(x.data(), gradient.data()), expectedCost, isDouble ? 1e-12 : 1e-4, 0.0);
                for (size_t i = 0; i < x.size(); ++i)
                    WFS_VERIFY_CLOSE(gradient[i], expected[i], isDouble ? 1e-9 : 1e-3, (isDouble ? 1e-9 : 1e-3) * largest);
            }
        auto model = evaluator(problem, Precision::Double, 1, true);
        std::vector<size_t> all(x.size());
        for (size_t i = 0; i < all.size(); ++i)
            all[i] = i;
        const QString mismatch = test::adjointMismatch(*problem, *model, *reference, x, all, 1e-6);
        if (!mismatch.isEmpty())
            QFAIL(qPrintable(mismatch));
    }

    // The threads share a plane's transform (optics/PrunedFft.h): at grid 512, where the residues are large
    // enough to split (N B >= 2^15), any thread count gives the one-thread cost and gradient to rounding
    // (1e-12 of the largest component: the partial sums are added in another order), including more threads
    // than residues (5 and 8 of 4: slices of rows); a given count gives the same bits every time. At grid 256
    // one thread does everything whatever is asked, so the bits match across counts.
    void threadsShareTheTransform_data()
    {
        QTest::addColumn<int>("grid");
        QTest::addColumn<double>("sampling");
        QTest::addColumn<bool>("split");
        QTest::newRow("oof 512: 4 residues of 128 rows") << 512 << 0.0 << true;
        QTest::newRow("N = 512, Q = 2: 2 residues") << 512 << 2.0 << true;
        QTest::newRow("oof 256: one thread") << 256 << 0.0 << false;
    }
    void threadsShareTheTransform()
    {
        QFETCH(int, grid);
        QFETCH(double, sampling);
        QFETCH(bool, split);
        const PupilGrid pupilGrid = sampling > 0 ? PupilGrid::centred(grid, sampling) : PupilGrid::oofSquare(grid);
        auto problem = oofProblem(pupilGrid, 4);
        QVERIFY(prunes(*problem));
        std::vector<double> x = problem->initialParameters();
        for (size_t i = 0; i < x.size(); ++i)
            x[i] += 0.05 * std::sin(1.0 + double(i)) * problem->parameterScales()[i];
        auto run = [&](int threads, std::vector<double>& gradient) {
            gradient.assign(x.size(), 0.0);
            return evaluator(problem, Precision::Double, threads, true)->evaluate(x.data(), gradient.data());
        };
        std::vector<double> one;
        const double oneCost = run(1, one);
        double largest = 0;
        for (double v : one)
            largest = std::max(largest, std::abs(v));
        for (int threads : {2, 3, 5, 8}) {
            std::vector<double> first, second;
            const double cost = run(threads, first), again = run(threads, second);
            QCOMPARE(std::memcmp(&cost, &again, sizeof cost), 0);
            QCOMPARE(std::memcmp(first.data(), second.data(), first.size() * sizeof(double)), 0);
            if (!split) {
                QCOMPARE(std::memcmp(&cost, &oneCost, sizeof cost), 0);
                QCOMPARE(std::memcmp(first.data(), one.data(), one.size() * sizeof(double)), 0);
                continue;
            }
            WFS_VERIFY_CLOSE(cost, oneCost, 1e-12, 0.0);
            for (size_t i = 0; i < x.size(); ++i)
                WFS_VERIFY_CLOSE(first[i], one[i], 1e-12, 1e-12 * largest);
        }
    }

    // The model images come back in grid order whatever the transform's own order.
    void modelImagesInGridOrder()
    {
        auto problem = oofProblem(PupilGrid::oofSquare(64), 4);
        QVERIFY(prunes(*problem));
        const std::vector<double> x = problem->initialParameters();
        const auto expected = evaluator(problem, Precision::Double, 1, false)->modelImages(x.data());
        const auto images = evaluator(problem, Precision::Double, 1, true)->modelImages(x.data());
        QCOMPARE(images.size(), expected.size());
        for (size_t k = 0; k < images.size(); ++k) {
            const double peak = *std::max_element(expected[k].begin(), expected[k].end());
            for (size_t i = 0; i < images[k].size(); ++i)
                WFS_VERIFY_CLOSE(images[k][i], expected[k][i], 1e-10, 1e-12 * peak);
        }
    }
};

QTEST_APPLESS_MAIN(TestPrunedFft)
#include "tst_prunedfft.moc"
