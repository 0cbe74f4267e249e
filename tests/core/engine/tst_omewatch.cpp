// Live mode and OME-TIFF stacks (issue 25): a multi-page TIFF whose first page's ImageDescription is OME-XML, as
// Micro-Manager and Bio-Formats write them, written here by the test itself: 32-bit floats through core's TIFF
// writer, and 16-bit pages through libtiff as Micro-Manager writes them (the OME-XML on the first page only). The
// watch fits each as ONE stack of three planes, to the coefficients the same planes give as a FITS cube; a
// Micro-Manager file written in place is not complete while it grows (the finder's clock is an argument here).
#include "OmeTestFiles.h"
#include "TestSupport.h"

#include "engine/LiveWatch.h"
#include "engine/Presets.h"
#include "engine/StackFinder.h"
#include "io/ImageReaders.h"
#include "io/TiffWriter.h"

#include <tiffio.h>

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <cmath>

using namespace wfs;
using wfs::test::omeXml;

namespace {

constexpr int kGuardMs = 300000; // hang guard for a signal; reaching it fails the test

// 16-bit pages, top row first, the OME-XML on the first page only (Micro-Manager's layout), through libtiff.
QByteArray micromanagerBytes(const std::vector<Image>& planes, double scale, const QString& path)
{
    TIFF* tif = TIFFOpen(path.toLocal8Bit().constData(), "w");
    if (!tif)
        return {};
    // Micro-Manager's own tag on every page: its per-image metadata as JSON (not a tag the readers know).
    static const TIFFFieldInfo micromanagerTag[] = {
        {51123, -1, -1, TIFF_ASCII, FIELD_CUSTOM, 1, 0, const_cast<char*>("MicroManagerMetadata")}};
    TIFFMergeFieldInfo(tif, micromanagerTag, 1);
    const std::string description = omeXml(planes.front().width, planes.front().height, int(planes.size()), "uint16");
    for (size_t k = 0; k < planes.size(); ++k) {
        const Image& p = planes[k];
        TIFFSetField(tif, TIFFTAG_IMAGEWIDTH, p.width);
        TIFFSetField(tif, TIFFTAG_IMAGELENGTH, p.height);
        TIFFSetField(tif, TIFFTAG_BITSPERSAMPLE, 16);
        TIFFSetField(tif, TIFFTAG_SAMPLESPERPIXEL, 1);
        TIFFSetField(tif, TIFFTAG_SAMPLEFORMAT, SAMPLEFORMAT_UINT);
        TIFFSetField(tif, TIFFTAG_PHOTOMETRIC, PHOTOMETRIC_MINISBLACK);
        TIFFSetField(tif, TIFFTAG_PLANARCONFIG, PLANARCONFIG_CONTIG);
        TIFFSetField(tif, TIFFTAG_ROWSPERSTRIP, p.height);
        TIFFSetField(tif, TIFFTAG_SUBFILETYPE, FILETYPE_PAGE);
        TIFFSetField(tif, TIFFTAG_PAGENUMBER, int(k), int(planes.size()));
        TIFFSetField(tif, TIFFTAG_SOFTWARE, "Micro-Manager (as written by tst_omewatch)");
        if (k == 0)
            TIFFSetField(tif, TIFFTAG_IMAGEDESCRIPTION, description.c_str());
        const std::string json = "{\"SliceIndex\":" + std::to_string(k) + ",\"Camera\":\"Demo\"}";
        TIFFSetField(tif, 51123, json.c_str());
        std::vector<std::uint16_t> row(size_t(p.width));
        for (int r = 0; r < p.height; ++r) {
            const int imageRow = p.height - 1 - r; // the file's top row is the image's last (row 0 at the bottom)
            for (int c = 0; c < p.width; ++c)
                row[size_t(c)] = std::uint16_t(std::clamp(std::lround(p.at(imageRow, c) * scale), 0L, 65535L));
            if (TIFFWriteScanline(tif, row.data(), std::uint32_t(r), 0) < 0) {
                TIFFClose(tif);
                return {};
            }
        }
        TIFFWriteDirectory(tif);
    }
    TIFFClose(tif);
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        return {};
    const QByteArray bytes = f.readAll();
    f.close();
    f.remove();
    return bytes;
}

// The demo preset's three noisy planes of 64 x 64.
std::vector<Image> demoPlanes()
{
    PresetOptions po;
    po.grid = 64;
    std::vector<Image> planes;
    for (const auto& p : makePreset("demo", po).spec.planes)
        planes.push_back(p.data);
    return planes;
}

QJsonArray coefficients(const QJsonObject& row)
{
    return row.value(QStringLiteral("coefficients")).toArray();
}

} // namespace

