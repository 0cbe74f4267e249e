// Issue 43 item 3: the field model (fit/FieldModel.h), a double Zernike over the field, on known fields: a field
// sampled without noise is recovered exactly (inside and outside the field circle); with Gaussian noise at the
// stated sigmas every coefficient lies within 4 of its sigmas, the reduced chi^2 is near 1 and the model's sigma at a
// point is g^T C g; the automatic order (BIC) finds constant, linear and quadratic fields, an outlier included;
// 50-sigma outliers are flagged exactly and leave the fit of the clean samples; scatter beyond the stated sigmas
// widens the model (Birge ratio) and does not reject good beads; one sample is its own model; unknown
// sigmas take the term's median known sigma (or 1); beads on a line leave the undetermined mode at zero; bad input
// throws.
#include "TestSupport.h"

#include "fit/FieldModel.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <stdexcept>
#include <utility>

using namespace wfs;
using wfs::test::closeTo;

namespace {

const double kNan = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();
const double kPi = 3.14159265358979323846;

// Uniform and Gaussian draws written out (std's distributions differ between standard libraries), so every platform
// sees the same samples.
class Draws {
public:
    explicit Draws(std::uint64_t seed)
        : m_engine(seed)
    {
    }
    double uniform() { return double(m_engine() >> 11) * 0x1.0p-53; }
    double gaussian()
    {
        const double u = 1.0 - uniform(); // (0, 1]
        return std::sqrt(-2.0 * std::log(u)) * std::cos(2.0 * kPi * uniform());
    }

private:
    std::mt19937_64 m_engine;
};

// A field term: a sum of field Zernikes (RMS-normalised, over the field circle) with their coefficients.
using Field = std::vector<std::pair<ZernikeMode, double>>;

struct Circle {
    double x = 512.0, y = 384.0, radius = 100.0;
};

double fieldAt(const Field& field, const Circle& circle, double x, double y)
{
    const double u = (x - circle.x) / circle.radius, v = (y - circle.y) / circle.radius;
    double sum = 0.0;
    for (const auto& [mode, coefficient] : field)
        sum += coefficient * zernike::evaluate(mode, ZernikeNormalization::Rms, std::hypot(u, v), std::atan2(v, u));
    return sum;
}

// The field's coefficients in the model's layout (Noll, piston first) up to `order`.
std::vector<double> expectedCoefficients(const Field& field, int order)
{
    const std::vector<ZernikeMode> modes = fieldModes(order);
    std::vector<double> c(modes.size(), 0.0);
    for (const auto& [mode, coefficient] : field)
        c[size_t(std::find(modes.begin(), modes.end(), mode) - modes.begin())] += coefficient;
    return c;
}

// `count` beads, uniform over a disc of `reach` field radii, one value per field, with sigmas drawn in
// [sigma, 2 sigma) (so the weights differ) and, when `noisy`, Gaussian noise at those sigmas.
std::vector<FieldSample> samplesOf(const std::vector<Field>& fields, const Circle& circle, int count, std::uint64_t seed, double sigma,
                                   bool noisy, double reach = 1.0)
{
    Draws draws(seed);
    std::vector<FieldSample> samples(static_cast<size_t>(count));
    for (FieldSample& s : samples) {
        const double r = reach * circle.radius * std::sqrt(draws.uniform()), theta = 2.0 * kPi * draws.uniform();
        s.x = circle.x + r * std::cos(theta);
        s.y = circle.y + r * std::sin(theta);
        for (const Field& field : fields) {
            const double stated = sigma * (1.0 + draws.uniform());
            s.sigmas.push_back(stated);
            s.values.push_back(fieldAt(field, circle, s.x, s.y) + (noisy ? stated * draws.gaussian() : 0.0));
        }
    }
    return samples;
}

FieldModelOptions optionsFor(const Circle& circle, int order)
{
    FieldModelOptions options;
    options.centreX = circle.x;
    options.centreY = circle.y;
    options.radius = circle.radius;
    options.order = order;
    return options;
}

double covarianceAt(const FieldTermFit& fit, size_t r, size_t c)
{
    return fit.covariance[r * fit.coefficients.size() + c];
}

// 0.1 + 0.05 Z(2,2) + 0.03 Z(1,1) (the brief's example) and a second term of tilt and defocus.
const Field kAstigmatic{{{0, 0}, 0.1}, {{2, 2}, 0.05}, {{1, 1}, 0.03}};
const Field kTiltDefocus{{{1, -1}, -0.2}, {{2, 0}, 0.04}};

} // namespace

