#pragma once
// One standard deviation per fitted parameter from the curvature of the cost at the end of a fit: the inverse of
// the curvature matrix, scaled by the objective's noise model (covarianceScale), with the zonal pupil's
// directions that change nothing left out (a pseudo-inverse).
//
// The curvature is the Fisher information J^T C J by default: J, the model intensities' derivatives, from forward
// differences of model images (P model evaluations, one FFT per plane each, no adjoint), and C the objective's
// second derivative per pixel (2 w for least squares, w d / m^2 for the Poisson likelihood), plus the zonal
// prior's curvature. It leaves out the Hessian's residual-times-second-derivative terms, which are zero on average
// at a fit that describes its data; where they are not small the fit itself is poor (FitResult::verdict says so).
// Central differences of the gradient give the Hessian itself at 2 P gradients (four times the FFTs): the method
// for problems whose Jacobian would not fit in memory, and the reference the Fisher information is tested against.
#include "optics/ModelEvaluator.h"

#include <vector>

namespace wfs {

enum class CurvatureMethod {
    Automatic,           // FisherInformation where its Jacobian fits in kFisherJacobianBytes, else GradientDifferences
    FisherInformation,   // J^T C J from P + 1 model evaluations (forward differences of the model images)
    GradientDifferences, // the Hessian from 2 P gradients (central differences)
};

// The most memory the Fisher information's Jacobian (used pixels x parameters, doubles) may take.
constexpr double kFisherJacobianBytes = 512e6;

// The curvature a method resolves to for this problem (Automatic: by the Jacobian's size).
CurvatureMethod resolvedCurvatureMethod(const Problem& problem, CurvatureMethod method);

// One standard deviation per parameter at `parameters` (the fit's end, with its final `cost`); NaN where the
// curvature is not positive definite (parameters the data do not determine) or the model cannot be evaluated.
std::vector<double> estimateUncertainty(ModelEvaluator& evaluator, const std::vector<double>& parameters, double cost,
                                        CurvatureMethod method = CurvatureMethod::Automatic);

// The information of the fitted parameters (the inverse covariance: the curvature over covarianceScale) in the model's
// own variables (radians, ...), over the parameters estimateUncertainty judges (the free ones, less the zonal values
// it holds fixed), row-major; an empty matrix where the curvature cannot be computed. For information that is
// combined across fits: a field's joint fit marginalises each bead's own parameters (fit/FieldJointFit.h).
struct ParameterInformation {
    std::vector<int> parameters; // indices into the problem's parameters
    std::vector<double> matrix;  // parameters.size() squared, row-major
};
ParameterInformation parameterInformation(ModelEvaluator& evaluator, const std::vector<double>& parameters, double cost,
                                          CurvatureMethod method = CurvatureMethod::Automatic);

// Covariance = this x (curvature of the cost)^-1, by the objective's noise model: 2 for chi-square, 1 for the Poisson
// likelihood, 2 sigma^2 (from the residual `cost`, with `freeParameters` fitted) for plain least squares.
double covarianceScale(const Problem& problem, double cost, int freeParameters);
// Whether estimateUncertainty leaves out a zonal pupil's values (past 400 parameters) and holds them fixed.
bool conditionalUncertainty(const Problem& problem);

} // namespace wfs