class TestOmeWatch : public QObject {
    Q_OBJECT

private slots:
    // What the readers make of an OME-TIFF: every page a plane (three of 64 x 64), the OME-XML kept as the file's
    // ImageDescription, 16-bit pages read as their counts.
    void readersTakeEveryPage()
    {
        const std::vector<Image> planes = demoPlanes();
        QTemporaryDir dir;
        const QString floats = dir.filePath(QStringLiteral("a.ome.tif"));
        {
            QFile f(floats);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write(QByteArray::fromStdString(tiffStackBytes(planes, omeXml(64, 64, 3, "float"))));
        }
        const ImageFileContent a = readImageFile(floats.toStdString());
        QCOMPARE(a.planes.size(), size_t(3));
        QVERIFY(a.strings.count("ImageDescription") && a.strings.at("ImageDescription").find("<OME") != std::string::npos);
        QCOMPARE(a.planes[1].at(10, 20), double(float(planes[1].at(10, 20)))); // 32-bit floats exactly, row 0 at the bottom

        const QString shorts = dir.filePath(QStringLiteral("b.ome.tif"));
        const QByteArray mm = micromanagerBytes(planes, 0.5, dir.filePath(QStringLiteral("scratch.tif")));
        QVERIFY(!mm.isEmpty());
        {
            QFile f(shorts);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write(mm);
        }
        const ImageFileContent b = readImageFile(shorts.toStdString());
        QCOMPARE(b.planes.size(), size_t(3));
        for (int k = 0; k < 3; ++k)
            QCOMPARE(b.planes[size_t(k)].at(10, 20), double(std::lround(planes[size_t(k)].at(10, 20) * 0.5)));
    }

