// Exports read back by readers that share no code with the program: astropy for FITS and Python's
// csv and json modules (tests/core/read_exports.py, run with python3), libpng for the PNG's pixels.
// Values are compared with the fit they came from: every pixel of the phase map and of the model
// cube (exactly, float64), every row of the CSV and of the JSON (to the digits written), and the PNG's
// decoded pixels with the rendered picture, plus its orientation (row 0 of the map drawn at the bottom).
#include "ModelFixtures.h"
#include "TestSupport.h"

#include "engine/Presets.h"
#include "engine/ReconstructionEngine.h"
#include "io/Exports.h"
#include "PhaseImage.h"
#include "io/ResultJson.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>

#include <png.h>

#include <cmath>
#include <cstdio>

using namespace wfs;
using namespace wfs::test;

namespace {

const FitResult& smallResult()
{
    return smallDemoResult();
}

struct DecodedPng {
    int width = 0, height = 0;
    std::vector<std::uint8_t> rgb; // 3 bytes per pixel, top row first (as PNG stores them)
    std::string error;
};

// libpng's simplified API, converting whatever the file holds to 8-bit RGB.
DecodedPng decodePng(const std::string& path)
{
    DecodedPng out;
    png_image image{};
    image.version = PNG_IMAGE_VERSION;
    if (!png_image_begin_read_from_file(&image, path.c_str())) {
        out.error = image.message;
        return out;
    }
    image.format = PNG_FORMAT_RGB;
    out.rgb.resize(PNG_IMAGE_SIZE(image));
    if (!png_image_finish_read(&image, nullptr, out.rgb.data(), 0, nullptr)) {
        out.error = image.message;
        png_image_free(&image);
        return out;
    }
    out.width = int(image.width);
    out.height = int(image.height);
    return out;
}

std::array<std::uint8_t, 3> pixelAt(const DecodedPng& png, int x, int y)
{
    const size_t i = (size_t(y) * size_t(png.width) + size_t(x)) * 3;
    return {png.rgb[i], png.rgb[i + 1], png.rgb[i + 2]};
}

// Compares a FITS plane as astropy read it (rows as stored: FITS row 0 first) with an image.
bool samePlane(const QJsonArray& rows, const Image& image, QString* why)
{
    if (rows.size() != image.height) {
        *why = QStringLiteral("%1 rows, expected %2").arg(rows.size()).arg(image.height);
        return false;
    }
    for (int r = 0; r < image.height; ++r) {
        const QJsonArray row = rows.at(r).toArray();
        if (row.size() != image.width) {
            *why = QStringLiteral("row %1 has %2 columns").arg(r).arg(row.size());
            return false;
        }
        for (int c = 0; c < image.width; ++c) {
            const double expected = image.at(r, c);
            const QJsonValue v = row.at(c);
            const bool ok = std::isnan(expected) ? v.isNull() : (v.isDouble() && v.toDouble() == expected);
            if (!ok) {
                *why = QStringLiteral("pixel (row %1, column %2): astropy %3, program %4").arg(r).arg(c).arg(v.toDouble()).arg(expected);
                return false;
            }
        }
    }
    return true;
}

} // namespace

