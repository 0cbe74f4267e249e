// Live mode's core (engine/LiveWatch.h, StackFinder.h, LiveLog.h; issue 25): the completeness rules driven by a
// clock the test sets (a file being written is never complete; renamed in, stable for the set time, all planes of a
// one-file-per-plane stack), writers' temporaries ignored, each stack returned once, a vanished folder said; the
// log's whole-line appends and reads; and the watch in-process on a one-file-per-plane stack, which must fit as the
// same planes in one FITS cube do. No assertion here is about time: the clock is an argument.
#include "TestSupport.h"

#include "engine/LiveLog.h"
#include "engine/LiveWatch.h"
#include "engine/Presets.h"
#include "engine/StackFinder.h"
#include "io/Dataset.h"
#include "io/Fits.h"
#include "io/ImageReaders.h"
#include "io/TiffWriter.h"

#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>
#include <sys/stat.h>

using namespace wfs;

namespace {

constexpr int kGuardMs = 300000; // hang guard for a signal; reaching it fails the test

void appendBytes(const QString& path, const QByteArray& bytes)
{
    QFile f(path);
    QVERIFY(f.open(QIODevice::Append));
    QCOMPARE(f.write(bytes), bytes.size());
}

QStringList names(const std::vector<CompleteStack>& stacks)
{
    QStringList out;
    for (const CompleteStack& s : stacks)
        out << QString::fromStdString(s.name);
    return out;
}

} // namespace

class TestWatcher : public QObject {
    Q_OBJECT

private slots:
    // Written in chunks: not complete while it changes, complete once unchanged for stableMs (by the given clock).
    void chunkedFileCompleteWhenStable()
    {
        QTemporaryDir dir;
        StackFinderOptions o;
        o.stableMs = 1000;
        StackFinder finder(dir.path().toStdString(), o);
        const QString file = dir.filePath(QStringLiteral("a.fits"));
        appendBytes(file, QByteArray(2880, 'x'));
        QVERIFY(finder.scan(0).empty());
        QVERIFY(finder.sawChange());
        appendBytes(file, QByteArray(2880, 'y'));
        QVERIFY(finder.scan(900).empty()); // grew: its clock starts again
        QVERIFY(finder.sawChange());
        QVERIFY(finder.scan(1899).empty());
        QVERIFY(!finder.sawChange());
        const std::vector<CompleteStack> ready = finder.scan(1900);
        QCOMPARE(names(ready), QStringList{QStringLiteral("a.fits")});
        QCOMPARE(ready.front().rule, std::string("stable"));
        QCOMPARE(ready.front().paths, std::vector<std::string>{file.toStdString()});
        QVERIFY(finder.scan(100000).empty()); // returned once
        QVERIFY(finder.isHandled("a.fits"));
    }

    // Renamed in: complete at once (before or after the listing saw it); an empty file never is.
    void renamedCompleteAtOnce()
    {
        QTemporaryDir dir;
        StackFinder finder(dir.path().toStdString(), {});
        appendBytes(dir.filePath(QStringLiteral(".b.fits.tmp")), QByteArray(100, 'x'));
        QVERIFY(finder.scan(0).empty()); // a temporary
        QVERIFY(QFile::rename(dir.filePath(QStringLiteral(".b.fits.tmp")), dir.filePath(QStringLiteral("b.fits"))));
        finder.markRenamed(QStringLiteral("b.fits"));
        const std::vector<CompleteStack> ready = finder.scan(1);
        QCOMPARE(names(ready), QStringList{QStringLiteral("b.fits")});
        QCOMPARE(ready.front().rule, std::string("renamed"));
        appendBytes(dir.filePath(QStringLiteral("c.tif")), QByteArray(10, 'x'));
        QVERIFY(finder.scan(2).empty());
        finder.markRenamed(QStringLiteral("c.tif"));
        QCOMPARE(names(finder.scan(3)), QStringList{QStringLiteral("c.tif")});
        // A renamed file written to again is a file being written.
        appendBytes(dir.filePath(QStringLiteral("d.fits")), QByteArray(10, 'x'));
        finder.markRenamed(QStringLiteral("d.fits"));
        QVERIFY(finder.scan(4).size() == 1);
        QFile::remove(dir.filePath(QStringLiteral("e.fits")));
        QVERIFY(QFile(dir.filePath(QStringLiteral("e.fits"))).open(QIODevice::WriteOnly)); // empty
        finder.markRenamed(QStringLiteral("e.fits"));
        QVERIFY(finder.scan(5).empty());
        QVERIFY(finder.scan(100000).empty());
        QCOMPARE(finder.pendingFiles(), 1);
    }

    // A writer that never finishes its file (it grows at every look) blocks none of the stacks after it.
    void unfinishedFileBlocksNothing()
    {
        QTemporaryDir dir;
        StackFinderOptions o;
        o.stableMs = 100;
        StackFinder finder(dir.path().toStdString(), o);
        QStringList done;
        for (int i = 0; i < 10; ++i) {
            appendBytes(dir.filePath(QStringLiteral("s_%1.fits").arg(i)), QByteArray(100, 'x'));
            for (int look = 0; look < 2; ++look) {
                appendBytes(dir.filePath(QStringLiteral("endless.fits")), QByteArray(100, 'x'));
                done << names(finder.scan(i * 1000 + look * 500));
            }
        }
        QCOMPARE(done.size(), 10);
        QVERIFY(!done.contains(QStringLiteral("endless.fits")));
        QCOMPARE(finder.pendingFiles(), 1);
    }

