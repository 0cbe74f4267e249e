#include "fit/Uncertainty.h"

#include <Eigen/Dense>

#include <algorithm>
#include <cmath>
#include <limits>

namespace wfs {

namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr int kLargeProblem = 400; // parameters beyond which a zonal pupil's values get no uncertainty

bool isZonal(ParameterKind kind)
{
    return kind == ParameterKind::ZonalPhase || kind == ParameterKind::ZonalAmplitude;
}

// Which parameters get an uncertainty: all of them, or, past kLargeProblem with a zonal pupil, all but the zonal
// values (their curvature would cost P evaluations and a P^3 decomposition); those are then held fixed, and the
// result is conditional on them (analyseFit says so).
std::vector<int> chosenParameters(const Problem& problem)
{
    std::vector<int> chosen;
    const bool conditional = conditionalUncertainty(problem);
    for (int j = 0; j < problem.parameterCount(); ++j)
        if (!conditional || !isZonal(problem.parameters()[size_t(j)].kind))
            chosen.push_back(j);
    return chosen;
}

// A difference step for parameter j: a fraction of its value, or of its typical size where the value is near 0.
double differenceStep(double relative, double value, double scale)
{
    return relative * std::max(1e-2 * scale, std::abs(value));
}

// The pixels the objective uses (weight > 0), every plane's in order, as (plane, grid index).
struct UsedPixel {
    int plane;
    int index;
};

// How many pixels the objective uses (weight > 0), over every plane.
long usedPixelCount(const Problem& problem)
{
    long used = 0;
    for (int k = 0; k < problem.planeCount(); ++k)
        for (double w : problem.weights(k))
            used += w > 0.0;
    return used;
}

std::vector<UsedPixel> usedPixels(const Problem& problem)
{
    std::vector<UsedPixel> used;
    for (int k = 0; k < problem.planeCount(); ++k) {
        const std::vector<double>& weights = problem.weights(k);
        for (size_t i = 0; i < weights.size(); ++i)
            if (weights[i] > 0.0)
                used.push_back({k, int(i)});
    }
    return used;
}

// The Hessian by central differences of the gradient, in the solver's scaled coordinates (parameter / its typical
// size), so that metres, photons and radians share one eigenvalue range and the definiteness test means what it says.
Eigen::MatrixXd gradientDifferenceCurvature(ModelEvaluator& evaluator, const std::vector<double>& x, const std::vector<int>& chosen)
{
    const Problem& problem = evaluator.problem();
    const int count = int(chosen.size());
    const double relative = evaluator.info().precision == Precision::Double ? 1e-5 : 1e-3;
    const std::vector<double> scales = problem.parameterScales();
    Eigen::MatrixXd hessian(count, count);
    std::vector<double> probe = x;
    std::vector<double> gPlus(x.size()), gMinus(x.size());
    for (int c = 0; c < count; ++c) {
        const size_t j = size_t(chosen[size_t(c)]);
        const double h = differenceStep(relative, x[j], scales[j]);
        probe[j] = x[j] + h;
        evaluator.evaluate(probe.data(), gPlus.data());
        probe[j] = x[j] - h;
        evaluator.evaluate(probe.data(), gMinus.data());
        probe[j] = x[j];
        for (int r = 0; r < count; ++r) {
            const size_t i = size_t(chosen[size_t(r)]);
            hessian(r, c) = (gPlus[i] - gMinus[i]) / (2.0 * h) * scales[i] * scales[j];
        }
    }
    return 0.5 * (hessian + hessian.transpose());
}

// The zonal prior's gradient (Problem::regularization) in the parameter vector's layout.
std::vector<double> regularizationGradient(const Problem& problem, const std::vector<double>& x)
{
    ModelParameters gradient = problem.zeroLike();
    problem.regularization(problem.unpack(x.data()), &gradient);
    std::vector<double> packed(x.size());
    problem.pack(gradient, packed.data());
    return packed;
}

// Adds the zonal prior's curvature (it is quadratic: central differences of its gradient are exact) in scaled
// coordinates.
void addRegularizationCurvature(const Problem& problem, const std::vector<double>& x, const std::vector<int>& chosen,
                                Eigen::MatrixXd& curvature)
{
    if (problem.spec().regularization <= 0.0 || !(problem.hasZonalPhase() || problem.hasZonalAmplitude()))
        return;
    const std::vector<double> scales = problem.parameterScales();
    std::vector<double> probe = x;
    for (int c = 0; c < int(chosen.size()); ++c) {
        const size_t j = size_t(chosen[size_t(c)]);
        if (!isZonal(problem.parameters()[j].kind))
            continue;
        const double h = differenceStep(1e-3, x[j], scales[j]);
        probe[j] = x[j] + h;
        const std::vector<double> plus = regularizationGradient(problem, probe);
        probe[j] = x[j] - h;
        const std::vector<double> minus = regularizationGradient(problem, probe);
        probe[j] = x[j];
        for (int r = 0; r < int(chosen.size()); ++r) {
            const size_t i = size_t(chosen[size_t(r)]);
            curvature(r, c) += (plus[i] - minus[i]) / (2.0 * h) * scales[i] * scales[j];
        }
    }
    curvature = (0.5 * (curvature + curvature.transpose())).eval();
}

// The model intensities at the used pixels.
Eigen::VectorXd usedModel(ModelEvaluator& evaluator, const std::vector<double>& x, const std::vector<UsedPixel>& used)
{
    const std::vector<std::vector<double>> images = evaluator.modelImages(x.data());
    Eigen::VectorXd model(Eigen::Index(used.size()));
    for (size_t u = 0; u < used.size(); ++u)
        model[Eigen::Index(u)] = images[size_t(used[u].plane)][size_t(used[u].index)];
    return model;
}

// The Fisher information J^T C J in scaled coordinates; an empty matrix where the model cannot be evaluated
// (a non-positive Poisson intensity at a used pixel). Double precision takes forward differences of the model
// images (P + 1 evaluations), single precision central ones (2 P), whose rounding the forward step would not
// outweigh.
Eigen::MatrixXd fisherInformation(ModelEvaluator& evaluator, const std::vector<double>& x, const std::vector<int>& chosen)
{
    const Problem& problem = evaluator.problem();
    const std::vector<UsedPixel> used = usedPixels(problem);
    const Eigen::VectorXd model = usedModel(evaluator, x, used);
    const bool poisson = problem.spec().objective == ObjectiveKind::Poisson;
    // sqrt of the objective's second derivative per pixel with respect to the model there.
    Eigen::VectorXd root(model.size());
    for (Eigen::Index u = 0; u < model.size(); ++u) {
        const UsedPixel& p = used[size_t(u)];
        const double w = problem.weights(p.plane)[size_t(p.index)];
        if (!poisson) {
            root[u] = std::sqrt(2.0 * w);
            continue;
        }
        const double d = problem.data(p.plane)[size_t(p.index)];
        if (!(model[u] > 0.0))
            return {};
        root[u] = std::sqrt(w * std::max(0.0, d)) / model[u];
    }

    const bool central = evaluator.info().precision != Precision::Double;
    const double relative = central ? 3e-3 : 1e-6;
    const std::vector<double> scales = problem.parameterScales();
    const int count = int(chosen.size());
    Eigen::MatrixXd weighted(model.size(), count); // C^1/2 J
    std::vector<double> probe = x;
    for (int c = 0; c < count; ++c) {
        const size_t j = size_t(chosen[size_t(c)]);
        const double h = differenceStep(relative, x[j], scales[j]);
        probe[j] = x[j] + h;
        Eigen::VectorXd difference = usedModel(evaluator, probe, used);
        if (central) {
            probe[j] = x[j] - h;
            difference -= usedModel(evaluator, probe, used);
        } else {
            difference -= model;
        }
        probe[j] = x[j];
        weighted.col(c) = difference.cwiseProduct(root) * (scales[j] / (central ? 2.0 * h : h));
    }
    Eigen::MatrixXd fisher = Eigen::MatrixXd::Zero(count, count);
    fisher.selfadjointView<Eigen::Lower>().rankUpdate(weighted.transpose());
    fisher = fisher.selfadjointView<Eigen::Lower>();
    addRegularizationCurvature(problem, x, chosen, fisher);
    return fisher;
}

} // namespace

