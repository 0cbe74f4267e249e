#pragma once
// The benchmark interface that the CPU (Eigen) and GPU (CUDA) FastH backends both implement, so that
// `wavefront-cli fasth-bench` and the FastH panel time every backend the same way.
#include "base/Precision.h"

#include <Eigen/Core>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace wfs::fasth {

enum class BenchMethod {
    Sequential,      // k rank-1 steps (CPU: Eigen; GPU: one cuBLAS call pair per reflector)
    SequentialFused, // GPU only: the sequential algorithm as one kernel, so launches do not dominate
    FastH,           // per-block WY, then block products
    CompactWY,       // "ut"
    TreeMerge,       // "tree"
    Library,         // CPU: Eigen HouseholderSequence; GPU: cuSOLVER ormqr
    Dense,           // GEMM with a pre-formed Q (the lower bound for applying an orthogonal matrix)
    SvdInverse,      // use case: W^{-1} X through the SVD layer (FastH)
    LuSolve,         // use case: W^{-1} X by LU with partial pivoting (factor and solve)
    SvdLogDet,       // use case: log|det W| = sum log|sigma|
    LuLogDet,        // use case: log|det W| from the LU factors
};

enum class Pass { Forward, Backward, Both };

// Command-line names: sequential, sequential-fused, fasth, ut, tree, library, dense, svd-inverse,
// lu-solve, svd-logdet, lu-logdet; forward, backward, both. Precision: base/Precision.h.
const char* methodName(BenchMethod method);
std::optional<BenchMethod> methodFromName(std::string_view name);
std::vector<BenchMethod> allMethods();
const char* passName(Pass pass);
std::optional<Pass> passFromName(std::string_view name);
bool isUseCase(BenchMethod method); // SvdInverse, LuSolve, SvdLogDet, LuLogDet: forward only
bool isBlocked(BenchMethod method); // FastH, CompactWY, TreeMerge: take the block size

// Nominal floating-point operations of one pass, for GFLOP/s: 4 d k m for an apply (the spec's count),
// 12 d k m for the backward pass of the sequential algorithm, 16 d k m for both. Use cases: 4 d^2 m for
// the SVD inverse and the LU solve (two applies with k = d), d for the log-determinants.
double nominalFlops(BenchMethod method, Pass pass, int d, int k, int m);

// One benchmark problem in double precision; every backend converts it to its own precision, so that
// float and double, CPU and GPU, all work on the same numbers.
struct BenchData {
    int d = 0;
    int k = 0;
    int m = 0;
    // d x k reflectors. In LAPACK layout (the default), v_i = [0 .. 0, 1, *] from a Householder QR of a
    // random d x k matrix: the library baselines need that layout, and every method uses the same set so
    // that all compute the same product (and all skip the leading zeros, about half of 4 d k m). Otherwise
    // Gaussian, as in a trained SVD layer: no zeros, no library baseline.
    bool lapackLayout = true;
    Eigen::MatrixXd reflectors;
    // 2 / ||v_i||^2 for each reflector: the library's H_i = I - tau_i v_i v_i^T is then exactly ours. (The
    // QR's own last coefficient is 0 for k = d, an identity instead of a reflection.)
    Eigen::VectorXd tau;
    Eigen::MatrixXd x;              // d x m input batch
    Eigen::MatrixXd outputGradient; // d x m, dL/d(H X) for the backward pass
    // The SVD layer of the use-case methods: Gaussian d x d reflector sets and sigma in +-[0.5, 2].
    Eigen::MatrixXd svdU;
    Eigen::MatrixXd svdV;
    Eigen::VectorXd sigma;

    // Deterministic for a seed. The SVD layer is only drawn when withSvdLayer (it costs O(d^2)).
    static std::shared_ptr<const BenchData> generate(int d, int k, int m, std::uint64_t seed, bool withSvdLayer, bool lapackLayout = true);
    // The same reflectors (and SVD layer) with a new batch of m columns: the O(d^2 k) QR is not redone
    // when only the batch size changes. Deterministic for a seed.
    std::shared_ptr<const BenchData> withBatch(int batch, std::uint64_t seed) const;
};

struct BenchConfig {
    Precision precision = Precision::Double;
    int blockSize = 32;     // FastH, CompactWY, TreeMerge
    int treeLevels = 1;     // TreeMerge
    int threads = 1;        // CPU threads (the GPU backend ignores it)
    bool cudaGraph = false; // GPU: capture one pass into a CUDA graph and time its replays (CPU ignores it)
};

// What one run computed, converted to double (outside any timing).
struct BenchResult {
    Eigen::MatrixXd output; // forward: H X (or W^{-1} X, or 1 x 1 log|det|); backward and both: dL/dX
    Eigen::MatrixXd gradV;  // dL/dV (d x k) where the method computes it, else empty
};

class HouseholderRunner {
public:
    virtual ~HouseholderRunner() = default;

    virtual std::string backend() const = 0; // "cpu" or "gpu"
    virtual std::string device() const = 0;  // the processor or GPU, in words

    // Sets the problem and the configuration; converts and uploads data (never timed). Throws
    // std::runtime_error when the backend cannot run it (for example no device).
    virtual void setProblem(std::shared_ptr<const BenchData> data, const BenchConfig& config) = 0;
    // Whether the method and pass are available here; why says why not.
    virtual bool supports(BenchMethod method, Pass pass, std::string* why = nullptr) const = 0;
    // Untimed setup one method needs (a pre-formed Q, a dense W, workspaces, captured graphs).
    virtual void prepare(BenchMethod method, Pass pass) = 0;
    // One execution of the pass, timed; returns milliseconds. Backward starts from H X (computed once,
    // untimed, by the sequential algorithm) and the output gradient; Both runs the forward first.
    virtual double run(BenchMethod method, Pass pass) = 0;
    // What the last run() computed.
    virtual BenchResult result() const = 0;
    // The same quantity from the sequential algorithm in the same precision on this backend, the
    // reference of max_abs_error (cached per problem).
    virtual BenchResult reference(BenchMethod method, Pass pass) = 0;
    // The block size the method really used: the configured one for the blocked methods, 1 for the
    // sequential ones, the library's own, 0 for dense GEMM and the use cases without blocks.
    virtual int effectiveBlock(BenchMethod method) const = 0;
};

std::unique_ptr<HouseholderRunner> makeCpuRunner();

} // namespace wfs::fasth
