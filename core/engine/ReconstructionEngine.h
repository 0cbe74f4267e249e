#pragma once
// The facade front ends use to run a reconstruction: one job at a time on a worker thread, the latest
// progress snapshot pulled at display rate, cancellation that keeps the last good state.
#include "engine/BackendFactory.h"
#include "fit/Results.h"
#include "io/Session.h"

#include <atomic>
#include <functional>
#include <mutex>
#include <memory>
#include <optional>
#include <thread>

namespace wfs {

struct ReconstructionRequest {
    ProblemSpec spec;          // with data
    std::vector<double> start; // empty: the spec's start values
    BackendKind backend = BackendKind::Cpu;
    EvaluatorOptions evaluator;
    GradientKind gradient = GradientKind::Adjoint;
    SolverOptions solver; // its `cancel` is set by the engine
    AnalysisOptions analysis;
    // Coarse-to-fine: Zernike orders fitted in turn, each seeded from the previous; the last one
    // should be spec.basis.maxOrder. Empty: one stage at spec.basis.maxOrder.
    std::vector<int> stages;
    // Live display: snapshots carry model images at most this often (seconds; they cost K FFTs);
    // negative = never. The phase map is in every snapshot (it costs one basis product).
    double liveImageInterval = -1.0;
    // Zonal terms: choose spec.regularization among regularizationSweepWeights(): the strongest weight whose
    // chi-square per pixel is at the noise level (the discrepancy principle, 1 + 3 sqrt(2 / pixels)), found by a
    // bracketing search from the middle weight, each fit seeded from the one before; else, when none is, the
    // strongest whose chi-square is within 2 % of the least of all weights (where more freedom stops paying).
    // Said in FitResult::regularizationChoice.
    bool autoRegularization = false;
    // Fit the sampling: the final cost profiled over the aperture scale (optics withApertureScale: the NA, and so Q
    // and a high-NA defocus), one full fit per point, each seeded from the best so far; steps of 4 % from the
    // metadata's value within 0.8..1.25, then the profile's parabola. Q is not a parameter of the model's gradient
    // since it moves the pupil's edge across grid samples. Said in FitResult::samplingFit, with a 1-sigma error
    // from the profile's curvature. The final fit runs at the best scale with the request's other choices.
    bool fitSampling = false;
};

// Start values of `spec` from `parameters` of `previous`, a problem with the same planes (a previous stage or a
// neighbouring profile point): Zernike terms, illumination, per-plane flux (in photons: carried across a change of the
// start illumination, which is flux's unit), background and shift, zonal maps and defocus terms.
void seedSpec(ProblemSpec& spec, const Problem& previous, const std::vector<double>& parameters);

// The weights the automatic choice tries, strongest first.
std::vector<double> regularizationSweepWeights();

// Copies the solver settings of a session (or of the GUI's solver panel, or the CLI's flags) into a
// request: backend, gradient, optimizer, precision, threads, stopping rules, stages, analysis.
void applySolverSettings(const SolverSettings& settings, ReconstructionRequest& request);

struct ProgressSnapshot {
    int stage = 0; // 0-based
    int stageCount = 1;
    int order = 0; // Zernike order of this stage
    IterationSnapshot iteration;
    std::vector<double> zernikeWaves;      // every basis term (piston first) at this iterate
    Image phase;                           // radians over the pupil's bounding box, NaN outside
    PupilMapGeometry phaseGeometry;        // where `phase` lies in the pupil (its stage's grid)
    std::vector<Image> models;             // model images in the data layout, when due (liveImageInterval)
    std::vector<PlaneResiduals> residuals; // data - model and normalised, with `models`
};

// One accepted iterate of a fit, as the convergence history keeps it: every iteration from 0 (the
// start), across coarse-to-fine stages (iterations count on from one stage to the next).
struct HistoryRow {
    int iteration = 0;
    double cost = 0.0;
    double gradientMaxNorm = 0.0;
    double elapsedSeconds = 0.0;
    int stage = 0; // 0-based
};

// Runs the request on the calling thread. `progress` sees every accepted iterate; `cancel` stops it.
// Throws std::invalid_argument (bad problem or options) or BackendUnavailable.
FitResult reconstruct(const ReconstructionRequest& request, const std::function<void(const ProgressSnapshot&)>& progress,
                      const std::atomic<bool>* cancel);

class ReconstructionEngine {
public:
    ReconstructionEngine() = default;
    ~ReconstructionEngine(); // cancels and joins
    ReconstructionEngine(const ReconstructionEngine&) = delete;
    ReconstructionEngine& operator=(const ReconstructionEngine&) = delete;

    // Starts a job, cancelling and replacing a running one. Never throws: when no thread can be
    // created the job fails at once (isRunning() false, error() says why).
    void start(ReconstructionRequest request);
    void cancel();
    void wait();
    bool isRunning() const { return m_running.load(); }

    // The latest snapshot and a counter that grows with every new one (to skip redraws when unchanged).
    std::optional<ProgressSnapshot> latest(unsigned long* version = nullptr) const;
    // History rows from `from` on (0 = all), so a display can pull only what is new; the history is
    // cleared by start() and grows by one row per accepted iterate.
    std::vector<HistoryRow> history(size_t from = 0) const;
    size_t historySize() const;
    std::optional<FitResult> result() const; // set when a job has finished (also when cancelled)
    // The same without a copy (a result at grid 512 holds tens of megabytes of images); null before.
    std::shared_ptr<const FitResult> sharedResult() const;
    std::string error() const; // set when a job failed to start or run

    // Tests: makes the next starts fail as a refused std::thread creation does (ulimit -u).
    static void setThreadCreationFailsForTesting(bool fails);

private:
    std::thread startThread(ReconstructionRequest request);
    static std::atomic<bool> s_threadCreationFailsForTesting;
    std::thread m_thread;
    std::atomic<bool> m_cancel{false};
    std::atomic<bool> m_running{false};
    mutable std::mutex m_mutex;
    std::optional<ProgressSnapshot> m_latest;
    unsigned long m_version = 0;
    std::vector<HistoryRow> m_history;
    std::shared_ptr<const FitResult> m_result;
    std::string m_error;
};

} // namespace wfs
