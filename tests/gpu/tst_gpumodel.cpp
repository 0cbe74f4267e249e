// The cuFFT forward model and adjoint against the CPU backend, when a CUDA device is present: the OOF
// reference values (the tolerances of tst_oofreference), cost and gradient at random parameters for
// every objective and parameter kind (1e-10 relative in float64, 1e-4 in float32), model images, the
// same converged solution on the demo and OOF presets, finite differences around the GPU model, and a
// clean out-of-memory error. Without a device those cases QSKIP, and what can be checked on the host
// is: the "no GPU" messages, failures naming the CUDA call, the memory check, the host-side
// translation (device layout, parameter block, result block -> gradient), and the whole evaluation
// emulated on the host: the kernels' per-sample functions (model/ModelMath.h) with FFTW plans of the
// cuFFT plans' batched layout, against the CPU backend.
#include "ModelFixtures.h"

#include "gpu/DeviceResources.h"
#include "gpu/GpuDevice.h"
#include "engine/BackendFactory.h"
#include "engine/Presets.h"
#include "engine/ReconstructionEngine.h"
#include "gpu/model/GpuModel.h"
#include "gpu/model/ModelDevice.h"
#include "gpu/model/ModelMath.h"
#include "GpuEmulation.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

#include <random>
#include <set>

using namespace wfs;

namespace {

bool haveDevice()
{
    return gpu::probeDevices().status == gpu::DeviceProbe::Status::Ok;
}

std::shared_ptr<const Problem> richProblem(ObjectiveKind objective, int grid = 48)
{
    return test::richProblem(objective, grid, grid - 8, 5, 11);
}

std::shared_ptr<const Problem> oofProblem(int grid, int order)
{
    PresetOptions options;
    options.grid = grid;
    options.order = order;
    return std::make_shared<const Problem>(makePreset("oof", options).spec);
}

using test::randomParameters;

EvaluatorOptions options(Precision precision, bool graphs = true)
{
    EvaluatorOptions o;
    o.precision = precision;
    o.measurePlans = false;
    o.cudaGraphs = graphs;
    return o;
}

// Largest |g_i * scale_i|: the yardstick for components that are near zero.
double largestScaled(const Problem& problem, const std::vector<double>& g)
{
    double largest = 0.0;
    for (size_t i = 0; i < g.size(); ++i)
        largest = std::max(largest, std::abs(g[i] * problem.parameterScales()[i]));
    return largest;
}

// The pupil-function model on the rich problem: Zernike terms plus a zonal phase remainder, a zonal amplitude
// (with `zonal`; else the Gaussian illumination), and a defocus scale and per-plane offsets on four planes.
std::shared_ptr<const Problem> pupilFunctionProblem(ObjectiveKind objective, bool zonal, bool blur = false, bool spectrum = false)
{
    ProblemSpec s = test::richSpec(objective, 48, 5);
    if (spectrum) { // three wavelengths 2/48 apart, on grids 46, 48 and 50
        s.spectrum.bandwidth = 0.1 * s.wavelength;
        s.spectrum.samples = 3;
    }
    if (blur) {
        s.detector.pixelIntegration = true;
        s.detector.objectDiameterPixels = 1.7;
    }
    if (zonal) {
        s.pupil.illumination = Illumination{};
        s.phaseModel = PupilPhaseModel::Both;
        s.amplitudeModel = PupilAmplitudeModel::Zonal;
        s.regularization = 3.0;
    }
    s.nuisance.fitDefocusScale = true;
    s.nuisance.fitDefocusOffsets = true;
    s.planes.push_back(s.planes[1]); // a fourth plane, so that one offset is free besides the held ones
    s.planes.back().diversity.axialDistance = 0.1e-6;
    const Problem shape(s);
    std::vector<double> truth = shape.initialParameters();
    for (size_t i = 0; i < truth.size(); ++i)
        truth[i] += 0.05 * std::cos(0.7 * double(i)) * shape.parameterScales()[i];
    std::mt19937_64 rng(13);
    const auto images = simulateImages(s, truth, 40, 40, {NoiseModel::PhotonAndRead, 3.0}, &rng);
    for (size_t k = 0; k < images.size(); ++k)
        s.planes[k].data = images[k];
    return std::make_shared<const Problem>(s);
}

std::shared_ptr<const Problem> namedProblem(const QString& name)
{
    if (name == QLatin1String("zonal"))
        return pupilFunctionProblem(ObjectiveKind::Poisson, true);
    if (name == QLatin1String("defocus"))
        return pupilFunctionProblem(ObjectiveKind::WeightedLeastSquares, false);
    if (name == QLatin1String("detector"))
        return pupilFunctionProblem(ObjectiveKind::Poisson, true, true);
    if (name == QLatin1String("spectrum"))
        return pupilFunctionProblem(ObjectiveKind::WeightedLeastSquares, false, true, true);
    if (name == QLatin1String("least-squares"))
        return richProblem(ObjectiveKind::LeastSquares);
    if (name == QLatin1String("poisson"))
        return richProblem(ObjectiveKind::Poisson);
    if (name == QLatin1String("weighted"))
        return richProblem(ObjectiveKind::WeightedLeastSquares);
    return oofProblem(128, 8);
}

// Cost and gradient of `gpuLike` (GPU or emulation) against the float64 CPU backend's at x: the
// gradient component-wise to `tolerance` relative, or `tolerance` times the largest scaled component.
void compareWithCpu(const Problem& problem, double cost, const std::vector<double>& g, double cpuCost,
                    const std::vector<double>& cpuGradient, double tolerance, bool relative, const QString& what)
{
    const QString why = test::costGradientMismatch(problem, cost, g, cpuCost, cpuGradient, tolerance, relative);
    if (!why.isEmpty())
        QFAIL(qPrintable(what + ", " + why));
}

} // namespace

