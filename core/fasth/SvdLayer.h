#pragma once
// An SVD-parameterised d x d layer, W = U diag(sigma) V^T, with U and V products of Householder
// reflections (Mathiasen et al. 2020): U = H^u_1 ... H^u_k, V = H^v_1 ... H^v_k. Products, inverse and
// determinant cost O(d^2 m) or less instead of O(d^3).
#include "Householder.h"

#include <functional>
#include <random>
#include <string>

namespace wfs::fasth {

template <typename Scalar>
class SvdLayer {
public:
    using MatrixType = Matrix<Scalar>;
    using VectorType = Vector<Scalar>;

    struct Gradients {
        MatrixType x;     // dL/dX, d x m
        MatrixType u;     // dL/d(U reflectors), d x ku
        MatrixType v;     // dL/d(V reflectors), d x kv
        VectorType sigma; // dL/dsigma, d
    };

    // uReflectors: d x ku, vReflectors: d x kv (1 <= k <= d, no zero column), sigma: d values.
    // Throws std::invalid_argument on mismatched sizes.
    SvdLayer(MatrixType uReflectors, MatrixType vReflectors, VectorType sigma, const Options& options = {});
    // Gaussian reflectors (k = d) and sigma drawn from [0.5, 2] with random signs.
    static SvdLayer random(int d, std::mt19937_64& generator, const Options& options = {});

    int dimension() const { return int(m_sigma.size()); }
    const MatrixType& uReflectors() const { return m_u; }
    const MatrixType& vReflectors() const { return m_v; }
    const VectorType& sigma() const { return m_sigma; }
    // Mutable access for optimisers; a zero reflector column is rejected by the next product.
    MatrixType& uReflectors() { return m_u; }
    MatrixType& vReflectors() { return m_v; }
    VectorType& sigma() { return m_sigma; }
    const Options& options() const { return m_uProduct.options(); }
    void setOptions(const Options& options);

    MatrixType forward(const MatrixType& x) const; // W X
    MatrixType inverse(const MatrixType& y) const; // W^{-1} Y = V diag(1/sigma) U^T Y
    Scalar logAbsDeterminant() const;              // sum log|sigma_i|
    MatrixType dense() const;                      // W formed explicitly, d x d (for checks and baselines)

    // Gradients of L at Y = W X, given X and dL/dY. Recomputes the forward pass (no stored activations).
    Gradients backward(const MatrixType& x, const MatrixType& gradOutput) const;

private:
    MatrixType m_u;
    MatrixType m_v;
    VectorType m_sigma;
    // Workspaces; prepared again before every use because the parameters may have changed.
    mutable HouseholderProduct<Scalar> m_uProduct;
    mutable HouseholderProduct<Scalar> m_vProduct;
};

enum class Optimizer { GradientDescent, Adam };

struct TrainingOptions {
    Optimizer optimizer = Optimizer::Adam;
    double learningRate = 1e-2; // step size (both optimisers)
    double beta1 = 0.9;         // Adam first-moment decay
    double beta2 = 0.999;       // Adam second-moment decay
    double epsilon = 1e-8;      // Adam denominator guard
    int maxIterations = 200;    // run() stops after this many steps
    double lossTolerance = 0.0; // run() stops when the loss falls to this value or below
    bool isValid(std::string* error = nullptr) const;
};

struct TrainingProgress {
    int iteration = 0;         // steps taken so far
    double loss = 0.0;         // loss before the step just taken (the one its gradient belongs to)
    double gradientNorm = 0.0; // Euclidean norm over all parameters
    double seconds = 0.0;      // wall time of the step
};

enum class TrainingTermination { Converged, MaxIterations, Cancelled, Diverged };
const char* terminationName(TrainingTermination termination);

struct TrainingSummary {
    TrainingTermination termination = TrainingTermination::MaxIterations;
    int iterations = 0;
    double initialLoss = 0.0;
    double finalLoss = 0.0;
    std::string message;
};

// Fits an SvdLayer to a least-squares target, L = ||W X - T||_F^2 / (2 m), one step at a time so that a
// panel can show every step. The callback's return value continues (true) or cancels (false); it runs
// on the caller's thread, so cancellation needs no Qt and no shared flag inside the numerics.
template <typename Scalar>
class SvdTrainer {
public:
    using MatrixType = Matrix<Scalar>;
    using Callback = std::function<bool(const TrainingProgress&)>;

    // Throws std::invalid_argument for invalid options or inputs and targets that do not match the layer.
    SvdTrainer(SvdLayer<Scalar> layer, MatrixType inputs, MatrixType targets, const TrainingOptions& options = {});

    double loss() const;
    TrainingProgress step();
    TrainingSummary run(const Callback& callback = {});
    const SvdLayer<Scalar>& layer() const { return m_layer; }
    int iteration() const { return m_iteration; }

private:
    void update(MatrixType& parameter, const MatrixType& gradient, MatrixType& first, MatrixType& second);

    SvdLayer<Scalar> m_layer;
    MatrixType m_inputs;
    MatrixType m_targets;
    TrainingOptions m_options;
    int m_iteration = 0;
    // Adam moments for U, V reflectors and sigma (kept as a d x 1 matrix).
    MatrixType m_firstU, m_secondU, m_firstV, m_secondV, m_firstSigma, m_secondSigma;
};

extern template class SvdLayer<float>;
extern template class SvdLayer<double>;
extern template class SvdTrainer<float>;
extern template class SvdTrainer<double>;

} // namespace wfs::fasth
