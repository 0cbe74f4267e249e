#pragma once
// The FastH runners the desktop panel drives (core, not ui: nothing here draws): the timing sweeps (through the engine's
// runner and core's runSweep, the same path as `wavefront-cli fasth-bench`), the pictures of one SVD
// layer, and the SVD-layer training demo with its inverse/determinant comparison against LU. Everything
// here runs on a worker thread; the panel only sees the value objects it returns and the shared state
// objects, which the worker fills under a mutex and the panel reads on a display-rate timer.
#include "engine/BackendFactory.h"
#include "fasth/FasthSweep.h"
#include "fasth/HouseholderRunner.h"
#include "fasth/SvdLayer.h"

#include <QMetaType>
#include <QString>
#include <QStringList>

#include <Eigen/Core>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <utility>
#include <vector>

namespace wfs {

// ---- Timing sweeps ----

// Which of the panel's two sweeps a row belongs to.
enum class FasthSweepKind {
    Dimension, // d varies (k = d), every chosen method at the chosen block size
    BlockSize, // d and k fixed, FastH at several block sizes, with sequential and dense GEMM beside it
};
const char* sweepKindName(FasthSweepKind kind); // "dimension", "block"

struct FasthTimingRow {
    FasthSweepKind sweep = FasthSweepKind::Dimension;
    fasth::SweepRow row; // the engine's numbers, unchanged
};

struct FasthSweepSettings {
    // The d sweep; k = d at each (the paper's setting). Kept small by default so that a class (and an
    // offscreen test) sees the whole sweep in seconds on a two-core machine.
    std::vector<int> dimensions{32, 64, 128, 256};
    std::vector<fasth::BenchMethod> methods{fasth::BenchMethod::Sequential, fasth::BenchMethod::FastH,   fasth::BenchMethod::CompactWY,
                                            fasth::BenchMethod::TreeMerge,  fasth::BenchMethod::Library, fasth::BenchMethod::Dense};
    std::vector<fasth::Pass> passes{fasth::Pass::Forward, fasth::Pass::Backward, fasth::Pass::Both};
    int batch = 32;     // m, the paper's mini-batch
    int blockSize = 16; // b of FastH, UT and tree in the d sweep (the paper's 16 for d <= 128)
    int treeLevels = 1; // merge levels of the tree method
    // The block sweep: FastH at each block size for one (d, k), plus sequential and dense GEMM there.
    bool blockSweep = true;
    int blockSweepDimension = 64;
    int blockSweepReflectors = 0; // 0: k = d
    std::vector<int> blockSizes;  // empty: 1, 2, 4, ... up to k, and k itself
    Precision precision = Precision::Double;
    BackendKind backend = BackendKind::Cpu;
    int threads = 0; // 0: every hardware thread
    int repeat = 5;  // timed repetitions per measurement (median and quartiles)
    int warmup = 1;
    std::uint64_t seed = 1;
    // Reflectors from a QR ([0..0, 1, *], what the library baseline needs; every method skips the zeros)
    // or Gaussian, as in a trained SVD layer (no library baseline).
    bool lapackLayout = true;