class TestFieldModel : public QObject {
    Q_OBJECT

private slots:
    void recoversAnExactField()
    {
        const Circle circle;
        // Out to 1.3 field radii: beads beyond the circle are fitted too (the polynomials extrapolate).
        const auto samples = samplesOf({kAstigmatic, kTiltDefocus}, circle, 40, 1, 0.01, false, 1.3);
        for (const int order : {2, -1}) {
            const FieldModel model = fitFieldModel(samples, optionsFor(circle, order));
            QCOMPARE(model.samples, 40);
            QCOMPARE(model.terms.size(), size_t(2));
            for (size_t t = 0; t < 2; ++t) {
                const FieldTermFit& fit = model.terms[t];
                QCOMPARE(fit.order, 2);
                QCOMPARE(fit.rank, 6);
                QCOMPARE(fit.kept, 40);
                const std::vector<double> expected = expectedCoefficients(t == 0 ? kAstigmatic : kTiltDefocus, 2);
                QCOMPARE(fit.coefficients.size(), expected.size());
                for (size_t j = 0; j < expected.size(); ++j)
                    QVERIFY2(std::abs(fit.coefficients[j] - expected[j]) <= 1e-10, qPrintable(QString::number(j)));
                QVERIFY(fit.reducedChiSquare < 1e-12);
                QCOMPARE(fit.covarianceScale, 1.0);
                QCOMPARE(int(std::count(fit.outlier.begin(), fit.outlier.end(), true)), 0);
                for (const double r : fit.residuals)
                    QVERIFY(std::abs(r) <= 1e-12);
            }
            // The model anywhere, beyond the circle included.
            const FieldValue far = evaluateFieldTerm(model, 0, circle.x + 150.0, circle.y - 20.0);
            QVERIFY(std::abs(far.value - fieldAt(kAstigmatic, circle, circle.x + 150.0, circle.y - 20.0)) <= 1e-10);
        }
    }

    void noisyFieldWithinItsSigmas()
    {
        const Circle circle;
        const auto samples = samplesOf({kAstigmatic, kTiltDefocus}, circle, 200, 2, 0.01, true);
        const FieldModel model = fitFieldModel(samples, optionsFor(circle, 2));
        for (size_t t = 0; t < 2; ++t) {
            const FieldTermFit& fit = model.terms[t];
            QCOMPARE(fit.order, 2);
            QVERIFY2(fit.reducedChiSquare >= 0.7 && fit.reducedChiSquare <= 1.3, qPrintable(QString::number(fit.reducedChiSquare)));
            QCOMPARE(fit.covarianceScale, std::max(1.0, fit.reducedChiSquare));
            const std::vector<double> expected = expectedCoefficients(t == 0 ? kAstigmatic : kTiltDefocus, 2);
            for (size_t j = 0; j < expected.size(); ++j) {
                const double sigma = std::sqrt(covarianceAt(fit, j, j));
                // About sigma / sqrt(200 / 6) with sigmas of 0.01 .. 0.02: a stated sigma far off that is wrong too.
                QVERIFY(sigma > 5e-4 && sigma < 5e-3);
                QVERIFY2(std::abs(fit.coefficients[j] - expected[j]) <= 4.0 * sigma,
                         qPrintable(QStringLiteral("term %1 coefficient %2: %3 vs %4 +- %5")
                                        .arg(t)
                                        .arg(j)
                                        .arg(fit.coefficients[j])
                                        .arg(expected[j])
                                        .arg(sigma)));
            }
        }
        // evaluateFieldTerm against g . c and sqrt(g^T C g) worked out here, at a point off the axes.
        const double x = circle.x + 37.0, y = circle.y - 61.0;
        const double u = 0.37, v = -0.61;
        const FieldTermFit& fit = model.terms[0];
        const std::vector<ZernikeMode> modes = fieldModes(2);
        std::vector<double> g;
        for (const ZernikeMode& mode : modes)
            g.push_back(zernike::evaluate(mode, ZernikeNormalization::Rms, std::hypot(u, v), std::atan2(v, u)));
        double value = 0.0, variance = 0.0;
        for (size_t r = 0; r < g.size(); ++r) {
            value += g[r] * fit.coefficients[r];
            for (size_t c = 0; c < g.size(); ++c)
                variance += g[r] * covarianceAt(fit, r, c) * g[c];
        }
        const FieldValue at = evaluateFieldTerm(model, 0, x, y);
        QVERIFY(closeTo(at.value, value, 1e-12, 1e-15));
        QVERIFY(closeTo(at.sigma, std::sqrt(variance), 1e-10));
        // And the model is within 4 of its sigmas of the true field there.
        QVERIFY(std::abs(at.value - fieldAt(kAstigmatic, circle, x, y)) <= 4.0 * at.sigma);
    }