class TestExportReaders : public QObject {
    Q_OBJECT

private slots:
    void fitsCsvJsonThroughPython()
    {
        const FitResult& r = smallResult();
        QTemporaryDir dir;
        const QString phase = dir.filePath(QStringLiteral("phase.fits")), model = dir.filePath(QStringLiteral("model.fits"));
        const QString csv = dir.filePath(QStringLiteral("c.csv")), json = dir.filePath(QStringLiteral("c.json"));
        writePhaseFits(phase.toStdString(), r, {}, {false, PhaseUnit::Radians, false});
        writeModelFits(model.toStdString(), r, {}, false, false);
        writeTextFile(csv, coefficientsCsvBytes(r), false);
        writeTextFile(json, coefficientsJson(r), false);

        QProcess python;
#ifdef WFS_PYTHON3
        const QString interpreter = QStringLiteral(WFS_PYTHON3);
#else
        const QString interpreter = QStringLiteral("python3");
#endif
        python.start(interpreter.isEmpty() || interpreter.endsWith(QLatin1String("NOTFOUND")) ? QStringLiteral("python3") : interpreter, {QStringLiteral(WFS_SOURCE_DIR "/tests/core/read_exports.py"), phase, model, csv, json});
        if (!python.waitForStarted())
            QSKIP("python3 is not installed (scripts/setup.sh installs it)");
        QVERIFY(python.waitForFinished(120000));
        if (python.exitCode() == 77)
            QSKIP(qPrintable(QStringLiteral("python3 lacks astropy or numpy (scripts/setup.sh installs them): ") + QString::fromUtf8(python.readAllStandardError())));
        QVERIFY2(python.exitCode() == 0, python.readAllStandardError().constData());
        QJsonParseError parseError;
        const QJsonObject read = QJsonDocument::fromJson(python.readAllStandardOutput(), &parseError).object();
        QVERIFY2(parseError.error == QJsonParseError::NoError, qPrintable(parseError.errorString()));

        // Phase map: every pixel, NaN outside the pupil, row 0 of the image = first FITS row (bottom).
        const QJsonObject p = read.value(QStringLiteral("phase")).toObject();
        const QJsonObject header = p.value(QStringLiteral("header")).toObject();
        QCOMPARE(header.value(QStringLiteral("BITPIX")).toInt(), -64);
        QCOMPARE(header.value(QStringLiteral("NAXIS1")).toInt(), r.phaseMap.width);
        QCOMPARE(header.value(QStringLiteral("NAXIS2")).toInt(), r.phaseMap.height);
        QCOMPARE(header.value(QStringLiteral("BUNIT")).toString(), QStringLiteral("rad"));
        QCOMPARE(header.value(QStringLiteral("ZORDERNG")).toString(), QStringLiteral("noll"));
        QCOMPARE(header.value(QStringLiteral("ZNORM")).toString(), QStringLiteral("rms"));
        WFS_VERIFY_CLOSE(header.value(QStringLiteral("WAVELENG")).toDouble(), r.wavelength, 1e-12, 0.0);
        WFS_VERIFY_CLOSE(header.value(QStringLiteral("RMSWAVE")).toDouble(), r.rmsWaves, 1e-9, 0.0);
        WFS_VERIFY_CLOSE(header.value(QStringLiteral("ZC4")).toDouble(), r.coefficients[2].waves, 1e-9, 1e-15);
        QString why;
        const QJsonArray phasePlanes = p.value(QStringLiteral("planes")).toArray();
        QCOMPARE(phasePlanes.size(), 1);
        QVERIFY2(samePlane(phasePlanes.at(0).toArray(), r.phaseMap, &why), qPrintable(why));

        // Model cube: one plane per image plane, each pixel exact.
        const QJsonArray modelPlanes = read.value(QStringLiteral("model")).toObject().value(QStringLiteral("planes")).toArray();
        QCOMPARE(modelPlanes.size(), int(r.planes.size()));
        for (size_t k = 0; k < r.planes.size(); ++k)
            QVERIFY2(samePlane(modelPlanes.at(int(k)).toArray(), r.planes[k].model, &why), qPrintable(QStringLiteral("plane %1: ").arg(k) + why));

        // CSV: every row's numbers (written with 10 significant digits; uncertainties with 4).
        const double wavelengthNm = r.wavelength * 1e9;
        const QJsonArray rows = read.value(QStringLiteral("csv")).toArray();
        QCOMPARE(rows.size(), int(r.coefficients.size()));
        for (size_t i = 0; i < r.coefficients.size(); ++i) {
            const CoefficientResult& c = r.coefficients[i];
            const QJsonObject row = rows.at(int(i)).toObject();
            auto number = [&](const char* key) { return row.value(QLatin1String(key)).toString().toDouble(); };
            QCOMPARE(row.value(QStringLiteral("index")).toString().toInt(), c.index);
            QCOMPARE(row.value(QStringLiteral("n")).toString().toInt(), c.mode.n);
            QCOMPARE(row.value(QStringLiteral("m")).toString().toInt(), c.mode.m);
            QCOMPARE(row.value(QStringLiteral("name")).toString(), QString::fromStdString(c.name));
            WFS_VERIFY_CLOSE(number("value_waves"), c.waves, 1e-9, 1e-15);
            WFS_VERIFY_CLOSE(number("value_nm"), c.waves * wavelengthNm, 1e-9, 1e-12);
            WFS_VERIFY_CLOSE(number("value_rad"), c.waves * 2.0 * M_PI, 1e-9, 1e-15);
            WFS_VERIFY_CLOSE(number("uncertainty_waves"), c.uncertaintyWaves, 1e-3, 0.0);
            QCOMPARE(row.value(QStringLiteral("free")).toString(), c.free ? QStringLiteral("yes") : QStringLiteral("no"));
        }

        // JSON: the convention and every coefficient.
        const QJsonObject doc = read.value(QStringLiteral("json")).toObject();
        const QJsonObject convention = doc.value(QStringLiteral("convention")).toObject();
        QCOMPARE(convention.value(QStringLiteral("ordering")).toString(), QStringLiteral("noll"));
        QCOMPARE(convention.value(QStringLiteral("normalization")).toString(), QStringLiteral("rms"));
        WFS_VERIFY_CLOSE(convention.value(QStringLiteral("wavelength_m")).toDouble(), r.wavelength, 1e-12, 0.0);
        const QJsonArray list = doc.value(QStringLiteral("coefficients")).toArray();
        QCOMPARE(list.size(), int(r.coefficients.size()));
        for (size_t i = 0; i < r.coefficients.size(); ++i) {
            const CoefficientResult& c = r.coefficients[i];
            const QJsonObject o = list.at(int(i)).toObject();
            QCOMPARE(o.value(QStringLiteral("index")).toInt(), c.index);
            QCOMPARE(o.value(QStringLiteral("n")).toInt(), c.mode.n);
            QCOMPARE(o.value(QStringLiteral("m")).toInt(), c.mode.m);
            WFS_VERIFY_CLOSE(o.value(QStringLiteral("value_waves")).toDouble(), c.waves, 1e-9, 1e-15);
            WFS_VERIFY_CLOSE(o.value(QStringLiteral("value_nm")).toDouble(), c.waves * wavelengthNm, 1e-9, 1e-12);
            WFS_VERIFY_CLOSE(o.value(QStringLiteral("value_rad")).toDouble(), c.waves * 2.0 * M_PI, 1e-9, 1e-15);
            WFS_VERIFY_CLOSE(o.value(QStringLiteral("uncertainty_waves")).toDouble(), c.uncertaintyWaves, 1e-3, 0.0);
        }
        WFS_VERIFY_CLOSE(doc.value(QStringLiteral("rms_waves")).toDouble(), r.rmsWaves, 1e-9, 0.0);
        WFS_VERIFY_CLOSE(doc.value(QStringLiteral("strehl")).toDouble(), r.strehl, 1e-9, 0.0);
    }

