// Hostile inputs and values (issue 12, items 2, 3, 9, 10, 11): FIFOs and unreadable files refused
// with the reason, sizes checked before allocation (gzip FITS, PNG headers, crops), messages that
// name the real cause, implausible values refused with their range, and an engine that reports a
// thread it could not create instead of aborting.
#include "TestSupport.h"

#include "ImageTestFiles.h"
#include "engine/Presets.h"
#include "engine/ReconstructionEngine.h"
#include "io/Dataset.h"
#include "io/Fits.h"
#include "io/Session.h"
#include "io/SettingOptions.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonObject>
#include <QTemporaryDir>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

using namespace wfs;
using namespace wfs::test;

namespace {

bool contains(const std::string& text, const std::string& part)
{
    return text.find(part) != std::string::npos;
}

std::string allText(const std::vector<DatasetMessage>& messages)
{
    std::string text;
    for (const DatasetMessage& m : messages)
        text += std::string(messageLevelName(m.level)) + ": " + m.text + "\n";
    return text;
}

void writeBytes(const QString& path, const QByteArray& bytes)
{
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(bytes);
}

void gzipFile(const QString& from, const QString& to)
{
    QFile in(from);
    QVERIFY(in.open(QIODevice::ReadOnly));
    const QByteArray data = in.readAll();
    gzFile out = gzopen(to.toLocal8Bit().constData(), "wb");
    QVERIFY(out);
    gzwrite(out, data.constData(), unsigned(data.size()));
    gzclose(out);
}

// A dataset of one 32 x 32 spot with the metadata a fit needs.
Dataset spotDataset(const QTemporaryDir& dir)
{
    const std::string path = dir.filePath(QStringLiteral("spot.fits")).toStdString();
    Image img(32, 32, 1.0);
    img.at(16, 16) = 1000.0;
    img.at(15, 16) = img.at(16, 15) = 300.0;
    writeFits(path, {img}, {}, false, true);
    Dataset data;
    addFiles(data, {path});
    data.metadata.wavelength = 633e-9;
    data.metadata.samplingQ = 2.0;
    return data;
}

} // namespace

class TestHostile : public QObject {
    Q_OBJECT

private slots:
    void fifoIsRefusedNotWaitedOn()
    {
        // Defect 3: opening a FIFO blocks until a writer comes; it is refused before any open.
        QTemporaryDir dir;
        const QString fifo = dir.filePath(QStringLiteral("psf.fits"));
        QCOMPARE(::mkfifo(fifo.toLocal8Bit().constData(), 0600), 0);
        QVERIFY(contains(errorOf([&] { readImageFile(fifo.toStdString()); }), "not a regular file"));
        QVERIFY(contains(errorOf([&] { readFits(fifo.toStdString()); }), "not a regular file"));
        Dataset data;
        const auto messages = addFiles(data, {fifo.toStdString()});
        QVERIFY2(contains(allText(messages), "not a regular file"), allText(messages).c_str());
        const QString session = dir.filePath(QStringLiteral("s.json"));
        QCOMPARE(::mkfifo(session.toLocal8Bit().constData(), 0600), 0);
        QVERIFY(contains(errorOf([&] { openSession(session.toStdString()); }), "not a regular file"));
        const QString empty = dir.filePath(QStringLiteral("empty.fits"));
        writeBytes(empty, {});
        QVERIFY(contains(errorOf([&] { readImageFile(empty.toStdString()); }), "the file is empty"));
    }

    void unreadableFileSaysPermission()
    {
        // Used to be "not a readable FITS file". Root reads every file, so as root the check runs in a
        // child that drops to the user "nobody".
        QTemporaryDir dir;
        QFile::setPermissions(dir.path(), QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner | QFileDevice::ExeOther);
        const QString path = dir.filePath(QStringLiteral("locked.fits"));
        writeFits(path.toStdString(), {Image(4, 4, 1.0)}, {}, false, false);
        QFile::setPermissions(path, QFileDevice::WriteOwner);
        std::fflush(nullptr);
        const pid_t pid = ::fork();
        if (pid == 0) {
            if (::geteuid() == 0 && (::setgid(65534) != 0 || ::setuid(65534) != 0))
                ::_exit(2);
            ::_exit(contains(errorOf([&] { readImageFile(path.toStdString()); }), "permission denied") ? 0 : 1);
        }
        int status = 0;
        ::waitpid(pid, &status, 0);
        QVERIFY2(WIFEXITED(status) && WEXITSTATUS(status) == 0, qPrintable(QString::number(status)));
    }

