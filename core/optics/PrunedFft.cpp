#include "optics/PrunedFft.h"
#include "optics/Threads.h"

#include <algorithm>
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
    const bool aligned =
        (size_t(n) * size_t(rows.length) * bytes) % 64 == 0 && (size_t(cols.length) * size_t(rows.length) * bytes) % 64 == 0;
    return rows.blocks >= 2 && aligned;
}

template <class Real>
PrunedFft<Real>::PrunedFft(int n, int rowBegin, int rowEnd, int colBegin, int colEnd, const simd::OpticsKernels<Real>& kernels, int threads,
                           bool measure)
    : m_n(n)
    , m_rows(n, rowBegin, rowEnd - rowBegin)
    , m_cols(n, colBegin, colEnd - colBegin)
    , m_kernels(kernels)
    , m_workers(threads > 1 && long(n) * m_rows.length >= kParallelPoints ? threads : 1)
    , m_block(size_t(m_cols.length) * size_t(m_rows.length))
    , m_middle(size_t(n) * size_t(m_rows.length))
    , m_rowTwiddles(twiddles<Real>(m_rows))
    , m_colTwiddles(twiddles<Real>(m_cols))
{
    // Slices of a row residue start on multiples of 8 rows: B >= 8 complex values per row then keeps every
    // slice 64-byte aligned, as FFTW's new-array execution of a plan made on aligned arrays needs.
    m_rowStage = split(m_workers, m_rows.blocks, n, 8);
    m_colStage = split(std::min(m_workers, m_cols.blocks), m_cols.blocks, m_cols.length, m_cols.length);
    for (int w = 0; w < m_rowStage.threads(); ++w) {
        m_scratchMiddle.push_back(std::make_unique<fftw::ComplexBuffer<Real>>(m_middle.size()));
        m_sumMiddle.push_back(std::make_unique<fftw::ComplexBuffer<Real>>(w > 0 && m_rowStage.sharesSlices() ? m_middle.size() : 0));
    }
    for (int w = 0; w < m_colStage.threads(); ++w) {
        m_scratchBlock.push_back(std::make_unique<fftw::ComplexBuffer<Real>>(m_block.size()));
        m_sumBlock.push_back(std::make_unique<fftw::ComplexBuffer<Real>>(w > 0 && m_colStage.sharesSlices() ? m_block.size() : 0));
    }
    // Single-threaded plans: the threads above share out the transforms, so FFTW's own threads would only
    // compete with them for the cores.
    auto key = [&](bool rows, fftw::Direction direction, int count) {
        fftw::PlanKey k;
        k.n = n;
        k.axes = fftw::Axes::Batch;
        k.direction = direction;
        k.threads = 1;
        k.measure = measure;
        const int b = m_rows.length;
        // Rows stage: along each contiguous row of (a slice of) the N x B middle array. Columns stage: along
        // the Bc rows of the block, one transform per pupil row j (stride B).
        k.length = rows ? b : m_cols.length;
        k.count = rows ? count : b;
        k.stride = rows ? 1 : b;
        k.distance = rows ? b : 1;
        return k;
    };
    const long sliceRows = m_rowStage.sliceRows, lastRows = n - (long(n) - 1) / sliceRows * sliceRows;
    for (long count : {sliceRows, lastRows}) {
        m_rowsBackward.push_back(fftw::plan<Real>(key(true, fftw::Direction::Backward, int(count))));
        m_rowsForward.push_back(fftw::plan<Real>(key(true, fftw::Direction::Forward, int(count))));
    }
    m_colsBackward = fftw::plan<Real>(key(false, fftw::Direction::Backward, 0));
    m_colsForward = fftw::plan<Real>(key(false, fftw::Direction::Forward, 0));
}

