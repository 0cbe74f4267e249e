// The GPU backend's vectorial model (issue 24): every field of every plane in the two batched cuFFT plans, their
// intensities summed, their adjoints summed into one pupil field for the gather, the emitter's depth fitted through
// the factors the device forms from core's matrix, depth rate and coverslip phase (optics/Vectorial.h).
//
// Without a device: the device layout of the fields, the translation of core's factors, the backend factory's
// refusals, and the whole evaluation emulated on the host (GpuEmulation.h: the kernels' per-sample functions and
// FFTW plans of the cuFFT plans' layout) against the CPU backend: cost and gradient to 1e-10 relative in float64
// (component-wise), 1e-4 of the largest scaled component in float32; model images to 1e-12 (float64) and 1e-5
// (float32) of the peak. With a device, the same comparisons on the GPU; those cases QSKIP without one.
#include "ModelFixtures.h"

#include "GpuEmulation.h"
#include "engine/BackendFactory.h"
#include "gpu/GpuDevice.h"
#include "gpu/model/ModelTranslation.h"

#include <complex>
#include <set>

using namespace wfs;

namespace {

bool haveDevice()
{
    return gpu::probeDevices().status == gpu::DeviceProbe::Status::Ok;
}

// Which parts of the model a case switches on besides the vectorial fields.
struct VectorialCase {
    ObjectiveKind objective = ObjectiveKind::LeastSquares;
    bool freeDipole = true;
    bool fitDepth = true;
    bool pupilFunction = false; // zonal phase and amplitude, defocus scale and offsets (the device's hostPupil)
    bool blur = false;          // pixel integration and a bead's size (the device's intensity path)
    bool spectrum = false;      // three wavelengths 10 % apart, each with its fields on its own grid
};

// The rich problem (every parameter kind) under the vectorial model: an oil objective of NA 1.45 above the water
// sample's index (supercritical light), an emitter 0.6 um deep, a fixed dipole at theta 57 deg, phi 23 deg.
std::shared_ptr<const Problem> vectorialProblem(const VectorialCase& c)
{
    ProblemSpec s = test::richSpec(c.objective, 32, 4);
    s.model = ImagingModel::Vectorial;
    s.vectorial.numericalAperture = 1.45;
    s.vectorial.immersionIndex = 1.515;
    s.vectorial.sampleIndex = 1.33;
    s.vectorial.emitterDepth = 0.6e-6;
    s.vectorial.fitEmitterDepth = c.fitDepth;
    s.vectorial.dipole.free = c.freeDipole;
    s.vectorial.dipole.theta = 1.0;
    s.vectorial.dipole.phi = 0.4;
    for (PlaneSpec& plane : s.planes)
        if (plane.diversity.kind == DiversityKind::AxialHighNa || plane.diversity.kind == DiversityKind::AxialParaxial) {
            plane.diversity.numericalAperture = 1.45;
            plane.diversity.immersionIndex = 1.515;
        }
    if (c.pupilFunction) {
        s.pupil.illumination = Illumination{};
        s.phaseModel = PupilPhaseModel::Both;
        s.amplitudeModel = PupilAmplitudeModel::Zonal;
        s.regularization = 3.0;
        s.nuisance.fitDefocusScale = s.nuisance.fitDefocusOffsets = true;
        s.planes.push_back(s.planes[1]);
        s.planes.back().diversity.axialDistance = -0.3e-6;
    }
    if (c.blur) {
        s.detector.pixelIntegration = true;
        s.detector.objectDiameterPixels = 1.7;
    }
    if (c.spectrum) {
        s.spectrum.bandwidth = 0.1 * s.wavelength;
        s.spectrum.samples = 3;
    }
    return test::richProblemFrom(s, 28, 11);
}

VectorialCase namedCase(const QString& name)
{
    VectorialCase c;
    if (name.contains(QLatin1String("poisson")))
        c.objective = ObjectiveKind::Poisson;
    if (name.contains(QLatin1String("weighted")))
        c.objective = ObjectiveKind::WeightedLeastSquares;
    c.freeDipole = !name.contains(QLatin1String("fixed"));
    c.fitDepth = !name.contains(QLatin1String("depth held"));
    c.pupilFunction = name.contains(QLatin1String("pupil function"));
    c.blur = name.contains(QLatin1String("detector"));
    c.spectrum = name.contains(QLatin1String("spectrum"));
    return c;
}

const char* const kCases[] = {"free, poisson",
                              "fixed, least-squares",
                              "free, weighted, depth held",
                              "fixed, poisson, depth held",
                              "free, pupil function, poisson",
                              "free, detector, weighted",
                              "fixed, detector, pupil function, least-squares",
                              "free, spectrum, weighted",
                              "fixed, spectrum, detector, poisson",
                              "free, spectrum, pupil function, depth held, least-squares"};

using test::randomParameters;

EvaluatorOptions options(Precision precision)
{
    EvaluatorOptions o;
    o.precision = precision;
    o.measurePlans = false;
    return o;
}

int depthIndex(const Problem& problem)
{
    for (size_t i = 0; i < problem.parameters().size(); ++i)
        if (problem.parameters()[i].kind == ParameterKind::EmitterDepth)
            return int(i);
    return -1;
}

} // namespace