    void choosesTheOrder()
    {
        const Circle circle;
        const Field constant{{{0, 0}, 0.1}};
        const Field linear{{{1, 1}, 0.05}, {{1, -1}, -0.03}}; // coma-like: a tilt across the field
        const Field quadratic{{{2, 0}, 0.04}};
        auto samples = samplesOf({constant, linear, quadratic}, circle, 150, 3, 0.01, true);
        FieldModel model = fitFieldModel(samples, optionsFor(circle, -1));
        QCOMPARE(model.terms[0].order, 0);
        QCOMPARE(model.terms[1].order, 1);
        QCOMPARE(model.terms[2].order, 2);
        for (const FieldTermFit& fit : model.terms)
            QCOMPARE(int(std::count(fit.outlier.begin(), fit.outlier.end(), true)), 0);

        // One wild bead on the linear field: rejected, and the order stays 1 (it is chosen again after the rejection).
        samples[17].values[1] += 1.0;
        model = fitFieldModel(samples, optionsFor(circle, -1));
        QCOMPARE(model.terms[1].order, 1);
        QVERIFY(model.terms[1].outlier[17]);
        QCOMPARE(model.terms[1].kept, 149);
        QVERIFY(!model.terms[0].outlier[17]); // per term: the bead's other values stay
        // Without rejection it would have pulled the fit (here: to a higher order or a larger chi^2).
        FieldModelOptions noClip = optionsFor(circle, -1);
        noClip.maxClipRounds = 0;
        const FieldTermFit pulled = fitFieldModel(samples, noClip).terms[1];
        QCOMPARE(pulled.kept, 150);
        QVERIFY(pulled.reducedChiSquare > 10.0 * model.terms[1].reducedChiSquare);
    }

    void flagsOutliersExactly()
    {
        const Circle circle;
        const auto clean = samplesOf({kAstigmatic}, circle, 200, 4, 0.01, true);
        std::vector<FieldSample> dirty = clean, kept;
        std::vector<bool> expected(dirty.size(), false);
        for (size_t i = 0; i < dirty.size(); ++i) {
            if (i % 20 == 7) { // 5 %: 10 samples, 50 sigma off either way
                dirty[i].values[0] += (i % 40 == 7 ? 50.0 : -50.0) * dirty[i].sigmas[0];
                expected[i] = true;
            } else {
                kept.push_back(clean[i]);
            }
        }
        for (const int order : {2, -1}) {
            const FieldTermFit fit = fitFieldModel(dirty, optionsFor(circle, order)).terms[0];
            QCOMPARE(fit.outlier, expected);
            QCOMPARE(fit.kept, 190);
            // The fit of the clean samples alone, which itself rejects nothing.
            const FieldTermFit reference = fitFieldModel(kept, optionsFor(circle, order)).terms[0];
            QCOMPARE(int(std::count(reference.outlier.begin(), reference.outlier.end(), true)), 0);
            QCOMPARE(fit.order, reference.order);
            for (size_t j = 0; j < fit.coefficients.size(); ++j)
                QVERIFY(closeTo(fit.coefficients[j], reference.coefficients[j], 1e-9, 1e-12));
            QVERIFY(closeTo(fit.reducedChiSquare, reference.reducedChiSquare, 1e-9));
            // Outliers keep their residuals (about the offset).
            for (size_t i = 0; i < dirty.size(); ++i)
                if (expected[i])
                    QVERIFY(std::abs(fit.residuals[i]) > 40.0 * dirty[i].sigmas[0]);
        }
    }