class TestGpuModel : public QObject {
    Q_OBJECT

private slots:
    // ---- host side: runs everywhere ----

    void gpuRequestSaysWhyNot()
    {
        const BackendStatus status = backendStatus(BackendKind::Gpu);
        auto problem = richProblem(ObjectiveKind::LeastSquares);
        if (haveDevice()) {
            QVERIFY(status.available);
            EvaluatorOptions o;
            o.device = 999;
            try {
                makeEvaluator(BackendKind::Gpu, problem, o, GradientKind::Adjoint);
                QFAIL("device 999 was accepted");
            } catch (const BackendUnavailable& error) {
                QVERIFY2(QString::fromLatin1(error.what()).contains(QLatin1String("does not exist")), error.what());
            }
            return;
        }
        QVERIFY(!status.available);
        QVERIFY2(QString::fromStdString(status.reason).startsWith(QLatin1String("no GPU")), status.reason.c_str());
        // Without a device the probe says which of the three cases it is.
        const gpu::DeviceProbe probe = gpu::probeDevices();
        QVERIFY(probe.status == gpu::DeviceProbe::Status::NoDriver || probe.status == gpu::DeviceProbe::Status::NoDevice
                || probe.status == gpu::DeviceProbe::Status::Error);
        QCOMPARE(QString::fromStdString(status.reason), QString::fromStdString(probe.message));
        for (GradientKind gradient : {GradientKind::Adjoint, GradientKind::FiniteDifference}) {
            try {
                makeEvaluator(BackendKind::Gpu, problem, {}, gradient);
                QFAIL("a GPU evaluator was made without a device");
            } catch (const BackendUnavailable& error) {
                QVERIFY2(QString::fromLatin1(error.what()).startsWith(QLatin1String("no GPU")), error.what());
            }
        }
        // The request that failed leaves the CPU backend usable for the same problem.
        auto cpu = makeEvaluator(BackendKind::Cpu, problem, options(Precision::Double), GradientKind::Adjoint);
        const std::vector<double> x = problem->initialParameters();
        QVERIFY(std::isfinite(cpu->evaluate(x.data(), nullptr)));
    }

