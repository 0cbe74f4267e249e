#pragma once
// The timing sweep over a grid of FastH benchmark problems (Mathiasen et al. 2020), shared by
// `wavefront-cli fasth-bench` and the FastH panel so that both report the same numbers for the same
// request: one loop, one warm-up and repetition policy, one set of statistics.
#include "HouseholderRunner.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace wfs::fasth {

struct SampleStatistics {
    double median = 0.0;
    double q1 = 0.0; // first quartile
    double q3 = 0.0; // third quartile
};

// Quartiles by linear interpolation between order statistics. An empty sample gives zeros.
SampleStatistics sampleStatistics(std::vector<double> samples);

// Largest absolute difference between a result and its reference, over the output and, when both have
// one, the reflector gradient (*comparedGradV says whether it was compared). Infinity on a shape
// mismatch, so that a wrong result can never pass as accurate.
double maxAbsError(const BenchResult& result, const BenchResult& reference, bool* comparedGradV = nullptr);

struct SweepOptions {
    std::vector<int> dimensions;  // d
    std::vector<int> reflectors;  // k; empty means k = d. Any k > d is skipped for that d (reported).
    std::vector<int> batches{32}; // m
    // Block sizes of the blocked methods (FastH, UT, tree) and of svd-inverse. Empty: the paper's block
    // for each d (16 for d <= 128, else 32), except FastH when fasthBlockGrid is not empty.
    std::vector<int> blocks;
    // Only when blocks is empty: FastH runs at every grid size b <= k (the smallest always), so that
    // the best block can be read off one sweep.
    std::vector<int> fasthBlockGrid;
    std::vector<BenchMethod> methods{BenchMethod::Sequential, BenchMethod::FastH,   BenchMethod::CompactWY,
                                     BenchMethod::TreeMerge,  BenchMethod::Library, BenchMethod::Dense};
    std::vector<Pass> passes{Pass::Forward, Pass::Backward, Pass::Both};
    std::vector<Precision> precisions{Precision::Double};
    std::vector<int> threads{1};
    int repeat = 20;    // timed repetitions per measurement (>= 1); the median and quartiles are reported
    int warmup = 2;     // untimed runs before the timed ones (>= 0)
    int treeLevels = 1; // TreeMerge merge levels (0..30)
    std::uint64_t seed = 1;
    bool lapackLayout = true; // reflectors from a QR ([0..0, 1, *]); false: Gaussian, no library rows
    bool cudaGraph = false;   // GPU runner: time CUDA-graph replays

    // False, with the first problem in words, when a list is empty or a value out of range.
    bool isValid(std::string* error = nullptr) const;
};

// One measurement: a method and pass at one grid point, in the engine's own numbers.
struct SweepRow {
    int d = 0;
    int k = 0; // d for the use-case methods (they work on the d x d SVD layer)
    int batch = 0;
    int block = 0;          // the block the method really used (HouseholderRunner::effectiveBlock)
    int requestedBlock = 0; // the block asked for (0 or 1 for the methods without blocks)
    BenchMethod method = BenchMethod::Sequential;
    Pass pass = Pass::Forward;
    Precision precision = Precision::Double;
    int threads = 1;
    std::string backend;
    std::string device;
    // CPU: the instruction set of the kernels the method ran ("avx512", "avx2-fma" or "baseline", core/simd): the
    // products of HouseholderProduct (sequential, fasth, ut, tree, svd-inverse) follow simd::active(); the
    // library, dense and LU methods run the baseline build of Eigen. Empty on the GPU.
    std::string simd;
    double ms = 0.0; // median of the timed repetitions
    double msQ1 = 0.0;
    double msQ3 = 0.0;
    double flops = 0.0;       // nominalFlops of the pass
    double gflops = 0.0;      // flops / median time
    double maxAbsError = 0.0; // against the sequential result in the same precision on the same backend
    bool gradVChecked = false;
    int repeat = 0;
    int treeLevels = 0;
    bool lapackLayout = true;
    bool cudaGraph = false;
};

// A grid point that was not measured, and why.
struct SweepSkip {
    enum class Reason {
        ReflectorsExceedDimension, // k > d
        Unsupported,               // the runner does not offer this method and pass (why says why)
        PrepareFailed,             // prepare() threw (why has the message); the sweep goes on
    };
    Reason reason = Reason::Unsupported;
    int d = 0;
    int k = 0;
    BenchMethod method = BenchMethod::Sequential;
    Pass pass = Pass::Forward;
    std::string why;
};

struct SweepCallbacks {
    // Asked before every measurement and between its repetitions; returning false cancels the sweep
    // there: the measurement under way is dropped, the rows already reported stand. It runs on the
    // sweeping thread, so a front end answers it from an atomic flag and the numerics need no Qt.
    std::function<bool()> shouldContinue;
    std::function<void(const SweepRow&)> row;
    std::function<void(const SweepSkip&)> skip;
    // After every measurement or skip: grid points done so far out of the whole grid.
    std::function<void(int done, int total)> progress;
};

struct SweepSummary {
    int rows = 0;    // measurements reported
    int skipped = 0; // grid points skipped
    int total = 0;   // grid points of the request (rows + skipped when not cancelled)
    bool cancelled = false;
};

// Speed-up of a method over the sequential algorithm at one grid point: t(sequential) / t(method), the medians of the
// same sweep, what `wavefront-cli fasth-bench` rows and the FastH panel's plot report.
struct SpeedUp {
    int d = 0;
    int k = 0;
    BenchMethod method = BenchMethod::FastH;
    Pass pass = Pass::Both;
    double speedUp = 0.0;
};
// For every row of `pass` but the sequential ones, in the rows' order: its speed-up over the sequential row of the
// same d, k, batch, precision and threads. A row without such a sequential row, or with no time, has none.
std::vector<SpeedUp> speedUps(const std::vector<SweepRow>& rows, Pass pass);

// Grid points (measurements and skips) the sweep will visit, for a progress bar.
int sweepSize(const SweepOptions& options);

// Runs the grid in the order d, k, batch, precision, threads, method, block, pass, with one problem
// (BenchData) per (d, k) and a new batch per m. Throws std::invalid_argument for invalid options and
// whatever the runner throws from setProblem() or run() (for example no device); a method whose
// prepare() fails is skipped instead, so that one method cannot end a long sweep.
SweepSummary runSweep(HouseholderRunner& runner, const SweepOptions& options, const SweepCallbacks& callbacks = {});

} // namespace wfs::fasth