    void understatedSigmasWidenTheModel()
    {
        // The scatter is 3 times the stated sigmas: the robust scale follows it, so the 50-sigma beads (of the real
        // scatter) are rejected but not the good beads beyond 4 stated sigmas; the reduced chi^2 (about 9) widens the
        // covariance, and the coefficients stay within 4 of the widened sigmas.
        const Circle circle;
        auto samples = samplesOf({kAstigmatic}, circle, 200, 8, 0.03, true);
        std::vector<bool> expected(samples.size(), false);
        for (size_t i = 0; i < samples.size(); ++i) {
            samples[i].sigmas[0] /= 3.0;
            if (i % 20 == 11) {
                samples[i].values[0] += 150.0 * samples[i].sigmas[0];
                expected[i] = true;
            }
        }
        const FieldTermFit fit = fitFieldModel(samples, optionsFor(circle, 2)).terms[0];
        // Every wild bead out; of the good ones at most 2 (a bead beyond about 3.5 real sigmas may go, as the median
        // wanders), where a scale held at the stated sigmas would reject a third of them.
        int goodRejected = 0;
        for (size_t i = 0; i < samples.size(); ++i) {
            if (expected[i])
                QVERIFY(fit.outlier[i]);
            else
                goodRejected += fit.outlier[i] ? 1 : 0;
        }
        QVERIFY2(goodRejected <= 2, qPrintable(QString::number(goodRejected)));
        QVERIFY2(fit.reducedChiSquare > 6.0 && fit.reducedChiSquare < 12.0, qPrintable(QString::number(fit.reducedChiSquare)));
        QCOMPARE(fit.covarianceScale, fit.reducedChiSquare);
        const std::vector<double> truth = expectedCoefficients(kAstigmatic, 2);
        for (size_t j = 0; j < truth.size(); ++j)
            QVERIFY(std::abs(fit.coefficients[j] - truth[j]) <= 4.0 * std::sqrt(covarianceAt(fit, j, j)));
    }

    void oneSampleIsItsOwnModel()
    {
        const Circle circle;
        const FieldSample one{530.0, 300.0, {0.25, -0.5}, {0.02, kNan}};
        for (const int order : {-1, 0, 3}) {
            const FieldModel model = fitFieldModel({one}, optionsFor(circle, order));
            for (int t = 0; t < 2; ++t) {
                const FieldTermFit& fit = model.terms[size_t(t)];
                QCOMPARE(fit.order, 0);
                QCOMPARE(fit.coefficients.size(), size_t(1));
                QCOMPARE(fit.reducedChiSquare, 0.0);
                QCOMPARE(fit.covarianceScale, 1.0);
                QCOMPARE(fit.outlier, std::vector<bool>{false});
                const double sigma = t == 0 ? 0.02 : 1.0; // no known sigma for the second term: 1
                QVERIFY(closeTo(covarianceAt(fit, 0, 0), sigma * sigma, 1e-12));
                for (const auto& [x, y] : {std::pair{0.0, 0.0}, std::pair{530.0, 300.0}, std::pair{2000.0, -900.0}}) {
                    const FieldValue at = evaluateFieldTerm(model, t, x, y);
                    QVERIFY(std::abs(at.value - one.values[size_t(t)]) <= 1e-12);
                    QVERIFY(closeTo(at.sigma, sigma, 1e-12));
                }
            }
        }
    }

