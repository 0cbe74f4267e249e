// wavefront-cli fasth-bench: times Householder products (spec/fasth.md) and prints one JSON object per
// line with the keys of spec/cli.md. The numerics, the grid loop and the statistics live in core/fasth
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
using fasth::Precision;

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

} // namespace

int runFasthBench(const QStringList& args)
{
    const QString program = args.value(0);
    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral(
        "Times Householder products H_1 ... H_k X (spec/fasth.md), one JSON object per line.\n"
        "Without options: d = 64,128,256,512,1024, batch 32, float64, all hardware threads, passes forward,\n"
        "backward and both; FastH at every block size of the grid (8,16,32,48,64,128), ut and tree at the\n"
        "paper's block (32, 16 for d <= 128). gflops counts 4 d k m per apply, 12 d k m per backward and\n"
        "16 d k m for both (the sequential algorithm's operations). The best FastH block per d goes to stderr."));
    const QCommandLineOption dOption(QStringLiteral("d"), QStringLiteral("Dimensions d (comma-separated)."),
                                     QStringLiteral("list"));
    const QCommandLineOption batchOption(QStringLiteral("batch"), QStringLiteral("Batch sizes m (default 32)."),
                                         QStringLiteral("list"), QStringLiteral("32"));
    const QCommandLineOption blockOption(QStringLiteral("block"),
                                         QStringLiteral("Block sizes b for fasth, ut, tree and svd-inverse (default: "
                                                        "the grid for fasth, the paper's b for the others)."),
                                         QStringLiteral("list"));
    const QCommandLineOption reflectorsOption(QStringLiteral("reflectors"),
                                              QStringLiteral("Reflector counts k <= d (default k = d)."),
                                              QStringLiteral("list"));
    const QCommandLineOption methodOption(
        QStringLiteral("method"),
        QStringLiteral("Methods: sequential,fasth,ut,tree,library,dense (default all six), also sequential-fused "
                       "(GPU) and the SVD-layer use cases svd-inverse,lu-solve,svd-logdet,lu-logdet (forward)."),
        QStringLiteral("list"), QStringLiteral("sequential,fasth,ut,tree,library,dense"));
    const QCommandLineOption passOption(QStringLiteral("pass"), QStringLiteral("Passes: forward,backward,both."),
                                        QStringLiteral("list"), QStringLiteral("forward,backward,both"));
    const QCommandLineOption precisionOption(QStringLiteral("precision"),
                                             QStringLiteral("double and/or float (default double)."),
                                             QStringLiteral("list"), QStringLiteral("double"));
    const QCommandLineOption backendOption(QStringLiteral("backend"), QStringLiteral("cpu or gpu (default cpu)."),
                                           QStringLiteral("name"), QStringLiteral("cpu"));
    const QCommandLineOption threadsOption(QStringLiteral("threads"),
                                           QStringLiteral("CPU thread counts (default: all hardware threads)."),
                                           QStringLiteral("list"));
    const QCommandLineOption repeatOption(QStringLiteral("repeat"),
                                          QStringLiteral("Timed repetitions after warm-up (default 20)."),
                                          QStringLiteral("R"), QStringLiteral("20"));
    const QCommandLineOption warmupOption(QStringLiteral("warmup"),
                                          QStringLiteral("Untimed runs before timing (default 2)."),
                                          QStringLiteral("W"), QStringLiteral("2"));
    const QCommandLineOption treeOption(QStringLiteral("tree-levels"),
                                        QStringLiteral("Pairwise merge levels of the tree method (default 1)."),
                                        QStringLiteral("L"), QStringLiteral("1"));
    const QCommandLineOption seedOption(QStringLiteral("seed"), QStringLiteral("Random seed of the data (default 1)."),
                                        QStringLiteral("S"), QStringLiteral("1"));
    const QCommandLineOption layoutOption(
        QStringLiteral("reflector-layout"),
        QStringLiteral("lapack (default: [0..0,1,*] from a QR, needed by the library baseline; every method skips the "
                       "leading zeros) or gaussian (dense reflectors as in a trained SVD layer; no library rows)."),
        QStringLiteral("layout"), QStringLiteral("lapack"));
    const QCommandLineOption graphOption(QStringLiteral("cuda-graph"),
                                         QStringLiteral("GPU: capture each pass into a CUDA graph and time its replays."));
    parser.addOptions({dOption, batchOption, blockOption, reflectorsOption, methodOption, passOption, precisionOption,
                       backendOption, threadsOption, repeatOption, warmupOption, treeOption, seedOption, graphOption,
                       layoutOption});
    if (const auto exit = parseOrExit(parser, args))
        return *exit;
    if (!parser.positionalArguments().isEmpty())
        return usageFailure(program, QStringLiteral("unexpected argument '%1'").arg(parser.positionalArguments().first()));

    std::vector<int> dimensions, batches, blocks, reflectors, threadCounts;
    std::vector<BenchMethod> methods;
    std::vector<Pass> passes;
    std::vector<Precision> precisions;
    QString backend;
    int repeat = 0, warmup = 0, treeLevels = 0, seed = 0;
    bool lapackLayout = true;
    const bool explicitBlocks = parser.isSet(blockOption);
    try {
        dimensions = parser.isSet(dOption) ? parseIntList(parser.value(dOption), QStringLiteral("d")) : kDefaultDimensions;
        batches = parseIntList(parser.value(batchOption), QStringLiteral("batch"));
        if (explicitBlocks)
            blocks = parseIntList(parser.value(blockOption), QStringLiteral("block"));
        if (parser.isSet(reflectorsOption))
            reflectors = parseIntList(parser.value(reflectorsOption), QStringLiteral("reflectors"));
        QStringList methodNames;
        for (BenchMethod method : fasth::allMethods())
            methodNames << QString::fromLatin1(fasth::methodName(method));
        for (const QString& name : parseWordList(parser.value(methodOption), QStringLiteral("method"), methodNames))
            methods.push_back(*fasth::methodFromName(name.toStdString()));
        for (const QString& name : parseWordList(parser.value(passOption), QStringLiteral("pass"),
                                                 {QStringLiteral("forward"), QStringLiteral("backward"), QStringLiteral("both")}))
            passes.push_back(*fasth::passFromName(name.toStdString()));
        for (const QString& name :
             parseWordList(parser.value(precisionOption), QStringLiteral("precision"),
                           {QStringLiteral("double"), QStringLiteral("float"), QStringLiteral("float64"), QStringLiteral("float32")}))
            precisions.push_back(*fasth::precisionFromName(name.toStdString()));
        backend = parseWordList(parser.value(backendOption), QStringLiteral("backend"),
                                {QStringLiteral("cpu"), QStringLiteral("gpu")})
                      .front();
        if (parser.value(backendOption).contains(QLatin1Char(',')))
            throw UsageError("--backend: give one backend, cpu or gpu");
        const std::vector<QString> layout = parseWordList(parser.value(layoutOption), QStringLiteral("reflector-layout"),
                                                          {QStringLiteral("lapack"), QStringLiteral("gaussian")});
        if (layout.size() != 1)
            throw UsageError("--reflector-layout: give one layout, lapack or gaussian");
        lapackLayout = layout.front() == QLatin1String("lapack");
        threadCounts = parser.isSet(threadsOption)
                           ? parseIntList(parser.value(threadsOption), QStringLiteral("threads"))
                           : std::vector<int>{int(std::max(1u, std::thread::hardware_concurrency()))};
        repeat = parseInt(parser.value(repeatOption), QStringLiteral("repeat"));
        warmup = parseInt(parser.value(warmupOption), QStringLiteral("warmup"));
        treeLevels = parseInt(parser.value(treeOption), QStringLiteral("tree-levels"));
        seed = parseInt(parser.value(seedOption), QStringLiteral("seed"));
        auto requirePositive = [](const std::vector<int>& values, const char* option) {
            for (int value : values)
                if (value < 1)
                    throw UsageError(std::string("--") + option + ": values must be positive, got " + std::to_string(value));
        };
        requirePositive(dimensions, "d");
        requirePositive(batches, "batch");
        requirePositive(blocks, "block");
        requirePositive(reflectors, "reflectors");
        requirePositive(threadCounts, "threads");
        if (repeat < 1)
            throw UsageError("--repeat: must be at least 1");
        if (warmup < 0)
            throw UsageError("--warmup: must not be negative");
        if (treeLevels < 0 || treeLevels > 30)
            throw UsageError("--tree-levels: must be between 0 and 30");
        if (!reflectors.empty()) {
            const int largest = *std::max_element(dimensions.begin(), dimensions.end());
            if (std::all_of(reflectors.begin(), reflectors.end(), [&](int k) { return k > largest; }))
                throw UsageError("--reflectors: every k exceeds the largest --d (k <= d is required)");
        }
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

    fasth::SweepOptions sweep;
    sweep.dimensions = dimensions;
    sweep.reflectors = reflectors;
    sweep.batches = batches;
    sweep.blocks = blocks;
    // Without --block, FastH runs at every block of the grid; the other blocked methods at the paper's.
    sweep.fasthBlockGrid = kBlockGrid;
    sweep.methods = methods;
    sweep.passes = passes;
    sweep.precisions = precisions;
    sweep.threads = threadCounts;
    sweep.repeat = repeat;
    sweep.warmup = warmup;
    sweep.treeLevels = treeLevels;
    sweep.seed = std::uint64_t(seed);
    sweep.lapackLayout = lapackLayout;
    sweep.cudaGraph = parser.isSet(graphOption);

    int rows = 0;
    // (d, k, batch, precision, threads, pass) -> (block, ms); ordered by d for the summary.
    std::map<std::tuple<int, int, int, int, int, int>, std::pair<int, double>> bestBlock;
    fasth::SweepCallbacks callbacks;
    callbacks.skip = [&](const fasth::SweepSkip& skip) {
        switch (skip.reason) {
        case fasth::SweepSkip::Reason::ReflectorsExceedDimension:
            std::fprintf(stderr, "%s: skipping k=%d > d=%d\n", qPrintable(program), skip.k, skip.d);
            return;
        case fasth::SweepSkip::Reason::Unsupported:
            // Only mention it when the user asked for this combination.
            if (fasth::isUseCase(skip.method) && skip.pass != Pass::Forward && passes.size() > 1)
                return;
            break;
        case fasth::SweepSkip::Reason::PrepareFailed:
            // One method failing to set up (a graph that cannot be captured, a size a kernel cannot
            // take) does not end the whole sweep; it is reported here.
            break;
        }
        std::fprintf(stderr, "%s: skipping %s %s: %s\n", qPrintable(program), fasth::methodName(skip.method),
                     fasth::passName(skip.pass), skip.why.c_str());
    };
    callbacks.row = [&](const fasth::SweepRow& r) {
        QJsonObject row;
        row[QStringLiteral("d")] = r.d;
        row[QStringLiteral("k")] = r.k;
        row[QStringLiteral("batch")] = r.batch;
        row[QStringLiteral("block")] = r.block;
        row[QStringLiteral("method")] = QString::fromLatin1(fasth::methodName(r.method));
        row[QStringLiteral("pass")] = QString::fromLatin1(fasth::passName(r.pass));
        row[QStringLiteral("backend")] = QString::fromStdString(r.backend);
        row[QStringLiteral("device")] = QString::fromStdString(r.device);
        row[QStringLiteral("precision")] = QString::fromLatin1(fasth::precisionName(r.precision));
        row[QStringLiteral("threads")] = r.threads;
        row[QStringLiteral("ms")] = r.ms;
        row[QStringLiteral("ms_q1")] = r.msQ1;
        row[QStringLiteral("ms_q3")] = r.msQ3;
        row[QStringLiteral("gflops")] = r.gflops;
        row[QStringLiteral("max_abs_error")] = r.maxAbsError;
        row[QStringLiteral("repeat")] = r.repeat;
        row[QStringLiteral("flops")] = r.flops;
        row[QStringLiteral("grad_v_checked")] = r.gradVChecked;
        row[QStringLiteral("reflector_layout")] = r.lapackLayout ? QStringLiteral("lapack") : QStringLiteral("gaussian");
        if (backend == QLatin1String("gpu"))
            row[QStringLiteral("graph")] = r.cudaGraph;
        if (r.method == BenchMethod::TreeMerge)
            row[QStringLiteral("tree_levels")] = r.treeLevels;
        if (const QString text = note(r.method, r.pass); !text.isEmpty())
            row[QStringLiteral("note")] = text;
        printJsonLine(row);
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
                     fasth::precisionName(Precision(precision)), threads, fasth::passName(Pass(pass)), best.first,
                     best.second);
    }
    return 0;
}

} // namespace wfs::cli
