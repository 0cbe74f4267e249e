#include "SvdLayer.h"

#include <chrono>
#include <cmath>
#include <stdexcept>

namespace wfs::fasth {

template <typename Scalar>
SvdLayer<Scalar>::SvdLayer(MatrixType uReflectors, MatrixType vReflectors, VectorType sigma, const Options& options)
    : m_u(std::move(uReflectors))
    , m_v(std::move(vReflectors))
    , m_sigma(std::move(sigma))
    , m_uProduct(options)
    , m_vProduct(options)
{
    const Eigen::Index d = m_sigma.size();
    if (d < 1 || m_u.rows() != d || m_v.rows() != d || m_u.cols() < 1 || m_u.cols() > d || m_v.cols() < 1 || m_v.cols() > d)
        throw std::invalid_argument("SvdLayer: reflectors must be d x k (1 <= k <= d) with d = sigma's size");
}

template <typename Scalar>
SvdLayer<Scalar> SvdLayer<Scalar>::random(int d, std::mt19937_64& generator, const Options& options)
{
    std::normal_distribution<double> normal;
    std::uniform_real_distribution<double> magnitude(0.5, 2.0);
    std::bernoulli_distribution negative(0.5);
    MatrixType u(d, d), v(d, d);
    for (Eigen::Index i = 0; i < u.size(); ++i)
        u.data()[i] = Scalar(normal(generator));
    for (Eigen::Index i = 0; i < v.size(); ++i)
        v.data()[i] = Scalar(normal(generator));
    VectorType sigma(d);
    for (int i = 0; i < d; ++i)
        sigma(i) = Scalar(negative(generator) ? -magnitude(generator) : magnitude(generator));
    return SvdLayer(std::move(u), std::move(v), std::move(sigma), options);
}

template <typename Scalar>
void SvdLayer<Scalar>::setOptions(const Options& options)
{
    m_uProduct.setOptions(options);
    m_vProduct.setOptions(options);
}

template <typename Scalar>
auto SvdLayer<Scalar>::forward(const MatrixType& x) const -> MatrixType
{
    MatrixType y = x;
    m_vProduct.prepare(m_v);
    m_vProduct.applyTranspose(y);
    y = m_sigma.asDiagonal() * y;
    m_uProduct.prepare(m_u);
    m_uProduct.apply(y);
    return y;
}

template <typename Scalar>
auto SvdLayer<Scalar>::inverse(const MatrixType& y) const -> MatrixType
{
    MatrixType x = y;
    m_uProduct.prepare(m_u);
    m_uProduct.applyTranspose(x);
    x = m_sigma.cwiseInverse().asDiagonal() * x;
    m_vProduct.prepare(m_v);
    m_vProduct.apply(x);
    return x;
}

template <typename Scalar>
Scalar SvdLayer<Scalar>::logAbsDeterminant() const
{
    // Summed in double: for float and large d the sum of d logs loses digits in single precision.
    double sum = 0.0;
    for (Eigen::Index i = 0; i < m_sigma.size(); ++i)
        sum += std::log(std::abs(double(m_sigma(i))));
    return Scalar(sum);
}

template <typename Scalar>
auto SvdLayer<Scalar>::dense() const -> MatrixType
{
    return forward(MatrixType::Identity(m_sigma.size(), m_sigma.size()));
}

template <typename Scalar>
auto SvdLayer<Scalar>::backward(const MatrixType& x, const MatrixType& gradOutput) const -> Gradients
{
    if (x.rows() != m_sigma.size() || gradOutput.rows() != x.rows() || gradOutput.cols() != x.cols())
        throw std::invalid_argument("SvdLayer::backward: X and dL/dY must both be d x m");
    // Forward: Z1 = V^T X, Z2 = diag(sigma) Z1, Y = U Z2.
    MatrixType z1 = x;
    m_vProduct.prepare(m_v);
    m_vProduct.applyTranspose(z1);
    MatrixType y = m_sigma.asDiagonal() * z1;
    m_uProduct.prepare(m_u);
    m_uProduct.apply(y);

    Gradients gradients;
    // Through U: y becomes Z2 again and the gradient becomes dL/dZ2.
    MatrixType gradient = gradOutput;
    m_uProduct.backward(y, gradient, gradients.u);
    gradients.sigma = gradient.cwiseProduct(z1).rowwise().sum();
    gradient = m_sigma.asDiagonal() * gradient;
    // Through V^T: z1 becomes X and the gradient dL/dX.
    m_vProduct.backwardTranspose(z1, gradient, gradients.v);
    gradients.x = std::move(gradient);
    return gradients;
}

const char* terminationName(TrainingTermination termination)
{
    switch (termination) {
    case TrainingTermination::Converged:
        return "converged";
    case TrainingTermination::MaxIterations:
        return "max-iterations";
    case TrainingTermination::Cancelled:
        return "cancelled";
    case TrainingTermination::Diverged:
        return "diverged";
    }
    return "unknown";
}

bool TrainingOptions::isValid(std::string* error) const
{
    auto fail = [error](const char* message) {
        if (error)
            *error = message;
        return false;
    };
    if (!(learningRate > 0.0) || !std::isfinite(learningRate))
        return fail("learningRate must be positive");
    if (!(beta1 >= 0.0 && beta1 < 1.0) || !(beta2 >= 0.0 && beta2 < 1.0))
        return fail("beta1 and beta2 must lie in [0, 1)");
    if (!(epsilon > 0.0))
        return fail("epsilon must be positive");
    if (maxIterations < 0)
        return fail("maxIterations must not be negative");
    if (!(lossTolerance >= 0.0))
        return fail("lossTolerance must not be negative");
    return true;
}

template <typename Scalar>
SvdTrainer<Scalar>::SvdTrainer(SvdLayer<Scalar> layer, MatrixType inputs, MatrixType targets, const TrainingOptions& options)
    : m_layer(std::move(layer))
    , m_inputs(std::move(inputs))
    , m_targets(std::move(targets))
    , m_options(options)
{
    std::string error;
    if (!options.isValid(&error))
        throw std::invalid_argument("TrainingOptions: " + error);
    if (m_inputs.rows() != m_layer.dimension() || m_targets.rows() != m_inputs.rows() || m_targets.cols() != m_inputs.cols()
        || m_inputs.cols() < 1)
        throw std::invalid_argument("SvdTrainer: inputs and targets must both be d x m with m >= 1");
}

template <typename Scalar>
double SvdTrainer<Scalar>::loss() const
{
    return 0.5 * double((m_layer.forward(m_inputs) - m_targets).squaredNorm()) / double(m_inputs.cols());
}

template <typename Scalar>
void SvdTrainer<Scalar>::update(MatrixType& parameter, const MatrixType& gradient, MatrixType& first, MatrixType& second)
{
    const Scalar rate = Scalar(m_options.learningRate);
    if (m_options.optimizer == Optimizer::GradientDescent) {
        parameter -= rate * gradient;
        return;
    }
    if (first.size() != gradient.size()) {
        first = MatrixType::Zero(gradient.rows(), gradient.cols());
        second = MatrixType::Zero(gradient.rows(), gradient.cols());
    }
    const Scalar b1 = Scalar(m_options.beta1);
    const Scalar b2 = Scalar(m_options.beta2);
    first = b1 * first + (Scalar(1) - b1) * gradient;
    second = b2 * second + (Scalar(1) - b2) * gradient.cwiseAbs2();
    // Bias correction for the zero-initialised moments (m_iteration counts from 1 here).
    const Scalar c1 = Scalar(1) - Scalar(std::pow(m_options.beta1, m_iteration));
    const Scalar c2 = Scalar(1) - Scalar(std::pow(m_options.beta2, m_iteration));
    parameter.array() -= rate * (first.array() / c1) / ((second.array() / c2).sqrt() + Scalar(m_options.epsilon));
}

template <typename Scalar>
TrainingProgress SvdTrainer<Scalar>::step()
{
    const auto start = std::chrono::steady_clock::now();
    const MatrixType residual = m_layer.forward(m_inputs) - m_targets;
    const double m = double(m_inputs.cols());
    TrainingProgress progress;
    progress.loss = 0.5 * double(residual.squaredNorm()) / m;
    const auto gradients = m_layer.backward(m_inputs, residual / Scalar(m));
    progress.gradientNorm =
        std::sqrt(double(gradients.u.squaredNorm()) + double(gradients.v.squaredNorm()) + double(gradients.sigma.squaredNorm()));
    ++m_iteration;
    update(m_layer.uReflectors(), gradients.u, m_firstU, m_secondU);
    update(m_layer.vReflectors(), gradients.v, m_firstV, m_secondV);
    MatrixType sigma = m_layer.sigma();
    update(sigma, gradients.sigma, m_firstSigma, m_secondSigma);
    m_layer.sigma() = sigma.col(0);
    progress.iteration = m_iteration;
    progress.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return progress;
}

template <typename Scalar>
TrainingSummary SvdTrainer<Scalar>::run(const Callback& callback)
{
    TrainingSummary summary;
    summary.initialLoss = loss();
    summary.finalLoss = summary.initialLoss;
    const int first = m_iteration;
    while (true) {
        if (summary.finalLoss <= m_options.lossTolerance) {
            summary.termination = TrainingTermination::Converged;
            summary.message = "loss reached the tolerance";
            break;
        }
        if (m_iteration - first >= m_options.maxIterations) {
            summary.termination = TrainingTermination::MaxIterations;
            summary.message = "maximum number of iterations reached";
            break;
        }
        const TrainingProgress progress = step();
        // The loss after the step is what the next step reports first; evaluating it here keeps the
        // summary exact at the price of one forward pass per step.
        summary.finalLoss = loss();
        if (!std::isfinite(summary.finalLoss)) {
            summary.termination = TrainingTermination::Diverged;
            summary.message = "loss is not finite; lower the learning rate";
            break;
        }
        if (callback && !callback(progress)) {
            summary.termination = TrainingTermination::Cancelled;
            summary.message = "cancelled by the caller";
            break;
        }
    }
    summary.iterations = m_iteration - first;
    return summary;
}

template class SvdLayer<float>;
template class SvdLayer<double>;
template class SvdTrainer<float>;
template class SvdTrainer<double>;

} // namespace wfs::fasth