// The stage's work dealt to the threads. With sliceMultiple < rows (the rows stage) and more than one thread, each
// thread owns one slice of rows in every residue: the threads do equal work (residue 0's transforms skip the
// twiddle, so a residue per thread would leave the first thread idle while the others twiddle), and the adjoint's
// sums over residues stay within one thread, in residue order, with no partial sums to add afterwards. Otherwise
// (the columns stage, whose block is not split) the residues go to the threads in turn.
template <class Real>
typename PrunedFft<Real>::Stage PrunedFft<Real>::split(int threads, int residues, long rows, long sliceMultiple)
{
    Stage stage;
    stage.rows = rows;
    const bool sliced = threads > 1 && sliceMultiple < rows;
    const int slices = sliced ? threads : 1;
    stage.sliceRows = std::min(rows, ((rows + slices - 1) / slices + sliceMultiple - 1) / sliceMultiple * sliceMultiple);
    const int sliceCount = int((rows + stage.sliceRows - 1) / stage.sliceRows);
    stage.items.resize(size_t(threads));
    stage.touched.assign(size_t(threads), std::vector<char>(size_t(sliceCount), 0));
    int next = 0;
    for (int s = 0; s < residues; ++s)
        for (int c = 0; c < sliceCount; ++c, ++next) {
            const int w = sliced ? c % threads : next % threads;
            Item item;
            item.residue = s;
            item.slice = c;
            item.begin = c * stage.sliceRows;
            item.end = std::min(rows, item.begin + stage.sliceRows);
            item.first = !stage.touched[size_t(w)][size_t(c)];
            stage.touched[size_t(w)][size_t(c)] = 1;
            stage.items[size_t(w)].push_back(item);
        }
    // A slice one thread alone touches is summed by that thread straight into the result.
    stage.owner.assign(size_t(sliceCount), -1);
    for (int c = 0; c < sliceCount; ++c) {
        int count = 0, last = -1;
        for (int w = 0; w < threads; ++w)
            if (stage.touched[size_t(w)][size_t(c)]) {
                ++count;
                last = w;
            }
        if (count == 1)
            stage.owner[size_t(c)] = last;
    }
    return stage;
}

template <class Real>
template <class Work>
void PrunedFft<Real>::run(const Stage& stage, Work&& work)
{
    threads::parallelFor(stage.threads(), [&](int w) {
        for (const Item& item : stage.items[size_t(w)])
            work(w, item);
    });
}