class TestGpuVectorial : public QObject {
    Q_OBJECT

private slots:
    // ---- host side: runs everywhere ----

    // F fields per plane side by side: slice f K + k is field f of plane k, each (plane, field, row, column) once, and
    // the two batched plans cover every slice's band rows and columns.
    void fieldLayout()
    {
        for (bool free : {true, false}) {
            VectorialCase c;
            c.freeDipole = free;
            auto problem = vectorialProblem(c);
            const gpu::ModelDims d = gpu::modelDims(*problem, Precision::Double);
            const int fields = free ? 6 : 2;
            QCOMPARE(d.fields, fields);
            QCOMPARE(d.slices(), fields * d.planes);
            QCOMPARE(d.fieldElements(), d.gridElements() * size_t(fields));
            std::set<size_t> seen;
            for (int f = 0; f < fields; ++f)
                for (int k = 0; k < d.planes; ++k)
                    for (int row = 0; row < d.n; ++row)
                        for (int col = 0; col < d.n; ++col) {
                            const size_t e = d.fieldElement(f, k, row, col);
                            QVERIFY(e < d.fieldElements());
                            QVERIFY(seen.insert(e).second);
                        }
            QCOMPARE(seen.size(), d.fieldElements());
            const auto rows = d.bandRowTransforms(), columns = d.columnTransforms();
            QCOMPARE(rows.batch, fields * d.planes * d.bandRows);
            QCOMPARE(rows.offset, d.fieldElement(0, 0, d.rowBegin, 0));
            QCOMPARE(size_t(rows.offset) + size_t(rows.batch) * size_t(rows.distance), d.fieldElement(0, 0, d.rowBegin + d.bandRows, 0));
            QCOMPARE(columns.batch, fields * d.planes * d.n);
            QCOMPARE(columns.stride, fields * d.planes * d.n);
            // The field buffer is F times the scalar model's: the memory per plane the docs state.
            gpu::ModelDims scalar = d;
            scalar.fields = 0;
            const size_t extra = d.residentBytes() - scalar.residentBytes();
            const size_t fieldBytes = d.gridElements() * 16 * size_t(fields - 1);
            const size_t factorBytes = size_t(d.pixels) * size_t(fields + 2) * 16 + size_t(d.pixels) * size_t(fields) * 16;
            QCOMPARE(extra, fieldBytes + factorBytes);
            QVERIFY(d.trafficBytes(true) > double(fields) * scalar.trafficBytes(true) * 0.5);
        }
    }

