#include "optics/PrunedFft.h"
#include "optics/Threads.h"

#include <cassert>
#include <cmath>
#include <numbers>

namespace wfs {

PrunedAxis::PrunedAxis(int size, int begin, int support)
    : n(size)
    , first(((begin % size) + size) % size)
    , length(size)
{
    // The smallest divisor that holds the support: B-point DFTs with B | N are what the algebra needs.
    for (int d = std::max(1, support); d < size; ++d) {
        if (size % d == 0) {
            length = d;
            break;
        }
    }
    blocks = n / length;
}

namespace {

// w^(i r) for residue r < blocks and index i < length, w = e^(2 pi i / N): the pruned axis' twiddles.
template <class Real>
std::vector<std::complex<Real>> twiddles(const PrunedAxis& axis)
{
    std::vector<std::complex<Real>> t(size_t(axis.blocks) * size_t(axis.length));
    for (int r = 0; r < axis.blocks; ++r)
        for (int i = 0; i < axis.length; ++i) {
            // Reduced mod N in integers first, so the angle is exact to the last bit of the division.
            const double angle = 2.0 * std::numbers::pi * double((long(i) * r) % axis.n) / double(axis.n);
            t[size_t(r) * size_t(axis.length) + size_t(i)] = std::complex<Real>(Real(std::cos(angle)), Real(std::sin(angle)));
        }
    return t;
}

} // namespace

template <class Real>
bool PrunedFft<Real>::applicable(int n, int rowBegin, int rowEnd, int colBegin, int colEnd)
{
    if (n < 2 || rowEnd <= rowBegin || colEnd <= colBegin)
        return false;
    const PrunedAxis rows(n, rowBegin, rowEnd - rowBegin), cols(n, colBegin, colEnd - colBegin);
    // Every block that a plan runs on starts a multiple of 64 bytes from its array, as FFTW's new-array
    // execution needs; any even grid with a power-of-two band meets this.
    const size_t bytes = sizeof(Complex);
    const bool aligned = (size_t(n) * size_t(rows.length) * bytes) % 64 == 0 && (size_t(cols.length) * size_t(rows.length) * bytes) % 64 == 0;
    return rows.blocks >= 2 && aligned;
}

template <class Real>
PrunedFft<Real>::PrunedFft(int n, int rowBegin, int rowEnd, int colBegin, int colEnd, const simd::OpticsKernels<Real>& kernels,
                           int threads, bool measure)
    : m_n(n)
    , m_rows(n, rowBegin, rowEnd - rowBegin)
    , m_cols(n, colBegin, colEnd - colBegin)
    , m_kernels(kernels)
    , m_threads(threads)
    , m_block(size_t(m_cols.length) * size_t(m_rows.length))
    , m_middle(size_t(n) * size_t(m_rows.length))
    , m_scratchMiddle(size_t(n) * size_t(m_rows.length))
    , m_scratchBlock(size_t(m_cols.length) * size_t(m_rows.length))
    , m_rowTwiddles(twiddles<Real>(m_rows))
    , m_colTwiddles(twiddles<Real>(m_cols))
{
    auto key = [&](bool rows, fftw::Direction direction) {
        fftw::PlanKey k;
        k.n = n;
        k.axes = fftw::Axes::Batch;
        k.direction = direction;
        k.threads = threads;
        k.measure = measure;
        const int b = m_rows.length;
        // Rows stage: along each contiguous row of the N x B middle array. Columns stage: along the
        // Bc rows of the block, one transform per pupil row j (stride B).
        k.length = rows ? b : m_cols.length;
        k.count = rows ? n : b;
        k.stride = rows ? 1 : b;
        k.distance = rows ? b : 1;
        return k;
    };
    m_rowsBackward = fftw::plan<Real>(key(true, fftw::Direction::Backward));
    m_rowsForward = fftw::plan<Real>(key(true, fftw::Direction::Forward));
    m_colsBackward = fftw::plan<Real>(key(false, fftw::Direction::Backward));
    m_colsForward = fftw::plan<Real>(key(false, fftw::Direction::Forward));
}

template <class Real>
int PrunedFft<Real>::blockIndex(int gridIndex) const
{
    const int j = (gridIndex / m_n - m_rows.first + m_n) % m_n;
    const int m = (gridIndex % m_n - m_cols.first + m_n) % m_n;
    assert(j < m_rows.length && m < m_cols.length);
    return m * m_rows.length + j;
}

template <class Real>
size_t PrunedFft<Real>::outputIndex(size_t gridIndex) const
{
    const size_t n = size_t(m_n), row = gridIndex / n, col = gridIndex % n;
    const size_t s = row % size_t(m_rows.blocks), q = row / size_t(m_rows.blocks);
    const size_t t = (col % size_t(m_cols.blocks)) * size_t(m_cols.length) + col / size_t(m_cols.blocks);
    return (s * n + t) * size_t(m_rows.length) + q;
}

template <class Real>
void PrunedFft<Real>::clearBlock()
{
    std::fill(m_block.data(), m_block.data() + m_block.size(), Complex(0, 0));
}

// The twiddle of one residue: the rows stage twiddles each element j of the N x B middle array by its
// pupil row (twiddleColumns), the columns stage each row m of the Bc x B block by its pupil column.
template <class Real>
void PrunedFft<Real>::twiddle(bool rows, int residue, const Complex* src, Complex* dst, bool adjoint)
{
    const PrunedAxis& axis = rows ? m_rows : m_cols;
    const long height = rows ? m_n : axis.length, width = m_rows.length;
    const Complex* t = (rows ? m_rowTwiddles : m_colTwiddles).data() + size_t(residue) * size_t(axis.length);
    auto kernel = rows ? m_kernels.twiddleColumns : m_kernels.twiddleRows;
    // Element-wise, so any split gives the same bits. Below ~32k points starting the team costs about what
    // it saves (and much more when the cores are shared), so small twiddles stay on one thread.
    const int chunks = m_threads > 1 && height * width >= 32768 ? m_threads : 1;
    threads::parallelFor(chunks, [&](int c) {
        const long begin = height * c / chunks, end = height * (c + 1) / chunks;
        kernel(end - begin, width, src + begin * width, rows ? t : t + begin, dst + begin * width, adjoint);
    });
}

template <class Real>
void PrunedFft<Real>::synthesise(Complex* output)
{
    using T = fftw::Traits<Real>;
    auto raw = [](Complex* p) { return reinterpret_cast<typename T::Complex*>(p); };
    const size_t blockSize = m_block.size(), middleSize = m_middle.size();
    // Residue 0 has unit twiddles: its transforms read the input itself.
    for (int s = 0; s < m_cols.blocks; ++s) {
        if (s > 0)
            twiddle(false, s, m_block.data(), m_scratchBlock.data(), false);
        T::execute(m_colsBackward, s > 0 ? m_scratchBlock.raw() : m_block.raw(), raw(m_middle.data() + size_t(s) * blockSize));
    }
    for (int s = 0; s < m_rows.blocks; ++s) {
        if (s > 0)
            twiddle(true, s, m_middle.data(), m_scratchMiddle.data(), false);
        T::execute(m_rowsBackward, s > 0 ? m_scratchMiddle.raw() : m_middle.raw(), raw(output + size_t(s) * middleSize));
    }
}

template <class Real>
void PrunedFft<Real>::adjoint(Complex* input)
{
    using T = fftw::Traits<Real>;
    auto raw = [](Complex* p) { return reinterpret_cast<typename T::Complex*>(p); };
    const size_t blockSize = m_block.size(), middleSize = m_middle.size();
    // The forward (unnormalised) DFT is the adjoint of the backward one; residue 0 writes the sum's first term.
    for (int s = 0; s < m_rows.blocks; ++s) {
        T::execute(m_rowsForward, raw(input + size_t(s) * middleSize), s > 0 ? m_scratchMiddle.raw() : m_middle.raw());
        if (s > 0)
            twiddle(true, s, m_scratchMiddle.data(), m_middle.data(), true);
    }
    for (int s = 0; s < m_cols.blocks; ++s) {
        T::execute(m_colsForward, raw(m_middle.data() + size_t(s) * blockSize), s > 0 ? m_scratchBlock.raw() : m_block.raw());
        if (s > 0)
            twiddle(false, s, m_scratchBlock.data(), m_block.data(), true);
    }
}

template class PrunedFft<double>;
template class PrunedFft<float>;

} // namespace wfs