    void failuresNameTheCall()
    {
        // cuFFT statuses become errors naming the call, the file and the line, as CUDA's do.
        try {
            WFS_CUFFT_CHECK(CUFFT_ALLOC_FAILED);
            QFAIL("a failed cuFFT status did not throw");
        } catch (const gpu::CudaError& error) {
            const QString what = QString::fromLatin1(error.what());
            QVERIFY2(what.contains(QLatin1String("CUFFT_ALLOC_FAILED")) && what.contains(QLatin1String("out of device memory"))
                         && what.contains(QLatin1String("tst_gpumodel.cpp:")),
                     qPrintable(what));
        }
        if (haveDevice())
            QSKIP("a CUDA device is present: the no-device failure cannot be provoked here");
        auto problem = oofProblem(64, 4);
        try {
            gpu::ModelDevice device(0, gpu::modelInput(*problem, Precision::Double), true);
            QFAIL("a device model was made without a device");
        } catch (const gpu::CudaError& error) {
            const QString what = QString::fromLatin1(error.what());
            QVERIFY2(what.contains(QLatin1String("cudaSetDevice")) && what.contains(QLatin1String("ModelDevice.cu:")), qPrintable(what));
        }
    }

    void memoryCheckNamesTheSizes()
    {
        auto problem = oofProblem(256, 8);
        const gpu::ModelDims dims = gpu::modelDims(*problem, Precision::Double);
        const size_t resident = dims.residentBytes();
        const size_t gib = size_t(1) << 30;
        gpu::checkDeviceMemory(dims, 1 << 20, 80 * gib, 80 * gib, "test GPU"); // fits: no throw
        try {
            gpu::checkDeviceMemory(dims, 1 << 20, resident / 2, 80 * gib, "test GPU");
            QFAIL("half the needed memory was accepted");
        } catch (const gpu::CudaError& error) {
            const QString what = QString::fromLatin1(error.what());
            QVERIFY2(what.startsWith(QLatin1String("out of GPU memory")) && what.contains(QLatin1String("256 x 256"))
                         && what.contains(QLatin1String("test GPU")) && what.contains(QLatin1String("CPU backend")),
                     qPrintable(what));
        }
        // float32 halves every array of reals; the indices and the float64 image stay.
        auto fixedBytes = [](const gpu::ModelDims& d) {
            return size_t(d.pixels) * sizeof(int) + size_t(d.bandRows) * size_t(d.n) * sizeof(int)
                   + size_t(d.n) * size_t(d.n) * sizeof(double);
        };
        const gpu::ModelDims single = gpu::modelDims(*problem, Precision::Float);
        QCOMPARE(single.residentBytes() - fixedBytes(single), (resident - fixedBytes(dims)) / 2);
    }

    void deviceLayout()
    {
        auto problem = richProblem(ObjectiveKind::Poisson);
        const gpu::ModelInput in = gpu::modelInput(*problem, Precision::Double);
        const gpu::ModelDims& d = in.dims;
        QCOMPARE(d.n, problem->gridSize());
        QCOMPARE(d.planes, 3);
        QCOMPARE(d.terms, int(problem->modes().size()));
        QCOMPARE(d.pixels, problem->pupilPixelCount());
        QVERIFY(d.weighted); // data smaller than the grid: weight 0 outside it
        QVERIFY(d.gaussian);
        QCOMPARE(int(d.objective), int(gpu::DeviceObjective::Poisson));
        // The planes stand side by side: element (k, r, c) = (r K + k) N + c; every grid value lands once.
        std::set<size_t> seen;
        for (int k = 0; k < d.planes; ++k)
            for (int r = 0; r < d.n; ++r)
                for (int c = 0; c < d.n; ++c) {
                    const size_t e = d.element(k, r, c);
                    QVERIFY(seen.insert(e).second);
                    const size_t g = size_t(r) * size_t(d.n) + size_t(c);
                    if (in.data[e] != problem->data(k)[g] || in.weights[e] != problem->weights(k)[g])
                        QFAIL(qPrintable(QStringLiteral("plane %1 row %2 col %3 misplaced").arg(k).arg(r).arg(c)));
                }
        QCOMPARE(seen.size(), d.gridElements());
        // Basis term-major on pupil pixels; every pupil pixel inside the band.
        for (int t = 0; t < d.terms; ++t)
            for (int p = 0; p < d.pixels; p += 7)
                QCOMPARE(in.basis[size_t(t) * size_t(d.pixels) + size_t(p)], problem->basis()(p, t));
        for (int index : in.pupilIndex) {
            QVERIFY(index / d.n >= d.rowBegin);
            QVERIFY(index / d.n < d.rowBegin + d.bandRows);
        }
        // The OOF preset weights every pixel 1: no weight array.
        const gpu::ModelInput oof = gpu::modelInput(*oofProblem(64, 4), Precision::Float);
        QVERIFY(!oof.dims.weighted);
        QVERIFY(oof.weights.empty());
        QCOMPARE(oof.dims.realBytes, 4);
    }

