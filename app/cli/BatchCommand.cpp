// wavefront-cli batch: one settings file, many inputs, N worker processes. Each worker is this program
// itself in a hidden mode (`batch --worker INPUT.json`), which runs the one workflow (core's
// prepareBatchRun -> prepareRun) on one input and writes DIR/NAME.json all or nothing; its output goes
// to DIR/NAME.log. Which inputs there are, which are done, and the summary are core's (engine/Batch.h),
// shared with `--summarize-only`, which summarises what GNU parallel or a Slurm array left in DIR.
#include "CliCommon.h"
#include "Commands.h"

#include "FieldMap.h"
#include "engine/Batch.h"
#include "engine/Report.h"
#include "io/OutputTransaction.h"
#include "io/ResultJson.h"
#include "optics/Zernike.h"

#include <QCoreApplication>
#include <QDir>
#include <QEventLoop>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QProcess>
#include <QThread>
#include <QTimer>

#include <algorithm>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <sys/prctl.h>

namespace wfs::cli {

namespace {

constexpr int kDefaultFieldMapCoefficient = 4; // Noll 4, defocus: field curvature across the field

// The worker: one input, in this process. Everything it prints goes to DIR/NAME.log.
int runWorker(const QString& program, const QCommandLineParser& parser)
{
    try {
        const QJsonDocument doc = QJsonDocument::fromJson(parser.value(QStringLiteral("worker")).toUtf8());
        const BatchInput input = batchInputFromJson(doc.object());
        const std::string settingsPath = parser.value(QStringLiteral("settings")).toStdString();
        // What the result is made from, taken before the input is read: a later edit makes it stale.
        const QJsonObject identity = batchInputIdentity(input, settingsPath);
        const Session settings = settingsPath.empty() ? Session{} : loadBatchSettings(settingsPath);
        const PreparedRun run = prepareBatchRun(settings, input);
        for (const DatasetMessage& m : run.messages) // the warnings are the result's too, said once below
            if (m.level != MessageLevel::Warning)
                std::printf("  %s: %s\n", messageLevelName(m.level), m.text.c_str());
        FitResult result = reconstruct(run.request, {}, nullptr);
        prependWarnings(result, warningTexts(run.messages)); // the result JSON's "warnings" hold the data's too
        std::fputs(fullReport(result, {}, nullptr, &run.dataset).c_str(), stdout);
        printWarnings(program, result.warnings);
        std::fflush(stdout);
        QJsonObject json = resultToJson(result);
        json.insert(QStringLiteral("batch_input"), identity);
        writeFileAtomically(batchResultPath(parser.value(QStringLiteral("out")).toStdString(), input), QJsonDocument(json).toJson(), true);
        if (result.solver.termination == Termination::Failed)
            return runFailure(program, QString::fromStdString("the fit failed: " + result.solver.message));
        return 0;
    } catch (const std::exception& e) {
        return runFailure(program, describe(e));
    }
}

std::string progressLine(const BatchRow& row)
{
    if (row.status == "ok") {
        char text[256];
        std::snprintf(text, sizeof text, "ok  %s  rms %.4f waves  Strehl %.3f  chi2/pixel %.3f  %.1f s", row.termination.c_str(),
                      row.rmsWaves, row.strehl, row.reducedChiSquare, row.seconds);
        return text;
    }
    if (row.status == "poor-fit")
        return "POOR FIT: " + row.error;
    return (row.status == "failed" ? "FAILED: " : "not run: ") + row.error;
}

// The field map of one coefficient, when any input has a field position. Returns the PNG's bytes, or
// empty when there are no positions.
QByteArray fieldMapBytes(const std::vector<BatchRow>& rows, int coefficient)
{
    std::vector<FieldMapPoint> points;
    std::string ordering = "noll";
    for (const BatchRow& r : rows)
        if (r.status == "ok") {
            ordering = r.ordering;
            break;
        }
    for (const BatchRow& r : rows) {
        if (!r.fieldX || !r.fieldY)
            continue;
        FieldMapPoint p{*r.fieldX, *r.fieldY, std::nan(""), r.name};
        if (r.status == "ok" && r.ordering == ordering)
            for (const auto& [index, waves] : r.coefficientsWaves)
                if (index == coefficient)
                    p.value = waves;
        points.push_back(p);
    }
    if (points.empty())
        return {};
    if (std::none_of(points.begin(), points.end(), [](const FieldMapPoint& p) { return std::isfinite(p.value); }))
        for (const BatchRow& r : rows)
            if (r.status == "ok")
                throw std::runtime_error("no result has coefficient " + std::to_string(coefficient) + " (--field-map-coefficient)");
    const ZernikeOrdering o = ordering == "ansi" ? ZernikeOrdering::Ansi : ZernikeOrdering::Noll;
    const std::string term = (o == ZernikeOrdering::Ansi ? "ANSI " : "Noll ") + std::to_string(coefficient);
    FieldMapOptions options;
    options.title = term + " (" + zernike::name(zernike::modeFromIndex(coefficient, o)) + ") across the field";
    options.valueLabel = term + " [waves]";
    return fieldMapPngBytes(points, options);
}

// Writes summary.csv (and field-map.png), prints where; returns the rows.
std::vector<BatchRow> writeSummary(const QString& program, const std::vector<BatchInput>& inputs, const QString& outDir, int coefficient)
{
    const std::vector<BatchRow> rows = batchRows(inputs, outDir.toStdString());
    const QString summary = QDir(outDir).filePath(QStringLiteral("summary.csv"));
    writeFileAtomically(summary.toStdString(), batchSummaryCsv(rows), true);
    int ok = 0, poor = 0;
    for (const BatchRow& r : rows) {
        ok += r.status == "ok";
        poor += r.status == "poor-fit";
    }
    std::printf("summary: %s (%d of %zu inputs ok", qPrintable(summary), ok, rows.size());
    if (poor > 0)
        std::printf(", %d fitted but the model does not describe the data", poor);
    std::printf(")\n");
    try {
        const QByteArray png = fieldMapBytes(rows, coefficient);
        if (!png.isEmpty()) {
            const QString map = QDir(outDir).filePath(QStringLiteral("field-map.png"));
            writeFileAtomically(map.toStdString(), png, true);
            std::printf("field map: %s\n", qPrintable(map));
        }
    } catch (const std::exception& e) {
        printWarnings(program, {std::string("no field map: ") + e.what()});
    }
    std::fflush(stdout);
    return rows;
}

int exitStatus(const std::vector<BatchRow>& rows)
{
    for (const BatchRow& r : rows)
        if (r.status == "ok" || r.status == "poor-fit")
            return 0;
    return 1; // not one input could be fitted
}

void addBatchOptions(QCommandLineParser& parser, const QCommandLineOption& worker, int defaultJobs)
{
    parser.setApplicationDescription(
        QStringLiteral("Reconstruct many inputs with one set of settings: one result JSON per input in DIR (DIR/NAME.json, with\n"
                       "the run's output in DIR/NAME.log), DIR/summary.csv (one row per input, failures with their reason) and,\n"
                       "when the inputs have field positions, DIR/field-map.png. Resumable: an input whose result is complete,\n"
                       "made from the same input bytes with the same settings, is skipped; any other result is fitted again. INPUT: image "
                       "files, a glob ('data/*.fits', quoted), a list file (*.txt, one path a line), or a\n"
                       "CSV manifest (*.csv) with a header row: file[,name][,x,y][,defocus][,planes][,wavelength][,sampling]\n"
                       "[,z-step][,focus-plane]; x,y is the field position, the others override the settings for that input.\n"
                       "A positional FILE.json is the settings file (same as --settings)."));
    addOptions(
        parser,
        {
            {QStringLiteral("settings"),
             QStringLiteral("Settings for every input: a saved session (its own inputs are ignored) or a settings file "
                            "of the same format (default: the built-in defaults and each input's headers)."),
             QStringLiteral("FILE.json")},
            {QStringLiteral("manifest"), QStringLiteral("A CSV manifest of inputs (as an INPUT ending in .csv)."),
             QStringLiteral("FILE.csv")},
            {QStringLiteral("out"), QStringLiteral("Output folder (created when missing; required)."), QStringLiteral("DIR")},
            {QStringLiteral("jobs"),
             QStringLiteral("Worker processes (default: the %1 hardware threads divided by the settings' threads per fit, at most one per "
                            "input; more is allowed, with a warning that the fits share cores).")
                 .arg(defaultJobs),
             QStringLiteral("N")},
            {QStringLiteral("field-map-coefficient"),
             QStringLiteral("Zernike index (in the results' ordering) drawn against field position in DIR/field-map.png (default %1).")
                 .arg(kDefaultFieldMapCoefficient),
             QStringLiteral("N"), QString::number(kDefaultFieldMapCoefficient)},
            {QStringLiteral("summarize-only"),
             QStringLiteral("Run nothing: summarise the results DIR holds (e.g. after GNU parallel or a Slurm array "
                            "ran 'reconstruct --json DIR/NAME.json' per input).")},
            {QStringLiteral("quiet"), QStringLiteral("No progress lines.")},
            worker,
        });
    parser.addPositionalArgument(QStringLiteral("inputs"), QStringLiteral("Image files, globs, list files or CSV manifests."),
                                 QStringLiteral("INPUT..."));
}

// The reason a worker's standard error gives for its failure: its last "error: " line, else empty.
std::string workerError(const QByteArray& errors)
{
    const QList<QByteArray> lines = errors.split('\n');
    for (auto it = lines.rbegin(); it != lines.rend(); ++it)
        if (const qsizetype at = it->indexOf("error: "); at >= 0)
            return it->mid(at + 7).trimmed().toStdString();
    return {};
}

// Appends a worker's standard error to its log; false when the log could not take it (a full disk). A link
// in the log's place is not written through.
bool appendToLog(const QString& log, const QByteArray& errors)
{
    if (errors.isEmpty())
        return true;
    if (QFileInfo(log).isSymLink())
        return false;
    QFile file(log);
    return file.open(QIODevice::Append) && file.write(errors) == errors.size() && file.flush();
}

// Why an ended worker failed, from its standard error or its exit status; empty when neither says.
std::string workerFailure(const QProcess& process, const QByteArray& errors)
{
    std::string reason = workerError(errors);
    if (reason.empty() && process.exitStatus() == QProcess::NormalExit && process.exitCode() != 0)
        reason = "the worker ended with status " + std::to_string(process.exitCode()) + " without a reason";
    return reason;
}

// A worker process, not started, writing its standard output to `log`.
QProcess* newWorkerProcess(QObject* parent, const QString& log)
{
    auto* process = new QProcess(parent);
    // The log is the batch's own file: a link put in its place is removed, not followed (truncating
    // its target would destroy a file that is not the batch's).
    if (QFileInfo(log).isSymLink())
        QFile::remove(log);
    process->setProcessChannelMode(QProcess::SeparateChannels);
    process->setStandardOutputFile(log, QIODevice::Truncate);
    process->setStandardInputFile(QProcess::nullDevice());
    // A worker ends with the batch (SIGTERM: its output transaction removes its temporary), so a
    // killed batch leaves no worker running on beside the next one.
    process->setChildProcessModifier([] { ::prctl(PR_SET_PDEATHSIG, SIGTERM); });
    return process;
}

// The hidden worker mode's command line for one input.
QStringList workerArguments(const BatchInput& in, const QString& outDir, const QString& settingsPath)
{
    QStringList args = {QStringLiteral("batch"), QStringLiteral("--out"), outDir, QStringLiteral("--worker"),
                        QString::fromUtf8(QJsonDocument(batchInputToJson(in)).toJson(QJsonDocument::Compact))};
    if (!settingsPath.isEmpty())
        args << QStringLiteral("--settings") << settingsPath;
    return args;
}

// Runs the queued inputs in at most `jobs` worker processes (this program's hidden worker mode), one
// input each, its output in the input's log; `report` is called as each one ends. A worker's standard error
// comes through a pipe and is appended to its log: when the log cannot hold it (a full disk), the reason is
// still known. Returns, by input name, the failures that the files in DIR do not tell (the summary's rows).
std::map<std::string, std::string> runWorkers(const QString& program, std::deque<const BatchInput*>& queue, int jobs, const QString& outDir,
                                              const QString& settingsPath,
                                              const std::function<void(const BatchInput&, const std::string&)>& report)
{
    std::map<std::string, std::string> untold;
    QEventLoop loop;
    int running = 0;
    const QString self = QCoreApplication::applicationFilePath();
    std::function<void()> startNext;
    // A worker has ended: its note (why it did not finish) into its log, its row reported, the next started.
    // Once per worker: a process may say it ended twice (an error, then its end).
    auto finished = [&](QProcess* process, const BatchInput* in, const QString& log, const QString& note) {
        if (process->property("wfsEnded").toBool())
            return;
        process->setProperty("wfsEnded", true);
        const QByteArray errors = process->readAllStandardError()
                                  + (note.isEmpty() ? QByteArray() : QStringLiteral("%1: error: %2\n").arg(program, note).toUtf8());
        const bool logged = appendToLog(log, errors);
        const BatchRow row = batchRows({*in}, outDir.toStdString()).front();
        std::string line = progressLine(row);
        const std::string reason = workerFailure(*process, errors);
        if (row.status != "ok" && !reason.empty() && row.error != reason) {
            // The log could not take the reason (a full disk cut it short or left it empty): said from the pipe.
            line = "FAILED: " + reason + (logged ? std::string() : " (the log " + log.toStdString() + " could not hold it)");
            untold[in->name] = reason;
        }
        report(*in, line);
        process->deleteLater();
        --running;
        startNext();
        if (running == 0 && queue.empty())
            loop.quit();
    };
    startNext = [&] {
        while (running < jobs && !queue.empty()) {
            const BatchInput* in = queue.front();
            queue.pop_front();
            const QString log = QString::fromStdString(batchLogPath(outDir.toStdString(), *in));
            QProcess* process = newWorkerProcess(&loop, log);
            ++running;
            QObject::connect(process, &QProcess::finished, &loop, [&, process, in, log](int, QProcess::ExitStatus exit) {
                finished(process, in, log,
                         exit == QProcess::CrashExit ? QStringLiteral("the worker stopped before it finished (killed or crashed)")
                                                     : QString());
            });
            QObject::connect(process, &QProcess::errorOccurred, &loop, [&, process, in, log](QProcess::ProcessError error) {
                // Said inside start(), so handled from the event loop: finishing here could quit the loop
                // before it runs, and the batch would wait for ever.
                if (error == QProcess::FailedToStart)
                    QTimer::singleShot(0, &loop, [&, process, in, log, why = process->errorString()] {
                        finished(process, in, log, QStringLiteral("the worker could not start (%1)").arg(why));
                    });
            });
            process->start(self, workerArguments(*in, outDir, settingsPath));
        }
    };
    if (queue.empty())
        return untold;
    QTimer::singleShot(0, &loop, startNext); // from inside the loop, so that every end is seen by it
    loop.exec();
    return untold;
}

// What the command line asks for beyond the options' own parsing; throws UsageError.
struct BatchArguments {
    QStringList positional; // inputs
    QString settingsPath;   // --settings, or a first positional FILE.json
    int coefficient = kDefaultFieldMapCoefficient;
    int jobs = 0; // 0 = from the hardware threads and the settings' threads per fit
};

BatchArguments batchArguments(const QCommandLineParser& parser)
{
    BatchArguments a;
    a.positional = parser.positionalArguments();
    a.settingsPath = parser.value(QStringLiteral("settings"));
    if (!a.positional.isEmpty() && a.positional.front().endsWith(QLatin1String(".json"), Qt::CaseInsensitive)) {
        if (!a.settingsPath.isEmpty())
            throw UsageError(
                QStringLiteral("two settings files: --settings %1 and %2").arg(a.settingsPath, a.positional.front()).toStdString());
        a.settingsPath = a.positional.takeFirst();
    }
    a.coefficient = parseInt(parser.value(QStringLiteral("field-map-coefficient")), QStringLiteral("field-map-coefficient"));
    if (a.coefficient < 1)
        throw UsageError("--field-map-coefficient: a Zernike index is at least 1");
    if (parser.isSet(QStringLiteral("jobs"))) {
        a.jobs = parseInt(parser.value(QStringLiteral("jobs")), QStringLiteral("jobs"));
        if (a.jobs < 1 || a.jobs > 1024)
            throw UsageError("--jobs: must be between 1 and 1024");
    }
    if (a.positional.isEmpty() && !parser.isSet(QStringLiteral("manifest")))
        throw UsageError("no inputs: give image files, a glob, a list file or a CSV manifest");
    return a;
}

// Writes the summary of what DIR holds without running anything (results left by GNU parallel or Slurm).
int summarizeOnly(const QString& program, const std::vector<BatchInput>& inputs, const QString& outDir, int coefficient, bool quiet)
{
    try {
        const std::vector<BatchRow> rows = writeSummary(program, inputs, outDir, coefficient);
        if (!quiet)
            for (size_t i = 0; i < rows.size(); ++i)
                std::printf("[%zu/%zu] %s: %s\n", i + 1, rows.size(), rows[i].name.c_str(), progressLine(rows[i]).c_str());
        return exitStatus(rows);
    } catch (const std::exception& e) {
        return runFailure(program, describe(e));
    }
}

// The inputs still to run: those with an error of their own (or a missing file) and those done earlier
// with the same input bytes and settings are reported at once and left out. A result that is stale
// (another input's, or made before the input or the settings changed) is removed, said with its reason,
// and its input run again: it must not reach the summary if the new run fails.
std::deque<const BatchInput*> pendingInputs(const std::vector<BatchInput>& inputs, const QString& outDir, const QString& settingsPath,
                                            const std::function<void(const BatchInput&, const std::string&)>& report,
                                            const std::function<void(const BatchInput&, const std::string&)>& note)
{
    std::deque<const BatchInput*> queue;
    for (const BatchInput& in : inputs) {
        const BatchRow row = batchRows({in}, outDir.toStdString()).front();
        if (!in.error.empty() || !QFileInfo(QString::fromStdString(in.path)).isFile()) {
            report(in, progressLine(row)); // recorded in the summary, nothing to run
            continue;
        }
        const std::string resultPath = batchResultPath(outDir.toStdString(), in);
        if (const std::optional<QJsonObject> earlier = readCompleteResult(resultPath)) {
            const std::string stale = staleResultReason(*earlier, batchInputIdentity(in, settingsPath.toStdString()));
            if (stale.empty()) {
                report(in, earlier->contains(QStringLiteral("batch_input"))
                               ? "done earlier, skipped"
                               : "done earlier, skipped (by reconstruct: its input and settings unchecked)");
                continue;
            }
            if (!QFile::remove(QString::fromStdString(resultPath)))
                throw OutputError(resultPath + ": a stale result (" + stale + ") that cannot be removed");
            note(in, "run again: " + stale);
        } else if (QFileInfo(QString::fromStdString(resultPath)).isFile()) {
            // A result that is there but not whole (a write cut short, a run stopped before its termination): said,
            // as a stale one is, and written again by the new run.
            note(in, "run again: the earlier result is incomplete (not a whole result with its termination)");
        }
        queue.push_back(&in);
    }
    return queue;
}

// Everything that can stop the batch is checked before any worker starts: the settings, the input list, the
// output folder. Returns the failure's exit status, or nothing when the batch can go on.
std::optional<int> loadBatch(const QString& program, const QCommandLineParser& parser, const BatchArguments& arguments,
                             const QString& outDir, Session& settings, std::vector<BatchInput>& inputs)
{
    try {
        if (!arguments.settingsPath.isEmpty())
            settings = loadBatchSettings(arguments.settingsPath.toStdString());
        std::vector<std::string> paths;
        for (const QString& p : arguments.positional)
            paths.push_back(p.toStdString());
        inputs = resolveBatchInputs(paths, parser.value(QStringLiteral("manifest")).toStdString());
        if (!QDir().mkpath(outDir))
            throw OutputError(outDir.toStdString() + ": cannot create the output folder");
        checkOutputPath(QDir(outDir).filePath(QStringLiteral("summary.csv")).toStdString(), true);
    } catch (const SessionError& e) {
        return runFailure(program, QStringLiteral("invalid settings, nothing was run: ") + QString::fromStdString(e.what()));
    } catch (const DatasetError& e) {
        return runFailure(
            program,
            QStringLiteral("invalid settings, nothing was run: %1: %2").arg(arguments.settingsPath, QString::fromStdString(e.what())));
    } catch (const std::exception& e) {
        return runFailure(program, describe(e));
    }
    return std::nullopt;
}

// Runs the inputs not done yet in worker processes, a progress line as each ends, then writes the summary.
int runInputs(const QString& program, const BatchArguments& arguments, const Session& settings, std::vector<BatchInput>& inputs,
              const QString& outDir, int defaultJobs, bool quiet)
{
    const size_t total = inputs.size();
    size_t finished = 0;
    auto report = [&](const BatchInput& in, const std::string& line) {
        ++finished;
        if (!quiet) {
            std::printf("[%zu/%zu] %s: %s\n", finished, total, in.name.c_str(), line.c_str());
            std::fflush(stdout);
        }
    };
    std::deque<const BatchInput*> queue;
    try {
        queue = pendingInputs(inputs, outDir, arguments.settingsPath, report, [&](const BatchInput& in, const std::string& line) {
            if (!quiet)
                std::printf("%s: %s\n", in.name.c_str(), line.c_str());
        });
    } catch (const std::exception& e) {
        return runFailure(program, describe(e));
    }

    if (!queue.empty()) {
        const BatchJobs planned = batchJobs(arguments.jobs, settings.solver.threads, defaultJobs, queue.size());
        if (!planned.warning.empty())
            std::fprintf(stderr, "%s: warning: %s\n", qPrintable(program), planned.warning.c_str());
        if (!quiet) {
            std::printf("running %zu of %zu inputs with %d worker process(es) of %d thread(s) each\n", queue.size(), total, planned.jobs,
                        std::max(1, settings.solver.threads));
            std::fflush(stdout);
        }
        const std::map<std::string, std::string> untold = runWorkers(program, queue, planned.jobs, outDir, arguments.settingsPath, report);
        for (BatchInput& in : inputs) // the summary's rows say them too
            if (const auto it = untold.find(in.name); it != untold.end())
                in.error = it->second;
    }
    try {
        return exitStatus(writeSummary(program, inputs, outDir, arguments.coefficient));
    } catch (const std::exception& e) {
        return runFailure(program, describe(e));
    }
}

} // namespace

int runBatch(const QStringList& args)
{
    const QString program = args.value(0);
    QCommandLineParser parser;
    QCommandLineOption worker(QStringLiteral("worker"), QStringLiteral("Internal: run one input (JSON) in this process."),
                              QStringLiteral("json"));
    worker.setFlags(QCommandLineOption::HiddenFromHelp);
    const int defaultJobs = std::max(1, QThread::idealThreadCount());
    addBatchOptions(parser, worker, defaultJobs);
    if (auto status = parseOrExit(parser, args))
        return *status;
    if (!parser.isSet(QStringLiteral("out")))
        return usageFailure(program, QStringLiteral("--out DIR is required"));
    if (parser.isSet(worker))
        return runWorker(program, parser);

    BatchArguments arguments;
    try {
        arguments = batchArguments(parser);
    } catch (const UsageError& e) {
        return usageFailure(program, QString::fromStdString(e.what()));
    }
    Session settings;
    std::vector<BatchInput> inputs;
    const QString outDir = parser.value(QStringLiteral("out"));
    if (const std::optional<int> status = loadBatch(program, parser, arguments, outDir, settings, inputs))
        return *status;
    const bool quiet = parser.isSet(QStringLiteral("quiet"));
    if (parser.isSet(QStringLiteral("summarize-only")))
        return summarizeOnly(program, inputs, outDir, arguments.coefficient, quiet);
    return runInputs(program, arguments, settings, inputs, outDir, defaultJobs, quiet);
}

} // namespace wfs::cli
