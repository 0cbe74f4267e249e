// wavefront-cli under hostile conditions (issue 28): runs whose threads the system refuses end in the
// program's message and exit 1 (never a hang in FFTW's pool, FFTW's abort or libgomp's own exit); a resumed
// batch reuses only results of the same input bytes and settings; degenerate data and more parameters than
// pixels are said.
#include "TestSupport.h"

#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>

#include <cstring>
#include <functional>

#include <sys/resource.h>
#include <unistd.h>

using namespace wfs::test;

namespace {

using Run = ProgramRun; // status -1: killed by a signal or still running after 5 minutes (a hang)

// The CLI in `dir`, with `limit` applied in the child before it starts (setrlimit, or dropping root).
Run cli(const QStringList& args, const QString& dir, const std::function<void()>& limit = {})
{
    return runProgramIn(QStringLiteral(WFS_CLI_PATH), args, dir, limit);
}

QString simulated(const QTemporaryDir& dir)
{
    const Run sim = cli({QStringLiteral("simulate"), QStringLiteral("--grid"), QStringLiteral("64"), QStringLiteral("--order"),
                         QStringLiteral("3"), QStringLiteral("--out"), QStringLiteral("d.fits")},
                        dir.path());
    return sim.status == 0 ? dir.filePath(QStringLiteral("d.fits")) : QString();
}

// A message of the program's own: exit 1, its "error:" line, none of the libraries' last words.
bool programsOwnRefusal(const Run& r)
{
    return r.status == 1 && r.err.contains("reconstruct: error:") && !r.err.contains("libgomp") && !r.err.contains("fftw:")
           && !r.err.contains("std::bad_alloc");
}

QByteArray readAll(const QString& path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

// The summary's value of `column` in the row of `name`.
QByteArray summaryValue(const QString& summaryPath, const QByteArray& name, const QByteArray& column)
{
    const QList<QByteArray> lines = readAll(summaryPath).trimmed().split('\n');
    const int at = int(lines.value(0).split(',').indexOf(column));
    for (const QByteArray& line : lines.mid(1))
        if (line.startsWith(name + ','))
            return line.split(',').value(at);
    return {};
}

} // namespace

class TestCliHostile : public QObject {
    Q_OBJECT

private slots:
    void processLimitIsAMessage()
    {
        // RLIMIT_NPROC does not bind root, so as root the child becomes `nobody` first; as another user the
        // limit would count that user's other processes too, which a test cannot know.
        if (::geteuid() != 0)
            QSKIP("needs root to run the CLI as nobody under a process limit");
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        QVERIFY(!simulated(dir).isEmpty());
        QFile::setPermissions(dir.path(), QFileDevice::Permissions(0x7777));
        for (int limit : {3, 5, 8}) {
            const Run r =
                cli({QStringLiteral("reconstruct"), QStringLiteral("--input"), QStringLiteral("d.fits"), QStringLiteral("--threads"),
                     QStringLiteral("8"), QStringLiteral("--max-iterations"), QStringLiteral("5"), QStringLiteral("--quiet")},
                    dir.path(), [limit] {
                        const rlimit l{rlim_t(limit), rlim_t(limit)};
                        if (::setgid(65534) != 0 || ::setuid(65534) != 0 || ::setrlimit(RLIMIT_NPROC, &l) != 0)
                            ::_exit(99);
                    });
            if (r.status == 99)
                QSKIP("cannot become nobody here");
            // Before: a hang in fftw_spawn_loop (3 to 6) or libgomp's "Thread creation failed" (8).
            // The refusal comes where the first thread is wanted: the reconstruction's worker or the model's pool.
            QVERIFY2(programsOwnRefusal(r) && r.err.contains("ulimit -u"),
                     qPrintable(QStringLiteral("limit %1: status %2: %3").arg(limit).arg(r.status).arg(QString::fromUtf8(r.err))));
        }
    }

