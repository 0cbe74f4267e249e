// Live mode's arbitration, deterministically (issue 47 item 2): complete stacks placed in the folder before the watch
// starts, their modification times increasing in an order that is not their names' order, all become complete in the
// same scan. Exactly one row follows, the newest stack's, listing the others in "skipped" oldest first, and the
// summary line says 1 fitted, 0 failed, 3 skipped (core's LiveWatch in process: tst_watcher; the desktop's Live tab:
// tst_livepanel). A restart on the same log fits none of them again. No assertion is about time: the watch stops
// after the four stacks it handled, or after an idle second with nothing to do.
#include "TestSupport.h"

#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>

using namespace wfs;

namespace {

QByteArray readAll(const QString& path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

QList<QJsonObject> logRows(const QString& path)
{
    QList<QJsonObject> rows;
    for (const QByteArray& line : readAll(path).split('\n'))
        if (!line.trimmed().isEmpty())
            rows << QJsonDocument::fromJson(line).object();
    return rows;
}

QStringList skippedOf(const QJsonObject& row)
{
    QStringList out;
    for (const QJsonValue& v : row.value(QStringLiteral("skipped")).toArray())
        out << v.toString();
    return out;
}

// The stacks in the order of their modification times (oldest first): not the names' order, so that neither the
// names nor the listing's order can stand in for the times.
const QStringList kByTime = {QStringLiteral("s_0003.fits"), QStringLiteral("s_0001.fits"), QStringLiteral("s_0004.fits"),
                             QStringLiteral("s_0002.fits")};

} // namespace

class TestLiveArbitration : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_dir;

    QString path(const QString& name) const { return m_dir.filePath(name); }

    // A folder holding the four stacks, complete, with modification times a minute apart in kByTime's order (fixed
    // times in 2026, not the clock's).
    void placeStacks(const QString& folder)
    {
        QVERIFY(QDir().mkpath(folder));
        const qint64 base = QDateTime::fromString(QStringLiteral("2026-01-05T10:00:00Z"), Qt::ISODate).toSecsSinceEpoch();
        for (int i = 0; i < kByTime.size(); ++i) {
            const QString target = QDir(folder).filePath(kByTime[i]);
            QVERIFY(QFile::copy(path(QStringLiteral("src/stack_%1.fits").arg(i + 1)), target));
            QFile f(target);
            QVERIFY(f.open(QIODevice::ReadWrite));
            QVERIFY(f.setFileTime(QDateTime::fromSecsSinceEpoch(base + 60 * i), QFileDevice::FileModificationTime));
        }
    }

    void checkRows(const QList<QJsonObject>& rows)
    {
        QCOMPARE(rows.size(), 1);
        const QJsonObject row = rows.front();
        QCOMPARE(row.value(QStringLiteral("stack")).toString(), kByTime.back());
        QCOMPARE(row.value(QStringLiteral("status")).toString(), QStringLiteral("ok"));
        QCOMPARE(skippedOf(row), kByTime.mid(0, 3));
        QCOMPARE(row.value(QStringLiteral("sequence")).toInt(), 0);
    }

private slots:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        QVERIFY(QDir().mkpath(path(QStringLiteral("src"))));
        for (int seed = 1; seed <= 4; ++seed) {
            const test::ProgramRun p =
                test::runProgram(QStringLiteral(WFS_CLI_PATH),
                                 {QStringLiteral("simulate"), QStringLiteral("--preset"), QStringLiteral("demo"), QStringLiteral("--grid"),
                                  QStringLiteral("64"), QStringLiteral("--seed"), QString::number(seed), QStringLiteral("--out"),
                                  path(QStringLiteral("src/stack_%1.fits").arg(seed))});
            QVERIFY2(p.status == 0, p.err.constData());
        }
        QVERIFY(test::writeFile(
            path(QStringLiteral("settings.json")),
            R"({"format": "wavefront-studio-session", "format_version": 1, "model": {"order": 4}, "solver": {"threads": 1}})"));
    }

    // wavefront-cli watch: the newest stack's row, the others skipped, the summary line counting them so; then a
    // restart on the same log fits none of them and ends idle.
    void cliNewestWins()
    {
        const QString in = path(QStringLiteral("cli"));
        placeStacks(in);
        const QString log = path(QStringLiteral("cli.jsonl"));
        const test::ProgramRun run = test::runProgram(
            QStringLiteral(WFS_CLI_PATH),
            {QStringLiteral("watch"), in, QStringLiteral("--settings"), path(QStringLiteral("settings.json")), QStringLiteral("--out"), log,
             QStringLiteral("--stable-ms"), QStringLiteral("300"), QStringLiteral("--max-stacks"), QStringLiteral("4")});
        QVERIFY2(run.status == 0, run.err.constData());
        checkRows(logRows(log));
        QVERIFY2(run.out.contains("watch ended: 4 stacks handled (1 fitted, 0 failed, 3 skipped; log "), run.out.constData());
        // One line per row on standard output: only the newest stack's, saying the older ones were skipped.
        QVERIFY2(run.out.contains((kByTime.back() + QStringLiteral("  ok  ")).toUtf8()), run.out.constData());
        QVERIFY2(run.out.contains("(3 older stacks skipped)"), run.out.constData());
        for (const QString& older : kByTime.mid(0, 3))
            QVERIFY2(!run.out.contains(older.toUtf8()), run.out.constData());

        // A restart continues the log: the four stacks are done (one fitted, three skipped), none is fitted again.
        const test::ProgramRun again = test::runProgram(
            QStringLiteral(WFS_CLI_PATH),
            {QStringLiteral("watch"), in, QStringLiteral("--settings"), path(QStringLiteral("settings.json")), QStringLiteral("--out"), log,
             QStringLiteral("--stable-ms"), QStringLiteral("300"), QStringLiteral("--exit-when-idle"), QStringLiteral("1")});
        QVERIFY2(again.status == 0, again.err.constData());
        QVERIFY2(again.err.contains("continued at sequence 1 (1 rows read back: the 4 stacks done there are not fitted again)"),
                 again.err.constData());
        QVERIFY2(again.out.contains("(0 fitted, 0 failed, 0 skipped;"), again.out.constData());
        checkRows(logRows(log));
    }
};

QTEST_GUILESS_MAIN(TestLiveArbitration)
#include "tst_livearbitration.moc"
