#include "FasthSweep.h"

#include "simd/Kernels.h"
#include "simd/SimdLevel.h"
#include "Householder.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace wfs::fasth {

SampleStatistics sampleStatistics(std::vector<double> samples)
{
    if (samples.empty())
        return {};
    std::sort(samples.begin(), samples.end());
    auto quantile = [&](double p) {
        const double position = p * double(samples.size() - 1);
        const size_t below = size_t(std::floor(position));
        const size_t above = std::min(below + 1, samples.size() - 1);
        return samples[below] + (position - double(below)) * (samples[above] - samples[below]);
    };
    return {quantile(0.5), quantile(0.25), quantile(0.75)};
}

double maxAbsError(const BenchResult& result, const BenchResult& reference, bool* comparedGradV)
{
    auto difference = [](const Eigen::MatrixXd& a, const Eigen::MatrixXd& b) -> double {
        if (a.rows() != b.rows() || a.cols() != b.cols())
            return std::numeric_limits<double>::infinity();
        if (a.size() == 0)
            return 0.0;
        return (a - b).cwiseAbs().maxCoeff();
    };
    double error = difference(result.output, reference.output);
    const bool compared = result.gradV.size() > 0 && reference.gradV.size() > 0;
    if (compared)
        error = std::max(error, difference(result.gradV, reference.gradV));
    if (comparedGradV)
        *comparedGradV = compared;
    return error;
}

bool SweepOptions::isValid(std::string* error) const
{
    auto fail = [error](const std::string& message) {
        if (error)
            *error = message;
        return false;
    };
    auto positive = [](const std::vector<int>& values) { return std::all_of(values.begin(), values.end(), [](int v) { return v >= 1; }); };
    if (dimensions.empty() || batches.empty() || methods.empty() || passes.empty() || precisions.empty() || threads.empty())
        return fail("the sweep needs at least one d, batch, method, pass, precision and thread count");
    if (!positive(dimensions) || !positive(reflectors) || !positive(batches) || !positive(blocks) || !positive(fasthBlockGrid)
        || !positive(threads))
        return fail("d, k, batch, block and thread counts must be positive");
    if (repeat < 1)
        return fail("repeat must be at least 1");
    if (warmup < 0)
        return fail("warmup must not be negative");
    if (treeLevels < 0 || treeLevels > 30)
        return fail("treeLevels must be between 0 and 30");
    return true;
}

namespace {

std::vector<int> reflectorCounts(const SweepOptions& options, int d)
{
    return options.reflectors.empty() ? std::vector<int>{d} : options.reflectors;
}

// The block sizes one method runs at for a problem: the requested ones for the blocked methods (or the
// FastH grid, or the paper's block), and one placeholder for the rest: 0 for dense GEMM and the use
// cases (no reflector blocks at all), 1 for the reflector-at-a-time methods.
std::vector<int> methodBlocks(const SweepOptions& options, BenchMethod method, int d, int k)
{
    const bool blocked = isBlocked(method) || method == BenchMethod::SvdInverse;
    if (!blocked)
        return {isUseCase(method) || method == BenchMethod::Dense ? 0 : 1};
    std::vector<int> blocks;
    if (!options.blocks.empty())
        blocks = options.blocks;
    else if (method == BenchMethod::FastH)
        for (int b : options.fasthBlockGrid)
            if (b <= k || b == options.fasthBlockGrid.front())
                blocks.push_back(b);
    if (blocks.empty())
        blocks = {defaultBlockSize(d)};
    return blocks;
}

} // namespace

std::vector<SpeedUp> speedUps(const std::vector<SweepRow>& rows, Pass pass)
{
    const auto sameProblem = [](const SweepRow& a, const SweepRow& b) {
        return a.d == b.d && a.k == b.k && a.batch == b.batch && a.precision == b.precision && a.threads == b.threads;
    };
    std::vector<SpeedUp> result;
    for (const SweepRow& row : rows) {
        if (row.pass != pass || row.method == BenchMethod::Sequential || !(row.ms > 0.0))
            continue;
        const auto sequential = std::find_if(rows.rbegin(), rows.rend(), [&](const SweepRow& s) {
            return s.pass == pass && s.method == BenchMethod::Sequential && sameProblem(s, row);
        });
        if (sequential != rows.rend())
            result.push_back({row.d, row.k, row.method, pass, sequential->ms / row.ms});
    }
    return result;
}

int sweepSize(const SweepOptions& options)
{
    int total = 0;
    const int perProblem = int(options.batches.size() * options.precisions.size() * options.threads.size());
    for (int d : options.dimensions)
        for (int k : reflectorCounts(options, d)) {
            if (k > d) {
                ++total;
                continue;
            }
            int methodPoints = 0;
            for (BenchMethod method : options.methods)
                methodPoints += int(methodBlocks(options, method, d, k).size() * options.passes.size());
            total += perProblem * methodPoints;
        }
    return total;
}

namespace {

// One sweep in progress: counts, progress, skips and cancellation, and the measurement of one point.
class SweepRun {
public:
    SweepRun(HouseholderRunner& runner, const SweepOptions& options, const SweepCallbacks& callbacks)
        : m_runner(runner)
        , m_options(options)
        , m_callbacks(callbacks)
    {
        m_summary.total = sweepSize(options);
    }

    SweepSummary& summary() { return m_summary; }