    void gzipFitsIsInflatedWithABound()
    {
        // Defect 9: CFITSIO sized its memory from the gzip file; now we inflate in chunks to disk.
        QTemporaryDir dir;
        const QString plain = dir.filePath(QStringLiteral("a.fits")), packed = dir.filePath(QStringLiteral("a.fits.gz"));
        writeFits(plain.toStdString(), {asymmetricImage(64, 64)}, {}, false, false);
        gzipFile(plain, packed);
        const FitsContent read = readFits(packed.toStdString());
        QCOMPARE(read.planes.size(), size_t(1));
        QCOMPARE(read.planes[0].at(5, 7), asymmetricImage(64, 64).at(5, 7));
        // A gzip bomb: 20 MB of zeros in about 20 KB. Inflating stops at the limit's worth of bytes
        // (with small limits here), long before the whole expansion is held anywhere.
        const QString bomb = dir.filePath(QStringLiteral("bomb.fits.gz"));
        {
            gzFile out = gzopen(bomb.toLocal8Bit().constData(), "wb9");
            QVERIFY(out);
            QByteArray header(2880, ' ');
            header.replace(0, 30, "SIMPLE  =                    T");
            gzwrite(out, header.constData(), unsigned(header.size()));
            const QByteArray zeros(1 << 20, '\0');
            for (int i = 0; i < 20; ++i)
                gzwrite(out, zeros.constData(), unsigned(zeros.size()));
            gzclose(out);
        }
        QVERIFY(QFileInfo(bomb).size() < (1 << 20));
        ReadLimits small;
        small.maxPixels = 64;
        const std::string m = errorOf([&] { readFits(bomb.toStdString(), small); });
        QVERIFY2(contains(m, "bomb.fits.gz") && contains(m, "expand to more than"), m.c_str());
        QFile in(bomb);
        QVERIFY(in.open(QIODevice::ReadOnly));
        const QByteArray bytes = in.readAll();
        QVERIFY(contains(
            errorOf([&] { readFitsBuffer(reinterpret_cast<const std::uint8_t*>(bytes.constData()), size_t(bytes.size()), "mem", small); }),
            "expand to more than"));
        // Other compressions CFITSIO would undo in memory are refused by name.
        const QString z = dir.filePath(QStringLiteral("b.fits"));
        writeBytes(z, QByteArray("\x1f\x9d\x90", 3) + QByteArray(3000, 'x'));
        QVERIFY(contains(errorOf([&] { readFits(z.toStdString()); }), "Unix compress"));
    }

    void pngClaimingMoreThanItHoldsIsRefused()
    {
        // A few bytes declaring 8000 x 8000 RGB: refused before the pixel buffer is allocated.
        const QByteArray png = pngWithHeader(8000, 8000, 8, 2);
        const std::string m =
            errorOf([&] { readPngMemory(reinterpret_cast<const std::uint8_t*>(png.constData()), size_t(png.size()), "claim.png"); });
        QVERIFY2(contains(m, "claim.png") && contains(m, "8000 x 8000") && contains(m, "compressed data can hold"), m.c_str());
    }

    void absurdCropIsRefusedBeforeAllocating()
    {
        QTemporaryDir dir;
        Dataset data = spotDataset(dir);
        data.preprocess.cropSize = 16384;
        const auto messages = prepare(data);
        QVERIFY2(contains(allText(messages), "error: the crop (16384 x 16384) is larger than the images (at most 32"),
                 allText(messages).c_str());
        QCOMPARE(data.preparation->planes[0].image.width, 32); // not padded to 16384
    }

