// wavefront-cli batch's resume by every input a result was made from (issue 47 item 3): a result is reused only when
// its input's bytes, the settings file and the input's manifest row are those it was made from, and it is whole; a
// changed manifest override, a changed input, a changed setting and an incomplete result (a truncated file, a result
// without its termination) are each fitted again with the reason said, and the row's numbers follow the new run.
#include "TestSupport.h"

#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>

namespace {

QByteArray readAll(const QString& path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

QJsonObject resultOf(const QString& path)
{
    return QJsonDocument::fromJson(readAll(path)).object();
}

// The wavelength a result was fitted at (its convention's).
double wavelengthOf(const QString& path)
{
    return resultOf(path).value(QStringLiteral("convention")).toObject().value(QStringLiteral("wavelength_m")).toDouble();
}

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

class TestBatchResume : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_dir;
    QByteArray m_settings;

    QString path(const QString& name) const { return m_dir.filePath(name); }

    wfs::test::ProgramRun cli(const QStringList& args) const
    {
        return wfs::test::runProgramIn(QStringLiteral(WFS_CLI_PATH), args, m_dir.path());
    }
    wfs::test::ProgramRun batch() const
    {
        return cli({QStringLiteral("batch"), QStringLiteral("--out"), QStringLiteral("out"), QStringLiteral("--jobs"), QStringLiteral("1"),
                    QStringLiteral("--settings"), QStringLiteral("s.json"), QStringLiteral("m.csv")});
    }
    void writeManifest(const char* wavelengthA)
    {
        QVERIFY(
            wfs::test::writeFile(path(QStringLiteral("m.csv")), QByteArray("file,wavelength\na.fits,") + wavelengthA + "\nb.fits,633nm\n"));
    }
    void simulate(const QString& name, int seed)
    {
        const wfs::test::ProgramRun run =
            cli({QStringLiteral("simulate"), QStringLiteral("--grid"), QStringLiteral("32"), QStringLiteral("--order"), QStringLiteral("2"),
                 QStringLiteral("--seed"), QString::number(seed), QStringLiteral("--out"), name});
        QVERIFY2(run.status == 0, run.err.constData());
    }

private slots:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        simulate(QStringLiteral("a.fits"), 1);
        simulate(QStringLiteral("b.fits"), 7);
        simulate(QStringLiteral("c.fits"), 11);
        m_settings = R"({"format": "wavefront-studio-session", "format_version": 1, "solver": {"max_iterations": 40}})";
        QVERIFY(wfs::test::writeFile(path(QStringLiteral("s.json")), m_settings));
        writeManifest("633nm");
        const wfs::test::ProgramRun first = batch();
        QVERIFY2(first.status == 0, first.err.constData());
        QVERIFY2(first.out.contains("running 2 of 2 inputs"), first.out.constData());
        const wfs::test::ProgramRun again = batch();
        QVERIFY2(again.out.contains("a: done earlier, skipped") && again.out.contains("b: done earlier, skipped"), again.out.constData());
        QVERIFY(!again.out.contains("running"));
    }

    // The manifest's row for a changes its wavelength: a is fitted again at the new wavelength, b is kept.
    void changedManifestOverride()
    {
        const QByteArray bBefore = readAll(path(QStringLiteral("out/b.json")));
        writeManifest("640nm");
        const wfs::test::ProgramRun run = batch();
        QVERIFY2(run.status == 0, run.err.constData());
        QVERIFY2(run.out.contains("a: run again: the settings changed since the result (the settings file or the input's manifest row)"),
                 run.out.constData());
        QVERIFY2(!run.out.contains("a: done earlier") && run.out.contains("b: done earlier, skipped"), run.out.constData());
        QVERIFY2(run.out.contains("running 1 of 2 inputs"), run.out.constData());
        WFS_VERIFY_CLOSE(wavelengthOf(path(QStringLiteral("out/a.json"))), 640e-9, 1e-12, 0.0);
        WFS_VERIFY_CLOSE(wavelengthOf(path(QStringLiteral("out/b.json"))), 633e-9, 1e-12, 0.0);
        QCOMPARE(readAll(path(QStringLiteral("out/b.json"))), bBefore); // untouched
        QVERIFY(batch().out.contains("a: done earlier, skipped"));      // and now it is the result of this row
    }

    // b's bytes change (another simulation written into it): b is fitted again on its new data.
    void changedInput()
    {
        const QByteArray rmsBefore = summaryValue(path(QStringLiteral("out/summary.csv")), "b", "rms_waves");
        QVERIFY(wfs::test::writeFile(path(QStringLiteral("b.fits")), readAll(path(QStringLiteral("c.fits")))));
        const wfs::test::ProgramRun run = batch();
        QVERIFY2(run.status == 0, run.err.constData());
        QVERIFY2(run.out.contains("b: run again: the input changed since the result"), run.out.constData());
        QVERIFY2(run.out.contains("a: done earlier, skipped") && !run.out.contains("b: done earlier"), run.out.constData());
        const QByteArray rmsAfter = summaryValue(path(QStringLiteral("out/summary.csv")), "b", "rms_waves");
        QVERIFY(!rmsAfter.isEmpty() && rmsAfter != rmsBefore);
    }

    // A setting in the settings file changes: both are fitted again, and the results say the new setting.
    void changedSetting()
    {
        QVERIFY(wfs::test::writeFile(path(QStringLiteral("s.json")), QByteArray(m_settings).replace("40", "41")));
        const wfs::test::ProgramRun run = batch();
        QVERIFY2(run.status == 0, run.err.constData());
        QCOMPARE(run.out.count("run again: the settings changed since the result"), 2);
        QVERIFY2(run.out.contains("running 2 of 2 inputs"), run.out.constData());
        QVERIFY(!run.out.contains("done earlier"));
    }

    // An incomplete result: a's without its termination (a run stopped before it ended), b's cut short mid-file. Both
    // are fitted again, the reason said, and both results are whole afterwards.
    void incompleteResults()
    {
        QJsonObject a = resultOf(path(QStringLiteral("out/a.json")));
        QVERIFY(a.contains(QStringLiteral("termination")));
        a.remove(QStringLiteral("termination"));
        QVERIFY(wfs::test::writeFile(path(QStringLiteral("out/a.json")), QJsonDocument(a).toJson()));
        const QByteArray b = readAll(path(QStringLiteral("out/b.json")));
        QVERIFY(wfs::test::writeFile(path(QStringLiteral("out/b.json")), b.left(b.size() * 2 / 3)));
        const wfs::test::ProgramRun run = batch();
        QVERIFY2(run.status == 0, run.err.constData());
        for (const char* name : {"a", "b"}) {
            QVERIFY2(run.out.contains(QByteArray(name) + ": run again: the earlier result is incomplete"), run.out.constData());
            QVERIFY2(!run.out.contains(QByteArray(name) + ": done earlier"), run.out.constData());
            const QJsonObject redone = resultOf(path(QStringLiteral("out/%1.json").arg(QLatin1String(name))));
            QVERIFY(redone.value(QStringLiteral("termination")).isString());
            QCOMPARE(summaryValue(path(QStringLiteral("out/summary.csv")), name, "status"), QByteArray("ok"));
        }
        QVERIFY2(run.out.contains("running 2 of 2 inputs"), run.out.constData());
        QCOMPARE(batch().out.count("done earlier, skipped"), 2);
    }
};

QTEST_GUILESS_MAIN(TestBatchResume)
#include "tst_batchresume.moc"
