// FastH on the GPU: the launchers and the cuBLAS/cuSOLVER calls around the kernels. The kernels
// (FasthKernels.cuh) and the typed library entry points (FasthBlas.cuh) are headers included here only,
// so each kernel template is instantiated by its launcher for float and double without explicit
// instantiations or launcher declarations kept in step by hand.
#include "FasthDevice.h"

#include <algorithm>
#include <cmath>

#include "FasthBlas.cuh"
#include "FasthKernels.cuh"

namespace wfs::gpu {

namespace {

constexpr int kThreads = 256;
// Shared memory a kernel may use without opting in to more.
constexpr std::size_t kDefaultSharedBytes = 48 * 1024;

int blocksFor(std::size_t count)
{
    return int((count + kThreads - 1) / kThreads);
}

using namespace fasth_device;

} // namespace

template <typename T>
struct DeviceFasth<T>::Impl {
    int device = 0;
    // Declaration order is destruction order reversed: the stream outlives the handles using it, and
    // cuBLAS's workspace outlives the handle.
    CudaStream stream;
    DeviceBuffer<unsigned char> cublasWorkspace;
    CublasHandle cublas;
    CusolverHandle cusolver;
    CudaEvent start;
    CudaEvent stop;

    DeviceProblem problem;
    std::vector<Block> blocks;                                   // blocks of blockSize reflectors
    std::vector<Block> merged;                                   // after the tree merge levels
    std::vector<std::vector<std::pair<Block, Block>>> mergePlan; // pairs merged at each level
    int maxMergedBlock = 0;

    DeviceBuffer<T> v, tau, x, g, forward, out, ag, gradV, z, states, scale, negScale, u, tInverse, cross, constants;
    DeviceBuffer<int> blockBegin, blockSize, mergedBegin, mergedSize;
    DeviceBuffer<T> q, qWorkspace, denseGrad;
    // The SVD layer of the use cases.
    DeviceBuffer<T> svdU, svdV, sigma, svdUScale, svdUNeg, svdUFactors, svdVScale, svdVNeg, svdVFactors, w, luWork, scalar;
    DeviceBuffer<int> ipiv, info;
    DeviceBuffer<T> solverWork;
    int solverWorkSize = 0;
    bool haveSvd = false;

    CudaGraphExec graph;
    std::string launch; // launchMode(): how the method of the last prepare() runs
    DeviceMethod graphMethod = DeviceMethod::FastH;
    DevicePass graphPass = DevicePass::Forward;
    DeviceMethod lastMethod = DeviceMethod::FastH;
    DevicePass lastPass = DevicePass::Forward;

    cudaStream_t s() const { return stream.get(); }
    const T* one() const { return constants.data(); }
    const T* zero() const { return constants.data() + 1; }
    const T* minusOne() const { return constants.data() + 2; }

    void copy(T* dst, const T* src, std::size_t count)
    {
        WFS_CUDA_CHECK(cudaMemcpyAsync(dst, src, count * sizeof(T), cudaMemcpyDeviceToDevice, s()));
    }

    // ---- step 1 of the blocked methods ----

    void computeScale(const T* reflectors, int k, T* scaleOut, T* negOut)
    {
        scaleKernel<T><<<k, kThreads, 0, s()>>>(reflectors, problem.d, scaleOut, negOut);
        WFS_KERNEL_CHECK("scaleKernel");
    }

    void buildWy(const T* reflectors, int k, int b, const T* scaleIn, T* factors)
    {
        const int count = (k + b - 1) / b;
        buildWyKernel<T><<<count, kThreads, std::size_t(b) * sizeof(T), s()>>>(reflectors, problem.d, k, b, scaleIn, factors);
        WFS_KERNEL_CHECK("buildWyKernel");
    }

    void buildUt()
    {
        const int d = problem.d, k = problem.k, b = problem.blockSize;
        const int full = k / b;
        // Gram matrices of all full blocks in one batched GEMM, the ragged last block on its own.
        if (full > 0)
            WFS_CUBLAS_CHECK(gemmStridedBatched(cublas.get(), CUBLAS_OP_T, CUBLAS_OP_N, b, b, d, one(), v.data(), d, (long long)b * d,
                                                v.data(), d, (long long)b * d, zero(), tInverse.data(), b, (long long)b * b, full));
        const int rest = k - full * b;
        if (rest > 0) {
            const T* last = v.data() + std::size_t(full) * b * d;
            WFS_CUBLAS_CHECK(gemm(cublas.get(), CUBLAS_OP_T, CUBLAS_OP_N, rest, rest, d, one(), last, d, last, d, zero(),
                                  tInverse.data() + std::size_t(full) * b * b, b));
        }
        const std::size_t count = std::size_t(blocks.size()) * b * b;
        tInverseKernel<T><<<blocksFor(count), kThreads, 0, s()>>>(tInverse.data(), b, count);
        WFS_KERNEL_CHECK("tInverseKernel");
    }

