// Exports and sessions: phase maps as FITS (float32/float64, units, header) and PNG (colour bar,
// orientation, wrapped phase on the cyclic map), model and residual cubes, coefficient tables, no
// silent overwrite; session files that round-trip every setting, re-load and re-prepare the data,
// detect changed and missing inputs, and refuse malformed or newer files with clear messages.
#include "ExportChecks.h"
#include "ImageTestFiles.h"
#include "ModelFixtures.h"
#include "TestSupport.h"

#include "engine/Presets.h"
#include "engine/ReconstructionEngine.h"
#include "io/Exports.h"
#include "PhaseImage.h"
#include "fit/PsfAnalysis.h"
#include "io/Fits.h"
#include "io/Provenance.h"
#include "io/ResultJson.h"
#include "io/Session.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QRegularExpression>
#include <QTemporaryDir>

#include <cmath>
#include <map>
#include <random>

using namespace wfs;
using namespace wfs::test;

namespace {

bool contains(const std::string& text, const std::string& part)
{
    return text.find(part) != std::string::npos;
}

const FitResult& smallResult()
{
    return smallDemoResult();
}

std::string sessionError(const QByteArray& json)
{
    try {
        sessionFromJson(QJsonDocument::fromJson(json).object(), "s.json");
    } catch (const SessionError& e) {
        return e.what();
    }
    return "accepted";
}

void writeBytes(const QString& path, const QByteArray& bytes)
{
    QFile f(path);
    f.open(QIODevice::WriteOnly);
    f.write(bytes);
}

// Every keyword card of the HDU `hdu` (1-based) of a FITS file: name -> (value text, comment), and
// the COMMENT cards' texts in order, read with CFITSIO's card reader.
struct HeaderCards {
    std::map<std::string, std::pair<std::string, std::string>> keys;
    std::vector<std::string> comments;
    std::string extname;
    int hduCount = 0;
    int hduType = -1;
};

HeaderCards headerCards(const std::string& path, int hdu)
{
    HeaderCards h;
    fitsfile* f = nullptr;
    int status = 0;
    if (fits_open_diskfile(&f, path.c_str(), READONLY, &status))
        return h;
    fits_get_num_hdus(f, &h.hduCount, &status);
    fits_movabs_hdu(f, hdu, &h.hduType, &status);
    int count = 0;
    fits_get_hdrspace(f, &count, nullptr, &status);
    for (int i = 1; i <= count && status == 0; ++i) {
        char name[FLEN_KEYWORD] = {}, value[FLEN_VALUE] = {}, comment[FLEN_COMMENT] = {};
        fits_read_keyn(f, i, name, value, comment, &status);
        if (std::string(name) == "COMMENT")
            h.comments.push_back(comment);
        else if (!h.keys.count(name))
            h.keys[name] = {value, comment};
    }
    char extname[FLEN_VALUE] = {};
    int s2 = 0;
    if (fits_read_key(f, TSTRING, "EXTNAME", extname, nullptr, &s2) == 0)
        h.extname = extname;
    fits_close_file(f, &status);
    return h;
}

double number(const HeaderCards& h, const std::string& key)
{
    const auto it = h.keys.find(key);
    return it == h.keys.end() ? std::nan("") : std::stod(it->second.first);
}

std::string text(const HeaderCards& h, const std::string& key)
{
    const auto it = h.keys.find(key);
    if (it == h.keys.end())
        return "(missing)";
    std::string v = it->second.first;
    if (v.size() >= 2 && v.front() == '\'')
        v = v.substr(1, v.size() - 2);
    while (!v.empty() && v.back() == ' ')
        v.pop_back();
    return v;
}

void writeFile(const std::string& path, const QByteArray& bytes)
{
    QFile f(QString::fromStdString(path));
    f.open(QIODevice::WriteOnly);
    f.write(bytes);
}

} // namespace

