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

void addBenchLiveOptions(QCommandLineParser& parser)
{
    parser.setApplicationDescription(
        QStringLiteral("Live mode's speed: a simulated camera writes STACKS noisy 3-plane stacks at each rate into a temporary folder\n"
                       "(each written to a temporary name and renamed in) while the watch fits them, warm-started. One JSON row per\n"
                       "rate: fitted, skipped, failed, stacks_per_s_sustained (fitted stacks over the time from the first stack's last\n"
                       "byte to the last row), latency_median_s and latency_p95_s (a stack's last byte to its coefficients in the log),\n"
                       "fit_median_s, event_loop_max_gap_ms (the longest this thread's event loop waited while watching) and load_1min."));
    parser.addPositionalArgument(QStringLiteral("problem"), QStringLiteral("live"));
    addOptions(
        parser,
        {
            {QStringLiteral("stacks"), QStringLiteral("Stacks written per rate."), QStringLiteral("N"), QStringLiteral("40")},
            {QStringLiteral("order"), QStringLiteral("Fitted Zernike order."), QStringLiteral("n"), QStringLiteral("6")},
            {QStringLiteral("threads"), QStringLiteral("Threads per fit."), QStringLiteral("N"), QStringLiteral("1")},
            {QStringLiteral("no-uncertainty"),
             QStringLiteral("Skip the coefficients' uncertainties (the Fisher information per fit, about 15 ms at 128 x 128, order 6).")},
        });
    addCameraOptions(parser, true);
}

// What the command line asks for: the rates, the camera, the fit's settings, the stacks per rate.
struct BenchLivePlan {
    std::vector<double> rates;
    LiveCameraOptions camera;
    Session settings;
    int stacks = 0;
};

// Throws UsageError, or std::invalid_argument from the camera's checks.
BenchLivePlan benchLivePlan(const QCommandLineParser& parser)
{
    BenchLivePlan plan;
    if (parser.positionalArguments() != QStringList{QStringLiteral("live")})
        throw UsageError("expected: wavefront-cli bench live [options]");
    for (const QString& r : value(parser, "rate").split(QLatin1Char(','), Qt::SkipEmptyParts))
        plan.rates.push_back(parseNumber(r, QStringLiteral("rate")));
    plan.camera.settings = cameraSettingsFrom(parser, false);
    plan.camera.grid = parseInt(value(parser, "grid"), QStringLiteral("grid"));
    plan.stacks = parseInt(value(parser, "stacks"), QStringLiteral("stacks"));
    if (plan.stacks < 2)
        throw UsageError("--stacks must be at least 2");
    plan.settings.model.order = parseInt(value(parser, "order"), QStringLiteral("order"));
    plan.settings.solver.threads = parseInt(value(parser, "threads"), QStringLiteral("threads"));
    plan.settings.solver.computeUncertainty = !has(parser, "no-uncertainty");
    checkSettings(plan.settings.model, plan.settings.solver);
    for (double r : plan.rates) {
        plan.camera.settings.rate = r;
        const std::string error = liveCameraSettingsError(plan.camera.settings);
        if (!error.empty())
            throw UsageError("--" + error);
    }
    LiveCamera check(plan.camera); // the grid
    return plan;
}

// The log rows of one rate, as they come.
struct RateRows {
    std::vector<double> latencies, fits, written, finished;
    int fitted = 0, failed = 0, skipped = 0, warm = 0;

    void add(const QJsonObject& row)
    {
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
        finished.push_back(QDateTime::fromString(row.value(QStringLiteral("finished")).toString(), Qt::ISODateWithMs).toMSecsSinceEpoch()
                           * 1e-3);
    }
};

void printRateRow(const BenchLivePlan& plan, double rate, const RateRows& r, double maxGapMs)
{
    const double span = r.fitted > 1 ? r.finished.back() - *std::min_element(r.written.begin(), r.written.end()) : std::nan("");
    printJsonLine(QJsonObject{
        {QStringLiteral("bench"), QStringLiteral("live")},
        {QStringLiteral("rate"), rate},
        {QStringLiteral("stacks"), plan.stacks},
        {QStringLiteral("planes"), 3},
        {QStringLiteral("size"), plan.camera.grid},
        {QStringLiteral("order"), plan.settings.model.order},
        {QStringLiteral("threads"), plan.settings.solver.threads},
        {QStringLiteral("uncertainty"), plan.settings.solver.computeUncertainty},
        {QStringLiteral("fitted"), r.fitted},
        {QStringLiteral("warm_started"), r.warm},
        {QStringLiteral("skipped"), r.skipped},
        {QStringLiteral("failed"), r.failed},
        {QStringLiteral("stacks_per_s_sustained"), number(span > 0 ? double(r.fitted) / span : std::nan(""))},
        {QStringLiteral("latency_median_s"), number(quantile(r.latencies, 0.5))},
        {QStringLiteral("latency_p95_s"), number(quantile(r.latencies, 0.95))},
        {QStringLiteral("fit_median_s"), number(quantile(r.fits, 0.5))},
        {QStringLiteral("event_loop_max_gap_ms"), number(maxGapMs)},
        {QStringLiteral("load_1min"), number(loadAverage())},
    });
}

// One rate: the camera writes into a temporary folder while live mode watches it; prints its row. Returns the
// watch's exit status.
int runRate(const QString& program, BenchLivePlan plan, double rate)
{
    QTemporaryDir dir;
    if (!dir.isValid())
        return runFailure(program, QStringLiteral("cannot create a temporary folder"));
    QDir().mkpath(dir.filePath(QStringLiteral("in")));
    LiveCameraOptions& camera = plan.camera;
    camera.folder = dir.filePath(QStringLiteral("in")).toStdString();
    camera.settings.rate = rate;
    camera.count = plan.stacks;
    LiveCamera writer(camera);
    LiveWatchOptions o;
    o.folder = camera.folder;
    o.logPath = dir.filePath(QStringLiteral("live.jsonl")).toStdString();
    o.settings = plan.settings;
    o.maxStacks = plan.stacks;
    o.exitWhenIdleSeconds = 30; // a guard: the camera stopped early
    RateRows rows;
    // This thread's event loop while watching: the longest gap between ticks of a 5 ms timer.
    app::EventLoopGaps probe(5);
    probe.start();
    const int status = runLiveWatch(program, o, true, &writer, [&](const QJsonObject& row) { rows.add(row); });
    probe.stop();
    if (status == 0)
        printRateRow(plan, rate, rows, probe.maxMs());
    return status;
}

} // namespace

int runBenchLive(const QStringList& args)
{
    QCommandLineParser parser;
    addBenchLiveOptions(parser);
    if (auto status = parseOrExit(parser, args, QStringLiteral("bench live [options]")))
        return *status;
    const QString program = args.value(0);
    BenchLivePlan plan;
    try {
        plan = benchLivePlan(parser);
    } catch (const UsageError& e) {
        return usageFailure(program, QString::fromStdString(e.what()));
    } catch (const std::invalid_argument& e) {
        return usageFailure(program, QStringLiteral("--") + QString::fromStdString(e.what()));
    }
    for (double rate : plan.rates)
        if (const int status = runRate(program, plan, rate); status != 0)
            return status;
    return 0;
}

} // namespace wfs::cli
