// wavefront-cli watch (issue 25): against a writer process (tests/app/live_writer.py) that writes stacks in
// chunks, renames them in, writes a damaged one and dies mid-file, the watch fits only complete stacks and its
// coefficients equal a batch run's of the same files; a damaged stack and stacks whose shape does not fit become
// error rows (the mismatch said once); a restart continues the log; a folder that disappears and a log that
// cannot grow stop the watch with whole rows kept; a 1000-stack soak keeps its memory bounded. Every wait here
// counts events (rows, lines, exits); none asserts a duration.
#include "TestSupport.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRegularExpression>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QThread>

#include <cmath>
#include <map>
#include <set>
#include <sys/stat.h>

namespace {

// Hang guard for one wait: a test that reaches it has failed, whatever the machine's speed.
constexpr int kGuardMs = 300000;

QByteArray readAll(const QString& path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

// A stack renamed into the folder, as a camera that writes a temporary name first does.
void renameIn(const QString& source, const QString& folder, const QString& name)
{
    const QString temporary = QDir(folder).filePath(QLatin1Char('.') + name + QStringLiteral(".tmp"));
    QFile::remove(temporary);
    QVERIFY(QFile::copy(source, temporary));
    QVERIFY(QFile::rename(temporary, QDir(folder).filePath(name)));
}

// The log's rows; every line must be a whole JSON object ending in a newline.
QList<QJsonObject> logRows(const QString& path)
{
    QList<QJsonObject> rows;
    const QByteArray bytes = readAll(path);
    if (bytes.isEmpty())
        return rows;
    if (!bytes.endsWith('\n'))
        qWarning("%s: the last line has no newline", qPrintable(path));
    for (const QByteArray& line : bytes.split('\n')) {
        if (line.isEmpty())
            continue;
        QJsonParseError error;
        const QJsonDocument doc = QJsonDocument::fromJson(line, &error);
        if (error.error != QJsonParseError::NoError || !doc.isObject()) {
            rows << QJsonObject{{QStringLiteral("unparsable"), QString::fromUtf8(line.left(80))}};
            continue;
        }
        rows << doc.object();
    }
    return rows;
}

std::map<int, double> coefficients(const QJsonObject& result)
{
    std::map<int, double> out;
    for (const QJsonValue& c : result.value(QStringLiteral("coefficients")).toArray())
        out[c.toObject().value(QStringLiteral("index")).toInt()] = c.toObject().value(QStringLiteral("value_waves")).toDouble();
    return out;
}

long rssKiB(qint64 pid)
{
    const QByteArray status = readAll(QStringLiteral("/proc/%1/status").arg(pid));
    const QRegularExpressionMatch m = QRegularExpression(QStringLiteral("VmRSS:\\s+(\\d+) kB")).match(QString::fromLatin1(status));
    return m.hasMatch() ? m.captured(1).toLong() : -1;
}

// `wavefront-cli watch` as a child process whose stdout lines are counted as they come.
class Watch {
public:
    Watch(const QStringList& args, const QString& dir, const QString& shell = {})
    {
        m_process.setWorkingDirectory(dir);
        if (shell.isEmpty()) {
            m_process.start(QStringLiteral(WFS_CLI_PATH), QStringList{QStringLiteral("watch")} + args);
        } else {
            // Run under a shell for a resource limit: `shell` is the prefix, e.g. "ulimit -f 40;".
            QStringList quoted;
            for (const QString& a : QStringList{QStringLiteral(WFS_CLI_PATH), QStringLiteral("watch")} + args)
                quoted << QLatin1Char('\'') + a + QLatin1Char('\'');
            m_process.start(QStringLiteral("bash"),
                            {QStringLiteral("-c"), shell + QStringLiteral(" exec ") + quoted.join(QLatin1Char(' '))});
        }
    }
    ~Watch()
    {
        if (m_process.state() != QProcess::NotRunning) {
            m_process.kill();
            m_process.waitForFinished();
        }
    }
    qint64 pid() const { return m_process.processId(); }
    // Waits for the next stdout line (false when the process ended first).
    bool nextLine(QByteArray& line)
    {
        while (!m_process.canReadLine()) {
            if (m_process.state() == QProcess::NotRunning)
                return false;
            m_process.waitForReadyRead(kGuardMs);
            if (m_process.state() == QProcess::NotRunning && !m_process.canReadLine())
                return false;
        }
        line = m_process.readLine().trimmed();
        m_out += line + '\n';
        return true;
    }
    // Waits for a line containing `text`.
    bool waitFor(const QByteArray& text)
    {
        QByteArray line;
        while (nextLine(line))
            if (line.contains(text))
                return true;
        return false;
    }
    int finish()
    {
        m_process.waitForFinished(kGuardMs);
        m_out += m_process.readAllStandardOutput();
        m_err += m_process.readAllStandardError();
        return m_process.exitStatus() == QProcess::NormalExit ? m_process.exitCode() : -1;
    }
    QByteArray out() const { return m_out; }
    // Standard error so far, while the process runs.
    QByteArray errSoFar()
    {
        m_err += m_process.readAllStandardError();
        return m_err;
    }
    QByteArray err() const { return m_err; }

private:
    QProcess m_process;
    QByteArray m_out, m_err;
};

} // namespace

class TestWatch : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_dir;
    QString m_python;