    // The host's half of the chain rule: result block -> gradient in the problem's parameter order.
    void resultBlockToGradient()
    {
        auto problem = richProblem(ObjectiveKind::LeastSquares);
        const gpu::ModelDims d = gpu::modelDims(*problem, Precision::Double);
        const std::vector<double> x = randomParameters(*problem, 3);
        const ModelParameters p = problem->unpack(x.data());

        const std::vector<double> block = gpu::parameterBlock(*problem, d, p);
        QCOMPARE(int(block.size()), d.parameterBlockSize());
        for (int t = 0; t < d.terms; ++t)
            QCOMPARE(block[size_t(d.coefficient(t))], p.zernike[size_t(t)]);
        QCOMPARE(block[size_t(d.sigma())], p.sigma);
        for (int k = 0; k < d.planes; ++k) {
            QCOMPARE(block[size_t(d.intensity(k))], p.flux[size_t(k)] * problem->intensityScale());
            QCOMPARE(block[size_t(d.shiftY(k))], p.shiftY[size_t(k)]);
        }

        std::vector<double> result(size_t(d.resultSize()));
        for (size_t i = 0; i < result.size(); ++i)
            result[i] = 1.0 + 0.25 * double(i);
        for (int k = 0; k < d.planes; ++k)
            result[size_t(d.invalidCount(k))] = 0.0;
        std::vector<double> g(x.size());
        const double cost = gpu::costAndGradient(*problem, d, p, result.data(), g.data());
        double expectedCost = 0;
        for (int k = 0; k < d.planes; ++k)
            expectedCost += result[size_t(d.cost(k))];
        QCOMPARE(cost, expectedCost);
        const double s2 = p.sigma * p.sigma;
        for (size_t i = 0; i < x.size(); ++i) {
            const ParameterInfo& info = problem->parameters()[i];
            double expected = 0;
            switch (info.kind) {
            case ParameterKind::Zernike:
                expected = result[size_t(d.zernikeGradient(info.index))];
                break;
            case ParameterKind::CentreX:
                expected = result[size_t(d.illuminationSum(1))] / s2;
                break;
            case ParameterKind::CentreY:
                expected = result[size_t(d.illuminationSum(2))] / s2;
                break;
            case ParameterKind::Amplitude:
                expected = result[size_t(d.illuminationSum(0))] / p.amplitude;
                break;
            case ParameterKind::Sigma:
                expected = result[size_t(d.illuminationSum(3))] / (s2 * p.sigma);
                break;
            case ParameterKind::Flux:
                expected = result[size_t(d.intensityGradient(info.index))] * problem->intensityScale();
                break;
            case ParameterKind::Background:
                expected = result[size_t(d.backgroundGradient(info.index))];
                break;
            case ParameterKind::ShiftX:
                expected = result[size_t(d.shiftXGradient(info.index))];
                break;
            case ParameterKind::ShiftY:
                expected = result[size_t(d.shiftYGradient(info.index))];
                break;
            case ParameterKind::ZonalPhase:
            case ParameterKind::ZonalAmplitude:
            case ParameterKind::DefocusScale:
            case ParameterKind::DefocusOffset:
            case ParameterKind::EmitterDepth:
                QFAIL("the OOF problem has no zonal, defocus or depth parameters");
            }
            WFS_VERIFY_CLOSE(g[i], expected, 1e-15, 0.0);
        }
        // A non-positive Poisson model under data anywhere makes the cost infinite, as on the CPU.
        result[size_t(d.invalidCount(1))] = 2.0;
        QVERIFY(std::isinf(gpu::costAndGradient(*problem, d, p, result.data(), nullptr)));
    }

