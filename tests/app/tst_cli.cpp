// wavefront-cli against the command-line contract: exit statuses, sub-commands, JSON keys, and a
// simulate -> reconstruct round trip through a FITS file.
#include "ExportChecks.h"
#include "TestSupport.h"

#include <QFile>
#include <QtEndian>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QDir>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>

#include <sys/stat.h>

class TestCli : public QObject {
    Q_OBJECT

private:
    using Run = wfs::test::ProgramRun;

    static Run cli(const QStringList& args, const QProcessEnvironment& env = QProcessEnvironment::systemEnvironment())
    {
        return start(QStringLiteral(WFS_CLI_PATH), args, env);
    }

    static Run start(const QString& program, const QStringList& args,
                     const QProcessEnvironment& env = QProcessEnvironment::systemEnvironment())
    {
        return wfs::test::runProgram(program, args, env);
    }

    static QJsonObject readJson(const QString& path)
    {
        QFile file(path);
        if (!file.open(QIODevice::ReadOnly))
            return {};
        return QJsonDocument::fromJson(file.readAll()).object();
    }

private slots:
    void exitStatuses()
    {
        QCOMPARE(cli({QStringLiteral("--help")}).status, 0);
        QCOMPARE(cli({QStringLiteral("reconstruct"), QStringLiteral("--help")}).status, 0);
        QCOMPARE(cli({QStringLiteral("bench"), QStringLiteral("--help")}).status, 0);
        QCOMPARE(cli({QStringLiteral("no-such-command")}).status, 2);
        const Run bogus = cli({QStringLiteral("reconstruct"), QStringLiteral("--bogus")});
        QCOMPARE(bogus.status, 2);
        QCOMPARE(bogus.err.count('\n'), 1); // one clear line
        QCOMPARE(cli({QStringLiteral("reconstruct")}).status, 2);
        QCOMPARE(cli({QStringLiteral("reconstruct"), QStringLiteral("--preset"), QStringLiteral("demo"), QStringLiteral("--order"),
                      QStringLiteral("16")})
                     .status,
                 2);
        QCOMPARE(cli({QStringLiteral("bench"), QStringLiteral("oof"), QStringLiteral("--grid"), QStringLiteral("x")}).status, 2);
    }

    void gpuWithoutDeviceFailsClearly()
    {
        const Run run = cli({QStringLiteral("reconstruct"), QStringLiteral("--preset"), QStringLiteral("demo"), QStringLiteral("--grid"),
                             QStringLiteral("64"), QStringLiteral("--backend"), QStringLiteral("gpu"), QStringLiteral("--quiet")});
        if (run.status == 0)
            QSKIP("a GPU backend ran here");
        QCOMPARE(run.status, 1);
        QVERIFY2(run.err.contains("GPU"), run.err.constData());
    }

    void simulateThenReconstruct()
    {
        QTemporaryDir dir;
        const QString fits = dir.filePath(QStringLiteral("demo.fits"));
        const QStringList simulate = {QStringLiteral("simulate"), QStringLiteral("--preset"), QStringLiteral("demo"),
                                      QStringLiteral("--grid"),   QStringLiteral("64"),       QStringLiteral("--seed"),
                                      QStringLiteral("3"),        QStringLiteral("--out"),    fits};
        const Run sim = cli(simulate);
        QVERIFY2(sim.status == 0, sim.err.constData());
        QVERIFY(QFile::exists(dir.filePath(QStringLiteral("demo.truth.json"))));
        const Run again = cli(simulate);
        QCOMPARE(again.status, 1); // no silent overwrite
        QVERIFY(again.err.contains("--force"));

        const QString json = dir.filePath(QStringLiteral("result.json"));
        const QString csv = dir.filePath(QStringLiteral("coefficients.csv"));
        const QString phase = dir.filePath(QStringLiteral("phase.fits"));
        const Run rec = cli({QStringLiteral("reconstruct"), QStringLiteral("--input"), fits, QStringLiteral("--json"), json,
                             QStringLiteral("--csv"), csv, QStringLiteral("--phase-out"), phase, QStringLiteral("--quiet")});
        QVERIFY2(rec.status == 0, rec.err.constData());
        QVERIFY(rec.out.contains("Zernike coefficients"));
        const QJsonObject result = readJson(json);
        for (const char* key : {"convention", "coefficients", "rms_waves", "pv_waves", "strehl", "final_cost", "iterations",
                                "cost_evaluations", "gradient_evaluations", "seconds", "backend", "device", "precision", "termination"})
            QVERIFY2(result.contains(QLatin1String(key)), key);
        QCOMPARE(result.value(QStringLiteral("convention")).toObject().value(QStringLiteral("ordering")).toString(),
                 QStringLiteral("noll"));
        // Issue 14: the result passes resources/schema/result.schema.json (units in every key).
        const wfs::test::ToolResult schema = wfs::test::validateResultJson({json});
        if (!schema.missing)
            QVERIFY2(schema.ok, qPrintable(schema.output));
        const QJsonObject truth = readJson(dir.filePath(QStringLiteral("demo.truth.json")));
        for (const QJsonValue& t : truth.value(QStringLiteral("coefficients")).toArray()) {
            const int index = t.toObject().value(QStringLiteral("index")).toInt();
            for (const QJsonValue& c : result.value(QStringLiteral("coefficients")).toArray())
                if (c.toObject().value(QStringLiteral("index")).toInt() == index)
                    WFS_VERIFY_CLOSE(c.toObject().value(QStringLiteral("value_waves")).toDouble(),
                                     t.toObject().value(QStringLiteral("value_waves")).toDouble(), 0.0, 0.01);
        }
        QVERIFY(QFile::exists(csv));
        QVERIFY(QFile::exists(phase));
    }

