// Exports read back by readers that share no code with the program: astropy for FITS and Python's
// csv and json modules (tests/core/read_exports.py, run with python3), libpng for the PNG's pixels.
// Values are compared with the fit they came from: every pixel of the phase map and of the model
// cube (exactly, float64), every row of the CSV and of the JSON (to the digits written), and the PNG's
// decoded pixels with the rendered picture, plus its orientation (row 0 of the map drawn at the bottom).
#include "ExportChecks.h"
#include "ModelFixtures.h"
#include "TestSupport.h"

#include "engine/Presets.h"
#include "engine/ReconstructionEngine.h"
#include "io/Exports.h"
#include "io/Provenance.h"
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
#include <map>

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
        const FitResult& oof = smallOofResult();
        QTemporaryDir dir;
        ExportContext context;
        context.samplingQ = 2.0;
        context.apertureDiameter = 0.2;
        PresetOptions small;
        small.grid = 32;
        const PresetCase oofPreset = makePreset("oof", small);
        const ExportContext oofContext = presetExportContext(oofPreset, "oof");
        const std::map<QString, QByteArray> files = {
            {QStringLiteral("phase"), phaseFitsBytes(r, context, {false, PhaseUnit::Radians, false})},
            {QStringLiteral("model"), planesFitsBytes(r, context, false, false)},
            {QStringLiteral("residual"), planesFitsBytes(r, context, false, true)},
            {QStringLiteral("results"), resultsFitsBytes(r, context, false)},
            {QStringLiteral("oofresults"), resultsFitsBytes(oof, oofContext, false)},
            {QStringLiteral("psf"), psfFitsBytes(oof, oofContext, false)},
            {QStringLiteral("simulated"), presetFitsBytes(makePreset("demo", small), "demo", small.seed)},
        };
        QStringList arguments = {QStringLiteral(WFS_SOURCE_DIR "/tests/core/read_exports.py")};
        for (const auto& [name, bytes] : files) {
            const QString path = dir.filePath(name + QStringLiteral(".fits"));
            writeTextFile(path, bytes, false);
            arguments << QStringLiteral("--fits") << name << path;
        }
        const QString csv = dir.filePath(QStringLiteral("c.csv")), json = dir.filePath(QStringLiteral("c.json"));
        writeTextFile(csv, coefficientsCsvBytes(r), false);
        writeTextFile(json, coefficientsJson(r), false);
        arguments << QStringLiteral("--csv") << csv << QStringLiteral("--json") << json;

        QProcess python;
#ifdef WFS_PYTHON3
        const QString interpreter = QStringLiteral(WFS_PYTHON3);
#else
        const QString interpreter = QStringLiteral("python3");
