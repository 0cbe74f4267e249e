// Issue 46: the PSF model exports other programs load (io/SplineCalibration.h, io/Hdf5Model.h, the 3-D PSF TIFF's
// voxel size in io/Exports.h). The independent readers (scipy.io.loadmat, h5py, tifffile) are python/tests/
// test_psf_exports.py's; here:
// - the tricubic coefficients: through every sample (to float precision), exact for a cubic (the not-a-knot spline
//   reproduces polynomials of degree 3 up to the grid's edges), continuous across a cell face, and close to a smooth
//   Gaussian between the samples;
// - the PSF stack's ImageJ TIFF and OME-TIFF read back by the program's own readers (io/Dataset.h) with the pixel size
//   and z step written;
// - what a spline needs said by name: the pixel size, a z step, square planes;
// - the HDF5 file is the same bytes for the same model (no clock in it).
#include "TestSupport.h"

#include "fit/PsfStack.h"
#include "fit/Results.h"
#include "io/Dataset.h"
#include "io/ExportKinds.h"
#include "io/Exports.h"
#include "io/Hdf5Model.h"
#include "io/SplineCalibration.h"

#include <QFile>
#include <QTemporaryDir>

#include <hdf5.h>

#include <cmath>

using namespace wfs;

namespace {

constexpr double kNa = 1.1, kIndex = 1.33, kWavelength = 605e-9, kPixel = 100e-9;

// The spline at 0-based coordinates s (column-major coefficients, dimension sizes n - 1 cells).
double evaluate(const std::vector<float>& coeff, std::array<int, 3> n, std::array<double, 3> s)
{
    int cell[3];
    double t[3];
    for (int d = 0; d < 3; ++d) {
        cell[d] = std::min(int(std::floor(s[d])), n[d] - 2);
        t[d] = s[d] - cell[d];
    }
    const size_t cells = size_t(n[0] - 1) * size_t(n[1] - 1) * size_t(n[2] - 1);
    const size_t at = size_t(cell[0]) + size_t(n[0] - 1) * (size_t(cell[1]) + size_t(n[1] - 1) * size_t(cell[2]));
    double sum = 0.0;
    for (int p3 = 0; p3 < 4; ++p3)
        for (int p2 = 0; p2 < 4; ++p2)
            for (int p1 = 0; p1 < 4; ++p1)
                sum += coeff[at + cells * size_t(p1 + 4 * p2 + 16 * p3)] * std::pow(t[0], p1) * std::pow(t[1], p2) * std::pow(t[2], p3);
    return sum;
}

std::vector<double> sampled(std::array<int, 3> n, double (*f)(double, double, double))
{
    std::vector<double> v(size_t(n[0]) * size_t(n[1]) * size_t(n[2]));
    for (int k = 0; k < n[2]; ++k)
        for (int j = 0; j < n[1]; ++j)
            for (int i = 0; i < n[0]; ++i)
                v[size_t(i) + size_t(n[0]) * (size_t(j) + size_t(n[1]) * size_t(k))] = f(i, j, k);
    return v;
}

double cubic(double x, double y, double z)
{
    return 0.001 * (x * x * x - 0.5 * y * y * z + 0.3 * x * y * z + 2.0 * y - z + 0.2 * z * z * z - 4.0 * x * x) + 1.0;
}

double gaussian(double x, double y, double z)
{
    return std::exp(-((x - 7.3) * (x - 7.3) + (y - 6.8) * (y - 6.8)) / (2.0 * 2.2 * 2.2) - (z - 5.1) * (z - 5.1) / (2.0 * 3.0 * 3.0));
}

// A microscope as the bead stack's README fit has it: NA 1.1 water, 605 nm, 100 nm pixels, some astigmatism and coma,
// the high-NA defocus in lengths.
Problem microscope(int size)
{
    ProblemSpec s;
    s.grid = PupilGrid::centred(size + size % 2, kWavelength / (2.0 * kNa * kPixel));
    s.basis.maxOrder = 3;
    s.basis.start = {0.0, 0.0, 0.0, 0.1, 0.4, -0.2, 0.3};
    s.wavelength = kWavelength;
    PlaneSpec plane;
    plane.diversity.kind = DiversityKind::AxialHighNa;
    plane.diversity.numericalAperture = kNa;
    plane.diversity.immersionIndex = kIndex;
    s.planes = {plane};
    return Problem(s);
}

PsfStack microscopeStack(int crop, const std::vector<double>& z)
{
    const Problem problem = microscope(32);
    PsfStackRequest request;
    request.defocus = z;
    request.crop = crop;
    return psfStack(problem, problem.initialParameters(), request);
}

std::vector<double> range(double start, double step, int count)
{
    std::vector<double> v;
    for (int i = 0; i < count; ++i)
        v.push_back(start + step * i);
    return v;
}

ExportContext microscopeContext()
{
    ExportContext context;
    context.samplePixelPitch = kPixel;
    context.numericalAperture = kNa;
    context.immersionIndex = kIndex;
    return context;
}

FitResult namedResult()
{
    FitResult r;
    r.problemName = "bead <test> & co";
    r.wavelength = kWavelength;
    CoefficientResult astigmatism;
    astigmatism.index = 5;
    astigmatism.mode = {2, -2};
    astigmatism.waves = 0.05;
    r.coefficients = {astigmatism};
    return r;
}

} // namespace

