#pragma once
// The speed-up experiment of Nikolic (2018) on the OOF benchmark problem, on this machine: the same
// BFGS fit with finite-difference gradients on the CPU (the "NumPy-style" baseline), with exact adjoint
// gradients on the CPU (float64 and float32, one and all threads) and on the GPU when there is one;
// time to solution, evaluations per second, and whether the methods agree. Baselines that would take
// too long are estimated from one timed gradient. The desktop program's speed-up lab drives it.
#include "engine/Benchmark.h"

#include <QString>

#include <atomic>
#include <functional>
#include <map>
#include <utility>
#include <vector>

namespace wfs {

struct LabMethod {
    QString name;
    BackendKind backend = BackendKind::Cpu;
    GradientKind gradient = GradientKind::Adjoint;
    Precision precision = Precision::Double;
    int threads = 1;
};

// The methods the lab offers, in display order: 0 is the finite-difference baseline, 1 the adjoint
// CPU float64 single-thread reference every other method is compared with.
std::vector<LabMethod> labMethods();
constexpr int kBaselineMethod = 0;
constexpr int kReferenceMethod = 1;

struct LabSettings {
    std::vector<int> grids = {64, 128};
    std::vector<int> orders = {4};
    std::vector<int> methods = {0, 1, 2}; // indices into labMethods(); the reference always runs
    bool runBaselinesForReal = false;     // false: baselines longer than estimateAboveSeconds are estimated
    double estimateAboveSeconds = 10.0;
    int evalRepeat = 5;
};

struct LabRow {
    int method = 0;
    int grid = 0;
    int order = 0;
    bool estimated = false; // time and counts from measured per-evaluation times, not a real fit
    OofBenchmarkRow bench;  // measured figures (for an estimated row: its evaluation timings only)
    double seconds = 0.0;   // time to solution (measured or estimated)
    long iterations = 0;
    long costEvaluations = 0; // model evaluations, finite-difference ones included
    double evaluationsPerSecond = 0.0;
    double finalCost = 0.0;                     // NaN for an estimated row
    double maxCoefficientDifferenceWaves = 0.0; // against the reference's solution; NaN when none
};

// The lab's table as CSV (the desktop's Export CSV): a comment line on what the rows are, a header, one row each.
std::string labCsv(const std::vector<LabRow>& rows);

// What counting alone predicts for the adjoint over finite differences: a finite-difference gradient is P + 1 model
// evaluations, an adjoint gradient one forward and one backward pass, about 2: (P + 1) / 2 (24 at order 8, P = 47).
// Hardware, threads and precision come on top; the measured speed-up also counts the iterations each fit took.
double predictedAdjointSpeedup(int parameters);

// One row's speed-up over the finite-difference baseline of its grid and order: baseline seconds / its seconds.
struct LabSpeedup {
    const LabRow* row = nullptr;
    const LabRow* baseline = nullptr;
    double speedup = 0.0;
};
// Every row but the baselines that has a baseline of its grid and order and a positive time, in the rows' order.
std::vector<LabSpeedup> labSpeedups(const std::vector<LabRow>& rows);

// The reference method's solution per (grid, order), to compare re-run rows with.
using SpeedupReferences = std::map<std::pair<int, int>, std::vector<double>>;

// Runs the experiment on the calling thread, handing each finished row to `post` as it comes. With
// `redo` not empty, runs those (estimated) rows for real instead, compared with `references`. Stops
// between fits, and inside one, when `cancel` is set; rows of a cancelled fit are not posted. Throws
// BackendUnavailable (or std::runtime_error) when a method cannot run here.
void runSpeedupExperiment(const LabSettings& settings, const std::vector<LabRow>& redo, const SpeedupReferences& references,
                          const std::function<void(const LabRow&)>& post, const std::atomic<bool>& cancel);

} // namespace wfs