    void orderLimitedBySamples()
    {
        const Circle circle;
        // Order 2 has 6 coefficients: with 5 samples a fixed order 2 falls to order 1; with 6 it is exact.
        auto samples = samplesOf({kAstigmatic}, circle, 6, 5, 0.01, true);
        FieldTermFit fit = fitFieldModel(samples, optionsFor(circle, 2)).terms[0];
        QCOMPARE(fit.order, 2);
        QCOMPARE(fit.reducedChiSquare, 0.0);
        for (const double r : fit.residuals)
            QVERIFY(std::abs(r) <= 1e-10);
        // The automatic choice keeps a degree of freedom: fewer coefficients than samples, so at most order 1.
        QVERIFY(fitFieldModel(samples, optionsFor(circle, -1)).terms[0].order <= 1);
        samples.pop_back();
        fit = fitFieldModel(samples, optionsFor(circle, 2)).terms[0];
        QCOMPARE(fit.order, 1);
        QCOMPARE(fit.coefficients.size(), size_t(3));
    }

    void rejectionKeepsEnoughSamples()
    {
        // A threshold far below the scatter would reject nearly every bead: the rejection that would leave fewer beads
        // than the fit's coefficients is not made, so the requested order stays and every number stays finite.
        const Circle circle;
        const auto samples = samplesOf({kTiltDefocus}, circle, 10, 9, 0.01, true);
        for (const double clip : {0.01, 0.3}) {
            for (const int order : {1, -1}) {
                FieldModelOptions options = optionsFor(circle, order);
                options.clipSigma = clip;
                const FieldTermFit fit = fitFieldModel(samples, options).terms[0];
                QVERIFY(fit.kept >= int(fit.coefficients.size()));
                QCOMPARE(fit.kept, int(std::count(fit.outlier.begin(), fit.outlier.end(), false)));
                if (order == 1)
                    QCOMPARE(fit.order, 1);
                QVERIFY(std::all_of(fit.coefficients.begin(), fit.coefficients.end(), [](double c) { return std::isfinite(c); }));
                QVERIFY(std::all_of(fit.covariance.begin(), fit.covariance.end(), [](double c) { return std::isfinite(c); }));
            }
        }
    }

    void unknownSigmasTakeTheMedian()
    {
        const Circle circle;
        auto samples = samplesOf({kAstigmatic, kTiltDefocus}, circle, 30, 6, 0.01, true);
        const double unknown[] = {kNan, kInf, 0.0, -1.0};
        std::vector<FieldSample> explicitSigmas = samples;
        for (size_t t = 0; t < 2; ++t) {
            // Different beads unknown per term, so each term has its own median.
            for (size_t i = t; i < samples.size(); i += 3)
                samples[i].sigmas[t] = unknown[(i / 3) % 4];
            std::vector<double> known;
            for (const FieldSample& s : samples)
                if (std::isfinite(s.sigmas[t]) && s.sigmas[t] > 0.0)
                    known.push_back(s.sigmas[t]);
            std::sort(known.begin(), known.end());
            const size_t n = known.size();
            const double median = n % 2 ? known[n / 2] : 0.5 * (known[n / 2 - 1] + known[n / 2]);
            for (size_t i = t; i < samples.size(); i += 3)
                explicitSigmas[i].sigmas[t] = median;
        }
        compareFits(fitFieldModel(samples, optionsFor(circle, 2)), fitFieldModel(explicitSigmas, optionsFor(circle, 2)));

        // No sigma known at all: every weight 1.
        std::vector<FieldSample> none = samples, ones = samples;
        for (size_t i = 0; i < samples.size(); ++i) {
            none[i].sigmas = {kNan, -2.0};
            ones[i].sigmas = {1.0, 1.0};
        }
        compareFits(fitFieldModel(none, optionsFor(circle, 2)), fitFieldModel(ones, optionsFor(circle, 2)));
    }

