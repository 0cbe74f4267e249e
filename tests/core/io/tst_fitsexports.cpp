// The FITS exports as FITS tools see them (issue 14): every file the program writes passes fitsverify;
// DATE, CREATOR and BUNIT everywhere; the same keywords for presets and files; comments never cut
// mid-word; a linear WCS for the pupil (checked against the pupil's NaN border) and for cube axes
// (defocus, or a DEFOCUS table); the multi-extension results file; the PSF analysis CSV's header row.
#include "ExportChecks.h"
#include "ModelFixtures.h"
#include "TestSupport.h"

#include "engine/Presets.h"
#include "fit/PsfAnalysis.h"
#include "io/Exports.h"
#include "io/Fits.h"
#include "io/Provenance.h"

#include <QFile>
#include <QRegularExpression>
#include <QTemporaryDir>

#include <fitsio.h>

#include <cmath>
#include <map>

using namespace wfs;
using namespace wfs::test;

namespace {

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

class TestFitsExports : public QObject {
    Q_OBJECT

private slots:
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
            {"comment.fits", QByteArray::fromStdString(fitsBytes(
                                 {Image(4, 4, 1.0)},
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
        QVERIFY2(QRegularExpression(QStringLiteral("^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}$"))
                     .match(QString::fromStdString(text(h, "DATE")))
                     .hasMatch(),
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
        const HeaderCards o = headerCards(
            [&] {
                const std::string p = dir.filePath(QStringLiteral("o.fits")).toStdString();
                writeFile(p, phaseFitsBytes(smallOofResult(), {}, {false, PhaseUnit::Radians, false}));
                return p;
            }(),
            1);
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
        QVERIFY2(lines[0].startsWith(
                     QStringLiteral("strehl,fwhm_fitted_px,fwhm_diffraction_px,lambda_over_d_per_px,mtf_cutoff_cycles_per_px,radius_px,")),
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
};

QTEST_MAIN(TestFitsExports)
#include "tst_fitsexports.moc"
