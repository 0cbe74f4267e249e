// core's batch logic without processes (engine/Batch.h): manifests (quoting, comments, CRLF, positions,
// overrides), list files, names, what stops a batch, which results count as done, the summary's CSV.
#include "TestSupport.h"

#include "engine/Batch.h"
#include "io/ResultJson.h"

#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <QTemporaryDir>

using namespace wfs;

namespace {
void write(const QString& path, const QByteArray& bytes)
{
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
    f.write(bytes);
}
} // namespace

class TestBatchInputs : public QObject {
    Q_OBJECT

private slots:
    void manifestRows()
    {
        QTemporaryDir dir;
        write(dir.filePath(QStringLiteral("m.csv")), "# a comment\r\n"
                                                     "file,name,x,y,defocus,wavelength\r\n"
                                                     "\r\n"
                                                     "a.fits,,1,2,\"-1w,0,1w\",\r\n"
                                                     "sub/b.tif,bee,-0.5,3e-3,,600nm\r\n"
                                                     "/abs/c.fits.gz,,nope,1,,\r\n"
                                                     ",empty,0,0,,\r\n");
        const std::vector<BatchInput> in = resolveBatchInputs({dir.filePath(QStringLiteral("m.csv")).toStdString()});
        QCOMPARE(in.size(), size_t(4));
        QCOMPARE(QString::fromStdString(in[0].name), QStringLiteral("a"));
        QCOMPARE(QString::fromStdString(in[0].path), dir.filePath(QStringLiteral("a.fits"))); // relative to the manifest
        QCOMPARE(*in[0].fieldX, 1.0);
        QCOMPARE(*in[0].fieldY, 2.0);
        QCOMPARE(QString::fromStdString(in[0].overrides.at("defocus")), QStringLiteral("-1w,0,1w")); // the quoted commas kept
        QVERIFY(!in[0].overrides.count("wavelength"));
        QCOMPARE(QString::fromStdString(in[1].name), QStringLiteral("bee"));
        QCOMPARE(*in[1].fieldY, 3e-3);
        QCOMPARE(QString::fromStdString(in[1].overrides.at("wavelength")), QStringLiteral("600nm"));
        QCOMPARE(QString::fromStdString(in[2].name), QStringLiteral("c")); // .fits.gz stripped
        QCOMPARE(QString::fromStdString(in[2].path), QStringLiteral("/abs/c.fits.gz"));
        QVERIFY2(QString::fromStdString(in[2].error).contains(QLatin1String("m.csv line 6: x 'nope' is not a number")),
                 in[2].error.c_str());
        QVERIFY2(QString::fromStdString(in[3].error).contains(QLatin1String("no file given")), in[3].error.c_str());
        QCOMPARE(QString::fromStdString(in[1].source), QStringLiteral("m.csv line 5"));

        // Through the JSON a worker gets, and back.
        const BatchInput back = batchInputFromJson(batchInputToJson(in[1]));
        QCOMPARE(back.name, in[1].name);
        QCOMPARE(back.path, in[1].path);
        QCOMPARE(back.fieldX, in[1].fieldX);
        QCOMPARE(back.overrides, in[1].overrides);
    }

