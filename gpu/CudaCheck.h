#pragma once
// Checked CUDA, cuBLAS, cuSOLVER and cuFFT calls, shared by every part of the GPU backend (FastH, the
// forward model). A failed call becomes a CudaError naming the call, the file and the line, never an
// abort, so that the caller can fall back to the CPU and say why. The RAII owners are in DeviceResources.h.
#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cufft.h>
#include <cusolverDn.h>

#include <cstddef>
#include <stdexcept>
#include <string>
#include <utility>

namespace wfs::gpu {

class CudaError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

inline std::string whereText(const char* call, const char* file, int line)
{
    return std::string(call) + " at " + file + ":" + std::to_string(line);
}

inline void checkCuda(cudaError_t status, const char* call, const char* file, int line)
{
    if (status != cudaSuccess)
        throw CudaError(whereText(call, file, line) + " failed: " + cudaGetErrorName(status) + " (" + cudaGetErrorString(status) + ")");
}

inline void checkCublas(cublasStatus_t status, const char* call, const char* file, int line)
{
    if (status != CUBLAS_STATUS_SUCCESS)
        throw CudaError(whereText(call, file, line) + " failed: " + cublasGetStatusName(status) + " (" + cublasGetStatusString(status)
                        + ")");
}

inline const char* cusolverStatusName(cusolverStatus_t status)
{
    switch (status) {
    case CUSOLVER_STATUS_SUCCESS:
        return "CUSOLVER_STATUS_SUCCESS";
    case CUSOLVER_STATUS_NOT_INITIALIZED:
        return "CUSOLVER_STATUS_NOT_INITIALIZED";
    case CUSOLVER_STATUS_ALLOC_FAILED:
        return "CUSOLVER_STATUS_ALLOC_FAILED";
    case CUSOLVER_STATUS_INVALID_VALUE:
        return "CUSOLVER_STATUS_INVALID_VALUE";
    case CUSOLVER_STATUS_ARCH_MISMATCH:
        return "CUSOLVER_STATUS_ARCH_MISMATCH";
    case CUSOLVER_STATUS_EXECUTION_FAILED:
        return "CUSOLVER_STATUS_EXECUTION_FAILED";
    case CUSOLVER_STATUS_INTERNAL_ERROR:
        return "CUSOLVER_STATUS_INTERNAL_ERROR";
    case CUSOLVER_STATUS_MATRIX_TYPE_NOT_SUPPORTED:
        return "CUSOLVER_STATUS_MATRIX_TYPE_NOT_SUPPORTED";
    case CUSOLVER_STATUS_NOT_SUPPORTED:
        return "CUSOLVER_STATUS_NOT_SUPPORTED";
    default:
        return "cusolver status";
    }
}

inline void checkCusolver(cusolverStatus_t status, const char* call, const char* file, int line)
{
    if (status != CUSOLVER_STATUS_SUCCESS)
        throw CudaError(whereText(call, file, line) + " failed: " + cusolverStatusName(status) + " (" + std::to_string(int(status)) + ")");
}

inline const char* cufftResultName(cufftResult status)
{
    switch (status) {
    case CUFFT_SUCCESS:
        return "CUFFT_SUCCESS";
    case CUFFT_INVALID_PLAN:
        return "CUFFT_INVALID_PLAN";
    case CUFFT_ALLOC_FAILED:
        return "CUFFT_ALLOC_FAILED (out of device memory)";
    case CUFFT_INVALID_TYPE:
        return "CUFFT_INVALID_TYPE";
    case CUFFT_INVALID_VALUE:
        return "CUFFT_INVALID_VALUE";
    case CUFFT_INTERNAL_ERROR:
        return "CUFFT_INTERNAL_ERROR";
    case CUFFT_EXEC_FAILED:
        return "CUFFT_EXEC_FAILED";
    case CUFFT_SETUP_FAILED:
        return "CUFFT_SETUP_FAILED (no usable CUDA device or driver)";
    case CUFFT_INVALID_SIZE:
        return "CUFFT_INVALID_SIZE";
    case CUFFT_UNALIGNED_DATA:
        return "CUFFT_UNALIGNED_DATA";
    case CUFFT_INVALID_DEVICE:
        return "CUFFT_INVALID_DEVICE";
    case CUFFT_NO_WORKSPACE:
        return "CUFFT_NO_WORKSPACE";
    case CUFFT_NOT_IMPLEMENTED:
        return "CUFFT_NOT_IMPLEMENTED";
    case CUFFT_NOT_SUPPORTED:
        return "CUFFT_NOT_SUPPORTED";
    case CUFFT_MISSING_DEPENDENCY:
        return "CUFFT_MISSING_DEPENDENCY";
    case CUFFT_NVRTC_FAILURE:
        return "CUFFT_NVRTC_FAILURE";
    case CUFFT_NVJITLINK_FAILURE:
        return "CUFFT_NVJITLINK_FAILURE";
    case CUFFT_NVSHMEM_FAILURE:
        return "CUFFT_NVSHMEM_FAILURE";
    }
    return "cuFFT status";
}

inline void checkCufft(cufftResult status, const char* call, const char* file, int line)
{
    if (status != CUFFT_SUCCESS)
        throw CudaError(whereText(call, file, line) + " failed: " + cufftResultName(status) + " (" + std::to_string(int(status)) + ")");
}

} // namespace wfs::gpu

#define WFS_CUFFT_CHECK(call) ::wfs::gpu::checkCufft((call), #call, __FILE__, __LINE__)
#define WFS_CUDA_CHECK(call) ::wfs::gpu::checkCuda((call), #call, __FILE__, __LINE__)
#define WFS_CUBLAS_CHECK(call) ::wfs::gpu::checkCublas((call), #call, __FILE__, __LINE__)
#define WFS_CUSOLVER_CHECK(call) ::wfs::gpu::checkCusolver((call), #call, __FILE__, __LINE__)
// After a kernel launch: launch-configuration errors surface here, with the kernel's name.
#define WFS_KERNEL_CHECK(name) ::wfs::gpu::checkCuda(cudaGetLastError(), "launch of " name, __FILE__, __LINE__)