class TestPsfExports : public QObject {
    Q_OBJECT

private slots:
    void splineThroughEverySample()
    {
        const std::array<int, 3> n = {9, 8, 7};
        const std::vector<double> f = sampled(n, gaussian);
        const std::vector<float> coeff = tricubicCoefficients(f, n);
        QCOMPARE(coeff.size(), size_t(8 * 7 * 6 * 64));
        double worst = 0.0;
        for (int k = 0; k < n[2]; ++k)
            for (int j = 0; j < n[1]; ++j)
                for (int i = 0; i < n[0]; ++i)
                    worst = std::max(worst, std::abs(evaluate(coeff, n, {double(i), double(j), double(k)}) - gaussian(i, j, k)));
        QVERIFY2(worst < 1e-6, qPrintable(QString::number(worst)));
    }

    void splineReproducesACubic()
    {
        // The not-a-knot spline of a cubic is that cubic, in every cell up to the grid's edges (to float precision).
        const std::array<int, 3> n = {8, 9, 5};
        const std::vector<float> coeff = tricubicCoefficients(sampled(n, cubic), n);
        double worst = 0.0;
        for (double x = 0.0; x <= n[0] - 1; x += 0.37)
            for (double y = 0.0; y <= n[1] - 1; y += 0.41)
                for (double z = 0.0; z <= n[2] - 1; z += 0.29)
                    worst = std::max(worst, std::abs(evaluate(coeff, n, {x, y, z}) - cubic(x, y, z)));
        QVERIFY2(worst < 1e-5, qPrintable(QString::number(worst)));
        // Three and two samples along an axis: a parabola and a line.
        for (const std::array<int, 3>& small : {std::array<int, 3>{3, 4, 2}, std::array<int, 3>{2, 3, 4}}) {
            const std::vector<float> c = tricubicCoefficients(sampled(small, gaussian), small);
            for (int k = 0; k < small[2]; ++k)
                QVERIFY(std::abs(evaluate(c, small, {1.0, 1.0, double(k)}) - gaussian(1, 1, k)) < 1e-6);
        }
    }

    void splineIsContinuousAndSmoothBetweenSamples()
    {
        const std::array<int, 3> n = {15, 14, 11};
        const std::vector<float> coeff = tricubicCoefficients(sampled(n, gaussian), n);
        // Across a cell face: the value from either side.
        for (double face : {3.0, 4.0, 8.0}) {
            const double below = evaluate(coeff, n, {face - 1e-9, 6.4, 5.3}), above = evaluate(coeff, n, {face, 6.4, 5.3});
            QVERIFY(std::abs(below - above) < 1e-6);
        }
        // Between samples a Gaussian of 2.2 samples' sigma is interpolated to 0.5 % of its peak.
        double worst = 0.0;
        for (double x = 0.5; x < n[0] - 1; x += 1.0)
            for (double y = 0.5; y < n[1] - 1; y += 1.0)
                for (double z = 0.5; z < n[2] - 1; z += 1.0)
                    worst = std::max(worst, std::abs(evaluate(coeff, n, {x, y, z}) - gaussian(x, y, z)));
        QVERIFY2(worst < 0.005, qPrintable(QString::number(worst)));
        QVERIFY(worst > 1e-5); // not the samples themselves
    }

    void splineVolumeIsTheStackTopFirstNormalisedAtFocus()
    {
        const PsfStack stack = microscopeStack(16, range(-0.6e-6, 0.2e-6, 7));
        const SplineVolume v = splineVolume(stack, microscopeContext());
        QCOMPARE(v.size, 16);
        QCOMPARE(v.planes, 7);
        QCOMPARE(v.x0, 9.0); // axis at 0-based 8 = N / 2, 1-based 9
        QVERIFY(std::abs(v.z0 - 3.0) < 1e-9);
        QVERIFY(std::abs(v.dz - 0.2e-6) < 1e-15);
        QCOMPARE(v.focusPlane, size_t(3));
        double sum = 0.0;
        for (int i = 0; i < 16 * 16; ++i)
            sum += v.samples[size_t(i) + 16 * 16 * 3];
        QVERIFY(std::abs(sum - 1.0) < 1e-12);
        // Dimension 1 is the rows top first: sample (top row r, column c) of plane k is the stack's row N - 1 - r of the
        // plane laid out top first.
        const Image page = psfStackTopFirstPlane(stack, 5);
        double scale = 0.0;
        for (double p : psfStackTopFirstPlane(stack, 3).pixels)
            scale += p;
        for (int r : {0, 3, 8, 15})
            for (int c : {0, 5, 8, 12})
                QVERIFY(std::abs(v.samples[size_t(r) + 16 * (size_t(c) + 16 * 5)] - page.at(15 - r, c) / scale) < 1e-15);
    }

