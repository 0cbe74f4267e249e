// wavefront-cli bench oof|pupil|vectorial: times the OOF benchmark problem (Nikolic 2018), the pupil-function fit or the vectorial model, one JSON row per
// (grid, order): setup, per-evaluation and per-FFT medians, and the time to solution.
#include "CliCommon.h"
#include "Commands.h"

#include "engine/Benchmark.h"
#include "engine/Presets.h"
#include "engine/Workflow.h"
#include "io/Session.h"

#include <QFileInfo>

namespace wfs::cli {

namespace {

// `bench oof --threads 1,2` gives one row per thread count, but --threads is one of the shared solver
// options, parsed as a single number. So a list is taken from the arguments before they are parsed and
// its first entry stands in for it; the shared parsing then checks the rest of the command line as usual.
struct ThreadList {
    QStringList args;
    QString list; // empty: --threads was not given as a list
};

ThreadList takeThreadList(const QStringList& args)
{
    ThreadList out{args, {}};
    for (qsizetype i = 1; i < out.args.size(); ++i) {
        QString& arg = out.args[i];
        if (arg == QLatin1String("--"))
            break;
        QString* value = nullptr;
        QString prefix;
        if (arg == QLatin1String("--threads") && i + 1 < out.args.size()) {
            value = &out.args[++i];
        } else if (arg.startsWith(QLatin1String("--threads="))) {
            prefix = QStringLiteral("--threads=");
            value = &arg;
        }
        if (!value)
            continue;
        const QString text = value->mid(prefix.size());
        if (text.contains(QLatin1Char(','))) {
            out.list = text;
            *value = prefix + text.section(QLatin1Char(','), 0, 0);
        } else {
            out.list.clear(); // the last --threads wins, as in the parser
        }
    }
    return out;
}

// The options of `bench oof`, with the benchmark's own defaults.
void addBenchOptions(QCommandLineParser& parser)
{
    parser.setApplicationDescription(
        QStringLiteral("Time the OOF benchmark problem (oof), the pupil-function fit (pupil: the pupil preset's zonal phase and\n"
                       "amplitude to convergence, grids 64 and 256 unless --grid says), or the vectorial model's evaluation against\n"
                       "the scalar one's on the same grid (vectorial: 21 planes, order 6, a free and a fixed dipole); prints one JSON\n"
                       "object per line.\n"
                       "--grid, --order and --threads take comma-separated lists: one row per grid, order and thread count\n"
                       "(e.g. --threads 1,2 shows the scaling with CPU threads and each row's speedup and parallel_efficiency)."));
    parser.addPositionalArgument(QStringLiteral("problem"), QStringLiteral("oof, pupil or vectorial"));
    const OofBenchmarkSettings defaults; // the stated defaults are the benchmark's own
    addOptions(
        parser,
        {
            {QStringLiteral("grid"), QStringLiteral("Grid sizes, e.g. 64,128,256."), QStringLiteral("list"), QStringLiteral("64,128,256")},
            {QStringLiteral("order"), QStringLiteral("Zernike orders (2..9 in the reference sweeps)."), QStringLiteral("list"),
             QString::number(defaults.order)},
            {QStringLiteral("repeat"), QStringLiteral("Minimisations per row (the median is reported)."), QStringLiteral("R"),
             QString::number(defaults.repeat)},
            {QStringLiteral("eval-repeat"), QStringLiteral("Evaluations timed for eval_ms and FFTs for fft_ms."), QStringLiteral("E"),
             QString::number(defaults.evalRepeat)},
            {QStringLiteral("seed"), QStringLiteral("Noise seed of the data."), QStringLiteral("S"), QString::number(defaults.seed)},
            {QStringLiteral("no-solve"), QStringLiteral("Only time evaluations and FFTs (no minimisation).")},
            {QStringLiteral("session"),
             QStringLiteral("bench pupil: time a saved session's own fit (your stack and settings, e.g. --fit-sampling, "
                            "--regularization auto and a zonal pupil) instead of the preset; its solver settings unless "
                            "--threads or --max-iterations are given."),
             QStringLiteral("FILE.json")},
            {QStringLiteral("steps"), QStringLiteral("bench pupil --session: also time the recipe's two steps as a user would run them "
                                                     "by hand (the Zernike model's sampling fit, then the zonal pupil at that scale).")},
            {QStringLiteral("no-cuda-graph"), QStringLiteral("GPU backend: launch each kernel and FFT separately instead of one CUDA graph "
                                                             "per evaluation (to measure what the graphs save).")},
        });
    SolverSettings solverDefaults; // without --gtol / --ftol the OOF problem's own stopping rule
    solverDefaults.gradientTolerance = presetDefaults("oof").gradientTolerance;
    solverDefaults.functionTolerance = presetDefaults("oof").functionTolerance;
    solverDefaults.maxIterations = defaults.maxIterations;
    addSolverOptions(parser, solverDefaults);
}

// The rows: one per grid, order and thread count, in that nesting; the thread counts of one grid and order are
// measured side by side (runOofBenchmarks), so their speed-ups compare evaluations timed in turns.
void printBenchRows(const QCommandLineParser& parser, const ReconstructionRequest& options, const std::vector<int>& grids,
                    const std::vector<int>& orders, const std::vector<int>& threadCounts, int repeat, int evalRepeat)
{
    const bool solve = !parser.isSet(QStringLiteral("no-solve"));
    const std::uint64_t seed = std::uint64_t(parseNumber(parser.value(QStringLiteral("seed")), QStringLiteral("seed")));
    for (int grid : grids) {
        for (int order : orders) {
            std::vector<OofBenchmarkSettings> group;
            for (int threads : threadCounts) {
                OofBenchmarkSettings settings;
                settings.grid = grid;
                settings.order = order;
                settings.backend = options.backend;
                settings.evaluator = options.evaluator;
                settings.evaluator.threads = threads;
                settings.gradient = options.gradient;
                settings.optimizer = options.solver.optimizer;
                settings.maxIterations = options.solver.maxIterations;
                if (parser.isSet(QStringLiteral("gtol")))
                    settings.gradientTolerance = options.solver.gradientTolerance;
                if (parser.isSet(QStringLiteral("ftol")))
                    settings.functionTolerance = options.solver.functionTolerance;
                settings.repeat = repeat;
                settings.evalRepeat = evalRepeat;
                settings.solve = solve;
                settings.seed = seed;
                group.push_back(settings);
            }
            std::vector<OofBenchmarkRow> rows = runOofBenchmarks(group);
            double oneThreadEvalMs = 0.0;
            for (const OofBenchmarkRow& row : rows)
                if (row.settings.evaluator.threads == 1 && oneThreadEvalMs == 0.0)
                    oneThreadEvalMs = row.evalMs;
            for (OofBenchmarkRow& row : rows) {
                row.oneThreadEvalMs = oneThreadEvalMs;
                printJsonLine(benchmarkRowJson(row));
            }
        }
    }
}

// bench vectorial: grids 32, 64, 128 and order 6 unless given; 21 planes (the bead stack's), free and fixed dipoles.
void runVectorialBench(const QCommandLineParser& parser)
{
    const std::vector<int> grids = parseIntList(
        parser.isSet(QStringLiteral("grid")) ? parser.value(QStringLiteral("grid")) : QStringLiteral("32,64,128"), QStringLiteral("grid"));
    const std::vector<int> orders = parseIntList(
        parser.isSet(QStringLiteral("order")) ? parser.value(QStringLiteral("order")) : QStringLiteral("6"), QStringLiteral("order"));
    for (int grid : grids)
        for (int order : orders)
            for (bool free : {true, false}) {
                VectorialBenchmarkSettings settings;
                settings.grid = grid;
                settings.order = order;
                settings.freeDipole = free;
                settings.evalRepeat = parseInt(parser.value(QStringLiteral("eval-repeat")), QStringLiteral("eval-repeat"));
                printJsonLine(vectorialBenchmarkRowJson(runVectorialBenchmark(settings)));
            }
}

// The solver flags as a request's options, and the thread counts to sweep (--threads 1,2,4), each checked as a
// single --threads is. Throws UsageError or SettingsError.
ReconstructionRequest benchSolverOptions(const QCommandLineParser& parser, const ThreadList& threadList, std::vector<int>& threadCounts)
{
    SolverSettings solverSettings;
    applySolverFlags(parser, solverSettings);
    checkSolverSettings(solverSettings);
    ReconstructionRequest options;
    applySolverSettings(solverSettings, options);
    threadCounts = {options.evaluator.threads};
    if (!threadList.list.isEmpty()) {
        threadCounts = parseIntList(threadList.list, QStringLiteral("threads"));
        for (int t : threadCounts) {
            SolverSettings one = solverSettings;
            one.threads = t;
            checkSolverSettings(one);
        }
    }
    options.evaluator.cudaGraphs = !parser.isSet(QStringLiteral("no-cuda-graph"));
    return options;
}

// bench pupil --session: the session's own run through the one workflow (prepareRun), timed as the recipe and, with
// --steps, as its two steps by hand. The session's solver settings, with --threads and --max-iterations over them.
void runSessionPupilBench(const QCommandLineParser& parser, const ReconstructionRequest& options, const std::vector<int>& threadCounts)
{
    const std::string path = parser.value(QStringLiteral("session")).toStdString();
    OpenedSession opened = openSession(path);
    printWarnings(QStringLiteral("bench pupil"), warningTexts(opened.messages));
    PreparedRun run = prepareRun(std::move(opened.session));
    ReconstructionRequest request = std::move(run.request);
    if (parser.isSet(QStringLiteral("max-iterations")))
        request.solver.maxIterations = options.solver.maxIterations;
    const std::string name = QFileInfo(parser.value(QStringLiteral("session"))).completeBaseName().toStdString();
    for (int threads : threadCounts) {
        if (parser.isSet(QStringLiteral("threads")))
            request.evaluator.threads = threads;
        for (const PupilRecipeRow& row : runPupilRecipeBenchmark(request, parser.isSet(QStringLiteral("steps")))) {
            QJsonObject json = pupilRecipeRowJson(row, name);
            json.insert(QStringLiteral("threads"), request.evaluator.threads);
            printJsonLine(json);
        }
        if (!parser.isSet(QStringLiteral("threads")))
            break; // the session's own thread count, once
    }
}

// bench oof and bench pupil. Throws UsageError or SettingsError.
void runOofOrPupilBench(const QCommandLineParser& parser, const ThreadList& threadList, bool pupil)
{
    // The pupil bench's grids: the preset's teaching size and the pupil samples of a real 128 x 128 stack.
    const QString gridText =
        pupil && !parser.isSet(QStringLiteral("grid")) ? QStringLiteral("64,256") : parser.value(QStringLiteral("grid"));
    const std::vector<int> grids = parseIntList(gridText, QStringLiteral("grid"));
    const std::vector<int> orders = parseIntList(parser.value(QStringLiteral("order")), QStringLiteral("order"));
    const int repeat = parseInt(parser.value(QStringLiteral("repeat")), QStringLiteral("repeat"));
    const int evalRepeat = parseInt(parser.value(QStringLiteral("eval-repeat")), QStringLiteral("eval-repeat"));
    if (repeat < 1 || evalRepeat < 1)
        throw UsageError("--repeat and --eval-repeat must be at least 1");
    for (int g : grids)
        if (g < 16 || g % 2)
            throw UsageError("--grid: sizes must be even and at least 16");
    for (int o : orders)
        if (const std::string error = zernike::orderError(o); !error.empty())
            throw UsageError("--order: " + error);
    std::vector<int> threadCounts;
    const ReconstructionRequest options = benchSolverOptions(parser, threadList, threadCounts);
    if (!pupil) {
        printBenchRows(parser, options, grids, orders, threadCounts, repeat, evalRepeat);
        return;
    }
    if (parser.isSet(QStringLiteral("session"))) {
        runSessionPupilBench(parser, options, threadCounts);
        return;
    }
    const std::uint64_t seed = std::uint64_t(parseNumber(parser.value(QStringLiteral("seed")), QStringLiteral("seed")));
    for (int grid : grids)
        for (int threads : threadCounts) {
            PupilBenchmarkSettings settings;
            settings.grid = grid;
            settings.threads = threads;
            settings.seed = seed;
            printJsonLine(pupilBenchmarkRowJson(runPupilBenchmark(settings)));
        }
}

} // namespace

int runBench(const QStringList& originalArgs)
{
    if (originalArgs.value(1) == QLatin1String("live"))
        return runBenchLive(originalArgs); // LiveBenchCommand.cpp
    if (originalArgs.value(1) == QLatin1String("field"))
        return runBenchField(originalArgs); // FieldCommand.cpp
    const ThreadList threadList = takeThreadList(originalArgs);
    const QStringList& args = threadList.args;
    QCommandLineParser parser;
    addBenchOptions(parser);
    // The usage line names the problem asked about (`bench pupil --help`), oof when none is.
    const QString usage =
        QStringLiteral("bench %1 [options]").arg(args.contains(QStringLiteral("pupil")) ? QStringLiteral("pupil") : QStringLiteral("oof"));
    if (auto status = parseOrExit(parser, args, usage))
        return *status;
    const QString program = args.value(0);
    try {
        const QStringList positional = parser.positionalArguments();
        if (positional.size() != 1
            || (positional.front() != QLatin1String("oof") && positional.front() != QLatin1String("pupil")
                && positional.front() != QLatin1String("vectorial")))
            throw UsageError("expected the problem name: wavefront-cli bench oof|pupil|vectorial|live|field [options]");
        if (positional.front() == QLatin1String("vectorial"))
            runVectorialBench(parser);
        else
            runOofOrPupilBench(parser, threadList, positional.front() == QLatin1String("pupil"));
        return 0;
    } catch (const UsageError& e) {
        return usageFailure(program, QString::fromStdString(e.what()));
    } catch (const SettingsError& e) {
        return usageFailure(program, QStringLiteral("--") + QString::fromStdString(e.what()));
    } catch (const std::exception& e) {
        return runFailure(program, describe(e));
    }
}

} // namespace wfs::cli