    void pngThroughLibpng()
    {
        // The real fit's picture: libpng's pixels equal the rendered picture's.
        FitResult r = smallResult();
        QTemporaryDir dir;
        const std::string path = dir.filePath(QStringLiteral("phase.png")).toStdString();
        PhaseImageOptions options;
        options.unit = PhaseUnit::Waves;
        options.wavelength = r.wavelength; // what writePhasePng fills in (the caption names it)
        writePhasePng(path, r, options, false);
        const DecodedPng png = decodePng(path);
        QVERIFY2(png.error.empty(), png.error.c_str());
        const QImage rendered = renderPhaseImage(r.phaseMap, options);
        QCOMPARE(png.width, rendered.width());
        QCOMPARE(png.height, rendered.height());
        for (int y = 0; y < png.height; ++y)
            for (int x = 0; x < png.width; ++x) {
                const QRgb q = rendered.pixel(x, y);
                const auto p = pixelAt(png, x, y);
                if (p[0] != qRed(q) || p[1] != qGreen(q) || p[2] != qBlue(q))
                    QFAIL(qPrintable(QStringLiteral("pixel (%1, %2): libpng %3,%4,%5, rendered %6,%7,%8")
                                         .arg(x).arg(y).arg(p[0]).arg(p[1]).arg(p[2]).arg(qRed(q)).arg(qGreen(q)).arg(qBlue(q))));
            }

        // Orientation and colours without Qt on the reading side: a map rising with the row (row 0 at
        // the bottom) is drawn with its highest colour at the top; NaN is white.
        Image ramp(20, 10);
        for (int row = 0; row < 10; ++row)
            for (int col = 0; col < 20; ++col)
                ramp.at(row, col) = 2.0 * M_PI * 0.1 * row; // 0 .. 0.9 waves
        ramp.at(0, 0) = std::nan("");
        r.phaseMap = ramp;
        options.mapSize = 200; // 10 picture pixels per sample
        const std::string rampPath = dir.filePath(QStringLiteral("ramp.png")).toStdString();
        writePhasePng(rampPath, r, options, false);
        const DecodedPng rp = decodePng(rampPath);
        QVERIFY2(rp.error.empty(), rp.error.c_str());
        const int margin = 16; // the map's origin in the picture (no title)
        QCOMPARE(pixelAt(rp, margin + 55, margin + 5), colorMapRgb(ColorMap::Viridis, 1.0));  // top: row 9, the highest
        QCOMPARE(pixelAt(rp, margin + 55, margin + 95), colorMapRgb(ColorMap::Viridis, 0.0)); // bottom: row 0, the lowest
        QCOMPARE(pixelAt(rp, margin + 5, margin + 95), (std::array<std::uint8_t, 3>{255, 255, 255}));
        QCOMPARE(pixelAt(rp, margin + 195, margin + 95), colorMapRgb(ColorMap::Viridis, 0.0)); // row 0, last column: not NaN
    }
};

QTEST_MAIN(TestExportReaders)
#include "tst_exportreaders.moc"
