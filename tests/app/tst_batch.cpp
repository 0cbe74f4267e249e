// wavefront-cli batch (issue 14, item 4): its summary equals the GNU parallel recipe's (each task running
// `reconstruct` on one input, then `batch --summarize-only`); a resumed batch skips complete results and
// redoes truncated ones; a failing input, a missing manifest row file and an unusable manifest are
// recorded or refused; invalid settings stop the batch before any worker starts.
#include "TestSupport.h"

#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>

namespace {

struct Run {
    int status = -1;
    QByteArray out, err;
};

Run run(const QString& program, const QStringList& args, const QString& dir)
{
    QProcess process;
    process.setWorkingDirectory(dir);
    process.start(program, args);
    Run r;
    if (!process.waitForFinished(600000)) {
        process.kill();
        process.waitForFinished();
        r.err = "timed out";
        return r;
    }
    r.status = process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -1;
    r.out = process.readAllStandardOutput();
    r.err = process.readAllStandardError();
    return r;
}

Run cli(const QStringList& args, const QString& dir)
{
    return run(QStringLiteral(WFS_CLI_PATH), args, dir);
}

QByteArray readAll(const QString& path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

void write(const QString& path, const QByteArray& bytes)
{
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
    f.write(bytes);
}

// The summary's lines without the `seconds` column (times differ from run to run).
QList<QByteArray> withoutSeconds(const QByteArray& csv)
{
    QList<QByteArray> lines = csv.trimmed().split('\n');
    if (lines.isEmpty())
        return lines;
    const int column = int(lines.front().split(',').indexOf("seconds"));
    if (column < 0)
        return {};
    for (QByteArray& line : lines) {
        QList<QByteArray> fields = line.split(','); // the compared rows carry no quoted commas
        fields.removeAt(column);
        line = fields.join(',');
    }
    return lines;
}

// The row of `name` as header -> value.
QMap<QByteArray, QByteArray> row(const QByteArray& csv, const QByteArray& name)
{
    const QList<QByteArray> lines = csv.trimmed().split('\n');
    const QList<QByteArray> header = lines.front().split(',');
    for (const QByteArray& line : lines.mid(1)) {
        // Quoted fields (the error column, last) may hold commas: split the leading fields only.
        QList<QByteArray> fields = line.split(',');
        if (fields.front() != name)
            continue;
        QMap<QByteArray, QByteArray> out;
        for (int i = 0; i < header.size(); ++i)
            out[header[i]] = i + 1 < header.size() ? fields.value(i) : fields.mid(i).join(',');
        return out;
    }
    return {};
}

} // namespace

class TestBatch : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_dir;
    QStringList m_inputs; // three simulated stacks, small grid

