#pragma once
// Products of Householder reflections, H_1 H_2 ... H_k X, by the sequential algorithm and by FastH and
// its variants (Mathiasen et al. 2020). One convention everywhere:
//   apply(V, X)          = H_1 H_2 ... H_k X
//   applyTranspose(V, X) = H_k ... H_1 X
// with H_i = I - 2 v_i v_i^T / ||v_i||^2 and v_i = column i of V (d x k, k <= d, v_i not necessarily unit).
#include <Eigen/Core>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace wfs::fasth {

template <typename Scalar>
using Matrix = Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic>;
template <typename Scalar>
using Vector = Eigen::Matrix<Scalar, Eigen::Dynamic, 1>;

enum class Algorithm {
    Sequential, // k dependent rank-1 steps
    FastH,      // per-block WY (Bischof & Van Loan) built independently, then block products; the WY
                // factor is kept in compact form (W = V T), applied as X -= V (T (V^T X)) by the SIMD
                // kernels, and the backward pass runs both of the paper's steps per block in blocked form
    CompactWY,  // per-block compact WY "UT": P = I - V T V^T, T from one Gram product
    TreeMerge,  // FastH blocks merged pairwise up to Options::treeLevels, then block products
};

// Names used by the command line and JSON rows: sequential, fasth, ut, tree.
const char* algorithmName(Algorithm algorithm);
std::optional<Algorithm> algorithmFromName(std::string_view name);

struct Options {
    Algorithm algorithm = Algorithm::FastH;
    // Reflectors per block (all but Sequential). Any value >= 1; the last block takes the remainder,
    // so it need not divide k. The paper uses 32, and 16 for d <= 128.
    int blockSize = 32;
    // TreeMerge only: pairwise merge levels; after level l a block holds 2^l * blockSize reflectors.
    // The merged blocks are then applied one after another. 0 makes TreeMerge identical to FastH.
    int treeLevels = 1;
    // Threads for the independent work: blocks in the factor build and in the backward pass, column
    // slices of X in the block products. 0 means Eigen::nbThreads() (Eigen::setNbThreads, OMP_NUM_THREADS).
    int threads = 0;

    // False, with a reason, when a field is out of range.
    bool isValid(std::string* error = nullptr) const;
};

// The paper's block size for a given d (32, or 16 for d <= 128).
int defaultBlockSize(int d);

// One reflector set prepared for repeated products. prepare() is the step that depends only on V (the
// per-block factors); apply(), applyTranspose() and the backward passes reuse it, so a forward and a
// backward on the same V build the factors once. Not thread-safe: one object per thread.
template <typename Scalar>
class HouseholderProduct {
public:
    using MatrixType = Matrix<Scalar>;
    using VectorType = Vector<Scalar>;

    explicit HouseholderProduct(const Options& options = {});

    const Options& options() const { return m_options; }
    // Throws std::invalid_argument when the options are not valid. Drops the prepared factors.
    void setOptions(const Options& options);

    // Builds the block factors of V (d x k, 1 <= k <= d, no zero column; throws std::invalid_argument
    // otherwise). V is referenced, not copied, to keep the forward pass free of an O(dk) copy: it must
    // stay alive and unchanged until the next prepare().
    void prepare(const MatrixType& v);
    bool isPrepared() const { return m_vData != nullptr; }
    Eigen::Index rows() const { return m_rows; }
    Eigen::Index reflectorCount() const { return m_cols; }
    // Blocks the products work with (after tree merging); 0 for Sequential.
    int blockCount() const { return int(m_blocks.size()); }

    // X <- H_1 ... H_k X, in place; X is d x m with any m >= 1.
    void apply(Eigen::Ref<MatrixType> x) const;
    // X <- H_k ... H_1 X, in place.
    void applyTranspose(Eigen::Ref<MatrixType> x) const;

