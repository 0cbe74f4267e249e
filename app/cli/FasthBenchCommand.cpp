// wavefront-cli fasth-bench: times Householder products (FastH, Mathiasen et al. 2020) and prints one JSON object per
// line with the keys of the command-line contract. The numerics, the grid loop and the statistics live in core/fasth
// (runSweep, shared with the FastH panel); this file parses, prints and picks the best block.
#include "CliCommon.h"
#include "Commands.h"

#include "engine/BackendFactory.h"
#include "fasth/FasthSweep.h"
#include "fasth/HouseholderRunner.h"

#include <QCommandLineParser>
#include <QJsonObject>

#include <algorithm>
#include <cstdio>
#include <map>
#include <stdexcept>
#include <thread>
#include <tuple>

namespace wfs::cli {

namespace {

using fasth::BenchMethod;
using fasth::Pass;

// The spec's CPU grid for the block size; the default sweep runs FastH at each of them.
const std::vector<int> kBlockGrid = {8, 16, 32, 48, 64, 128};
const std::vector<int> kDefaultDimensions = {64, 128, 256, 512, 1024};

// Through the backend factory, the one place that knows whether CUDA was compiled in.
std::unique_ptr<fasth::HouseholderRunner> makeRunner(const QString& backend)
{
    return makeFasthRunner(backend == QLatin1String("gpu") ? BackendKind::Gpu : BackendKind::Cpu);
}

QString note(BenchMethod method, Pass pass)
{
    if (pass == Pass::Forward)
        return {};
    if (method == BenchMethod::Library)
        return QStringLiteral("library has no reflector gradients: backward = block input and dL/dX (Q^T [A G])");
    if (method == BenchMethod::Dense)
        return QStringLiteral("dense backward: dL/dX = Q^T G and dL/dQ = G X^T");
    return {};
}

// The options and their defaults (the command-line contract of fasth-bench).
void addOptions(QCommandLineParser& parser)
{
    parser.setApplicationDescription(
        QStringLiteral("Times Householder products H_1 ... H_k X, one JSON object per line.\n"
                       "Without options: d = 64,128,256,512,1024, batch 32, float64, all hardware threads, passes forward,\n"
                       "backward and both; FastH at every block size of the grid (8,16,32,48,64,128), ut and tree at the\n"
                       "paper's block (32, 16 for d <= 128). gflops counts 4 d k m per apply, 12 d k m per backward and\n"
                       "16 d k m for both (the sequential algorithm's operations). The best FastH block per d goes to stderr."));
    wfs::cli::addOptions(
        parser,
        {
            {QStringLiteral("d"), QStringLiteral("Dimensions d (comma-separated; default 64,128,256,512,1024)."), QStringLiteral("list")},
            {QStringLiteral("batch"), QStringLiteral("Batch sizes m (default 32)."), QStringLiteral("list"), QStringLiteral("32")},
            {QStringLiteral("block"),
             QStringLiteral(
                 "Block sizes b for fasth, ut, tree and svd-inverse (default: the grid for fasth, the paper's b for the others)."),
             QStringLiteral("list")},
            {QStringLiteral("reflectors"), QStringLiteral("Reflector counts k <= d (default k = d)."), QStringLiteral("list")},
            {QStringLiteral("method"),
             QStringLiteral("Methods: sequential,fasth,ut,tree,library,dense (default all six), also sequential-fused "
                            "(GPU) and the SVD-layer use cases svd-inverse,lu-solve,svd-logdet,lu-logdet (forward)."),
             QStringLiteral("list"), QStringLiteral("sequential,fasth,ut,tree,library,dense")},
            {QStringLiteral("pass"), QStringLiteral("Passes: forward,backward,both (default all three)."), QStringLiteral("list"),
             QStringLiteral("forward,backward,both")},
            {QStringLiteral("precision"), QStringLiteral("double and/or float (default double)."), QStringLiteral("list"),
             QStringLiteral("double")},
            {QStringLiteral("backend"), QStringLiteral("cpu or gpu (default cpu)."), QStringLiteral("name"), QStringLiteral("cpu")},
            {QStringLiteral("threads"), QStringLiteral("CPU thread counts (default: all hardware threads)."), QStringLiteral("list")},
            {QStringLiteral("repeat"), QStringLiteral("Timed repetitions after warm-up (default 20)."), QStringLiteral("R"),
             QStringLiteral("20")},
            {QStringLiteral("warmup"), QStringLiteral("Untimed runs before timing (default 2)."), QStringLiteral("W"), QStringLiteral("2")},
            {QStringLiteral("tree-levels"), QStringLiteral("Pairwise merge levels of the tree method (default 1)."), QStringLiteral("L"),
             QStringLiteral("1")},
            {QStringLiteral("seed"), QStringLiteral("Random seed of the data (default 1)."), QStringLiteral("S"), QStringLiteral("1")},
            {QStringLiteral("cuda-graph"), QStringLiteral("GPU: capture each pass into a CUDA graph and time its replays.")},
            {QStringLiteral("reflector-layout"),
             QStringLiteral("lapack (default: [0..0,1,*] from a QR, needed by the library baseline; every method skips the "
                            "leading zeros) or gaussian (dense reflectors as in a trained SVD layer; no library rows)."),
             QStringLiteral("layout"), QStringLiteral("lapack")},
        });
}

void requirePositive(const std::vector<int>& values, const char* option)
{
    for (int value : values)
        if (value < 1)
            throw UsageError(std::string("--") + option + ": values must be positive, got " + std::to_string(value));
}

// The sweep the flags ask for. Throws UsageError.
fasth::SweepOptions sweepFromFlags(const QCommandLineParser& parser)
{
    auto value = [&](const char* name) { return parser.value(QLatin1String(name)); };
    auto isSet = [&](const char* name) { return parser.isSet(QLatin1String(name)); };
    fasth::SweepOptions sweep;
    sweep.dimensions = isSet("d") ? parseIntList(value("d"), QStringLiteral("d")) : kDefaultDimensions;
    sweep.batches = parseIntList(value("batch"), QStringLiteral("batch"));
    if (isSet("block"))
        sweep.blocks = parseIntList(value("block"), QStringLiteral("block"));
    // Without --block, FastH runs at every block of the grid; the other blocked methods at the paper's.
    sweep.fasthBlockGrid = kBlockGrid;
    if (isSet("reflectors"))
        sweep.reflectors = parseIntList(value("reflectors"), QStringLiteral("reflectors"));
    // The lists replace SweepOptions' defaults.
    sweep.methods.clear();
    sweep.passes.clear();
    sweep.precisions.clear();
    QStringList methodNames;
    for (BenchMethod method : fasth::allMethods())
        methodNames << QString::fromLatin1(fasth::methodName(method));
    for (const QString& name : parseWordList(value("method"), QStringLiteral("method"), methodNames))
        sweep.methods.push_back(*fasth::methodFromName(name.toStdString()));
    for (const QString& name : parseWordList(value("pass"), QStringLiteral("pass"),
                                             {QStringLiteral("forward"), QStringLiteral("backward"), QStringLiteral("both")}))
        sweep.passes.push_back(*fasth::passFromName(name.toStdString()));
    for (const QString& name :
         parseWordList(value("precision"), QStringLiteral("precision"),
                       {QStringLiteral("double"), QStringLiteral("float"), QStringLiteral("float64"), QStringLiteral("float32")}))
        sweep.precisions.push_back(*precisionFromName(name.toStdString()));
    const std::vector<QString> layout = parseWordList(value("reflector-layout"), QStringLiteral("reflector-layout"),
                                                      {QStringLiteral("lapack"), QStringLiteral("gaussian")});
    if (layout.size() != 1)
        throw UsageError("--reflector-layout: give one layout, lapack or gaussian");
    sweep.lapackLayout = layout.front() == QLatin1String("lapack");
    sweep.threads = isSet("threads") ? parseIntList(value("threads"), QStringLiteral("threads"))
                                     : std::vector<int>{int(std::max(1u, std::thread::hardware_concurrency()))};
    sweep.repeat = parseInt(value("repeat"), QStringLiteral("repeat"));
    sweep.warmup = parseInt(value("warmup"), QStringLiteral("warmup"));
    sweep.treeLevels = parseInt(value("tree-levels"), QStringLiteral("tree-levels"));
    sweep.seed = std::uint64_t(parseInt(value("seed"), QStringLiteral("seed")));
    sweep.cudaGraph = isSet("cuda-graph");
    requirePositive(sweep.dimensions, "d");
    requirePositive(sweep.batches, "batch");
    requirePositive(sweep.blocks, "block");
    requirePositive(sweep.reflectors, "reflectors");
    requirePositive(sweep.threads, "threads");
    if (sweep.repeat < 1)
        throw UsageError("--repeat: must be at least 1");
    if (sweep.warmup < 0)
        throw UsageError("--warmup: must not be negative");
    if (sweep.treeLevels < 0 || sweep.treeLevels > 30)
        throw UsageError("--tree-levels: must be between 0 and 30");
    if (!sweep.reflectors.empty()) {
        const int largest = *std::max_element(sweep.dimensions.begin(), sweep.dimensions.end());
        if (std::all_of(sweep.reflectors.begin(), sweep.reflectors.end(), [&](int k) { return k > largest; }))
            throw UsageError("--reflectors: every k exceeds the largest --d (k <= d is required)");
    }
    return sweep;
}

// One row with the keys of the command-line contract.
QJsonObject rowJson(const fasth::SweepRow& r, bool gpu)
{
    QJsonObject row;
    row[QStringLiteral("d")] = r.d;
    row[QStringLiteral("k")] = r.k;
    row[QStringLiteral("batch")] = r.batch;
    row[QStringLiteral("block")] = r.block;
    row[QStringLiteral("method")] = QString::fromLatin1(fasth::methodName(r.method));
    row[QStringLiteral("pass")] = QString::fromLatin1(fasth::passName(r.pass));
    row[QStringLiteral("backend")] = QString::fromStdString(r.backend);
    row[QStringLiteral("device")] = QString::fromStdString(r.device);
    row[QStringLiteral("precision")] = QString::fromLatin1(precisionName(r.precision));
    row[QStringLiteral("threads")] = r.threads;
    if (!r.simd.empty())
        row[QStringLiteral("simd")] = QString::fromStdString(r.simd);
    row[QStringLiteral("ms")] = r.ms;
    row[QStringLiteral("ms_q1")] = r.msQ1;
    row[QStringLiteral("ms_q3")] = r.msQ3;
    row[QStringLiteral("gflops")] = r.gflops;
    row[QStringLiteral("max_abs_error")] = r.maxAbsError;
    row[QStringLiteral("repeat")] = r.repeat;
    row[QStringLiteral("flops")] = r.flops;
    row[QStringLiteral("grad_v_checked")] = r.gradVChecked;
    row[QStringLiteral("reflector_layout")] = r.lapackLayout ? QStringLiteral("lapack") : QStringLiteral("gaussian");
    if (gpu)
        row[QStringLiteral("graph")] = r.cudaGraph;
    if (r.method == BenchMethod::TreeMerge)
        row[QStringLiteral("tree_levels")] = r.treeLevels;
    if (const QString text = note(r.method, r.pass); !text.isEmpty())
        row[QStringLiteral("note")] = text;
    return row;
}

// A skipped combination, on stderr when the user asked for it.
void reportSkip(const QString& program, const fasth::SweepSkip& skip, size_t passCount)
{
    switch (skip.reason) {
    case fasth::SweepSkip::Reason::ReflectorsExceedDimension:
        std::fprintf(stderr, "%s: skipping k=%d > d=%d\n", qPrintable(program), skip.k, skip.d);
        return;
    case fasth::SweepSkip::Reason::Unsupported:
        // Only mention it when the user asked for this combination.
        if (fasth::isUseCase(skip.method) && skip.pass != Pass::Forward && passCount > 1)
            return;
        break;
    case fasth::SweepSkip::Reason::PrepareFailed:
        // One method failing to set up (a graph that cannot be captured, a size a kernel cannot
        // take) does not end the whole sweep; it is reported here.
        break;
    }
    std::fprintf(stderr, "%s: skipping %s %s: %s\n", qPrintable(program), fasth::methodName(skip.method), fasth::passName(skip.pass),
                 skip.why.c_str());
}

} // namespace

int runFasthBench(const QStringList& args)
{
    const QString program = args.value(0);
    QCommandLineParser parser;
    addOptions(parser);
    if (const auto exit = parseOrExit(parser, args))
        return *exit;
    if (!parser.positionalArguments().isEmpty())
        return usageFailure(program, QStringLiteral("unexpected argument '%1'").arg(parser.positionalArguments().first()));

    fasth::SweepOptions sweep;
    QString backend;
    try {
        sweep = sweepFromFlags(parser);
        backend = parseWordList(parser.value(QStringLiteral("backend")), QStringLiteral("backend"),
                                {QStringLiteral("cpu"), QStringLiteral("gpu")})
                      .front();
        if (parser.value(QStringLiteral("backend")).contains(QLatin1Char(',')))
            throw UsageError("--backend: give one backend, cpu or gpu");
    } catch (const UsageError& error) {
        return usageFailure(program, QString::fromStdString(error.what()));
    }

    std::unique_ptr<fasth::HouseholderRunner> runner;
    try {
        runner = makeRunner(backend);
    } catch (const std::exception& error) {
        return runFailure(program, QString::fromStdString(error.what())
                                       + (backend == QLatin1String("gpu") ? QStringLiteral("; use --backend cpu") : QString()));
    }

    int rows = 0;
    // (d, k, batch, precision, threads, pass) -> (block, ms); ordered by d for the summary.
    std::map<std::tuple<int, int, int, int, int, int>, std::pair<int, double>> bestBlock;
    fasth::SweepCallbacks callbacks;
    callbacks.skip = [&](const fasth::SweepSkip& skip) { reportSkip(program, skip, sweep.passes.size()); };
    callbacks.row = [&](const fasth::SweepRow& r) {
        printJsonLine(rowJson(r, backend == QLatin1String("gpu")));
        ++rows;
        if (r.method == BenchMethod::FastH) {
            // Keyed by the block asked for, as the grid names it.
            const auto key = std::make_tuple(r.d, r.k, r.batch, int(r.precision), r.threads, int(r.pass));
            auto [it, inserted] = bestBlock.try_emplace(key, r.requestedBlock, r.ms);
            if (!inserted && r.ms < it->second.second)
                it->second = {r.requestedBlock, r.ms};
        }
    };
    try {
        fasth::runSweep(*runner, sweep, callbacks);
    } catch (const std::exception& error) {
        return runFailure(program, QString::fromStdString(error.what()));
    }
    if (rows == 0)
        return runFailure(program, QStringLiteral("nothing was timed: no method and pass of the request runs on the %1 "
                                                  "backend (see the lines above)")
                                       .arg(backend));
    for (const auto& [key, best] : bestBlock) {
        const auto& [d, k, m, precision, threads, pass] = key;
        std::fprintf(stderr, "best fasth block for d=%d k=%d batch=%d %s threads=%d %s: %d (%.3f ms)\n", d, k, m,
                     precisionName(Precision(precision)), threads, fasth::passName(Pass(pass)), best.first, best.second);
    }
    return 0;
}

} // namespace wfs::cli
