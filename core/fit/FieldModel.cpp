#include "fit/FieldModel.h"

#include <Eigen/Dense>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace wfs {

namespace {

using Mask = std::vector<bool>; // per sample: true for an outlier

[[noreturn]] void fail(const std::string& what)
{
    throw std::invalid_argument("field model: " + what);
}

bool knownSigma(double sigma)
{
    return std::isfinite(sigma) && sigma > 0.0;
}

// The middle value (the mean of the two middle ones for an even count); `values` must not be empty.
double median(std::vector<double> values)
{
    const auto mid = values.begin() + std::ptrdiff_t(values.size() / 2);
    std::nth_element(values.begin(), mid, values.end());
    if (values.size() % 2 == 1)
        return *mid;
    return 0.5 * (*std::max_element(values.begin(), mid) + *mid);
}

void checkOptions(const FieldModelOptions& options)
{
    const auto inRange = [](int order) { return order >= 0 && order <= zernike::kMaxOrder; };
    const std::string range = "between 0 and " + std::to_string(zernike::kMaxOrder);
    if (!(std::isfinite(options.radius) && options.radius > 0.0))
        fail("the field radius must be > 0 pixels (got " + std::to_string(options.radius) + ")");
    if (!std::isfinite(options.centreX) || !std::isfinite(options.centreY))
        fail("the field centre must be finite");
    if (options.order != -1 && !inRange(options.order))
        fail("the field order must be " + range + ", or -1 to choose it (got " + std::to_string(options.order) + ")");
    if (options.order == -1 && !inRange(options.maxOrder))
        fail("the highest field order to try must be " + range + " (got " + std::to_string(options.maxOrder) + ")");
    if (!(options.clipSigma > 0.0))
        fail("the outlier threshold must be > 0 (got " + std::to_string(options.clipSigma) + ")");
    if (options.maxClipRounds < 0)
        fail("the number of rejection rounds must not be negative (got " + std::to_string(options.maxClipRounds) + ")");
}

void checkSamples(const std::vector<FieldSample>& samples)
{
    if (samples.empty())
        fail("no sample");
    const size_t terms = samples.front().values.size();
    for (size_t i = 0; i < samples.size(); ++i) {
        const FieldSample& s = samples[i];
        const std::string name = "sample " + std::to_string(i);
        if (s.values.size() != terms)
            fail(name + " has " + std::to_string(s.values.size()) + " values, sample 0 has " + std::to_string(terms));
        if (s.sigmas.size() != terms)
            fail(name + " has " + std::to_string(s.sigmas.size()) + " sigmas for " + std::to_string(terms) + " values");
        if (!std::isfinite(s.x) || !std::isfinite(s.y))
            fail(name + "'s position is not finite");
        if (!std::all_of(s.values.begin(), s.values.end(), [](double v) { return std::isfinite(v); }))
            fail(name + " has a value that is not finite");
    }
}

// One term's values and the sigmas it is weighted by (the unknown ones replaced).
struct TermData {
    Eigen::VectorXd values, sigmas;
};

TermData termData(const std::vector<FieldSample>& samples, size_t term)
{
    std::vector<double> known;
    for (const FieldSample& s : samples)
        if (knownSigma(s.sigmas[term]))
            known.push_back(s.sigmas[term]);
    // A sample without a stated uncertainty counts like a typical one of its term, not more nor less.
    const double fallback = known.empty() ? 1.0 : median(known);
    TermData data{Eigen::VectorXd(Eigen::Index(samples.size())), Eigen::VectorXd(Eigen::Index(samples.size()))};
    for (size_t i = 0; i < samples.size(); ++i) {
        data.values[Eigen::Index(i)] = samples[i].values[term];
        data.sigmas[Eigen::Index(i)] = knownSigma(samples[i].sigmas[term]) ? samples[i].sigmas[term] : fallback;
    }
    return data;
}

// The field basis up to `order` at the unit-disc position of every sample (samples x modes). Noll's ordering goes
// by radial order, so a fit of a lower order k uses the first termCount(k) columns.
Eigen::MatrixXd fieldBasis(const std::vector<FieldSample>& samples, const FieldModelOptions& options, int order)
{
    const size_t n = samples.size();
    std::vector<double> x(n), y(n);
    for (size_t i = 0; i < n; ++i) {
        x[i] = (samples[i].x - options.centreX) / options.radius;
        y[i] = (samples[i].y - options.centreY) / options.radius;
    }
    const std::vector<ZernikeMode> modes = fieldModes(order);
    Eigen::MatrixXd basis(Eigen::Index(n), Eigen::Index(modes.size()));
    zernike::evaluateBasis(modes, ZernikeNormalization::Rms, x.data(), y.data(), n, basis.data());
    return basis;
}

int keptCount(const Mask& outlier)
{
    return int(std::count(outlier.begin(), outlier.end(), false));
}

// The highest order up to `limit` whose coefficients do not exceed `samples` (strict: are fewer than them).
int highestOrder(int limit, int samples, bool strict)
{
    int order = 0;
    while (order < limit) {
        const int next = zernike::termCount(order + 1);
        if (strict ? next >= samples : next > samples)
            break;
        ++order;
    }
    return order;
}

struct WeightedFit {
    int order = 0;
    Eigen::VectorXd coefficients;
    Eigen::MatrixXd covariance; // (A^T W A)^+, before the Birge scaling
    double chiSquare = 0.0;     // of the kept samples
    int kept = 0, rank = 0;
};

// Weighted least squares of one order on the kept samples.
WeightedFit solveOrder(const Eigen::MatrixXd& basis, const TermData& data, const Mask& outlier, int order)
{
    const Eigen::Index k = zernike::termCount(order);
    Eigen::MatrixXd a(keptCount(outlier), k);
    Eigen::VectorXd b(a.rows());
    for (Eigen::Index i = 0, row = 0; i < basis.rows(); ++i)
        if (!outlier[size_t(i)]) {
            a.row(row) = basis.row(i).head(k) / data.sigmas[i];
            b[row++] = data.values[i] / data.sigmas[i];
        }
    // The weighted design itself is decomposed (not the normal matrix, which would square its condition number).
    // A complete orthogonal decomposition keeps going when the positions cannot tell some field modes apart (beads
    // on a line, or at one spot): the minimum-norm solution leaves those combinations at zero, and the
    // pseudo-inverse gives the covariance of what the data do determine instead of an infinite or failed one.
    const Eigen::CompleteOrthogonalDecomposition<Eigen::MatrixXd> cod(a);
    WeightedFit fit;
    fit.order = order;
    fit.coefficients = cod.solve(b);
    const Eigen::MatrixXd pseudoInverse = cod.pseudoInverse();
    fit.covariance = pseudoInverse * pseudoInverse.transpose(); // (A^T W A)^+ = A_w^+ (A_w^+)^T
    fit.chiSquare = (a * fit.coefficients - b).squaredNorm();
    fit.kept = int(a.rows());
    fit.rank = int(cod.rank());
    return fit;
}

// One fit on the kept samples: the given order as far as they allow, or the order of least BIC.
WeightedFit fitRound(const Eigen::MatrixXd& basis, const TermData& data, const Mask& outlier, const FieldModelOptions& options)
{
    const int kept = keptCount(outlier);
    if (options.order >= 0)
        return solveOrder(basis, data, outlier, highestOrder(options.order, kept, false));
    const int top = highestOrder(options.maxOrder, kept, true);
    WeightedFit best;
    double bestBic = std::numeric_limits<double>::infinity();
    for (int order = 0; order <= top; ++order) {
        WeightedFit fit = solveOrder(basis, data, outlier, order);
        const double bic = fit.chiSquare + zernike::termCount(order) * std::log(double(kept));
        if (order == 0 || bic < bestBic) {
            best = std::move(fit);
            bestBic = bic;
        }
    }
    return best;
}

Eigen::VectorXd modelValues(const Eigen::MatrixXd& basis, const WeightedFit& fit)
{
    return basis.leftCols(fit.coefficients.size()) * fit.coefficients;
}

// The outliers judged by one fit: every sample is judged again, so that one rejected against a poor early fit
// comes back once the fit no longer leans towards the real outliers.
Mask judge(const Eigen::VectorXd& normalised, const Mask& outlier, double clipSigma)
{
    std::vector<double> kept;
    for (Eigen::Index i = 0; i < normalised.size(); ++i)
        if (!outlier[size_t(i)])
            kept.push_back(std::abs(normalised[i]));
    // The median absolute residual as a sigma (1.4826: its ratio for a Gaussian), robust to the outliers themselves;
    // never below 1, so that a fit better than its stated sigmas does not start rejecting good samples.
    const double scale = std::max(1.0, 1.4826 * median(kept));
    Mask next(outlier.size());
    for (Eigen::Index i = 0; i < normalised.size(); ++i)
        next[size_t(i)] = std::abs(normalised[i]) > clipSigma * scale;
    return next;
}

FieldTermFit termResult(const Eigen::MatrixXd& basis, const TermData& data, const WeightedFit& fit, const Mask& outlier)
{
    FieldTermFit term;
    term.order = fit.order;
    const Eigen::Index k = fit.coefficients.size();
    term.coefficients.assign(fit.coefficients.data(), fit.coefficients.data() + k);
    const int freedom = fit.kept - fit.rank;
    term.reducedChiSquare = freedom > 0 ? fit.chiSquare / freedom : 0.0;
    term.covarianceScale = std::max(1.0, term.reducedChiSquare);
    term.covariance.resize(size_t(k * k));
    for (Eigen::Index r = 0; r < k; ++r)
        for (Eigen::Index c = 0; c < k; ++c)
            term.covariance[size_t(r * k + c)] = fit.covariance(r, c) * term.covarianceScale;
    term.rank = fit.rank;
    term.kept = fit.kept;
    term.outlier = outlier;
    const Eigen::VectorXd residuals = data.values - modelValues(basis, fit);
    term.residuals.assign(residuals.data(), residuals.data() + residuals.size());
    return term;
}

FieldTermFit fitTerm(const Eigen::MatrixXd& basis, const TermData& data, const FieldModelOptions& options)
{
    Mask outlier(size_t(data.values.size()), false);
    WeightedFit fit = fitRound(basis, data, outlier, options);
    for (int round = 0; round < options.maxClipRounds; ++round) {
        const Eigen::VectorXd normalised = (data.values - modelValues(basis, fit)).cwiseQuotient(data.sigmas);
        const Mask next = judge(normalised, outlier, options.clipSigma);
        // Fewer samples than the judging fit's coefficients could not even be fitted at its order: keep the last set.
        if (next == outlier || keptCount(next) < fit.coefficients.size())
            break;
        outlier = next;
        fit = fitRound(basis, data, outlier, options);
    }
    return termResult(basis, data, fit, outlier);
}

} // namespace