    QString path(const QString& name) const { return m_dir.filePath(name); }
    QString source(int seed) const { return path(QStringLiteral("src/stack_%1.fits").arg(seed)); }

    void simulate(const QString& out, int grid, int seed)
    {
        const wfs::test::ProgramRun p =
            wfs::test::runProgram(QStringLiteral(WFS_CLI_PATH),
                                  {QStringLiteral("simulate"), QStringLiteral("--preset"), QStringLiteral("demo"), QStringLiteral("--grid"),
                                   QString::number(grid), QStringLiteral("--seed"), QString::number(seed), QStringLiteral("--out"), out});
        QVERIFY2(p.status == 0, p.err.constData());
    }

private slots:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        m_python = QStandardPaths::findExecutable(QStringLiteral("python3"));
        QVERIFY2(!m_python.isEmpty(), "python3 runs the writer process");
        QDir().mkpath(path(QStringLiteral("src")));
        for (int seed = 1; seed <= 4; ++seed)
            simulate(source(seed), 64, seed);
        simulate(path(QStringLiteral("src/small.fits")), 32, 9); // another shape
        // Order 4 keeps each fit short and describes the demo's truth (Noll 11 is n = 4; order 3 would make every row a
        // poor fit); the metadata come from each stack's FITS header.
        QVERIFY(wfs::test::writeFile(
            path(QStringLiteral("settings.json")),
            R"({"format": "wavefront-studio-session", "format_version": 1, "model": {"order": 4}, "solver": {"threads": 1}})"));
    }

    // The writer process writes in chunks, renames, writes noise and dies mid-file; the watch fits only the
    // complete stacks, and their coefficients are a batch run's of the same files.
    void writerProcessAgainstWatch()
    {
        const QString in = path(QStringLiteral("in"));
        QVERIFY(QDir().mkpath(in));
        Watch watch({in, QStringLiteral("--settings"), path(QStringLiteral("settings.json")), QStringLiteral("--out"),
                     path(QStringLiteral("live.jsonl")), QStringLiteral("--csv"), path(QStringLiteral("trend.csv")),
                     QStringLiteral("--save-results"), path(QStringLiteral("results")), QStringLiteral("--stable-ms"),
                     QStringLiteral("1500"), QStringLiteral("--incomplete-ms"), QStringLiteral("3000"), QStringLiteral("--max-stacks"),
                     QStringLiteral("5")},
                    m_dir.path());
        QVERIFY(watch.waitFor("watching ")); // set up: a rename from now on counts as one
        QProcess writer;
        writer.start(m_python,
                     {QStringLiteral(WFS_SOURCE_DIR "/tests/app/live_writer.py"), in, QStringLiteral("--pause"), QStringLiteral("0.5"),
                      QStringLiteral("chunks:%1:s_0001.fits").arg(source(1)), QStringLiteral("rename:%1:s_0002.fits").arg(source(2)),
                      QStringLiteral("chunks:%1:s_0003.fits").arg(source(3)), QStringLiteral("corrupt:%1:s_0004.fits").arg(source(4)),
                      QStringLiteral("kill:%1:s_0005.fits").arg(source(4))});
        QVERIFY(writer.waitForFinished(kGuardMs));
        QCOMPARE(writer.exitStatus(), QProcess::CrashExit); // it killed itself mid-file
        QCOMPARE(writer.readAllStandardOutput().count("wrote "), 4);
        const int status = watch.finish();
        QVERIFY2(status == 0, watch.err().constData());

        const QList<QJsonObject> rows = logRows(path(QStringLiteral("live.jsonl")));
        std::map<QString, QJsonObject> byStack;
        std::multiset<QString> accounted; // each stack once: a row of its own or listed as skipped
        for (const QJsonObject& r : rows) {
            QVERIFY2(!r.contains(QStringLiteral("unparsable")), "every log line is a whole JSON object");
            byStack[r.value(QStringLiteral("stack")).toString()] = r;
            qInfo("%s: %s (%s), warm %d, skipped %d %s", qPrintable(r.value(QStringLiteral("stack")).toString()),
                  qPrintable(r.value(QStringLiteral("status")).toString()), qPrintable(r.value(QStringLiteral("complete_rule")).toString()),
                  int(r.value(QStringLiteral("warm_started")).toBool()), int(r.value(QStringLiteral("skipped")).toArray().size()),
                  qPrintable(r.value(QStringLiteral("error")).toString().left(100)));
            accounted.insert(r.value(QStringLiteral("stack")).toString());
            for (const QJsonValue& s : r.value(QStringLiteral("skipped")).toArray())
                accounted.insert(s.toString());
        }
        QCOMPARE(accounted,
                 (std::multiset<QString>{QStringLiteral("s_0001.fits"), QStringLiteral("s_0002.fits"), QStringLiteral("s_0003.fits"),
                                         QStringLiteral("s_0004.fits"), QStringLiteral("s_0005.fits")}));
        // The noise and the half-written file are error rows, unless a newer stack won over them.
        for (const char* bad : {"s_0004.fits", "s_0005.fits"})
            if (byStack.count(QLatin1String(bad))) {
                QCOMPARE(byStack[QLatin1String(bad)].value(QStringLiteral("status")).toString(), QStringLiteral("failed"));
                QVERIFY(!byStack[QLatin1String(bad)].value(QStringLiteral("error")).toString().isEmpty());
            }
        QVERIFY2(byStack.count(QStringLiteral("s_0005.fits")), "the newest stack is never skipped: the dead writer's file has its row");
        QVERIFY(byStack[QStringLiteral("s_0005.fits")].value(QStringLiteral("error")).toString().contains(QStringLiteral("s_0005.fits")));

        // Batch on the same (now complete) files: the fitted rows' coefficients agree within 2e-3 waves (the
        // warm start converges to the cold start's minimum; the tolerance is the solvers' stopping rule's scale).
        QStringList fitted;
        for (const auto& [stack, r] : byStack)
            if (r.value(QStringLiteral("status")).toString() == QLatin1String("ok"))
                fitted << QDir(in).filePath(stack);
        QVERIFY2(fitted.size() >= 1, "at least the first complete stack is fitted");
        const wfs::test::ProgramRun batch =
            wfs::test::runProgram(QStringLiteral(WFS_CLI_PATH),
                                  QStringList{QStringLiteral("batch"), QStringLiteral("--settings"), path(QStringLiteral("settings.json")),
                                              QStringLiteral("--out"), path(QStringLiteral("batch")), QStringLiteral("--quiet")}
                                      + fitted);
        QVERIFY2(batch.status == 0, batch.err.constData());
        int warm = 0;
        for (const QString& file : fitted) {
            const QString stack = QFileInfo(file).fileName();
            const QJsonObject live = byStack[stack];
            QCOMPARE(live.value(QStringLiteral("complete_rule")).toString(),
                     stack == QLatin1String("s_0002.fits") ? QStringLiteral("renamed") : QStringLiteral("stable"));
            warm += live.value(QStringLiteral("warm_started")).toBool();
            const std::map<int, double> a = coefficients(live);
            const std::map<int, double> b = coefficients(
                QJsonDocument::fromJson(readAll(path(QStringLiteral("batch/%1.json").arg(QFileInfo(file).completeBaseName())))).object());
            QCOMPARE(a.size(), b.size());
            QVERIFY(a.size() >= 8);
            for (const auto& [index, waves] : a)
                QVERIFY2(std::abs(waves - b.at(index)) < 2e-3,
                         qPrintable(QStringLiteral("%1 Noll %2: live %3, batch %4").arg(stack).arg(index).arg(waves).arg(b.at(index))));
            // --save-results: the result as reconstruct writes it, named by its input's whole name.
            QVERIFY(coefficients(QJsonDocument::fromJson(readAll(path(QStringLiteral("results/%1.json").arg(stack)))).object()) == a);
        }
        QCOMPARE(warm, int(fitted.size()) - 1); // every fit after the first starts from the one before
        // The trend table: a header and one row per log row.
        const QList<QByteArray> csv = readAll(path(QStringLiteral("trend.csv"))).trimmed().split('\n');
        QCOMPARE(csv.size(), rows.size() + 1);
        QVERIFY(csv.front().startsWith("sequence,stack,status,warm_started"));
        QVERIFY(csv.front().contains(",noll_4_waves,"));
    }

    // A restart fits no stack the log holds and numbers its rows on (its first fit starts cold: parameters are not
    // kept across processes); stacks of another shape are error rows, the mismatch said once.
    void restartContinuesAndMismatchSaidOnce()
    {
        const QString in = path(QStringLiteral("in"));
        const QList<QJsonObject> before = logRows(path(QStringLiteral("live.jsonl")));
        QVERIFY(!before.isEmpty());
        renameIn(source(1), in, QStringLiteral("s_0006.fits"));
        Watch watch({in, QStringLiteral("--settings"), path(QStringLiteral("settings.json")), QStringLiteral("--out"),
                     path(QStringLiteral("live.jsonl")), QStringLiteral("--csv"), path(QStringLiteral("trend.csv")),
                     QStringLiteral("--stable-ms"), QStringLiteral("200")},
                    m_dir.path());
        QVERIFY2(watch.waitFor("s_0006.fits"), watch.out().constData());
        // Two stacks of another size, one at a time (each waits for the row before it).
        renameIn(path(QStringLiteral("src/small.fits")), in, QStringLiteral("t_0001.fits"));
        QVERIFY(watch.waitFor("t_0001.fits"));
        renameIn(path(QStringLiteral("src/small.fits")), in, QStringLiteral("t_0002.fits"));
        QVERIFY(watch.waitFor("t_0002.fits"));
        renameIn(source(2), in, QStringLiteral("s_0007.fits"));
        QVERIFY(watch.waitFor("s_0007.fits"));
        // Stop the way a user does: the process is ended; the log holds whole rows.
        QVERIFY(QProcess::execute(QStringLiteral("kill"), {QString::number(watch.pid())}) == 0);
        watch.finish();

        const QList<QJsonObject> after = logRows(path(QStringLiteral("live.jsonl")));
        QCOMPARE(after.size(), before.size() + 4);
        for (int i = 0; i < after.size(); ++i)
            QCOMPARE(after[i].value(QStringLiteral("sequence")).toInt(), i);
        QCOMPARE(after[before.size()].value(QStringLiteral("stack")).toString(), QStringLiteral("s_0006.fits"));
        QCOMPARE(after[before.size()].value(QStringLiteral("status")).toString(), QStringLiteral("ok"));
        QVERIFY(!after[before.size()].value(QStringLiteral("warm_started")).toBool());
        for (int k : {1, 2}) {
            const QJsonObject t = after[before.size() + k];
            QCOMPARE(t.value(QStringLiteral("status")).toString(), QStringLiteral("failed"));
            QVERIFY(t.value(QStringLiteral("settings_mismatch")).toBool());
            QVERIFY2(t.value(QStringLiteral("error"))
                         .toString()
                         .contains(QStringLiteral("3 planes of 32 x 32; the watch expects 3 planes of 64 x 64")),
                     qPrintable(t.value(QStringLiteral("error")).toString()));
        }
        QCOMPARE(after.back().value(QStringLiteral("status")).toString(), QStringLiteral("ok"));
        QVERIFY(after.back().value(QStringLiteral("warm_started")).toBool()); // from s_0006, past the failed rows
        QCOMPARE(watch.err().count("the watch expects"), 1);                  // said once, not once per stack
        QVERIFY(watch.err().contains("continued at sequence"));
    }

    // Issue 41: the watch writes only into files of its own. An existing file that is not its log or trend table, a
    // link, a FIFO, the settings file: refused at the start with status 1, before a byte of it changes.
    void foreignOutputsRefused()
    {
        const QString in = path(QStringLiteral("foreign"));
        QVERIFY(QDir().mkpath(in));
        const QByteArray fits = readAll(source(1));
        QVERIFY(wfs::test::writeFile(path(QStringLiteral("data.fits")), fits));
        const QByteArray settings = readAll(path(QStringLiteral("settings.json")));
        QVERIFY(QFile::link(path(QStringLiteral("settings.json")), path(QStringLiteral("settings-link.jsonl"))));
        QVERIFY(QFile::link(path(QStringLiteral("data.fits")), path(QStringLiteral("data-link.jsonl"))));
        QCOMPARE(::mkfifo(path(QStringLiteral("fifo.jsonl")).toLocal8Bit().constData(), 0600), 0);
        const QString log = path(QStringLiteral("own.jsonl"));
        struct Case {
            QStringList args;
            QByteArray said;
        };
        const QList<Case> cases = {
            {{QStringLiteral("--out"), path(QStringLiteral("data.fits"))}, "is not a live log"},
            {{QStringLiteral("--out"), path(QStringLiteral("data-link.jsonl"))}, "symbolic link"},
            {{QStringLiteral("--out"), path(QStringLiteral("fifo.jsonl"))}, "FIFO"},
            {{QStringLiteral("--out"), path(QStringLiteral("settings.json"))}, "is the --settings file"},
            {{QStringLiteral("--out"), path(QStringLiteral("settings-link.jsonl"))}, "is the --settings file"},
            {{QStringLiteral("--out"), log, QStringLiteral("--csv"), path(QStringLiteral("data.fits"))}, "not a live trend table"},
            {{QStringLiteral("--out"), log, QStringLiteral("--csv"), path(QStringLiteral("fifo.jsonl"))}, "FIFO"},
        };
        for (const Case& c : cases) {
            Watch watch(QStringList{in, QStringLiteral("--settings"), path(QStringLiteral("settings.json")),
                                    QStringLiteral("--exit-when-idle"), QStringLiteral("1")}
                            + c.args,
                        m_dir.path());
            const int status = watch.finish();
            QVERIFY2(status == 1 || status == 2, qPrintable(c.args.join(QLatin1Char(' ')) + QStringLiteral(": status %1").arg(status)));
            QVERIFY2(watch.err().contains(c.said), qPrintable(c.args.join(QLatin1Char(' ')) + QStringLiteral(": ") + watch.err()));
            QCOMPARE(readAll(path(QStringLiteral("data.fits"))), fits);
            QCOMPARE(readAll(path(QStringLiteral("settings.json"))), settings);
        }
        // A trend table of another order (other columns) is refused, not appended to with rows of a new width.
        renameIn(source(1), in, QStringLiteral("o_0001.fits"));
        Watch first({in, QStringLiteral("--settings"), path(QStringLiteral("settings.json")), QStringLiteral("--out"), log,
                     QStringLiteral("--csv"), path(QStringLiteral("own.csv")), QStringLiteral("--exit-when-idle"), QStringLiteral("1")},
                    m_dir.path());
        QVERIFY2(first.finish() == 0, first.err().constData());
        const QByteArray table = readAll(path(QStringLiteral("own.csv")));
        QVERIFY(wfs::test::writeFile(path(QStringLiteral("order6.json")),
                                     R"({"format": "wavefront-studio-session", "format_version": 1, "model": {"order": 6}})"));
        Watch other({in, QStringLiteral("--settings"), path(QStringLiteral("order6.json")), QStringLiteral("--out"), log,
                     QStringLiteral("--csv"), path(QStringLiteral("own.csv")), QStringLiteral("--exit-when-idle"), QStringLiteral("1")},
                    m_dir.path());
        QCOMPARE(other.finish(), 1);
        QVERIFY2(other.err().contains("other columns") && other.err().contains("--order"), other.err().constData());
        QCOMPARE(readAll(path(QStringLiteral("own.csv"))), table);
    }

    // Issue 41: the watch stopped between its log row and its trend-table row (the table's last row removed here,
    // as a kill between the two writes leaves it) is repaired on the restart: the table gets the row the log holds.
    // A stack replaced under its name after it was fitted (a camera rewriting latest.fits) is fitted again.
    void restartRepairsTheTableAndRefitsARewrittenStack()
    {
        const QString in = path(QStringLiteral("repair"));
        QVERIFY(QDir().mkpath(in));
        const QString log = path(QStringLiteral("repair.jsonl")), csv = path(QStringLiteral("repair.csv"));
        const QStringList args{in,
                               QStringLiteral("--settings"),
                               path(QStringLiteral("settings.json")),
                               QStringLiteral("--out"),
                               log,
                               QStringLiteral("--csv"),
                               csv,
                               QStringLiteral("--stable-ms"),
                               QStringLiteral("200"),
                               QStringLiteral("--exit-when-idle"),
                               QStringLiteral("2")};
        renameIn(source(1), in, QStringLiteral("latest.fits"));
        Watch first(args, m_dir.path());
        QVERIFY2(first.finish() == 0, first.err().constData());
        renameIn(source(2), in, QStringLiteral("r_0002.fits"));
        Watch second(args, m_dir.path());
        QVERIFY2(second.finish() == 0, second.err().constData());
        QCOMPARE(logRows(log).size(), 2);
        QByteArray table = readAll(csv);
        const QByteArray whole = table;
        table.chop(1);
        table.truncate(table.lastIndexOf('\n') + 1); // the last row lost
        QVERIFY(wfs::test::writeFile(csv, table));
        // latest.fits rewritten by its camera: a later modification time, other contents.
        QVERIFY(QFile::remove(QDir(in).filePath(QStringLiteral("latest.fits"))));
        QThread::msleep(20);
        renameIn(source(3), in, QStringLiteral("latest.fits"));
        Watch third(args, m_dir.path());
        QVERIFY2(third.finish() == 0, third.err().constData());
        QVERIFY2(third.err().contains("were missing and were added"), third.err().constData());
        const QList<QJsonObject> rows = logRows(log);
        QCOMPARE(rows.size(), 3);
        QCOMPARE(rows[2].value(QStringLiteral("stack")).toString(), QStringLiteral("latest.fits"));
        QCOMPARE(rows[2].value(QStringLiteral("sequence")).toInt(), 2);
        QVERIFY(coefficients(rows[2]) != coefficients(rows[0])); // the new file's fit
        const QList<QByteArray> lines = readAll(csv).trimmed().split('\n');
        QCOMPARE(lines.size(), 4); // header and three rows, in order, the repaired one as first written
        QVERIFY(readAll(csv).startsWith(whole));
        for (int i = 0; i < 3; ++i)
            QVERIFY(lines[i + 1].startsWith(QByteArray::number(i) + ","));
    }

    // Issue 41: a cube written in chunks, paused longer than --stable-ms after its first plane: never fitted (nor
    // logged failed) as what was there; fitted once whole, with its three planes. reconstruct refuses the cut file.
    void cubeWrittenInChunks()
    {
        const QString in = path(QStringLiteral("chunks"));
        QVERIFY(QDir().mkpath(in));
        const QByteArray whole = readAll(source(1));
        const qsizetype cut = whole.size() / 2; // the header and the first plane, part of the second
        const QString file = QDir(in).filePath(QStringLiteral("c_0001.fits"));
        QVERIFY(wfs::test::writeFile(file, whole.left(cut)));
        Watch watch({in, QStringLiteral("--settings"), path(QStringLiteral("settings.json")), QStringLiteral("--out"),
                     path(QStringLiteral("chunks.jsonl")), QStringLiteral("--stable-ms"), QStringLiteral("200"),
                     QStringLiteral("--max-stacks"), QStringLiteral("1")},
                    m_dir.path());
        QVERIFY(watch.waitFor("watching "));
        QTRY_VERIFY_WITH_TIMEOUT(readAll(path(QStringLiteral("chunks.jsonl"))).isEmpty() && watch.errSoFar().contains("not read whole"),
                                 kGuardMs);
        QFile f(file);
        QVERIFY(f.open(QIODevice::Append));
        QCOMPARE(f.write(whole.mid(cut)), whole.size() - cut);
        f.close();
        QVERIFY2(watch.finish() == 0, watch.err().constData());
        const QList<QJsonObject> rows = logRows(path(QStringLiteral("chunks.jsonl")));
        QCOMPARE(rows.size(), 1);
        QCOMPARE(rows[0].value(QStringLiteral("status")).toString(), QStringLiteral("ok"));
        QCOMPARE(rows[0].value(QStringLiteral("planes")).toArray().size(), 3);
        QVERIFY2(watch.err().contains("truncated"), watch.err().constData());
        QVERIFY(wfs::test::writeFile(path(QStringLiteral("cut.fits")), whole.left(cut)));
        const wfs::test::ProgramRun refused =
            wfs::test::runProgram(QStringLiteral(WFS_CLI_PATH), {QStringLiteral("reconstruct"), path(QStringLiteral("cut.fits"))});
        QVERIFY(refused.status != 0);
        QVERIFY2(refused.err.contains("truncated") && refused.err.contains("--planes"), refused.err.constData());
    }

    // The folder disappears: the watch stops with a message, status 1, and the log keeps its rows.
    void folderGoneStops()
    {
        const QString in = path(QStringLiteral("gone"));
        QVERIFY(QDir().mkpath(in));
        renameIn(source(1), in, QStringLiteral("g_0001.fits"));
        Watch watch({in, QStringLiteral("--settings"), path(QStringLiteral("settings.json")), QStringLiteral("--out"),
                     path(QStringLiteral("gone.jsonl")), QStringLiteral("--stable-ms"), QStringLiteral("200")},
                    m_dir.path());
        QVERIFY(watch.waitFor("g_0001.fits"));
        QVERIFY(QDir(in).removeRecursively());
        QCOMPARE(watch.finish(), 1);
        QVERIFY2(watch.err().contains("is gone"), watch.err().constData());
        const QList<QJsonObject> rows = logRows(path(QStringLiteral("gone.jsonl")));
        QCOMPARE(rows.size(), 1);
        QCOMPARE(rows.front().value(QStringLiteral("status")).toString(), QStringLiteral("ok"));
    }

    // The log cannot grow (a file-size limit, as a full disk): the watch stops with the reason, status 1, and the
    // log holds whole rows only, the failed row cut back.
    void fullLogKeepsWholeRows()
    {
        const QString in = path(QStringLiteral("full"));
        QVERIFY(QDir().mkpath(in));
        Watch watch({in, QStringLiteral("--settings"), path(QStringLiteral("settings.json")), QStringLiteral("--out"),
                     path(QStringLiteral("full.jsonl")), QStringLiteral("--stable-ms"), QStringLiteral("200")},
                    m_dir.path(), QStringLiteral("ulimit -f 24;")); // 24 KiB: two or three rows
        QVERIFY(watch.waitFor("watching "));
        int written = 0;
        for (int i = 1; i <= 20; ++i) {
            renameIn(source(1 + i % 3), in, QStringLiteral("f_%1.fits").arg(i, 4, 10, QLatin1Char('0')));
            QByteArray line;
            if (!watch.nextLine(line))
                break;
            ++written;
        }
        QCOMPARE(watch.finish(), 1);
        QVERIFY2(watch.err().contains("cannot append") && watch.err().contains("the log keeps its whole rows"), watch.err().constData());
        const QByteArray bytes = readAll(path(QStringLiteral("full.jsonl")));
        QVERIFY(bytes.endsWith('\n'));
        const QList<QJsonObject> rows = logRows(path(QStringLiteral("full.jsonl")));
        QCOMPARE(rows.size(), written);
        QVERIFY(rows.size() >= 1 && rows.size() < 20);
        for (const QJsonObject& r : rows)
            QVERIFY(!r.contains(QStringLiteral("unparsable")));
    }

    // 1000 tiny stacks from the writer process, 10 ms apart (about the fit's time, so some are fitted and some
    // skipped): every one is accounted for (fitted or
    // listed as skipped, none failed), and the watch's memory after them is within 40 MiB of after the first 100.
    void soakThousandStacks()
    {
        simulate(path(QStringLiteral("src/tiny.fits")), 16, 5);
        const QString in = path(QStringLiteral("soak"));
        QVERIFY(QDir().mkpath(in));
        QVERIFY(wfs::test::writeFile(
            path(QStringLiteral("tiny.json")),
            R"({"format": "wavefront-studio-session", "format_version": 1, "model": {"order": 2}, "solver": {"threads": 1, "uncertainty": false}})"));
        Watch watch({in, QStringLiteral("--settings"), path(QStringLiteral("tiny.json")), QStringLiteral("--out"),
                     path(QStringLiteral("soak.jsonl")), QStringLiteral("--stable-ms"), QStringLiteral("60000"),
                     QStringLiteral("--max-stacks"), QStringLiteral("1000")},
                    m_dir.path());
        QVERIFY(watch.waitFor("watching "));
        QProcess writer;
        writer.start(m_python, {QStringLiteral(WFS_SOURCE_DIR "/tests/app/live_writer.py"), in, QStringLiteral("--repeat"),
                                QStringLiteral("1000"), QStringLiteral("--pause"), QStringLiteral("0.01"),
                                QStringLiteral("rename:%1:tiny_{}.fits").arg(path(QStringLiteral("src/tiny.fits")))});
        long rssEarly = -1, rssLate = -1;
        int lines = 0;
        QByteArray line;
        while (watch.nextLine(line)) {
            if (!line.contains(".fits  "))
                continue;
            ++lines;
            const QRegularExpressionMatch m = QRegularExpression(QStringLiteral("tiny_(\\d+)")).match(QString::fromLatin1(line));
            const int number = m.hasMatch() ? m.captured(1).toInt() : 0;
            if (rssEarly < 0 && number >= 100)
                rssEarly = rssKiB(watch.pid());
            if (number >= 900)
                rssLate = std::max(rssLate, rssKiB(watch.pid()));
        }
        QVERIFY(writer.waitForFinished(kGuardMs));
        QCOMPARE(writer.exitCode(), 0);
        QVERIFY2(watch.finish() == 0, watch.err().constData());
        const QList<QJsonObject> rows = logRows(path(QStringLiteral("soak.jsonl")));
        int fitted = 0, failed = 0, skipped = 0;
        for (const QJsonObject& r : rows) {
            // Order 2 on the demo's truth is a poor fit (its verdict), fitted all the same.
            const QString status = r.value(QStringLiteral("status")).toString();
            (status == QLatin1String("ok") || status == QLatin1String("poor-fit") ? fitted : failed) += 1;
            skipped += int(r.value(QStringLiteral("skipped")).toArray().size());
        }
        qInfo("soak: 1000 stacks: %d fitted, %d skipped, %d failed; watch RSS %ld KiB after stack 100, %ld KiB after stack 900+", fitted,
              skipped, failed, rssEarly, rssLate);
        QCOMPARE(failed, 0);
        QCOMPARE(fitted + skipped, 1000);
        QCOMPARE(lines, fitted);
        QVERIFY(rssEarly > 0 && rssLate > 0);
        QVERIFY2(rssLate - rssEarly < 40 * 1024, qPrintable(QStringLiteral("RSS grew from %1 to %2 KiB").arg(rssEarly).arg(rssLate)));
    }

    // --preset live: the simulated camera writes into the folder and the watch fits what it wrote; the fitted
    // wavefront is the one set (Noll 5 and 7 within 0.01 wave at 1e6 photons per plane, order 4, 64 x 64).
    void presetLiveFollowsTheTerms()
    {
        const QString in = path(QStringLiteral("camera"));
        QVERIFY(QDir().mkpath(in));
        Watch watch({in, QStringLiteral("--preset"), QStringLiteral("live"), QStringLiteral("--stacks"), QStringLiteral("4"),
                     QStringLiteral("--rate"), QStringLiteral("20"), QStringLiteral("--grid"), QStringLiteral("64"),
                     QStringLiteral("--terms"), QStringLiteral("5=0.1,7=-0.05"), QStringLiteral("--out"),
                     path(QStringLiteral("camera.jsonl"))},
                    m_dir.path());
        QVERIFY2(watch.finish() == 0, watch.err().constData());
        QCOMPARE(QDir(in).entryList({QStringLiteral("live_*.fits")}, QDir::Files).size(), 4); // through the folder
        const QList<QJsonObject> rows = logRows(path(QStringLiteral("camera.jsonl")));
        int accounted = 0;
        for (const QJsonObject& r : rows) {
            accounted += 1 + int(r.value(QStringLiteral("skipped")).toArray().size());
            QCOMPARE(r.value(QStringLiteral("status")).toString(), QStringLiteral("ok"));
            QCOMPARE(r.value(QStringLiteral("complete_rule")).toString(), QStringLiteral("renamed"));
            const std::map<int, double> c = coefficients(r);
            QVERIFY2(std::abs(c.at(5) - 0.1) < 0.01 && std::abs(c.at(7) + 0.05) < 0.01,
                     qPrintable(QStringLiteral("Noll 5 %1, Noll 7 %2").arg(c.at(5)).arg(c.at(7))));
            QVERIFY(std::abs(c.at(6)) < 0.01);
        }
        QCOMPARE(accounted, 4);
        // A camera setting out of range is refused before anything runs.
        Watch bad({in, QStringLiteral("--preset"), QStringLiteral("live"), QStringLiteral("--rate"), QStringLiteral("0"),
                   QStringLiteral("--out"), path(QStringLiteral("bad.jsonl"))},
                  m_dir.path());
        QCOMPARE(bad.finish(), 2);
        QVERIFY2(bad.err().contains("rate"), bad.err().constData());
    }

    // bench live: one JSON row per rate with the contract's keys; every stack written is fitted or skipped.
    void benchLiveRows()
    {
        const wfs::test::ProgramRun bench = wfs::test::runProgram(
            QStringLiteral(WFS_CLI_PATH),
            {QStringLiteral("bench"), QStringLiteral("live"), QStringLiteral("--rate"), QStringLiteral("10,40"), QStringLiteral("--stacks"),
             QStringLiteral("6"), QStringLiteral("--grid"), QStringLiteral("64"), QStringLiteral("--order"), QStringLiteral("3")});
        QVERIFY2(bench.status == 0, bench.err.constData());
        const QList<QByteArray> lines = bench.out.trimmed().split('\n');
        QCOMPARE(lines.size(), 2);
        for (const QByteArray& line : lines) {
            const QJsonObject row = QJsonDocument::fromJson(line).object();
            for (const char* key : {"rate", "stacks_per_s_sustained", "latency_median_s", "latency_p95_s", "skipped", "fitted", "failed",
                                    "event_loop_max_gap_ms", "load_1min"})
                QVERIFY2(row.contains(QLatin1String(key)), key);
            QCOMPARE(row.value(QStringLiteral("fitted")).toInt() + row.value(QStringLiteral("skipped")).toInt(), 6);
            QCOMPARE(row.value(QStringLiteral("failed")).toInt(), 0);
            QVERIFY(row.value(QStringLiteral("latency_p95_s")).toDouble() >= row.value(QStringLiteral("latency_median_s")).toDouble());
        }
    }
};

QTEST_GUILESS_MAIN(TestWatch)
#include "tst_watch.moc"
