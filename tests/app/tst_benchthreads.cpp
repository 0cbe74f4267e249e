// `wavefront-cli bench oof --threads 1,2`: a list of thread counts gives one row per count, in the order
// given, each naming its count; a single count still gives one row; bad counts (also out of 1..1024, as for one
// count) are usage errors (status 2).
// `bench pupil` gives a row per grid that describes the fit. Rows only: speed is never asserted.
#include "TestSupport.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QFileInfo>
#include <QTemporaryDir>
#include <QtTest>

#include <cmath>

class TestBenchThreads : public QObject {
    Q_OBJECT

private:
    using Run = wfs::test::ProgramRun;

    static Run cli(const QStringList& args) { return wfs::test::runProgram(QStringLiteral(WFS_CLI_PATH), args); }

    static QList<QJsonObject> rows(const QByteArray& out)
    {
        QList<QJsonObject> result;
        for (const QByteArray& line : out.trimmed().split('\n'))
            result << QJsonDocument::fromJson(line).object();
        return result;
    }

    static QStringList bench(const QStringList& extra)
    {
        return QStringList{QStringLiteral("bench"),     QStringLiteral("oof"), QStringLiteral("--grid"),        QStringLiteral("32"),
                           QStringLiteral("--order"),   QStringLiteral("2"),   QStringLiteral("--eval-repeat"), QStringLiteral("2"),
                           QStringLiteral("--no-solve")}
               + extra;
    }

private slots:
    void oneRowPerThreadCount()
    {
        const Run run = cli(bench({QStringLiteral("--threads"), QStringLiteral("1,2")}));
        QVERIFY2(run.status == 0, run.err.constData());
        const QList<QJsonObject> list = rows(run.out);
        QCOMPARE(list.size(), 2);
        QCOMPARE(list[0].value(QStringLiteral("threads")).toInt(), 1);
        QCOMPARE(list[1].value(QStringLiteral("threads")).toInt(), 2);
        for (const QJsonObject& row : list) {
            QCOMPARE(row.value(QStringLiteral("problem")).toString(), QStringLiteral("oof"));
            QCOMPARE(row.value(QStringLiteral("grid")).toInt(), 32);
            QVERIFY(row.value(QStringLiteral("eval_ms")).toDouble() > 0.0);
        }
        // Beside the one-thread row of its grid and order, a row says its speed-up and parallel efficiency
        // (ratios of the printed eval_ms, to the printing's 1e-9).
        const double one = list[0].value(QStringLiteral("eval_ms")).toDouble(), two = list[1].value(QStringLiteral("eval_ms")).toDouble();
        QVERIFY(qAbs(list[0].value(QStringLiteral("speedup")).toDouble() - 1.0) < 1e-9);
        QVERIFY(qAbs(list[1].value(QStringLiteral("speedup")).toDouble() - one / two) < 1e-9 * one / two);
        QVERIFY(qAbs(list[1].value(QStringLiteral("parallel_efficiency")).toDouble() - one / two / 2.0) < 1e-9 * one / two);
    }

    void listAfterEqualsSignAndPerGridOrder()
    {
        const Run run = cli(bench({QStringLiteral("--threads=2,1"), QStringLiteral("--order"), QStringLiteral("2,3")}));
        QVERIFY2(run.status == 0, run.err.constData());
        const QList<QJsonObject> list = rows(run.out);
        QCOMPARE(list.size(), 4); // orders 2 and 3, threads 2 then 1 for each
        const int expectedThreads[] = {2, 1, 2, 1};
        const int expectedOrder[] = {2, 2, 3, 3};
        for (int i = 0; i < 4; ++i) {
            QCOMPARE(list[i].value(QStringLiteral("threads")).toInt(), expectedThreads[i]);
            QCOMPARE(list[i].value(QStringLiteral("order")).toInt(), expectedOrder[i]);
            // The counts of one grid and order are measured side by side, so a two-thread row printed before its
            // one-thread row still has its speed-up, against that row's eval_ms.
            QVERIFY(list[i].contains(QStringLiteral("speedup")));
            const double one = list[i + (expectedThreads[i] == 2 ? 1 : 0)].value(QStringLiteral("eval_ms")).toDouble();
            const double own = list[i].value(QStringLiteral("eval_ms")).toDouble();
            QVERIFY(qAbs(list[i].value(QStringLiteral("speedup")).toDouble() - one / own) < 1e-9 * one / own);
        }
    }

    void singleCountStillOneRow()
    {
        const Run run = cli(bench({QStringLiteral("--threads"), QStringLiteral("2")}));
        QVERIFY2(run.status == 0, run.err.constData());
        const QList<QJsonObject> list = rows(run.out);
        QCOMPARE(list.size(), 1);
        QCOMPARE(list[0].value(QStringLiteral("threads")).toInt(), 2);
    }

    void badCountsAreUsageErrors()
    {
        for (const char* value : {"1,0", "1,x", "x,1", "0,2", "2,5000"}) {
            const Run run = cli(bench({QStringLiteral("--threads"), QString::fromLatin1(value)}));
            QVERIFY2(run.status == 2, value);
            QVERIFY2(run.out.isEmpty(), value);
            QVERIFY2(run.err.contains("threads"), run.err.constData());
        }
    }