    bool keepGoing()
    {
        if (m_callbacks.shouldContinue && !m_callbacks.shouldContinue()) {
            m_summary.cancelled = true;
            return false;
        }
        return true;
    }

    void skip(SweepSkip::Reason reason, int d, int k, BenchMethod method, Pass pass, std::string why)
    {
        ++m_summary.skipped;
        if (m_callbacks.skip)
            m_callbacks.skip(SweepSkip{reason, d, k, method, pass, std::move(why)});
        advance();
    }

    // Times one (method, pass) on the runner's current problem: warm-up, repeats, then the row with
    // its error against the reference. False when cancelled.
    bool measure(const BenchData& data, const BenchConfig& config, BenchMethod method, int block, Pass pass)
    {
        const int d = data.d, k = data.k;
        std::string why;
        if (!m_runner.supports(method, pass, &why)) {
            skip(SweepSkip::Reason::Unsupported, d, k, method, pass, why);
            return true;
        }
        if (!keepGoing())
            return false;
        try {
            m_runner.prepare(method, pass);
        } catch (const std::exception& failure) {
            skip(SweepSkip::Reason::PrepareFailed, d, k, method, pass, failure.what());
            return true;
        }
        for (int i = 0; i < m_options.warmup; ++i) {
            if (!keepGoing())
                return false;
            m_runner.run(method, pass);
        }
        std::vector<double> samples;
        samples.reserve(size_t(m_options.repeat));
        for (int i = 0; i < m_options.repeat; ++i) {
            if (i > 0 && !keepGoing())
                return false;
            samples.push_back(m_runner.run(method, pass));
        }
        const BenchResult result = m_runner.result();
        const BenchResult reference = m_runner.reference(method, pass);
        const SampleStatistics stats = sampleStatistics(samples);

        SweepRow row;
        row.d = d;
        row.k = isUseCase(method) ? d : k;
        row.batch = data.m;
        row.block = m_runner.effectiveBlock(method);
        row.requestedBlock = block;
        row.method = method;
        row.pass = pass;
        row.precision = config.precision;
        row.threads = config.threads;
        row.backend = m_runner.backend();
        row.device = m_runner.device();
        if (row.backend == "cpu") {
            const bool dispatched = method == BenchMethod::Sequential || method == BenchMethod::FastH || method == BenchMethod::CompactWY
                                    || method == BenchMethod::TreeMerge || method == BenchMethod::SvdInverse;
            row.simd = dispatched ? simd::fasthKernelsName(simd::active()) : simd::name(simd::Level::Baseline);
        }
        row.ms = stats.median;
        row.msQ1 = stats.q1;
        row.msQ3 = stats.q3;
        row.flops = nominalFlops(method, pass, d, row.k, data.m);
        row.gflops = stats.median > 0 ? row.flops / (stats.median * 1e6) : 0.0;
        row.maxAbsError = maxAbsError(result, reference, &row.gradVChecked);
        row.repeat = m_options.repeat;
        row.treeLevels = m_options.treeLevels;
        row.lapackLayout = m_options.lapackLayout;
        row.cudaGraph = config.cudaGraph;
        ++m_summary.rows;
        if (m_callbacks.row)
            m_callbacks.row(row);
        advance();
        return true;
    }

private:
    void advance()
    {
        ++m_done;
        if (m_callbacks.progress)
            m_callbacks.progress(m_done, m_summary.total);
    }

    HouseholderRunner& m_runner;
    const SweepOptions& m_options;
    const SweepCallbacks& m_callbacks;
    SweepSummary m_summary;
    int m_done = 0;
};

} // namespace

SweepSummary runSweep(HouseholderRunner& runner, const SweepOptions& options, const SweepCallbacks& callbacks)
{
    std::string error;
    if (!options.isValid(&error))
        throw std::invalid_argument("fasth sweep: " + error);

    SweepRun sweep(runner, options, callbacks);
    const bool needSvdLayer = std::any_of(options.methods.begin(), options.methods.end(), isUseCase);
    for (int d : options.dimensions) {
        for (int k : reflectorCounts(options, d)) {
            if (k > d) {
                sweep.skip(SweepSkip::Reason::ReflectorsExceedDimension, d, k, BenchMethod::Sequential, Pass::Forward,
                           "k=" + std::to_string(k) + " > d=" + std::to_string(d));
                continue;
            }
            if (!sweep.keepGoing())
                return sweep.summary();
            // The reflectors (a QR, O(d^2 k)) once per (d, k); each batch size only draws X and G.
            const auto base = BenchData::generate(d, k, options.batches.front(), options.seed, needSvdLayer, options.lapackLayout);
            for (int m : options.batches) {
                const auto data = m == base->m ? base : base->withBatch(m, options.seed);
                for (Precision precision : options.precisions)
                    for (int threads : options.threads)
                        for (BenchMethod method : options.methods)
                            for (int block : methodBlocks(options, method, d, k)) {
                                if (!sweep.keepGoing())
                                    return sweep.summary();
                                BenchConfig config;
                                config.precision = precision;
                                config.blockSize = std::max(1, block);
                                config.treeLevels = options.treeLevels;
                                config.threads = threads;
                                config.cudaGraph = options.cudaGraph;
                                runner.setProblem(data, config);
                                for (Pass pass : options.passes)
                                    if (!sweep.measure(*data, config, method, block, pass))
                                        return sweep.summary();
                            }
            }
        }
    }
    return sweep.summary();
}

} // namespace wfs::fasth
