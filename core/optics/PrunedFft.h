#pragma once
// The CPU model's far-field transform pruned to the pupil's support: a 2-D inverse DFT of an N x N
// grid whose input is non-zero only in a block of rows x columns (the pupil), and its exact adjoint.
//
// Why it is exact. Along one axis, with the input non-zero on samples f + j (j < B) and N = L B, output
// k = L q + s is
//     X[k] = w^(f k) sum_j (x[j] w^(j s)) e^(2 pi i j q / B),   w = e^(2 pi i / N),
// a B-point DFT of the twiddled input (decimation in frequency, whose L-point stage is trivial when
// only the first B samples are non-zero). The factor w^(f k) has modulus one, so the model's |S|^2
// never sees it, and leaving it out on both axes (as the checkerboard trick leaves out the output's
// sign) changes neither the cost nor, since the adjoint is taken of the same operator, the gradient.
// Both axes are pruned so: N x B and then N x N points of B-point DFTs instead of B + N rows and
// columns of N-point ones, with every transform of the large stage on contiguous memory.
//
// Layouts. block(): the pupil block, Bc x B, row m = pupil column colBegin + m, element j = pupil row
// rowBegin + j (so the row stage reads contiguous vectors). The output: L_rows blocks, one per row
// residue s, of N x B: row t = s' Bc + q' holds grid column L_cols q' + s', element q grid row
// L_rows q + s. The caller permutes its data into that order once (outputIndex).
//
// Threads. Each stage is a set of independent residues: in the rows stage each thread takes one slice of the N
// rows in every residue, in the columns stage the threads take whole residues, with a scratch array each: one parallel
// loop per stage on the program's pool (optics/Threads.h), single-threaded FFTW plans on disjoint arrays, no
// lock. The adjoint's sums over residues stay in one thread where it owns the rows (the rows stage); in the
// columns stage they go to one accumulator per thread, added afterwards in thread order. So a result is the same
// to the bit for a given thread count and the same to rounding across counts. Below kParallelPoints points per residue
// (grid 256 at Q = 2 and smaller) a second thread costs more than it saves and one thread does it all.
#include "optics/Fftw.h"
#include "simd/Kernels.h"

#include <algorithm>
#include <complex>
#include <memory>
#include <vector>

namespace wfs {

// One axis of the pruned transform: the support [first, first + support) (mod n) padded to `length`,
// the smallest divisor of n that holds it; `blocks` = n / length output residues.
struct PrunedAxis {
    int n = 0, first = 0, length = 0, blocks = 0;
    PrunedAxis() = default;
    PrunedAxis(int n, int first, int support);
};

template <class Real>
class PrunedFft {
public:
    using Complex = std::complex<Real>;

    // Whether pruning pays (the rows' support is at most half the grid) and the blocks keep FFTW's alignment.
    static bool applicable(int n, int rowBegin, int rowEnd, int colBegin, int colEnd);

    PrunedFft(int n, int rowBegin, int rowEnd, int colBegin, int colEnd, const simd::OpticsKernels<Real>& kernels, int threads,
              bool measure);

    size_t outputSize() const { return size_t(m_n) * size_t(m_n); }
    // Where pupil pixel `gridIndex` (row * N + col) sits in block().
    int blockIndex(int gridIndex) const;
    // Where grid pixel `gridIndex` (row * N + col) sits in the output.
    size_t outputIndex(size_t gridIndex) const;

    // The threads the stages use: the requested count, or 1 where the residues are too small to share.
    int workers() const { return m_workers; }
    static constexpr long kParallelPoints = 32768;

    Complex* block() { return m_block.data(); }
    void clearBlock();
    // output (N^2, the layout above) = the unnormalised inverse DFT of block(), up to a unit phase per pixel.
    void synthesise(Complex* output);
    // block() = the exact adjoint of synthesise applied to `input` (which it overwrites).
    void adjoint(Complex* input);

private:
    using Plan = typename fftw::Traits<Real>::Plan;
    using Buffers = std::vector<std::unique_ptr<fftw::ComplexBuffer<Real>>>; // one per thread

    // One piece of a stage's work: residue s, over rows [begin, end) of its N x B array (the rows stage) or all
    // of its block (the columns stage).
    struct Item {
        int residue = 0;
        long begin = 0, end = 0;
        int slice = 0;
        bool first = false; // the thread's first item on these rows: the adjoint writes instead of adding
    };
    // A stage's work split among the threads, and which threads' sums hold each slice.
    struct Stage {
        std::vector<std::vector<Item>> items;   // items[w]: what thread w does, in order
        std::vector<std::vector<char>> touched; // touched[w][slice]
        std::vector<int> owner;                 // owner[slice]: the one thread that touches it, or -1
        long rows = 0, sliceRows = 0;
        int threads() const { return int(items.size()); }
        // Whether some slice is touched by more than one thread: only then are partial sums kept and added.
        bool sharesSlices() const
        {
            return std::any_of(owner.begin(), owner.end(), [](int w) { return w < 0; });
        }
    };
    static Stage split(int threads, int residues, long rows, long sliceMultiple);
    template <class Work>
    static void run(const Stage& stage, Work&& work);
    // target (rows x width) = its own value where thread 0 wrote it, plus every other thread's partial sum.
    static void reduce(const Stage& stage, Complex* target, Buffers& sums, long width);
    void twiddle(bool rows, int residue, long begin, long end, const Complex* src, Complex* dst, bool adjoint);
    static Plan rowsPlan(const std::vector<Plan>& plans, const Stage& stage, const Item& item);
    Stage m_rowStage, m_colStage;

    int m_n;
    PrunedAxis m_rows, m_cols;
    const simd::OpticsKernels<Real>& m_kernels;
    int m_workers = 1;
    fftw::ComplexBuffer<Real> m_block;                 // Bc x B: the pupil
    fftw::ComplexBuffer<Real> m_middle;                // N x B: after the columns stage (row t as in the output)
    Buffers m_scratchMiddle;                           // N x B: a residue's twiddled middle (or its transform, in the adjoint)
    Buffers m_scratchBlock;                            // Bc x B: the same for the block
    Buffers m_sumMiddle;                               // N x B: a thread's partial sum of the adjoint (thread 0 sums into m_middle)
    Buffers m_sumBlock;                                // Bc x B: the same for the block (thread 0 sums into m_block)
    std::vector<Complex> m_rowTwiddles, m_colTwiddles; // [residue][j], [residue][m]
    Plan m_colsBackward, m_colsForward;
    std::vector<Plan> m_rowsBackward, m_rowsForward; // [0]: a slice of sliceRows rows; [1]: the last, shorter one
};

} // namespace wfs