    void mergeTree()
    {
        const int d = problem.d;
        // (I - U_A V_A^T)(I - U_B V_B^T) = I - [U_A, U_B - U_A (V_A^T U_B)] [V_A, V_B]^T.
        for (const auto& level : mergePlan)
            for (const auto& [a, b] : level) {
                const T* va = v.data() + std::size_t(a.begin) * d;
                const T* ua = u.data() + std::size_t(a.begin) * d;
                T* ub = u.data() + std::size_t(b.begin) * d;
                WFS_CUBLAS_CHECK(
                    gemm(cublas.get(), CUBLAS_OP_T, CUBLAS_OP_N, a.size, b.size, d, one(), va, d, ub, d, zero(), cross.data(), a.size));
                WFS_CUBLAS_CHECK(
                    gemm(cublas.get(), CUBLAS_OP_N, CUBLAS_OP_N, d, b.size, a.size, minusOne(), ua, d, cross.data(), a.size, one(), ub, d));
            }
    }

    void prepareFactors(DeviceMethod method)
    {
        computeScale(v.data(), problem.k, scale.data(), negScale.data());
        if (method == DeviceMethod::CompactWY) {
            buildUt();
            return;
        }
        buildWy(v.data(), problem.k, problem.blockSize, scale.data(), u.data());
        if (method == DeviceMethod::TreeMerge)
            mergeTree();
    }

    // ---- step 2: block products ----

    // x (d x cols) <- P_j x or P_j^T x.
    void applyBlock(DeviceMethod method, const T* reflectors, const T* factors, int tIndex, const Block& block, T* xs, int cols,
                    bool transposed)
    {
        const int d = problem.d;
        const T* vj = reflectors + std::size_t(block.begin) * d;
        if (method == DeviceMethod::CompactWY) {
            WFS_CUBLAS_CHECK(
                gemm(cublas.get(), CUBLAS_OP_T, CUBLAS_OP_N, block.size, cols, d, one(), vj, d, xs, d, zero(), z.data(), block.size));
            const T* tj = tInverse.data() + std::size_t(tIndex) * problem.blockSize * problem.blockSize;
            WFS_CUBLAS_CHECK(trsm(cublas.get(), transposed ? CUBLAS_OP_T : CUBLAS_OP_N, block.size, cols, one(), tj, problem.blockSize,
                                  z.data(), block.size));
            WFS_CUBLAS_CHECK(
                gemm(cublas.get(), CUBLAS_OP_N, CUBLAS_OP_N, d, cols, block.size, minusOne(), vj, d, z.data(), block.size, one(), xs, d));
            return;
        }
        const T* uj = factors + std::size_t(block.begin) * d;
        // P = I - U V^T, P^T = I - V U^T.
        WFS_CUBLAS_CHECK(gemm(cublas.get(), CUBLAS_OP_T, CUBLAS_OP_N, block.size, cols, d, one(), transposed ? uj : vj, d, xs, d, zero(),
                              z.data(), block.size));
        WFS_CUBLAS_CHECK(gemm(cublas.get(), CUBLAS_OP_N, CUBLAS_OP_N, d, cols, block.size, minusOne(), transposed ? vj : uj, d, z.data(),
                              block.size, one(), xs, d));
    }

    const std::vector<Block>& blocksOf(DeviceMethod method) const { return method == DeviceMethod::TreeMerge ? merged : blocks; }

    // apply (P_1 ... P_n x: last block first) or its transpose (P_1^T first).
    void applyBlocks(DeviceMethod method, const T* reflectors, const T* factors, const std::vector<Block>& list, T* xs, int cols,
                     bool transposed)
    {
        const int n = int(list.size());
        for (int i = 0; i < n; ++i) {
            const int j = transposed ? i : n - 1 - i;
            applyBlock(method, reflectors, factors, j, list[std::size_t(j)], xs, cols, transposed);
        }
    }

    // ---- sequential baselines ----