    // Writers' temporaries and files that are not images are never stacks.
    void temporariesIgnored()
    {
        QTemporaryDir dir;
        StackFinder finder(dir.path().toStdString(), {});
        for (const char* name :
             {".x.fits", "x.fits.tmp", "x.fits.part", "x.tif.partial", "x.tif~", "x.fits.crdownload", "notes.txt", "x.fits.json"})
            appendBytes(dir.filePath(QLatin1String(name)), QByteArray(64, 'x'));
        QVERIFY(finder.scan(0).empty());
        QVERIFY(finder.scan(1000000).empty());
        QCOMPARE(finder.pendingFiles(), 0);
    }

    // One file per plane: complete with all its planes (each complete), its paths in plane order (z10 after z2).
    void perPlaneNeedsAllPlanes()
    {
        QTemporaryDir dir;
        StackFinderOptions o;
        o.planesPerStack = 3;
        o.stableMs = 100;
        StackFinder finder(dir.path().toStdString(), o);
        appendBytes(dir.filePath(QStringLiteral("stack_0007_z10.tif")), QByteArray(64, 'x'));
        appendBytes(dir.filePath(QStringLiteral("stack_0007_z1.tif")), QByteArray(64, 'x'));
        QVERIFY(finder.scan(0).empty());
        QVERIFY(finder.scan(100000).empty()); // two of three planes, however long
        appendBytes(dir.filePath(QStringLiteral("stack_0007_z2.tif")), QByteArray(64, 'x'));
        QVERIFY(finder.scan(100001).empty()); // the third is not complete yet
        const std::vector<CompleteStack> ready = finder.scan(100101);
        QCOMPARE(names(ready), QStringList{QStringLiteral("stack_0007")});
        QCOMPARE(ready.front().rule, std::string("all planes"));
        QCOMPARE(ready.front().paths.size(), size_t(3));
        QVERIFY(QString::fromStdString(ready.front().paths[0]).endsWith(QLatin1String("_z1.tif")));
        QVERIFY(QString::fromStdString(ready.front().paths[1]).endsWith(QLatin1String("_z2.tif")));
        QVERIFY(QString::fromStdString(ready.front().paths[2]).endsWith(QLatin1String("_z10.tif")));
        // A plane written later under a handled stack's name is not a new stack.
        appendBytes(dir.filePath(QStringLiteral("stack_0007_z11.tif")), QByteArray(64, 'x'));
        QVERIFY(finder.scan(200000).empty());
    }

    // Without a plane count, a per-plane stack is complete when no new plane has come for stableMs.
    void perPlaneUnknownCount()
    {
        QTemporaryDir dir;
        StackFinderOptions o;
        o.stableMs = 500;
        StackFinder finder(dir.path().toStdString(), o);
        appendBytes(dir.filePath(QStringLiteral("s_z0.fits")), QByteArray(64, 'x'));
        QVERIFY(finder.scan(0).empty());
        appendBytes(dir.filePath(QStringLiteral("s_z1.fits")), QByteArray(64, 'x'));
        QVERIFY(finder.scan(400).empty());
        QVERIFY(finder.scan(899).empty()); // z1 first seen at 400
        const std::vector<CompleteStack> ready = finder.scan(900);
        QCOMPARE(names(ready), QStringList{QStringLiteral("s")});
        QCOMPARE(ready.front().paths.size(), size_t(2));
    }