    bool isValid(QString* error = nullptr) const;
    // The block sizes the block sweep will use for k reflectors.
    std::vector<int> blockSweepSizes() const;
};

struct FasthSweepResults {
    FasthSweepSettings settings;
    std::vector<FasthTimingRow> rows; // in measurement order
    QStringList skipped;              // grid points not measured, and why
    QString backend;                  // "cpu" or "gpu"
    QString device;
    int threads = 0; // the thread count used
    int total = 0;   // grid points planned
    bool cancelled = false;
    QString error; // non-empty when the sweep could not run or stopped on an error
};

// What the worker shares with the panel while a sweep runs.
struct FasthSweepState {
    std::atomic<bool> cancelRequested{false};
    std::mutex mutex;
    std::vector<FasthTimingRow> rows; // appended as measured
    int done = 0;
    int total = 0;
};

// Runs the d sweep and then the block sweep; never throws (errors land in the result).
FasthSweepResults runFasthSweep(const FasthSweepSettings& settings, FasthSweepState& state);

// Comma-separated values, one line per row, each double in the shortest form that reads back as the same
// double (so that a file read back gives the very numbers the engine measured). Written to a temporary
// file and renamed.
bool writeFasthCsv(const QString& path, const std::vector<FasthTimingRow>& rows, QString* error = nullptr);
QStringList fasthCsvHeader();

// ---- Pictures of one SVD layer ----

struct FasthPictureSettings {
    int d = 64;
    int k = 64;         // reflectors per factor
    int blockSize = 16; // FastH block size used to form the factors, and the blocks shown
    Precision precision = Precision::Double;
    int threads = 1;
    std::uint64_t seed = 1;
};

struct FasthPictures {
    FasthPictureSettings settings;
    Eigen::MatrixXd uReflectors;      // d x k, Gaussian as in an SVD layer
    Eigen::MatrixXd vReflectors;      // d x k
    Eigen::VectorXd sigma;            // d values in +-[0.5, 2]
    Eigen::MatrixXd uFactor;          // apply(U reflectors, I), formed by FastH
    Eigen::MatrixXd vFactor;          // apply(V reflectors, I)
    Eigen::MatrixXd w;                // U diag(sigma) V^T
    double uOrthogonalityError = 0.0; // ||Q^T Q - I||_F / sqrt(d), in the chosen precision
    double vOrthogonalityError = 0.0;
    std::vector<std::pair<int, int>> blocks; // FastH blocks: (first column, reflector count)
    QString error;
};

FasthPictures computeFasthPictures(const FasthPictureSettings& settings);

// ---- SVD-layer training demo ----

struct FasthTrainingSettings {
    int d = 64;
    int k = 64;        // reflectors per factor of the trained layer
    int samples = 128; // columns of X; at least d, or W is only seen on a subspace
    int steps = 300;
    double learningRate = 0.01;
    int blockSize = 16;
    Precision precision = Precision::Double;
    int threads = 1;
    int timingRepeat = 5; // repetitions of each inverse/determinant timing (median)
    std::uint64_t seed = 1;

    bool isValid(QString* error = nullptr) const;
};

// One use case (W^{-1} Y or log|det W|) by the SVD layer and by LU.
struct FasthUseCaseComparison {
    double svdInverseMs = 0.0;              // V diag(1/sigma) U^T Y through FastH
    double luSolveMs = 0.0;                 // PartialPivLU of the formed W, factor and solve (forming W not counted)
    double inverseRelativeDifference = 0.0; // max |X_svd - X_lu| / max |X_lu|
    double inverseResidual = 0.0;           // max |W X_svd - Y| / max |Y|
    double svdLogDetMs = 0.0;
    double luLogDetMs = 0.0;
    double svdLogAbsDet = 0.0; // sum log|sigma_i|
    double luLogAbsDet = 0.0;  // sum log|u_ii| of the LU factors
    int svdDetSign = 0;        // (-1)^(ku + kv) prod sign(sigma_i): each reflector has determinant -1
    int luDetSign = 0;         // det(P) prod sign(u_ii)
    int rightHandSides = 0;    // columns of Y
};

struct FasthTrainingResult {
    FasthTrainingSettings settings;
    fasth::TrainingSummary summary;
    std::vector<double> iterations; // steps taken when each loss was measured: 0, 1, ..., n
    std::vector<double> losses;
    Eigen::VectorXd sigma;                // trained sigma
    Eigen::VectorXd targetSingularValues; // of the target matrix, descending
    FasthUseCaseComparison useCases;      // on the trained layer (not computed when cancelled)
    bool cancelled = false;
    QString error;
};

struct FasthTrainingState {
    std::atomic<bool> cancelRequested{false};
    std::mutex mutex;
    std::vector<double> iterations; // appended per step
    std::vector<double> losses;
    Eigen::VectorXd sigma; // the latest
    Eigen::VectorXd targetSingularValues;
    int steps = 0; // planned
};

// Trains a layer W = U diag(sigma) V^T with Adam on L = ||W X - T X||^2 / (2 m), T a fixed target with
// known singular values, then compares inverse and determinant with LU. Never throws.
FasthTrainingResult runFasthTraining(const FasthTrainingSettings& settings, FasthTrainingState& state);

} // namespace wfs

Q_DECLARE_METATYPE(wfs::FasthSweepResults)
Q_DECLARE_METATYPE(wfs::FasthPictures)
Q_DECLARE_METATYPE(wfs::FasthTrainingResult)