    // The byte count eval_ms is compared with on a device (gpu/run-device-checks.sh prints it too).
    void trafficCount()
    {
        auto problem = oofProblem(256, 8);
        const gpu::ModelDims dbl = gpu::modelDims(*problem, Precision::Double);
        const gpu::ModelDims flt = gpu::modelDims(*problem, Precision::Float);
        QVERIFY(dbl.trafficBytes(true) > 1.5 * dbl.trafficBytes(false));
        const double ratio = flt.trafficBytes(true) / dbl.trafficBytes(true);
        QVERIFY2(ratio > 0.49 && ratio < 0.52, qPrintable(QString::number(ratio)));
        // Seven passes over the planes' complex fields dominate (fill, 2 x 2 column FFTs, objective read
        // and write) plus the data: at least that, and not more than 1.5 times that.
        const double fields = 7.0 * double(dbl.gridElements()) * 16.0 + double(dbl.gridElements()) * 8.0;
        QVERIFY(dbl.trafficBytes(true) > fields);
        QVERIFY(dbl.trafficBytes(true) < 1.5 * fields);
        qInfo("OOF grid 256, order 8, float64: %.1f MB per cost-and-gradient evaluation (%d pupil pixels, %d band rows)",
              dbl.trafficBytes(true) / 1e6, dbl.pixels, dbl.bandRows);
    }

    void emulationMatchesCpu_data()
    {
        QTest::addColumn<QString>("problemName");
        QTest::addColumn<int>("precision");
        for (const char* problem : {"least-squares", "poisson", "weighted", "oof", "zonal", "defocus", "detector", "spectrum"}) {
            QTest::newRow((QByteArray(problem) + " double").constData()) << QString::fromLatin1(problem) << int(Precision::Double);
            QTest::newRow((QByteArray(problem) + " float").constData()) << QString::fromLatin1(problem) << int(Precision::Float);
        }
    }

    // The device algorithm (layout, batched FFT geometry, per-sample formulas, result block, host chain
    // rule) run on the host, held to the tolerances the device test uses.
    void emulationMatchesCpu()
    {
        QFETCH(QString, problemName);
        QFETCH(int, precision);
        auto problem = namedProblem(problemName);
        const bool isDouble = Precision(precision) == Precision::Double;
        const double tolerance = isDouble ? 1e-10 : 1e-4;
        const gpu::ModelInput in = gpu::modelInput(*problem, Precision(precision));
        auto cpu = makeEvaluator(BackendKind::Cpu, problem, options(Precision::Double), GradientKind::Adjoint);
        for (std::uint64_t seed : {1u, 2u}) {
            const std::vector<double> x = randomParameters(*problem, seed);
            const test::EmulatedPoint e = test::emulatePoint(*problem, in, x);
            std::vector<double> gc(x.size());
            const double cpuCost = cpu->evaluate(x.data(), gc.data());
            compareWithCpu(*problem, e.cost, e.gradient, cpuCost, gc, tolerance, isDouble, QStringLiteral("seed %1").arg(seed));
            WFS_VERIFY_CLOSE(e.costOnly, e.cost, 1e-14, 0.0);
            const QString images = test::imageMismatch(cpu->modelImages(x.data()), e.images, in.dims.n, isDouble ? 1e-12 : 1e-5);
            if (!images.isEmpty())
                QFAIL(qPrintable(images));
        }
    }

    // ---- on a device ----