    void unreadableInputNamesTheFile()
    {
        QTemporaryDir dir;
        const QString bad = dir.filePath(QStringLiteral("bad.fits"));
        QFile file(bad);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write("SIMPLE  =  garbage");
        file.close();
        const Run run = cli({QStringLiteral("reconstruct"), QStringLiteral("--input"), bad, QStringLiteral("--wavelength"),
                             QStringLiteral("633nm"), QStringLiteral("--sampling"), QStringLiteral("2")});
        QCOMPARE(run.status, 1);
        QVERIFY2(run.err.contains("bad.fits"), run.err.constData());
    }

    // A measured microscope stack (16-bit TIFF) with its z steps, through the data layer: planes picked
    // from the stack, defocus from the z step, centring and crop; every export; then the saved session
    // alone reproduces the result.
    void tiffStackSessionAndExports()
    {
        QTemporaryDir dir;
        const QString json = dir.filePath(QStringLiteral("r.json")), png = dir.filePath(QStringLiteral("phase.png"));
        const QString session = dir.filePath(QStringLiteral("s.json")), residual = dir.filePath(QStringLiteral("res.fits"));
        const QStringList run = {QStringLiteral("reconstruct"),
                                 QStringLiteral("--input"),
                                 wfs::test::dataPath(QStringLiteral("bead_zstack_BIL113.tif")),
                                 QStringLiteral("--wavelength"),
                                 QStringLiteral("605nm"),
                                 QStringLiteral("--na"),
                                 QStringLiteral("1.1"),
                                 QStringLiteral("--immersion"),
                                 QStringLiteral("1.33"),
                                 QStringLiteral("--pixel-scale"),
                                 QStringLiteral("0.1um"),
                                 QStringLiteral("--z-step"),
                                 QStringLiteral("0.3um"),
                                 QStringLiteral("--focus-plane"),
                                 QStringLiteral("10"),
                                 QStringLiteral("--defocus-model"),
                                 QStringLiteral("high-na"),
                                 QStringLiteral("--planes"),
                                 QStringLiteral("7,10,13"),
                                 QStringLiteral("--centre"),
                                 QStringLiteral("peak"),
                                 QStringLiteral("--crop"),
                                 QStringLiteral("64"),
                                 QStringLiteral("--order"),
                                 QStringLiteral("4"),
                                 QStringLiteral("--json"),
                                 json,
                                 QStringLiteral("--phase-png"),
                                 png,
                                 QStringLiteral("--residual-out"),
                                 residual,
                                 QStringLiteral("--save-session"),
                                 session,
                                 QStringLiteral("--quiet")};
        const Run first = cli(run);
        QVERIFY2(first.status == 0, first.err.constData());
        QVERIFY2(first.out.contains("21 plane(s) of 128 x 128"), first.out.constData());
        const QJsonObject a = readJson(json);
        QCOMPARE(a.value(QStringLiteral("termination")).toString(), QStringLiteral("converged"));
        QFile image(png);
        QVERIFY(image.open(QIODevice::ReadOnly));
        QCOMPARE(image.read(8), QByteArray("\x89PNG\r\n\x1a\n", 8));
        QVERIFY(QFile::exists(residual));

        const Run again = cli(run); // every output exists now
        QCOMPARE(again.status, 1);
        QVERIFY(again.err.contains("--force"));

        const QString json2 = dir.filePath(QStringLiteral("r2.json"));
        const Run replay = cli({QStringLiteral("reconstruct"), QStringLiteral("--session"), session, QStringLiteral("--json"), json2,
                                QStringLiteral("--quiet")});
        QVERIFY2(replay.status == 0, replay.err.constData());
        const QJsonArray ca = a.value(QStringLiteral("coefficients")).toArray(),
                         cb = readJson(json2).value(QStringLiteral("coefficients")).toArray();
        QCOMPARE(cb.size(), ca.size());
        for (int i = 0; i < ca.size(); ++i)
            WFS_VERIFY_CLOSE(cb.at(i).toObject().value(QStringLiteral("value_waves")).toDouble(),
                             ca.at(i).toObject().value(QStringLiteral("value_waves")).toDouble(), 0.0, 1e-9);

        // The desktop program fits the session at once with --fit, and --quit-after-fit ends it when the fit
        // has (status 0, after the screenshot); without a fit to wait for it refuses at once (status 2).
        const QString shot = dir.filePath(QStringLiteral("fitted.png"));
        const Run studio = start(QStringLiteral(WFS_STUDIO_PATH),
                                 {QStringLiteral("--session"), session, QStringLiteral("--fit"), QStringLiteral("--quit-after-fit"),
                                  QStringLiteral("--screenshot"), shot, QStringLiteral("--size"), QStringLiteral("1280x800")});
        QVERIFY2(studio.status == 0, studio.err.constData());
        QFile picture(shot);
        QVERIFY(picture.open(QIODevice::ReadOnly));
        const QByteArray header = picture.read(24); // the PNG signature, then IHDR's width and height (big-endian)
        QCOMPARE(header.left(8), QByteArray("\x89PNG\r\n\x1a\n", 8));
        QCOMPARE(qFromBigEndian<quint32>(header.constData() + 16), quint32(1280));
        QCOMPARE(qFromBigEndian<quint32>(header.constData() + 20), quint32(800));
        const Run waiting =
            start(QStringLiteral(WFS_STUDIO_PATH), {QStringLiteral("--session"), session, QStringLiteral("--quit-after-fit")});
        QCOMPARE(waiting.status, 2);
        QVERIFY2(waiting.err.contains("--fit"), waiting.err.constData());
    }

