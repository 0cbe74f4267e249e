// FastH on the GPU, part of FasthDevice.cu: the cuBLAS and cuSOLVER entry points typed by overloading, so the
// launchers are written once for float and double.
// Included by FasthDevice.cu only; everything here is in namespace wfs::gpu::fasth_device.
#pragma once
#include "gpu/DeviceResources.h"

namespace wfs::gpu::fasth_device {

cublasStatus_t gemm(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k, const float* alpha, const float* a,
                    int lda, const float* b, int ldb, const float* beta, float* c, int ldc)
{
    return cublasSgemm(h, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}
cublasStatus_t gemm(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k, const double* alpha, const double* a,
                    int lda, const double* b, int ldb, const double* beta, double* c, int ldc)
{
    return cublasDgemm(h, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}
cublasStatus_t gemmStridedBatched(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k, const float* alpha,
                                  const float* a, int lda, long long sa, const float* b, int ldb, long long sb, const float* beta, float* c,
                                  int ldc, long long sc, int count)
{
    return cublasSgemmStridedBatched(h, ta, tb, m, n, k, alpha, a, lda, sa, b, ldb, sb, beta, c, ldc, sc, count);
}
cublasStatus_t gemmStridedBatched(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k, const double* alpha,
                                  const double* a, int lda, long long sa, const double* b, int ldb, long long sb, const double* beta,
                                  double* c, int ldc, long long sc, int count)
{
    return cublasDgemmStridedBatched(h, ta, tb, m, n, k, alpha, a, lda, sa, b, ldb, sb, beta, c, ldc, sc, count);
}
cublasStatus_t trsm(cublasHandle_t h, cublasOperation_t trans, int m, int n, const float* alpha, const float* a, int lda, float* b, int ldb)
{
    return cublasStrsm(h, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_UPPER, trans, CUBLAS_DIAG_NON_UNIT, m, n, alpha, a, lda, b, ldb);
}
cublasStatus_t trsm(cublasHandle_t h, cublasOperation_t trans, int m, int n, const double* alpha, const double* a, int lda, double* b,
                    int ldb)
{
    return cublasDtrsm(h, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_UPPER, trans, CUBLAS_DIAG_NON_UNIT, m, n, alpha, a, lda, b, ldb);
}
cublasStatus_t gemv(cublasHandle_t h, cublasOperation_t t, int m, int n, const float* alpha, const float* a, int lda, const float* x,
                    const float* beta, float* y)
{
    return cublasSgemv(h, t, m, n, alpha, a, lda, x, 1, beta, y, 1);
}
cublasStatus_t gemv(cublasHandle_t h, cublasOperation_t t, int m, int n, const double* alpha, const double* a, int lda, const double* x,
                    const double* beta, double* y)
{
    return cublasDgemv(h, t, m, n, alpha, a, lda, x, 1, beta, y, 1);
}
cublasStatus_t ger(cublasHandle_t h, int m, int n, const float* alpha, const float* x, const float* y, float* a, int lda)
{
    return cublasSger(h, m, n, alpha, x, 1, y, 1, a, lda);
}
cublasStatus_t ger(cublasHandle_t h, int m, int n, const double* alpha, const double* x, const double* y, double* a, int lda)
{
    return cublasDger(h, m, n, alpha, x, 1, y, 1, a, lda);
}
cusolverStatus_t ormqrBufferSize(cusolverDnHandle_t h, cublasOperation_t t, int m, int n, int k, const float* a, int lda, const float* tau,
                                 const float* c, int ldc, int* lwork)
{
    return cusolverDnSormqr_bufferSize(h, CUBLAS_SIDE_LEFT, t, m, n, k, a, lda, tau, c, ldc, lwork);
}
cusolverStatus_t ormqrBufferSize(cusolverDnHandle_t h, cublasOperation_t t, int m, int n, int k, const double* a, int lda,
                                 const double* tau, const double* c, int ldc, int* lwork)
{
    return cusolverDnDormqr_bufferSize(h, CUBLAS_SIDE_LEFT, t, m, n, k, a, lda, tau, c, ldc, lwork);
}
cusolverStatus_t ormqr(cusolverDnHandle_t h, cublasOperation_t t, int m, int n, int k, const float* a, int lda, const float* tau, float* c,
                       int ldc, float* work, int lwork, int* info)
{
    return cusolverDnSormqr(h, CUBLAS_SIDE_LEFT, t, m, n, k, a, lda, tau, c, ldc, work, lwork, info);
}
cusolverStatus_t ormqr(cusolverDnHandle_t h, cublasOperation_t t, int m, int n, int k, const double* a, int lda, const double* tau,
                       double* c, int ldc, double* work, int lwork, int* info)
{
    return cusolverDnDormqr(h, CUBLAS_SIDE_LEFT, t, m, n, k, a, lda, tau, c, ldc, work, lwork, info);
}
cusolverStatus_t getrfBufferSize(cusolverDnHandle_t h, int n, float* a, int* lwork)
{
    return cusolverDnSgetrf_bufferSize(h, n, n, a, n, lwork);
}
cusolverStatus_t getrfBufferSize(cusolverDnHandle_t h, int n, double* a, int* lwork)
{
    return cusolverDnDgetrf_bufferSize(h, n, n, a, n, lwork);
}
cusolverStatus_t getrf(cusolverDnHandle_t h, int n, float* a, float* work, int* ipiv, int* info)
{
    return cusolverDnSgetrf(h, n, n, a, n, work, ipiv, info);
}
cusolverStatus_t getrf(cusolverDnHandle_t h, int n, double* a, double* work, int* ipiv, int* info)
{
    return cusolverDnDgetrf(h, n, n, a, n, work, ipiv, info);
}
cusolverStatus_t getrs(cusolverDnHandle_t h, int n, int nrhs, const float* a, const int* ipiv, float* b, int* info)
{
    return cusolverDnSgetrs(h, CUBLAS_OP_N, n, nrhs, a, n, ipiv, b, n, info);
}
cusolverStatus_t getrs(cusolverDnHandle_t h, int n, int nrhs, const double* a, const int* ipiv, double* b, int* info)
{
    return cusolverDnDgetrs(h, CUBLAS_OP_N, n, nrhs, a, n, ipiv, b, n, info);
}

} // namespace wfs::gpu::fasth_device