std::vector<ZernikeMode> fieldModes(int order)
{
    return zernike::modes(order, ZernikeOrdering::Noll);
}

FieldModel fitFieldModel(const std::vector<FieldSample>& samples, const FieldModelOptions& options)
{
    checkOptions(options);
    checkSamples(samples);
    FieldModel model;
    model.options = options;
    model.samples = int(samples.size());
    const int top = options.order >= 0 ? options.order : options.maxOrder;
    const Eigen::MatrixXd basis = fieldBasis(samples, options, highestOrder(top, model.samples, false));
    const size_t terms = samples.front().values.size();
    for (size_t t = 0; t < terms; ++t)
        model.terms.push_back(fitTerm(basis, termData(samples, t), options));
    return model;
}

FieldValue evaluateFieldTerm(const FieldModel& model, int term, double x, double y)
{
    if (term < 0 || term >= int(model.terms.size()))
        fail("term " + std::to_string(term) + " is not in the model (" + std::to_string(model.terms.size()) + " terms)");
    const FieldTermFit& fit = model.terms[size_t(term)];
    const std::vector<ZernikeMode> modes = fieldModes(fit.order);
    const auto k = Eigen::Index(modes.size());
    if (fit.coefficients.size() != size_t(k) || fit.covariance.size() != size_t(k * k))
        fail("term " + std::to_string(term) + "'s coefficients do not match its order");
    const double u = (x - model.options.centreX) / model.options.radius;
    const double v = (y - model.options.centreY) / model.options.radius;
    Eigen::VectorXd g(k);
    zernike::evaluateBasis(modes, ZernikeNormalization::Rms, &u, &v, 1, g.data());
    const Eigen::Map<const Eigen::VectorXd> coefficients(fit.coefficients.data(), k);
    const Eigen::Map<const Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>> covariance(fit.covariance.data(), k, k);
    // Rounding may leave a variance a hair below zero where the model is pinned down exactly.
    return {g.dot(coefficients), std::sqrt(std::max(0.0, g.dot(covariance * g)))};
}

} // namespace wfs