    // The host sends core's factors unchanged and the depth in the block; the result block's depth row comes back as
    // the depth's gradient.
    void translationCarriesTheFactors()
    {
        auto problem = vectorialProblem({});
        const gpu::ModelInput in = gpu::modelInput(*problem, Precision::Float);
        const gpu::ModelDims& d = in.dims;
        const VectorialPupil& pupil = *problem->vectorial();
        QCOMPARE(in.vectorialMatrix.size(), size_t(6 * d.pixels * 2));
        for (int f = 0; f < 6; ++f)
            for (int p = 0; p < d.pixels; p += 5) {
                const std::complex<double> m = pupil.matrix(f)[size_t(p)];
                QCOMPARE(in.vectorialMatrix[2 * (size_t(f) * size_t(d.pixels) + size_t(p))], m.real());
                QCOMPARE(in.vectorialMatrix[2 * (size_t(f) * size_t(d.pixels) + size_t(p)) + 1], m.imag());
            }
        for (int p = 0; p < d.pixels; ++p) {
            QCOMPARE(in.depthRate[2 * size_t(p)], pupil.depthRate()[size_t(p)].real());
            QCOMPARE(in.depthRate[2 * size_t(p) + 1], pupil.depthRate()[size_t(p)].imag());
            QCOMPARE(in.coverslipPhase[2 * size_t(p) + 1], pupil.coverslipPhase()[size_t(p)].imag());
        }
        // Supercritical light: NA 1.45 above the sample's 1.33, so some depth rates are complex (evanescent decay).
        bool evanescent = false;
        for (const auto& r : pupil.depthRate())
            evanescent = evanescent || r.imag() != 0.0;
        QVERIFY(evanescent);

        std::vector<double> x = randomParameters(*problem, 4);
        const ModelParameters p = problem->unpack(x.data());
        const std::vector<double> block = gpu::parameterBlock(*problem, d, p);
        QCOMPARE(int(block.size()), d.parameterBlockSize());
        QCOMPARE(block[size_t(d.emitterDepth())], p.emitterDepth);
        QVERIFY(p.emitterDepth != 0.6e-6); // moved by the random point
        std::vector<double> result(size_t(d.resultSize()), 0.0), g(x.size());
        result[size_t(d.depthGradient())] = 2.5;
        gpu::costAndGradient(*problem, d, p, result.data(), g.data());
        const int depth = depthIndex(*problem);
        QVERIFY(depth >= 0);
        QCOMPARE(g[size_t(depth)], 2.5);
    }

    // A vectorial problem is the GPU's now, with a spectrum too: without a device the reason given is the missing
    // device (before, every vectorial problem was refused as "not yet" whatever the machine).
    void factoryAcceptsTheVectorialModel()
    {
        for (bool spectrum : {false, true}) {
            VectorialCase c;
            c.spectrum = spectrum;
            auto problem = vectorialProblem(c);
            try {
                auto gpu = makeEvaluator(BackendKind::Gpu, problem, options(Precision::Double), GradientKind::Adjoint);
                QVERIFY(haveDevice());
                QCOMPARE(QString::fromStdString(gpu->info().backend), QStringLiteral("gpu"));
            } catch (const BackendUnavailable& error) {
                QVERIFY2(!haveDevice(), error.what());
                QVERIFY2(QString::fromLatin1(error.what()).startsWith(QLatin1String("no GPU")), error.what());
            }
            const gpu::ModelDims d = gpu::modelDims(*problem, Precision::Double);
            QCOMPARE(d.fields, 6);
            QCOMPARE(d.channels, spectrum ? 3 : 0);
            QCOMPARE(d.factorSets(), spectrum ? 3 : 1);
        }
    }

    void emulationMatchesCpu_data()
    {
        QTest::addColumn<QString>("caseName");
        QTest::addColumn<int>("precision");
        for (const char* name : kCases) {
            QTest::newRow((QByteArray(name) + ", double").constData()) << QString::fromLatin1(name) << int(Precision::Double);
            QTest::newRow((QByteArray(name) + ", float").constData()) << QString::fromLatin1(name) << int(Precision::Float);
        }
    }

    // The device algorithm run on the host against the CPU backend (float64) at two random points: cost, gradient
    // (the depth's included where it is fitted), the cost-only evaluation, and the model images.
    void emulationMatchesCpu()
    {
        QFETCH(QString, caseName);
        QFETCH(int, precision);
        const VectorialCase c = namedCase(caseName);
        auto problem = vectorialProblem(c);
        const bool isDouble = Precision(precision) == Precision::Double;
        const double tolerance = isDouble ? 1e-10 : 1e-4;
        const gpu::ModelInput in = gpu::modelInput(*problem, Precision(precision));
        QCOMPARE(in.dims.fields, c.freeDipole ? 6 : 2);
        QCOMPARE(in.dims.hostPupil, c.pupilFunction || c.spectrum);
        QCOMPARE(in.dims.channels, c.spectrum ? 3 : 0);
        QCOMPARE(in.dims.blur, c.blur);
        const int depth = depthIndex(*problem);
        QCOMPARE(depth >= 0, c.fitDepth);
        auto cpu = makeEvaluator(BackendKind::Cpu, problem, options(Precision::Double), GradientKind::Adjoint);
        for (std::uint64_t seed : {1u, 2u}) {
            const std::vector<double> x = randomParameters(*problem, seed);
            const test::EmulatedPoint e = test::emulatePoint(*problem, in, x);
            std::vector<double> gc(x.size());
            const double cpuCost = cpu->evaluate(x.data(), gc.data());
            QVERIFY(std::isfinite(cpuCost));
            if (depth >= 0) // the depth's derivative is there to be matched
                QVERIFY(gc[size_t(depth)] != 0.0);
            const QString why = test::costGradientMismatch(*problem, e.cost, e.gradient, cpuCost, gc, tolerance, isDouble);
            if (!why.isEmpty())
                QFAIL(qPrintable(QStringLiteral("seed %1: %2").arg(seed).arg(why)));
            WFS_VERIFY_CLOSE(e.costOnly, e.cost, 1e-14, 0.0);
            const QString imageWhy = test::imageMismatch(cpu->modelImages(x.data()), e.images, in.dims.n, isDouble ? 1e-12 : 1e-5);
            if (!imageWhy.isEmpty())
                QFAIL(qPrintable(imageWhy));
        }
    }

