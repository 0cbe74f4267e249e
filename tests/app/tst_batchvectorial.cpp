// wavefront-cli batch with the vectorial model (issue 24 item 6, "batch"): two simulated vectorial stacks (the
// preset's NA 1.4 oil objective, a bead 3 um deep in water) fitted by batch with vectorial settings; each result says
// the vectorial model with the settings' sample, converged, and recovers the stack's injected terms.
#include "TestSupport.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>

using namespace wfs::test;

namespace {

QJsonObject readJson(const QString& path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? QJsonDocument::fromJson(f.readAll()).object() : QJsonObject();
}

// Noll index -> value_waves of a result's or a truth file's "coefficients".
QMap<int, double> coefficients(const QJsonObject& json)
{
    QMap<int, double> out;
    for (const QJsonValue& c : json.value(QStringLiteral("coefficients")).toArray())
        out[c.toObject().value(QStringLiteral("index")).toInt()] = c.toObject().value(QStringLiteral("value_waves")).toDouble();
    return out;
}

} // namespace

class TestBatchVectorial : public QObject {
    Q_OBJECT

private slots:
    void batchFitsVectorialStacks()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString cli = QStringLiteral(WFS_CLI_PATH);
        for (const char* name : {"bead_1", "bead_2"}) {
            const ProgramRun sim = runProgramIn(cli,
                                                {QStringLiteral("simulate"), QStringLiteral("--preset"), QStringLiteral("vectorial"),
                                                 QStringLiteral("--seed"), QString::fromLatin1(name).right(1), QStringLiteral("--out"),
                                                 dir.filePath(QString::fromLatin1(name) + ".fits")},
                                                dir.path());
            QVERIFY2(sim.status == 0, sim.err.constData());
        }
        QVERIFY(writeFile(dir.filePath(QStringLiteral("vectorial.json")),
                          R"({"format": "wavefront-studio-session", "format_version": 1, "model": {"order": 4, "imaging_model": "vectorial",
                              "sample_index": 1.33, "emitter_depth_m": 3e-6}, "solver": {"threads": 1}})"));
        const ProgramRun batch =
            runProgramIn(cli,
                         {QStringLiteral("batch"), dir.filePath(QStringLiteral("vectorial.json")), QStringLiteral("--out"),
                          dir.filePath(QStringLiteral("out")), QStringLiteral("--jobs"), QStringLiteral("2"),
                          dir.filePath(QStringLiteral("bead_1.fits")), dir.filePath(QStringLiteral("bead_2.fits"))},
                         dir.path());
        QVERIFY2(batch.status == 0, batch.err.constData());
        QVERIFY2(batch.out.contains("(2 of 2 inputs ok)"), batch.out.constData());

        for (const char* name : {"bead_1", "bead_2"}) {
            const QJsonObject result = readJson(dir.filePath(QStringLiteral("out/%1.json").arg(QLatin1String(name))));
            QVERIFY2(!result.isEmpty(), name);
            QCOMPARE(result.value(QStringLiteral("termination")).toString(), QStringLiteral("converged"));
            const QJsonObject model =
                result.value(QStringLiteral("pupil_function")).toObject().value(QStringLiteral("imaging_model")).toObject();
            QCOMPARE(model.value(QStringLiteral("model")).toString(), QStringLiteral("vectorial"));
            QCOMPARE(model.value(QStringLiteral("sample_index")).toDouble(), 1.33);
            QCOMPARE(model.value(QStringLiteral("emitter_depth_start_m")).toDouble(), 3e-6);
            QCOMPARE(model.value(QStringLiteral("numerical_aperture")).toDouble(), 1.4); // from the FITS file's header
            // The injected terms to 0.005 wave (the preset's own tolerance): the vectorial settings reached the worker.
            const QMap<int, double> fitted = coefficients(result);
            const QMap<int, double> truth = coefficients(readJson(dir.filePath(QStringLiteral("%1.truth.json").arg(QLatin1String(name)))));
            QVERIFY(!truth.isEmpty());
            for (auto t = truth.begin(); t != truth.end(); ++t)
                QVERIFY2(fitted.contains(t.key()) && std::abs(fitted.value(t.key()) - t.value()) < 0.005,
                         qPrintable(QStringLiteral("%1 Noll %2: fitted %3, truth %4")
                                        .arg(QLatin1String(name))
                                        .arg(t.key())
                                        .arg(fitted.value(t.key()))
                                        .arg(t.value())));
        }
    }
};

QTEST_MAIN(TestBatchVectorial)
#include "tst_batchvectorial.moc"