    void listsGlobsAndRefusals()
    {
        QTemporaryDir dir;
        QDir().mkpath(dir.filePath(QStringLiteral("d")));
        for (const char* name : {"d/s2.fits", "d/s1.fits", "d/other.tif"})
            write(dir.filePath(QLatin1String(name)), "x");
        std::vector<BatchInput> in = resolveBatchInputs({dir.filePath(QStringLiteral("d/s*.fits")).toStdString()});
        QCOMPARE(in.size(), size_t(2));
        QCOMPARE(QString::fromStdString(in[0].name), QStringLiteral("s1")); // sorted
        QCOMPARE(QString::fromStdString(in[1].name), QStringLiteral("s2"));

        write(dir.filePath(QStringLiteral("list.txt")), "# beads\nd/s1.fits\n\n  d/other.tif  \n");
        in = resolveBatchInputs({dir.filePath(QStringLiteral("list.txt")).toStdString()});
        QCOMPARE(in.size(), size_t(2));
        QCOMPARE(QString::fromStdString(in[1].path), dir.filePath(QStringLiteral("d/other.tif")));
        QCOMPARE(QString::fromStdString(in[1].source), QStringLiteral("list.txt line 4"));

        auto refused = [](const std::vector<std::string>& args, const char* expected) {
            try {
                resolveBatchInputs(args);
            } catch (const BatchError& e) {
                return QString::fromUtf8(e.what()).contains(QLatin1String(expected));
            }
            return false;
        };
        QVERIFY(refused({dir.filePath(QStringLiteral("d/none*.fits")).toStdString()}, "no file matches"));
        QVERIFY(refused({dir.filePath(QStringLiteral("d/s1.fits")).toStdString(), dir.filePath(QStringLiteral("d/s1.fits")).toStdString()},
                        "two inputs have the name 's1'"));
        QVERIFY(refused({dir.filePath(QStringLiteral("missing.csv")).toStdString()}, "missing.csv"));
        write(dir.filePath(QStringLiteral("bad.csv")), "file,colour\na.fits,red\n");
        QVERIFY(refused({dir.filePath(QStringLiteral("bad.csv")).toStdString()}, "unknown column 'colour'"));
        write(dir.filePath(QStringLiteral("nofile.csv")), "name,x,y\na,1,2\n");
        QVERIFY(refused({dir.filePath(QStringLiteral("nofile.csv")).toStdString()}, "no 'file' column"));
        write(dir.filePath(QStringLiteral("onlyx.csv")), "file,x\na.fits,1\n");
        QVERIFY(refused({dir.filePath(QStringLiteral("onlyx.csv")).toStdString()}, "both an 'x' and a 'y' column"));
        write(dir.filePath(QStringLiteral("quote.csv")), "file\n\"a.fits\n");
        QVERIFY(refused({dir.filePath(QStringLiteral("quote.csv")).toStdString()}, "not closed"));
        QVERIFY(refused({}, "no inputs"));
    }

    // A result counts as done only when complete; the summary reads it through the result format's readers.
    void doneResultsAndSummary()
    {
        QTemporaryDir dir;
        FitResult r;
        r.wavelength = 633e-9;
        r.coefficients.push_back({});
        r.coefficients.back().index = 4;
        r.coefficients.back().mode = {2, 0};
        r.coefficients.back().waves = 0.125;
        r.rmsWaves = 0.25;
        r.strehl = 0.5;
        r.solver.termination = Termination::Converged;
        r.solver.seconds = 1.5;
        PlaneResult plane;
        plane.reducedChiSquare = 1.0;
        r.planes = {plane, plane};
        r.planes[1].reducedChiSquare = 3.0;
        const QByteArray json = QJsonDocument(resultToJson(r)).toJson();

        const QString data = dir.filePath(QStringLiteral("x.fits"));
        write(data, "x");
        BatchInput done{"done", data.toStdString(), 1.0, 2.0, {}, "test", {}};
        BatchInput cut{"cut", data.toStdString(), {}, {}, {}, "test", {}};
        BatchInput failed{"failed", data.toStdString(), {}, {}, {}, "test", {}};
        BatchInput lost{"lost", dir.filePath(QStringLiteral("lost.fits")).toStdString(), {}, {}, {}, "m.csv line 3", {}};
        const std::string out = dir.path().toStdString();
        write(QString::fromStdString(batchResultPath(out, done)), json);
        write(QString::fromStdString(batchResultPath(out, cut)), json.left(json.size() / 2));
        write(QString::fromStdString(batchLogPath(out, failed)), "note: loading\nwavefront-cli batch: error: x.fits: bad, very bad\n");
        QVERIFY(isBatchInputDone(done, out));
        QVERIFY(!isBatchInputDone(cut, out));
        QVERIFY(!isBatchInputDone(failed, out));

        const std::vector<BatchRow> rows = batchRows({done, cut, failed, lost}, out);
        QCOMPARE(QString::fromStdString(rows[0].status), QStringLiteral("ok"));
        QCOMPARE(rows[0].reducedChiSquare, 2.0); // mean over planes
        QCOMPARE(QString::fromStdString(rows[1].status), QStringLiteral("not-run"));
        QCOMPARE(QString::fromStdString(rows[2].status), QStringLiteral("failed"));
        QCOMPARE(QString::fromStdString(rows[2].error), QStringLiteral("x.fits: bad, very bad"));
        QCOMPARE(QString::fromStdString(rows[3].status), QStringLiteral("failed"));
        QVERIFY2(QString::fromStdString(rows[3].error).contains(QLatin1String("lost.fits: input file not found (m.csv line 3)")),
                 rows[3].error.c_str());

        const QList<QByteArray> lines = batchSummaryCsv(rows).trimmed().split('\n');
        QCOMPARE(lines.size(), 5);
        QCOMPARE(lines[0],
                 QByteArray("name,file,field_x,field_y,status,termination,rms_waves,strehl,reduced_chi_square,noll_4_waves,seconds,error"));
        QCOMPARE(lines[1], "done," + data.toUtf8() + ",1,2,ok,converged,0.25,0.5,2,0.125,1.5,");
        QVERIFY2(lines[3].endsWith(",failed,,,,,,,\"x.fits: bad, very bad\""), lines[3].constData()); // quoted: the reason has a comma
    }

