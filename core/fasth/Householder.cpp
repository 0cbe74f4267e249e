#include "Householder.h"

#include "simd/Kernels.h"

#include <Eigen/Core>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <stdexcept>

namespace wfs::fasth {

const char* algorithmName(Algorithm algorithm)
{
    switch (algorithm) {
    case Algorithm::Sequential:
        return "sequential";
    case Algorithm::FastH:
        return "fasth";
    case Algorithm::CompactWY:
        return "ut";
    case Algorithm::TreeMerge:
        return "tree";
    }
    return "unknown";
}

std::optional<Algorithm> algorithmFromName(std::string_view name)
{
    for (Algorithm a : {Algorithm::Sequential, Algorithm::FastH, Algorithm::CompactWY, Algorithm::TreeMerge})
        if (name == algorithmName(a))
            return a;
    return std::nullopt;
}

bool Options::isValid(std::string* error) const
{
    auto fail = [error](const char* message) {
        if (error)
            *error = message;
        return false;
    };
    if (blockSize < 1)
        return fail("blockSize must be at least 1");
    if (treeLevels < 0 || treeLevels > 30)
        return fail("treeLevels must be between 0 and 30");
    if (threads < 0)
        return fail("threads must be 0 (Eigen's setting) or positive");
    return true;
}

int defaultBlockSize(int d)
{
    return d <= 128 ? 16 : 32;
}

namespace {

// The number of leading zeros (+0 or -0) of x[0, n). The zeros above the diagonal are about half of a
// QR's reflectors, so this reads them eight at a time, OR-ing the bits without the sign (a loop the
// compiler vectorises), instead of one compare and branch each.
template <typename Scalar>
Eigen::Index leadingZeros(const Scalar* x, Eigen::Index n)
{
    using Bits = std::conditional_t<sizeof(Scalar) == 8, std::uint64_t, std::uint32_t>;
    constexpr Bits magnitude = ~(Bits(1) << (8 * sizeof(Bits) - 1));
    constexpr Eigen::Index chunk = 8;
    Eigen::Index row = 0;
    for (; row + chunk <= n; row += chunk) {
        Bits any = 0;
        for (Eigen::Index j = 0; j < chunk; ++j) {
            Bits bits;
            std::memcpy(&bits, x + row + j, sizeof(Bits));
            any |= bits & magnitude;
        }
        if (any != 0)
            break;
    }
    while (row < n && x[row] == Scalar(0))
        ++row;
    return row;
}

// Splits [0, n) into `parts` nearly equal contiguous ranges; returns the start of range i.
Eigen::Index sliceStart(Eigen::Index n, int parts, int i)
{
    return n * i / parts;
}

} // namespace

template <typename Scalar>
HouseholderProduct<Scalar>::HouseholderProduct(const Options& options)
{
    setOptions(options);
}

template <typename Scalar>
void HouseholderProduct<Scalar>::setOptions(const Options& options)
{
    std::string error;
    if (!options.isValid(&error))
        throw std::invalid_argument("fasth::Options: " + error);
    m_options = options;
    m_vData = nullptr;
    m_rows = m_cols = 0;
    m_blocks.clear();
}

template <typename Scalar>
int HouseholderProduct<Scalar>::threadCount() const
{
    return m_options.threads > 0 ? m_options.threads : std::max(1, Eigen::nbThreads());
}

template <typename Scalar>
void HouseholderProduct<Scalar>::prepare(const MatrixType& v)
{
    if (v.rows() < 1 || v.cols() < 1 || v.cols() > v.rows())
        throw std::invalid_argument("fasth: reflector matrix must be d x k with 1 <= k <= d, got " + std::to_string(v.rows()) + " x "
                                    + std::to_string(v.cols()));
    // Leading zeros first (reflectors from a QR have them), so that every later pass over V, the norms
    // included, reads only the rows that can be non-zero.
    m_firstRow.resize(size_t(v.cols()));
    for (Eigen::Index i = 0; i < v.cols(); ++i) {
        const Eigen::Index row = leadingZeros(v.col(i).data(), v.rows());
        if (row == v.rows())
            throw std::invalid_argument("fasth: reflector " + std::to_string(i) + " is zero or not finite");
        m_firstRow[size_t(i)] = row;
    }
    m_scale.resize(v.cols());
    m_vData = v.data();
    m_rows = v.rows();
    m_cols = v.cols();
    // The blocked algorithms take ||v_i||^2 from the diagonal of their blocks' Gram products (buildBlocks),
    // which saves a pass over V; the sequential one computes it here.
    if (m_options.algorithm == Algorithm::Sequential)
        for (Eigen::Index i = 0; i < v.cols(); ++i)
            m_scale(i) = Scalar(2) / v.col(i).tail(v.rows() - m_firstRow[size_t(i)]).squaredNorm();
    buildBlocks();
    for (Eigen::Index i = 0; i < m_scale.size(); ++i) {
        // A non-finite column (or one whose squared norm overflows) has no reflection; refusing it beats
        // silently producing NaN.
        if (!(m_scale(i) > Scalar(0)) || !std::isfinite(double(m_scale(i)))) {
            m_vData = nullptr;
            m_rows = m_cols = 0;
            m_blocks.clear();
            throw std::invalid_argument("fasth: reflector " + std::to_string(i) + " is zero or not finite");
        }
    }
}

template <typename Scalar>
void HouseholderProduct<Scalar>::buildBlocks()
{
    m_blocks.clear();
    if (m_options.algorithm == Algorithm::Sequential)
        return;
    const Eigen::Index k = m_cols;
    const Eigen::Index b = m_options.blockSize;
    for (Eigen::Index begin = 0; begin < k; begin += b) {
        const Eigen::Index size = std::min(b, k - begin);
        const auto first = m_firstRow.begin() + begin;
        m_blocks.push_back(Block{begin, size, *std::min_element(first, first + size), {}, {}});
    }

    const int blockCount = int(m_blocks.size());
    const int threads = std::min(threadCount(), blockCount);
    if (m_options.algorithm == Algorithm::CompactWY) {
#pragma omp parallel for num_threads(threads) schedule(dynamic) if (threads > 1)
        for (int j = 0; j < blockCount; ++j)
            buildUt(m_blocks[size_t(j)]);
        return;
    }

    if (m_options.algorithm == Algorithm::TreeMerge)
        m_u.resize(m_rows, k);
    else
        m_u.resize(0, 0);
#pragma omp parallel for num_threads(threads) schedule(dynamic) if (threads > 1)
    for (int j = 0; j < blockCount; ++j)
        buildWy(m_blocks[size_t(j)]);

    if (m_options.algorithm == Algorithm::TreeMerge)
        for (int level = 0; level < m_options.treeLevels && m_blocks.size() > 1; ++level)
            mergeLevel();
}

template <typename Scalar>
void HouseholderProduct<Scalar>::buildWy(Block& block)
{
    const simd::FasthKernels<Scalar>& kernels = simd::fasthKernels<Scalar>(simd::active());
    const Eigen::Index rows = m_rows - block.firstRow;
    const auto v = reflectors().block(block.firstRow, block.begin, rows, block.size);
    // One Gram product gives every <v_l, v_r> the recursion needs; only its upper triangle is used.
    MatrixType gram(block.size, block.size);
    kernels.gramUpper(v.data(), long(m_rows), long(rows), long(block.size), gram.data(), long(gram.outerStride()));
    for (Eigen::Index r = 0; r < block.size; ++r)
        m_scale(block.begin + r) = Scalar(2) / gram(r, r);
    // Bischof & Van Loan: with unit y, H_1 ... H_r = (I - 2 W_{<r} Y_{<r}^T)(I - 2 y_r y_r^T) gives
    // w_r = y_r - 2 sum_{l<r} <y_l, y_r> w_l. Carrying U = 2 W diag(1/||v||) instead of W and Y turns this
    // into u_r = c_r (v_r - U_{<r} V_{<r}^T v_r) with c_r = 2 / ||v_r||^2, and P = I - U V^T. Every u_r is a
    // combination of the block's v, U = V T, so the b sequential steps run on the small upper triangular
    // T (t_r = c_r (e_r - T_{<r} G_{<r,r})) instead of b memory-bound matrix-vector products over d rows,
    // and P = I - V T V^T. FastH keeps T and never forms U: applying V T V^T costs the same two products
    // as U V^T, and the backward pass needs only T too (simd::FasthKernels::backwardCompact).
    MatrixType coefficients = MatrixType::Zero(block.size, block.size);
    for (Eigen::Index r = 0; r < block.size; ++r) {
        const Scalar c = m_scale(block.begin + r);
        if (r > 0) {
            coefficients.col(r).head(r).noalias() =
                coefficients.topLeftCorner(r, r).template triangularView<Eigen::Upper>() * gram.col(r).head(r);
            coefficients.col(r).head(r) *= -c;
        }
        coefficients(r, r) = c;
    }
    if (m_options.algorithm != Algorithm::TreeMerge) {
        block.t = std::move(coefficients);
        return;
    }
    auto u = m_u.block(block.firstRow, block.begin, rows, block.size);
    u.noalias() = v * coefficients.template triangularView<Eigen::Upper>();
    // The tree merge reads U over a merged block's rows, which may start above this block's.
    m_u.block(0, block.begin, block.firstRow, block.size).setZero();
}

template <typename Scalar>
void HouseholderProduct<Scalar>::buildUt(Block& block)
{
    const simd::FasthKernels<Scalar>& kernels = simd::fasthKernels<Scalar>(simd::active());
    const Eigen::Index rows = m_rows - block.firstRow;
    MatrixType gram(block.size, block.size);
    kernels.gramUpper(m_vData + block.firstRow + block.begin * m_rows, long(m_rows), long(rows), long(block.size), gram.data(),
                      long(gram.outerStride()));
    for (Eigen::Index r = 0; r < block.size; ++r)
        m_scale(block.begin + r) = Scalar(2) / gram(r, r);
    // T^{-1} = striu(V^T V) + diag(V^T V) / 2 for un-normalised v (the UT transform).
    block.tInverse = gram.template triangularView<Eigen::StrictlyUpper>();
    block.tInverse.diagonal() = Scalar(0.5) * gram.diagonal();
}

template <typename Scalar>
void HouseholderProduct<Scalar>::mergeLevel()
{
    const int pairs = int(m_blocks.size() / 2);
    const int threads = std::min(threadCount(), pairs);
    // (I - U_A V_A^T)(I - U_B V_B^T) = I - [U_A, U_B - U_A (V_A^T U_B)] [V_A, V_B]^T; A precedes B, so the
    // merged block's columns stay contiguous and only U_B changes.
#pragma omp parallel for num_threads(threads) schedule(dynamic) if (threads > 1)
    for (int p = 0; p < pairs; ++p) {
        const Block& a = m_blocks[size_t(2 * p)];
        const Block& b = m_blocks[size_t(2 * p + 1)];
        const Eigen::Index first = std::min(a.firstRow, b.firstRow);
        const Eigen::Index rows = m_rows - first;
        const MatrixType cross = reflectors().block(first, a.begin, rows, a.size).transpose() * m_u.block(first, b.begin, rows, b.size);
        m_u.block(first, b.begin, rows, b.size).noalias() -= m_u.block(first, a.begin, rows, a.size) * cross;
    }
    std::vector<Block> merged;
    merged.reserve(m_blocks.size() / 2 + 1);
    for (size_t i = 0; i < m_blocks.size(); i += 2) {
        Block block = m_blocks[i];
        if (i + 1 < m_blocks.size()) {
            block.size += m_blocks[i + 1].size;
            block.firstRow = std::min(block.firstRow, m_blocks[i + 1].firstRow);
        }
        merged.push_back(std::move(block));
    }
    m_blocks = std::move(merged);
}

template <typename Scalar>
void HouseholderProduct<Scalar>::applyBlock(const Block& block, bool transposed, Eigen::Ref<MatrixType> x, MatrixType& z) const
{
    // The two products go through the kernels built for the CPU's instruction set (core/simd); the small
    // triangular solve of CompactWY stays here.
    const simd::FasthKernels<Scalar>& kernels = simd::fasthKernels<Scalar>(simd::active());
    const Eigen::Index rows = m_rows - block.firstRow;
    const Eigen::Index m = x.cols();
    auto zb = z.topLeftCorner(block.size, m);
    auto xb = x.bottomRows(rows);
    const Scalar* v = m_vData + block.firstRow + block.begin * m_rows; // rows x block.size, leading dimension m_rows
    if (m_options.algorithm == Algorithm::FastH) {
        // z is at least 2 maxBlock x m, contiguous.
        kernels.applyCompact(v, long(m_rows), long(rows), long(block.size), block.t.data(), long(block.t.outerStride()), transposed,
                             xb.data(), long(xb.outerStride()), long(m), z.data());
        return;
    }
    if (m_options.algorithm == Algorithm::CompactWY) {
        kernels.productTransposed(v, long(m_rows), long(rows), long(block.size), xb.data(), long(xb.outerStride()), long(m), zb.data(),
                                  long(z.outerStride()));
        if (transposed)
            block.tInverse.transpose().template triangularView<Eigen::Lower>().solveInPlace(zb);
        else
            block.tInverse.template triangularView<Eigen::Upper>().solveInPlace(zb);
        kernels.subtractProduct(v, long(m_rows), long(rows), long(block.size), zb.data(), long(z.outerStride()), long(m), xb.data(),
                                long(xb.outerStride()));
        return;
    }
    const Scalar* u = m_u.data() + block.firstRow + block.begin * m_u.outerStride();
    const Scalar* first = transposed ? u : v; // P^T = I - V U^T, P = I - U V^T
    const Scalar* second = transposed ? v : u;
    const long ldFirst = long(transposed ? m_u.outerStride() : m_rows), ldSecond = long(transposed ? m_rows : m_u.outerStride());
    kernels.productTransposed(first, ldFirst, long(rows), long(block.size), xb.data(), long(xb.outerStride()), long(m), zb.data(),
                              long(z.outerStride()));
    kernels.subtractProduct(second, ldSecond, long(rows), long(block.size), zb.data(), long(z.outerStride()), long(m), xb.data(),
                            long(xb.outerStride()));
}

template <typename Scalar>
void HouseholderProduct<Scalar>::applySequential(bool transposed, Eigen::Ref<MatrixType> x) const
{
    const simd::FasthKernels<Scalar>& kernels = simd::fasthKernels<Scalar>(simd::active());
    const Eigen::Index k = m_cols;
    Eigen::Matrix<Scalar, 1, Eigen::Dynamic> p(x.cols());
    for (Eigen::Index i = 0; i < k; ++i) {
        // apply() multiplies H_k first; its transpose starts with H_1.
        const Eigen::Index r = transposed ? i : k - 1 - i;
        const Eigen::Index first = m_firstRow[size_t(r)];
        auto xb = x.bottomRows(m_rows - first);
        kernels.reflect(m_vData + first + r * m_rows, long(m_rows - first), m_scale(r), xb.data(), long(xb.outerStride()), long(x.cols()),
                        p.data());
    }
}

template <typename Scalar>
void HouseholderProduct<Scalar>::applyAll(bool transposed, Eigen::Ref<MatrixType> x) const
{
    if (!isPrepared())
        throw std::logic_error("fasth: apply before prepare");
    if (x.rows() != m_rows)
        throw std::invalid_argument("fasth: X has " + std::to_string(x.rows()) + " rows, reflectors have " + std::to_string(m_rows));
    Eigen::Index maxBlock = 0;
    for (const Block& block : m_blocks)
        maxBlock = std::max(maxBlock, block.size);
    // Columns of X are independent, so each thread carries its own slice through every block: one
    // parallel region instead of a fork and join per block product.
    auto run = [&](Eigen::Ref<MatrixType> slice) {
        if (m_options.algorithm == Algorithm::Sequential) {
            applySequential(transposed, slice);
            return;
        }
        MatrixType z(2 * maxBlock, slice.cols());
        const int n = int(m_blocks.size());
        for (int i = 0; i < n; ++i) {
            // apply() = P_1 ... P_n X multiplies the last block first; the transpose starts with P_1^T.
            const int j = transposed ? i : n - 1 - i;
            applyBlock(m_blocks[size_t(j)], transposed, slice, z);
        }
    };
    const int slices = int(std::min<Eigen::Index>(threadCount(), x.cols()));
    if (slices <= 1) {
        run(x);
        return;
    }
#pragma omp parallel for num_threads(slices) schedule(static)
    for (int s = 0; s < slices; ++s) {
        const Eigen::Index begin = sliceStart(x.cols(), slices, s);
        run(x.middleCols(begin, sliceStart(x.cols(), slices, s + 1) - begin));
    }
}

template <typename Scalar>
void HouseholderProduct<Scalar>::apply(Eigen::Ref<MatrixType> x) const
{
    applyAll(false, x);
}

template <typename Scalar>
void HouseholderProduct<Scalar>::applyTranspose(Eigen::Ref<MatrixType> x) const
{
    applyAll(true, x);
}

template <typename Scalar>
void HouseholderProduct<Scalar>::walkReflectors(Eigen::Index begin, Eigen::Index end, bool transposed, Eigen::Ref<MatrixType> a,
                                                Eigen::Ref<MatrixType> g, Eigen::Ref<MatrixType> gradV, bool accumulate) const
{
    Eigen::Matrix<Scalar, 1, Eigen::Dynamic> pa(a.cols());
    Eigen::Matrix<Scalar, 1, Eigen::Dynamic> pg(a.cols());
    VectorType dv(a.rows());
    for (Eigen::Index i = 0; i < end - begin; ++i) {
        // Undo the reflectors in the reverse of the order the forward product applied them.
        const Eigen::Index r = transposed ? end - 1 - i : begin + i;
        const Eigen::Index first = m_firstRow[size_t(r)];
        const Eigen::Index rows = m_rows - first;
        const auto v = reflectors().col(r).tail(rows);
        const Scalar c = m_scale(r);
        auto ab = a.bottomRows(rows);
        auto gb = g.bottomRows(rows);
        pa.noalias() = v.transpose() * ab; // v^T A_out
        pg.noalias() = v.transpose() * gb; // v^T G_out
        ab.noalias() -= v * (c * pa);      // A_in = H A_out
        gb.noalias() -= v * (c * pg);      // G_in = H G_out
        // dL/dv = -(G_in alpha + A_in beta) with alpha = c A_in^T v = -c pa^T and beta = c G_out^T v = c pg^T.
        // Every row has a gradient, also where v is zero.
        dv.noalias() = g * pa.transpose();
        dv.noalias() -= a * pg.transpose();
        if (accumulate)
            gradV.col(r) += c * dv;
        else
            gradV.col(r) = c * dv;
    }
}

namespace {
// Backward over a batch in slices: the columns are independent and the reflector gradients are sums over them,
// so `walk(slice, first column, columns, out)` runs each slice on its own thread into `gradV` (the first) or a
// kept partial (the others; their storage stays from one call to the next, no page faults per pass), and the
// partials are then added to `gradV` (d x k, already sized).
template <class Matrix, class Walk>
void sumOverBatchSlices(int slices, Eigen::Index m, Matrix& gradV, std::vector<Matrix>& partial, Walk walk)
{
    partial.resize(size_t(slices - 1));
#pragma omp parallel for num_threads(slices) schedule(static)
    for (int s = 0; s < slices; ++s) {
        const Eigen::Index begin = sliceStart(m, slices, s);
        const Eigen::Index cols = sliceStart(m, slices, s + 1) - begin;
        Matrix& mine = s == 0 ? gradV : partial[size_t(s - 1)];
        mine.resize(gradV.rows(), gradV.cols());
        walk(s, begin, cols, mine);
    }
    for (const Matrix& p : partial)
        gradV += p;
}
} // namespace

template <typename Scalar>
void HouseholderProduct<Scalar>::backwardImpl(bool transposed, Eigen::Ref<MatrixType> a, Eigen::Ref<MatrixType> g, MatrixType& gradV) const
{
    if (!isPrepared())
        throw std::logic_error("fasth: backward before prepare");
    const Eigen::Index d = m_rows;
    const Eigen::Index k = m_cols;
    const Eigen::Index m = a.cols();
    if (a.rows() != d || g.rows() != d || g.cols() != m)
        throw std::invalid_argument("fasth: backward needs A and dL/dA of the same size d x m");
    gradV.resize(d, k);
    const int threads = threadCount();

    if (m_options.algorithm == Algorithm::Sequential) {
        // One dependent chain over all k reflectors; columns are independent, so slices of the batch run
        // in parallel and their partial reflector gradients are summed.
        const int slices = int(std::min<Eigen::Index>(threads, m));
        if (slices <= 1) {
            walkReflectors(0, k, transposed, a, g, gradV, false);
            return;
        }
        sumOverBatchSlices(slices, m, gradV, m_partials, [&](int, Eigen::Index begin, Eigen::Index cols, MatrixType& mine) {
            walkReflectors(0, k, transposed, a.middleCols(begin, cols), g.middleCols(begin, cols), mine, false);
        });
        return;
    }

    if (m_options.algorithm == Algorithm::FastH) {
        // Columns of the batch are independent and the reflector gradients are sums over them, so slices
        // of the batch run in parallel, each through every block, and their partial gradients are summed.
        const int slices = int(std::min<Eigen::Index>(threads, m));
        m_scratch.resize(size_t(slices));
        if (slices <= 1) {
            backwardBlocked(transposed, a, g, gradV, m_scratch[0]);
            return;
        }
        sumOverBatchSlices(slices, m, gradV, m_partials, [&](int slice, Eigen::Index begin, Eigen::Index cols, MatrixType& mine) {
            backwardBlocked(transposed, a.middleCols(begin, cols), g.middleCols(begin, cols), mine, m_scratch[size_t(slice)]);
        });
        return;
    }

    backwardByBlockStates(transposed, a, g, gradV, threads);
}

// The paper's two steps for the block algorithms without a fused backward (compact WY, tree merge): first
// sequential over the blocks, then independent over them.
template <typename Scalar>
void HouseholderProduct<Scalar>::backwardByBlockStates(bool transposed, Eigen::Ref<MatrixType> a, Eigen::Ref<MatrixType> g,
                                                       MatrixType& gradV, int threads) const
{
    const Eigen::Index d = m_rows;
    const Eigen::Index m = a.cols();
    // Step 1, sequential over blocks: recover each block's input from its output with the block's inverse
    // (its transpose) and carry the gradient along; keep every block's (output | gradient).
    const int n = int(m_blocks.size());
    m_states.resize(size_t(n));
    MatrixType current(d, 2 * m);
    current.leftCols(m) = a;
    current.rightCols(m) = g;
    Eigen::Index maxBlock = 0;
    for (int j = 0; j < n; ++j) {
        m_states[size_t(j)].resize(d, 2 * m);
        maxBlock = std::max(maxBlock, m_blocks[size_t(j)].size);
    }
    auto undo = [&](Eigen::Index begin, Eigen::Index cols) {
        MatrixType z(2 * maxBlock, cols);
        auto slice = current.middleCols(begin, cols);
        for (int i = 0; i < n; ++i) {
            // apply() ran P_n first and P_1 last, so P_1 is undone first; the transpose the other way.
            const int j = transposed ? n - 1 - i : i;
            m_states[size_t(j)].middleCols(begin, cols) = slice;
            applyBlock(m_blocks[size_t(j)], !transposed, slice, z);
        }
    };
    const int slices = int(std::min<Eigen::Index>(threads, 2 * m));
    if (slices <= 1) {
        undo(0, 2 * m);
    } else {
#pragma omp parallel for num_threads(slices) schedule(static)
        for (int s = 0; s < slices; ++s) {
            const Eigen::Index begin = sliceStart(2 * m, slices, s);
            undo(begin, sliceStart(2 * m, slices, s + 1) - begin);
        }
    }
    a = current.leftCols(m);
    g = current.rightCols(m);

    // Step 2, independent over blocks: walk each block's reflectors from its saved (output | gradient).
    const int blockThreads = std::min(threads, n);
#pragma omp parallel for num_threads(blockThreads) schedule(dynamic) if (blockThreads > 1)
    for (int j = 0; j < n; ++j) {
        const Block& block = m_blocks[size_t(j)];
        MatrixType& state = m_states[size_t(j)];
        walkReflectors(block.begin, block.begin + block.size, transposed, state.leftCols(m), state.rightCols(m), gradV, false);
    }
}

template <typename Scalar>
void HouseholderProduct<Scalar>::backwardBlocked(bool transposed, Eigen::Ref<MatrixType> a, Eigen::Ref<MatrixType> g, MatrixType& gradV,
                                                 MatrixType& state) const
{
    // The paper's two steps fused: one pass over the blocks in the order that undoes the forward product
    // recovers each block's input and gradient from its output and, from the same state, the block's
    // reflector gradients, so no per-block state is stored (the kernel's comment derives the blocked form).
    const simd::FasthKernels<Scalar>& kernels = simd::fasthKernels<Scalar>(simd::active());
    const Eigen::Index d = m_rows;
    const Eigen::Index cols = a.cols();
    state.resize(d, 2 * cols);
    state.leftCols(cols) = a;
    state.rightCols(cols) = g;
    Eigen::Index maxBlock = 0;
    for (const Block& block : m_blocks)
        maxBlock = std::max(maxBlock, block.size);
    VectorType work(6 * maxBlock * cols + 2 * maxBlock * maxBlock);
    const int n = int(m_blocks.size());
    for (int i = 0; i < n; ++i) {
        // apply() ran P_n first and P_1 last, so P_1 is undone first; the transpose the other way.
        const Block& block = m_blocks[size_t(transposed ? n - 1 - i : i)];
        kernels.backwardCompact(m_vData + block.firstRow + block.begin * m_rows, long(m_rows), long(d), long(block.firstRow),
                                long(block.size), block.t.data(), long(block.t.outerStride()), transposed, state.data(),
                                long(state.outerStride()), long(cols), true, gradV.data() + block.begin * gradV.outerStride(),
                                long(gradV.outerStride()), work.data());
    }
    a = state.leftCols(cols);
    g = state.rightCols(cols);
}

template <typename Scalar>
void HouseholderProduct<Scalar>::backward(Eigen::Ref<MatrixType> a, Eigen::Ref<MatrixType> g, MatrixType& gradV) const
{
    backwardImpl(false, a, g, gradV);
}

template <typename Scalar>
void HouseholderProduct<Scalar>::backwardTranspose(Eigen::Ref<MatrixType> a, Eigen::Ref<MatrixType> g, MatrixType& gradV) const
{
    backwardImpl(true, a, g, gradV);
}

template <typename Scalar>
Matrix<Scalar> apply(const Matrix<Scalar>& v, const Matrix<Scalar>& x, const Options& options)
{
    HouseholderProduct<Scalar> product(options);
    product.prepare(v);
    Matrix<Scalar> result = x;
    product.apply(result);
    return result;
}

template <typename Scalar>
Matrix<Scalar> applyTranspose(const Matrix<Scalar>& v, const Matrix<Scalar>& x, const Options& options)
{
    HouseholderProduct<Scalar> product(options);
    product.prepare(v);
    Matrix<Scalar> result = x;
    product.applyTranspose(result);
    return result;
}

template class HouseholderProduct<float>;
template class HouseholderProduct<double>;
template Matrix<float> apply(const Matrix<float>&, const Matrix<float>&, const Options&);
template Matrix<double> apply(const Matrix<double>&, const Matrix<double>&, const Options&);
template Matrix<float> applyTranspose(const Matrix<float>&, const Matrix<float>&, const Options&);
template Matrix<double> applyTranspose(const Matrix<double>&, const Matrix<double>&, const Options&);

} // namespace wfs::fasth