    // A FIFO where FFTW's wisdom is kept (by mistake or malice) is not read: the run goes on without wisdom
    // instead of waiting for a writer for ever.
    void wisdomAtAFifoDoesNotHang()
    {
        QTemporaryDir dir;
        for (const char* name : {"fftw-wisdom-double", "fftw-wisdom-float"})
            QVERIFY(::mkfifo(QFile::encodeName(dir.filePath(QLatin1String(name))).constData(), 0644) == 0);
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("WFS_FFTW_WISDOM_DIR"), dir.path());
        const Run run = cli({QStringLiteral("reconstruct"), QStringLiteral("--preset"), QStringLiteral("demo"), QStringLiteral("--grid"),
                             QStringLiteral("64"), QStringLiteral("--max-iterations"), QStringLiteral("3"), QStringLiteral("--quiet")},
                            env);
        QVERIFY2(run.status == 0, run.status < 0 ? "the run hung (or crashed)" : run.err.constData());
    }

    // An image's metadata sidecar is an input: an output named like it is refused, even with --force.
    void sidecarIsNeverOverwritten()
    {
        QTemporaryDir dir;
        const QString image = dir.filePath(QStringLiteral("in.fits")), sidecar = image + QStringLiteral(".json");
        Run run = cli({QStringLiteral("simulate"), QStringLiteral("--grid"), QStringLiteral("64"), QStringLiteral("--out"), image});
        QVERIFY2(run.status == 0, run.err.constData());
        QFile file(sidecar);
        QVERIFY(file.open(QIODevice::WriteOnly));
        const QByteArray original = "{\"sampling\": 2}\n";
        file.write(original);
        file.close();
        run = cli({QStringLiteral("reconstruct"), QStringLiteral("--input"), image, QStringLiteral("--wavelength"), QStringLiteral("633nm"),
                   QStringLiteral("--csv"), sidecar, QStringLiteral("--force"), QStringLiteral("--quiet")});
        QCOMPARE(run.status, 2);
        QVERIFY2(run.err.contains("is an input"), run.err.constData());
        QVERIFY(file.open(QIODevice::ReadOnly));
        QCOMPARE(file.readAll(), original);
    }

    // A result written beside its image (b.fits -> b.json) is not read back as that image's metadata sidecar:
    // the next fit says so and uses the file's own sampling (Q 2 from its header, not the 3 given before).
    void resultIsNotReadAsASidecar()
    {
        QTemporaryDir dir;
        const QString image = dir.filePath(QStringLiteral("b.fits"));
        Run run = cli({QStringLiteral("simulate"), QStringLiteral("--grid"), QStringLiteral("64"), QStringLiteral("--out"), image});
        QVERIFY2(run.status == 0, run.err.constData());
        run = cli({QStringLiteral("reconstruct"), QStringLiteral("--input"), image, QStringLiteral("--json"),
                   dir.filePath(QStringLiteral("b.json")), QStringLiteral("--sampling"), QStringLiteral("3"), QStringLiteral("--quiet")});
        // Q 3 where the data have Q 2: the fit finishes, and its verdict says the model does not fit (exit status 3).
        QVERIFY2(run.status == 3 && run.err.contains("the model does not fit plane"), run.err.constData());
        const QString again = dir.filePath(QStringLiteral("c.json"));
        run = cli(
            {QStringLiteral("reconstruct"), QStringLiteral("--input"), image, QStringLiteral("--json"), again, QStringLiteral("--quiet")});
        QVERIFY2(run.status == 0, run.err.constData());
        QVERIFY2(run.err.contains("not a metadata sidecar"), run.err.constData());
        for (const QJsonValue& plane : readJson(again).value(QStringLiteral("planes")).toArray())
            QVERIFY2(plane.toObject().value(QStringLiteral("reduced_chi_square")).toDouble() < 2.0, "fitted with the wrong sampling");
    }

    void badSessionsAndMissingMetadata()
    {
        QTemporaryDir dir;
        const QString newer = dir.filePath(QStringLiteral("newer.json"));
        QFile f(newer);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(R"({"format": "wavefront-studio-session", "format_version": 99, "inputs": []})");
        f.close();
        Run run = cli({QStringLiteral("reconstruct"), QStringLiteral("--session"), newer});
        QCOMPARE(run.status, 1);
        QVERIFY2(run.err.contains("newer.json") && run.err.contains("newer than this program reads"), run.err.constData());
        // A TIFF without the wavelength: one clear line, status 2.
        run = cli({QStringLiteral("reconstruct"), QStringLiteral("--input"), wfs::test::dataPath(QStringLiteral("bead_zstack_BIL113.tif")),
                   QStringLiteral("--planes"), QStringLiteral("10"), QStringLiteral("--quiet")});
        QCOMPARE(run.status, 2);
        QVERIFY2(run.err.contains("wavelength"), run.err.constData());
        QCOMPARE(run.err.count('\n'), 1);
        // Stack planes without their defocus: the stack alone, without the acquisition log that gives its z step.
        const QString alone = dir.filePath(QStringLiteral("stack.tif"));
        QVERIFY(QFile::copy(wfs::test::dataPath(QStringLiteral("bead_zstack_BIL113.tif")), alone));
        run = cli({QStringLiteral("reconstruct"), QStringLiteral("--input"), alone, QStringLiteral("--planes"), QStringLiteral("9,10"),
                   QStringLiteral("--wavelength"), QStringLiteral("605nm"), QStringLiteral("--sampling"), QStringLiteral("2.75"),
                   QStringLiteral("--quiet")});
        QCOMPARE(run.status, 2);
        QVERIFY2(run.err.contains("defocus is unknown"), run.err.constData());
    }

    // Issue 40: the bead stack with the z step from its log and no focus plane. Before, plane 0 was taken as focus
    // (plane 10 fitted 3 um out of focus), "converged" with chi2/pixel 20 and exit 0. Now the brightest plane is
    // assumed and said; a wrong focus plane given on purpose still finishes, but the verdict says the model does not
    // fit, and the exit status is 3.
    void beadStackFocusAssumedAndPoorFitsSaidSo()
    {
        QTemporaryDir dir;
        const QString json = dir.filePath(QStringLiteral("r.json"));
        const QStringList common = {QStringLiteral("reconstruct"),
                                    QStringLiteral("--input"),
                                    wfs::test::dataPath(QStringLiteral("bead_zstack_BIL113.tif")),
                                    QStringLiteral("--wavelength"),
                                    QStringLiteral("605nm"),
                                    QStringLiteral("--na"),
                                    QStringLiteral("1.1"),
                                    QStringLiteral("--immersion"),
                                    QStringLiteral("1.33"),
                                    QStringLiteral("--pixel-scale"),
                                    QStringLiteral("0.1um"),
                                    QStringLiteral("--planes"),
                                    QStringLiteral("4,10,16"),
                                    QStringLiteral("--crop"),
                                    QStringLiteral("64"),
                                    QStringLiteral("--json"),
                                    json};
        Run run = cli(common);
        QVERIFY2(run.status == 0, run.err.constData());
        QVERIFY2(run.out.contains("focus-plane 10 (assumed: the brightest plane"), run.out.constData());
        QVERIFY2(run.out.contains("piston, tip, tilt, defocus removed") && run.out.contains("with defocus:"), run.out.constData());
        QJsonObject result = readJson(json);
        QCOMPARE(result.value(QStringLiteral("verdict")).toObject().value(QStringLiteral("describes_data")).toBool(false), true);
        QVERIFY(result.value(QStringLiteral("wavefront_with_defocus")).isObject());
        QVERIFY(!result.value(QStringLiteral("assumptions")).toArray().isEmpty());

        run = cli(common + QStringList{QStringLiteral("--focus-plane"), QStringLiteral("0"), QStringLiteral("--force")});
        QCOMPARE(run.status, 3);
        QVERIFY2(run.err.contains("the model does not fit plane"), run.err.constData());
        result = readJson(json);
        QCOMPARE(result.value(QStringLiteral("verdict")).toObject().value(QStringLiteral("describes_data")).toBool(true), false);
    }

    void benchRowHasTheContractKeys()
    {
        const Run run = cli({QStringLiteral("bench"), QStringLiteral("oof"), QStringLiteral("--grid"), QStringLiteral("32"),
                             QStringLiteral("--order"), QStringLiteral("2,3"), QStringLiteral("--eval-repeat"), QStringLiteral("3")});
        QVERIFY2(run.status == 0, run.err.constData());
        const QList<QByteArray> lines = run.out.trimmed().split('\n');
        QCOMPARE(lines.size(), 2);
        for (const QByteArray& line : lines) {
            const QJsonObject row = QJsonDocument::fromJson(line).object();
            for (const char* key : {"problem",
                                    "grid",
                                    "order",
                                    "params",
                                    "backend",
                                    "device",
                                    "gradient",
                                    "precision",
                                    "threads",
                                    "setup_seconds",
                                    "seconds",
                                    "iterations",
                                    "cost_evaluations",
                                    "gradient_evaluations",
                                    "final_cost",
                                    "gradient_max_norm",
                                    "termination",
                                    "eval_ms",
                                    "fft_ms",
                                    "solution"})
                QVERIFY2(row.contains(QLatin1String(key)), key);
            QCOMPARE(row.value(QStringLiteral("solution")).toArray().size(), row.value(QStringLiteral("params")).toInt());
        }
    }

    // ---- Help and messages (issue 14, item 3) ----

    // Every sub-command's help: one usage line naming the command, no Qt options or internal files, and
    // a default stated for every option that takes a value (files and folders aside).
    void helpNamesTheCommandAndStatesDefaults()
    {
        const QList<QStringList> commands = {{QStringLiteral("simulate")},
                                             {QStringLiteral("reconstruct")},
                                             {QStringLiteral("bench"), QStringLiteral("oof")},
                                             {QStringLiteral("bench"), QStringLiteral("pupil")},
                                             {QStringLiteral("fasth-bench")},
                                             {QStringLiteral("fasth-train")},
                                             {QStringLiteral("batch")},
                                             {QStringLiteral("device-reference")},
                                             {QStringLiteral("watch")},
                                             {QStringLiteral("bench"), QStringLiteral("live")}};
        for (const QStringList& command : commands) {
            const Run run = cli(command + QStringList{QStringLiteral("--help")});
            const QByteArray name = command.join(QLatin1Char(' ')).toUtf8();
            QVERIFY2(run.status == 0, name.constData());
            QCOMPARE(run.out.count("Usage:"), 1);
            QVERIFY2(run.out.startsWith("Usage: wavefront-cli " + name + " "), run.out.left(80).constData());
            QVERIFY2(!run.out.contains("help-all") && !run.out.contains("Qt"), name.constData());
            QVERIFY2(!run.out.contains("spec/") && !run.out.contains(".md"), name.constData());
            QVERIFY2(run.out.contains("--version"), name.constData());
            // Each option entry with its wrapped description.
            QStringList entries;
            for (const QString& line : QString::fromUtf8(run.out).split(QLatin1Char('\n'))) {
                if (line.startsWith(QLatin1String("  -")))
                    entries << line;
                else if (!entries.isEmpty() && line.startsWith(QLatin1String("      ")))
                    entries.last() += QLatin1Char(' ') + line.trimmed();
                else if (!entries.isEmpty() && !entries.last().isEmpty())
                    entries << QString(); // a section ends
            }
            static const QRegularExpression valueName(QStringLiteral("<([^>]+)>"));
            for (const QString& entry : entries) {
                const auto match = valueName.match(entry);
                if (!match.hasMatch() || match.captured(1).contains(QLatin1String("FILE"), Qt::CaseInsensitive)
                    || match.captured(1).contains(QLatin1String("DIR")))
                    continue;
                QVERIFY2(entry.contains(QLatin1String("default")), qPrintable(QString::fromUtf8(name) + QStringLiteral(": ") + entry));
            }
        }
        // The defaults the issue names, with the values core uses.
        const QString reconstruct = QString::fromUtf8(cli({QStringLiteral("reconstruct"), QStringLiteral("--help")}).out).simplified();
        for (const char* text : {"--order <n> Highest Zernike radial order, 1..15 (default 4;", "(default 1e-06;", "(default 1e-11;",
                                 "--threads <T> CPU threads for FFTs and pointwise work (default 1)",
                                 "--objective <name> poisson, least-squares or weighted", "(default: from the data unit",
                                 "--max-iterations <K> Iteration limit of the whole run:", "best result so far (default 2000)"})
            QVERIFY2(reconstruct.contains(QLatin1String(text)), text);
        const QString simulate = QString::fromUtf8(cli({QStringLiteral("simulate"), QStringLiteral("--help")}).out).simplified();
        for (const char* text :
             {"--grid <N> Grid size N (even; default: the preset's, demo 256, oof 128, pupil 64, vectorial 192, air 256;",
              "--photons <N> Photons per plane of the Poisson noise (default: the preset's",
              "--seed <S> Random seed of the noise (default 20180518)",
              "--noise <kind> none, or default: the preset's noise model (default: default)"})
            QVERIFY2(simulate.contains(QLatin1String(text)), text);
        const QString bench =
            QString::fromUtf8(cli({QStringLiteral("bench"), QStringLiteral("oof"), QStringLiteral("--help")}).out).simplified();
        QVERIFY2(bench.contains(QLatin1String("is at most X (default 1e-08)")), qPrintable(bench)); // the OOF problem's own rule
    }

    void versionEverywhere()
    {
        const Run top = cli({QStringLiteral("--version")});
        QCOMPARE(top.status, 0);
        QVERIFY(top.out.startsWith("wavefront-cli "));
        for (const QStringList& command : QList<QStringList>{{QStringLiteral("simulate")},
                                                             {QStringLiteral("reconstruct")},
                                                             {QStringLiteral("bench")},
                                                             {QStringLiteral("fasth-bench")},
                                                             {QStringLiteral("fasth-train")},
                                                             {QStringLiteral("batch")},
                                                             {QStringLiteral("device-reference")}}) {
            const Run run = cli(command + QStringList{QStringLiteral("--version")});
            QVERIFY2(run.status == 0, qPrintable(command.join(QLatin1Char(' '))));
            QCOMPARE(run.out, top.out);
        }
    }

    void didYouMean()
    {
        Run run = cli({QStringLiteral("reconstruct"), QStringLiteral("--wavelenght"), QStringLiteral("633nm")});
        QCOMPARE(run.status, 2);
        QCOMPARE(run.err.count('\n'), 1);
        QVERIFY2(run.err.contains("unknown option '--wavelenght'; did you mean --wavelength?"), run.err.constData());
        run = cli({QStringLiteral("simulate"), QStringLiteral("--sede"), QStringLiteral("3")});
        QCOMPARE(run.status, 2);
        QVERIFY2(run.err.contains("did you mean --seed?"), run.err.constData());
        run = cli({QStringLiteral("reconstruct"), QStringLiteral("--zzzzzzzz")});
        QCOMPARE(run.status, 2);
        QVERIFY2(!run.err.contains("did you mean"), run.err.constData());
        run = cli({QStringLiteral("reconstuct"), QStringLiteral("--preset"), QStringLiteral("demo")});
        QCOMPARE(run.status, 2);
        QCOMPARE(run.err.count('\n'), 1);
        QVERIFY2(run.err.contains("unknown command 'reconstuct'; did you mean 'reconstruct'?"), run.err.constData());
        run = cli({QStringLiteral("reconstruct"), QStringLiteral("--help-all")});
        QCOMPARE(run.status, 2); // Qt's options are not offered
    }

    void lengthWithoutItsUnitIsRefusedByName()
    {
        // Issue 40, part 3: a bare "0.1" pixel pitch is 0.1 m, a camera pixel no instrument has; it was taken, and the
        // fit failed with "use a larger grid". Refused before any work, naming the option, with the unit meant.
        const auto run = [](const QString& pitch, const QString& step) {
            return cli({QStringLiteral("reconstruct"),
                        QStringLiteral("--input"),
                        wfs::test::dataPath(QStringLiteral("bead_zstack_BIL113.tif")),
                        QStringLiteral("--wavelength"),
                        QStringLiteral("605nm"),
                        QStringLiteral("--na"),
                        QStringLiteral("1.1"),
                        QStringLiteral("--immersion"),
                        QStringLiteral("1.33"),
                        QStringLiteral("--pixel-scale"),
                        pitch,
                        QStringLiteral("--z-step"),
                        step,
                        QStringLiteral("--planes"),
                        QStringLiteral("7,10,13"),
                        QStringLiteral("--crop"),
                        QStringLiteral("64"),
                        QStringLiteral("--order"),
                        QStringLiteral("4"),
                        QStringLiteral("--max-iterations"),
                        QStringLiteral("1"),
                        QStringLiteral("--quiet")});
        };
        Run refused = run(QStringLiteral("0.1"), QStringLiteral("0.3um"));
        QCOMPARE(refused.status, 2); // a usage error, as every refused flag
        QCOMPARE(refused.err.count('\n'), 1);
        QVERIFY2(refused.err.contains("--pixel-scale: the pixel pitch 0.1 m is not plausible")
                     && refused.err.contains("did you mean 0.1um?") && !refused.err.contains("grid"),
                 refused.err.constData());
        refused = run(QStringLiteral("0.1um"), QStringLiteral("0.3")); // a z step of metres
        QCOMPARE(refused.status, 2);                                   // a usage error, as every refused flag
        QVERIFY2(refused.err.contains("--z-step: the z step 0.3 m is not plausible") && refused.err.contains("did you mean 0.3um?"),
                 refused.err.constData());
    }

    void presetIgnoredOptionsAreNamed()
    {
        const QStringList base = {QStringLiteral("reconstruct"), QStringLiteral("--preset"), QStringLiteral("demo"),
                                  QStringLiteral("--grid"),      QStringLiteral("64"),       QStringLiteral("--max-iterations"),
                                  QStringLiteral("3"),           QStringLiteral("--quiet")};
        Run run = cli(
            base + QStringList{QStringLiteral("--wavelength"), QStringLiteral("700nm"), QStringLiteral("--crop"), QStringLiteral("32")});
        QVERIFY2(run.status == 0, run.err.constData());
        QVERIFY2(run.err.contains("warning: the preset demo ignores --wavelength, --crop"), run.err.constData());
        run = cli(base);
        QVERIFY2(run.status == 0, run.err.constData());
        QVERIFY2(!run.err.contains("ignores"), run.err.constData());
    }

    // --photons sets a preset's Poisson noise for reconstruct as for simulate, and its session keeps it; a number of
    // photons that is not positive is refused as a usage error.
    void presetPhotonsApplyAndAreKept()
    {
        QTemporaryDir dir;
        const QString session = dir.filePath(QStringLiteral("dim.json"));
        const QStringList base = {QStringLiteral("reconstruct"), QStringLiteral("--preset"), QStringLiteral("demo"),
                                  QStringLiteral("--grid"),      QStringLiteral("64"),       QStringLiteral("--max-iterations"),
                                  QStringLiteral("3"),           QStringLiteral("--quiet")};
        const Run run =
            cli(base + QStringList{QStringLiteral("--photons"), QStringLiteral("1e4"), QStringLiteral("--save-session"), session});
        QVERIFY2(run.status == 0, run.err.constData());
        QVERIFY2(!run.err.contains("ignores"), run.err.constData());
        QCOMPARE(readJson(session).value(QStringLiteral("simulated")).toObject().value(QStringLiteral("photons")).toDouble(), 1e4);
        const Run refused = cli(base + QStringList{QStringLiteral("--photons"), QStringLiteral("-5")});
        QCOMPARE(refused.status, 2);
        QVERIFY2(refused.err.contains("--photons: -5 is not a positive number of photons"), refused.err.constData());
    }

    // A preset's run is a session like any other (issue 27): --save-session keeps its simulated source and settings,
    // --session re-runs it to the same numbers, and the preset's flags (here --seed) apply over it as over --preset.
    void presetRunSavesAndReplaysAsASession()
    {
        QTemporaryDir dir;
        const QString session = dir.filePath(QStringLiteral("demo.json")), first = dir.filePath(QStringLiteral("a.json")),
                      replayed = dir.filePath(QStringLiteral("b.json")), reseeded = dir.filePath(QStringLiteral("c.json"));
        const Run run = cli({QStringLiteral("reconstruct"), QStringLiteral("--preset"), QStringLiteral("demo"), QStringLiteral("--grid"),
                             QStringLiteral("64"), QStringLiteral("--objective"), QStringLiteral("least-squares"), QStringLiteral("--seed"),
                             QStringLiteral("5"), QStringLiteral("--max-iterations"), QStringLiteral("40"), QStringLiteral("--json"), first,
                             QStringLiteral("--save-session"), session, QStringLiteral("--quiet")});
        QVERIFY2(run.status == 0, run.err.constData());
        const QJsonObject saved = readJson(session).value(QStringLiteral("simulated")).toObject();
        QCOMPARE(saved.value(QStringLiteral("preset")).toString(), QStringLiteral("demo"));
        QCOMPARE(saved.value(QStringLiteral("grid")).toInt(), 64);
        QCOMPARE(saved.value(QStringLiteral("seed")).toInt(), 5);
        QCOMPARE(saved.value(QStringLiteral("objective")).toString(), QStringLiteral("least-squares"));

        const Run replay = cli({QStringLiteral("reconstruct"), QStringLiteral("--session"), session, QStringLiteral("--json"), replayed,
                                QStringLiteral("--quiet")});
        QVERIFY2(replay.status == 0, replay.err.constData());
        QVERIFY2(replay.out.contains("simulated data:"), replay.out.constData());
        QVERIFY2(replay.out.contains("truth"), replay.out.constData()); // the preset's truth column, as with --preset
        const QJsonObject a = readJson(first), b = readJson(replayed);
        QCOMPARE(b.value(QStringLiteral("iterations")).toInt(), a.value(QStringLiteral("iterations")).toInt());
        QCOMPARE(b.value(QStringLiteral("coefficients")).toArray(), a.value(QStringLiteral("coefficients")).toArray());

        const Run other =
            cli({QStringLiteral("reconstruct"), QStringLiteral("--session"), session, QStringLiteral("--seed"), QStringLiteral("6"),
                 QStringLiteral("--wavelength"), QStringLiteral("700nm"), QStringLiteral("--json"), reseeded, QStringLiteral("--quiet")});
        QVERIFY2(other.status == 0, other.err.constData());
        QVERIFY2(other.err.contains("warning: the preset demo ignores --wavelength"), other.err.constData());
        QVERIFY(readJson(reseeded).value(QStringLiteral("coefficients")).toArray() != a.value(QStringLiteral("coefficients")).toArray());

        const Run refused = cli({QStringLiteral("reconstruct"), QStringLiteral("--session"), session, QStringLiteral("--ordering"),
                                 QStringLiteral("ansi"), QStringLiteral("--quiet")});
        QCOMPARE(refused.status, 2);
        QVERIFY2(refused.err.contains("--ordering"), refused.err.constData());
    }

    // Qt's own notes (a runtime folder with the wrong permissions, no XDG_RUNTIME_DIR) stay off the terminal
    // of both programs; the desktop program's --help and --version need no display.
    void noQtMessagesOnTheTerminal()
    {
        QTemporaryDir dir;
        const QString runtime = dir.filePath(QStringLiteral("runtime"));
        QVERIFY(QDir().mkpath(runtime));
        QVERIFY(::chmod(QFile::encodeName(runtime).constData(), 0755) == 0); // Qt wants 0700 and says so
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("XDG_RUNTIME_DIR"), runtime);
        env.remove(QStringLiteral("WFS_QT_MESSAGES"));
        const QString png = dir.filePath(QStringLiteral("phase.png"));
        Run run = cli({QStringLiteral("reconstruct"), QStringLiteral("--preset"), QStringLiteral("demo"), QStringLiteral("--grid"),
                       QStringLiteral("64"), QStringLiteral("--max-iterations"), QStringLiteral("3"), QStringLiteral("--quiet"),
                       QStringLiteral("--phase-png"), png},
                      env);
        QVERIFY2(run.status == 0, run.err.constData());
        for (const QByteArray& line : run.err.split('\n'))
            QVERIFY2(line.isEmpty() || line.contains("wavefront-cli reconstruct: "), line.constData()); // only the program's own lines
        env.remove(QStringLiteral("XDG_RUNTIME_DIR"));
        run = cli({QStringLiteral("simulate"), QStringLiteral("--grid"), QStringLiteral("64"), QStringLiteral("--out"),
                   dir.filePath(QStringLiteral("s.fits"))},
                  env);
        QVERIFY2(run.status == 0, run.err.constData());
        QCOMPARE(run.err, QByteArray());

        // The desktop program: a screenshot on the offscreen platform says nothing on stderr either.
        env.insert(QStringLiteral("XDG_RUNTIME_DIR"), runtime);
        run = start(
            QStringLiteral(WFS_STUDIO_PATH),
            {QStringLiteral("--screenshot"), dir.filePath(QStringLiteral("shot.png")), QStringLiteral("--size"), QStringLiteral("800x600")},
            env);
        QVERIFY2(run.status == 0, run.err.constData());
        QCOMPARE(run.err, QByteArray());

        // No display at all: --help and --version still work, a bad option is one line and status 2.
        QProcessEnvironment headless = QProcessEnvironment::systemEnvironment();
        for (const char* name : {"DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM"})
            headless.remove(QLatin1String(name));
        run = start(QStringLiteral(WFS_STUDIO_PATH), {QStringLiteral("--help")}, headless);
        QCOMPARE(run.status, 0);
        QVERIFY2(run.out.startsWith("Usage: wavefront-studio [options]"), run.out.constData());
        QCOMPARE(run.out.count("Usage:"), 1);
        QVERIFY(!run.out.contains("help-all") && !run.out.contains("Qt"));
        QCOMPARE(run.err, QByteArray());
        run = start(QStringLiteral(WFS_STUDIO_PATH), {QStringLiteral("--version")}, headless);
        QCOMPARE(run.status, 0);
        QVERIFY2(run.out.startsWith("wavefront-studio "), run.out.constData());
        run = start(QStringLiteral(WFS_STUDIO_PATH), {QStringLiteral("--bogus")}, headless);
        QCOMPARE(run.status, 2);
        QCOMPARE(run.err.count('\n'), 1);
        // A screenshot into a folder that does not exist: refused before anything is loaded or fitted.
        run = start(QStringLiteral(WFS_STUDIO_PATH), {QStringLiteral("--demo"), QStringLiteral("--quit-after-fit"),
                                                      QStringLiteral("--screenshot"), QStringLiteral("/nonexistent/x.png")});
        QCOMPARE(run.status, 2);
        QVERIFY2(run.err.contains("/nonexistent"), run.err.constData());
        // Without a display the program says so and how to do without one (Qt alone would abort).
        run = start(QStringLiteral(WFS_STUDIO_PATH), {QStringLiteral("--demo")}, headless);
        QCOMPARE(run.status, 1);
        QVERIFY2(run.err.contains("no display found") && run.err.contains("wavefront-cli"), run.err.constData());
    }
};

QTEST_GUILESS_MAIN(TestCli)
#include "tst_cli.moc"