    void splineSaysWhatIsMissing()
    {
        const PsfStack stack = microscopeStack(16, range(-0.4e-6, 0.2e-6, 5));
        const FitResult result = namedResult();
        const std::string noPixel = test::errorOf([&] { splineMatBytes(stack, result, ExportContext{}); });
        QVERIFY2(noPixel.find("pixel size") != std::string::npos && noPixel.find("--pixel-scale") != std::string::npos, noPixel.c_str());
        const std::string uneven = test::errorOf([&] {
            splineMatBytes(microscopeStack(16, {-0.4e-6, 0.0, 0.1e-6}), result, microscopeContext());
        });
        QVERIFY2(uneven.find("z step") != std::string::npos, uneven.c_str());
        const std::string single = test::errorOf([&] { splineMatBytes(microscopeStack(16, {0.0}), result, microscopeContext()); });
        QVERIFY2(single.find("at least 2 planes") != std::string::npos, single.c_str());
        // Through the export table the same message, not a crash.
        const ExportContext none;
        const ResultExportSources sources{result, none, PhaseUnit::Radians, PhaseUnit::Waves, false, false, &stack};
        const std::string viaTable = test::errorOf([&] { dataExportBytes(ExportKind::SplineMat, "a.mat", sources); });
        QVERIFY2(viaTable.find("pixel size") != std::string::npos, viaTable.c_str());
        // With everything known: a MATLAB 5 file.
        const QByteArray mat = splineMatBytes(stack, result, microscopeContext());
        QVERIFY(mat.startsWith("MATLAB 5.0 MAT-file"));
    }

    void tiffStacksCarryTheirVoxelSize()
    {
        const PsfStack stack = microscopeStack(20, range(-0.5e-6, 0.25e-6, 5));
        const FitResult result = namedResult();
        QTemporaryDir dir;
        for (const bool ome : {false, true}) {
            const QString path = dir.filePath(ome ? QStringLiteral("psf.ome.tif") : QStringLiteral("psf.tif"));
            QFile f(path);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write(psfStackTiffBytes(stack, result, microscopeContext(), ome));
            f.close();
            Dataset data;
            addFiles(data, {path.toStdString()});
            QVERIFY2(data.metadata.pixelPitch && data.metadata.zStep, qPrintable(path));
            QVERIFY2(std::abs(*data.metadata.pixelPitch - kPixel) < 1e-15, qPrintable(QString::number(*data.metadata.pixelPitch)));
            QVERIFY(std::abs(*data.metadata.zStep - 0.25e-6) < 1e-15);
            if (ome) {
                QVERIFY(data.metadata.numericalAperture && std::abs(*data.metadata.numericalAperture - kNa) < 1e-9);
                QVERIFY(data.metadata.wavelength && std::abs(*data.metadata.wavelength - kWavelength) < 1e-15);
            }
        }
        // Without the pixel size: the z step alone, no resolution tags.
        const std::string plain = psfStackTiffBytes(stack, result).toStdString();
        QVERIFY(plain.find("spacing=0.25\n") != std::string::npos);
        QVERIFY(plain.find("unit=micron\n") != std::string::npos);
    }

    void hdf5IsTheSameBytesForTheSameModel()
    {
        const PsfStack stack = microscopeStack(12, range(-0.2e-6, 0.2e-6, 3));
        const FitResult result = namedResult();
        const QByteArray a = hdf5ModelBytes(stack, result, microscopeContext()), b = hdf5ModelBytes(stack, result, microscopeContext());
        QVERIFY(a.startsWith("\x89HDF\r\n\x1a\n"));
        QVERIFY(a == b);
        // No clock in it: the objects carry no times (libhdf5 stores them by default, to the second).
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("model.h5"));
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly) && f.write(a) == a.size());
        f.close();
        const hid_t file = H5Fopen(path.toUtf8().constData(), H5F_ACC_RDONLY, H5P_DEFAULT);
        QVERIFY(file >= 0);
        for (const char* object : {"psf/stack", "psf", "zernike/value", "/"}) {
            H5O_info_t info{};
            QVERIFY(H5Oget_info_by_name2(file, object, &info, H5O_INFO_TIME, H5P_DEFAULT) >= 0);
            QVERIFY2(info.ctime == 0 && info.mtime == 0, object);
        }
        H5Fclose(file);
    }
};

QTEST_GUILESS_MAIN(TestPsfExports)
#include "tst_psfexports.moc"