    void infoNamesTheDevice()
    {
        if (!haveDevice())
            QSKIP("no CUDA device");
        auto problem = oofProblem(64, 4);
        auto gpu = makeEvaluator(BackendKind::Gpu, problem, options(Precision::Float), GradientKind::Adjoint);
        const BackendInfo info = gpu->info();
        QCOMPARE(QString::fromStdString(info.backend), QStringLiteral("gpu"));
        QCOMPARE(QString::fromStdString(info.device), QString::fromStdString(backendStatus(BackendKind::Gpu).device));
        QVERIFY(info.precision == Precision::Float);
        QVERIFY(info.trafficBytes > 0);
        qInfo("device %s, launch: %s", info.device.c_str(), info.launch.c_str());
        QCOMPARE(QString::fromStdString(info.launch), QStringLiteral("graph"));
        QVERIFY(gpu->measureFftMs(5) > 0.0);
    }

    void oofReferenceValues_data()
    {
        QTest::addColumn<int>("caseIndex");
        QTest::addColumn<int>("precision");
        QTest::addColumn<bool>("graphs");
        const QJsonArray all = test::oofReferenceCases();
        QVERIFY2(!all.isEmpty(), "oof-reference-values.json is missing or empty");
        for (int i = 0; i < all.size(); ++i) {
            const QJsonObject c = all[i].toObject();
            const QByteArray name = QByteArray::number(c.value(QStringLiteral("grid")).toInt()) + "/"
                                    + QByteArray::number(c.value(QStringLiteral("order")).toInt());
            QTest::newRow(name + " double") << i << int(Precision::Double) << true;
            QTest::newRow(name + " double stream") << i << int(Precision::Double) << false;
            QTest::newRow(name + " float") << i << int(Precision::Float) << true;
        }
    }

    void oofReferenceValues()
    {
        if (!haveDevice())
            QSKIP("no CUDA device");
        QFETCH(int, caseIndex);
        QFETCH(int, precision);
        QFETCH(bool, graphs);
        const QJsonObject c = test::oofReferenceCases()[caseIndex].toObject();
        auto problem = test::oofReferenceProblem(c.value(QStringLiteral("grid")).toInt(), c.value(QStringLiteral("order")).toInt(),
                                                 test::jsonVector(c.value(QStringLiteral("truth"))));
        auto evaluator = makeEvaluator(BackendKind::Gpu, problem, options(Precision(precision), graphs), GradientKind::Adjoint);
        test::verifyOofReference(*evaluator, c, Precision(precision));
    }

    void matchesCpu_data()
    {
        QTest::addColumn<QString>("problemName");
        QTest::addColumn<int>("precision");
        QTest::addColumn<bool>("graphs");
        for (const char* problem : {"least-squares", "poisson", "weighted", "oof", "zonal", "defocus", "detector", "spectrum"}) {
            QTest::newRow((QByteArray(problem) + " double").constData()) << QString::fromLatin1(problem) << int(Precision::Double) << true;
            QTest::newRow((QByteArray(problem) + " float").constData()) << QString::fromLatin1(problem) << int(Precision::Float) << true;
        }
        QTest::newRow("poisson double stream") << QStringLiteral("poisson") << int(Precision::Double) << false;
        QTest::newRow("oof float stream") << QStringLiteral("oof") << int(Precision::Float) << false;
    }