template <class Real>
void PrunedFft<Real>::reduce(const Stage& stage, Complex* target, Buffers& sums, long width)
{
    const int threads = stage.threads();
    if (!stage.sharesSlices())
        return; // every slice was summed by its one thread into the target itself
    // Row by row in thread order: the same bits for a given thread count, whichever thread adds which rows.
    threads::parallelFor(threads, [&](int part) {
        for (long r = stage.rows * part / threads; r < stage.rows * (part + 1) / threads; ++r) {
            const size_t slice = size_t(r / stage.sliceRows);
            if (stage.owner[slice] >= 0)
                continue;
            Complex* d = target + r * width;
            if (!stage.touched[0][slice])
                std::fill(d, d + width, Complex(0, 0));
            for (int w = 1; w < threads; ++w) {
                if (!stage.touched[size_t(w)][slice])
                    continue;
                const Complex* p = sums[size_t(w)]->data() + r * width;
                for (long i = 0; i < width; ++i)
                    d[i] += p[i];
            }
        }
    });
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

// The twiddle of one residue over rows [begin, end): the rows stage twiddles each element j of the N x B middle
// array by its pupil row (twiddleColumns), the columns stage each row m of the Bc x B block by its pupil column.
template <class Real>
void PrunedFft<Real>::twiddle(bool rows, int residue, long begin, long end, const Complex* src, Complex* dst, bool adjoint)
{
    const PrunedAxis& axis = rows ? m_rows : m_cols;
    const long width = m_rows.length;
    const Complex* t = (rows ? m_rowTwiddles : m_colTwiddles).data() + size_t(residue) * size_t(axis.length);
    auto kernel = rows ? m_kernels.twiddleColumns : m_kernels.twiddleRows;
    kernel(end - begin, width, src + begin * width, rows ? t : t + begin, dst + begin * width, adjoint);
}

template <class Real>
typename PrunedFft<Real>::Plan PrunedFft<Real>::rowsPlan(const std::vector<Plan>& plans, const Stage& stage, const Item& item)
{
    return item.end - item.begin == stage.sliceRows ? plans[0] : plans[1];
}

template <class Real>
void PrunedFft<Real>::synthesise(Complex* output)
{
    using T = fftw::Traits<Real>;
    auto raw = [](const Complex* p) { return reinterpret_cast<typename T::Complex*>(const_cast<Complex*>(p)); };
    const size_t blockSize = m_block.size(), middleSize = m_middle.size();
    const long width = m_rows.length;
    // Residue 0 has unit twiddles: its transforms read the input itself (FFTW's out-of-place complex
    // transforms leave their input as it is, so the threads may all read it).
    run(m_colStage, [&](int w, const Item& item) {
        const Complex* src = m_block.data();
        if (item.residue > 0) {
            twiddle(false, item.residue, item.begin, item.end, m_block.data(), m_scratchBlock[size_t(w)]->data(), false);
            src = m_scratchBlock[size_t(w)]->data();
        }
        T::execute(m_colsBackward, raw(src), raw(m_middle.data() + size_t(item.residue) * blockSize));
    });
    run(m_rowStage, [&](int w, const Item& item) {
        const size_t offset = size_t(item.begin * width);
        const Complex* src = m_middle.data() + offset;
        if (item.residue > 0) {
            twiddle(true, item.residue, item.begin, item.end, m_middle.data(), m_scratchMiddle[size_t(w)]->data(), false);
            src = m_scratchMiddle[size_t(w)]->data() + offset;
        }
        T::execute(rowsPlan(m_rowsBackward, m_rowStage, item), raw(src), raw(output + size_t(item.residue) * middleSize + offset));
    });
}

template <class Real>
void PrunedFft<Real>::adjoint(Complex* input)
{
    using T = fftw::Traits<Real>;
    auto raw = [](Complex* p) { return reinterpret_cast<typename T::Complex*>(p); };
    const size_t blockSize = m_block.size(), middleSize = m_middle.size();
    const long width = m_rows.length;
    // The forward (unnormalised) DFT is the adjoint of the backward one; the twiddles' adjoint adds. Each
    // thread sums its residues into its own array (thread 0 into the result); a thread's first residue on some
    // rows writes them (residue 0, whose twiddles are 1) or clears them first.
    auto stage = [&](const Stage& st, const std::vector<Plan>& plans, Complex* in, size_t inSize, Complex* result, Buffers& sums,
                     Buffers& scratch, bool rows) {
        run(st, [&](int w, const Item& item) {
            Complex* sum = (w == 0 || st.owner[size_t(item.slice)] == w) ? result : sums[size_t(w)]->data();
            const size_t offset = size_t(item.begin * width), count = size_t((item.end - item.begin) * width);
            Complex* source = in + size_t(item.residue) * inSize + offset;
            const Plan plan = rows ? rowsPlan(plans, st, item) : plans[0];
            if (item.first && item.residue == 0) {
                T::execute(plan, raw(source), raw(sum + offset));
                return;
            }
            if (item.first)
                std::fill(sum + offset, sum + offset + count, Complex(0, 0));
            T::execute(plan, raw(source), raw(scratch[size_t(w)]->data() + offset));
            twiddle(rows, item.residue, item.begin, item.end, scratch[size_t(w)]->data(), sum, true);
        });
        reduce(st, result, sums, width);
    };
    stage(m_rowStage, m_rowsForward, input, middleSize, m_middle.data(), m_sumMiddle, m_scratchMiddle, true);
    stage(m_colStage, {m_colsForward}, m_middle.data(), blockSize, m_block.data(), m_sumBlock, m_scratchBlock, false);
}

template class PrunedFft<double>;
template class PrunedFft<float>;

} // namespace wfs
