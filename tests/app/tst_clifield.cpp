// wavefront-cli field, simulate --preset field, bench field and psf --field-model (issue 43): the outputs a field run
// writes, the PSF at a field position from them, and the exit statuses of what cannot be done.
#include "TestSupport.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>

#include <cmath>

class TestCliField : public QObject {
    Q_OBJECT

private:
    using Run = wfs::test::ProgramRun;
    static Run cli(const QStringList& args) { return wfs::test::runProgram(QStringLiteral(WFS_CLI_PATH), args); }
    static QJsonObject readJson(const QString& path)
    {
        QFile file(path);
        return file.open(QIODevice::ReadOnly) ? QJsonDocument::fromJson(file.readAll()).object() : QJsonObject();
    }

private slots:
    void simulateFitAndAskThePsfAnywhere()
    {
        QTemporaryDir dir;
        const QString stack = dir.filePath(QStringLiteral("slide.fits")), out = dir.filePath(QStringLiteral("field"));
        const Run sim = cli({QStringLiteral("simulate"), QStringLiteral("--preset"), QStringLiteral("field"), QStringLiteral("--beads"),
                             QStringLiteral("12"), QStringLiteral("--out"), stack});
        QVERIFY2(sim.status == 0, sim.err.constData());
        QVERIFY(QFile::exists(dir.filePath(QStringLiteral("slide.truth.json"))));
        const QStringList field = {QStringLiteral("field"), stack, QStringLiteral("--objective"), QStringLiteral("poisson"),
                                   QStringLiteral("--out"), out};
        const Run run = cli(field);
        QVERIFY2(run.status == 0, run.err.constData());
        QVERIFY(run.out.contains("beads found"));
        const QJsonObject json = readJson(out + QStringLiteral("/field.json"));
        QCOMPARE(json[QStringLiteral("format")].toString(), QStringLiteral("wavefront-studio-field"));
        const QJsonArray beads = json[QStringLiteral("beads")].toArray();
        int ok = 0;
        for (const QJsonValue& b : beads)
            ok += b.toObject()[QStringLiteral("status")].toString() == QLatin1String("ok");
        QVERIFY2(ok >= 11, qPrintable(QStringLiteral("%1 beads ok of 12 singles").arg(ok)));
        QFile csv(out + QStringLiteral("/beads.csv"));
        QVERIFY(csv.open(QIODevice::ReadOnly));
        QCOMPARE(csv.readAll().trimmed().split('\n').size(), beads.size() + 1);
        QVERIFY(QFile::exists(out + QStringLiteral("/field-maps.fits")));
        QVERIFY(!QDir(out).entryList({QStringLiteral("field-map-noll-*.png")}).isEmpty());
        // Not replaced without --force.
        const Run again = cli(field);
        QCOMPARE(again.status, 1);
        QVERIFY(again.err.contains("--force"));
        // The PSF at a field position from the field model.
        const QString psf = dir.filePath(QStringLiteral("psf.fits"));
        const Run at = cli({QStringLiteral("psf"), QStringLiteral("--wavelength"), QStringLiteral("600nm"), QStringLiteral("--na"),
                            QStringLiteral("0.9"), QStringLiteral("--pixel-scale"), QStringLiteral("160nm"), QStringLiteral("--size"),
                            QStringLiteral("32"), QStringLiteral("--field-model"), out + QStringLiteral("/field.json"),
                            QStringLiteral("--at"), QStringLiteral("400,100"), QStringLiteral("--out"), psf});
        QVERIFY2(at.status == 0, at.err.constData());
        QVERIFY(QFile::exists(psf));
    }