    // `bench pupil`: one row per grid and thread count, the fit run to convergence, with the sizes that say what
    // was fitted (the preset's five planes; parameters = the zonal phase and amplitude per pupil sample plus the
    // Zernike and per-plane terms, so more than twice the samples). A problem it does not know is a usage error.
    void pupilRowsDescribeTheFit()
    {
        const Run run = cli({QStringLiteral("bench"), QStringLiteral("pupil"), QStringLiteral("--grid"), QStringLiteral("32,48"),
                             QStringLiteral("--threads"), QStringLiteral("1")});
        QVERIFY2(run.status == 0, run.err.constData());
        const QList<QJsonObject> list = rows(run.out);
        QCOMPARE(list.size(), 2);
        QCOMPARE(list[0].value(QStringLiteral("grid")).toInt(), 32);
        QCOMPARE(list[1].value(QStringLiteral("grid")).toInt(), 48);
        for (const QJsonObject& row : list) {
            QCOMPARE(row.value(QStringLiteral("problem")).toString(), QStringLiteral("pupil"));
            QCOMPARE(row.value(QStringLiteral("planes")).toInt(), 5);
            const int samples = row.value(QStringLiteral("pupil_samples")).toInt();
            QVERIFY(samples > 0);
            QVERIFY(row.value(QStringLiteral("params")).toInt() > 2 * samples);
            QCOMPARE(row.value(QStringLiteral("termination")).toString(), QStringLiteral("converged"));
            QVERIFY(row.value(QStringLiteral("converged")).toBool());
            QVERIFY(row.value(QStringLiteral("iterations")).toInt() > 0);
            QCOMPARE(row.value(QStringLiteral("chi2_per_plane")).toArray().size(), 5);
        }
        QVERIFY(list[1].value(QStringLiteral("pupil_samples")).toInt() > list[0].value(QStringLiteral("pupil_samples")).toInt());
        const Run unknown = cli({QStringLiteral("bench"), QStringLiteral("nonsense")});
        QCOMPARE(unknown.status, 2);
        QVERIFY2(unknown.err.contains("oof|pupil|vectorial|live"), unknown.err.constData());
    }

    // `bench pupil --session S --steps`: a user's stack and settings (here a simulated pupil-preset cube, fitted with a
    // zonal pupil, --fit-sampling and --regularization auto) timed as the recipe and as its two steps by hand. The
    // recipe's profile is the Zernike model's, so its scale is the first step's; it ends where the by-hand zonal fit
    // ends (cost within 1e-6 relative) and within the iteration limit, which bounds the whole run.
    void sessionRecipeAndItsSteps()
    {
        QTemporaryDir dir;
        const QString cube = dir.filePath(QStringLiteral("p.fits")), session = dir.filePath(QStringLiteral("s.json"));
        QCOMPARE(cli({QStringLiteral("simulate"), QStringLiteral("--preset"), QStringLiteral("pupil"), QStringLiteral("--grid"),
                      QStringLiteral("48"), QStringLiteral("--out"), cube})
                     .status,
                 0);
        const Run saved = cli({QStringLiteral("reconstruct"), cube, QStringLiteral("--pupil-phase"), QStringLiteral("both"),
                               QStringLiteral("--pupil-amplitude"), QStringLiteral("zonal"), QStringLiteral("--regularization"),
                               QStringLiteral("auto"), QStringLiteral("--fit-sampling"), QStringLiteral("--max-iterations"),
                               QStringLiteral("1"), QStringLiteral("--save-session"), session});
        QVERIFY2(QFileInfo::exists(session), saved.err.constData());
        const Run run =
            cli({QStringLiteral("bench"), QStringLiteral("pupil"), QStringLiteral("--session"), session, QStringLiteral("--steps"),
                 QStringLiteral("--max-iterations"), QStringLiteral("3000"), QStringLiteral("--threads"), QStringLiteral("1")});
        QVERIFY2(run.status == 0, run.err.constData());
        const QList<QJsonObject> list = rows(run.out);
        QCOMPARE(list.size(), 3);
        QCOMPARE(list[0].value(QStringLiteral("run")).toString(), QStringLiteral("recipe"));
        QCOMPARE(list[1].value(QStringLiteral("run")).toString(), QStringLiteral("zernike profile"));
        QCOMPARE(list[2].value(QStringLiteral("run")).toString(), QStringLiteral("zonal at the profiled scale"));
        for (const QJsonObject& row : list) {
            QCOMPARE(row.value(QStringLiteral("case")).toString(), QStringLiteral("s"));
            QVERIFY(row.value(QStringLiteral("converged")).toBool());
            QVERIFY(row.value(QStringLiteral("iterations")).toInt() > 0 && row.value(QStringLiteral("iterations")).toInt() <= 3000);
            QCOMPARE(row.value(QStringLiteral("chi2_per_plane")).toArray().size(), 5);
        }
        QCOMPARE(list[0].value(QStringLiteral("aperture_scale")).toDouble(), list[1].value(QStringLiteral("aperture_scale")).toDouble());
        QVERIFY(list[1].value(QStringLiteral("params")).toInt() < list[0].value(QStringLiteral("params")).toInt());
        QVERIFY(list[1].value(QStringLiteral("weight")).isNull()); // the Zernike model has no smoothness weight
        const double recipe = list[0].value(QStringLiteral("cost")).toDouble(), byHand = list[2].value(QStringLiteral("cost")).toDouble();
        QVERIFY2(std::abs(recipe - byHand) <= 1e-6 * byHand,
                 qPrintable(QStringLiteral("%1 against %2").arg(recipe, 0, 'g', 12).arg(byHand, 0, 'g', 12)));
    }

    void helpDocumentsTheList()
    {
        const Run run = cli({QStringLiteral("bench"), QStringLiteral("oof"), QStringLiteral("--help")});
        QCOMPARE(run.status, 0);
        QVERIFY2(run.out.simplified().contains("--threads take comma-separated lists"), run.out.constData());
    }
};

QTEST_GUILESS_MAIN(TestBenchThreads)
#include "tst_benchthreads.moc"