    // Cost, gradient (with and without it asked for) and model images against the CPU in float64 at three
    // random points. float32 is held against the float64 CPU result: its own error must stay below 1e-4.
    void matchesCpu()
    {
        if (!haveDevice())
            QSKIP("no CUDA device");
        QFETCH(QString, problemName);
        QFETCH(int, precision);
        QFETCH(bool, graphs);
        auto problem = namedProblem(problemName);
        const bool isDouble = Precision(precision) == Precision::Double;
        const double tolerance = isDouble ? 1e-10 : 1e-4;
        auto cpu = makeEvaluator(BackendKind::Cpu, problem, options(Precision::Double), GradientKind::Adjoint);
        auto gpu = makeEvaluator(BackendKind::Gpu, problem, options(Precision(precision), graphs), GradientKind::Adjoint);

        for (std::uint64_t seed : {1u, 2u, 3u}) {
            const std::vector<double> x = randomParameters(*problem, seed);
            std::vector<double> gc(x.size()), gg(x.size());
            const double cc = cpu->evaluate(x.data(), gc.data());
            const double cg = gpu->evaluate(x.data(), gg.data());
            QVERIFY(std::isfinite(cc));
            compareWithCpu(*problem, cg, gg, cc, gc, tolerance, isDouble, QStringLiteral("seed %1").arg(seed));
            WFS_VERIFY_CLOSE(gpu->evaluate(x.data(), nullptr), cg, isDouble ? 1e-14 : 1e-6, 0.0);
            const auto ic = cpu->modelImages(x.data());
            const auto ig = gpu->modelImages(x.data());
            QCOMPARE(ig.size(), ic.size());
            for (size_t k = 0; k < ic.size(); ++k) {
                QCOMPARE(ig[k].size(), ic[k].size());
                const double peak = *std::max_element(ic[k].begin(), ic[k].end());
                for (size_t i = 0; i < ic[k].size(); ++i)
                    if (!test::closeTo(ig[k][i], ic[k][i], 0.0, (isDouble ? 1e-12 : 1e-5) * peak))
                        QFAIL(qPrintable(QStringLiteral("plane %1 pixel %2: GPU %3, CPU %4").arg(k).arg(i).arg(ig[k][i]).arg(ic[k][i])));
            }
        }
    }

    void finiteDifferencesWrapTheGpuModel()
    {
        if (!haveDevice())
            QSKIP("no CUDA device");
        auto problem = richProblem(ObjectiveKind::LeastSquares);
        auto adjoint = makeEvaluator(BackendKind::Gpu, problem, options(Precision::Double), GradientKind::Adjoint);
        auto fd = makeEvaluator(BackendKind::Gpu, problem, options(Precision::Double), GradientKind::FiniteDifference);
        QCOMPARE(fd->costEvaluationsPerGradient(), problem->parameterCount() + 1);
        const std::vector<double> x = problem->initialParameters();
        std::vector<double> ga(x.size()), gf(x.size());
        QCOMPARE(adjoint->evaluate(x.data(), ga.data()), fd->evaluate(x.data(), gf.data()));
        const double largest = largestScaled(*problem, ga);
        for (size_t i = 0; i < x.size(); ++i)
            WFS_VERIFY_CLOSE(gf[i] * problem->parameterScales()[i], ga[i] * problem->parameterScales()[i], 1e-3, 1e-4 * largest);
    }

    void convergesLikeCpu_data()
    {
        QTest::addColumn<QString>("preset");
        QTest::addColumn<int>("grid");
        QTest::addColumn<int>("order");
        QTest::newRow("demo 128 order 4") << QStringLiteral("demo") << 128 << 4;
        QTest::newRow("oof 128 order 8") << QStringLiteral("oof") << 128 << 8;
    }