    void memoryLimitIsAMessageOrAResult()
    {
        // Under an address-space limit (it binds root too) thread stacks, malloc arenas and FFTW's planner run
        // out in turn. Every limit gives a result or the program's message; before, some gave libgomp's exit,
        // FFTW's "alloc.c:29: assertion failed" (SIGABRT) or a bare std::bad_alloc.
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        QVERIFY(!simulated(dir).isEmpty());
        // Where the scan starts depends on the build: the loader maps every shared library first (about 150 MB
        // without CUDA, about 1.5 GB with cuFFT, cuBLAS and cuSOLVER linked). So the floor is found first: the
        // least limit (to 10 MB) under which `--version` runs. The scan then covers the 300 MB above it, where the
        // data, the threads and the planner run out in turn.
        auto versionRuns = [&](int megabytes) {
            return cli({QStringLiteral("--version")}, dir.path(),
                       [megabytes] {
                           const rlimit l{rlim_t(megabytes) << 20, rlim_t(megabytes) << 20};
                           ::setrlimit(RLIMIT_AS, &l);
                       })
                       .status
                   == 0;
        };
        int low = 64, high = 8192;
        QVERIFY2(versionRuns(high), "the program does not start under 8 GB of address space");
        while (high - low > 10) {
            const int mid = (low + high) / 2;
            (versionRuns(mid) ? high : low) = mid;
        }
        int refusals = 0;
        for (int megabytes = high; megabytes <= high + 300; megabytes += 10) {
            const Run r =
                cli({QStringLiteral("reconstruct"), QStringLiteral("--input"), QStringLiteral("d.fits"), QStringLiteral("--threads"),
                     QStringLiteral("8"), QStringLiteral("--max-iterations"), QStringLiteral("5"), QStringLiteral("--quiet")},
                    dir.path(), [megabytes] {
                        const rlimit l{rlim_t(megabytes) << 20, rlim_t(megabytes) << 20};
                        ::setrlimit(RLIMIT_AS, &l);
                    });
            if (r.status == 127 && r.err.contains("error while loading shared libraries"))
                continue; // too little for the program's libraries: the loader's word, before any code of ours
            if (r.status != 0)
                QVERIFY2(programsOwnRefusal(r),
                         qPrintable(
                             QStringLiteral("%1 MB: status %2: %3").arg(megabytes).arg(r.status).arg(QString::fromUtf8(r.err.right(300)))));
            refusals += r.status == 1;
        }
        QVERIFY2(refusals > 0, "no limit was low enough to refuse the run: the test tried nothing");
        // The scan left the machine's fonts as they were: the runs kept fontconfig's cache in their own folder.
        if (!QStandardPaths::findExecutable(QStringLiteral("fc-list")).isEmpty()) {
            const Run fonts = wfs::test::runProgram(QStringLiteral("fc-list"), {});
            QVERIFY2(fonts.status == 0 && !fonts.out.trimmed().isEmpty(), "fontconfig lists no fonts after the scan");
        }
    }

    // A resumed batch reuses a result only when it was made from the same input bytes with the same
    // settings; a copied, outdated or differently-set result is said, removed and fitted again.
    void batchResumeChecksWhatAResultWasMadeFrom()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString d = dir.path();
        for (const auto& [name, seed] : {std::pair{"a.fits", "1"}, std::pair{"b.fits", "7"}})
            QCOMPARE(cli({QStringLiteral("simulate"), QStringLiteral("--grid"), QStringLiteral("32"), QStringLiteral("--order"),
                          QStringLiteral("2"), QStringLiteral("--seed"), QString::fromLatin1(seed), QStringLiteral("--out"),
                          QString::fromLatin1(name)},
                         d)
                         .status,
                     0);
        QVERIFY(QFile::copy(d + QStringLiteral("/a.fits"), d + QStringLiteral("/a-original.fits")));
        const QByteArray settings = R"({"format": "wavefront-studio-session", "format_version": 1, "solver": {"max_iterations": 40}})";
        QVERIFY(writeFile(d + QStringLiteral("/s.json"), settings));
        const QStringList batch{QStringLiteral("batch"),  QStringLiteral("--out"),  QStringLiteral("out"),
                                QStringLiteral("--jobs"), QStringLiteral("1"),      QStringLiteral("--settings"),
                                QStringLiteral("s.json"), QStringLiteral("a.fits"), QStringLiteral("b.fits")};
        const QString summary = d + QStringLiteral("/out/summary.csv");
        Run first = cli(batch, d);
        QVERIFY2(first.status == 0, first.err.constData());
        const QByteArray rmsA = summaryValue(summary, "a", "rms_waves"), rmsB = summaryValue(summary, "b", "rms_waves");
        QVERIFY(!rmsA.isEmpty() && rmsA != rmsB);

        // Nothing changed: both skipped.
        Run again = cli(batch, d);
        QCOMPARE(again.out.count("done earlier, skipped"), 2);

        // b's result copied in a's place (before: "a: done earlier, skipped" and b's numbers in a's row).
        QVERIFY(QFile::remove(d + QStringLiteral("/out/a.json"))
                && QFile::copy(d + QStringLiteral("/out/b.json"), d + QStringLiteral("/out/a.json")));
        Run foreign = cli(batch, d);
        QVERIFY2(foreign.status == 0, foreign.err.constData());
        QVERIFY2(foreign.out.contains("a: run again: the result belongs to another input") && foreign.out.contains("b.fits)")
                     && foreign.out.contains("b: done earlier, skipped") && !foreign.out.contains("a: done earlier"),
                 foreign.out.constData());
        QCOMPARE(summaryValue(summary, "a", "rms_waves"), rmsA);