    void partsCombinedGiveTheOneRun()
    {
        // A Slurm array's recipe: each task fits part K of N of the beads, then --combine describes the field; the model
        // equals one run's.
        QTemporaryDir dir;
        const QString stack = dir.filePath(QStringLiteral("slide.fits"));
        QCOMPARE(cli({QStringLiteral("simulate"), QStringLiteral("--preset"), QStringLiteral("field"), QStringLiteral("--beads"),
                      QStringLiteral("8"), QStringLiteral("--out"), stack})
                     .status,
                 0);
        const QString parts = dir.filePath(QStringLiteral("parts")), one = dir.filePath(QStringLiteral("one"));
        for (const QString& k : {QStringLiteral("0/2"), QStringLiteral("1/2")}) {
            const Run part = cli({QStringLiteral("field"), stack, QStringLiteral("--part"), k, QStringLiteral("--out"), parts});
            QVERIFY2(part.status == 0, part.err.constData());
        }
        const Run combined = cli({QStringLiteral("field"), stack, QStringLiteral("--combine"), QStringLiteral("--out"), parts});
        QVERIFY2(combined.status == 0, combined.err.constData());
        const Run whole = cli({QStringLiteral("field"), stack, QStringLiteral("--out"), one});
        QVERIFY2(whole.status == 0, whole.err.constData());
        const QJsonArray a =
            readJson(parts + QStringLiteral("/field.json"))[QStringLiteral("field_model")].toObject()[QStringLiteral("terms")].toArray();
        const QJsonArray b =
            readJson(one + QStringLiteral("/field.json"))[QStringLiteral("field_model")].toObject()[QStringLiteral("terms")].toArray();
        QVERIFY(!a.isEmpty());
        QCOMPARE(a.size(), b.size());
        for (qsizetype t = 0; t < a.size(); ++t) {
            const QJsonArray ca = a[t].toObject()[QStringLiteral("coefficients_waves")].toArray();
            const QJsonArray cb = b[t].toObject()[QStringLiteral("coefficients_waves")].toArray();
            QCOMPARE(ca.size(), cb.size());
            for (qsizetype k = 0; k < ca.size(); ++k)
                QVERIFY(std::abs(ca[k].toDouble() - cb[k].toDouble()) < 1e-9);
        }
        // A part missing: --combine says which beads have no fit.
        QVERIFY(QFile::remove(parts + QStringLiteral("/part-1-of-2.json")));
        const Run incomplete =
            cli({QStringLiteral("field"), stack, QStringLiteral("--combine"), QStringLiteral("--force"), QStringLiteral("--out"), parts});
        QCOMPARE(incomplete.status, 1);
        QVERIFY2(incomplete.err.contains("no fit in the parts"), incomplete.err.constData());
    }

    void saysWhatItCannotDo()
    {
        QTemporaryDir dir;
        // No bead in the stack: the table is written, the run failed (no model), and it says why.
        const QString flat = dir.filePath(QStringLiteral("flat.fits"));
        QVERIFY(cli({QStringLiteral("simulate"), QStringLiteral("--preset"), QStringLiteral("field"), QStringLiteral("--beads"),
                     QStringLiteral("0"), QStringLiteral("--out"), flat})
                    .status
                == 0);
        // The planted doublets, saturated and edge beads are all set aside: still no model.
        const Run none = cli({QStringLiteral("field"), flat, QStringLiteral("--out"), dir.filePath(QStringLiteral("out"))});
        QCOMPARE(none.status, 1);
        QVERIFY2(none.out.contains("no field model"), none.out.constData());
        QVERIFY(QFile::exists(dir.filePath(QStringLiteral("out/beads.csv"))));
        // Usage errors: status 2, one line naming the option.
        const Run noOut = cli({QStringLiteral("field"), flat});
        QCOMPARE(noOut.status, 2);
        QVERIFY(noOut.err.contains("--out"));
        const Run oddCrop = cli({QStringLiteral("field"), flat, QStringLiteral("--crop"), QStringLiteral("31"), QStringLiteral("--out"),
                                 dir.filePath(QStringLiteral("o2"))});
        QCOMPARE(oddCrop.status, 2);
        const Run atAlone = cli({QStringLiteral("psf"), QStringLiteral("--wavelength"), QStringLiteral("600nm"), QStringLiteral("--na"),
                                 QStringLiteral("0.9"), QStringLiteral("--pixel-scale"), QStringLiteral("160nm"), QStringLiteral("--at"),
                                 QStringLiteral("1,2"), QStringLiteral("--out"), dir.filePath(QStringLiteral("p.fits"))});
        QCOMPARE(atAlone.status, 2);
        QVERIFY(atAlone.err.contains("--field-model"));
        const Run gridForField =
            cli({QStringLiteral("simulate"), QStringLiteral("--preset"), QStringLiteral("field"), QStringLiteral("--grid"),
                 QStringLiteral("64"), QStringLiteral("--out"), dir.filePath(QStringLiteral("g.fits"))});
        QCOMPARE(gridForField.status, 2);
    }

    void benchPrintsOneRowPerRun()
    {
        const Run bench = cli({QStringLiteral("bench"), QStringLiteral("field"), QStringLiteral("--beads"), QStringLiteral("4,8"),
                               QStringLiteral("--order"), QStringLiteral("4"), QStringLiteral("--jobs"), QStringLiteral("1")});
        QVERIFY2(bench.status == 0, bench.err.constData());
        const QList<QByteArray> rows = bench.out.trimmed().split('\n');
        QCOMPARE(rows.size(), 2);
        for (const QByteArray& row : rows) {
            const QJsonObject o = QJsonDocument::fromJson(row).object();
            QCOMPARE(o[QStringLiteral("benchmark")].toString(), QStringLiteral("field"));
            QVERIFY(o[QStringLiteral("beads_fitted")].toInt() >= o[QStringLiteral("beads_simulated")].toInt() - 1);
            QVERIFY(o[QStringLiteral("seconds")].toDouble() > 0.0);
        }
    }
};

QTEST_GUILESS_MAIN(TestCliField)
#include "tst_clifield.moc"
