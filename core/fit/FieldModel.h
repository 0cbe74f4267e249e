#pragma once
// The smooth field model of issue 43: each aberration term (a pupil Zernike coefficient, measured on many beads)
// as a smooth function of field position, a "double Zernike" expansion: field Zernike polynomials over a stated
// field circle, fitted to the per-bead values weighted by their uncertainties, with outlier rejection and the
// model's own uncertainties. Positions are image pixels (any origin); the field circle maps them onto the unit
// disc. Points outside the disc are fitted and evaluated as well (the polynomials extrapolate; nothing is cut).
//
// The field basis: zernike::modes(order, ZernikeOrdering::Noll) (piston first) with RMS normalisation (unit RMS
// over the unit disc), evaluated at ((x - centreX) / radius, (y - centreY) / radius).
//
// Per term, independently:
// - Weights 1 / sigma^2. An unknown sigma (NaN, inf or <= 0) takes the term's median known sigma, or 1 when none
//   of the term's sigmas is known, so a sample without a stated uncertainty counts like a typical one.
// - The order is limited by the kept samples: a fixed order is lowered until its coefficients do not outnumber
//   them (one sample: order 0, the value itself). The automatic choice (order -1) tries every order 0..maxOrder
//   whose coefficients are fewer than the kept samples (order 0 always) and takes the lowest
//   BIC = chi^2 + k ln(n) (k coefficients, n kept samples); a tie goes to the lower order.
// - Outliers: after each fit, r_i = (v_i - m_i) / sigma_i; robust scale s = max(1, 1.4826 median |r_i| over the
//   kept samples); every sample (a rejected one may come back) with |r_i| > clipSigma s is an outlier; refit; until
//   nothing changes or maxClipRounds refits. The automatic order is chosen again in each round, so that an outlier
//   does not push the order up. A rejection that would leave fewer kept samples than the coefficients of the fit
//   it judged is not made (rejection stops there).
// Everything is deterministic (no random starts, pivoted decompositions only).
#include "optics/Zernike.h"

#include <vector>

namespace wfs {

// One bead's measured values of the terms being modelled, at its field position (pixels, any origin).
struct FieldSample {
    double x = 0.0, y = 0.0;
    std::vector<double> values; // one per term (e.g. waves)
    std::vector<double> sigmas; // 1-sigma of each value (same length as values); NaN, inf or <= 0 means "unknown":
                                // that sample is weighted by the term's median known sigma, or 1 when none is known
};

struct FieldModelOptions {
    double centreX = 0.0, centreY = 0.0; // the field's centre (pixels): the unit circle's centre
    double radius = 1.0;                 // field radius (pixels): positions are divided by it (must be > 0)
    int order = -1;                      // field Zernike radial order, same for every term; -1: chosen per term (BIC, above)
    int maxOrder = 4;                    // the highest order the automatic choice tries (0..zernike::kMaxOrder)
    double clipSigma = 4.0;              // a sample whose normalised residual exceeds this is an outlier (per term); inf: none
    int maxClipRounds = 5;               // refits after rejections; 0: no rejection
};

struct FieldTermFit {
    int order = 0;                    // field radial order used
    std::vector<double> coefficients; // one per field Zernike (Noll order, RMS-normalised over the unit disc), piston first
    std::vector<double> covariance;   // coefficients x coefficients, row-major
    double reducedChiSquare = 0.0;    // chi^2 / (kept - rank) of the samples kept, with the weights as given (before any
                                      // scaling); 0 when no degree of freedom is left (e.g. one sample)
    double covarianceScale = 1.0;     // max(1, reducedChiSquare): the covariance is (A^T W A)^-1 times this (Birge ratio), so
                                      // scatter beyond the stated sigmas widens the model's uncertainties
    int rank = 0;                     // rank of the weighted design: below coefficients.size() when the positions cannot tell
                                      // some field modes apart (beads on a line, at one spot); those combinations are then
                                      // left at zero (minimum-norm solution) and the covariance is the pseudo-inverse's
    int kept = 0;                     // samples not rejected as outliers
    std::vector<bool> outlier;        // per sample
    std::vector<double> residuals;    // per sample: value - model (in the values' unit), outliers included
};

struct FieldModel {
    FieldModelOptions options;
    std::vector<FieldTermFit> terms; // one per term of the samples' values
    int samples = 0;
};

// The field Zernike modes of an order (Noll, piston first): zernike::modes(order, ZernikeOrdering::Noll).
std::vector<ZernikeMode> fieldModes(int order);

// Throws std::invalid_argument for no sample, samples with different term counts (or sigmas not one per value), a
// radius <= 0 or a non-finite centre or radius, an order outside 0..zernike::kMaxOrder (other than -1), with -1 a
// maxOrder outside that range, a clipSigma that is not > 0, a negative maxClipRounds, or non-finite positions/values.
FieldModel fitFieldModel(const std::vector<FieldSample>& samples, const FieldModelOptions& options);

struct FieldValue {
    double value = 0.0, sigma = 0.0;
};

// The model of `term` at (x, y) pixels and its 1-sigma from the covariance (g^T C g, g the field basis there).
// Throws std::invalid_argument for a term outside the model.
FieldValue evaluateFieldTerm(const FieldModel& model, int term, double x, double y);

} // namespace wfs