    void absurdBorderAndSpidersAreRefused()
    {
        QTemporaryDir dir;
        Dataset data = spotDataset(dir);
        data.preprocess.borderWidth = 100000;
        const auto messages = prepare(data);
        QVERIFY2(contains(allText(messages), "error: the border (100000 pixels) leaves nothing inside"), allText(messages).c_str());
        data.preprocess.borderWidth = 0;
        prepare(data);
        ModelSettings spiders;
        spiders.spiderCount = 1000000;
        spiders.spiderWidth = 0.01;
        QVERIFY(contains(errorOf([&] { buildProblem(data, spiders); }), "from 0 to 64"));
    }

    void messagesNameTheCause()
    {
        // Defect 10: sizes of the planes that differ, the reason no plane takes part.
        QTemporaryDir dir;
        const std::string a = dir.filePath(QStringLiteral("a.fits")).toStdString(),
                          b = dir.filePath(QStringLiteral("b.fits")).toStdString();
        writeFits(a, {asymmetricImage(16, 16)}, {}, false, false);
        writeFits(b, {Image(1, 1, 5.0), Image(1, 1, 6.0)}, {}, false, false);
        Dataset data;
        addFiles(data, {a});
        const auto messages = addFiles(data, {b});
        QVERIFY2(contains(allText(messages), "2 plane(s) of 1 x 1") && contains(allText(messages), "from dataset plane 0 (16 x 16)"),
                 allText(messages).c_str());

        const std::string empty = dir.filePath(QStringLiteral("empty.fits")).toStdString();
        writeFits(empty, {Image(8, 8, std::nan("")), Image(8, 8, 0.0)}, {}, false, false);
        Dataset blank;
        addFiles(blank, {empty});
        blank.metadata.wavelength = 633e-9;
        const std::string m = errorOf([&] { buildProblem(blank, {}); });
        QVERIFY2(contains(m, "no plane takes part") && contains(m, "NaN or blank"), m.c_str());

        // A finite but huge value is named as such (it used to surface as "pixel is infinite").
        const std::string huge = dir.filePath(QStringLiteral("huge.fits")).toStdString();
        Image big = asymmetricImage(8, 8);
        big.at(2, 2) = 1e308;
        writeFits(huge, {big}, {}, false, false);
        Dataset h;
        const auto hm = addFiles(h, {huge});
        QVERIFY2(contains(allText(hm), "pixel values reach 1e+308"), allText(hm).c_str());
        h.metadata.wavelength = 633e-9;
        QVERIFY(contains(errorOf([&] { buildProblem(h, {}); }), "values too large"));
    }

