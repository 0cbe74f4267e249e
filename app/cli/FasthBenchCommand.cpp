// wavefront-cli fasth-bench: times Householder products (spec/fasth.md) and prints one JSON object per
// line with the keys of spec/cli.md. The numerics live in core/fasth (and gpu/fasth); this file parses,
// loops over the grid and does the statistics.
#include "CliCommon.h"
#include "Commands.h"

#include "engine/BackendFactory.h"
#include "fasth/HouseholderRunner.h"

#include <QCommandLineParser>
#include <QJsonObject>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
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

struct Statistics {
    double median = 0, q1 = 0, q3 = 0;
};

// Quartiles by linear interpolation between order statistics.
Statistics statistics(std::vector<double> samples)
{
    std::sort(samples.begin(), samples.end());
    auto quantile = [&](double p) {
        const double position = p * double(samples.size() - 1);
        const size_t below = size_t(std::floor(position));
        const size_t above = std::min(below + 1, samples.size() - 1);
        return samples[below] + (position - double(below)) * (samples[above] - samples[below]);
    };
    return {quantile(0.5), quantile(0.25), quantile(0.75)};
}

double maxAbsError(const fasth::BenchResult& result, const fasth::BenchResult& reference, bool* comparedGradV)
{
    auto difference = [](const Eigen::MatrixXd& a, const Eigen::MatrixXd& b) -> double {
        if (a.rows() != b.rows() || a.cols() != b.cols())
            return std::numeric_limits<double>::infinity();
        return (a - b).cwiseAbs().maxCoeff();
    };
    double error = difference(result.output, reference.output);
    *comparedGradV = result.gradV.size() > 0 && reference.gradV.size() > 0;
    if (*comparedGradV)
        error = std::max(error, difference(result.gradV, reference.gradV));
    return error;
}

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

    const bool needSvdLayer = std::any_of(methods.begin(), methods.end(), fasth::isUseCase);
    int rows = 0;
    // (d, k, batch, precision, threads, pass) -> (block, ms); ordered by d for the summary.
    std::map<std::tuple<int, int, int, int, int, int>, std::pair<int, double>> bestBlock;
    try {
        for (int d : dimensions) {
            std::vector<int> ks = reflectors.empty() ? std::vector<int>{d} : reflectors;
            for (int k : ks) {
                if (k > d) {
                    std::fprintf(stderr, "%s: skipping k=%d > d=%d\n", qPrintable(program), k, d);
                    continue;
                }
                // The reflectors (a QR, O(d^2 k)) once per (d, k); each batch size only draws X and G.
                const auto base = fasth::BenchData::generate(d, k, batches.front(), std::uint64_t(seed), needSvdLayer,
                                                             lapackLayout);
                for (int m : batches) {
                    const auto data = m == base->m ? base : base->withBatch(m, std::uint64_t(seed));
                    for (Precision precision : precisions) {
                        for (int threads : threadCounts) {
                            for (BenchMethod method : methods) {
                                // Block sizes this method runs at: the grid for FastH by default, the
                                // paper's block for the other blocked methods, none for the rest.
                                std::vector<int> methodBlocks;
                                const bool blocked = fasth::isBlocked(method) || method == BenchMethod::SvdInverse;
                                if (!blocked)
                                    methodBlocks = {fasth::isUseCase(method) || method == BenchMethod::Dense ? 0 : 1};
                                else if (explicitBlocks)
                                    methodBlocks = blocks;
                                else if (method == BenchMethod::FastH)
                                    for (int b : kBlockGrid)
                                        if (b <= k || b == kBlockGrid.front())
                                            methodBlocks.push_back(b);
                                if (blocked && methodBlocks.empty())
                                    methodBlocks = {d <= 128 ? 16 : 32};
                                for (int block : methodBlocks) {
                                    fasth::BenchConfig config;
                                    config.precision = precision;
                                    config.blockSize = std::max(1, block);
                                    config.treeLevels = treeLevels;
                                    config.threads = threads;
                                    config.cudaGraph = parser.isSet(graphOption);
                                    runner->setProblem(data, config);
                                    for (Pass pass : passes) {
                                        std::string why;
                                        if (!runner->supports(method, pass, &why)) {
                                            // Only mention it when the user asked for this combination.
                                            if (!(fasth::isUseCase(method) && pass != Pass::Forward && passes.size() > 1))
                                                std::fprintf(stderr, "%s: skipping %s %s: %s\n", qPrintable(program),
                                                             fasth::methodName(method), fasth::passName(pass), why.c_str());
                                            continue;
                                        }
                                        try {
                                            runner->prepare(method, pass);
                                        } catch (const std::exception& error) {
                                            // One method failing to set up (a graph that cannot be captured,
                                            // a size a kernel cannot take) should not end the whole sweep.
                                            std::fprintf(stderr, "%s: skipping %s %s: %s\n", qPrintable(program),
                                                         fasth::methodName(method), fasth::passName(pass), error.what());
                                            continue;
                                        }
                                        for (int i = 0; i < warmup; ++i)
                                            runner->run(method, pass);
                                        std::vector<double> samples;
                                        samples.reserve(size_t(repeat));
                                        for (int i = 0; i < repeat; ++i)
                                            samples.push_back(runner->run(method, pass));
                                        const fasth::BenchResult result = runner->result();
                                        const fasth::BenchResult reference = runner->reference(method, pass);
                                        bool comparedGradV = false;
                                        const double error = maxAbsError(result, reference, &comparedGradV);
                                        const Statistics stats = statistics(samples);
                                        const int reportedK = fasth::isUseCase(method) ? d : k;
                                        const double flops = fasth::nominalFlops(method, pass, d, reportedK, m);

                                        QJsonObject row;
                                        row[QStringLiteral("d")] = d;
                                        row[QStringLiteral("k")] = reportedK;
                                        row[QStringLiteral("batch")] = m;
                                        row[QStringLiteral("block")] = runner->effectiveBlock(method);
                                        row[QStringLiteral("method")] = QString::fromLatin1(fasth::methodName(method));
                                        row[QStringLiteral("pass")] = QString::fromLatin1(fasth::passName(pass));
                                        row[QStringLiteral("backend")] = QString::fromStdString(runner->backend());
                                        row[QStringLiteral("device")] = QString::fromStdString(runner->device());
                                        row[QStringLiteral("precision")] = QString::fromLatin1(fasth::precisionName(precision));
                                        row[QStringLiteral("threads")] = threads;
                                        row[QStringLiteral("ms")] = stats.median;
                                        row[QStringLiteral("ms_q1")] = stats.q1;
                                        row[QStringLiteral("ms_q3")] = stats.q3;
                                        row[QStringLiteral("gflops")] = stats.median > 0 ? flops / (stats.median * 1e6) : 0.0;
                                        row[QStringLiteral("max_abs_error")] = error;
                                        row[QStringLiteral("repeat")] = repeat;
                                        row[QStringLiteral("flops")] = flops;
                                        row[QStringLiteral("grad_v_checked")] = comparedGradV;
                                        row[QStringLiteral("reflector_layout")] =
                                            lapackLayout ? QStringLiteral("lapack") : QStringLiteral("gaussian");
                                        if (backend == QLatin1String("gpu"))
                                            row[QStringLiteral("graph")] = config.cudaGraph;
                                        if (method == BenchMethod::TreeMerge)
                                            row[QStringLiteral("tree_levels")] = treeLevels;
                                        if (const QString text = note(method, pass); !text.isEmpty())
                                            row[QStringLiteral("note")] = text;
                                        printJsonLine(row);
                                        ++rows;

                                        if (method == BenchMethod::FastH) {
                                            const auto key = std::make_tuple(d, k, m, int(precision), threads, int(pass));
                                            auto [it, inserted] = bestBlock.try_emplace(key, block, stats.median);
                                            if (!inserted && stats.median < it->second.second)
                                                it->second = {block, stats.median};
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
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