    // Backward pass of A = apply(V, X) without stored activations. On entry a = A and g = dL/dA; on
    // return a = X (recovered by the orthogonal inverse), g = dL/dX, and gradV (resized to d x k) =
    // dL/dV. The blocked algorithms follow the paper: block inputs recovered block by block, then the
    // reflector gradients of each block independently. FastH fuses the two steps: one pass over the blocks
    // turns each block's (output, gradient) into its input pair and its reflector gradients with matrix
    // products only (threads take slices of the batch, whose partial dL/dV are summed).
    // gradV's storage is reused when it already has the size d x k.
    void backward(Eigen::Ref<MatrixType> a, Eigen::Ref<MatrixType> g, MatrixType& gradV) const;
    // The same for A = applyTranspose(V, X).
    void backwardTranspose(Eigen::Ref<MatrixType> a, Eigen::Ref<MatrixType> g, MatrixType& gradV) const;

private:
    // A contiguous run of reflectors [begin, begin + size) treated as one product: P = I - U V^T (TreeMerge;
    // U is the paper's W with the factor 2 and the normalisation of v folded in, so no unit copy of V is
    // needed), P = I - V T V^T with U = V T (FastH: T from the same recursion, U never formed) or
    // P = I - V T V^T (CompactWY; T is kept as its inverse, an upper triangular matrix, applied by a
    // triangular solve). Rows above firstRow are zero in every v of the block (reflectors from
    // a QR have leading zeros), so the products skip them, as LAPACK's blocked reflectors do.
    struct Block {
        Eigen::Index begin = 0;
        Eigen::Index size = 0;
        Eigen::Index firstRow = 0;
        MatrixType tInverse; // CompactWY only
        MatrixType t;        // FastH only: P = I - V T V^T (T upper triangular; U = V T is the paper's W)
    };

    int threadCount() const;
    void buildBlocks();
    void buildWy(Block& block);
    void buildUt(Block& block);
    void mergeLevel();
    // Applies block j (transposed or not) to x; z is scratch of at least block.size rows and x.cols().
    void applyBlock(const Block& block, bool transposed, Eigen::Ref<MatrixType> x, MatrixType& z) const;
    // The products over all blocks (or all reflectors) in the order that gives apply or its transpose.
    void applyAll(bool transposed, Eigen::Ref<MatrixType> x) const;
    void applySequential(bool transposed, Eigen::Ref<MatrixType> x) const;
    void backwardImpl(bool transposed, Eigen::Ref<MatrixType> a, Eigen::Ref<MatrixType> g, MatrixType& gradV) const;
    // The backward pass of the other block algorithms: each block's (output | gradient) recovered in turn, then
    // every block's reflectors walked from it in parallel.
    void backwardByBlockStates(bool transposed, Eigen::Ref<MatrixType> a, Eigen::Ref<MatrixType> g, MatrixType& gradV, int threads) const;
    // FastH's backward: both steps fused per block in blocked form (simd::FasthKernels::backwardCompact), on
    // the batch columns of a and g; writes the reflector gradients of these columns to gradV (d x k).
    // state is scratch (d x 2 a.cols()), kept by the caller between calls.
    void backwardBlocked(bool transposed, Eigen::Ref<MatrixType> a, Eigen::Ref<MatrixType> g, MatrixType& gradV, MatrixType& state) const;
    // Walks reflectors [begin, end) backwards through their application (ascending for apply, descending
    // for the transpose), turning the pair (output, output gradient) into (input, input gradient) and
    // adding each reflector's gradient, summed over the columns of a and g, to gradV.
    void walkReflectors(Eigen::Index begin, Eigen::Index end, bool transposed, Eigen::Ref<MatrixType> a, Eigen::Ref<MatrixType> g,
                        Eigen::Ref<MatrixType> gradV, bool accumulate) const;

    Options m_options;
    Eigen::Map<const MatrixType> reflectors() const { return {m_vData, m_rows, m_cols}; }

    // The V given to prepare(), not owned.
    const Scalar* m_vData = nullptr;
    Eigen::Index m_rows = 0;
    Eigen::Index m_cols = 0;
    VectorType m_scale;                   // 2 / ||v_i||^2
    std::vector<Eigen::Index> m_firstRow; // first row where v_i is not zero
    MatrixType m_u;                       // U of every block (TreeMerge), in its reflectors' columns
    std::vector<Block> m_blocks;
    mutable std::vector<MatrixType> m_states;   // backward: each block's (output | gradient)
    mutable std::vector<MatrixType> m_partials; // backward over batch slices: the other slices' dL/dV
    mutable std::vector<MatrixType> m_scratch;  // FastH backward: each slice's (state | gradient)
};

// Convenience forms that prepare and apply in one call.
template <typename Scalar>
Matrix<Scalar> apply(const Matrix<Scalar>& v, const Matrix<Scalar>& x, const Options& options = {});
template <typename Scalar>
Matrix<Scalar> applyTranspose(const Matrix<Scalar>& v, const Matrix<Scalar>& x, const Options& options = {});

extern template class HouseholderProduct<float>;
extern template class HouseholderProduct<double>;

} // namespace wfs::fasth
