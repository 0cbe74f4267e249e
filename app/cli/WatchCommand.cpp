// wavefront-cli watch: live mode. Watches a folder, fits every complete stack with one settings file,
// warm-started from the previous stack, and appends one JSON line per stack to a log. All of it is core's
// (engine/LiveWatch.h); this file parses, wires and prints.
#include "Commands.h"
#include "LiveCommon.h"

#include "engine/Batch.h"
#include "engine/LiveLog.h"
#include "engine/StackFinder.h"
#include "optics/Zernike.h"

#include <QDir>
#include <QEventLoop>
#include <QFileInfo>
#include <QJsonArray>

#include <cstdio>
#include <memory>

namespace wfs::cli {

namespace {

void addWatchOptions(QCommandLineParser& parser)
{
    const StackFinderOptions finder;
    const LiveWatchOptions watch;
    parser.setApplicationDescription(
        QStringLiteral("Live mode: watch DIR and fit every stack a camera writes there, each with the same settings and warm-started\n"
                       "from the previous stack's result; one JSON line per stack is appended to the log (the result JSON's keys plus\n"
                       "stack, inputs, status, error, written, detected, finished, latency_seconds, fit_seconds, warm_started, skipped).\n"
                       "A stack is a FITS file or cube, a (multi-page) TIFF, or one file per plane named by --plane-pattern. A file is\n"
                       "read once it is complete: renamed into DIR (write to a temporary name, e.g. .name.tmp, then rename), or unchanged\n"
                       "for --stable-ms (a stack not read whole is read again when it changes, for --incomplete-ms). When stacks come\n"
                       "faster than fits, the newest wins; the stacks passed over are listed in its row's \"skipped\". A restart\n"
                       "continues the log (and the trend table, the rows it lacks added) and fits no stack it holds, unless a file of\n"
                       "it was written since. The log and the table must be the watch's own: a file that is not is refused. Exit\n"
                       "status 0 when stopped by --max-stacks or --exit-when-idle, 1 when the folder disappears or the log cannot be\n"
                       "written (the log keeps its whole rows)."));
    parser.addPositionalArgument(QStringLiteral("dir"), QStringLiteral("The folder to watch."), QStringLiteral("DIR"));
    addOptions(
        parser,
        {
            {QStringLiteral("settings"),
             QStringLiteral("Settings for every stack: a saved session (its own inputs are ignored) or a settings file of "
                            "the same format, as for batch (default: the built-in defaults and each stack's headers)."),
             QStringLiteral("FILE.json")},
            {QStringLiteral("out"), QStringLiteral("The log, JSON Lines (required; continued when it exists)."),
             QStringLiteral("FILE.jsonl")},
            {QStringLiteral("csv"),
             QStringLiteral("A trend table as well: one CSV row per stack (coefficients in waves, RMS, Strehl, latency)."),
             QStringLiteral("FILE.csv")},
            {QStringLiteral("save-results"),
             QStringLiteral("Write each fitted stack's result JSON (as reconstruct --json writes it) into DIR/NAME.json."),
             QStringLiteral("DIR")},
            {QStringLiteral("stable-ms"), QStringLiteral("A file unchanged in size and time for this long is complete."),
             QStringLiteral("N"), QString::number(finder.stableMs)},
            {QStringLiteral("incomplete-ms"),
             QStringLiteral("A stack not read whole (unreadable, a file that declares more planes than it holds, fewer planes "
                            "than the watch expects) is read again when it changes; unchanged for this long, it is logged as failed."),
             QStringLiteral("N"), QString::number(finder.incompleteMs)},
            {QStringLiteral("scan-ms"), QStringLiteral("Interval of the folder scan beside the file-system watcher."), QStringLiteral("N"),
             QString::number(watch.scanIntervalMs)},
            {QStringLiteral("plane-pattern"),
             QStringLiteral("Regular expression for one-file-per-plane stacks, with the named groups 'stack' and 'plane' "
                            "(default %1).")
                 .arg(defaultPlanePattern()),
             QStringLiteral("REGEX")},
            {QStringLiteral("planes-per-stack"),
             QStringLiteral("Planes of a one-file-per-plane stack (default: the settings' plane count; without one, "
                            "a stack is complete when no plane has come for --stable-ms)."),
             QStringLiteral("N")},
            {QStringLiteral("max-stacks"), QStringLiteral("Stop after N stacks (fitted, failed or skipped; default: never)."),
             QStringLiteral("N")},
            {QStringLiteral("exit-when-idle"),
             QStringLiteral("Stop when no file changed and no stack came for this many seconds (default: never)."),
             QStringLiteral("SECONDS")},
            {QStringLiteral("quiet"), QStringLiteral("No line per stack on standard output.")},
            {QStringLiteral("preset"),
             QStringLiteral("live: a simulated camera writes noisy stacks into DIR (through the same folder, as a camera "
                            "would), for teaching and demos; see --rate, --stacks, --terms, --photons, --read-noise (default: none, "
                            "the folder's own writers)."),
             QStringLiteral("live")},
            {QStringLiteral("stacks"),
             QStringLiteral("With --preset live: stacks the camera writes (default: until stopped); also the default --max-stacks."),
             QStringLiteral("N")},
            {QStringLiteral("order"),
             QStringLiteral("With --preset live and no --settings: the fitted Zernike order (default %1).").arg(ModelSettings{}.order),
             QStringLiteral("n")},
        });
    addCameraOptions(parser, false);
}

// One line per stack for a person watching the terminal.
std::string stackLine(const QJsonObject& row)
{
    const std::string stack = row.value(QStringLiteral("stack")).toString().toStdString();
    const int skipped = int(row.value(QStringLiteral("skipped")).toArray().size());
    char text[512];
    if (row.value(QStringLiteral("status")).toString() == QLatin1String("ok"))
        std::snprintf(text, sizeof text, "%s  ok  rms %.4f waves  Strehl %.3f  %s  fit %.3f s  latency %.3f s", stack.c_str(),
                      row.value(QStringLiteral("rms_waves")).toDouble(), row.value(QStringLiteral("strehl")).toDouble(),
                      row.value(QStringLiteral("warm_started")).toBool() ? "warm" : "cold",
                      row.value(QStringLiteral("fit_seconds")).toDouble(), row.value(QStringLiteral("latency_seconds")).toDouble());
    else
        std::snprintf(text, sizeof text, "%s  FAILED: %s", stack.c_str(), qPrintable(row.value(QStringLiteral("error")).toString()));
    std::string line = text;
    if (skipped > 0)
        line += "  (" + std::to_string(skipped) + " older stack" + (skipped == 1 ? "" : "s") + " skipped)";
    return line;
}

} // namespace

void addCameraOptions(QCommandLineParser& parser, bool rateList)
{
    const LiveCameraSettings d;
    QString terms;
    for (const TruthTerm& t : d.terms)
        terms += (terms.isEmpty() ? QString() : QStringLiteral(",")) + QStringLiteral("%1=%2").arg(t.index).arg(t.valueWaves);
    addOptions(
        parser,
        {
            {QStringLiteral("rate"),
             rateList ? QStringLiteral("Stacks per second the writer aims at, a comma-separated list: one row each.")
                      : QStringLiteral("Stacks per second the simulated camera writes."),
             rateList ? QStringLiteral("list") : QStringLiteral("R"), rateList ? QStringLiteral("5,10,20") : QString::number(d.rate)},
            {QStringLiteral("terms"), QStringLiteral("The simulated wavefront: Noll index = waves (RMS-normalised), comma-separated."),
             QStringLiteral("i=w,..."), terms},
            {QStringLiteral("photons"), QStringLiteral("Photons per plane of the simulated stacks."), QStringLiteral("N"),
             QString::number(d.photons)},
            {QStringLiteral("read-noise"), QStringLiteral("Read noise of the simulated camera, counts RMS."), QStringLiteral("e"),
             QString::number(d.readNoise)},
            {QStringLiteral("grid"), QStringLiteral("Size of the simulated planes (pixels; three planes at -1, 0, +1 wave of defocus)."),
             QStringLiteral("N"), QStringLiteral("128")},
        });
}

LiveCameraSettings cameraSettingsFrom(const QCommandLineParser& parser, bool readRate)
{
    LiveCameraSettings s;
    if (readRate)
        s.rate = parseNumber(value(parser, "rate"), QStringLiteral("rate"));
    s.photons = parseNumber(value(parser, "photons"), QStringLiteral("photons"));
    s.readNoise = parseNumber(value(parser, "read-noise"), QStringLiteral("read-noise"));
    s.terms.clear();
    for (const QString& part : value(parser, "terms").split(QLatin1Char(','), Qt::SkipEmptyParts)) {
        const QStringList kv = part.split(QLatin1Char('='));
        if (kv.size() != 2)
            throw UsageError("--terms: '" + part.toStdString() + "' is not INDEX=WAVES (e.g. 5=0.1)");
        s.terms.push_back({parseInt(kv[0].trimmed(), QStringLiteral("terms")), parseNumber(kv[1].trimmed(), QStringLiteral("terms"))});
    }
    const std::string error = liveCameraSettingsError(s);
    if (!error.empty())
        throw UsageError("--" + error);
    return s;
}

int runLiveWatch(const QString& program, const LiveWatchOptions& options, bool quiet, LiveCamera* camera,
                 const std::function<void(const QJsonObject&)>& onRow)
{
    LiveWatch watch(options);
    QEventLoop loop;
    QObject::connect(&watch, &LiveWatch::watching, &loop, [&] {
        if (!quiet) {
            std::printf("watching %s (log %s)\n", options.folder.c_str(), options.logPath.c_str());
            std::fflush(stdout);
        }
        if (camera)
            camera->start();
    });
    QObject::connect(&watch, &LiveWatch::rowWritten, &loop, [&](const QJsonObject& row) {
        if (onRow)
            onRow(row);
        if (quiet)
            return;
        std::printf("%s\n", stackLine(row).c_str());
        std::fflush(stdout);
    });
    QObject::connect(&watch, &LiveWatch::message, &loop, [&](const QString& text) { printWarnings(program, {text.toStdString()}); });
    int status = 0;
    QObject::connect(&watch, &LiveWatch::finished, &loop, [&](bool failed, const QString& reason) {
        if (camera)
            camera->stop();
        const LiveCounts c = watch.counts();
        const QString summary = QStringLiteral("%1 fitted, %2 failed, %3 skipped").arg(c.fitted).arg(c.failed).arg(c.skipped);
        if (failed) {
            status = runFailure(
                program,
                QStringLiteral("the watch stopped: %1 (%2; log %3)").arg(reason, summary, QString::fromStdString(options.logPath)));
        } else if (!quiet) {
            std::printf("watch ended: %s (%s; log %s)\n", qPrintable(reason), qPrintable(summary), options.logPath.c_str());
            std::fflush(stdout);
        }
        loop.quit();
    });
    watch.start();
    loop.exec();
    if (camera && !camera->error().empty())
        printWarnings(program, {"the simulated camera stopped: " + camera->error()});
    return status;
}

// The options every watch takes (folder, log, outputs, completeness, stopping rules). Throws UsageError.
LiveWatchOptions watchOptionsFrom(const QCommandLineParser& parser, const QString& folder)
{
    LiveWatchOptions o;
    o.folder = folder.toStdString();
    if (!has(parser, "out"))
        throw UsageError("--out LOG.jsonl is required");
    o.logPath = value(parser, "out").toStdString();
    o.csvPath = value(parser, "csv").toStdString();
    o.resultsDir = value(parser, "save-results").toStdString();
    o.finder.stableMs = parseInt(value(parser, "stable-ms"), QStringLiteral("stable-ms"));
    o.scanIntervalMs = parseInt(value(parser, "scan-ms"), QStringLiteral("scan-ms"));
    o.finder.incompleteMs = parseInt(value(parser, "incomplete-ms"), QStringLiteral("incomplete-ms"));
    if (o.finder.stableMs < 0 || o.scanIntervalMs < 1 || o.finder.incompleteMs < 0)
        throw UsageError("--stable-ms and --incomplete-ms must be >= 0 and --scan-ms >= 1");
    if (has(parser, "plane-pattern"))
        o.finder.planePattern = value(parser, "plane-pattern");
    if (has(parser, "planes-per-stack")
        && (o.finder.planesPerStack = parseInt(value(parser, "planes-per-stack"), QStringLiteral("planes-per-stack"))) < 1)
        throw UsageError("--planes-per-stack must be at least 1");
    if (has(parser, "max-stacks") && (o.maxStacks = parseInt(value(parser, "max-stacks"), QStringLiteral("max-stacks"))) < 1)
        throw UsageError("--max-stacks must be at least 1");
    if (has(parser, "exit-when-idle")
        && !((o.exitWhenIdleSeconds = parseNumber(value(parser, "exit-when-idle"), QStringLiteral("exit-when-idle"))) > 0))
        throw UsageError("--exit-when-idle must be a positive number of seconds");
    try {
        StackFinder check(o.folder, o.finder); // the pattern's syntax and groups, before anything starts
    } catch (const std::invalid_argument& e) {
        throw UsageError(std::string("--") + e.what());
    }
    for (const std::string* path : {&o.csvPath, &o.resultsDir})
        if (!path->empty() && sameFile(*path, o.logPath))
            throw UsageError("--out and --csv / --save-results name the same file");
    // The settings are an input: no output of the watch may be it (a link or another name included).
    if (has(parser, "settings"))
        for (const std::string* path : {&o.logPath, &o.csvPath})
            if (!path->empty() && sameFile(*path, value(parser, "settings").toStdString()))
                throw UsageError(*path + ": is the --settings file; the watch's outputs must be files of their own");
    return o;
}

int runWatch(const QStringList& args)
{
    QCommandLineParser parser;
    addWatchOptions(parser);
    if (auto status = parseOrExit(parser, args, QStringLiteral("watch DIR --out LOG.jsonl [options]")))
        return *status;
    const QString program = args.value(0);
    LiveWatchOptions options;
    try {
        const QStringList positional = parser.positionalArguments();
        if (positional.size() != 1)
            throw UsageError("give one folder to watch: wavefront-cli watch DIR --out LOG.jsonl");
        options = watchOptionsFrom(parser, positional.front());
        if (!QFileInfo(positional.front()).isDir())
            return runFailure(program, positional.front() + QStringLiteral(": not a folder"));
    } catch (const UsageError& e) {
        return usageFailure(program, QString::fromStdString(e.what()));
    }
    const QString settingsPath = value(parser, "settings");
    try {
        if (!settingsPath.isEmpty())
            options.settings = loadBatchSettings(settingsPath.toStdString());
        if (options.finder.planesPerStack == 0)
            options.finder.planesPerStack = int(options.settings.dataset.planes.size());
    } catch (const std::exception& e) {
        return runFailure(program, QStringLiteral("invalid settings, nothing was watched: ") + QString::fromStdString(e.what()));
    }
    std::unique_ptr<LiveCamera> camera;
    try {
        if (has(parser, "preset")) {
            if (value(parser, "preset") != QLatin1String("live"))
                throw UsageError("--preset: '" + value(parser, "preset").toStdString() + "' is not a live preset (live)");
            LiveCameraOptions co;
            co.folder = options.folder;
            co.settings = cameraSettingsFrom(parser, true);
            co.grid = parseInt(value(parser, "grid"), QStringLiteral("grid"));
            if (has(parser, "stacks") && (co.count = parseInt(value(parser, "stacks"), QStringLiteral("stacks"))) < 1)
                throw UsageError("--stacks must be at least 1");
            if (options.maxStacks == 0)
                options.maxStacks = co.count;
            if (settingsPath.isEmpty() && has(parser, "order")) // else the settings' default order
                options.settings.model.order = parseInt(value(parser, "order"), QStringLiteral("order"));
            try {
                checkSettings(options.settings.model, options.settings.solver);
                camera = std::make_unique<LiveCamera>(co);
            } catch (const std::invalid_argument& e) {
                throw UsageError(std::string("--") + e.what());
            }
        } else {
            for (const char* name : {"stacks", "order", "rate", "terms", "photons", "read-noise", "grid"})
                if (has(parser, name))
                    throw UsageError(std::string("--") + name + " belongs to --preset live");
        }
    } catch (const UsageError& e) {
        return usageFailure(program, QString::fromStdString(e.what()));
    }
    return runLiveWatch(program, options, has(parser, "quiet"), camera.get());
}

} // namespace wfs::cli
