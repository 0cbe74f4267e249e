// wavefront-cli bench live: the simulated camera (engine/LiveCamera.h, a writer thread) writes stacks into a
// temporary folder at each given rate while live mode (engine/LiveWatch.h) watches it, exactly as `watch
// --preset live` runs; one JSON row per rate: stacks per second sustained, the latency from a stack's last
// byte to its logged coefficients (median, 95th percentile), skipped stacks, and how long this (the caller's)
// thread's event loop was ever kept waiting while watching.
#include "Commands.h"
#include "LiveCommon.h"

#include "../common/EventLoopGaps.h"

#include <QJsonArray>
#include <QTemporaryDir>

#include <algorithm>
#include <cmath>
#include <vector>

namespace wfs::cli {

namespace {

using app::loadAverage;
using app::quantile;

QJsonValue number(double v)
{
    return std::isfinite(v) ? QJsonValue(v) : QJsonValue();
}

} // namespace

int runBenchLive(const QStringList& args)
{
    QCommandLineParser parser;
    parser.setApplicationDescription(
        QStringLiteral("Live mode's speed: a simulated camera writes STACKS noisy 3-plane stacks at each rate into a temporary folder\n"
                       "(each written to a temporary name and renamed in) while the watch fits them, warm-started. One JSON row per\n"
                       "rate: fitted, skipped, failed, stacks_per_s_sustained (fitted stacks over the time from the first stack's last\n"
                       "byte to the last row), latency_median_s and latency_p95_s (a stack's last byte to its coefficients in the log),\n"
                       "fit_median_s, event_loop_max_gap_ms (the longest this thread's event loop waited while watching) and load_1min."));
    parser.addPositionalArgument(QStringLiteral("problem"), QStringLiteral("live"));
    addOptions(parser,
               {
                   {QStringLiteral("stacks"), QStringLiteral("Stacks written per rate."), QStringLiteral("N"), QStringLiteral("40")},
                   {QStringLiteral("order"), QStringLiteral("Fitted Zernike order."), QStringLiteral("n"), QStringLiteral("6")},
                   {QStringLiteral("threads"), QStringLiteral("Threads per fit."), QStringLiteral("N"), QStringLiteral("1")},
                   {QStringLiteral("no-uncertainty"),
                    QStringLiteral("Skip the coefficients' uncertainties (a Hessian per fit, about 40 ms at 128 x 128, order 6).")},
               });
    addCameraOptions(parser, true);
    if (auto status = parseOrExit(parser, args, QStringLiteral("bench live [options]")))
        return *status;
    const QString program = args.value(0);
    std::vector<double> rates;
    LiveCameraOptions camera;
    Session settings;
    int stacks = 0;
    try {
        if (parser.positionalArguments() != QStringList{QStringLiteral("live")})
            throw UsageError("expected: wavefront-cli bench live [options]");
        for (const QString& r : value(parser, "rate").split(QLatin1Char(','), Qt::SkipEmptyParts))
            rates.push_back(parseNumber(r, QStringLiteral("rate")));
        camera.settings = cameraSettingsFrom(parser, false);
        camera.grid = parseInt(value(parser, "grid"), QStringLiteral("grid"));
        stacks = parseInt(value(parser, "stacks"), QStringLiteral("stacks"));
        if (stacks < 2)
            throw UsageError("--stacks must be at least 2");
        settings.model.order = parseInt(value(parser, "order"), QStringLiteral("order"));
        settings.solver.threads = parseInt(value(parser, "threads"), QStringLiteral("threads"));
        settings.solver.computeUncertainty = !has(parser, "no-uncertainty");
        checkSettings(settings.model, settings.solver);
        for (double r : rates) {
            camera.settings.rate = r;
            const std::string error = liveCameraSettingsError(camera.settings);
            if (!error.empty())
                throw UsageError("--" + error);
        }
        LiveCamera check(camera); // the grid
    } catch (const UsageError& e) {
        return usageFailure(program, QString::fromStdString(e.what()));
    } catch (const std::invalid_argument& e) {
        return usageFailure(program, QStringLiteral("--") + QString::fromStdString(e.what()));
    }

    for (double rate : rates) {
        QTemporaryDir dir;
        if (!dir.isValid())
            return runFailure(program, QStringLiteral("cannot create a temporary folder"));
        QDir().mkpath(dir.filePath(QStringLiteral("in")));
        camera.folder = dir.filePath(QStringLiteral("in")).toStdString();
        camera.settings.rate = rate;
        camera.count = stacks;
        LiveCamera writer(camera);
        LiveWatchOptions o;
        o.folder = camera.folder;
        o.logPath = dir.filePath(QStringLiteral("live.jsonl")).toStdString();
        o.settings = settings;
        o.maxStacks = stacks;
        o.exitWhenIdleSeconds = 30; // a guard: the camera stopped early
        std::vector<double> latencies, fits, written, finished;
        int fitted = 0, failed = 0, skipped = 0, warm = 0;
        // This thread's event loop while watching: the longest gap between ticks of a 5 ms timer.
        app::EventLoopGaps probe(5);
        probe.start();
        const int status = runLiveWatch(program, o, true, &writer, [&](const QJsonObject& row) {
            skipped += int(row.value(QStringLiteral("skipped")).toArray().size());
            if (row.value(QStringLiteral("status")).toString() != QLatin1String("ok")) {
                ++failed;
                return;
            }
            ++fitted;
            warm += row.value(QStringLiteral("warm_started")).toBool();
            latencies.push_back(row.value(QStringLiteral("latency_seconds")).toDouble());
            fits.push_back(row.value(QStringLiteral("fit_seconds")).toDouble());
            written.push_back(QDateTime::fromString(row.value(QStringLiteral("written")).toString(), Qt::ISODateWithMs).toMSecsSinceEpoch()
                              * 1e-3);
            finished.push_back(
                QDateTime::fromString(row.value(QStringLiteral("finished")).toString(), Qt::ISODateWithMs).toMSecsSinceEpoch() * 1e-3);
        });
        probe.stop();
        if (status != 0)
            return status;
        const double span = fitted > 1 ? finished.back() - *std::min_element(written.begin(), written.end()) : std::nan("");
        printJsonLine(QJsonObject{
            {QStringLiteral("bench"), QStringLiteral("live")},
            {QStringLiteral("rate"), rate},
            {QStringLiteral("stacks"), stacks},
            {QStringLiteral("planes"), 3},
            {QStringLiteral("size"), camera.grid},
            {QStringLiteral("order"), settings.model.order},
            {QStringLiteral("threads"), settings.solver.threads},
            {QStringLiteral("uncertainty"), settings.solver.computeUncertainty},
            {QStringLiteral("fitted"), fitted},
            {QStringLiteral("warm_started"), warm},
            {QStringLiteral("skipped"), skipped},
            {QStringLiteral("failed"), failed},
            {QStringLiteral("stacks_per_s_sustained"), number(span > 0 ? double(fitted) / span : std::nan(""))},
            {QStringLiteral("latency_median_s"), number(quantile(latencies, 0.5))},
            {QStringLiteral("latency_p95_s"), number(quantile(latencies, 0.95))},
            {QStringLiteral("fit_median_s"), number(quantile(fits, 0.5))},
            {QStringLiteral("event_loop_max_gap_ms"), number(probe.maxMs())},
            {QStringLiteral("load_1min"), number(loadAverage())},
        });
    }
    return 0;
}

} // namespace wfs::cli