    void complexTiffIsCalledComplex()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("c.tif"));
        // 1 x 1, 64 bits per sample, SampleFormat 6 (complex IEEE float).
        writeBytes(path, rawTiff({{256, 3, 1, 1},
                                  {257, 3, 1, 1},
                                  {258, 3, 1, 64},
                                  {259, 3, 1, 1},
                                  {262, 3, 1, 1},
                                  {273, 4, 1, 200},
                                  {277, 3, 1, 1},
                                  {278, 3, 1, 1},
                                  {279, 4, 1, 8},
                                  {339, 3, 1, 6}},
                                 QByteArray(200, '\0')));
        const std::string m = errorOf([&] { readImageFile(path.toStdString()); });
        QVERIFY2(contains(m, "complex floating-point") && !contains(m, "unsigned"), m.c_str());
    }

    void implausibleValuesAreRefusedWithTheRange()
    {
        // Defect 11: the one parser and the plausible ranges (base/Units.h).
        QCOMPARE(*lengthFromText("633"), 633.0); // a bare number is metres...
        const std::string w = plausibilityError(Setting::Wavelength, 633.0);
        QVERIFY2(contains(w, "1 nm to 1 m") && contains(w, "did you mean 633nm?"), w.c_str()); // ...and 633 m is refused
        QVERIFY(plausibilityError(Setting::Wavelength, 633e-9).empty());
        QVERIFY(contains(plausibilityError(Setting::Wavelength, 1e30), "not plausible"));
        QVERIFY(contains(plausibilityError(Setting::PixelPitch, 5.5), "did you mean 5.5um?"));
        QVERIFY(!plausibilityError(Setting::DefocusWaves, 1e9).empty());
        QVERIFY(plausibilityError(Setting::DefocusWaves, -2.0).empty());
        QVERIFY(!plausibilityError(Setting::ReadNoise, -1.0).empty());
        QVERIFY(!plausibilityError(Setting::ZernikeWaves, 1e300).empty());
        QVERIFY(!defocusFromText("2")); // waves or metres? refused
        QVERIFY(valueFromText("5mas")->kind == ValueWithUnit::Kind::Angle);
        // Decimal numbers only: "0x10" is not 16 (--aperture 0x10 was a 16 m aperture).
        for (const char* hex : {"0x10", "0x10m", "0X1p3um", "-0x2"})
            QVERIFY2(!valueFromText(hex), hex);
        QCOMPARE(*lengthFromText("1.5e-3m"), 1.5e-3);

        QTemporaryDir dir;
        Dataset data = spotDataset(dir);
        data.metadata.wavelength = 633.0;
        data.metadata.origin["wavelength"] = "command line";
        std::string m = errorOf([&] { buildProblem(data, {}); });
        QVERIFY2(contains(m, "did you mean 633nm?") && contains(m, "(from command line)"), m.c_str());
        data.metadata.wavelength = 633e-9;
        data.metadata.samplingQ.reset();
        data.metadata.pixelPitch = 0.1e-6;
        data.metadata.numericalAperture = 1.4; // in air
        m = errorOf([&] { buildProblem(data, {}); });
        QVERIFY2(contains(m, "exceeds the immersion index"), m.c_str());
        data.metadata.immersionIndex = 1.518;
        data.planes[0].defocus = {PlaneDefocus::Kind::Waves, 1e9};
        QVERIFY(contains(errorOf([&] { buildProblem(data, {}); }), "at most 1000 waves"));
        data.planes[0].defocus = {};
        ModelSettings negative;
        negative.readNoise = -1.0;
        QVERIFY(contains(errorOf([&] { buildProblem(data, negative); }), "read noise -1"));
        QVERIFY(errorOf([&] { buildProblem(data, {}); }).empty());
    }

    void lengthsWithoutTheirUnitAreQuestioned()
    {
        // Issue 40, part 3: "0.1" in the pixel pitch was taken as 0.1 m (inside 1 nm - 10 cm) and the fit then
        // failed with "use a larger grid". The ranges are the instruments' and name the setting, with the unit meant.
        const std::string pitch = plausibilityError(Setting::PixelPitch, 0.1);
        QVERIFY2(contains(pitch, "the pixel pitch 0.1 m is not plausible") && contains(pitch, "did you mean 0.1um?"), pitch.c_str());
        const std::string step = plausibilityError(Setting::ZStep, 0.3); // a z step of metres
        QVERIFY2(contains(step, "the z step 0.3 m is not plausible") && contains(step, "did you mean 0.3um?"), step.c_str());
        QVERIFY(contains(plausibilityError(Setting::ZStep, -0.3), "did you mean -0.3um?"));
        QVERIFY(contains(plausibilityError(Setting::Aperture, 2400.0), "did you mean 2400mm?"));
        QVERIFY(contains(plausibilityError(Setting::ObjectDiameter, 100.0), "did you mean 100nm?"));
        QVERIFY(contains(plausibilityError(Setting::EmitterDepth, 2.0), "did you mean 2um?"));
        QVERIFY(contains(plausibilityError(Setting::Wavelength, 605.0), "did you mean 605nm?"));
        for (const auto& [setting, value] : std::vector<std::pair<Setting, double>>{{Setting::PixelPitch, 0.1e-6},
                                                                                    {Setting::PixelPitch, 6.5e-6},
                                                                                    {Setting::PixelPitch, 1e-3},
                                                                                    {Setting::ZStep, 0.3e-6},
                                                                                    {Setting::ZStep, -2e-3},
                                                                                    {Setting::Aperture, 2.4}})
            QVERIFY2(plausibilityError(setting, value).empty(), plausibilityError(setting, value).c_str());
        QCOMPARE(likelyMeaning(Setting::PixelPitch, 0.1), std::string("0.1um"));
        QCOMPARE(likelyMeaning(Setting::NumericalAperture, 1.1), std::string()); // no length: no unit to guess

        // A field of its own (the desktop's) takes a length only with its unit: a bare number is questioned.
        using Verdict = TypedValue::Verdict;
        TypedValue t = typedValue(Setting::PixelPitch, " 0.1 ");
        QVERIFY(t.verdict == Verdict::Questioned);
        QVERIFY2(contains(t.message, "pixel pitch '0.1' has no unit") && contains(t.message, "0.1 m is not plausible")
                     && contains(t.message, "did you mean 0.1um?"),
                 t.message.c_str());
        t = typedValue(Setting::PixelPitch, "6.5e-6"); // plausible as metres, and still asked
        QVERIFY2(t.verdict == Verdict::Questioned && contains(t.message, "6.5 um") && !contains(t.message, "not plausible"),
                 t.message.c_str());
        t = typedValue(Setting::ZStep, "0.3");
        QVERIFY2(t.verdict == Verdict::Questioned && contains(t.message, "z step") && contains(t.message, "did you mean 0.3um?"),
                 t.message.c_str());
        t = typedValue(Setting::Wavelength, "605");
        QVERIFY2(t.verdict == Verdict::Questioned && contains(t.message, "did you mean 605nm?"), t.message.c_str());
        t = typedValue(Setting::PixelPitch, "0.1 um");
        QVERIFY(t.verdict == Verdict::Taken);
        WFS_VERIFY_CLOSE(t.value, 0.1e-6, 1e-15, 0.0);
        QVERIFY(t.message.empty());
        t = typedValue(Setting::PixelPitch, "0.1m"); // the unit written, the value implausible: refused by name
        QVERIFY2(t.verdict == Verdict::Refused && contains(t.message, "pixel pitch 0.1 m is not plausible"), t.message.c_str());
        t = typedValue(Setting::PixelPitch, "1w");
        QVERIFY2(t.verdict == Verdict::Refused && contains(t.message, "is not a length"), t.message.c_str());
        QVERIFY(typedValue(Setting::EmitterDepth, "0").verdict == Verdict::Taken); // a zero has no unit to get wrong
        QVERIFY(typedValue(Setting::PixelPitch, "").verdict == Verdict::Empty);
        t = typedValue(Setting::NumericalAperture, "1.1"); // no length: a bare number is the value
        QVERIFY(t.verdict == Verdict::Taken && t.value == 1.1);
        QVERIFY(typedValue(Setting::NumericalAperture, "1.1um").verdict == Verdict::Refused);
        QVERIFY(typedValue(Setting::NumericalAperture, "2.5").verdict == Verdict::Refused);

        // The command line's parser (the same table, a bare number is metres) refuses it with the option's name.
        const std::string cli = errorOf([] { parsePlausibleOption(QStringLiteral("0.1"), "--pixel-scale", Setting::PixelPitch); });
        QVERIFY2(contains(cli, "--pixel-scale: the pixel pitch 0.1 m is not plausible") && contains(cli, "did you mean 0.1um?"),
                 cli.c_str());
        WFS_VERIFY_CLOSE(parsePlausibleOption(QStringLiteral("6.5e-6"), "--pixel-scale", Setting::PixelPitch), 6.5e-6, 1e-15, 0.0);
    }

    void fewerPixelsThanParametersIsAnError()
    {
        QTemporaryDir dir;
        const std::string path = dir.filePath(QStringLiteral("tiny.fits")).toStdString();
        writeFits(path, {Image(2, 2, 3.0)}, {}, false, false);
        Dataset data;
        addFiles(data, {path});
        data.metadata.wavelength = 633e-9;
        data.metadata.samplingQ = 2.0;
        data.planes[0].raw.at(0, 0) = 9.0;
        const std::string m = errorOf([&] { buildProblem(data, {}); });
        QVERIFY2(contains(m, "parameters cannot be fitted to") && contains(m, "pixels"), m.c_str());
    }

    void sessionValuesAreChecked()
    {
        QTemporaryDir dir;
        Session s;
        s.dataset = spotDataset(dir);
        s.dataset.preprocess.badPixels = {{1, 2}};
        const std::string path = dir.filePath(QStringLiteral("s.json")).toStdString();
        saveSession(path, s, false);
        QFile f(QString::fromStdString(path));
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QByteArray good = f.readAll();
        f.close();
        // bad_pixels of 1e18 used to become pixel (0, 0); bad stages are the session's error, named.
        QByteArray bad = good;
        bad.replace("[\n                1,\n                2\n            ]", "[1e18, 2]");
        QVERIFY2(bad != good, good.constData());
        writeBytes(QString::fromStdString(path), bad);
        QVERIFY(contains(errorOf([&] { openSession(path); }), "bad_pixels"));
        bad = good;
        bad.replace("\"stages\": [\n        ]", "\"stages\": [6, 2]");
        QVERIFY2(bad != good, good.constData());
        writeBytes(QString::fromStdString(path), bad);
        const std::string m = errorOf([&] { openSession(path); });
        QVERIFY2(contains(m, "solver.stages") && contains(m, "increasing"), m.c_str());
        // A model setting out of range is named by its own key under "model" (it was "solver.spectral_samples").
        bad = good;
        bad.replace("\"spectral_samples\": 1", "\"spectral_samples\": 99");
        QVERIFY2(bad != good, good.constData());
        writeBytes(QString::fromStdString(path), bad);
        const std::string spectral = errorOf([&] { openSession(path); });
        QVERIFY2(contains(spectral, "model.spectral_samples") && !contains(spectral, "solver."), spectral.c_str());
    }

    void truthOfAbsurdSizeIsRefused()
    {
        QJsonObject c{{QStringLiteral("index"), 4}, {QStringLiteral("value_waves"), 1e300}};
        QJsonObject truth{{QStringLiteral("coefficients"), QJsonArray{c}}};
        QVERIFY(contains(errorOf([&] { truthFromJson(truth, QStringLiteral("t.json")); }), "at most 1000 waves"));
        // One term given twice: refused, both values named (one of them used to be kept silently).
        const QJsonObject a{{QStringLiteral("index"), 5}, {QStringLiteral("value_waves"), 0.1}},
            b{{QStringLiteral("index"), 5}, {QStringLiteral("value_waves"), 0.2}};
        const std::string twice = errorOf([&] {
            truthFromJson(QJsonObject{{QStringLiteral("coefficients"), QJsonArray{a, b}}}, QStringLiteral("t.json"));
        });
        QVERIFY2(contains(twice, "index 5 is given twice"), twice.c_str());
    }

    void engineWithoutAThreadReportsIt()
    {
        // Defect 2: std::thread's constructor throwing (ulimit -u) is a message, not std::terminate.
        PresetOptions options;
        options.grid = 32;
        options.order = 2;
        const PresetCase c = makePreset("demo", options);
        ReconstructionRequest request;
        request.spec = c.spec;
        ReconstructionEngine::setThreadCreationFailsForTesting(true);
        ReconstructionEngine engine;
        engine.start(request);
        ReconstructionEngine::setThreadCreationFailsForTesting(false);
        QVERIFY(!engine.isRunning());
        engine.wait();
        QVERIFY2(contains(engine.error(), "cannot start the reconstruction thread") && contains(engine.error(), "ulimit"),
                 engine.error().c_str());
        QVERIFY(!engine.result());
        // And the engine works again once threads can be made.
        request.solver.maxIterations = 2;
        engine.start(request);
        engine.wait();
        QVERIFY2(engine.error().empty(), engine.error().c_str());
        QVERIFY(engine.result().has_value());
    }
};

QTEST_GUILESS_MAIN(TestHostile)
#include "tst_hostile.moc"
