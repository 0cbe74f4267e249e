// Exports and sessions: phase maps as FITS (float32/float64, units, header) and PNG (colour bar,
// orientation, wrapped phase on the cyclic map), model and residual cubes, coefficient tables, no
// silent overwrite; session files that re-load and re-prepare the data and detect changed and missing
// inputs (each setting's round trip and malformed sessions: tst_sessions).
#include "ImageTestFiles.h"
#include "ModelFixtures.h"
#include "TestSupport.h"

#include "engine/Presets.h"
#include "engine/ReconstructionEngine.h"
#include "io/Exports.h"
#include "PhaseImage.h"
#include "io/Fits.h"
#include "io/Session.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QTemporaryDir>

#include <cmath>
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
        auto rgb = [](QRgb p) {
            return std::array<std::uint8_t, 3>{std::uint8_t(qRed(p)), std::uint8_t(qGreen(p)), std::uint8_t(qBlue(p))};
        };
        QCOMPARE(rgb(image.pixel(margin + 55, margin + 5)), colorMapRgb(ColorMap::Viridis, 1.0));  // top row = highest
        QCOMPARE(rgb(image.pixel(margin + 55, margin + 95)), colorMapRgb(ColorMap::Viridis, 0.0)); // bottom row = lowest
        QCOMPARE(image.pixel(margin + 5, margin + 95), qRgb(255, 255, 255));                       // NaN (row 0, column 0): white
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
            QVERIFY2(closeTo(mantissa, 1.0, 1e-6) || closeTo(mantissa, 2.0, 1e-6) || closeTo(mantissa, 5.0, 1e-6),
                     qPrintable(QString::number(step)));
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
        // Issue 42: the exported picture has the window's axes, in pupil radii from the result's geometry, with a
        // tick at the centre (the PNG was a bare map); drawn only where there are fonts (the test has a QGuiApplication).
        QVERIFY(r.phaseMapGeometry.spacing > 0);
        const QString axes = back.text(QStringLiteral("Axes"));
        QVERIFY2(axes.startsWith(QStringLiteral("x (pupil radius): ")) && axes.contains(QStringLiteral("y (pupil radius): "))
                     && axes.contains(QStringLiteral(" 0 ")),
                 qPrintable(axes));
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
        WFS_VERIFY_CLOSE(z4.value(QStringLiteral("uncertainty_nm")).toDouble(),
                         z4.value(QStringLiteral("uncertainty_waves")).toDouble() * r.wavelength * 1e9, 1e-9, 0.0);
        // The CSV: a header row first (no comment lines), the conventions as columns of every row.
        const QString csv = QString::fromUtf8(coefficientsCsvBytes(r));
        QVERIFY(csv.startsWith(QStringLiteral(
            "index,n,m,name,value_waves,value_nm,value_rad,uncertainty_waves,uncertainty_nm,free,ordering,normalization,wavelength_nm\n")));
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
};

QTEST_MAIN(TestExports)
#include "tst_exports.moc"
