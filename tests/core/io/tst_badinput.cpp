// Bad input gives a clear error and no crash: NaN/Inf pixels, all-zero images, planes of different
// sizes, order above 15, non-positive wavelength, unreadable or truncated FITS files. Also FITS
// reading of scaled integer images (BZERO/BSCALE) and BLANK pixels, and data that only look fittable (scaled to
// 1e-300, negated: issue 28) said and left out.
#include "TestSupport.h"

#include "engine/Presets.h"
#include "io/Dataset.h"
#include "io/Fits.h"

#include <QTemporaryDir>

#include <fitsio.h>

#include <fstream>
#include <limits>

using namespace wfs;

namespace {
ProblemSpec smallSpec()
{
    PresetOptions options;
    options.grid = 32;
    options.order = 2;
    return makePreset("demo", options).spec;
}

// Runs `make` expecting std::invalid_argument whose message contains `fragment`.
template <class F>
bool failsWith(F make, const std::string& fragment, std::string* message = nullptr)
{
    try {
        make();
    } catch (const std::exception& e) {
        if (message)
            *message = e.what();
        return std::string(e.what()).find(fragment) != std::string::npos;
    }
    return false;
}

bool contains(const std::string& text, const char* part)
{
    return text.find(part) != std::string::npos;
}
} // namespace

class TestBadInput : public QObject {
    Q_OBJECT

private slots:
    void nanPixelsAreMaskedAndInfIsRefused()
    {
        ProblemSpec spec = smallSpec();
        spec.planes[0].data.at(3, 4) = std::numeric_limits<double>::quiet_NaN();
        const Problem problem(spec);
        const int n = problem.gridSize();
        QCOMPARE(problem.weights(0)[size_t(3) * size_t(n) + 4], 0.0); // masked, not fitted
        spec.planes[1].data.at(5, 5) = std::numeric_limits<double>::infinity();
        std::string message;
        QVERIFY(failsWith([&] { Problem p(spec); }, "is infinite", &message));
        QVERIFY2(message.find("row 5") != std::string::npos, message.c_str());
    }

    void allNanOrAllZeroPlanesAreRefused()
    {
        ProblemSpec spec = smallSpec();
        std::fill(spec.planes[2].data.pixels.begin(), spec.planes[2].data.pixels.end(), 0.0);
        QVERIFY(failsWith([&] { Problem p(spec); }, "all zero"));
        std::fill(spec.planes[2].data.pixels.begin(), spec.planes[2].data.pixels.end(), std::numeric_limits<double>::quiet_NaN());
        QVERIFY(failsWith([&] { Problem p(spec); }, "masked or NaN"));
    }

    void planesOfDifferentSizesAreRefused()
    {
        ProblemSpec spec = smallSpec();
        spec.planes[1].data = Image(30, 32, 1.0);
        QVERIFY(failsWith([&] { Problem p(spec); }, "different sizes"));
        spec = smallSpec();
        for (PlaneSpec& plane : spec.planes)
            plane.data = Image(40, 40, 1.0);
        QVERIFY(failsWith([&] { Problem p(spec); }, "larger than the model grid"));
    }

    void badModelParametersAreRefused()
    {
        ProblemSpec spec = smallSpec();
        spec.basis.maxOrder = 16;
        QVERIFY(failsWith([&] { Problem p(spec); }, "between 1 and 15"));
        spec = smallSpec();
        spec.wavelength = 0.0;
        QVERIFY(failsWith([&] { Problem p(spec); }, "wavelength must be positive"));
        spec = smallSpec();
        spec.grid.size = 31;
        QVERIFY(failsWith([&] { Problem p(spec); }, "even number"));
        spec = smallSpec();
        spec.grid = PupilGrid::centred(32, 0.8);
        QVERIFY(failsWith([&] { Problem p(spec); }, "does not fit"));
        spec = smallSpec();
        spec.pupil.obscuration = 1.2;
        QVERIFY(failsWith([&] { Problem p(spec); }, "obscuration"));
    }

    void missingAndCorruptFitsFiles()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        std::string message;
        QVERIFY(failsWith([&] { readFits(dir.filePath(QStringLiteral("absent.fits")).toStdString()); }, "file not found"));

        const std::string garbage = dir.filePath(QStringLiteral("garbage.fits")).toStdString();
        std::ofstream(garbage) << "this is not a FITS file at all";
        QVERIFY(failsWith([&] { readFits(garbage); }, "not a readable FITS file", &message));
        QVERIFY2(message.find(garbage) != std::string::npos, "the message names the file");

        // A valid file cut in the middle of its data.
        const std::string good = dir.filePath(QStringLiteral("good.fits")).toStdString();
        writeFits(good, {Image(64, 64, 2.0), Image(64, 64, 3.0)}, {}, false, false);
        QCOMPARE(readFits(good).planes.size(), size_t(2));
        std::ifstream in(good, std::ios::binary);
        std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        const std::string truncated = dir.filePath(QStringLiteral("truncated.fits")).toStdString();
        std::ofstream(truncated, std::ios::binary).write(bytes.data(), std::streamsize(bytes.size() / 2));
        QVERIFY(failsWith([&] { readFits(truncated); }, "truncated", &message) || failsWith([&] { readFits(truncated); }, "unreadable"));