    // The whole engine (reconstruct(): solver, analysis with model images) on both backends: the same
    // final cost to 1e-6 relative (the OOF spec's criterion) and the same solution.
    void convergesLikeCpu()
    {
        if (!haveDevice())
            QSKIP("no CUDA device");
        QFETCH(QString, preset);
        QFETCH(int, grid);
        QFETCH(int, order);
        PresetOptions presetOptions;
        presetOptions.grid = grid;
        presetOptions.order = order;
        const PresetCase c = makePreset(preset.toStdString(), presetOptions);
        ReconstructionRequest request;
        request.spec = c.spec;
        request.start = c.start;
        request.solver = c.solver;
        request.evaluator = options(Precision::Double);
        request.backend = BackendKind::Cpu;
        const FitResult onCpu = reconstruct(request, {}, nullptr);
        request.backend = BackendKind::Gpu;
        const FitResult onGpu = reconstruct(request, {}, nullptr);
        QVERIFY2(onGpu.solver.termination == Termination::Converged, onGpu.solver.message.c_str());
        QCOMPARE(int(onCpu.solver.termination), int(onGpu.solver.termination));
        QCOMPARE(QString::fromStdString(onGpu.backend.backend), QStringLiteral("gpu"));
        WFS_VERIFY_CLOSE(onGpu.solver.finalCost, onCpu.solver.finalCost, 1e-6, 0.0);
        const auto problem = std::make_shared<const Problem>(c.spec);
        const std::vector<double> scales = problem->parameterScales();
        for (size_t i = 0; i < scales.size(); ++i)
            WFS_VERIFY_CLOSE(onGpu.solver.parameters[i] / scales[i], onCpu.solver.parameters[i] / scales[i], 0.0, 1e-5);
        for (size_t i = 0; i < onCpu.coefficients.size(); ++i)
            WFS_VERIFY_CLOSE(onGpu.coefficients[i].waves, onCpu.coefficients[i].waves, 0.0, 1e-6);
        WFS_VERIFY_CLOSE(onGpu.strehl, onCpu.strehl, 1e-8, 0.0);

        // float32 on the GPU reaches the same cost to single-precision accuracy.
        request.evaluator.precision = Precision::Float;
        const FitResult single = reconstruct(request, {}, nullptr);
        QVERIFY2(single.solver.termination != Termination::Failed, single.solver.message.c_str());
        WFS_VERIFY_CLOSE(single.solver.finalCost, onCpu.solver.finalCost, 1e-4, 0.0);
    }

    // Ask for more than the device has left: a clean error that names the sizes, no crash, and the
    // device still works afterwards (the "absurd grid" is absurd for the memory that is left).
    void outOfMemoryIsACleanError()
    {
        if (!haveDevice())
            QSKIP("no CUDA device");
        auto problem = oofProblem(512, 8);
        const gpu::ModelDims dims = gpu::modelDims(*problem, Precision::Double);
        QVERIFY(cudaSetDevice(0) == cudaSuccess);
        size_t freeBytes = 0, totalBytes = 0;
        QVERIFY(cudaMemGetInfo(&freeBytes, &totalBytes) == cudaSuccess);
        // Half the arrays plus a little for the stream and the plans: the memory check must refuse.
        const size_t leave = dims.residentBytes() / 2 + (size_t(32) << 20);
        QVERIFY(freeBytes > leave);
        {
            // The hog itself may fail (another process took memory meanwhile): that is a failed test, not
            // an exception escaping the suite.
            std::unique_ptr<gpu::DeviceBuffer<char>> hog;
            try {
                hog = std::make_unique<gpu::DeviceBuffer<char>>(freeBytes - leave);
            } catch (const gpu::CudaError& error) {
                QFAIL(
                    qPrintable(QStringLiteral("could not take the memory to leave too little: %1").arg(QString::fromLatin1(error.what()))));
            }
            try {
                makeEvaluator(BackendKind::Gpu, problem, options(Precision::Double), GradientKind::Adjoint);
                QFAIL("the evaluator was made in half the memory it needs");
            } catch (const BackendUnavailable& error) {
                const QString what = QString::fromLatin1(error.what());
                qInfo("%s", error.what());
                QVERIFY2(what.contains(QLatin1String("out of GPU memory")) && what.contains(QLatin1String("512 x 512"))
                             && what.contains(QLatin1String("--backend cpu")),
                         qPrintable(what));
            }
        }
        auto cpu = makeEvaluator(BackendKind::Cpu, problem, options(Precision::Double), GradientKind::Adjoint);
        auto gpu = makeEvaluator(BackendKind::Gpu, problem, options(Precision::Double), GradientKind::Adjoint);
        const std::vector<double> x = randomParameters(*problem, 5);
        WFS_VERIFY_CLOSE(gpu->evaluate(x.data(), nullptr), cpu->evaluate(x.data(), nullptr), 1e-10, 0.0);
    }
};

QTEST_GUILESS_MAIN(TestGpuModel)
#include "tst_gpumodel.moc"