    // What a result was made from decides its reuse (issue 47): the same identity is reused; another manifest override
    // (the row's wavelength) is a changed setting; a result without its termination is not complete.
    void resumeChecksOverridesAndTermination()
    {
        QTemporaryDir dir;
        const QString data = dir.filePath(QStringLiteral("x.fits"));
        write(data, "x");
        write(dir.filePath(QStringLiteral("s.json")), "{}");
        const std::string settings = dir.filePath(QStringLiteral("s.json")).toStdString();
        BatchInput in{"x", data.toStdString(), {}, {}, {{"wavelength", "633nm"}}, "m.csv line 2", {}};
        FitResult r;
        r.wavelength = 633e-9;
        r.coefficients.push_back({});
        r.coefficients.back().index = 4;
        r.coefficients.back().mode = {2, 0};
        r.solver.termination = Termination::Converged;
        QJsonObject json = resultToJson(r);
        json.insert(QStringLiteral("batch_input"), batchInputIdentity(in, settings));
        QCOMPARE(QString::fromStdString(staleResultReason(json, batchInputIdentity(in, settings))), QString());
        BatchInput changed = in;
        changed.overrides["wavelength"] = "640nm";
        QVERIFY2(
            QString::fromStdString(staleResultReason(json, batchInputIdentity(changed, settings))).contains(QLatin1String("manifest row")),
            staleResultReason(json, batchInputIdentity(changed, settings)).c_str());
        changed.overrides.erase("wavelength");
        QVERIFY(!staleResultReason(json, batchInputIdentity(changed, settings)).empty()); // an override taken away
        const std::string out = dir.path().toStdString();
        write(QString::fromStdString(batchResultPath(out, in)), QJsonDocument(json).toJson());
        QVERIFY(isBatchInputDone(in, out));
        json.remove(QStringLiteral("termination"));
        write(QString::fromStdString(batchResultPath(out, in)), QJsonDocument(json).toJson());
        QVERIFY(!isBatchInputDone(in, out));
        QVERIFY(!readCompleteResult(batchResultPath(out, in)).has_value());
    }

    // The jobs rule (issue 29): jobs x threads per fit never above the hardware threads unless asked, and never
    // more workers than inputs waiting.
    void jobsUseEveryCoreOnce()
    {
        QCOMPARE(batchJobs(0, 1, 16, 100).jobs, 16);
        QCOMPARE(batchJobs(0, 4, 16, 100).jobs, 4);
        QCOMPARE(batchJobs(0, 3, 16, 100).jobs, 5); // 15 of 16 threads: a sixth fit would share cores
        QCOMPARE(batchJobs(0, 1, 16, 3).jobs, 3);
        QCOMPARE(batchJobs(0, 32, 16, 5).jobs, 1);
        QVERIFY(batchJobs(0, 1, 16, 100).warning.empty());
        QCOMPARE(batchJobs(4, 4, 16, 100).jobs, 4);
        QVERIFY(batchJobs(4, 4, 16, 100).warning.empty());
        const BatchJobs over = batchJobs(8, 4, 16, 100);
        QCOMPARE(over.jobs, 8); // what was asked for, said
        QVERIFY2(over.warning.find("8 jobs x 4 thread(s) per fit = 32 threads on 16 hardware threads") != std::string::npos,
                 over.warning.c_str());
        QVERIFY2(over.warning.find("--jobs 4") != std::string::npos, over.warning.c_str());
    }
};

QTEST_GUILESS_MAIN(TestBatchInputs)
#include "tst_batchinputs.moc"
