#pragma once
// RAII owners of the GPU backend's device memory, pinned host memory, cuFFT plans, streams, events,
// cuBLAS/cuSOLVER handles and CUDA graphs. Every call they make is checked (CudaCheck.h).
#include "gpu/CudaCheck.h"

#include <cstddef>
#include <utility>

namespace wfs::gpu {

// Device memory for count elements of T; move-only. Destructors never throw (errors there are ignored:
// the context may already be gone at exit).
template <typename T>
class DeviceBuffer {
public:
    DeviceBuffer() = default;
    explicit DeviceBuffer(std::size_t count) { resize(count); }
    ~DeviceBuffer() { release(); }
    DeviceBuffer(const DeviceBuffer&) = delete;
    DeviceBuffer& operator=(const DeviceBuffer&) = delete;
    DeviceBuffer(DeviceBuffer&& other) noexcept
        : m_data(std::exchange(other.m_data, nullptr))
        , m_count(std::exchange(other.m_count, 0))
    {
    }
    DeviceBuffer& operator=(DeviceBuffer&& other) noexcept
    {
        if (this != &other) {
            release();
            m_data = std::exchange(other.m_data, nullptr);
            m_count = std::exchange(other.m_count, 0);
        }
        return *this;
    }

    // Reallocates only when the size changes; the contents are not kept.
    void resize(std::size_t count)
    {
        if (count == m_count)
            return;
        release();
        if (count > 0) {
            void* data = nullptr;
            WFS_CUDA_CHECK(cudaMalloc(&data, count * sizeof(T)));
            m_data = static_cast<T*>(data);
            m_count = count;
        }
    }
    T* data() const { return m_data; }
    std::size_t size() const { return m_count; }

private:
    void release() noexcept
    {
        if (m_data)
            cudaFree(m_data);
        m_data = nullptr;
        m_count = 0;
    }

    T* m_data = nullptr;
    std::size_t m_count = 0;
};

// Page-locked host memory for count elements of T: the only kind a captured CUDA graph may copy from
// and to, and the kind that copies asynchronously. Move-only.
template <typename T>
class PinnedBuffer {
public:
    PinnedBuffer() = default;
    explicit PinnedBuffer(std::size_t count)
    {
        if (count > 0) {
            void* data = nullptr;
            WFS_CUDA_CHECK(cudaMallocHost(&data, count * sizeof(T)));
            m_data = static_cast<T*>(data);
            m_count = count;
        }
    }
    ~PinnedBuffer()
    {
        if (m_data)
            cudaFreeHost(m_data);
    }
    PinnedBuffer(const PinnedBuffer&) = delete;
    PinnedBuffer& operator=(const PinnedBuffer&) = delete;
    PinnedBuffer(PinnedBuffer&& other) noexcept
        : m_data(std::exchange(other.m_data, nullptr))
        , m_count(std::exchange(other.m_count, 0))
    {
    }
    PinnedBuffer& operator=(PinnedBuffer&& other) noexcept
    {
        if (this != &other) {
            if (m_data)
                cudaFreeHost(m_data);
            m_data = std::exchange(other.m_data, nullptr);
            m_count = std::exchange(other.m_count, 0);
        }
        return *this;
    }
    T* data() const { return m_data; }
    std::size_t size() const { return m_count; }

private:
    T* m_data = nullptr;
    std::size_t m_count = 0;
};

// A cuFFT plan handle. create() makes the handle (cufftCreate); the cufftMakePlan* call that configures
// it comes after, through get(), so that a failed configuration still leaves a handle to destroy.
class CufftPlan {
public:
    CufftPlan() = default;
    ~CufftPlan() { reset(); }
    CufftPlan(const CufftPlan&) = delete;
    CufftPlan& operator=(const CufftPlan&) = delete;
    CufftPlan(CufftPlan&& other) noexcept
        : m_plan(std::exchange(other.m_plan, 0))
        , m_valid(std::exchange(other.m_valid, false))
    {
    }
    CufftPlan& operator=(CufftPlan&& other) noexcept
    {
        if (this != &other) {
            reset();
            m_plan = std::exchange(other.m_plan, 0);
            m_valid = std::exchange(other.m_valid, false);
        }
        return *this;
    }
    void create()
    {
        reset();
        WFS_CUFFT_CHECK(cufftCreate(&m_plan));
        m_valid = true;
    }
    cufftHandle get() const { return m_plan; }
    bool isValid() const { return m_valid; }
    void reset() noexcept
    {
        if (m_valid)
            cufftDestroy(m_plan);
        m_plan = 0;
        m_valid = false;
    }

private:
    cufftHandle m_plan = 0;
    bool m_valid = false;
};

class CudaStream {
public:
    CudaStream() { WFS_CUDA_CHECK(cudaStreamCreateWithFlags(&m_stream, cudaStreamNonBlocking)); }
    ~CudaStream()
    {
        if (m_stream)
            cudaStreamDestroy(m_stream);
    }
    CudaStream(const CudaStream&) = delete;
    CudaStream& operator=(const CudaStream&) = delete;
    cudaStream_t get() const { return m_stream; }

private:
    cudaStream_t m_stream = nullptr;
};

class CudaEvent {
public:
    CudaEvent() { WFS_CUDA_CHECK(cudaEventCreate(&m_event)); }
    ~CudaEvent()
    {
        if (m_event)
            cudaEventDestroy(m_event);
    }
    CudaEvent(const CudaEvent&) = delete;
    CudaEvent& operator=(const CudaEvent&) = delete;
    cudaEvent_t get() const { return m_event; }

private:
    cudaEvent_t m_event = nullptr;
};

class CublasHandle {
public:
    CublasHandle() { WFS_CUBLAS_CHECK(cublasCreate(&m_handle)); }
    ~CublasHandle()
    {
        if (m_handle)
            cublasDestroy(m_handle);
    }
    CublasHandle(const CublasHandle&) = delete;
    CublasHandle& operator=(const CublasHandle&) = delete;
    cublasHandle_t get() const { return m_handle; }

private:
    cublasHandle_t m_handle = nullptr;
};

class CusolverHandle {
public:
    CusolverHandle() { WFS_CUSOLVER_CHECK(cusolverDnCreate(&m_handle)); }
    ~CusolverHandle()
    {
        if (m_handle)
            cusolverDnDestroy(m_handle);
    }
    CusolverHandle(const CusolverHandle&) = delete;
    CusolverHandle& operator=(const CusolverHandle&) = delete;
    cusolverDnHandle_t get() const { return m_handle; }

private:
    cusolverDnHandle_t m_handle = nullptr;
};

// An instantiated CUDA graph captured from a stream.
class CudaGraphExec {
public:
    CudaGraphExec() = default;
    ~CudaGraphExec() { reset(); }
    CudaGraphExec(const CudaGraphExec&) = delete;
    CudaGraphExec& operator=(const CudaGraphExec&) = delete;