    // The watch: a FITS cube, then the same planes as a float OME-TIFF and as a Micro-Manager 16-bit OME-TIFF, each
    // renamed in; each OME-TIFF is one stack (one row, one input, three planes), fitted to the cube's coefficients.
    void watchFitsOneStackEach()
    {
        QTemporaryDir dir;
        const QString in = dir.filePath(QStringLiteral("in"));
        QVERIFY(QDir().mkpath(in));
        PresetOptions po;
        po.grid = 64;
        po.order = 4;
        const PresetCase demo = makePreset("demo", po);
        std::vector<Image> planes;
        double peak = 0.0;
        for (const auto& p : demo.spec.planes) {
            planes.push_back(p.data);
            for (double v : p.data.pixels)
                peak = std::max(peak, v);
        }
        // The OME-TIFFs give their pixel size and z step (OME-XML), not the optics: the settings give the cube's
        // wavelength, sampling and each plane's defocus, as a person sets them for a camera's stacks.
        LiveWatchOptions o;
        o.folder = in.toStdString();
        o.logPath = dir.filePath(QStringLiteral("log.jsonl")).toStdString();
        o.settings.model.order = 4; // the demo's truth has Noll 11: order 4 describes it
        o.settings.solver.gradientTolerance = 1e-9;
        DatasetMetadata& m = o.settings.dataset.metadata;
        m.wavelength = demo.spec.wavelength;
        m.samplingQ = 2.0; // the demo's sampling (docs/live.md: 633 nm, Q = 2)
        m.readNoise = demo.spec.readNoise;
        m.dataUnit = "photons";
        for (const char* key : {"wavelength", "samplingQ", "readNoise"})
            m.origin[key] = "user";
        for (size_t k = 0; k < demo.spec.planes.size(); ++k) {
            DatasetPlane t;
            t.indexInFile = int(k);
            t.defocus = {PlaneDefocus::Kind::Waves, demo.spec.planes[k].diversity.defocusWaves};
            o.settings.dataset.planes.push_back(t);
        }
        o.finder.stableMs = 60000; // only renames count here
        o.maxStacks = 3;
        LiveWatch watch(o);
        QSignalSpy rows(&watch, &LiveWatch::rowWritten);
        QSignalSpy finished(&watch, &LiveWatch::finished);
        QSignalSpy watching(&watch, &LiveWatch::watching);
        watch.start();
        QTRY_VERIFY_WITH_TIMEOUT(watching.size() == 1, kGuardMs);
        auto renameIn = [&](const QString& name, const QByteArray& bytes) {
            const QString temporary = QDir(in).filePath(QLatin1Char('.') + name + QStringLiteral(".tmp"));
            QFile f(temporary);
            QVERIFY(f.open(QIODevice::WriteOnly));
            QCOMPARE(f.write(bytes), bytes.size());
            f.close();
            QVERIFY(QFile::rename(temporary, QDir(in).filePath(name)));
        };
        renameIn(QStringLiteral("stack_0001.fits"), presetFitsBytes(demo, "demo", po.seed));
        QTRY_VERIFY_WITH_TIMEOUT(rows.size() == 1, kGuardMs);
        renameIn(QStringLiteral("stack_0002.ome.tif"), QByteArray::fromStdString(tiffStackBytes(planes, omeXml(64, 64, 3, "float"))));
        QTRY_VERIFY_WITH_TIMEOUT(rows.size() == 2, kGuardMs);
        // 16 bits: the counts scaled so that the peak is 60000 (a camera's gain), rounded.
        const double scale = 60000.0 / peak;
        const QByteArray mm = micromanagerBytes(planes, scale, dir.filePath(QStringLiteral("scratch.tif")));
        QVERIFY(!mm.isEmpty());
        renameIn(QStringLiteral("MMStack_Pos0.ome.tif"), mm);
        QTRY_VERIFY_WITH_TIMEOUT(finished.size() == 1, kGuardMs);
        QCOMPARE(finished.front().at(0).toBool(), false);
        QCOMPARE(rows.size(), 3);

        const QJsonObject cube = rows[0].at(0).toJsonObject();
        QCOMPARE(cube.value(QStringLiteral("status")).toString(), QStringLiteral("ok"));
        for (int i = 1; i < 3; ++i) {
            const QJsonObject row = rows[i].at(0).toJsonObject();
            const QString stack = row.value(QStringLiteral("stack")).toString();
            QVERIFY2(row.value(QStringLiteral("status")).toString() == QLatin1String("ok"),
                     qPrintable(stack + QStringLiteral(": ") + row.value(QStringLiteral("error")).toString()));
            QCOMPARE(row.value(QStringLiteral("inputs")).toArray().size(), 1);
            QCOMPARE(row.value(QStringLiteral("planes")).toArray().size(), 3);
            QCOMPARE(row.value(QStringLiteral("complete_rule")).toString(), QStringLiteral("renamed"));
            QVERIFY(!row.contains(QStringLiteral("settings_mismatch")));
            // The float file holds the cube's own planes: its fit is the cube's to the solver's tolerance (warm-started
            // from it). The 16-bit one is rounded after a gain: its fit moves by far less than the noise's spread.
            const double tolerance = i == 1 ? 1e-4 : 2e-3;
            const QJsonArray a = coefficients(cube), b = coefficients(row);
            QCOMPARE(a.size(), b.size());
            for (int t = 0; t < a.size(); ++t) {
                const double x = a[t].toObject().value(QStringLiteral("value_waves")).toDouble();
                const double y = b[t].toObject().value(QStringLiteral("value_waves")).toDouble();
                QVERIFY2(std::abs(x - y) < tolerance,
                         qPrintable(QStringLiteral("%1 term %2: cube %3, OME-TIFF %4").arg(stack).arg(t).arg(x).arg(y)));
            }
        }
        QCOMPARE(rows[2].at(0).toJsonObject().value(QStringLiteral("stack")).toString(), QStringLiteral("MMStack_Pos0.ome.tif"));
    }