bool conditionalUncertainty(const Problem& problem)
{
    return problem.parameterCount() > kLargeProblem && (problem.hasZonalPhase() || problem.hasZonalAmplitude());
}

double covarianceScale(const Problem& problem, double cost, int freeParameters)
{
    // For least squares H ~ 2 J^T J / sigma^2-free, so scale = 2 sigma^2 with sigma^2 estimated from the
    // residual; for chi-square, 2; for the Poisson likelihood, 1.
    switch (problem.spec().objective) {
    case ObjectiveKind::LeastSquares: {
        return 2.0 * cost / double(std::max<long>(1, usedPixelCount(problem) - freeParameters));
    }
    case ObjectiveKind::WeightedLeastSquares:
        return 2.0;
    case ObjectiveKind::Poisson:
        return 1.0;
    }
    return 1.0;
}

CurvatureMethod resolvedCurvatureMethod(const Problem& problem, CurvatureMethod method)
{
    if (method != CurvatureMethod::Automatic)
        return method;
    const double bytes = double(usedPixelCount(problem)) * double(chosenParameters(problem).size()) * double(sizeof(double));
    return bytes <= kFisherJacobianBytes ? CurvatureMethod::FisherInformation : CurvatureMethod::GradientDifferences;
}

namespace {
// The curvature over `chosen` in scaled coordinates, by the method resolved for the problem.
Eigen::MatrixXd curvatureAt(ModelEvaluator& evaluator, const std::vector<double>& x, const std::vector<int>& chosen, CurvatureMethod method)
{
    return resolvedCurvatureMethod(evaluator.problem(), method) == CurvatureMethod::FisherInformation
               ? fisherInformation(evaluator, x, chosen)
               : gradientDifferenceCurvature(evaluator, x, chosen);
}
} // namespace