    // Captures everything record() enqueues on the stream and instantiates it. On any failure (record
    // throws, the capture was invalidated by a call that cannot be captured, instantiation refused) the
    // capture is ended, the partial graph destroyed and CUDA's last error cleared before the CudaError
    // is rethrown: cudaErrorStreamCaptureInvalidated must not surface at the next, unrelated launch
    // check. The caller may then run the same work eagerly on the stream.
    template <typename Record>
    void capture(cudaStream_t stream, Record&& record)
    {
        reset();
        WFS_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
        try {
            record();
            WFS_CUDA_CHECK(cudaStreamEndCapture(stream, &m_graph));
            WFS_CUDA_CHECK(cudaGraphInstantiate(&m_exec, m_graph, 0));
        } catch (...) {
            abandonCapture(stream);
            throw;
        }
    }
    void launch(cudaStream_t stream) const { WFS_CUDA_CHECK(cudaGraphLaunch(m_exec, stream)); }
    bool isValid() const { return m_exec != nullptr; }
    void reset() noexcept
    {
        if (m_exec)
            cudaGraphExecDestroy(m_exec);
        if (m_graph)
            cudaGraphDestroy(m_graph);
        m_exec = nullptr;
        m_graph = nullptr;
    }

private:
    void abandonCapture(cudaStream_t stream) noexcept
    {
        cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
        if (cudaStreamIsCapturing(stream, &status) == cudaSuccess && status != cudaStreamCaptureStatusNone) {
            cudaGraph_t broken = nullptr;
            cudaStreamEndCapture(stream, &broken);
            if (broken)
                cudaGraphDestroy(broken);
        }
        reset();
        cudaGetLastError(); // capture errors are not sticky: clear them so that later checks see only new errors
    }

    cudaGraph_t m_graph = nullptr;
    cudaGraphExec_t m_exec = nullptr;
};

} // namespace wfs::gpu