    // The fields add as intensities (free dipole) or as amplitudes (fixed): a fixed dipole's image is not the free
    // one's, so the emulation's agreement above is not an accident of the layout.
    void fixedAndFreeDiffer()
    {
        VectorialCase c;
        auto free = vectorialProblem(c);
        c.freeDipole = false;
        auto fixed = vectorialProblem(c);
        const std::vector<double> x = free->initialParameters();
        const std::vector<double> a = test::emulatePoint(*free, gpu::modelInput(*free, Precision::Double), x).images;
        const std::vector<double> b = test::emulatePoint(*fixed, gpu::modelInput(*fixed, Precision::Double), x).images;
        QCOMPARE(a.size(), b.size());
        double difference = 0.0, peak = 0.0;
        for (size_t i = 0; i < a.size(); ++i) {
            difference = std::max(difference, std::abs(a[i] - b[i]));
            peak = std::max(peak, a[i]);
        }
        QVERIFY2(difference > 0.05 * peak, qPrintable(QString::number(difference / peak)));
    }

    // ---- on a device ----

    void matchesCpu_data() { emulationMatchesCpu_data(); }

    // The GPU against the CPU backend at three random points, as the emulation above; with CUDA graphs.
    void matchesCpu()
    {
        if (!haveDevice())
            QSKIP("no CUDA device");
        QFETCH(QString, caseName);
        QFETCH(int, precision);
        auto problem = vectorialProblem(namedCase(caseName));
        const bool isDouble = Precision(precision) == Precision::Double;
        const double tolerance = isDouble ? 1e-10 : 1e-4;
        auto cpu = makeEvaluator(BackendKind::Cpu, problem, options(Precision::Double), GradientKind::Adjoint);
        auto gpu = makeEvaluator(BackendKind::Gpu, problem, options(Precision(precision)), GradientKind::Adjoint);
        QCOMPARE(QString::fromStdString(gpu->info().launch), QStringLiteral("graph"));
        for (std::uint64_t seed : {1u, 2u, 3u}) {
            const std::vector<double> x = randomParameters(*problem, seed);
            std::vector<double> gc(x.size()), gg(x.size());
            const double cc = cpu->evaluate(x.data(), gc.data());
            const double cg = gpu->evaluate(x.data(), gg.data());
            const QString why = test::costGradientMismatch(*problem, cg, gg, cc, gc, tolerance, isDouble);
            if (!why.isEmpty())
                QFAIL(qPrintable(QStringLiteral("seed %1: %2").arg(seed).arg(why)));
            WFS_VERIFY_CLOSE(gpu->evaluate(x.data(), nullptr), cg, isDouble ? 1e-14 : 1e-6, 0.0);
            std::vector<double> images;
            for (const std::vector<double>& plane : gpu->modelImages(x.data()))
                images.insert(images.end(), plane.begin(), plane.end());
            const QString imageWhy = test::imageMismatch(cpu->modelImages(x.data()), images, problem->gridSize(), isDouble ? 1e-12 : 1e-5);
            if (!imageWhy.isEmpty())
                QFAIL(qPrintable(imageWhy));
        }
    }
};

QTEST_GUILESS_MAIN(TestGpuVectorial)
#include "tst_gpuvectorial.moc"