        // a edited (b's bytes written into it): fitted again, a's row now b's numbers, as the data are.
        QVERIFY(writeFile(d + QStringLiteral("/a.fits"), readAll(d + QStringLiteral("/b.fits"))));
        Run edited = cli(batch, d);
        QVERIFY2(edited.out.contains("a: run again: the input changed since the result"), edited.out.constData());
        QCOMPARE(summaryValue(summary, "a", "rms_waves"), rmsB);

        // The original bytes back, under a new modification time: the bytes decide.
        QVERIFY(writeFile(d + QStringLiteral("/a.fits"), readAll(d + QStringLiteral("/a-original.fits"))));
        QVERIFY(cli(batch, d).out.contains("a: run again: the input changed since"));
        {
            QFile touched(d + QStringLiteral("/a.fits"));
            QVERIFY(touched.open(QIODevice::ReadWrite)
                    && touched.setFileTime(QDateTime::currentDateTimeUtc().addSecs(3600), QFileDevice::FileModificationTime));
        }
        QVERIFY(cli(batch, d).out.contains("a: done earlier, skipped"));

        // Other settings: every input fitted again.
        QVERIFY(writeFile(d + QStringLiteral("/s.json"), QByteArray(settings).replace("40", "41")));
        Run resettled = cli(batch, d);
        QCOMPARE(resettled.out.count("run again: the settings changed since the result"), 2);
        QVERIFY(resettled.out.contains("running 2 of 2 inputs"));
    }

    // A 4 x 4 ramp fitted with 16 parameters "converged" with no word; now the warning names the counts, on
    // standard error and in the result's warnings.
    void moreParametersThanPixelsIsSaid()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        QByteArray header;
        for (const char* card : {"SIMPLE  =                    T", "BITPIX  =                  -64", "NAXIS   =                    2",
                                 "NAXIS1  =                    4", "NAXIS2  =                    4", "WAVELENG=              6.33E-7",
                                 "SAMPLING=                  2.0", "END"})
            header += QByteArray(card).leftJustified(80, ' ');
        QByteArray data;
        for (int i = 0; i < 16; ++i) {
            const double v = i + 1.0;
            quint64 bits;
            std::memcpy(&bits, &v, sizeof bits);
            for (int b = 7; b >= 0; --b)
                data += char((bits >> (8 * b)) & 0xff);
        }
        QVERIFY(writeFile(dir.filePath(QStringLiteral("ramp.fits")), header.leftJustified(2880, ' ') + data.leftJustified(2880, '\0')));
        const Run r = cli({QStringLiteral("reconstruct"), QStringLiteral("--input"), QStringLiteral("ramp.fits"), QStringLiteral("--order"),
                           QStringLiteral("4"), QStringLiteral("--max-iterations"), QStringLiteral("20"), QStringLiteral("--json"),
                           QStringLiteral("r.json"), QStringLiteral("--quiet")},
                          dir.path());
        QVERIFY2(r.status == 0, r.err.constData());
        QVERIFY2(r.err.contains("16 data pixels for 16 fitted parameters: more parameters than the data support")
                     && r.err.contains("80 here"),
                 r.err.constData());
        const QJsonObject result = QJsonDocument::fromJson(readAll(dir.filePath(QStringLiteral("r.json")))).object();
        QVERIFY(
            QJsonDocument(result.value(QStringLiteral("warnings")).toArray()).toJson().contains("more parameters than the data support"));
    }

    // BSCALE = 1E-300 or -1: no plane takes part, said with the scaling (before: converged, RMS 0, Strehl 1, exit 0).
    void degenerateScalingIsRefused()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        QVERIFY(!simulated(dir).isEmpty());
        const QByteArray fits = readAll(dir.filePath(QStringLiteral("d.fits")));
        const qsizetype end = fits.indexOf("END     ");
        QVERIFY(end > 0 && end % 80 == 0);
        for (const auto& [scale, expected] : {std::pair{"1E-300", "below what can be fitted"}, std::pair{"-1", "negative BSCALE"}}) {
            QByteArray edited = fits;
            const QByteArray card = QByteArray("BSCALE  = ") + QByteArray(scale).rightJustified(20, ' ');
            edited.replace(end, 80, card.leftJustified(80, ' ') + QByteArray("END").leftJustified(80, ' ').left(80));
            edited.remove(end + 160, 80); // the header keeps its length (blank cards after END)
            QVERIFY(writeFile(dir.filePath(QStringLiteral("s.fits")), edited));
            const Run r =
                cli({QStringLiteral("reconstruct"), QStringLiteral("--input"), QStringLiteral("s.fits"), QStringLiteral("--quiet")},
                    dir.path());
            QVERIFY2((r.status == 1 || r.status == 2) && r.err.contains(expected) && r.err.contains("no plane takes part"),
                     r.err.constData());
        }
    }
};

QTEST_GUILESS_MAIN(TestCliHostile)
#include "tst_clihostile.moc"
