// wavefront-cli bench oof: times the OOF benchmark problem (spec/oof-benchmark.md), one JSON row per
// (grid, order): setup, per-evaluation and per-FFT medians, and the time to solution.
#include "CliCommon.h"
#include "Commands.h"

#include "engine/Presets.h"

#include <QJsonArray>

#include <algorithm>
#include <chrono>

namespace wfs::cli {

namespace {
double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v.empty() ? 0.0 : v[v.size() / 2];
}

double secondsSince(std::chrono::steady_clock::time_point t0)
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}
} // namespace

int runBench(const QStringList& args)
{
    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral("Time the OOF benchmark problem; prints one JSON object per line.\n"
                                                    "Usage: wavefront-cli bench oof [options]"));
    parser.addPositionalArgument(QStringLiteral("problem"), QStringLiteral("oof"));
    parser.addOptions({
        {QStringLiteral("grid"), QStringLiteral("Grid sizes, e.g. 64,128,256."), QStringLiteral("list"), QStringLiteral("64,128,256")},
        {QStringLiteral("order"), QStringLiteral("Zernike orders (2..9 in the reference sweeps)."), QStringLiteral("list"), QStringLiteral("8")},
        {QStringLiteral("repeat"), QStringLiteral("Minimisations per row (the median is reported)."), QStringLiteral("R"), QStringLiteral("1")},
        {QStringLiteral("eval-repeat"), QStringLiteral("Evaluations timed for eval_ms and FFTs for fft_ms."), QStringLiteral("E"), QStringLiteral("15")},
        {QStringLiteral("seed"), QStringLiteral("Noise seed of the data."), QStringLiteral("S"), QStringLiteral("20180518")},
        {QStringLiteral("no-solve"), QStringLiteral("Only time evaluations and FFTs (no minimisation).")},
        {QStringLiteral("no-cuda-graph"), QStringLiteral("GPU backend: launch each kernel and FFT separately instead of one CUDA graph per evaluation (to measure what the graphs save).")},
    });
    addSolverOptions(parser);
    if (auto status = parseOrExit(parser, args))
        return *status;
    const QString program = args.value(0);
    try {
        const QStringList positional = parser.positionalArguments();
        if (positional.size() != 1 || positional.front() != QLatin1String("oof"))
            throw UsageError("expected the problem name: wavefront-cli bench oof [options]");
        const std::vector<int> grids = parseIntList(parser.value(QStringLiteral("grid")), QStringLiteral("grid"));
        const std::vector<int> orders = parseIntList(parser.value(QStringLiteral("order")), QStringLiteral("order"));
        const int repeat = parseInt(parser.value(QStringLiteral("repeat")), QStringLiteral("repeat"));
        const int evalRepeat = parseInt(parser.value(QStringLiteral("eval-repeat")), QStringLiteral("eval-repeat"));
        if (repeat < 1 || evalRepeat < 1)
            throw UsageError("--repeat and --eval-repeat must be at least 1");
        for (int g : grids)
            if (g < 16 || g % 2)
                throw UsageError("--grid: sizes must be even and at least 16");
        for (int o : orders)
            if (o < 1 || o > zernike::kMaxOrder)
                throw UsageError("--order: must be between 1 and " + std::to_string(zernike::kMaxOrder));
        ReconstructionRequest options;
        applySolverOptions(parser, options);
        options.evaluator.cudaGraphs = !parser.isSet(QStringLiteral("no-cuda-graph"));
        const bool solve = !parser.isSet(QStringLiteral("no-solve"));
        const std::uint64_t seed = std::uint64_t(parseNumber(parser.value(QStringLiteral("seed")), QStringLiteral("seed")));

        for (int grid : grids) {
            for (int order : orders) {
                const auto setupStart = std::chrono::steady_clock::now();
                PresetOptions presetOptions;
                presetOptions.grid = grid;
                presetOptions.order = order;
                presetOptions.seed = seed;
                const PresetCase c = makePreset("oof", presetOptions);
                auto problem = std::make_shared<const Problem>(c.spec);
                auto evaluator = makeEvaluator(options.backend, problem, options.evaluator, options.gradient);
                std::vector<double> gradient(size_t(problem->parameterCount()));
                evaluator->evaluate(c.start.data(), gradient.data()); // first touch outside the timing
                const double setupSeconds = secondsSince(setupStart);

                std::vector<double> evalTimes;
                for (int r = 0; r < evalRepeat; ++r) {
                    const auto t0 = std::chrono::steady_clock::now();
                    evaluator->evaluate(c.start.data(), gradient.data());
                    evalTimes.push_back(secondsSince(t0) * 1e3);
                }
                const double fftMs = evaluator->measureFftMs(evalRepeat);

                SolverOptions solver = c.solver;
                solver.optimizer = options.solver.optimizer;
                solver.maxIterations = options.solver.maxIterations;
                if (parser.isSet(QStringLiteral("gtol")))
                    solver.gradientTolerance = options.solver.gradientTolerance;
                if (parser.isSet(QStringLiteral("ftol")))
                    solver.functionTolerance = options.solver.functionTolerance;
                SolverSummary summary;
                std::vector<double> times;
                for (int r = 0; solve && r < repeat; ++r) {
                    summary = minimise(*evaluator, c.start, solver);
                    times.push_back(summary.seconds);
                    if (summary.termination == Termination::Failed)
                        return runFailure(program, QString::fromStdString("grid " + std::to_string(grid) + ": " + summary.message));
                }
                const BackendInfo info = evaluator->info();
                QJsonArray solution;
                for (double v : summary.parameters)
                    solution.append(v);
                QJsonObject row{
                    {QStringLiteral("problem"), QStringLiteral("oof")},
                    {QStringLiteral("grid"), grid},
                    {QStringLiteral("order"), order},
                    {QStringLiteral("params"), problem->parameterCount()},
                    {QStringLiteral("backend"), QString::fromStdString(info.backend)},
                    {QStringLiteral("device"), QString::fromStdString(info.device)},
                    {QStringLiteral("gradient"), QString::fromLatin1(gradientName(options.gradient))},
                    {QStringLiteral("precision"), QString::fromLatin1(precisionName(info.precision))},
                    {QStringLiteral("threads"), info.threads},
                    {QStringLiteral("seed"), QString::number(seed)},
                    {QStringLiteral("setup_seconds"), setupSeconds},
                    {QStringLiteral("seconds"), solve ? QJsonValue(median(times)) : QJsonValue()},
                    {QStringLiteral("iterations"), summary.iterations},
                    {QStringLiteral("cost_evaluations"), double(summary.costEvaluations)},
                    {QStringLiteral("gradient_evaluations"), double(summary.gradientEvaluations)},
                    {QStringLiteral("final_cost"), summary.finalCost},
                    {QStringLiteral("gradient_max_norm"), summary.gradientMaxNorm},
                    {QStringLiteral("termination"), solve ? QString::fromLatin1(terminationName(summary.termination)) : QStringLiteral("not-run")},
                    {QStringLiteral("eval_ms"), median(evalTimes)},
                    {QStringLiteral("fft_ms"), fftMs},
                    {QStringLiteral("eval_over_6fft"), median(evalTimes) / (6.0 * fftMs)},
                    {QStringLiteral("solution"), solution},
                };
                // GPU rows: how evaluations were launched, and the device-memory bytes of one evaluation
                // (gpu/model/ModelLayout.h) that eval_ms is measured against.
                if (!info.launch.empty())
                    row.insert(QStringLiteral("launch"), QString::fromStdString(info.launch));
                if (info.trafficBytes > 0)
                    row.insert(QStringLiteral("hbm_bytes"), info.trafficBytes);
                printJsonLine(row);
            }
        }
        return 0;
    } catch (const UsageError& e) {
        return usageFailure(program, QString::fromStdString(e.what()));
    } catch (const std::exception& e) {
        return runFailure(program, QString::fromStdString(e.what()));
    }
}

} // namespace wfs::cli
