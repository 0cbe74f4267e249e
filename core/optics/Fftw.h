#pragma once
// FFTW plumbing: precision traits, and a process-wide cache of plans. Plans are created under one
// mutex (FFTW's planner is not thread-safe) and executed anywhere with the new-array API.
#include <fftw3.h>

#include <complex>
#include <cstddef>
#include <memory>

namespace wfs::fftw {

template <class Real>
struct Traits;

template <>
struct Traits<double> {
    using Complex = fftw_complex;
    using Plan = fftw_plan;
    static void* malloc(size_t bytes) { return fftw_malloc(bytes); }
    static void free(void* p) { fftw_free(p); }
    static void execute(Plan plan, Complex* in, Complex* out) { fftw_execute_dft(plan, in, out); }
};

template <>
struct Traits<float> {
    using Complex = fftwf_complex;
    using Plan = fftwf_plan;
    static void* malloc(size_t bytes) { return fftwf_malloc(bytes); }
    static void free(void* p) { fftwf_free(p); }
    static void execute(Plan plan, Complex* in, Complex* out) { fftwf_execute_dft(plan, in, out); }
};

// An aligned array of complex numbers, owned (RAII).
template <class Real>
class ComplexBuffer {
public:
    explicit ComplexBuffer(size_t count = 0) { resize(count); }
    ~ComplexBuffer() { Traits<Real>::free(m_data); }
    ComplexBuffer(const ComplexBuffer&) = delete;
    ComplexBuffer& operator=(const ComplexBuffer&) = delete;
    void resize(size_t count);
    std::complex<Real>* data() { return m_data; }
    typename Traits<Real>::Complex* raw() { return reinterpret_cast<typename Traits<Real>::Complex*>(m_data); }
    size_t size() const { return m_size; }

private:
    std::complex<Real>* m_data = nullptr;
    size_t m_size = 0;
};

enum class Direction { Forward = FFTW_FORWARD, Backward = FFTW_BACKWARD };

// What a plan transforms, in place, inside an N x N row-major array: `count` rows starting at
// `firstRow` (1-D transforms along rows), or all N columns (1-D transforms along columns), or the
// whole 2-D array. Batch: out of place, `count` 1-D transforms of `length` points, their elements
// `stride` apart and successive transforms `distance` apart, the output laid out as the input (the
// pruned transform's stages, optics/PrunedFft.h).
enum class Axes { Rows, Columns, Full2d, Batch };

struct PlanKey {
    int n = 0;
    Axes axes = Axes::Full2d;
    int firstRow = 0; // Rows only
    int count = 0;    // Rows and Batch
    int length = 0;   // Batch only
    int stride = 1;   // Batch only
    int distance = 0; // Batch only
    Direction direction = Direction::Forward;
    int threads = 1;
    bool measure = true; // FFTW_MEASURE (slower planning, faster transforms) or FFTW_ESTIMATE
    auto operator<=>(const PlanKey&) const = default;
};

// Returns a cached plan for the key, creating it (under the planner mutex) on first use. The plan is
// made for in-place execution on an fftw_malloc'd N x N array; execute it with Traits::execute on
// the same offset (firstRow * N for Rows) of any such array. A Batch plan is made out of place on
// fftw_malloc'd arrays; execute it on pointers whose offsets from such arrays are multiples of 64
// bytes (FFTW's new-array rule: the same alignment as the arrays it was planned on).
template <class Real>
typename Traits<Real>::Plan plan(const PlanKey& key);

// Sets up FFTW's threads support once; returns false if it is unavailable.
bool initThreads();

} // namespace wfs::fftw