ParameterInformation parameterInformation(ModelEvaluator& evaluator, const std::vector<double>& x, double cost, CurvatureMethod method)
{
    const Problem& problem = evaluator.problem();
    ParameterInformation information;
    information.parameters = chosenParameters(problem);
    const int count = int(information.parameters.size());
    const Eigen::MatrixXd curvature = curvatureAt(evaluator, x, information.parameters, method);
    if (curvature.rows() != count || !curvature.allFinite())
        return information;
    // Scaled u = x / s: the curvature in x is S^-1 F S^-1; over the scale it is the inverse covariance.
    const double scale = covarianceScale(problem, cost, count);
    const std::vector<double> scales = problem.parameterScales();
    information.matrix.resize(size_t(count) * size_t(count));
    for (int i = 0; i < count; ++i)
        for (int j = 0; j < count; ++j)
            information.matrix[size_t(i) * size_t(count) + size_t(j)] =
                curvature(i, j)
                / (scales[size_t(information.parameters[size_t(i)])] * scales[size_t(information.parameters[size_t(j)])] * scale);
    return information;
}

std::vector<double> estimateUncertainty(ModelEvaluator& evaluator, const std::vector<double>& x, double cost, CurvatureMethod method)
{
    const Problem& problem = evaluator.problem();
    const std::vector<int> chosen = chosenParameters(problem);
    const int count = int(chosen.size());
    const bool conditional = conditionalUncertainty(problem);
    const Eigen::MatrixXd curvature = curvatureAt(evaluator, x, chosen, method);
    std::vector<double> sigma(x.size(), kNaN);
    if (curvature.rows() != count || !curvature.allFinite())
        return sigma;
    const double scale = covarianceScale(problem, cost, count);
    Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eigen(curvature);
    if (eigen.info() != Eigen::Success)
        return sigma;
    // The zonal terms have directions that change nothing (problem.gaugeDimensions(): piston, the Zernike
    // span, the amplitude's mean); they are the smallest eigenvalues and are left out (a pseudo-inverse),
    // which leaves the variance of every other parameter as it is.
    Eigen::VectorXd inverse = eigen.eigenvalues();
    const int gauge = conditional ? 0 : std::min(count - 1, problem.gaugeDimensions());
    const Eigen::VectorXd determined = inverse.tail(count - gauge);
    if (determined.minCoeff() <= determined.maxCoeff() * 1e-14 || determined.minCoeff() <= 0.0)
        return sigma; // flat or negative directions: the parameters are not all determined
    for (int i = 0; i < count; ++i)
        inverse[i] = i < gauge ? 0.0 : 1.0 / inverse[i];
    const std::vector<double> scales = problem.parameterScales();
    const Eigen::MatrixXd covariance = eigen.eigenvectors() * inverse.asDiagonal() * eigen.eigenvectors().transpose();
    for (int i = 0; i < count; ++i)
        sigma[size_t(chosen[size_t(i)])] = std::sqrt(scale * covariance(i, i)) * scales[size_t(chosen[size_t(i)])];
    return sigma;
}

} // namespace wfs