    void sequentialCublas(T* xs, int cols)
    {
        const int d = problem.d, k = problem.k;
        for (int step = 0; step < k; ++step) {
            const int r = k - 1 - step;
            const T* vr = v.data() + std::size_t(r) * d;
            WFS_CUBLAS_CHECK(gemv(cublas.get(), CUBLAS_OP_T, d, cols, one(), xs, d, vr, zero(), z.data()));
            WFS_CUBLAS_CHECK(ger(cublas.get(), d, cols, negScale.data() + r, vr, z.data(), xs, d));
        }
    }

    // Backward of the sequential algorithm on ag = [A | G]: four cuBLAS calls per reflector.
    void sequentialBackwardCublas()
    {
        const int d = problem.d, k = problem.k, m = problem.m;
        T* a = ag.data();
        T* gr = ag.data() + std::size_t(d) * m;
        for (int r = 0; r < k; ++r) {
            const T* vr = v.data() + std::size_t(r) * d;
            T* dv = gradV.data() + std::size_t(r) * d;
            // p = [A G]^T v; [A G] -= c v p^T; dv = c G_in pa - c A_in pg.
            WFS_CUBLAS_CHECK(gemv(cublas.get(), CUBLAS_OP_T, d, 2 * m, one(), a, d, vr, zero(), z.data()));
            WFS_CUBLAS_CHECK(ger(cublas.get(), d, 2 * m, negScale.data() + r, vr, z.data(), a, d));
            WFS_CUBLAS_CHECK(gemv(cublas.get(), CUBLAS_OP_N, d, m, scale.data() + r, gr, d, z.data(), zero(), dv));
            WFS_CUBLAS_CHECK(gemv(cublas.get(), CUBLAS_OP_N, d, m, negScale.data() + r, a, d, z.data() + m, one(), dv));
        }
    }

    void fillStacked(DevicePass pass)
    {
        const std::size_t dm = std::size_t(problem.d) * problem.m;
        copy(ag.data(), pass == DevicePass::Both ? out.data() : forward.data(), dm);
        copy(ag.data() + dm, g.data(), dm);
    }

    // The paper's backward: step 1 recovers every block's input with P_j^T, saving (output | gradient);
    // step 2 is the per-block reflector gradient kernel.
    void blockedBackward(DeviceMethod method)
    {
        const int d = problem.d, m = problem.m;
        const std::vector<Block>& list = blocksOf(method);
        const std::size_t stateSize = std::size_t(d) * 2 * m;
        for (std::size_t j = 0; j < list.size(); ++j) {
            copy(states.data() + j * stateSize, ag.data(), stateSize);
            applyBlock(method, v.data(), u.data(), int(j), list[j], ag.data(), 2 * m, true);
        }
        const DeviceBuffer<int>& begins = method == DeviceMethod::TreeMerge ? mergedBegin : blockBegin;
        const DeviceBuffer<int>& sizes = method == DeviceMethod::TreeMerge ? mergedSize : blockSize;
        reflectorGradientKernel<T><<<int(list.size()), kThreads, std::size_t(2) * m * sizeof(T), s()>>>(
            v.data(), d, begins.data(), sizes.data(), scale.data(), states.data(), m, gradV.data());
        WFS_KERNEL_CHECK("reflectorGradientKernel");
    }

    // FastH products with the SVD layer's reflector sets (d x d, the problem's block size).
    void svdApply(const T* reflectors, T* scaleOut, T* negOut, T* factors, T* xs, int cols, bool transposed)
    {
        const int d = problem.d;
        computeScale(reflectors, d, scaleOut, negOut);
        buildWy(reflectors, d, problem.blockSize, scaleOut, factors);
        std::vector<Block> list;
        for (int b = 0; b < d; b += problem.blockSize)
            list.push_back({b, std::min(problem.blockSize, d - b)});
        applyBlocks(DeviceMethod::FastH, reflectors, factors, list, xs, cols, transposed);
    }

    void formDenseW()
    {
        const int d = problem.d;
        identityKernel<T><<<blocksFor(std::size_t(d) * d), kThreads, 0, s()>>>(w.data(), d);
        WFS_KERNEL_CHECK("identityKernel");
        // W = U diag(sigma) V^T applied to the identity.
        svdApply(svdV.data(), svdVScale.data(), svdVNeg.data(), svdVFactors.data(), w.data(), d, true);
        scaleRowsKernel<T><<<blocksFor(std::size_t(d) * d), kThreads, 0, s()>>>(w.data(), d, std::size_t(d) * d, sigma.data(), false);
        WFS_KERNEL_CHECK("scaleRowsKernel");
        svdApply(svdU.data(), svdUScale.data(), svdUNeg.data(), svdUFactors.data(), w.data(), d, false);
    }