    // Micro-Manager's "separate image files": one file per plane, img_channel000_position000_time000000001_z002.tif, in
    // a folder per position; the default plane pattern makes each time point's planes one stack.
    void micromanagerSeparateFilesAreOneStack()
    {
        QTemporaryDir dir;
        StackFinderOptions fo;
        fo.planesPerStack = 3;
        StackFinder finder(dir.path().toStdString(), fo);
        for (int z = 0; z < 3; ++z) {
            const QString name = QStringLiteral("img_channel000_position000_time000000001_z%1.tif").arg(z, 3, 10, QLatin1Char('0'));
            QFile f(dir.filePath(name));
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write(QByteArray(100, 'x'));
            f.close();
            finder.markRenamed(name);
        }
        QFile sidecar(dir.filePath(QStringLiteral("metadata.txt"))); // Micro-Manager's metadata beside: not an image
        QVERIFY(sidecar.open(QIODevice::WriteOnly));
        sidecar.write("{}");
        sidecar.close();
        const std::vector<CompleteStack> ready = finder.scan(0);
        QCOMPARE(ready.size(), size_t(1));
        QCOMPARE(ready.front().name, std::string("img_channel000_position000_time000000001"));
        QCOMPARE(ready.front().paths.size(), size_t(3));
        QVERIFY(QString::fromStdString(ready.front().paths.back()).endsWith(QStringLiteral("_z002.tif")));
        QCOMPARE(ready.front().rule, std::string("all planes"));
    }

    // Micro-Manager writes its file in place, page after page: not complete while it grows, complete once it has
    // not changed for the set time (by the finder's clock, an argument here).
    void micromanagerInPlaceCompleteWhenStable()
    {
        const std::vector<Image> planes = demoPlanes();
        QTemporaryDir dir;
        const QByteArray bytes = micromanagerBytes(planes, 0.5, dir.filePath(QStringLiteral("scratch.tif")));
        QVERIFY(bytes.size() > 3 * 64 * 64 * 2);
        StackFinderOptions fo;
        fo.stableMs = 1000;
        StackFinder finder(dir.path().toStdString(), fo);
        const QString file = dir.filePath(QStringLiteral("MMStack_Pos0.ome.tif"));
        QFile f(file);
        QVERIFY(f.open(QIODevice::WriteOnly));
        const qsizetype third = bytes.size() / 3;
        f.write(bytes.left(third));
        f.flush();
        QVERIFY(finder.scan(0).empty());
        f.write(bytes.mid(third, third));
        f.flush();
        QVERIFY(finder.scan(900).empty());
        QVERIFY(finder.scan(1800).empty()); // grew at 900: its second is not over
        f.write(bytes.mid(2 * third));
        f.close();
        QVERIFY(finder.scan(1850).empty());
        QVERIFY(finder.scan(2800).empty());
        const std::vector<CompleteStack> ready = finder.scan(2850);
        QCOMPARE(ready.size(), size_t(1));
        QCOMPARE(ready.front().name, std::string("MMStack_Pos0.ome.tif"));
        QCOMPARE(ready.front().rule, std::string("stable"));
        QCOMPARE(readImageFile(file.toStdString()).planes.size(), size_t(3));
    }
};

QTEST_GUILESS_MAIN(TestOmeWatch)
#include "tst_omewatch.moc"