    QString path(const QString& name) const { return m_dir.filePath(name); }

private slots:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        for (int seed = 1; seed <= 3; ++seed) {
            const QString out = path(QStringLiteral("data/bead_%1.fits").arg(seed));
            QDir().mkpath(path(QStringLiteral("data")));
            const Run sim = cli({QStringLiteral("simulate"), QStringLiteral("--preset"), QStringLiteral("demo"), QStringLiteral("--grid"),
                                 QStringLiteral("64"), QStringLiteral("--seed"), QString::number(seed), QStringLiteral("--out"), out},
                                m_dir.path());
            QVERIFY2(sim.status == 0, sim.err.constData());
            m_inputs << out;
        }
        // Settings without inputs: order 4 for every input (the recipe below gives it as --order 4); the demo's truth has
        // Noll 11 (n = 4), which a lower order cannot describe (its fits would be poor-fit rows).
        write(path(QStringLiteral("settings.json")),
              R"({"format": "wavefront-studio-session", "format_version": 1, "model": {"order": 4}, "solver": {"threads": 1}})");
    }

    // The README's GNU parallel recipe and `batch` give the same summary (seconds aside).
    void parallelRecipeEqualsBatch()
    {
        const QString parallel = QStandardPaths::findExecutable(QStringLiteral("parallel"));
        if (parallel.isEmpty())
            QFAIL("GNU parallel is not installed (Debian package 'parallel'; scripts/setup.sh installs it)");

        const Run batch = cli(QStringList{QStringLiteral("batch"), path(QStringLiteral("settings.json")), QStringLiteral("--out"),
                                          path(QStringLiteral("batch")), QStringLiteral("--jobs"), QStringLiteral("2")}
                                  + m_inputs,
                              m_dir.path());
        QVERIFY2(batch.status == 0, batch.err.constData());
        QVERIFY2(batch.out.contains("[3/3]"), batch.out.constData());
        QCOMPARE(batch.out.count("ok  "), 3);

        QDir().mkpath(path(QStringLiteral("parallel")));
        const Run tasks = run(parallel,
                              QStringList{QStringLiteral("--will-cite"), QStringLiteral("-j"), QStringLiteral("2"),
                                          QStringLiteral(WFS_CLI_PATH), QStringLiteral("reconstruct"), QStringLiteral("--input"),
                                          QStringLiteral("{}"), QStringLiteral("--order"), QStringLiteral("4"), QStringLiteral("--json"),
                                          path(QStringLiteral("parallel/{/.}.json")), QStringLiteral("--quiet"), QStringLiteral(">"),
                                          path(QStringLiteral("parallel/{/.}.log")), QStringLiteral("2>&1"), QStringLiteral(":::")}
                                  + m_inputs,
                              m_dir.path());
        QVERIFY2(tasks.status == 0, tasks.err.constData());
        const Run summary = cli(QStringList{QStringLiteral("batch"), QStringLiteral("--summarize-only"), QStringLiteral("--out"),
                                            path(QStringLiteral("parallel"))}
                                    + m_inputs,
                                m_dir.path());
        QVERIFY2(summary.status == 0, summary.err.constData());

        const QByteArray a = readAll(path(QStringLiteral("batch/summary.csv"))), b = readAll(path(QStringLiteral("parallel/summary.csv")));
        QCOMPARE(a.trimmed().split('\n').size(), 4); // header and one row per input
        QVERIFY2(a.startsWith("name,file,field_x,field_y,status,termination,rms_waves,strehl,reduced_chi_square,noll_2_waves"),
                 a.constData());
        QVERIFY(!a.contains("noll_16_waves")); // order 4 from the settings: Noll 2..15
        const QList<QByteArray> rowsA = withoutSeconds(a), rowsB = withoutSeconds(b);
        QVERIFY(!rowsA.isEmpty());
        QCOMPARE(rowsA, rowsB);
        for (const char* name : {"bead_1", "bead_2", "bead_3"})
            QCOMPARE(row(a, name).value("status"), QByteArray("ok"));
    }

    // A result that exists and is complete is skipped; a truncated one (a write cut short) and a leftover
    // temporary of the output layer are not counted as done.
    void resumeSkipsCompleteAndRedoesPartial()
    {
        const QString out = path(QStringLiteral("resume"));
        QDir().mkpath(out);
        const Run first =
            cli({QStringLiteral("reconstruct"), QStringLiteral("--input"), m_inputs[0], QStringLiteral("--order"), QStringLiteral("4"),
                 QStringLiteral("--json"), out + QStringLiteral("/bead_1.json"), QStringLiteral("--quiet")},
                m_dir.path());
        QVERIFY2(first.status == 0, first.err.constData());
        const QByteArray complete = readAll(out + QStringLiteral("/bead_1.json"));
        QVERIFY(complete.size() > 200);
        write(out + QStringLiteral("/bead_2.json"), complete.left(complete.size() / 2)); // cut mid-write
        write(out + QStringLiteral("/.bead_3.json.wfs-AbC123"), complete);               // a temporary left by a kill

        const Run resumed =
            cli({QStringLiteral("batch"), QStringLiteral("--settings"), path(QStringLiteral("settings.json")), QStringLiteral("--out"), out,
                 QStringLiteral("--jobs"), QStringLiteral("2"), path(QStringLiteral("data/bead_*.fits"))},
                m_dir.path());
        QVERIFY2(resumed.status == 0, resumed.err.constData());
        QVERIFY2(resumed.out.contains("bead_1: done earlier, skipped"), resumed.out.constData());
        QVERIFY2(!resumed.out.contains("bead_2: done earlier"), resumed.out.constData());
        QVERIFY2(!resumed.out.contains("bead_3: done earlier"), resumed.out.constData());
        QVERIFY2(resumed.out.contains("running 2 of 3 inputs"), resumed.out.constData());
        QCOMPARE(readAll(out + QStringLiteral("/bead_1.json")), complete); // untouched
        QVERIFY(QFile::exists(out + QStringLiteral("/bead_2.log")) && QFile::exists(out + QStringLiteral("/bead_3.log")));
        QVERIFY(!QFile::exists(out + QStringLiteral("/bead_1.log")));
        const QJsonObject redone = QJsonDocument::fromJson(readAll(out + QStringLiteral("/bead_2.json"))).object();
        QCOMPARE(redone.value(QStringLiteral("termination")).toString(), QStringLiteral("converged"));
        const QByteArray summary = readAll(out + QStringLiteral("/summary.csv"));
        for (const char* name : {"bead_1", "bead_2", "bead_3"})
            QVERIFY2(row(summary, name).value("status") == "ok", summary.constData());
        // Each input's own result: bead_2 was fitted on bead_2's data, not copied from bead_1.
        QVERIFY(row(summary, "bead_2").value("noll_4_waves") != row(summary, "bead_1").value("noll_4_waves"));

        // Run again: everything is done, nothing runs.
        const Run again = cli({QStringLiteral("batch"), QStringLiteral("--settings"), path(QStringLiteral("settings.json")),
                               QStringLiteral("--out"), out, path(QStringLiteral("data/bead_*.fits"))},
                              m_dir.path());
        QVERIFY2(again.status == 0, again.err.constData());
        QCOMPARE(again.out.count("done earlier, skipped"), 3);
        QVERIFY(!again.out.contains("running"));
    }

    // A batch killed (SIGTERM) after its first input ends its worker and leaves no temporary; run again,
    // it skips exactly the results that are complete and finishes the rest.
    void killedBatchResumes()
    {
        const QString out = path(QStringLiteral("killed"));
        QProcess batch;
        batch.setWorkingDirectory(m_dir.path());
        batch.start(QStringLiteral(WFS_CLI_PATH),
                    QStringList{QStringLiteral("batch"), QStringLiteral("--out"), out, QStringLiteral("--jobs"), QStringLiteral("1")}
                        + m_inputs);
        QByteArray seen;
        while (!seen.contains("[1/3]") && batch.state() != QProcess::NotRunning && batch.waitForReadyRead(60000))
            seen += batch.readAllStandardOutput();
        QVERIFY2(seen.contains("[1/3]") || batch.state() == QProcess::NotRunning, seen.constData());
        batch.terminate();
        QVERIFY(batch.waitForFinished(60000));
        // The worker ends with the batch and its output layer removes its temporary.
        QStringList temporaries;
        for (int i = 0; i < 100; ++i) {
            temporaries = QDir(out).entryList({QStringLiteral(".*.wfs-*")}, QDir::Files | QDir::Hidden);
            if (temporaries.isEmpty())
                break;
            QTest::qWait(100);
        }
        QVERIFY2(temporaries.isEmpty(), qPrintable(temporaries.join(QLatin1Char(' '))));
        int complete = 0;
        for (const char* name : {"bead_1", "bead_2", "bead_3"}) {
            const QJsonObject result =
                QJsonDocument::fromJson(readAll(out + QLatin1Char('/') + QLatin1String(name) + QStringLiteral(".json"))).object();
            complete += result.contains(QStringLiteral("termination"));
        }
        QVERIFY(complete >= 1);

        const Run resumed = cli(
            QStringList{QStringLiteral("batch"), QStringLiteral("--out"), out, QStringLiteral("--jobs"), QStringLiteral("1")} + m_inputs,
            m_dir.path());
        QVERIFY2(resumed.status == 0, resumed.err.constData());
        QCOMPARE(int(resumed.out.count("done earlier, skipped")), complete);
        QVERIFY2(resumed.out.contains("summary: ") && resumed.out.contains("(3 of 3 inputs ok)"), resumed.out.constData());
    }

    // A manifest with field positions and a per-input override: a row whose file is missing and an input
    // that cannot be read are rows of the summary with their reasons; the others are fitted; the field map
    // is drawn.
    // A link put where an input's log goes is replaced by the log, never followed: its target stays as it was.
    void logLinksAreNotFollowed()
    {
        const QString out = path(QStringLiteral("links"));
        QDir().mkpath(out);
        const QString victim = path(QStringLiteral("precious.txt"));
        write(victim, "keep me\n");
        QVERIFY(QFile::link(victim, out + QStringLiteral("/bead_1.log")));
        const Run r = cli({QStringLiteral("batch"), QStringLiteral("--settings"), path(QStringLiteral("settings.json")),
                           QStringLiteral("--out"), out, QStringLiteral("--jobs"), QStringLiteral("1"), m_inputs[0]},
                          m_dir.path());
        QVERIFY2(r.status == 0, r.err.constData());
        QCOMPARE(readAll(victim), QByteArray("keep me\n"));
        const QFileInfo log(out + QStringLiteral("/bead_1.log"));
        QVERIFY(log.exists() && !log.isSymLink());
    }

    // A worker that cannot start (here its log cannot be opened: a folder is in its place) ends the batch
    // all the same, reported once with the reason; the other input is fitted.
    void workerThatCannotStartEndsTheBatch()
    {
        const QString out = path(QStringLiteral("nostart"));
        QDir().mkpath(out + QStringLiteral("/bead_1.log"));
        // Alone: its failure is known before the batch's event loop runs (it used to quit the loop too early).
        const Run alone = cli({QStringLiteral("batch"), QStringLiteral("--settings"), path(QStringLiteral("settings.json")),
                               QStringLiteral("--out"), out, QStringLiteral("--jobs"), QStringLiteral("1"), m_inputs[0]},
                              m_dir.path());
        QVERIFY2(alone.status >= 0, "the batch hung (or crashed)");
        QVERIFY2(alone.out.count("[1/1]") == 1 && alone.out.contains("could not start"), alone.out.constData());
        const Run r = cli({QStringLiteral("batch"), QStringLiteral("--settings"), path(QStringLiteral("settings.json")),
                           QStringLiteral("--out"), out, QStringLiteral("--jobs"), QStringLiteral("1"), m_inputs[0], m_inputs[1]},
                          m_dir.path());
        QVERIFY2(r.status >= 0, "the batch hung (or crashed)");
        QVERIFY2(r.out.contains("[1/2]") && r.out.contains("[2/2]") && !r.out.contains("[3/2]"), r.out.constData());
        QVERIFY2(r.out.contains("could not start"), r.out.constData());
        QVERIFY(QFile::exists(out + QStringLiteral("/bead_2.json")));
    }

    void manifestFailuresAreRows()
    {
        write(path(QStringLiteral("data/garbage.fits")), "SIMPLE  =  garbage");
        write(path(QStringLiteral("data/field.csv")), "# three beads, one missing, one unreadable\n"
                                                      "file,name,x,y,defocus\n"
                                                      "bead_1.fits,centre,0,0,\n"
                                                      "bead_2.fits,edge,1.5,-0.5,\"-1w,0,1w\"\n"
                                                      "no_such_bead.fits,lost,0,1,\n"
                                                      "garbage.fits,broken,-1,1,\n"
                                                      "bead_3.fits,short,1,1,\"-1w,0\"\n");
        const QString out = path(QStringLiteral("field"));
        const Run r = cli({QStringLiteral("batch"), QStringLiteral("--out"), out, QStringLiteral("--jobs"), QStringLiteral("2"),
                           QStringLiteral("--manifest"), path(QStringLiteral("data/field.csv")), QStringLiteral("--field-map-coefficient"),
                           QStringLiteral("5")},
                          m_dir.path());
        QCOMPARE(r.status, 0); // failed inputs are rows, not a crash
        QVERIFY2(r.out.contains("[5/5]"), r.out.constData());
        const QByteArray summary = readAll(out + QStringLiteral("/summary.csv"));
        QCOMPARE(summary.trimmed().split('\n').size(), 6);
        QCOMPARE(row(summary, "centre").value("status"), QByteArray("ok"));
        QCOMPARE(row(summary, "edge").value("status"), QByteArray("ok"));
        QCOMPARE(row(summary, "edge").value("field_x"), QByteArray("1.5"));
        QCOMPARE(row(summary, "edge").value("field_y"), QByteArray("-0.5"));
        const auto lost = row(summary, "lost");
        QCOMPARE(lost.value("status"), QByteArray("failed"));
        QVERIFY2(lost.value("error").contains("no_such_bead.fits: input file not found"), lost.value("error").constData());
        const auto broken = row(summary, "broken");
        QCOMPARE(broken.value("status"), QByteArray("failed"));
        QVERIFY2(broken.value("error").contains("garbage.fits"), broken.value("error").constData());
        const auto shortRow = row(summary, "short");
        QCOMPARE(shortRow.value("status"), QByteArray("failed"));
        QVERIFY2(shortRow.value("error").contains("defocus has 2 entries but 3 planes take part"), shortRow.value("error").constData());
        QVERIFY(!QFile::exists(out + QStringLiteral("/lost.json")) && !QFile::exists(out + QStringLiteral("/broken.json")));
        QCOMPARE(readAll(out + QStringLiteral("/field-map.png")).left(8), QByteArray("\x89PNG\r\n\x1a\n", 8));
        QVERIFY2(r.out.contains("field map:"), r.out.constData());
    }

    // What makes the whole batch unusable stops it before any worker starts, naming the setting or file.
    void invalidSettingsAndManifestsStopBeforeAnyWorker()
    {
        write(path(QStringLiteral("bad-threads.json")),
              R"({"format": "wavefront-studio-session", "format_version": 1, "solver": {"threads": 0}})");
        const QString out = path(QStringLiteral("refused"));
        Run r = cli({QStringLiteral("batch"), path(QStringLiteral("bad-threads.json")), QStringLiteral("--out"), out, m_inputs[0]},
                    m_dir.path());
        QCOMPARE(r.status, 1);
        QVERIFY2(r.err.contains("solver.threads") && r.err.contains("nothing was run"), r.err.constData());
        QCOMPARE(r.err.count('\n'), 1);
        QVERIFY(!QDir(out).exists()); // no worker, no output folder

        write(path(QStringLiteral("bad-wavelength.json")),
              R"({"format": "wavefront-studio-session", "format_version": 1, "metadata": {"wavelength_m": 633}})");
        r = cli({QStringLiteral("batch"), QStringLiteral("--settings"), path(QStringLiteral("bad-wavelength.json")),
                 QStringLiteral("--out"), out, m_inputs[0]},
                m_dir.path());
        QCOMPARE(r.status, 1);
        QVERIFY2(r.err.contains("wavelength") && r.err.contains("633nm"), r.err.constData());
        QVERIFY(!QDir(out).exists());

        // A model setting that no input could be fitted with (checked where the problem is built).
        write(path(QStringLiteral("bad-obscuration.json")),
              R"({"format": "wavefront-studio-session", "format_version": 1, "model": {"obscuration": 1.5}})");
        r = cli({QStringLiteral("batch"), QStringLiteral("--settings"), path(QStringLiteral("bad-obscuration.json")),
                 QStringLiteral("--out"), out, m_inputs[0]},
                m_dir.path());
        QCOMPARE(r.status, 1);
        QVERIFY2(r.err.contains("bad-obscuration.json") && r.err.contains("obscuration"), r.err.constData());
        QVERIFY(!QDir(out).exists());

        // A name too long for a file name (the log and result are NAME.log and NAME.json): refused by name, at once.
        write(path(QStringLiteral("data/long.csv")), "file,name\nbead_1.fits," + QByteArray(300, 'n') + "\nbead_2.fits,short\n");
        r = cli({QStringLiteral("batch"), QStringLiteral("--out"), out, QStringLiteral("--jobs"), QStringLiteral("1"),
                 QStringLiteral("--manifest"), path(QStringLiteral("data/long.csv"))},
                m_dir.path());
        QVERIFY2(r.status != 0 && r.err.contains("too long"), r.err.constData());
        QVERIFY(!QFile::exists(out + QStringLiteral("/short.json")));
        r = cli({QStringLiteral("batch"), QStringLiteral("--out"), out, QStringLiteral("--manifest"),
                 path(QStringLiteral("no-such-manifest.csv"))},
                m_dir.path());
        QCOMPARE(r.status, 1);
        QVERIFY2(r.err.contains("no-such-manifest.csv"), r.err.constData());
        QVERIFY(!QDir(out).exists());

        write(path(QStringLiteral("data/odd.csv")), "file,x,y,colour\nbead_1.fits,0,0,red\n");
        r = cli({QStringLiteral("batch"), QStringLiteral("--out"), out, path(QStringLiteral("data/odd.csv"))}, m_dir.path());
        QCOMPARE(r.status, 1);
        QVERIFY2(r.err.contains("unknown column 'colour'"), r.err.constData());

        // Two inputs that would write one result file.
        QDir().mkpath(path(QStringLiteral("other")));
        QVERIFY(QFile::copy(m_inputs[0], path(QStringLiteral("other/bead_1.fits"))));
        r = cli({QStringLiteral("batch"), QStringLiteral("--out"), out, m_inputs[0], path(QStringLiteral("other/bead_1.fits"))},
                m_dir.path());
        QCOMPARE(r.status, 1);
        QVERIFY2(r.err.contains("two inputs have the name 'bead_1'"), r.err.constData());

        r = cli({QStringLiteral("batch"), QStringLiteral("--out"), out, path(QStringLiteral("data/nothing_*.fits"))}, m_dir.path());
        QCOMPARE(r.status, 1);
        QVERIFY2(r.err.contains("no file matches"), r.err.constData());
        QVERIFY(!QDir(out).exists());

        r = cli({QStringLiteral("batch"), m_inputs[0]}, m_dir.path());
        QCOMPARE(r.status, 2);
        QVERIFY2(r.err.contains("--out"), r.err.constData());
    }
};

QTEST_GUILESS_MAIN(TestBatch)
#include "tst_batch.moc"