    // A file that vanishes before it is complete is forgotten; a gone folder is said; a bad pattern refused.
    void vanishedAndGone()
    {
        auto dir = std::make_unique<QTemporaryDir>();
        StackFinder finder(dir->path().toStdString(), {});
        appendBytes(dir->filePath(QStringLiteral("v.fits")), QByteArray(64, 'x'));
        QVERIFY(finder.scan(0).empty());
        QCOMPARE(finder.pendingFiles(), 1);
        QVERIFY(QFile::remove(dir->filePath(QStringLiteral("v.fits"))));
        QVERIFY(finder.scan(10).empty());
        QVERIFY(finder.sawChange());
        QCOMPARE(finder.pendingFiles(), 0);
        QVERIFY(dir->remove());
        try {
            finder.scan(20);
            QFAIL("a gone folder must throw");
        } catch (const FolderGoneError& e) {
            QVERIFY2(QString::fromUtf8(e.what()).contains(QStringLiteral("is gone")), e.what());
        }
        StackFinderOptions bad;
        bad.planePattern = QStringLiteral("^(.+)_z(\\d+)$"); // no named groups
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, StackFinder(QDir::tempPath().toStdString(), bad));
        bad.planePattern = QStringLiteral("(?<stack>[");
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, StackFinder(QDir::tempPath().toStdString(), bad));
    }

    // The log: whole lines appended; a failed append (a full device) says why; a last line without its newline is
    // not a row.
    void logLines()
    {
        QTemporaryDir dir;
        const std::string log = dir.filePath(QStringLiteral("log.jsonl")).toStdString();
        appendLine(log, R"({"stack":"a"})");
        appendLine(log, R"({"stack":"b"})");
        appendBytes(QString::fromStdString(log), R"({"stack":"c")"); // cut mid-line
        const std::vector<QJsonObject> rows = readLiveLog(log);
        QCOMPARE(rows.size(), size_t(2));
        QCOMPARE(rows[1].value(QStringLiteral("stack")).toString(), QStringLiteral("b"));
        if (QFileInfo::exists(QStringLiteral("/dev/full"))) {
            try {
                appendLine("/dev/full", "{}");
                QFAIL("/dev/full takes no bytes");
            } catch (const LiveLogError& e) {
                // A device is no log of live mode's own (issue 41): refused before a byte is written. A full disk
                // on a regular file is tst_watch::fullLogKeepsWholeRows.
                QVERIFY2(QString::fromUtf8(e.what()).contains(QStringLiteral("not a regular file")), e.what());
            }
        }
        QVERIFY_THROWS_EXCEPTION(LiveLogError, appendLine(dir.filePath(QStringLiteral("no/such/folder/log.jsonl")).toStdString(), "{}"));
    }

    // A file replaced under its name after it was handled (a camera rewriting latest.fits) is a new stack; one
    // handled and not written since is never returned again (issue 41).
    void rewrittenFileIsANewStack()
    {
        QTemporaryDir dir;
        StackFinderOptions o;
        o.stableMs = 100;
        StackFinder finder(dir.path().toStdString(), o);
        const QString file = dir.filePath(QStringLiteral("latest.fits"));
        appendBytes(file, QByteArray(2880, 'x'));
        QVERIFY(finder.scan(0).empty());
        const std::vector<CompleteStack> first = finder.scan(200);
        QCOMPARE(names(first), QStringList{QStringLiteral("latest.fits")});
        QVERIFY(finder.scan(1000).empty());
        QFile f(file);
        QVERIFY(f.open(QIODevice::ReadWrite));
        QVERIFY(f.setFileTime(QDateTime::fromMSecsSinceEpoch(first.front().lastWriteMs + 5000), QFileDevice::FileModificationTime));
        f.close();
        QVERIFY(finder.scan(1100).empty()); // seen anew: stable first
        QCOMPARE(names(finder.scan(1300)), QStringList{QStringLiteral("latest.fits")});
        // The log of a run that handled it at its newest write: not returned again by a new finder.
        StackFinder restarted(dir.path().toStdString(), o);
        restarted.markHandled("latest.fits", first.front().lastWriteMs + 5000);
        QVERIFY(restarted.scan(0).empty());
        QVERIFY(restarted.scan(10000).empty());
        // Handled at an older write: written since, so a new stack.
        StackFinder older(dir.path().toStdString(), o);
        older.markHandled("latest.fits", first.front().lastWriteMs);
        older.scan(0);
        QCOMPARE(names(older.scan(200)), QStringList{QStringLiteral("latest.fits")});
    }

    // A stack not read whole is deferred: returned again once its file changes, or a last time (lastChance) after
    // incompleteMs unchanged; never lost (issue 41).
    void deferredUntilChangedOrOverdue()
    {
        QTemporaryDir dir;
        StackFinderOptions o;
        o.stableMs = 100;
        o.incompleteMs = 1000;
        StackFinder finder(dir.path().toStdString(), o);
        const QString file = dir.filePath(QStringLiteral("cube.fits"));
        appendBytes(file, QByteArray(2880, 'x'));
        finder.scan(0);
        std::vector<CompleteStack> ready = finder.scan(100);
        QCOMPARE(ready.size(), size_t(1));
        QVERIFY(!ready.front().lastChance);
        finder.defer(ready.front(), 100);
        QCOMPARE(finder.deferredStacks(), 1);
        QVERIFY(finder.scan(200).empty());
        QVERIFY(finder.scan(1000).empty()); // unchanged, not yet overdue
        ready = finder.scan(1100);
        QCOMPARE(names(ready), QStringList{QStringLiteral("cube.fits")});
        QVERIFY(ready.front().lastChance);
        finder.defer(ready.front(), 1100); // a last chance is not deferred again
        QVERIFY(finder.scan(5000).empty());
        QCOMPARE(finder.deferredStacks(), 0);

        // Deferred, then the writer goes on: complete again once stable, no last chance.
        const QString growing = dir.filePath(QStringLiteral("grows.fits"));
        appendBytes(growing, QByteArray(2880, 'x'));
        finder.scan(6000);
        ready = finder.scan(6100);
        QCOMPARE(names(ready), QStringList{QStringLiteral("grows.fits")});
        finder.defer(ready.front(), 6100);
        appendBytes(growing, QByteArray(2880, 'y'));
        QFile f(growing);
        QVERIFY(f.open(QIODevice::ReadWrite));
        QVERIFY(f.setFileTime(QDateTime::fromMSecsSinceEpoch(ready.front().lastWriteMs + 3000), QFileDevice::FileModificationTime));
        f.close();
        QVERIFY(finder.scan(6200).empty());
        ready = finder.scan(6300);
        QCOMPARE(names(ready), QStringList{QStringLiteral("grows.fits")});
        QVERIFY(!ready.front().lastChance);
        // A deferred stack whose file is removed waits for nothing.
        finder.defer(ready.front(), 6300);
        QVERIFY(QFile::remove(growing));
        finder.scan(6400);
        QCOMPARE(finder.deferredStacks(), 0);
    }

    // Reading a log backwards: the last whole line first, an unfinished last line skipped, stopping when asked; a
    // line longer than kLongestLogLine passed over, not held (issue 41: a restart's memory does not grow with the log).
    void logReadBackwards()
    {
        QTemporaryDir dir;
        const std::string log = dir.filePath(QStringLiteral("log.jsonl")).toStdString();
        for (int i = 0; i < 5000; ++i)
            appendLine(log, QByteArray("{\"sequence\":") + QByteArray::number(i) + "}");
        appendBytes(QString::fromStdString(log), R"({"sequence":5000)");
        QList<int> seen;
        forEachLineBackwards(log, [&](const QByteArray& line) {
            seen << QJsonDocument::fromJson(line).object().value(QStringLiteral("sequence")).toInt(-1);
            return seen.size() < 3;
        });
        QCOMPARE(seen, (QList<int>{4999, 4998, 4997}));
        int lines = 0;
        forEachLineBackwards(log, [&](const QByteArray&) { return ++lines > 0; });
        QCOMPARE(lines, 5000);
        QCOMPARE(firstLine(log), QByteArray("{\"sequence\":0}"));

        const std::string huge = dir.filePath(QStringLiteral("huge.jsonl")).toStdString();
        appendLine(huge, "{\"sequence\":0}");
        appendLine(huge, QByteArray(kLongestLogLine + 10, 'x'));
        appendLine(huge, "{\"sequence\":2}");
        QList<QByteArray> kept;
        forEachLineBackwards(huge, [&](const QByteArray& line) {
            kept << line;
            return true;
        });
        QCOMPARE(kept, (QList<QByteArray>{"{\"sequence\":2}", "{\"sequence\":0}"}));
    }

    // Live mode's own files (issue 41): never through a link, never into a FIFO (refused at once, not blocked on),
    // and sameFile sees one file under two names.
    void ownFilesOnly()
    {
        QTemporaryDir dir;
        const QString target = dir.filePath(QStringLiteral("precious.txt"));
        appendBytes(target, "keep\nme");
        const QString link = dir.filePath(QStringLiteral("link.jsonl"));
        QVERIFY(QFile::link(target, link));
        QVERIFY_THROWS_EXCEPTION(LiveLogError, appendLine(link.toStdString(), "{}"));
        QVERIFY_THROWS_EXCEPTION(LiveLogError, cutPartialLine(link.toStdString()));
        QVERIFY_THROWS_EXCEPTION(LiveLogError, firstLine(link.toStdString()));
        QCOMPARE(QFileInfo(target).size(), qint64(7));
        const QString fifo = dir.filePath(QStringLiteral("fifo.jsonl"));
        QCOMPARE(::mkfifo(fifo.toLocal8Bit().constData(), 0600), 0);
        try {
            appendLine(fifo.toStdString(), "{}");
            QFAIL("a FIFO is no log");
        } catch (const LiveLogError& e) {
            QVERIFY2(QString::fromUtf8(e.what()).contains(QStringLiteral("FIFO")), e.what());
        }
        QVERIFY_THROWS_EXCEPTION(LiveLogError, forEachLineBackwards(fifo.toStdString(), [](const QByteArray&) { return true; }));
        QVERIFY(sameFile(link.toStdString(), target.toStdString()));
        QVERIFY(sameFile(dir.filePath(QStringLiteral("a/../precious.txt")).toStdString(), target.toStdString()));
        QVERIFY(!sameFile(fifo.toStdString(), target.toStdString()));
        QVERIFY(sameFile(dir.filePath(QStringLiteral("new.csv")).toStdString(), dir.filePath(QStringLiteral("./new.csv")).toStdString()));
    }

    // Issue 41: a multi-extension FITS cut after its first HDU, whose header declares NPLANES = 3, is damage: the
    // reader keeps the plane with the reason, and a fit not asked for particular planes refuses it as incomplete.
    void declaredPlanesMissingIsDamage()
    {
        QTemporaryDir dir;
        std::vector<FitsHdu> hdus(3);
        for (int k = 0; k < 3; ++k) {
            Image plane(16, 16);
            plane.pixels.assign(plane.pixels.size(), 1.0 + k);
            hdus[size_t(k)].planes = {plane};
        }
        hdus[0].keywords = {{"NPLANES", 3LL, ""}, {"DEFOCUS1", -1.0, ""}, {"DEFOCUS2", 0.0, ""}, {"DEFOCUS3", 1.0, ""}};
        const std::string whole = fitsBytes(hdus);
        const size_t second = whole.find("XTENSION= 'IMAGE");
        QVERIFY(second != std::string::npos && second % 2880 == 0);
        const QString cut = dir.filePath(QStringLiteral("cut.fits"));
        QVERIFY(wfs::test::writeFile(cut, QByteArray::fromStdString(whole.substr(0, second))));
        const FitsContent read = readFits(cut.toStdString());
        QCOMPARE(read.planes.size(), size_t(1));
        QVERIFY2(read.damage.find("NPLANES = 3 planes and the file holds 1") != std::string::npos, read.damage.c_str());
        Dataset dataset;
        addFiles(dataset, {cut.toStdString()});
        QVERIFY_THROWS_EXCEPTION(IncompleteFileError, requireWholeFiles(dataset, "--planes"));
        // Whole, it is no damage.
        const QString full = dir.filePath(QStringLiteral("whole.fits"));
        QVERIFY(wfs::test::writeFile(full, QByteArray::fromStdString(whole)));
        QVERIFY(readFits(full.toStdString()).damage.empty());
        QCOMPARE(readFits(full.toStdString()).planes.size(), size_t(3));

        // ImageJ's description declares the page count: one page of "images=3" is damage; three are not.
        std::vector<Image> pages;
        for (const FitsHdu& h : hdus)
            pages.push_back(h.planes.front());
        const std::string description = "ImageJ=1.11a\nimages=3\nslices=3\n";
        const QString shortTiff = dir.filePath(QStringLiteral("short.tif"));
        QVERIFY(wfs::test::writeFile(shortTiff, QByteArray::fromStdString(tiffStackBytes({pages.front()}, description))));
        const ImageFileContent oneOfThree = readImageFile(shortTiff.toStdString());
        QCOMPARE(oneOfThree.planes.size(), size_t(1));
        QVERIFY2(oneOfThree.damage.find("images=3 and the file holds 1") != std::string::npos, oneOfThree.damage.c_str());
        const QString wholeTiff = dir.filePath(QStringLiteral("whole.tif"));
        QVERIFY(wfs::test::writeFile(wholeTiff, QByteArray::fromStdString(tiffStackBytes(pages, description))));
        QVERIFY(readImageFile(wholeTiff.toStdString()).damage.empty());

        // So does a single-file OME-TIFF's OME-XML (SizeZ x SizeC x SizeT, every image together); one over several
        // files (TiffData naming another file by UUID) says nothing of this file's pages alone.
        const auto ome = [](int sizeZ, int sizeC, const std::string& tiffData) {
            return "<?xml version=\"1.0\" encoding=\"UTF-8\"?><OME xmlns=\"http://www.openmicroscopy.org/Schemas/OME/2016-06\">"
                   "<Image ID=\"Image:0\"><Pixels ID=\"Pixels:0\" DimensionOrder=\"XYZCT\" Type=\"float\" SizeX=\"8\" SizeY=\"8\" SizeZ=\""
                   + std::to_string(sizeZ) + "\" SizeC=\"" + std::to_string(sizeC) + "\" SizeT=\"1\">" + tiffData
                   + "</Pixels></Image></OME>";
        };
        const auto omeDamage = [&](const std::vector<Image>& held, const std::string& xml) {
            const QString path = dir.filePath(QStringLiteral("ome.ome.tif"));
            QFile::remove(path);
            if (!wfs::test::writeFile(path, QByteArray::fromStdString(tiffStackBytes(held, xml))))
                return std::string("not written");
            Dataset dataset;
            addFiles(dataset, {path.toStdString()});
            return dataset.files.empty() ? std::string("not read") : dataset.files.front().damage;
        };
        const std::string oneOfSix = omeDamage({pages.front()}, ome(3, 2, ""));
        QVERIFY2(oneOfSix.find("OME-XML declares 6 planes (SizeZ x SizeC x SizeT) and the file holds 1") != std::string::npos,
                 oneOfSix.c_str());
        QVERIFY(omeDamage(pages, ome(3, 1, "")).empty());
        QVERIFY(omeDamage({pages.front()}, ome(3, 1,
                                               "<TiffData IFD=\"0\" PlaneCount=\"1\"><UUID FileName=\"other.ome.tif\">"
                                               "urn:uuid:1</UUID></TiffData>"))
                    .empty());
    }

    // Issue 41, in-process: a watch whose log is an existing file that is not a log (here a FITS file), or whose trend
    // table has other columns, does not start, and the file keeps every byte.
    void foreignFilesRefusedUntouched()
    {
        QTemporaryDir dir;
        const QString in = dir.filePath(QStringLiteral("in"));
        QVERIFY(QDir().mkpath(in));
        const QString fits = dir.filePath(QStringLiteral("data.fits"));
        const QByteArray bytes = QByteArray::fromStdString(fitsBytes({Image(8, 8)}, {}));
        QVERIFY(wfs::test::writeFile(fits, bytes));
        const QString table = dir.filePath(QStringLiteral("other.csv"));
        const QByteArray header = "sequence,stack,status,warm_started,written,finished,latency_seconds,fit_seconds,rms_waves,strehl,"
                                  "noll_2_waves,skipped,error\n";
        QVERIFY(wfs::test::writeFile(table, header));
        struct Case {
            QString log, csv;
            QString said;
        };
        for (const Case& c : {Case{fits, {}, QStringLiteral("is not a live log")},
                              Case{dir.filePath(QStringLiteral("log.jsonl")), table, QStringLiteral("other columns")},
                              Case{dir.filePath(QStringLiteral("log.jsonl")), fits, QStringLiteral("not a live trend table")}}) {
            LiveWatchOptions o;
            o.folder = in.toStdString();
            o.logPath = c.log.toStdString();
            o.csvPath = c.csv.toStdString();
            LiveWatch watch(o);
            QSignalSpy finished(&watch, &LiveWatch::finished);
            watch.start();
            QTRY_VERIFY_WITH_TIMEOUT(finished.size() == 1, kGuardMs);
            QCOMPARE(finished.front().at(0).toBool(), true);
            QVERIFY2(finished.front().at(1).toString().contains(c.said), qPrintable(finished.front().at(1).toString()));
            QCOMPARE(QFile(fits).size(), qint64(bytes.size()));
            QFile f(fits);
            QVERIFY(f.open(QIODevice::ReadOnly));
            QCOMPARE(f.readAll(), bytes);
            QFile t(table);
            QVERIFY(t.open(QIODevice::ReadOnly));
            QCOMPARE(t.readAll(), header);
            QVERIFY(!QFileInfo::exists(dir.filePath(QStringLiteral("log.jsonl"))));
        }
    }

    // Issue 41, in-process: a watch stopped between its log row and its trend-table row leaves the table behind; the
    // restart adds the rows the log holds (read back from the log's end), with their coefficients, in order, and
    // numbers on after the log's last row.
    void restartRepairsTheTrendTable()
    {
        QTemporaryDir dir;
        const QString in = dir.filePath(QStringLiteral("in"));
        QVERIFY(QDir().mkpath(in));
        LiveWatchOptions o;
        o.folder = in.toStdString();
        o.logPath = dir.filePath(QStringLiteral("log.jsonl")).toStdString();
        o.csvPath = dir.filePath(QStringLiteral("trend.csv")).toStdString();
        o.settings.model.order = 2;
        o.exitWhenIdleSeconds = 0.2;
        auto runOnce = [&] {
            LiveWatch watch(o);
            QSignalSpy finished(&watch, &LiveWatch::finished);
            watch.start();
            QTRY_VERIFY_WITH_TIMEOUT(finished.size() == 1, kGuardMs);
            QCOMPARE(finished.front().at(0).toBool(), false);
        };
        runOnce(); // the table's header
        auto row = [](int sequence, double noll4) {
            const QJsonObject r{{QStringLiteral("sequence"), sequence},
                                {QStringLiteral("stack"), QStringLiteral("s_%1.fits").arg(sequence)},
                                {QStringLiteral("status"), QStringLiteral("ok")},
                                {QStringLiteral("written"), QStringLiteral("2026-01-05T10:00:00.000Z")},
                                {QStringLiteral("detected"), QStringLiteral("2026-01-05T10:00:01.000Z")},
                                {QStringLiteral("coefficients"),
                                 QJsonArray{QJsonObject{{QStringLiteral("index"), 4}, {QStringLiteral("value_waves"), noll4}}}}};
            return QJsonDocument(r).toJson(QJsonDocument::Compact);
        };
        QFile header(QString::fromStdString(o.csvPath));
        QVERIFY(header.open(QIODevice::ReadOnly));
        const QByteArray headerLine = header.readLine();
        header.close();
        QVERIFY(headerLine.contains(",noll_4_waves,"));
        const int noll4Column = int(headerLine.left(headerLine.indexOf(",noll_4_waves,")).count(',')) + 1;
        for (int k = 0; k < 3; ++k)
            appendLine(o.logPath, row(k, 0.1 * (k + 1)));
        appendLine(o.csvPath, "0,s_0.fits,ok,no,,,,,,,,,,,,");
        runOnce();
        QFile csv(QString::fromStdString(o.csvPath));
        QVERIFY(csv.open(QIODevice::ReadOnly));
        const QList<QByteArray> lines = csv.readAll().trimmed().split('\n');
        QCOMPARE(lines.size(), 4);
        for (int k = 1; k < 3; ++k) {
            const QList<QByteArray> fields = lines[k + 1].split(',');
            QCOMPARE(fields.front(), QByteArray::number(k));
            QCOMPARE(fields[noll4Column].toDouble(), 0.1 * (k + 1));
        }
        QVERIFY(lines[1].startsWith("0,s_0.fits,ok,no"));
    }

    // Issue 41, in-process: a cube read while half written (stable for longer than stableMs) is not logged; it is read
    // again once it changes and then fitted whole, with all its planes.
    void halfWrittenCubeWaits()
    {
        QTemporaryDir dir;
        const QString in = dir.filePath(QStringLiteral("in"));
        QVERIFY(QDir().mkpath(in));
        PresetOptions po;
        po.grid = 32;
        po.order = 2;
        const PresetCase demo = makePreset("demo", po);
        const QByteArray cube = presetFitsBytes(demo, "demo", po.seed);
        const QString file = QDir(in).filePath(QStringLiteral("c.fits"));
        QVERIFY(wfs::test::writeFile(file, cube.left(cube.size() / 2)));
        LiveWatchOptions o;
        o.folder = in.toStdString();
        o.logPath = dir.filePath(QStringLiteral("log.jsonl")).toStdString();
        o.settings.model.order = 2;
        o.finder.stableMs = 50;
        o.finder.incompleteMs = 600000; // never reached here: the writer goes on
        o.maxStacks = 1;
        LiveWatch watch(o);
        QSignalSpy rows(&watch, &LiveWatch::rowWritten);
        QSignalSpy finished(&watch, &LiveWatch::finished);
        QSignalSpy messages(&watch, &LiveWatch::message);
        watch.start();
        QTRY_VERIFY_WITH_TIMEOUT(!messages.isEmpty() && messages.back().at(0).toString().contains(QStringLiteral("not read whole")),
                                 kGuardMs);
        QCOMPARE(rows.size(), 0);
        QFile f(file);
        QVERIFY(f.open(QIODevice::Append));
        f.write(cube.mid(cube.size() / 2));
        f.close();
        QTRY_VERIFY_WITH_TIMEOUT(finished.size() == 1, kGuardMs);
        QCOMPARE(rows.size(), 1);
        const QJsonObject row = rows.front().at(0).toJsonObject();
        QCOMPARE(row.value(QStringLiteral("stack")).toString(), QStringLiteral("c.fits"));
        QVERIFY2(row.value(QStringLiteral("status")).toString() != QLatin1String("failed"),
                 qPrintable(row.value(QStringLiteral("error")).toString()));
        QCOMPARE(row.value(QStringLiteral("planes")).toArray().size(), 3);
    }

    // Arbitration (issue 47 item 2): four complete stacks in the folder before the watch starts, their modification
    // times increasing in an order that is not their names'; all become complete in one scan. One row, the newest
    // stack's, lists the others in "skipped" oldest first, and counts() says 1 fitted, 0 failed, 3 skipped (what the
    // command line's summary line and a front end read). The watch stops after the four stacks it handled.
    void newestWinsAndSkippedAreCounted()
    {
        QTemporaryDir dir;
        const QString in = dir.filePath(QStringLiteral("in"));
        QVERIFY(QDir().mkpath(in));
        PresetOptions po;
        po.grid = 64;
        po.order = 4;
        const PresetCase demo = makePreset("demo", po);
        const QStringList byTime = {QStringLiteral("s_0003.fits"), QStringLiteral("s_0001.fits"), QStringLiteral("s_0004.fits"),
                                    QStringLiteral("s_0002.fits")};
        const qint64 base = QDateTime::fromString(QStringLiteral("2026-01-05T10:00:00Z"), Qt::ISODate).toSecsSinceEpoch();
        for (int i = 0; i < byTime.size(); ++i) {
            QFile f(QDir(in).filePath(byTime[i]));
            QVERIFY(f.open(QIODevice::WriteOnly));
            const QByteArray bytes = presetFitsBytes(demo, "demo", std::uint64_t(i + 1));
            QCOMPARE(f.write(bytes), bytes.size());
            QVERIFY(f.setFileTime(QDateTime::fromSecsSinceEpoch(base + 60 * i), QFileDevice::FileModificationTime));
        }
        LiveWatchOptions o;
        o.folder = in.toStdString();
        o.logPath = dir.filePath(QStringLiteral("log.jsonl")).toStdString();
        o.settings.model.order = 4;
        o.settings.solver.threads = 1;
        o.finder.stableMs = 300;
        o.maxStacks = 4;
        LiveWatch watch(o);
        QSignalSpy rows(&watch, &LiveWatch::rowWritten);
        QSignalSpy finished(&watch, &LiveWatch::finished);
        watch.start();
        QTRY_VERIFY_WITH_TIMEOUT(finished.size() == 1, kGuardMs);
        QCOMPARE(finished.front().at(0).toBool(), false);
        QCOMPARE(rows.size(), 1);
        const QJsonObject row = rows.front().at(0).toJsonObject();
        QCOMPARE(row.value(QStringLiteral("stack")).toString(), byTime.back());
        QCOMPARE(row.value(QStringLiteral("status")).toString(), QStringLiteral("ok"));
        QStringList skipped;
        for (const QJsonValue& v : row.value(QStringLiteral("skipped")).toArray())
            skipped << v.toString();
        QCOMPARE(skipped, byTime.mid(0, 3));
        const std::vector<QJsonObject> logged = readLiveLog(o.logPath);
        QCOMPARE(logged.size(), size_t(1));
        QCOMPARE(logged.front().value(QStringLiteral("stack")).toString(), byTime.back());
        const LiveCounts c = watch.counts();
        QCOMPARE(c.fitted, 1);
        QCOMPARE(c.failed, 0);
        QCOMPARE(c.skipped, 3);
        QCOMPARE(c.resumed, 0);
        QVERIFY(watch.latest());
        QCOMPARE(QString::fromStdString(watch.latest()->record.stack), byTime.back());
    }

    // The watch in-process: a FITS cube, then the same planes one file each (stack_0002_z*.fits, renamed in), which
    // fit to the cube's coefficients (to 1e-4 waves: a warm start from the cube's own result); stop() ends a watch.
    void perPlaneStackFitsLikeTheCube()
    {
        QTemporaryDir dir;
        const QString in = dir.filePath(QStringLiteral("in"));
        QVERIFY(QDir().mkpath(in));
        PresetOptions po;
        po.grid = 64;
        po.order = 4;
        const PresetCase demo = makePreset("demo", po);
        const QByteArray cube = presetFitsBytes(demo, "demo", po.seed);
        LiveWatchOptions o;
        o.folder = in.toStdString();
        o.logPath = dir.filePath(QStringLiteral("log.jsonl")).toStdString();
        o.settings.model.order = 4; // the demo's truth has Noll 11: order 4 describes it
        o.settings.solver.gradientTolerance = 1e-9;
        o.finder.planesPerStack = 3;
        o.finder.stableMs = 60000; // only renames and whole stacks count here
        o.maxStacks = 2;
        LiveWatch watch(o);
        QSignalSpy rows(&watch, &LiveWatch::rowWritten);
        QSignalSpy finished(&watch, &LiveWatch::finished);
        QSignalSpy watching(&watch, &LiveWatch::watching);
        watch.start();
        QTRY_VERIFY_WITH_TIMEOUT(watching.size() == 1, kGuardMs);
        // The rename-in of each file, as a camera writing a temporary name first does.
        auto renameIn = [&](const QString& name, const QByteArray& bytes) {
            const QString temporary = QDir(in).filePath(QLatin1Char('.') + name + QStringLiteral(".tmp"));
            QFile f(temporary);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write(bytes);
            f.close();
            QVERIFY(QFile::rename(temporary, QDir(in).filePath(name)));
        };
        renameIn(QStringLiteral("stack_0001.fits"), cube);
        QTRY_VERIFY_WITH_TIMEOUT(rows.size() == 1, kGuardMs);
        for (size_t k = 0; k < demo.spec.planes.size(); ++k) {
            std::vector<FitsKeyword> keywords = {{"WAVELENG", demo.spec.wavelength, ""},
                                                 {"SAMPLING", demo.spec.grid.spacing * demo.spec.grid.size / 2.0, ""},
                                                 {"BUNIT", std::string("photons"), ""},
                                                 {"RDNOISE", demo.spec.readNoise, ""},
                                                 {"DEFOCUS1", demo.spec.planes[k].diversity.defocusWaves, ""}};
            const std::string bytes = fitsBytes({demo.spec.planes[k].data}, keywords);
            renameIn(QStringLiteral("stack_0002_z%1.fits").arg(k), QByteArray::fromStdString(bytes));
        }
        QTRY_VERIFY_WITH_TIMEOUT(finished.size() == 1, kGuardMs);
        QCOMPARE(finished.front().at(0).toBool(), false);
        QCOMPARE(rows.size(), 2);
        const QJsonObject a = rows[0].at(0).toJsonObject(), b = rows[1].at(0).toJsonObject();
        QCOMPARE(a.value(QStringLiteral("status")).toString(), QStringLiteral("ok"));
        QCOMPARE(b.value(QStringLiteral("status")).toString(), QStringLiteral("ok"));
        QCOMPARE(b.value(QStringLiteral("stack")).toString(), QStringLiteral("stack_0002"));
        QCOMPARE(a.value(QStringLiteral("complete_rule")).toString(), QStringLiteral("renamed"));
        QCOMPARE(b.value(QStringLiteral("complete_rule")).toString(), QStringLiteral("all planes"));
        QCOMPARE(b.value(QStringLiteral("inputs")).toArray().size(), 3);
        QVERIFY(b.value(QStringLiteral("warm_started")).toBool());
        const QJsonArray ca = a.value(QStringLiteral("coefficients")).toArray(), cb = b.value(QStringLiteral("coefficients")).toArray();
        QCOMPARE(ca.size(), cb.size());
        for (int i = 0; i < ca.size(); ++i) {
            const double x = ca[i].toObject().value(QStringLiteral("value_waves")).toDouble(),
                         y = cb[i].toObject().value(QStringLiteral("value_waves")).toDouble();
            QVERIFY2(std::abs(x - y) < 1e-4, qPrintable(QStringLiteral("term %1: cube %2, planes %3").arg(i).arg(x).arg(y)));
        }
        const LiveCounts c = watch.counts();
        QCOMPARE(c.fitted, 2);
        QCOMPARE(c.failed, 0);
        unsigned long version = 0;
        QVERIFY(watch.latest(&version) && version == 2);

        LiveWatch idle(o);
        QSignalSpy stopped(&idle, &LiveWatch::finished);
        idle.start();
        idle.stop();
        QTRY_VERIFY_WITH_TIMEOUT(stopped.size() == 1, kGuardMs);
        QCOMPARE(stopped.front().at(1).toString(), QStringLiteral("stopped"));
    }
};

QTEST_GUILESS_MAIN(TestWatcher)
#include "tst_watcher.moc"
