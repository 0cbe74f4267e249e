// FastH on the GPU, part of FasthDevice.cu: the kernels (reflector norms, the per-block WY build, the fused
// sequential baseline, the per-block reflector gradients), templates for float and double.
// Included by FasthDevice.cu only; everything here is in namespace wfs::gpu::fasth_device.
#pragma once
#include <cstddef>

namespace wfs::gpu::fasth_device {

template <typename T>
__device__ T warpSum(T value)
{
    for (int offset = 16; offset > 0; offset >>= 1)
        value += __shfl_down_sync(0xffffffffu, value, offset);
    return value;
}

// Sum over the thread block; every thread gets the total. blockDim.x must be a multiple of 32.
template <typename T>
__device__ T blockSum(T value, T* scratch)
{
    const int lane = threadIdx.x & 31;
    const int warp = threadIdx.x >> 5;
    value = warpSum(value);
    __syncthreads(); // scratch may still be read by the previous call
    if (lane == 0)
        scratch[warp] = value;
    __syncthreads();
    const int warps = int(blockDim.x) >> 5;
    T total = lane < warps ? scratch[lane] : T(0);
    total = warpSum(total);
    return __shfl_sync(0xffffffffu, total, 0);
}

// 2 / ||v_r||^2 and its negative (the alpha of the per-reflector rank-1 updates), one block per reflector.
template <typename T>
__global__ void scaleKernel(const T* v, int d, T* scale, T* negScale)
{
    __shared__ T scratch[32];
    const T* column = v + std::size_t(blockIdx.x) * d;
    T sum = 0;
    for (int i = threadIdx.x; i < d; i += blockDim.x)
        sum += column[i] * column[i];
    sum = blockSum(sum, scratch);
    if (threadIdx.x == 0) {
        scale[blockIdx.x] = T(2) / sum;
        negScale[blockIdx.x] = -T(2) / sum;
    }
}

// One thread block per block of b reflectors: the Bischof & Van Loan recursion with U = 2 W diag(1/||v||),
// u_r = c_r (v_r - U_{<r} V_{<r}^T v_r), so that P = H_begin ... H_end = I - U V^T. The b steps are
// sequential inside the block; the blocks are independent.
template <typename T>
__global__ void buildWyKernel(const T* v, int d, int k, int b, const T* scale, T* u)
{
    extern __shared__ __align__(16) unsigned char sharedBytes[];
    T* gram = reinterpret_cast<T*>(sharedBytes); // <v_l, v_r> for l < r
    const int begin = int(blockIdx.x) * b;
    const int size = min(b, k - begin);
    const int lane = threadIdx.x & 31;
    const int warp = threadIdx.x >> 5;
    const int warps = int(blockDim.x) >> 5;
    for (int r = 0; r < size; ++r) {
        const T* vr = v + std::size_t(begin + r) * d;
        for (int l = warp; l < r; l += warps) {
            const T* vl = v + std::size_t(begin + l) * d;
            T dot = 0;
            for (int i = lane; i < d; i += 32)
                dot += vl[i] * vr[i];
            dot = warpSum(dot);
            if (lane == 0)
                gram[l] = dot;
        }
        __syncthreads();
        const T c = scale[begin + r];
        T* ur = u + std::size_t(begin + r) * d;
        for (int i = threadIdx.x; i < d; i += blockDim.x) {
            T value = vr[i];
            for (int l = 0; l < r; ++l)
                value -= u[std::size_t(begin + l) * d + i] * gram[l];
            ur[i] = c * value;
        }
        __syncthreads(); // gram is rewritten by the next step
    }
}

// From the Gram matrices V_j^T V_j (b x b each) to T_j^{-1} = striu(G) + diag(G) / 2.
template <typename T>
__global__ void tInverseKernel(T* t, int b, std::size_t count)
{
    const std::size_t index = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (index >= count)
        return;
    const std::size_t within = index % (std::size_t(b) * b);
    const int row = int(within % b);
    const int col = int(within / b);
    if (row > col)
        t[index] = 0;
    else if (row == col)
        t[index] *= T(0.5);
}

// The sequential algorithm in one kernel: one thread block per column of X, the column in shared memory,
// k dependent steps without a launch between them.
template <typename T>
__global__ void fusedSequentialKernel(const T* v, int d, int k, const T* scale, T* x, bool transposed)
{
    extern __shared__ __align__(16) unsigned char sharedBytes[];
    T* column = reinterpret_cast<T*>(sharedBytes);
    __shared__ T scratch[32];
    T* xc = x + std::size_t(blockIdx.x) * d;
    for (int i = threadIdx.x; i < d; i += blockDim.x)
        column[i] = xc[i];
    __syncthreads();
    for (int step = 0; step < k; ++step) {
        const int r = transposed ? step : k - 1 - step;
        const T* vr = v + std::size_t(r) * d;
        T dot = 0;
        for (int i = threadIdx.x; i < d; i += blockDim.x)
            dot += vr[i] * column[i];
        const T factor = scale[r] * blockSum(dot, scratch);
        // Each thread updates the entries it read, so no barrier is needed before the next dot product.
        for (int i = threadIdx.x; i < d; i += blockDim.x)
            column[i] -= factor * vr[i];
    }
    __syncthreads();
    for (int i = threadIdx.x; i < d; i += blockDim.x)
        xc[i] = column[i];
}

// Step 2 of the backward pass, one thread block per block of reflectors: from the block's saved
// (output | output gradient), d x 2m, walk its reflectors in the reverse of their application (ascending
// for apply), recovering (input | input gradient) and writing dL/dv_r = c (G_in pa^T - A_in pg^T).
template <typename T>
__global__ void reflectorGradientKernel(const T* v, int d, const int* blockBegin, const int* blockSize, const T* scale, T* states, int m,
                                        T* gradV)
{
    extern __shared__ __align__(16) unsigned char sharedBytes[];
    T* p = reinterpret_cast<T*>(sharedBytes); // v^T A_out (m values), then v^T G_out (m values)
    const int begin = blockBegin[blockIdx.x];
    const int size = blockSize[blockIdx.x];
    T* state = states + std::size_t(blockIdx.x) * d * 2 * m;
    const int lane = threadIdx.x & 31;
    const int warp = threadIdx.x >> 5;
    const int warps = int(blockDim.x) >> 5;
    const std::size_t total = std::size_t(d) * 2 * m;
    for (int step = 0; step < size; ++step) {
        const int r = begin + step;
        const T* vr = v + std::size_t(r) * d;
        const T c = scale[r];
        for (int col = warp; col < 2 * m; col += warps) {
            const T* sc = state + std::size_t(col) * d;
            T dot = 0;
            for (int i = lane; i < d; i += 32)
                dot += vr[i] * sc[i];
            dot = warpSum(dot);
            if (lane == 0)
                p[col] = dot;
        }
        __syncthreads();
        for (std::size_t index = threadIdx.x; index < total; index += blockDim.x)
            state[index] -= c * vr[index % d] * p[index / d];
        __syncthreads();
        for (int i = threadIdx.x; i < d; i += blockDim.x) {
            T value = 0;
            for (int col = 0; col < m; ++col)
                value += state[std::size_t(m + col) * d + i] * p[col] - state[std::size_t(col) * d + i] * p[m + col];
            gradV[std::size_t(r) * d + i] = c * value;
        }
        __syncthreads(); // p is rewritten by the next step
    }
}

// x[i, j] *= sigma[i] (or /= sigma[i]).
template <typename T>
__global__ void scaleRowsKernel(T* x, int d, std::size_t count, const T* sigma, bool inverse)
{
    const std::size_t index = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (index >= count)
        return;
    const T s = sigma[index % d];
    x[index] = inverse ? x[index] / s : x[index] * s;
}

template <typename T>
__global__ void identityKernel(T* a, int d)
{
    const std::size_t index = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (index >= std::size_t(d) * d)
        return;
    a[index] = (index % d) == (index / d) ? T(1) : T(0);
}

// sum log|values[i * stride]| in double, one block; written as T to out.
template <typename T>
__global__ void sumLogAbsKernel(const T* values, int n, int stride, T* out)
{
    __shared__ double scratch[32];
    double sum = 0;
    for (int i = threadIdx.x; i < n; i += blockDim.x)
        sum += log(fabs(double(values[std::size_t(i) * stride])));
    sum = blockSum(sum, scratch);
    if (threadIdx.x == 0)
        *out = T(sum);
}

struct Block {
    int begin = 0;
    int size = 0;
};

} // namespace wfs::gpu::fasth_device
