#pragma once
// The backend interface: cost and gradient of a compiled Problem. The CPU (FFTW) and GPU (cuFFT)
// backends implement it; the finite-difference gradient wraps any of them. One evaluator is used by
// one thread at a time.
#include "base/Precision.h"
#include "optics/Problem.h"

#include <atomic>
#include <memory>
#include <string>
#include <vector>

namespace wfs {

// Which backend evaluates the model: the CPU (FFTW) or a GPU (cuFFT); engine/BackendFactory makes them.
enum class BackendKind { Cpu, Gpu };
const char* backendName(BackendKind kind); // "cpu" / "gpu"

enum class GradientKind {
    Adjoint,          // exact reverse-mode gradient: 2 FFTs per plane per evaluation
    FiniteDifference, // forward differences, (P + 1) cost evaluations: the baseline of the OOF paper
};
const char* gradientName(GradientKind kind); // "adjoint" / "fd"

struct EvaluatorOptions {
    Precision precision = Precision::Double;
    int threads = 1;          // FFT and pointwise threads (CPU backend)
    bool measurePlans = true; // FFTW_MEASURE plans; false = FFTW_ESTIMATE (quicker setup, for tests)
    int device = 0;           // GPU backend: CUDA device ordinal
    // GPU backend: replay each evaluation as one captured CUDA graph instead of a dozen separate
    // launches (which dominate at small grids). Off only to measure what the graphs save.
    bool cudaGraphs = true;
};

struct BackendInfo {
    std::string backend; // "cpu" / "gpu"
    std::string device;  // CPU model name or GPU name
    Precision precision = Precision::Double;
    int threads = 1;
    // CPU backend: the instruction set of the hot kernels, "avx2-fma" or "baseline" (core/simd); empty on the GPU.
    std::string simd;
    // GPU backend: how evaluations are launched ("graph", or "stream (...)" saying why not); empty on the CPU.
    std::string launch;
    // GPU backend: device-memory bytes one cost-and-gradient evaluation moves at the least (the count is
    // documented in gpu/model/ModelLayout.h), the yardstick for eval_ms; 0 when not counted.
    double trafficBytes = 0.0;
};

class ModelEvaluator {
public:
    virtual ~ModelEvaluator() = default;

    virtual const Problem& problem() const = 0;
    int parameterCount() const { return problem().parameterCount(); }

    // The objective at `parameters`; when `gradient` is not null, also its gradient. Returns a
    // non-finite value where the model cannot be evaluated (e.g. non-positive Poisson intensity).
    // Throws std::runtime_error when the backend fails (a GPU error, say).
    virtual double evaluate(const double* parameters, double* gradient) = 0;

    // Model intensities in grid layout (N x N, row-major), one per plane.
    virtual std::vector<std::vector<double>> modelImages(const double* parameters) = 0;

    virtual BackendInfo info() const = 0;

    // Model (cost) evaluations one evaluate() with a gradient costs: 1 for an exact gradient, P + 1
    // for forward differences. Lets the solver report evaluations comparably across gradient kinds.
    virtual int costEvaluationsPerGradient() const { return 1; }

    // Median time in milliseconds of one N x N complex FFT on this backend and precision.
    virtual double measureFftMs(int repeats) = 0;

    // The fit's cancel flag, set by the solver for the length of one run. An evaluation made of many
    // model evaluations (forward differences: P + 1) checks it between them and throws
    // OperationCancelled, so that cancelling never waits for a whole gradient.
    void setCancelFlag(const std::atomic<bool>* cancel) { m_cancel = cancel; }

protected:
    const std::atomic<bool>* cancelFlag() const { return m_cancel; }

private:
    const std::atomic<bool>* m_cancel = nullptr;
};

// Wraps `inner`, replacing its gradient by forward differences with a scipy-like step
// h_i = sqrt(eps) * max(1, |x_i|) (eps of the inner evaluator's precision).
std::unique_ptr<ModelEvaluator> makeFiniteDifferenceEvaluator(std::unique_ptr<ModelEvaluator> inner);

} // namespace wfs