    // A dispatch table, one short case per method with its whole pass: kept whole so the methods read side by side.
    void execute(DeviceMethod method, DevicePass pass)
    {
        const int d = problem.d, m = problem.m;
        const std::size_t dm = std::size_t(d) * m;
        switch (method) {
        case DeviceMethod::SequentialCublas:
            computeScale(v.data(), problem.k, scale.data(), negScale.data());
            if (pass != DevicePass::Backward) {
                copy(out.data(), x.data(), dm);
                sequentialCublas(out.data(), m);
            }
            if (pass != DevicePass::Forward) {
                fillStacked(pass);
                sequentialBackwardCublas();
            }
            return;
        case DeviceMethod::SequentialFused:
            computeScale(v.data(), problem.k, scale.data(), negScale.data());
            copy(out.data(), x.data(), dm);
            fusedSequentialKernel<T>
                <<<m, kThreads, std::size_t(d) * sizeof(T), s()>>>(v.data(), d, problem.k, scale.data(), out.data(), false);
            WFS_KERNEL_CHECK("fusedSequentialKernel");
            return;
        case DeviceMethod::FastH:
        case DeviceMethod::CompactWY:
        case DeviceMethod::TreeMerge:
            // The factors depend on V, which changes at every training step: they are part of each pass.
            prepareFactors(method);
            if (pass != DevicePass::Backward) {
                copy(out.data(), x.data(), dm);
                applyBlocks(method, v.data(), u.data(), blocksOf(method), out.data(), m, false);
            }
            if (pass != DevicePass::Forward) {
                fillStacked(pass);
                blockedBackward(method);
            }
            return;
        case DeviceMethod::Library:
            if (pass != DevicePass::Backward) {
                copy(out.data(), x.data(), dm);
                WFS_CUSOLVER_CHECK(ormqr(cusolver.get(), CUBLAS_OP_N, d, m, problem.k, v.data(), d, tau.data(), out.data(), d,
                                         solverWork.data(), solverWorkSize, info.data()));
            }
            if (pass != DevicePass::Forward) {
                // No reflector gradients in cuSOLVER: the block input and dL/dX, Q^T [A G], as on the CPU.
                fillStacked(pass);
                WFS_CUSOLVER_CHECK(ormqr(cusolver.get(), CUBLAS_OP_T, d, 2 * m, problem.k, v.data(), d, tau.data(), ag.data(), d,
                                         solverWork.data(), solverWorkSize, info.data()));
            }
            return;
        case DeviceMethod::Dense:
            if (pass != DevicePass::Backward)
                WFS_CUBLAS_CHECK(
                    gemm(cublas.get(), CUBLAS_OP_N, CUBLAS_OP_N, d, m, d, one(), q.data(), d, x.data(), d, zero(), out.data(), d));
            if (pass != DevicePass::Forward) {
                WFS_CUBLAS_CHECK(
                    gemm(cublas.get(), CUBLAS_OP_T, CUBLAS_OP_N, d, m, d, one(), q.data(), d, g.data(), d, zero(), ag.data() + dm, d));
                WFS_CUBLAS_CHECK(
                    gemm(cublas.get(), CUBLAS_OP_N, CUBLAS_OP_T, d, d, m, one(), g.data(), d, x.data(), d, zero(), denseGrad.data(), d));
            }
            return;
        case DeviceMethod::SvdInverse:
            copy(out.data(), x.data(), dm);
            svdApply(svdU.data(), svdUScale.data(), svdUNeg.data(), svdUFactors.data(), out.data(), m, true);
            scaleRowsKernel<T><<<blocksFor(dm), kThreads, 0, s()>>>(out.data(), d, dm, sigma.data(), true);
            WFS_KERNEL_CHECK("scaleRowsKernel");
            svdApply(svdV.data(), svdVScale.data(), svdVNeg.data(), svdVFactors.data(), out.data(), m, false);
            return;
        case DeviceMethod::LuSolve:
            // Factor and solve: the weight changes at every training step.
            copy(luWork.data(), w.data(), std::size_t(d) * d);
            WFS_CUSOLVER_CHECK(getrf(cusolver.get(), d, luWork.data(), solverWork.data(), ipiv.data(), info.data()));
            copy(out.data(), x.data(), dm);
            WFS_CUSOLVER_CHECK(getrs(cusolver.get(), d, m, luWork.data(), ipiv.data(), out.data(), info.data()));
            return;
        case DeviceMethod::SvdLogDet:
            sumLogAbsKernel<T><<<1, kThreads, 0, s()>>>(sigma.data(), d, 1, scalar.data());
            WFS_KERNEL_CHECK("sumLogAbsKernel");
            return;
        case DeviceMethod::LuLogDet:
            copy(luWork.data(), w.data(), std::size_t(d) * d);
            WFS_CUSOLVER_CHECK(getrf(cusolver.get(), d, luWork.data(), solverWork.data(), ipiv.data(), info.data()));
            sumLogAbsKernel<T><<<1, kThreads, 0, s()>>>(luWork.data(), d, d + 1, scalar.data());
            WFS_KERNEL_CHECK("sumLogAbsKernel");
            return;
        }
    }

