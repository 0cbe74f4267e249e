#pragma once
// One timed run of the OOF benchmark problem (Nikolic 2018) on a chosen backend, gradient
// and precision: set-up, per-evaluation and per-FFT medians, and the time to solution. Shared by
// `wavefront-cli bench oof` and the desktop program's speed-up lab, so both measure the same thing.
#include "engine/BackendFactory.h"
#include "engine/ReconstructionEngine.h"
#include "fit/Solver.h"

#include <QJsonObject>

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace wfs {

struct OofBenchmarkSettings {
    int grid = 128;
    int order = 8;
    BackendKind backend = BackendKind::Cpu;
    EvaluatorOptions evaluator;
    GradientKind gradient = GradientKind::Adjoint;
    OptimizerKind optimizer = OptimizerKind::Bfgs;
    int maxIterations = 2000;
    std::optional<double> gradientTolerance; // unset: the preset's (1e-8, the reference's rule)
    std::optional<double> functionTolerance; // unset: the preset's
    int repeat = 1;                          // minimisations; the median time is reported
    int evalRepeat = 15;                     // evaluations timed for eval_ms and cost_ms, FFTs for fft_ms
    bool solve = true;                       // false: only evaluations and FFTs
    std::uint64_t seed = 20180518;
    const std::atomic<bool>* cancel = nullptr; // stops a minimisation; the row is then marked cancelled
};

struct OofBenchmarkRow {
    OofBenchmarkSettings settings;
    int parameters = 0;
    BackendInfo backend;
    double setupSeconds = 0.0; // plans, basis, data
    double evalMs = 0.0;       // median of one cost-and-gradient evaluation (with this gradient kind)
    double costMs = 0.0;       // median of one cost-only evaluation (one model evaluation)
    double fftMs = 0.0;        // median of one N x N complex FFT on this backend and precision
    bool solved = false;
    double seconds = 0.0;  // time to solution, median over repeats
    SolverSummary summary; // of the last minimisation
    // eval_ms of the same grid and order on one thread, when that row was run: gives the row's speed-up and
    // parallel efficiency (speed-up / threads).
    double oneThreadEvalMs = 0.0;
};

// Throws BackendUnavailable, std::invalid_argument for bad settings, std::runtime_error when the
// minimisation fails.
OofBenchmarkRow runOofBenchmark(const OofBenchmarkSettings& settings);

// Several rows measured side by side (e.g. one grid and order at several thread counts): every row's problem and
// evaluator is made first (their memory at once), then the rows' timed evaluations take turns (five each, after
// one untimed), so that a shared host's drift falls on all of them alike; then each row's FFTs and minimisations,
// in order. Throws as runOofBenchmark.
std::vector<OofBenchmarkRow> runOofBenchmarks(const std::vector<OofBenchmarkSettings>& settings);

// The row with the keys of the command-line contract (plus cost_ms, eval_over_6fft, seed, speedup and
// parallel_efficiency beside a one-thread row and, on the GPU, launch and hbm_bytes).
QJsonObject benchmarkRowJson(const OofBenchmarkRow& row);

// `wavefront-cli bench pupil`: the pupil-function fit (the "pupil" preset: zonal phase and amplitude beside the
// Zernike terms, five planes, Poisson noise) at a chosen grid, from the preset's start to convergence on the CPU.
// The preset's default grid (64) is the teaching case; 256 has the pupil samples of a real 128 x 128 stack.
struct PupilBenchmarkSettings {
    int grid = 0; // 0: the preset's
    int threads = 1;
    std::uint64_t seed = 20180518;
    const std::atomic<bool>* cancel = nullptr;
};

struct PupilBenchmarkRow {
    PupilBenchmarkSettings settings;
    int grid = 0, planes = 0, pupilSamples = 0, parameters = 0;
    SolverSummary summary;
    std::vector<double> reducedChiSquare; // per plane
};

PupilBenchmarkRow runPupilBenchmark(const PupilBenchmarkSettings& settings);
// Keys: problem ("pupil"), grid, planes, pupil_samples, params, threads, iterations, cost_evaluations,
// gradient_evaluations, seconds, termination, converged, chi2_per_plane.
QJsonObject pupilBenchmarkRowJson(const PupilBenchmarkRow& row);

// `wavefront-cli bench pupil --session S.json`: a user's own stack and settings (a saved session) through the
// pupil recipe, to convergence or the iteration limit, timed as one run and as the two steps a user would otherwise
// take by hand: the Zernike model with the sampling profiled, then the zonal pupil at the scale found, each with
// the request's own limit. The recipe is the request as given (its fitSampling, autoRegularization and zonal terms);
// a request without a sampling profile or without zonal terms has one step, the recipe itself.
struct PupilRecipeRow {
    std::string run; // "recipe", "zernike profile", "zonal at the profiled scale"
    SolverSummary summary;
    std::vector<double> reducedChiSquare; // per plane
    double apertureScale = 1.0;           // the profile's, or the scale fitted at
    double regularization = 0.0;          // the smoothness weight chosen or given
    int parameters = 0;
};
std::vector<PupilRecipeRow> runPupilRecipeBenchmark(const ReconstructionRequest& request, bool steps,
                                                    const std::atomic<bool>* cancel = nullptr);
// Keys: problem ("pupil"), case, run, params, iterations, cost_evaluations, gradient_evaluations, seconds,
// termination, converged, cost, chi2_per_plane, aperture_scale, weight.
QJsonObject pupilRecipeRowJson(const PupilRecipeRow& row, const std::string& caseName);

// `wavefront-cli bench vectorial`: one cost-and-gradient evaluation of the vectorial model (optics/Vectorial.h) against
// the scalar model's on the same problem: an oil objective NA 1.4 at Q 2 over a water sample, the emitter 1 um deep
// (its depth fitted), `planes` planes from -2 to +2 um, flux and background per plane, simulated Poisson data.
struct VectorialBenchmarkSettings {
    int grid = 64;
    int planes = 21;
    int order = 6;
    bool freeDipole = true; // six fields per plane; a fixed dipole has two
    int threads = 1;
    int evalRepeat = 20;
    Precision precision = Precision::Double;
};

struct VectorialBenchmarkRow {
    VectorialBenchmarkSettings settings;
    int fields = 0, parameters = 0;
    double vectorialMs = 0.0, scalarMs = 0.0; // medians of one evaluation with the gradient
};

VectorialBenchmarkRow runVectorialBenchmark(const VectorialBenchmarkSettings& settings);
// Keys: problem ("vectorial"), grid, planes, order, fields, params, threads, precision, eval_ms, scalar_eval_ms,
// ratio_to_scalar.
QJsonObject vectorialBenchmarkRowJson(const VectorialBenchmarkRow& row);

} // namespace wfs