    void beadsOnALine()
    {
        // Every bead on the field's horizontal diameter: Z(1,-1) (2 y) is zero at all of them, so the positions cannot
        // determine it; it is left at zero, the rest is fitted and the uncertainties stay finite.
        const Circle circle;
        const Field field{{{0, 0}, 0.1}, {{1, 1}, 0.05}};
        std::vector<FieldSample> samples;
        for (int i = 0; i < 9; ++i) {
            const double x = circle.x - 80.0 + 20.0 * i;
            samples.push_back({x, circle.y, {fieldAt(field, circle, x, circle.y)}, {0.01}});
        }
        const FieldTermFit fit = fitFieldModel(samples, optionsFor(circle, 1)).terms[0];
        QCOMPARE(fit.order, 1);
        QCOMPARE(fit.rank, 2);
        QVERIFY(std::abs(fit.coefficients[0] - 0.1) <= 1e-12);
        QVERIFY(std::abs(fit.coefficients[1] - 0.05) <= 1e-12);
        QVERIFY(std::abs(fit.coefficients[2]) <= 1e-12);
        QVERIFY(std::all_of(fit.covariance.begin(), fit.covariance.end(), [](double c) { return std::isfinite(c); }));
        QVERIFY(std::abs(covarianceAt(fit, 2, 2)) <= 1e-12);
    }

    void refusesBadInput()
    {
        const Circle circle;
        const auto samples = samplesOf({kAstigmatic}, circle, 10, 7, 0.01, true);
        const FieldModelOptions options = optionsFor(circle, 2);
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, fitFieldModel({}, options));
        for (const double radius : {0.0, -5.0, kNan, kInf}) {
            FieldModelOptions bad = options;
            bad.radius = radius;
            QVERIFY_THROWS_EXCEPTION(std::invalid_argument, fitFieldModel(samples, bad));
        }
        for (const int order : {-2, zernike::kMaxOrder + 1}) {
            FieldModelOptions bad = options;
            bad.order = order;
            QVERIFY_THROWS_EXCEPTION(std::invalid_argument, fitFieldModel(samples, bad));
        }
        FieldModelOptions badMax = optionsFor(circle, -1);
        badMax.maxOrder = -1;
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, fitFieldModel(samples, badMax));
        FieldModelOptions badClip = options;
        badClip.clipSigma = 0.0;
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, fitFieldModel(samples, badClip));

        auto broken = samples;
        broken[3].values.push_back(0.0); // one value more than the others
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, fitFieldModel(broken, options));
        broken = samples;
        broken[3].sigmas.clear(); // sigmas not one per value
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, fitFieldModel(broken, options));
        broken = samples;
        broken[5].x = kNan;
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, fitFieldModel(broken, options));
        broken = samples;
        broken[5].values[0] = kInf;
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, fitFieldModel(broken, options));

        const FieldModel model = fitFieldModel(samples, options);
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, evaluateFieldTerm(model, 1, 0.0, 0.0));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, evaluateFieldTerm(model, -1, 0.0, 0.0));
    }

private:
    // Two fits that must be the same: the same orders, coefficients, covariances and verdicts.
    static void compareFits(const FieldModel& a, const FieldModel& b)
    {
        QCOMPARE(a.terms.size(), b.terms.size());
        for (size_t t = 0; t < a.terms.size(); ++t) {
            const FieldTermFit &x = a.terms[t], &y = b.terms[t];
            QCOMPARE(x.order, y.order);
            QCOMPARE(x.outlier, y.outlier);
            for (size_t j = 0; j < x.coefficients.size(); ++j)
                QVERIFY(closeTo(x.coefficients[j], y.coefficients[j], 1e-12, 1e-15));
            for (size_t j = 0; j < x.covariance.size(); ++j)
                QVERIFY(closeTo(x.covariance[j], y.covariance[j], 1e-12, 1e-18));
            QVERIFY(closeTo(x.reducedChiSquare, y.reducedChiSquare, 1e-12));
        }
    }
};

QTEST_GUILESS_MAIN(TestFieldModel)
#include "tst_fieldmodel.moc"