    void ensureSolverWork(int elements)
    {
        if (elements > solverWorkSize) {
            solverWork.resize(std::size_t(elements));
            solverWorkSize = elements;
        }
    }

    std::vector<T> download(const T* source, std::size_t count) const
    {
        std::vector<T> host(count);
        WFS_CUDA_CHECK(cudaStreamSynchronize(s()));
        if (count > 0)
            WFS_CUDA_CHECK(cudaMemcpy(host.data(), source, count * sizeof(T), cudaMemcpyDeviceToHost));
        return host;
    }
};

template <typename T>
DeviceFasth<T>::DeviceFasth(int deviceOrdinal)
{
    // The handles belong to the current device, so select it before creating anything.
    WFS_CUDA_CHECK(cudaSetDevice(deviceOrdinal));
    m_impl = std::make_unique<Impl>();
    Impl& impl = *m_impl;
    impl.device = deviceOrdinal;
    WFS_CUBLAS_CHECK(cublasSetStream(impl.cublas.get(), impl.s()));
    // Plain FP32/FP64 arithmetic: no TF32 tensor-core shortcut for float (spec: TF32 off).
    WFS_CUBLAS_CHECK(cublasSetMathMode(impl.cublas.get(), CUBLAS_DEFAULT_MATH));
    // Every alpha and beta lives on the device (constants, and the per-reflector -2/||v||^2 of the
    // sequential baseline), so no call waits for a host value.
    WFS_CUBLAS_CHECK(cublasSetPointerMode(impl.cublas.get(), CUBLAS_POINTER_MODE_DEVICE));
    // A workspace of our own keeps cuBLAS from allocating inside a captured graph.
    impl.cublasWorkspace.resize(std::size_t(32) << 20);
    WFS_CUBLAS_CHECK(cublasSetWorkspace(impl.cublas.get(), impl.cublasWorkspace.data(), impl.cublasWorkspace.size()));
    WFS_CUSOLVER_CHECK(cusolverDnSetStream(impl.cusolver.get(), impl.s()));
    const T constants[3] = {T(1), T(0), T(-1)};
    impl.constants.resize(3);
    WFS_CUDA_CHECK(cudaMemcpy(impl.constants.data(), constants, sizeof(constants), cudaMemcpyHostToDevice));
    impl.info.resize(1);
    impl.scalar.resize(1);
}

template <typename T>
DeviceFasth<T>::~DeviceFasth() = default;

namespace {
template <typename T>
void upload(DeviceBuffer<T>& buffer, const std::vector<T>& host, std::size_t expected, const char* what)
{
    if (host.size() != expected)
        throw std::invalid_argument(std::string("DeviceFasth: ") + what + " has the wrong size");
    buffer.resize(expected);
    WFS_CUDA_CHECK(cudaMemcpy(buffer.data(), host.data(), expected * sizeof(T), cudaMemcpyHostToDevice));
}
} // namespace

template <typename T>
void DeviceFasth<T>::setProblem(const DeviceProblem& problem, const std::vector<T>& reflectors, const std::vector<T>& tau,
                                const std::vector<T>& x, const std::vector<T>& outputGradient)
{
    if (problem.d < 1 || problem.k < 1 || problem.k > problem.d || problem.m < 1 || problem.blockSize < 1 || problem.treeLevels < 0)
        throw std::invalid_argument("DeviceFasth: need 1 <= k <= d, m >= 1, block >= 1, tree levels >= 0");
    Impl& impl = *m_impl;
    WFS_CUDA_CHECK(cudaSetDevice(impl.device));
    impl.graph.reset();
    impl.launch.clear(); // a new problem needs a new prepare()
    // Q and the SVD layer belong to the previous problem.
    impl.q = DeviceBuffer<T>();
    impl.haveSvd = false;
    impl.problem = problem;
    const int d = problem.d, k = problem.k, m = problem.m, b = problem.blockSize;
    const std::size_t dm = std::size_t(d) * m;
    upload(impl.v, reflectors, std::size_t(d) * k, "reflectors");
    upload(impl.tau, tau, std::size_t(k), "tau");
    upload(impl.x, x, dm, "x");
    upload(impl.g, outputGradient, dm, "outputGradient");

    // The block structure and the tree's merge plan depend on sizes only.
    impl.blocks.clear();
    for (int begin = 0; begin < k; begin += b)
        impl.blocks.push_back({begin, std::min(b, k - begin)});
    impl.mergePlan.clear();
    impl.merged = impl.blocks;
    for (int level = 0; level < problem.treeLevels && impl.merged.size() > 1; ++level) {
        std::vector<std::pair<Block, Block>> pairs;
        std::vector<Block> next;
        for (std::size_t i = 0; i < impl.merged.size(); i += 2) {
            if (i + 1 < impl.merged.size()) {
                pairs.emplace_back(impl.merged[i], impl.merged[i + 1]);
                next.push_back({impl.merged[i].begin, impl.merged[i].size + impl.merged[i + 1].size});
            } else {
                next.push_back(impl.merged[i]);
            }
        }
        impl.mergePlan.push_back(std::move(pairs));
        impl.merged = std::move(next);
    }
    impl.maxMergedBlock = 0;
    for (const Block& block : impl.merged)
        impl.maxMergedBlock = std::max(impl.maxMergedBlock, block.size);
    auto uploadBlocks = [](const std::vector<Block>& list, DeviceBuffer<int>& begins, DeviceBuffer<int>& sizes) {
        std::vector<int> b(list.size()), s(list.size());
        for (std::size_t i = 0; i < list.size(); ++i) {
            b[i] = list[i].begin;
            s[i] = list[i].size;
        }
        upload(begins, b, b.size(), "block starts");
        upload(sizes, s, s.size(), "block sizes");
    };
    uploadBlocks(impl.blocks, impl.blockBegin, impl.blockSize);
    uploadBlocks(impl.merged, impl.mergedBegin, impl.mergedSize);

    // Every workspace now, so that nothing is allocated while timing.
    impl.out.resize(dm);
    impl.ag.resize(2 * dm);
    impl.gradV.resize(std::size_t(d) * k);
    impl.scale.resize(std::size_t(k));
    impl.negScale.resize(std::size_t(k));
    impl.u.resize(std::size_t(d) * k);
    impl.tInverse.resize(impl.blocks.size() * std::size_t(b) * b);
    const int half = (impl.maxMergedBlock + 1) / 2 + b;
    impl.cross.resize(std::size_t(half) * half);
    // z holds a block's V^T X (block x 2m) and the sequential baselines' p (2m).
    impl.z.resize(std::size_t(std::max(impl.maxMergedBlock, 1)) * 2 * m + 2 * std::size_t(m));
    impl.states.resize(impl.blocks.size() * 2 * dm);

    // Backward passes start from H X, computed once by the sequential algorithm.
    impl.forward.resize(dm);
    impl.computeScale(impl.v.data(), k, impl.scale.data(), impl.negScale.data());
    impl.copy(impl.forward.data(), impl.x.data(), dm);
    impl.sequentialCublas(impl.forward.data(), m);
    WFS_CUDA_CHECK(cudaStreamSynchronize(impl.s()));
}

template <typename T>
void DeviceFasth<T>::setSvdLayer(const std::vector<T>& u, const std::vector<T>& v, const std::vector<T>& sigma, const std::vector<T>& dense)
{
    Impl& impl = *m_impl;
    const std::size_t d = std::size_t(impl.problem.d);
    upload(impl.svdU, u, d * d, "SVD U reflectors");
    upload(impl.svdV, v, d * d, "SVD V reflectors");
    upload(impl.sigma, sigma, d, "sigma");
    if (dense.empty()) {
        impl.w.resize(d * d);
    } else {
        upload(impl.w, dense, d * d, "dense W");
    }
    for (DeviceBuffer<T>* buffer : {&impl.svdUScale, &impl.svdUNeg, &impl.svdVScale, &impl.svdVNeg})
        buffer->resize(d);
    impl.svdUFactors.resize(d * d);
    impl.svdVFactors.resize(d * d);
    impl.luWork.resize(d * d);
    impl.ipiv.resize(d);
    // z must also hold a block's V^T X for d columns when W is formed on the device.
    impl.z.resize(std::max(impl.z.size(), std::size_t(impl.problem.blockSize) * d + 2 * std::size_t(impl.problem.m)));
    if (dense.empty()) {
        impl.formDenseW();
        WFS_CUDA_CHECK(cudaStreamSynchronize(impl.s()));
    }
    impl.haveSvd = true;
}

template <typename T>
void DeviceFasth<T>::setDenseQ(const std::vector<T>& q)
{
    Impl& impl = *m_impl;
    const std::size_t d = std::size_t(impl.problem.d);
    if (q.empty()) {
        // Q = H_1 ... H_k formed on the device by FastH applied to the identity.
        impl.q.resize(d * d);
        impl.z.resize(std::max(impl.z.size(), std::size_t(impl.maxMergedBlock) * d + 2 * std::size_t(impl.problem.m)));
        identityKernel<T><<<blocksFor(d * d), kThreads, 0, impl.s()>>>(impl.q.data(), int(d));
        WFS_KERNEL_CHECK("identityKernel");
        impl.prepareFactors(DeviceMethod::FastH);
        impl.applyBlocks(DeviceMethod::FastH, impl.v.data(), impl.u.data(), impl.blocks, impl.q.data(), int(d), false);
        WFS_CUDA_CHECK(cudaStreamSynchronize(impl.s()));
    } else {
        upload(impl.q, q, d * d, "Q");
    }
    impl.denseGrad.resize(d * d);
}

template <typename T>
bool DeviceFasth<T>::supports(DeviceMethod method, DevicePass pass, std::string* why) const
{
    auto no = [why](std::string reason) {
        if (why)
            *why = std::move(reason);
        return false;
    };
    const Impl& impl = *m_impl;
    const bool useCase = method == DeviceMethod::SvdInverse || method == DeviceMethod::LuSolve || method == DeviceMethod::SvdLogDet
                         || method == DeviceMethod::LuLogDet;
    if (useCase && pass != DevicePass::Forward)
        return no("the use-case methods have only a forward pass");
    if (useCase && !impl.haveSvd)
        return no("the use-case methods need the SVD layer (setSvdLayer)");
    if (method == DeviceMethod::SequentialFused) {
        if (pass != DevicePass::Forward)
            return no("the fused sequential kernel is forward-only; 'sequential' (cuBLAS) has the backward pass");
        // The column (dynamic) plus blockSum's static scratch[32] share the 48 KiB.
        if ((std::size_t(impl.problem.d) + 32) * sizeof(T) > kDefaultSharedBytes)
            return no("the fused sequential kernel keeps a column in shared memory: d is too large");
    }
    if ((method == DeviceMethod::FastH || method == DeviceMethod::TreeMerge || method == DeviceMethod::SvdInverse)
        && std::size_t(impl.problem.blockSize) * sizeof(T) > kDefaultSharedBytes)
        return no("block size too large for the WY kernel's shared memory");
    if (2 * std::size_t(impl.problem.m) * sizeof(T) > kDefaultSharedBytes && pass != DevicePass::Forward)
        return no("batch too large for the gradient kernel's shared memory");
    return true;
}

template <typename T>
void DeviceFasth<T>::prepare(DeviceMethod method, DevicePass pass, bool useGraph)
{
    Impl& impl = *m_impl;
    WFS_CUDA_CHECK(cudaSetDevice(impl.device));
    const int d = impl.problem.d, m = impl.problem.m, k = impl.problem.k;
    std::string why;
    if (!supports(method, pass, &why))
        throw std::invalid_argument("DeviceFasth: " + why);
    if (method == DeviceMethod::Library) {
        int forwardWork = 0, backwardWork = 0;
        WFS_CUSOLVER_CHECK(ormqrBufferSize(impl.cusolver.get(), CUBLAS_OP_N, d, m, k, impl.v.data(), d, impl.tau.data(), impl.out.data(), d,
                                           &forwardWork));
        WFS_CUSOLVER_CHECK(ormqrBufferSize(impl.cusolver.get(), CUBLAS_OP_T, d, 2 * m, k, impl.v.data(), d, impl.tau.data(), impl.ag.data(),
                                           d, &backwardWork));
        impl.ensureSolverWork(std::max(forwardWork, backwardWork));
    }
    if (method == DeviceMethod::Dense && impl.q.size() == 0)
        setDenseQ({});
    if (method == DeviceMethod::LuSolve || method == DeviceMethod::LuLogDet) {
        int work = 0;
        WFS_CUSOLVER_CHECK(getrfBufferSize(impl.cusolver.get(), d, impl.luWork.data(), &work));
        impl.ensureSolverWork(work);
    }
    impl.graph.reset();
    impl.launch.clear();
    if (useGraph) {
        // One eager run first: libraries load kernels and set up lazily, which a capture must not see.
        impl.execute(method, pass);
        WFS_CUDA_CHECK(cudaStreamSynchronize(impl.s()));
        impl.graphMethod = method;
        impl.graphPass = pass;
        if (!capturable(method)) {
            impl.launch = "eager (cuSOLVER calls are not known to support stream capture)";
            return;
        }
        try {
            impl.graph.capture(impl.s(), [&] { impl.execute(method, pass); });
            impl.launch = "graph";
        } catch (const CudaError& error) {
            // capture() has ended the capture and cleared the error: the method runs eagerly instead.
            impl.launch = std::string("eager (CUDA graph capture failed: ") + error.what() + ")";
        }
    } else {
        impl.launch = "eager";
    }
}

template <typename T>
bool DeviceFasth<T>::capturable(DeviceMethod method)
{
    return method != DeviceMethod::Library && method != DeviceMethod::LuSolve && method != DeviceMethod::LuLogDet;
}

template <typename T>
const std::string& DeviceFasth<T>::launchMode() const
{
    return m_impl->launch;
}

template <typename T>
float DeviceFasth<T>::run(DeviceMethod method, DevicePass pass, bool useGraph)
{
    Impl& impl = *m_impl;
    if (useGraph && !(impl.graphMethod == method && impl.graphPass == pass && !impl.launch.empty() && impl.launch != "eager"))
        throw std::logic_error("DeviceFasth: run with a graph needs prepare with a graph for the same method and pass");
    // A method prepared for a graph whose capture was refused (or cannot be captured) runs eagerly.
    const bool launchGraph = useGraph && impl.graph.isValid();
    WFS_CUDA_CHECK(cudaEventRecord(impl.start.get(), impl.s()));
    if (launchGraph)
        impl.graph.launch(impl.s());
    else
        impl.execute(method, pass);
    WFS_CUDA_CHECK(cudaEventRecord(impl.stop.get(), impl.s()));
    WFS_CUDA_CHECK(cudaEventSynchronize(impl.stop.get()));
    float ms = 0;
    WFS_CUDA_CHECK(cudaEventElapsedTime(&ms, impl.start.get(), impl.stop.get()));
    impl.lastMethod = method;
    impl.lastPass = pass;
    return ms;
}

template <typename T>
std::vector<T> DeviceFasth<T>::output() const
{
    const Impl& impl = *m_impl;
    if (impl.lastMethod == DeviceMethod::SvdLogDet || impl.lastMethod == DeviceMethod::LuLogDet)
        return impl.download(impl.scalar.data(), 1);
    return impl.download(impl.out.data(), std::size_t(impl.problem.d) * impl.problem.m);
}

template <typename T>
std::vector<T> DeviceFasth<T>::gradientX() const
{
    const Impl& impl = *m_impl;
    const std::size_t dm = std::size_t(impl.problem.d) * impl.problem.m;
    return impl.download(impl.ag.data() + dm, dm);
}

template <typename T>
std::vector<T> DeviceFasth<T>::gradientV() const
{
    const Impl& impl = *m_impl;
    switch (impl.lastMethod) {
    case DeviceMethod::SequentialCublas:
    case DeviceMethod::FastH:
    case DeviceMethod::CompactWY:
    case DeviceMethod::TreeMerge:
        if (impl.lastPass != DevicePass::Forward)
            return impl.download(impl.gradV.data(), std::size_t(impl.problem.d) * impl.problem.k);
        break;
    default:
        break;
    }
    return {};
}

template class DeviceFasth<float>;
template class DeviceFasth<double>;

} // namespace wfs::gpu