#endif
        python.start(interpreter.isEmpty() || interpreter.endsWith(QLatin1String("NOTFOUND")) ? QStringLiteral("python3") : interpreter,
                     arguments);
        if (!python.waitForStarted())
            QSKIP("python3 is not installed (scripts/setup.sh installs it)");
        QVERIFY(python.waitForFinished(120000));
        if (python.exitCode() == 77)
            QSKIP(qPrintable(QStringLiteral("python3 lacks astropy or numpy (scripts/setup.sh installs them): ")
                             + QString::fromUtf8(python.readAllStandardError())));
        QVERIFY2(python.exitCode() == 0, python.readAllStandardError().constData());
        QJsonParseError parseError;
        const QJsonObject read = QJsonDocument::fromJson(python.readAllStandardOutput(), &parseError).object();
        QVERIFY2(parseError.error == QJsonParseError::NoError, qPrintable(parseError.errorString()));
        const QJsonObject fitsRead = read.value(QStringLiteral("fits")).toObject();
        auto hdusOf = [&](const char* name) {
            return fitsRead.value(QLatin1String(name)).toObject().value(QStringLiteral("hdus")).toArray();
        };
        auto numbers = [](const QJsonValue& v) {
            std::vector<double> out;
            for (const QJsonValue& x : v.toArray())
                out.push_back(x.isNull() ? std::nan("") : x.toDouble());
            return out;
        };
        // astropy reads every file without a warning, and every image HDU has BUNIT and DATE/CREATOR
        // reach the primary header.
        for (auto it = fitsRead.begin(); it != fitsRead.end(); ++it) {
            const QJsonArray warnings = it.value().toObject().value(QStringLiteral("warnings")).toArray();
            QVERIFY2(warnings.isEmpty(), qPrintable(it.key() + QStringLiteral(": ") + QJsonDocument(warnings).toJson()));
            const QJsonArray hdus = it.value().toObject().value(QStringLiteral("hdus")).toArray();
            const QJsonObject primary = hdus.at(0).toObject().value(QStringLiteral("header")).toObject();
            QVERIFY2(primary.value(QStringLiteral("CREATOR")).toString()
                         == QString::fromLatin1(softwareName()) + QLatin1Char(' ') + QString::fromLatin1(softwareVersion()),
                     qPrintable(it.key()));
            QVERIFY2(primary.value(QStringLiteral("DATE")).toString().size() == 19, qPrintable(it.key()));
            for (const QJsonValue& h : hdus)
                if (h.toObject().contains(QStringLiteral("planes")))
                    QVERIFY2(h.toObject().value(QStringLiteral("header")).toObject().contains(QStringLiteral("BUNIT")),
                             qPrintable(it.key() + QLatin1Char(' ') + h.toObject().value(QStringLiteral("name")).toString()));
        }

        // Phase map: every pixel, NaN outside the pupil, row 0 of the image = first FITS row (bottom).
        const QJsonObject p = hdusOf("phase").at(0).toObject();
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
        // Its WCS through astropy.wcs: pupil coordinates of the first and last pixel, and in metres.
        const PupilMapGeometry& g = r.phaseMapGeometry;
        const QJsonObject wcs = p.value(QStringLiteral("wcs")).toObject();
        QCOMPARE(wcs.value(QStringLiteral("ctype")).toArray(), (QJsonArray{QStringLiteral("PUPX"), QStringLiteral("PUPY")}));
        const std::vector<double> first = numbers(wcs.value(QStringLiteral("first"))), last = numbers(wcs.value(QStringLiteral("last")));
        WFS_VERIFY_CLOSE(first.at(0), g.firstColumn, 1e-12, 1e-15);
        WFS_VERIFY_CLOSE(first.at(1), g.firstRow, 1e-12, 1e-15);
        WFS_VERIFY_CLOSE(last.at(0), g.firstColumn + (r.phaseMap.width - 1) * g.spacing, 1e-12, 1e-15);
        WFS_VERIFY_CLOSE(last.at(1), g.firstRow + (r.phaseMap.height - 1) * g.spacing, 1e-12, 1e-15);
        WFS_VERIFY_CLOSE(last.at(0), -first.at(0), 1e-9, 1e-12); // the map is centred on the pupil
        const QJsonObject metres = p.value(QStringLiteral("wcsA")).toObject();
        QCOMPARE(metres.value(QStringLiteral("cunit")).toArray(), (QJsonArray{QStringLiteral("m"), QStringLiteral("m")}));
        WFS_VERIFY_CLOSE(numbers(metres.value(QStringLiteral("last"))).at(0), last.at(0) * 0.1, 1e-12, 1e-15);

        // Model cube: one plane per image plane, each pixel exact; the third axis is W020 in waves.
        const QJsonObject model = hdusOf("model").at(0).toObject();
        const QJsonArray modelPlanes = model.value(QStringLiteral("planes")).toArray();
        QCOMPARE(modelPlanes.size(), int(r.planes.size()));
        for (size_t k = 0; k < r.planes.size(); ++k)
            QVERIFY2(samePlane(modelPlanes.at(int(k)).toArray(), r.planes[k].model, &why),
                     qPrintable(QStringLiteral("plane %1: ").arg(k) + why));
        const QJsonObject cubeWcs = model.value(QStringLiteral("wcs")).toObject();
        QCOMPARE(cubeWcs.value(QStringLiteral("ctype")).toArray().at(2).toString(), QStringLiteral("W020"));
        QCOMPARE(cubeWcs.value(QStringLiteral("cunit")).toArray().at(2).toString(), QString()); // waves: a count
        QCOMPARE(numbers(cubeWcs.value(QStringLiteral("slices"))), (std::vector<double>{-1.0, 0.0, 1.0}));
        // Focal plane: 0 at the centre pixel, 1/Q lambda/D per pixel.
        WFS_VERIFY_CLOSE(numbers(cubeWcs.value(QStringLiteral("first"))).at(0), -(r.planes[0].model.width / 2) * 0.5, 1e-12, 0.0);
        QCOMPARE(model.value(QStringLiteral("header")).toObject().value(QStringLiteral("BUNIT")).toString(), QStringLiteral("counts"));
        QCOMPARE(
            hdusOf("residual").at(0).toObject().value(QStringLiteral("header")).toObject().value(QStringLiteral("IMAGETYP")).toString(),
            QStringLiteral("residual"));

        // The results file: named extensions in order, each plane what the fit holds.
        const QJsonArray results = hdusOf("results");
        QStringList names;
        for (const QJsonValue& h : results)
            names << h.toObject().value(QStringLiteral("name")).toString();
        QCOMPARE(names, (QStringList{QStringLiteral("PRIMARY"), QStringLiteral("DATA"), QStringLiteral("MODEL"), QStringLiteral("RESIDUAL"),
                                     QStringLiteral("NRESID"), QStringLiteral("PHASE")}));
        QVERIFY(!results.at(0).toObject().contains(QStringLiteral("planes")));
        for (size_t k = 0; k < r.planes.size(); ++k) {
            QVERIFY2(
                samePlane(results.at(1).toObject().value(QStringLiteral("planes")).toArray().at(int(k)).toArray(), r.planes[k].data, &why),
                qPrintable(why));
            QVERIFY2(samePlane(results.at(3).toObject().value(QStringLiteral("planes")).toArray().at(int(k)).toArray(),
                               r.planes[k].residual, &why),
                     qPrintable(why));
            QVERIFY2(samePlane(results.at(4).toObject().value(QStringLiteral("planes")).toArray().at(int(k)).toArray(),
                               r.planes[k].normalizedResidual, &why),
                     qPrintable(why));
        }
        QCOMPARE(results.at(4).toObject().value(QStringLiteral("header")).toObject().value(QStringLiteral("BUNIT")).toString(), QString());
        QCOMPARE(results.at(5).toObject().value(QStringLiteral("header")).toObject().value(QStringLiteral("BUNIT")).toString(),
                 QStringLiteral("rad"));
        QCOMPARE(numbers(results.at(2).toObject().value(QStringLiteral("wcs")).toObject().value(QStringLiteral("slices"))),
                 (std::vector<double>{-1.0, 0.0, 1.0}));

        // The OOF results: the fitted pupil amplitude, planes at 0, -50, +50 mm in the DEFOCUS table.
        const QJsonArray oofHdus = hdusOf("oofresults");
        QCOMPARE(oofHdus.at(6).toObject().value(QStringLiteral("name")).toString(), QStringLiteral("AMPLITUDE"));
        QVERIFY2(samePlane(oofHdus.at(6).toObject().value(QStringLiteral("planes")).toArray().at(0).toArray(), oof.pupilAmplitude, &why),
                 qPrintable(why));
        const QJsonObject table = oofHdus.at(7).toObject();
        QCOMPARE(table.value(QStringLiteral("name")).toString(), QStringLiteral("DEFOCUS"));
        const QJsonObject dz = table.value(QStringLiteral("table")).toObject().value(QStringLiteral("DEFOCUSZ")).toObject();
        QCOMPARE(dz.value(QStringLiteral("unit")).toString(), QStringLiteral("m"));
        QCOMPARE(numbers(dz.value(QStringLiteral("values"))), (std::vector<double>{0.0, -0.05, 0.05}));
        QCOMPARE(
            numbers(
                table.value(QStringLiteral("table")).toObject().value(QStringLiteral("PLANE")).toObject().value(QStringLiteral("values"))),
            (std::vector<double>{1.0, 2.0, 3.0}));
        QCOMPARE(oofHdus.at(1).toObject().value(QStringLiteral("wcs")).toObject().value(QStringLiteral("ctype")).toArray().at(2).toString(),
                 QStringLiteral("PLANE"));
        QCOMPARE(oofHdus.at(1).toObject().value(QStringLiteral("header")).toObject().value(QStringLiteral("BUNIT")).toString(),
                 QStringLiteral("relative"));
        const QJsonObject oofPrimary = oofHdus.at(0).toObject().value(QStringLiteral("header")).toObject();
        QCOMPARE(oofPrimary.value(QStringLiteral("PRESET")).toString(), QStringLiteral("oof"));
        for (const char* key : {"SAMPLING", "PUPSAMP", "OBSCUR", "SPIDERS"})
            QVERIFY2(oofPrimary.contains(QLatin1String(key)), key);
        // Metres on the OOF dish (5.6 m): the amplitude map's 'A' WCS spans the dish.
        const QJsonObject dish = oofHdus.at(6).toObject().value(QStringLiteral("wcsA")).toObject();
        WFS_VERIFY_CLOSE(numbers(dish.value(QStringLiteral("first"))).at(0), oof.phaseMapGeometry.firstColumn * 2.8, 1e-12, 1e-15);

        // PSF file: lambda/D axes, slices labelled.
        const QJsonObject psf = hdusOf("psf").at(0).toObject();
        QCOMPARE(psf.value(QStringLiteral("wcs")).toObject().value(QStringLiteral("ctype")).toArray().at(0).toString(),
                 QStringLiteral("XLOD"));
        const std::vector<double> psfFirst = numbers(psf.value(QStringLiteral("wcs")).toObject().value(QStringLiteral("first")));
        WFS_VERIFY_CLOSE(psfFirst.at(0), -(oof.psf->fittedPsf.width / 2) * oof.psf->lambdaOverDPerPixel, 1e-12, 0.0);
        QCOMPARE(psf.value(QStringLiteral("planes")).toArray().size(), 2);

        // Simulated data: W020 axis and the preset's unit.
        const QJsonObject simulated = hdusOf("simulated").at(0).toObject();
        QCOMPARE(numbers(simulated.value(QStringLiteral("wcs")).toObject().value(QStringLiteral("slices"))),
                 (std::vector<double>{-1.0, 0.0, 1.0}));
        QCOMPARE(simulated.value(QStringLiteral("header")).toObject().value(QStringLiteral("BUNIT")).toString(), QStringLiteral("photons"));

        // CSV as csv.DictReader takes the file as it is: a header row first, every row's numbers
        // (written with 10 significant digits; uncertainties with 4) and the conventions as columns.
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
            WFS_VERIFY_CLOSE(number("uncertainty_nm"), c.uncertaintyWaves * wavelengthNm, 1e-3, 0.0);
            QCOMPARE(row.value(QStringLiteral("free")).toString(), c.free ? QStringLiteral("yes") : QStringLiteral("no"));
            QCOMPARE(row.value(QStringLiteral("ordering")).toString(), QStringLiteral("noll"));
            QCOMPARE(row.value(QStringLiteral("normalization")).toString(), QStringLiteral("rms"));
            WFS_VERIFY_CLOSE(number("wavelength_nm"), wavelengthNm, 1e-8, 0.0);
        }

        // JSON: the convention and every coefficient.
        const QJsonObject doc = read.value(QStringLiteral("json")).toObject();
        QCOMPARE(doc.value(QStringLiteral("software")).toObject().value(QStringLiteral("version")).toString(),
                 QString::fromLatin1(softwareVersion()));
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

    void resultJsonMatchesTheSchema()
    {
        // Results of both presets (flux and background; fitted illumination), one without uncertainties
        // (nulls), and documents that break the schema, which must fail: an unknown number without a unit
        // in its key, a missing "software", a parameter whose unit is not one of the rule's.
        QTemporaryDir dir;
        FitResult noUncertainty = smallResult();
        for (double& u : noUncertainty.parameterUncertainties)
            u = std::nan("");
        for (CoefficientResult& c : noUncertainty.coefficients)
            c.uncertaintyWaves = std::nan("");
        const std::vector<std::pair<QString, QJsonObject>> good = {
            {QStringLiteral("demo.json"), resultToJson(smallResult())},
            {QStringLiteral("oof.json"), resultToJson(smallOofResult())},
            {QStringLiteral("nulls.json"), resultToJson(noUncertainty)},
        };
        QStringList goodFiles;
        for (const auto& [name, object] : good) {
            goodFiles << dir.filePath(name);
            writeTextFile(goodFiles.back(), QJsonDocument(object).toJson(), false);
        }
        const ToolResult valid = validateResultJson(goodFiles);
        if (valid.missing)
            QSKIP("python3-jsonschema is not installed (scripts/setup.sh installs it)");
        QVERIFY2(valid.ok, qPrintable(valid.output));
        // The OOF result has parameters in pupil radii and a dimensionless amplitude.
        const QJsonArray parameters = good[1].second.value(QStringLiteral("parameters")).toArray();
        QStringList keys;
        for (const QJsonValue& v : parameters)
            keys << v.toObject().keys();
        QVERIFY(keys.contains(QStringLiteral("value_pupil_radii")) && keys.contains(QStringLiteral("value"))
                && keys.contains(QStringLiteral("value_rad")));
        QCOMPARE(good[0].second.value(QStringLiteral("grid")).toInt(), 32);
        WFS_VERIFY_CLOSE(good[0].second.value(QStringLiteral("sampling")).toDouble(), smallResult().samplingQ, 1e-12, 0.0);

        QJsonObject unitless = good[0].second;
        unitless.insert(QStringLiteral("focus"), 1.5);
        QJsonObject anonymous = good[0].second;
        anonymous.remove(QStringLiteral("software"));
        QJsonObject badParameter = good[0].second;
        QJsonArray list = badParameter.value(QStringLiteral("parameters")).toArray();
        list[0] = QJsonObject{{QStringLiteral("name"), QStringLiteral("x")},
                              {QStringLiteral("value_furlongs"), 1.0},
                              {QStringLiteral("uncertainty_furlongs"), 0.1}};
        badParameter.insert(QStringLiteral("parameters"), list);
        int k = 0;
        for (const QJsonObject& bad : {unitless, anonymous, badParameter}) {
            const QString path = dir.filePath(QStringLiteral("bad%1.json").arg(k++));
            writeTextFile(path, QJsonDocument(bad).toJson(), false);
            const ToolResult invalid = validateResultJson({path});
            QVERIFY2(!invalid.ok && !invalid.output.isEmpty(), qPrintable(path + QStringLiteral(" passed the schema")));
        }

        // The solver's record reads back from the new format (sessions restore saved results).
        const SolverSummary back = solverSummaryFromJson(good[0].second);
        QCOMPARE(back.iterations, smallResult().solver.iterations);
        QCOMPARE(back.termination, smallResult().solver.termination);
        WFS_VERIFY_CLOSE(back.finalCost, smallResult().solver.finalCost, 1e-12, 0.0);
    }

    void pngThroughLibpng()
    {
        // The real fit's picture: libpng's pixels equal the rendered picture's.
        FitResult r = smallResult();
        QTemporaryDir dir;
        const std::string path = dir.filePath(QStringLiteral("phase.png")).toStdString();
        PhaseImageOptions options;
        options.unit = PhaseUnit::Waves;
        options.wavelength = r.wavelength;     // what writePhasePng fills in (the caption names it)
        options.geometry = r.phaseMapGeometry; // and the axes' geometry
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
                                         .arg(x)
                                         .arg(y)
                                         .arg(p[0])
                                         .arg(p[1])
                                         .arg(p[2])
                                         .arg(qRed(q))
                                         .arg(qGreen(q))
                                         .arg(qBlue(q))));
            }

        // Orientation and colours without Qt on the reading side: a map rising with the row (row 0 at
        // the bottom) is drawn with its highest colour at the top; NaN is white.
        Image ramp(20, 10);
        for (int row = 0; row < 10; ++row)
            for (int col = 0; col < 20; ++col)
                ramp.at(row, col) = 2.0 * M_PI * 0.1 * row; // 0 .. 0.9 waves
        ramp.at(0, 0) = std::nan("");
        r.phaseMap = ramp;
        r.phaseMapGeometry = PupilMapGeometry{}; // a map of no known geometry: no axes, the map at the margin
        options.geometry = PupilMapGeometry{};
        options.mapSize = 200; // 10 picture pixels per sample
        const std::string rampPath = dir.filePath(QStringLiteral("ramp.png")).toStdString();
        writePhasePng(rampPath, r, options, false);
        const DecodedPng rp = decodePng(rampPath);
        QVERIFY2(rp.error.empty(), rp.error.c_str());
        const int margin = 16;                                                                // the map's origin in the picture (no title)
        QCOMPARE(pixelAt(rp, margin + 55, margin + 5), colorMapRgb(ColorMap::Viridis, 1.0));  // top: row 9, the highest
        QCOMPARE(pixelAt(rp, margin + 55, margin + 95), colorMapRgb(ColorMap::Viridis, 0.0)); // bottom: row 0, the lowest
        QCOMPARE(pixelAt(rp, margin + 5, margin + 95), (std::array<std::uint8_t, 3>{255, 255, 255}));
        QCOMPARE(pixelAt(rp, margin + 195, margin + 95), colorMapRgb(ColorMap::Viridis, 0.0)); // row 0, last column: not NaN
    }
};

QTEST_MAIN(TestExportReaders)
#include "tst_exportreaders.moc"