class TestExports : public QObject {
    Q_OBJECT

private slots:
    void colourMaps()
    {
        QCOMPARE(colorMapRgb(ColorMap::Viridis, 0.0), (std::array<std::uint8_t, 3>{0x44, 0x01, 0x54}));
        QCOMPARE(colorMapRgb(ColorMap::Viridis, 1.0), (std::array<std::uint8_t, 3>{0xFD, 0xE7, 0x25}));
        QCOMPARE(colorMapRgb(ColorMap::Viridis, 0.5), (std::array<std::uint8_t, 3>{0x21, 0x91, 0x8C}));
        // Viridis brightens monotonically (a sequential map).
        double previous = -1.0;
        for (int i = 0; i <= 64; ++i) {
            const auto c = colorMapRgb(ColorMap::Viridis, i / 64.0);
            const double luma = 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2];
            QVERIFY(luma > previous);
            previous = luma;
        }
        // The cyclic map meets itself at both ends, is dark in the middle and differs between halves.
        QCOMPARE(colorMapRgb(ColorMap::Twilight, 0.0), colorMapRgb(ColorMap::Twilight, 1.0));
        const auto light = colorMapRgb(ColorMap::Twilight, 0.0), dark = colorMapRgb(ColorMap::Twilight, 0.5);
        QVERIFY(light[0] + light[1] + light[2] > 3 * 170);
        QVERIFY(dark[0] + dark[1] + dark[2] < 3 * 80);
        const auto a = colorMapRgb(ColorMap::Twilight, 0.25), b = colorMapRgb(ColorMap::Twilight, 0.75);
        QVERIFY(a[2] > a[0]); // blue side
        QVERIFY(b[0] > b[2]); // red side
        QCOMPARE(colorMapRgb(ColorMap::Viridis, std::nan("")), (std::array<std::uint8_t, 3>{128, 128, 128}));
    }

    void phaseFits()
    {
        const FitResult& r = smallResult();
        QVERIFY(!r.phaseMap.isEmpty());
        QTemporaryDir dir;
        ExportContext context;
        context.pupil = PupilSpec{};
        context.samplingQ = 2.0;
        context.inputs = {"/data/a/very/long/path/that/does/not/fit/into/one/fits/card/of/sixty-eight/characters/stack.fits"};
        const std::string f64 = dir.filePath(QStringLiteral("p64.fits")).toStdString();
        writePhaseFits(f64, r, context, {false, PhaseUnit::Radians, false});
        FitsContent c = readFits(f64);
        QCOMPARE(c.bitpix, -64);
        QCOMPARE(c.planes.size(), size_t(1));
        const Image read = c.planes[0];
        QCOMPARE(read.width, r.phaseMap.width);
        for (size_t i = 0; i < read.pixels.size(); ++i)
            QVERIFY(read.pixels[i] == r.phaseMap.pixels[i] || (std::isnan(read.pixels[i]) && std::isnan(r.phaseMap.pixels[i])));
        QCOMPARE(c.strings.at("BUNIT"), std::string("rad"));
        QCOMPARE(c.strings.at("ZORDERNG"), std::string("noll"));
        QCOMPARE(c.strings.at("ZNORM"), std::string("rms"));
        QCOMPARE(c.strings.at("ROWORDER"), std::string("bottom-up"));
        QCOMPARE(c.strings.at("TERMINAT"), std::string(terminationName(r.solver.termination)));
        WFS_VERIFY_CLOSE(c.numbers.at("WAVELENG"), r.wavelength, 1e-12, 0.0);
        WFS_VERIFY_CLOSE(c.numbers.at("RMSWAVE"), r.rmsWaves, 1e-12, 0.0);
        WFS_VERIFY_CLOSE(c.numbers.at("ZC4"), r.coefficients[2].waves, 1e-12, 1e-15);
        QCOMPARE(r.coefficients[2].index, 4);
        QCOMPARE(c.numbers.at("SAMPLING"), 2.0);
        QCOMPARE(c.numbers.at("OBSCUR"), 0.0);
        QCOMPARE(c.numbers.at("ZORDER"), 3.0);

        const std::string f32 = dir.filePath(QStringLiteral("p32.fits")).toStdString();
        writePhaseFits(f32, r, context, {true, PhaseUnit::Waves, false});
        c = readFits(f32);
        QCOMPARE(c.bitpix, -32);
        QCOMPARE(c.strings.at("BUNIT"), std::string("waves"));
        for (size_t i = 0; i < read.pixels.size(); ++i)
            if (std::isfinite(r.phaseMap.pixels[i]))
                WFS_VERIFY_CLOSE(c.planes[0].pixels[i], r.phaseMap.pixels[i] / (2.0 * M_PI), 1e-6, 1e-9);

        // No silent overwrite; the old file is untouched and no temporary is left.
        try {
            writePhaseFits(f32, r, context, {false, PhaseUnit::Radians, false});
            QFAIL("an existing file was overwritten");
        } catch (const std::runtime_error& e) {
            QVERIFY(contains(e.what(), "refusing to overwrite"));
        }
        QCOMPARE(readFits(f32).bitpix, -32);
        writePhaseFits(f32, r, context, {false, PhaseUnit::Radians, true});
        QCOMPARE(readFits(f32).bitpix, -64);
        QCOMPARE(QDir(dir.path()).entryList(QDir::Files).size(), 2);
    }

    void modelAndResidualFits()
    {
        const FitResult& r = smallResult();
        QTemporaryDir dir;
        const std::string model = dir.filePath(QStringLiteral("m.fits")).toStdString();
        const std::string residual = dir.filePath(QStringLiteral("r.fits")).toStdString();
        writeModelFits(model, r, {}, false, false);
        writeResidualFits(residual, r, {}, true, false);
        const FitsContent m = readFits(model), res = readFits(residual);
        QCOMPARE(m.planes.size(), r.planes.size());
        QCOMPARE(res.planes.size(), r.planes.size());
        for (size_t k = 0; k < r.planes.size(); ++k) {
            QCOMPARE(m.planes[k].pixels, r.planes[k].model.pixels);
            WFS_VERIFY_CLOSE(res.planes[k].at(16, 16), r.planes[k].residual.at(16, 16), 1e-6, 1e-3);
        }
        QCOMPARE(m.strings.at("IMAGETYP"), std::string("model"));
        QCOMPARE(res.strings.at("IMAGETYP"), std::string("residual"));
        QCOMPARE(m.strings.at("PLANE1"), r.planes[0].diversity);
    }

    void phaseImage()
    {
        // A ramp rising with the row: high values at the top of the picture (y up).
        Image phase(20, 10);
        for (int r = 0; r < 10; ++r)
            for (int c = 0; c < 20; ++c)
                phase.pixels[size_t(r) * 20 + size_t(c)] = 2.0 * M_PI * 0.1 * r; // 0 .. 0.9 waves
        phase.at(0, 0) = std::nan("");
        PhaseImageOptions options;
        options.mapSize = 200; // 10 pixels per sample
        const QImage image = renderPhaseImage(phase, options);
        QCOMPARE(image.format(), QImage::Format_RGB32);
        const int margin = 16; // the map's origin in the picture (no title)
        auto rgb = [](QRgb p) { return std::array<std::uint8_t, 3>{std::uint8_t(qRed(p)), std::uint8_t(qGreen(p)), std::uint8_t(qBlue(p))}; };
        QCOMPARE(rgb(image.pixel(margin + 55, margin + 5)), colorMapRgb(ColorMap::Viridis, 1.0)); // top row = highest
        QCOMPARE(rgb(image.pixel(margin + 55, margin + 95)), colorMapRgb(ColorMap::Viridis, 0.0)); // bottom row = lowest
        QCOMPARE(image.pixel(margin + 5, margin + 95), qRgb(255, 255, 255)); // NaN (row 0, column 0): white
        // The colour bar beside it runs from the top colour down to the bottom one.
        const int barX = margin + 200 + margin + 12;
        QCOMPARE(rgb(image.pixel(barX, margin + 1)), colorMapRgb(ColorMap::Viridis, 1.0 - 1.5 / 100.0));
        QCOMPARE(image.text(QStringLiteral("Unit")), QStringLiteral("waves"));
        QCOMPARE(image.text(QStringLiteral("ColorMap")), QStringLiteral("viridis"));

        // Wrapped: values one wave apart look the same, on the cyclic map.
        Image ramp(2, 1);
        ramp.pixels = {2.0 * M_PI * 0.25, 2.0 * M_PI * 1.25};
        options.wrapped = true;
        options.mapSize = 20;
        const QImage wrapped = renderPhaseImage(ramp, options);
        QCOMPARE(wrapped.pixel(margin + 5, margin + 5), wrapped.pixel(margin + 15, margin + 5));
        QCOMPARE(rgb(wrapped.pixel(margin + 5, margin + 5)), colorMapRgb(ColorMap::Twilight, 0.75));
        QCOMPARE(wrapped.text(QStringLiteral("ColorMap")), QStringLiteral("twilight"));
    }

    void fitsExportsPassFitsverify()
    {
        // Every FITS the program writes: phase maps (float64 rad, float32 waves with the aperture and a
        // long input path), model and residual cubes, the PSF file, the multi-extension results of the
        // demo (even planes) and of the OOF preset (uneven planes, fitted amplitude: a DEFOCUS table and
        // AMPLITUDE), simulated data of both presets, and a keyword whose comment overruns its card.
        const FitResult& demo = smallDemoResult();
        const FitResult& oof = smallOofResult();
        QTemporaryDir dir;
        ExportContext context;
        context.pupil = PupilSpec{};
        context.samplingQ = 2.0;
        context.apertureDiameter = 0.2;
        context.inputs = {"/data/a/very/long/path/that/does/not/fit/into/one/fits/card/of/sixty-eight/characters/stack.fits",
                          "/data/a/second/long/path/that/does/not/fit/into/one/fits/card/of/sixty-eight/characters/more.fits"};
        PresetOptions small;
        small.grid = 32;
        const std::map<std::string, QByteArray> files = {
            {"phase64.fits", phaseFitsBytes(demo, {}, {false, PhaseUnit::Radians, false})},
            {"phase32.fits", phaseFitsBytes(demo, context, {true, PhaseUnit::Waves, false})},
            {"model.fits", planesFitsBytes(demo, context, false, false)},
            {"residual.fits", planesFitsBytes(demo, {}, true, true)},
            {"oofmodel.fits", planesFitsBytes(oof, presetExportContext(makePreset("oof", small), "oof"), false, false)},
            {"psf.fits", psfFitsBytes(oof, presetExportContext(makePreset("oof", small), "oof"), false)},
            {"results.fits", resultsFitsBytes(demo, context, false)},
            {"oofresults.fits", resultsFitsBytes(oof, presetExportContext(makePreset("oof", small), "oof"), true, PhaseUnit::Nanometres)},
            {"demodata.fits", presetFitsBytes(makePreset("demo", small), "demo", small.seed)},
            {"oofdata.fits", presetFitsBytes(makePreset("oof", small), "oof", small.seed)},
            {"comment.fits", QByteArray::fromStdString(fitsBytes({Image(4, 4, 1.0)},
                                                                 {{"BUNIT", std::string("counts"), ""},
                                                                  {"LONGCMT", 1.5, "a comment far too long for one card of eighty columns, so it must be shortened"}}))},
        };
        for (const auto& [name, bytes] : files) {
            const std::string path = dir.filePath(QString::fromStdString(name)).toStdString();
            writeFile(path, bytes);
            const ToolResult verified = fitsverify(QString::fromStdString(path));
            if (verified.missing)
                QSKIP("fitsverify is not installed (scripts/setup.sh installs it)");
            QVERIFY2(verified.ok, qPrintable(QString::fromStdString(name) + QStringLiteral(":\n") + verified.output));
        }
    }

    void keywordsForEveryExport()
    {
        // DATE, CREATOR with the version, BUNIT in every HDU with data; no comment cut: every comment
        // of the phase map's header is the one given, and an overlong one ends at a word boundary with
        // the whole text in COMMENT cards.
        const FitResult& demo = smallDemoResult();
        QTemporaryDir dir;
        ExportContext context;
        context.pupil = PupilSpec{};
        context.samplingQ = 2.0;
        context.pupilSampleSpacing = demo.phaseMapGeometry.spacing;
        const std::string phase = dir.filePath(QStringLiteral("p.fits")).toStdString();
        writeFile(phase, phaseFitsBytes(demo, context, {false, PhaseUnit::Radians, false}));
        const HeaderCards h = headerCards(phase, 1);
        QCOMPARE(text(h, "CREATOR"), softwareText());
        QVERIFY(QString::fromStdString(softwareVersion()).contains(QRegularExpression(QStringLiteral("^[0-9]+\\.[0-9]+\\.[0-9]+$"))));
        QVERIFY2(QRegularExpression(QStringLiteral("^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}$")).match(QString::fromStdString(text(h, "DATE"))).hasMatch(),
                 text(h, "DATE").c_str());
        for (const FitsKeyword& k : resultKeywords(demo, context, "rad")) {
            QVERIFY2(h.keys.count(k.name), k.name.c_str());
            QCOMPARE(h.keys.at(k.name).second, k.comment);
        }
        QCOMPARE(h.keys.at("PUPILORI").second, std::string("pupil radius 1 at the edge"));

        const std::string comment = dir.filePath(QStringLiteral("c.fits")).toStdString();
        const std::string longComment = "a comment far too long for one card of eighty columns, so it must be shortened";
        writeFits(comment, {Image(4, 4, 1.0)}, {{"LONGCMT", 1.5, longComment}});
        const HeaderCards c = headerCards(comment, 1);
        const std::string written = c.keys.at("LONGCMT").second;
        QVERIFY2(!written.empty() && written.size() < longComment.size(), written.c_str());
        QVERIFY2(longComment.compare(0, written.size(), written) == 0 && longComment[written.size()] == ' ', written.c_str());
        std::string joined;
        for (const std::string& line : c.comments)
            if (line.rfind("LONGCMT", 0) == 0 || !joined.empty())
                joined += (joined.empty() ? "" : " ") + line;
        QVERIFY2(joined.find("LONGCMT: " + longComment) == 0, joined.c_str());
        for (const std::string& line : wrapWords("one two three four", 9))
            QVERIFY(line.size() <= 9);
        QCOMPARE(wrapWords("one two three four", 9), (std::vector<std::string>{"one two", "three", "four"}));

        // The same context keywords for a preset as for file input.
        PresetOptions small;
        small.grid = 32;
        const ExportContext preset = presetExportContext(makePreset("demo", small), "demo");
        const std::string presetPhase = dir.filePath(QStringLiteral("preset.fits")).toStdString();
        writeFile(presetPhase, phaseFitsBytes(demo, preset, {false, PhaseUnit::Radians, false}));
        const HeaderCards ph = headerCards(presetPhase, 1);
        for (const char* key : {"SAMPLING", "PUPSAMP", "OBSCUR", "SPIDERS", "SPIDERW", "SPIDERA", "PRESET", "DATE", "CREATOR"})
            QVERIFY2(ph.keys.count(key), key);
        WFS_VERIFY_CLOSE(number(ph, "SAMPLING"), 32 * makePreset("demo", small).spec.grid.spacing / 2.0, 1e-12, 0.0);
        QCOMPARE(text(ph, "PRESET"), std::string("demo"));
    }

    void pupilWcs()
    {
        // The WCS puts the phase map's finite pixels inside the unit circle and the NaN ones outside:
        // checked pixel by pixel from CRPIX/CRVAL/CDELT alone. With the aperture, the 'A' description
        // is the same in metres.
        const FitResult& demo = smallDemoResult();
        QTemporaryDir dir;
        ExportContext context;
        context.apertureDiameter = 0.2;
        const std::string path = dir.filePath(QStringLiteral("p.fits")).toStdString();
        writeFile(path, phaseFitsBytes(demo, context, {false, PhaseUnit::Radians, false}));
        const HeaderCards h = headerCards(path, 1);
        QCOMPARE(text(h, "CTYPE1"), std::string("PUPX"));
        QCOMPARE(text(h, "CTYPE2"), std::string("PUPY"));
        const double step = number(h, "CDELT1");
        QVERIFY(step > 0.0);
        WFS_VERIFY_CLOSE(number(h, "CDELT2"), step, 1e-15, 0.0);
        const Image read = readFits(path).planes.at(0);
        int inside = 0, outside = 0;
        for (int row = 0; row < read.height; ++row)
            for (int col = 0; col < read.width; ++col) {
                const double x = number(h, "CRVAL1") + (col + 1 - number(h, "CRPIX1")) * step;
                const double y = number(h, "CRVAL2") + (row + 1 - number(h, "CRPIX2")) * number(h, "CDELT2");
                const double r = std::hypot(x, y);
                if (r < 1.0 - step) {
                    QVERIFY2(std::isfinite(read.at(row, col)), qPrintable(QStringLiteral("NaN at r = %1").arg(r)));
                    ++inside;
                } else if (r > 1.0 + step) {
                    QVERIFY2(std::isnan(read.at(row, col)), qPrintable(QStringLiteral("a value at r = %1").arg(r)));
                    ++outside;
                }
            }
        QVERIFY(inside > 50 && outside > 4);
        QCOMPARE(text(h, "CUNIT1A"), std::string("m"));
        WFS_VERIFY_CLOSE(number(h, "CDELT1A"), step * 0.1, 1e-12, 0.0);
        WFS_VERIFY_CLOSE(number(h, "CRVAL1A"), number(h, "CRVAL1") * 0.1, 1e-12, 1e-15);
        // Without an aperture, no metres.
        writeFile(dir.filePath(QStringLiteral("q.fits")).toStdString(), phaseFitsBytes(demo, {}, {false, PhaseUnit::Radians, false}));
        QVERIFY(!headerCards(dir.filePath(QStringLiteral("q.fits")).toStdString(), 1).keys.count("CDELT1A"));
        // The OOF grid runs rows along x: the columns are pupil y.
        const HeaderCards o = headerCards([&] {
            const std::string p = dir.filePath(QStringLiteral("o.fits")).toStdString();
            writeFile(p, phaseFitsBytes(smallOofResult(), {}, {false, PhaseUnit::Radians, false}));
            return p;
        }(), 1);
        QCOMPARE(text(o, "CTYPE1"), std::string("PUPY"));
        QCOMPARE(text(o, "CTYPE2"), std::string("PUPX"));
    }

    void cubeAxes()
    {
        // Demo planes at -1, 0, +1 waves of W020: a linear third axis. OOF planes at 0, -50, +50 mm:
        // not evenly spaced, so the axis counts planes and a DEFOCUS table gives each plane's dz.
        const FitResult& demo = smallDemoResult();
        const DefocusAxis axis = defocusAxis(demo.planes);
        QCOMPARE(axis.quantity, std::string("W020"));
        QCOMPARE(axis.values, (std::vector<double>{-1.0, 0.0, 1.0}));
        QVERIFY(axis.evenlySpaced);
        QTemporaryDir dir;
        ExportContext context;
        context.samplingQ = 2.0;
        const std::string model = dir.filePath(QStringLiteral("m.fits")).toStdString();
        writeFile(model, planesFitsBytes(demo, context, false, false));
        const HeaderCards m = headerCards(model, 1);
        QCOMPARE(m.hduCount, 1);
        QCOMPARE(text(m, "CTYPE3"), std::string("W020"));
        QCOMPARE(text(m, "CNAME3"), std::string("defocus W020 [waves]"));
        QVERIFY(!m.keys.count("CUNIT3")); // waves are a count: no FITS unit
        QCOMPARE(number(m, "CRVAL3"), -1.0);
        QCOMPARE(number(m, "CDELT3"), 1.0);
        QCOMPARE(number(m, "CRPIX3"), 1.0);
        QCOMPARE(text(m, "CTYPE1"), std::string("XLOD"));
        QCOMPARE(number(m, "CDELT1"), 0.5); // 1 / Q
        QCOMPARE(number(m, "CRPIX1"), double(demo.planes[0].model.width / 2 + 1));
        QCOMPARE(text(m, "BUNIT"), std::string("counts"));

        const FitResult& oof = smallOofResult();
        const DefocusAxis uneven = defocusAxis(oof.planes);
        QCOMPARE(uneven.quantity, std::string("DEFOCUSZ"));
        QCOMPARE(uneven.unit, std::string("m"));
        QCOMPARE(uneven.values, (std::vector<double>{0.0, -0.05, 0.05}));
        QVERIFY(!uneven.evenlySpaced);
        const std::string oofModel = dir.filePath(QStringLiteral("o.fits")).toStdString();
        writeFile(oofModel, planesFitsBytes(oof, {}, false, false));
        const HeaderCards o = headerCards(oofModel, 1);
        QCOMPARE(text(o, "CTYPE3"), std::string("PLANE"));
        QCOMPARE(o.hduCount, 2);
        const HeaderCards table = headerCards(oofModel, 2);
        QCOMPARE(table.hduType, BINARY_TBL);
        QCOMPARE(table.extname, std::string("DEFOCUS"));
        QCOMPARE(text(table, "TTYPE2"), std::string("DEFOCUSZ"));
        QCOMPARE(text(table, "TUNIT2"), std::string("m"));

        // Mixed kinds have no common quantity.
        DiversitySpec waves, length;
        waves.kind = DiversityKind::ZernikeDefocus;
        waves.defocusWaves = 1.0;
        length.kind = DiversityKind::AxialParaxial;
        length.axialDistance = 1e-6;
        QVERIFY(defocusAxis(std::vector<DiversitySpec>{waves, length}).quantity.empty());
        // An RMS Zernike defocus c is W020 = 2 sqrt(3) c.
        waves.measure = DefocusMeasure::Rms;
        WFS_VERIFY_CLOSE(defocusAxis(std::vector<DiversitySpec>{waves}).values.at(0), 2.0 * std::sqrt(3.0), 1e-15, 0.0);
    }

    void resultsFits()
    {
        // One file, extensions named in order; each holds what the result holds.
        for (const FitResult* r : {&smallDemoResult(), &smallOofResult()}) {
            QTemporaryDir dir;
            const std::string path = dir.filePath(QStringLiteral("all.fits")).toStdString();
            writeFile(path, resultsFitsBytes(*r, {}, false));
            std::vector<std::string> names = {"DATA", "MODEL", "RESIDUAL", "NRESID", "PHASE"};
            if (!r->pupilAmplitude.isEmpty())
                names.push_back("AMPLITUDE");
            if (!defocusAxis(r->planes).evenlySpaced)
                names.push_back("DEFOCUS");
            const HeaderCards primary = headerCards(path, 1);
            QCOMPARE(primary.hduCount, int(names.size()) + 1);
            QCOMPARE(number(primary, "NAXIS"), 0.0);
            QVERIFY(primary.keys.count("CREATOR") && primary.keys.count("ZC4"));
            for (size_t i = 0; i < names.size(); ++i) {
                const HeaderCards h = headerCards(path, int(i) + 2);
                QCOMPARE(h.extname, names[i]);
                if (names[i] != "DEFOCUS")
                    QVERIFY2(h.keys.count("BUNIT") && h.keys.count("CTYPE1") && h.keys.count("CDELT2"), names[i].c_str());
            }
            const FitsContent c = readFits(path);
            const size_t n = r->planes.size();
            QCOMPARE(c.planes.size(), 4 * n + 1 + (r->pupilAmplitude.isEmpty() ? 0 : 1));
            for (size_t k = 0; k < n; ++k) {
                const Image& data = c.planes[k];
                const Image& model = c.planes[n + k];
                const Image& residual = c.planes[2 * n + k];
                const Image& normalized = c.planes[3 * n + k];
                QCOMPARE(model.pixels, r->planes[k].model.pixels);
                for (size_t i = 0; i < data.pixels.size(); ++i) {
                    QCOMPARE(std::isnan(residual.pixels[i]), std::isnan(data.pixels[i]));
                    if (std::isfinite(data.pixels[i]))
                        WFS_VERIFY_CLOSE(data.pixels[i] - model.pixels[i], residual.pixels[i], 1e-9, 1e-9 * std::abs(data.pixels[i]));
                    const double expected = r->planes[k].normalizedResidual.pixels[i];
                    QVERIFY(normalized.pixels[i] == expected || (std::isnan(normalized.pixels[i]) && std::isnan(expected)));
                }
            }
            const Image& phase = c.planes[4 * n];
            for (size_t i = 0; i < phase.pixels.size(); ++i)
                QVERIFY(phase.pixels[i] == r->phaseMap.pixels[i] || (std::isnan(phase.pixels[i]) && std::isnan(r->phaseMap.pixels[i])));
        }
        QVERIFY(!smallOofResult().pupilAmplitude.isEmpty()); // the OOF preset fits its illumination
        QVERIFY(smallDemoResult().pupilAmplitude.isEmpty());
    }

    void psfAnalysisCsvHasOneHeaderRow()
    {
        // No comment line: the header row first, the summary in the first data row's first columns.
        const PsfAnalysis& a = *smallOofResult().psf;
        const QStringList lines = QString::fromStdString(psfAnalysisCsv(a)).split(QLatin1Char('\n'), Qt::SkipEmptyParts);
        QVERIFY(lines.size() > 3);
        QVERIFY2(lines[0].startsWith(QStringLiteral("strehl,fwhm_fitted_px,fwhm_diffraction_px,lambda_over_d_per_px,mtf_cutoff_cycles_per_px,radius_px,")),
                 qPrintable(lines[0]));
        const int columns = int(lines[0].split(QLatin1Char(',')).size());
        for (const QString& line : lines) {
            QVERIFY(!line.startsWith(QLatin1Char('#')));
            QCOMPARE(int(line.split(QLatin1Char(',')).size()), columns);
        }
        const QStringList first = lines[1].split(QLatin1Char(','));
        WFS_VERIFY_CLOSE(first[0].toDouble(), a.strehl, 1e-9, 0.0);
        WFS_VERIFY_CLOSE(first[3].toDouble(), a.lambdaOverDPerPixel, 1e-9, 0.0);
        QVERIFY(lines[2].startsWith(QStringLiteral(",,,,,")));
    }

    void colourBarTicks()
    {
        auto close = [](const std::vector<double>& a, const std::vector<double>& b) {
            if (a.size() != b.size())
                return false;
            for (size_t i = 0; i < a.size(); ++i)
                if (!closeTo(a[i], b[i], 1e-12, 1e-15))
                    return false;
            return true;
        };
        QVERIFY(close(colorBarTicks(0.0, 0.6), {0.0, 0.2, 0.4, 0.6}));
        QVERIFY(close(colorBarTicks(-0.5, 0.5), {-0.4, -0.2, 0.0, 0.2, 0.4}));
        QVERIFY(close(colorBarTicks(-M_PI, M_PI), {-3, -2, -1, 0, 1, 2, 3}));
        QVERIFY(close(colorBarTicks(0.013, 0.0871), {0.02, 0.04, 0.06, 0.08}));
        QVERIFY(close(colorBarTicks(-123.0, 456.0), {-100, 0, 100, 200, 300, 400}));
        QVERIFY(close(colorBarTicks(0.0, 1.0), {0.0, 0.2, 0.4, 0.6, 0.8, 1.0}));
        QCOMPARE(colorBarTicks(2.0, 2.0), std::vector<double>{2.0});
        // Any range: 4 to 11 ticks inside it, equally spaced by 1, 2 or 5 times a power of ten.
        std::mt19937_64 rng(7);
        std::uniform_real_distribution<double> exponent(-6.0, 6.0), unit(-1.0, 1.0);
        for (int trial = 0; trial < 2000; ++trial) {
            const double scale = std::pow(10.0, exponent(rng));
            double lo = unit(rng) * scale, hi = unit(rng) * scale;
            if (lo > hi)
                std::swap(lo, hi);
            if (!(hi - lo > 1e-6 * scale))
                continue;
            const std::vector<double> t = colorBarTicks(lo, hi);
            QVERIFY2(t.size() >= 4 && t.size() <= 11, qPrintable(QStringLiteral("%1 ticks on [%2, %3]").arg(t.size()).arg(lo).arg(hi)));
            const double step = t[1] - t[0];
            const double mantissa = step / std::pow(10.0, std::floor(std::log10(step) + 1e-9));
            QVERIFY2(closeTo(mantissa, 1.0, 1e-6) || closeTo(mantissa, 2.0, 1e-6) || closeTo(mantissa, 5.0, 1e-6), qPrintable(QString::number(step)));
            for (size_t i = 0; i < t.size(); ++i) {
                QVERIFY(t[i] >= lo - 1e-9 * (hi - lo) && t[i] <= hi + 1e-9 * (hi - lo));
                QVERIFY(closeTo(t[i], t[0] + double(i) * step, 1e-9, 1e-9 * step));
                QVERIFY(closeTo(std::round(t[i] / step), t[i] / step, 0.0, 1e-6)); // multiples of the step
            }
        }
    }

    void colourBarLabel()
    {
        // The label names the unit, is drawn (dark pixels upright beside the tick labels) and is in the
        // PNG's text with the tick values.
        Image phase(20, 10);
        for (int r = 0; r < 10; ++r)
            for (int c = 0; c < 20; ++c)
                phase.at(r, c) = 2.0 * M_PI * 0.06 * r; // 0 .. 0.54 waves
        PhaseImageOptions options;
        options.mapSize = 200;
        options.wavelength = 633e-9;
        QCOMPARE(colorBarLabel(PhaseUnit::Waves), std::string("phase [waves]"));
        QCOMPARE(colorBarLabel(PhaseUnit::Nanometres), std::string("phase [nm]"));
        QCOMPARE(colorBarLabel(PhaseUnit::Radians), std::string("phase [rad]"));
        const QImage image = renderPhaseImage(phase, options);
        QCOMPARE(image.text(QStringLiteral("ColorBarLabel")), QStringLiteral("phase [waves]"));
        QCOMPARE(image.text(QStringLiteral("Ticks")), QStringLiteral("0 0.1 0.2 0.3 0.4 0.5"));
        const int margin = 16, barX = margin + 200 + margin, labelX = barX + 24 + 8 + 72;
        int dark = 0;
        for (int y = margin; y < margin + 100; ++y)
            for (int x = labelX; x < labelX + 24; ++x)
                dark += qGray(image.pixel(x, y)) < 128 ? 1 : 0;
        QVERIFY2(dark > 20, qPrintable(QStringLiteral("%1 dark pixels where the label belongs").arg(dark)));
        options.unit = PhaseUnit::Nanometres;
        QCOMPARE(renderPhaseImage(phase, options).text(QStringLiteral("ColorBarLabel")), QStringLiteral("phase [nm]"));
    }

    void phasePng()
    {
        const FitResult& r = smallResult();
        QTemporaryDir dir;
        const std::string path = dir.filePath(QStringLiteral("phase.png")).toStdString();
        PhaseImageOptions options;
        options.unit = PhaseUnit::Nanometres;
        options.title = "test";
        writePhasePng(path, r, options, false);
        QImage back(QString::fromStdString(path));
        QVERIFY(!back.isNull());
        QVERIFY(back.width() >= 384);
        QCOMPARE(back.text(QStringLiteral("Unit")), QStringLiteral("nm"));
        try {
            writePhasePng(path, r, options, false);
            QFAIL("an existing PNG was overwritten");
        } catch (const std::runtime_error& e) {
            QVERIFY(contains(e.what(), "refusing to overwrite"));
        }
    }

    void coefficientTables()
    {
        const FitResult& r = smallResult();
        const QJsonObject o = QJsonDocument::fromJson(coefficientsJson(r)).object();
        const QJsonObject convention = o.value(QStringLiteral("convention")).toObject();
        QCOMPARE(convention.value(QStringLiteral("ordering")).toString(), QStringLiteral("noll"));
        QCOMPARE(convention.value(QStringLiteral("normalization")).toString(), QStringLiteral("rms"));
        QCOMPARE(convention.value(QStringLiteral("unit")).toString(), QStringLiteral("waves"));
        WFS_VERIFY_CLOSE(convention.value(QStringLiteral("wavelength_m")).toDouble(), r.wavelength, 1e-12, 0.0);
        const QJsonArray list = o.value(QStringLiteral("coefficients")).toArray();
        QCOMPARE(list.size(), int(r.coefficients.size()));
        const QJsonObject z4 = list.at(2).toObject();
        QCOMPARE(z4.value(QStringLiteral("index")).toInt(), 4);
        QCOMPARE(z4.value(QStringLiteral("n")).toInt(), 2);
        QCOMPARE(z4.value(QStringLiteral("m")).toInt(), 0);
        QVERIFY(z4.value(QStringLiteral("uncertainty_waves")).toDouble() > 0.0);
        WFS_VERIFY_CLOSE(z4.value(QStringLiteral("uncertainty_nm")).toDouble(), z4.value(QStringLiteral("uncertainty_waves")).toDouble() * r.wavelength * 1e9, 1e-9, 0.0);
        // The CSV: a header row first (no comment lines), the conventions as columns of every row.
        const QString csv = QString::fromUtf8(coefficientsCsvBytes(r));
        QVERIFY(csv.startsWith(QStringLiteral("index,n,m,name,value_waves,value_nm,value_rad,uncertainty_waves,uncertainty_nm,free,ordering,normalization,wavelength_nm\n")));
        QVERIFY(!csv.contains(QLatin1Char('#')));
        const QStringList lines = csv.split(QLatin1Char('\n'), Qt::SkipEmptyParts);
        QCOMPARE(lines.size(), int(r.coefficients.size()) + 1);
        for (const QString& line : lines.mid(1))
            QVERIFY2(line.endsWith(QStringLiteral(",noll,rms,633")), qPrintable(line));
    }

    void sessionRoundTrip()
    {
        QTemporaryDir dir;
        const QString tif = dir.filePath(QStringLiteral("data/stack.tif"));
        QDir(dir.path()).mkdir(QStringLiteral("data"));
        std::vector<Image> pages;
        for (int k = 0; k < 4; ++k)
            pages.push_back(asymmetricImage(24, 24, 97 + k));
        writeTiff(tif.toStdString(), pages, {});

        Session s;
        addFiles(s.dataset, {tif.toStdString()});
        DatasetMetadata& m = s.dataset.metadata;
        m.wavelength = 605e-9;
        m.numericalAperture = 1.1;
        m.immersionIndex = 1.33;
        m.pixelPitch = 0.1e-6;
        m.zStep = 0.3e-6;
        m.focusPlane = 1.5;
        m.defocusModel = DefocusModel::HighNa;
        m.saturationLevel = 4000.0;
        m.origin["wavelength"] = "user";
        selectPlanes(s.dataset, {0, 1, 3});
        s.dataset.planes[3].defocus = {PlaneDefocus::Kind::Waves, 0.75};
        PreprocessOptions& p = s.dataset.preprocess;
        p.centre = CentreMethod::Centroid;
        p.cropSize = 16;
        p.maskHotPixels = true;
        p.hotPixelSigma = 6.0;
        p.badPixels = {{1, 2}, {3, 4}};
        p.clipSigma = 2.5;
        s.model.order = 6;
        s.model.ordering = ZernikeOrdering::Ansi;
        s.model.normalization = ZernikeNormalization::Unit;
        s.model.objective = ObjectiveKind::Poisson;
        s.model.obscuration = 0.2;
        s.model.fitShift = true;
        s.model.fixedTerms = {4};
        // Every model setting away from its default, so that one lost on the way back shows.
        s.model.readNoise = 2.5;
        s.model.grid = 64;
        s.model.spiderCount = 3;
        s.model.spiderWidth = 0.02;
        s.model.spiderAngleDeg = 30.0;
        s.model.fitFlux = false;
        s.model.fitBackground = false;
        s.solver.backend = BackendKind::Gpu;
        s.solver.precision = Precision::Float;
        s.solver.stages = {2, 4, 6};
        s.solver.maxIterations = 77;
        s.solver.gradient = GradientKind::FiniteDifference;
        s.solver.optimizer = OptimizerKind::Lbfgs;
        s.solver.threads = 3;
        s.solver.gradientTolerance = 2e-7;
        s.solver.functionTolerance = 3e-10;
        s.solver.removeDefocus = true;
        s.solver.computeUncertainty = false;
        s.result = resultToJson(smallResult());
        s.resultParameters = smallResult().parameterValues;
        prepare(s.dataset);

        const std::string path = dir.filePath(QStringLiteral("session.json")).toStdString();
        saveSession(path, s, false);
        OpenedSession o = openSession(path);
        for (const DatasetMessage& msg : o.messages) // the crop runs off this small image: warnings, but no error
            QVERIFY2(msg.level != MessageLevel::Error && !contains(msg.text, "changed"), msg.text.c_str());
        const Session& t = o.session;
        QCOMPARE(t.dataset.files.size(), size_t(1));
        QCOMPARE(t.dataset.files[0].sha256, s.dataset.files[0].sha256);
        QCOMPARE(usedPlanes(t.dataset), (std::vector<int>{0, 1, 3}));
        QCOMPARE(t.dataset.planes[3].defocus, s.dataset.planes[3].defocus);
        QCOMPARE(t.dataset.planes[0].defocus, PlaneDefocus{});
        QCOMPARE(*t.dataset.metadata.wavelength, 605e-9);
        QCOMPARE(*t.dataset.metadata.focusPlane, 1.5);
        QCOMPARE(t.dataset.metadata.immersionIndex, 1.33);
        QCOMPARE(t.dataset.metadata.defocusModel, DefocusModel::HighNa);
        QCOMPARE(*t.dataset.metadata.saturationLevel, 4000.0);
        QCOMPARE(t.dataset.metadata.origin.at("wavelength"), std::string("user"));
        QVERIFY(t.dataset.preprocess == s.dataset.preprocess);
        QVERIFY(t.model == s.model);
        QVERIFY(t.solver == s.solver);
        QCOMPARE(t.result, s.result);
        QCOMPARE(t.resultParameters, s.resultParameters);
        // The data are re-read and re-prepared identically.
        QVERIFY(isPrepared(t.dataset));
        for (size_t k = 0; k < s.dataset.planes.size(); ++k) {
            QCOMPARE(t.dataset.planes[k].raw.pixels, s.dataset.planes[k].raw.pixels);
            const Image& a = s.dataset.preparation->planes[k].image;
            const Image& b = t.dataset.preparation->planes[k].image;
            for (size_t i = 0; i < a.pixels.size(); ++i)
                QVERIFY(a.pixels[i] == b.pixels[i] || (std::isnan(a.pixels[i]) && std::isnan(b.pixels[i])));
        }

        // Moved together with its data, the session finds the inputs by their relative path.
        const QString moved = dir.filePath(QStringLiteral("moved"));
        QVERIFY(QDir().rename(dir.path() + QStringLiteral("/data"), moved + QStringLiteral("_data")));
        QDir().mkdir(moved);
        QVERIFY(QDir().rename(moved + QStringLiteral("_data"), moved + QStringLiteral("/data")));
        QVERIFY(QFile::copy(QString::fromStdString(path), moved + QStringLiteral("/session.json")));
        o = openSession((moved + QStringLiteral("/session.json")).toStdString());
        QCOMPARE(o.session.dataset.planes.size(), size_t(4));

        // A changed input is detected; a missing one is an error message, and the session still opens.
        writeTiff((moved + QStringLiteral("/data/stack.tif")).toStdString(), {asymmetricImage(24, 24, 50)}, {});
        o = openSession((moved + QStringLiteral("/session.json")).toStdString());
        bool changed = false, count = false;
        for (const DatasetMessage& msg : o.messages) {
            changed = changed || (msg.level == MessageLevel::Warning && contains(msg.text, "has changed since the session was saved"));
            count = count || contains(msg.text, "has 1 planes, the session expected 4");
        }
        QVERIFY(changed && count);
        QVERIFY(QFile::remove(moved + QStringLiteral("/data/stack.tif")));
        o = openSession((moved + QStringLiteral("/session.json")).toStdString());
        QVERIFY(o.session.dataset.planes.empty());
        QCOMPARE(o.messages.front().level, MessageLevel::Error);
        QVERIFY2(contains(o.messages.front().text, "stack.tif: input of the session not found"), o.messages.front().text.c_str());
        QCOMPARE(o.session.model.order, 6);

        // No silent overwrite.
        try {
            saveSession(path, s, false);
            QFAIL("an existing session was overwritten");
        } catch (const SessionError& e) {
            QVERIFY(contains(e.what(), "refusing to overwrite"));
        }
    }

    void malformedSessions()
    {
        std::string m = sessionError(R"({"format": "wavefront-studio-session", "format_version": 2, "inputs": []})");
        QVERIFY2(contains(m, "s.json") && contains(m, "version 2 is newer than this program reads (up to 1)"), m.c_str());
        m = sessionError(R"({"format": "something-else", "format_version": 1})");
        QVERIFY2(contains(m, "not a Wavefront Studio session"), m.c_str());
        m = sessionError(R"({"format": "wavefront-studio-session"})");
        QVERIFY2(contains(m, "format_version"), m.c_str());
        m = sessionError(R"({"format": "wavefront-studio-session", "format_version": 1, "inputs": {}})");
        QVERIFY2(contains(m, "\"inputs\" must be an array"), m.c_str());
        m = sessionError(R"({"format": "wavefront-studio-session", "format_version": 1, "inputs": [], "model": {"order": "six"}})");
        QVERIFY2(contains(m, "\"model.order\" must be an integer"), m.c_str());
        m = sessionError(R"({"format": "wavefront-studio-session", "format_version": 1, "inputs": [], "model": {"order": 40}})");
        QVERIFY2(contains(m, "\"model.order\" must be between 1 and 15"), m.c_str());
        m = sessionError(R"({"format": "wavefront-studio-session", "format_version": 1, "inputs": [], "planes": [{"file": 3, "index": 0}]})");
        QVERIFY2(contains(m, "\"planes[0].file\" must name one of the inputs"), m.c_str());
        m = sessionError(R"({"format": "wavefront-studio-session", "format_version": 1, "inputs": [], "preprocess": {"centre": "middle"}})");
        QVERIFY2(contains(m, "\"preprocess.centre\" must be one of none|peak|centroid"), m.c_str());
        m = sessionError(R"({"format": "wavefront-studio-session", "format_version": 1, "inputs": [], "metadata": {"wavelength_m": "red"}})");
        QVERIFY2(contains(m, "\"metadata.wavelength_m\" must be a number or null"), m.c_str());

        QTemporaryDir dir;
        const QString broken = dir.filePath(QStringLiteral("broken.json"));
        writeBytes(broken, "{\"format\": \"wavefront-studio-session\", ");
        try {
            openSession(broken.toStdString());
            QFAIL("broken JSON was accepted");
        } catch (const SessionError& e) {
            QVERIFY2(contains(e.what(), "broken.json: not valid JSON"), e.what());
        }
        try {
            openSession(dir.filePath(QStringLiteral("none.json")).toStdString());
            QFAIL("a missing session was opened");
        } catch (const SessionError& e) {
            QVERIFY(contains(e.what(), "none.json: file not found"));
        }
    }
};

QTEST_MAIN(TestExports)
#include "tst_exports.moc"