        // Existing files are not overwritten silently.
        QVERIFY(failsWith([&] { writeFits(good, {Image(8, 8, 1.0)}, {}, false, false); }, "refusing to overwrite"));
        QCOMPARE(readFits(good).planes.front().width, 64); // untouched
    }

    void scaledIntegersAndBlankPixels()
    {
        // A 16-bit unsigned camera image: BITPIX 16 with BZERO 32768, and a BLANK pixel.
        QTemporaryDir dir;
        const std::string path = dir.filePath(QStringLiteral("camera.fits")).toStdString();
        int status = 0;
        fitsfile* f = nullptr;
        fits_create_file(&f, path.c_str(), &status);
        long axes[2] = {4, 3};
        fits_create_img(f, USHORT_IMG, 2, axes, &status); // CFITSIO writes BZERO = 32768
        unsigned short pixels[12];
        for (int i = 0; i < 12; ++i)
            pixels[i] = static_cast<unsigned short>(60000 + i);
        fits_write_img(f, TUSHORT, 1, 12, pixels, &status);
        fits_close_file(f, &status);
        QCOMPARE(status, 0);
        const FitsContent content = readFits(path);
        QCOMPARE(content.planes.size(), size_t(1));
        QCOMPARE(content.planes[0].width, 4);
        QCOMPARE(content.planes[0].height, 3);
        QCOMPARE(content.planes[0].at(0, 0), 60000.0); // row 0 is the first FITS row (the bottom)
        QCOMPARE(content.planes[0].at(2, 3), 60011.0);

        const std::string blank = dir.filePath(QStringLiteral("blank.fits")).toStdString();
        fits_create_file(&f, blank.c_str(), &status);
        fits_create_img(f, SHORT_IMG, 2, axes, &status);
        long blankValue = -32768;
        fits_update_key(f, TLONG, "BLANK", &blankValue, "no data", &status);
        double scale = 2.0, zero = 10.0;
        fits_update_key(f, TDOUBLE, "BSCALE", &scale, nullptr, &status);
        fits_update_key(f, TDOUBLE, "BZERO", &zero, nullptr, &status);
        fits_set_bscale(f, 1.0, 0.0, &status); // write raw stored values
        short raw[12] = {1, 2, 3, -32768, 5, 6, 7, 8, 9, 10, 11, 12};
        fits_write_img(f, TSHORT, 1, 12, raw, &status);
        fits_close_file(f, &status);
        QCOMPARE(status, 0);
        const Image img = readFits(blank).planes.front();
        QCOMPARE(img.at(0, 0), 12.0); // 2 * 1 + 10
        QVERIFY(std::isnan(img.at(0, 3)));
    }

    void cubesAndSeveralHdus()
    {
        QTemporaryDir dir;
        const std::string path = dir.filePath(QStringLiteral("cube.fits")).toStdString();
        writeFits(path, {Image(8, 8, 1.0), Image(8, 8, 2.0), Image(8, 8, 3.0)}, {{"WAVELENG", 5e-7, "[m]"}}, true, false);
        // Append an image extension.
        int status = 0;
        fitsfile* f = nullptr;
        fits_open_file(&f, path.c_str(), READWRITE, &status);
        long axes[2] = {8, 8};
        fits_create_img(f, DOUBLE_IMG, 2, axes, &status);
        double values[64];
        std::fill(values, values + 64, 4.0);
        fits_write_img(f, TDOUBLE, 1, 64, values, &status);
        fits_close_file(f, &status);
        QCOMPARE(status, 0);
        const FitsContent content = readFits(path);
        QCOMPARE(content.planes.size(), size_t(4));
        QCOMPARE(content.planes[3].at(0, 0), 4.0);
        QCOMPARE(content.planes[1].at(7, 7), 2.0);
        WFS_VERIFY_CLOSE(content.numbers.at("WAVELENG"), 5e-7, 1e-12, 0.0);
    }

    void degenerateDataAreNamed()
    {
        std::vector<double> psf(64);
        for (size_t i = 0; i < psf.size(); ++i)
            psf[i] = 100.0 * std::exp(-0.1 * double((i % 8 - 4) * (i % 8 - 4) + (i / 8 - 4) * (i / 8 - 4))) + 2.0;
        QVERIFY2(unusablePlaneReason(psf).empty(), unusablePlaneReason(psf).c_str());
        auto scaled = [&](double factor) {
            std::vector<double> v = psf;
            for (double& x : v)
                x *= factor;
            return unusablePlaneReason(v);
        };
        // BSCALE = 1E-300: its squares underflow, every model "fits" with cost 0 (before: converged, Strehl 1.000).
        const std::string tiny = scaled(1e-300);
        QVERIFY2(contains(tiny, "at most 1.02e-298") && contains(tiny, "at least 1e-150") && contains(tiny, "BSCALE"), tiny.c_str());
        QVERIFY(scaled(1e-100).empty()); // small units are fine
        // BSCALE = -1: a negative intensity image.
        const std::string negated = scaled(-1.0);
        QVERIFY2(contains(negated, "the pixels sum to -") && contains(negated, "negative BSCALE"), negated.c_str());
        // The earlier reasons keep their words.
        QVERIFY(contains(unusablePlaneReason(std::vector<double>(64, 0.0)), "the plane is all zero"));
        QVERIFY(contains(unusablePlaneReason(std::vector<double>(64, std::nan(""))), "NaN or blank"));
    }
};

QTEST_APPLESS_MAIN(TestBadInput)
#include "tst_badinput.moc"
