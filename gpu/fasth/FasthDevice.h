#pragma once
// FastH on a CUDA device (Mathiasen et al. 2020): the problem lives in device memory, every workspace is
// allocated in setProblem()/prepare(), and execute() only enqueues work on the object's stream, so that
// it can be timed with events or captured into a CUDA graph. Same convention as core/fasth:
// apply(V, X) = H_1 ... H_k X. No Eigen here, so that nvcc never parses it.
#include "gpu/DeviceResources.h"

#include <memory>
#include <string>
#include <vector>

namespace wfs::gpu {

enum class DeviceMethod {
    SequentialCublas, // one gemv + ger pair per reflector (the paper's GPU baseline)
    SequentialFused,  // the sequential algorithm as one kernel, one thread block per column of X
    FastH,            // WY-building kernel (one thread block per block of reflectors) + cuBLAS GEMMs
    CompactWY,        // batched Gram GEMM, triangular solves in the block products
    TreeMerge,        // FastH blocks merged pairwise by GEMMs, then block products
    Library,          // cuSOLVER ormqr on the LAPACK-layout reflectors
    Dense,            // cuBLAS GEMM with a pre-formed Q
    SvdInverse,       // W^{-1} X through the SVD layer (two FastH products and a row scaling)
    LuSolve,          // cuSOLVER getrf + getrs on the dense W
    SvdLogDet,        // sum log|sigma|
    LuLogDet,         // getrf, then sum log|U_ii|
};

enum class DevicePass { Forward, Backward, Both };

struct DeviceProblem {
    int d = 0;
    int k = 0;
    int m = 0;
    int blockSize = 32;
    int treeLevels = 1;
};

template <typename T>
class DeviceFasth {
public:
    // Selects the device and creates the stream, the cuBLAS (TF32 off) and cuSOLVER handles.
    explicit DeviceFasth(int deviceOrdinal);
    ~DeviceFasth();
    DeviceFasth(const DeviceFasth&) = delete;
    DeviceFasth& operator=(const DeviceFasth&) = delete;

    // Column-major host arrays: reflectors d x k (LAPACK layout), tau k, x and outputGradient d x m.
    // Uploads them, computes the forward output H X once (sequential, untimed) and allocates workspaces.
    void setProblem(const DeviceProblem& problem, const std::vector<T>& reflectors, const std::vector<T>& tau, const std::vector<T>& x,
                    const std::vector<T>& outputGradient);
    // The SVD layer of the use cases: reflector sets d x d, sigma d, and the dense W d x d.
    void setSvdLayer(const std::vector<T>& u, const std::vector<T>& v, const std::vector<T>& sigma, const std::vector<T>& dense);
    // The pre-formed Q (d x d) of the dense baseline.
    void setDenseQ(const std::vector<T>& q);

    // Whether the method can run this problem; why says why not.
    bool supports(DeviceMethod method, DevicePass pass, std::string* why) const;
    // Untimed: workspaces of the method, and with useGraph one eager warm-up execution, then a CUDA graph
    // of one execution. Methods that call cuSOLVER (not capturable()) and methods whose capture fails
    // (the error state is cleared) run eagerly instead; launchMode() says which and why.
    void prepare(DeviceMethod method, DevicePass pass, bool useGraph);
    // Whether the method's calls may be captured into a graph: not those calling cuSOLVER (ormqr,
    // getrf, getrs), which is not documented to support stream capture.
    static bool capturable(DeviceMethod method);
    // "graph", "eager", or "eager (...)" with the reason a graph was asked for but not used.
    const std::string& launchMode() const;
    // Enqueues one execution (or launches the captured graph) between two events; returns milliseconds.
    float run(DeviceMethod method, DevicePass pass, bool useGraph);

    // Results of the last run, downloaded (synchronising the stream).
    std::vector<T> output() const;    // forward: d x m (or 1 value for the log-determinants)
    std::vector<T> gradientX() const; // backward/both: d x m
    std::vector<T> gradientV() const; // backward/both: d x k (empty for the methods without it)

private:
    struct Impl;
    std::unique_ptr<Impl> m_impl;
};

extern template class DeviceFasth<float>;
extern template class DeviceFasth<double>;

} // namespace wfs::gpu
