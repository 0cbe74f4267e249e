// The pupil function's terms against exact values: the zonal phase's projector (piston off for --pupil-phase
// zonal, the whole Zernike span off for both), the smoothness prior's value for a field of known gradient
// (exactly on the lattice, and against the continuum's (w / 2) integral of |grad v|^2) and its gradient, the
// zonal amplitude's held mean, and the defocus scale and offsets as the model of planes moved by that much.
#include "TestSupport.h"

#include "optics/CpuModel.h"

#include <Eigen/QR>

#include <memory>
#include <random>

using namespace wfs;

namespace {

ProblemSpec zonalSpec(int grid, double samplingQ, PupilPhaseModel phase)
{
    ProblemSpec s;
    s.grid = PupilGrid::centred(grid, samplingQ);
    s.basis.maxOrder = 4;
    s.phaseModel = phase;
    s.regularization = 2.5;
    s.planes.resize(2);
    s.planes[1].diversity.kind = DiversityKind::ZernikeDefocus;
    s.planes[1].diversity.defocusWaves = 1.0;
    return s;
}

std::vector<double> randomValues(size_t count, unsigned seed)
{
    std::mt19937_64 rng(seed);
    std::normal_distribution<double> normal(0.0, 0.4);
    std::vector<double> v(count);
    for (double& x : v)
        x = normal(rng);
    return v;
}

std::vector<std::vector<double>> modelImages(const std::shared_ptr<const Problem>& problem, const std::vector<double>& x)
{
    EvaluatorOptions options;
    options.measurePlans = false;
    return makeCpuEvaluator(problem, options)->modelImages(x.data());
}

} // namespace

class TestPupilTerms : public QObject {
    Q_OBJECT

private slots:
    // Zonal only: the phase is the values less their mean (piston does nothing). Both: the zonal part is orthogonal to
    // every Zernike term of the basis, and what was taken off lies in their span. Rounding only: 1e-10 of the norms.
    void zonalPhaseProjectors()
    {
        const Problem zonal(zonalSpec(32, 2.0, PupilPhaseModel::Zonal));
        ModelParameters p = zonal.unpack(zonal.initialParameters().data());
        p.zonalPhase = randomValues(size_t(zonal.pupilPixelCount()), 1);
        const Eigen::VectorXd z = zonal.zonalPhase(p);
        double mean = 0.0;
        for (double v : p.zonalPhase)
            mean += v / double(p.zonalPhase.size());
        for (Eigen::Index i = 0; i < z.size(); ++i)
            WFS_VERIFY_CLOSE(z[i], p.zonalPhase[size_t(i)] - mean, 0.0, 1e-12);

        const Problem both(zonalSpec(32, 2.0, PupilPhaseModel::Both));
        ModelParameters q = both.unpack(both.initialParameters().data());
        q.zonalPhase = randomValues(size_t(both.pupilPixelCount()), 2);
        const Eigen::VectorXd remainder = both.zonalPhase(q);
        const Eigen::Map<const Eigen::VectorXd> original(q.zonalPhase.data(), Eigen::Index(q.zonalPhase.size()));
        const Eigen::MatrixXd& basis = both.basis();
        QCOMPARE(basis.cols(), Eigen::Index(15)); // Noll 1..15: order 4
        for (Eigen::Index t = 0; t < basis.cols(); ++t)
            WFS_VERIFY_CLOSE(basis.col(t).dot(remainder), 0.0, 0.0, 1e-10 * basis.col(t).norm() * original.norm());
        const Eigen::VectorXd removed = original - remainder;
        const Eigen::VectorXd fit = basis * basis.colPivHouseholderQr().solve(removed);
        QVERIFY2((removed - fit).norm() <= 1e-10 * original.norm(), qPrintable(QString::number((removed - fit).norm())));
        QVERIFY(remainder.norm() > 0.5 * original.norm()); // random values are mostly not Zernike terms of order <= 4
    }

    // The prior of a zonal phase with a constant gradient v = a x: each horizontal pair of pupil neighbours differs by
    // a x spacing, each vertical pair not at all, so R = (w / 2) pairs (a spacing)^2, the pairs counted here from the
    // pupil's samples (rounding: 1e-12). And R approximates (w / 2) a^2 pi, the integral of |grad v|^2 over the unit
    // disc: 3 % at 64 samples across (each of the 2 / spacing rows loses about one pair at the rim, 2 spacing / pi of
    // the pairs: 2 %).
    void smoothnessPriorOfAKnownGradient()
    {
        const ProblemSpec spec = zonalSpec(128, 2.0, PupilPhaseModel::Zonal);
        const Problem problem(spec);
        const double a = 0.7, w = spec.regularization, spacing = spec.grid.spacing;
        ModelParameters p = problem.unpack(problem.initialParameters().data());
        for (int i = 0; i < problem.pupilPixelCount(); ++i)
            p.zonalPhase[size_t(i)] = a * problem.pupilX()[size_t(i)];
        int pairs = 0;
        const int n = spec.grid.size;
        for (int row = 0; row < n; ++row)
            for (int col = 0; col + 1 < n; ++col)
                pairs += spec.pupil.transmission(spec.grid.x(row, col), spec.grid.y(row, col)) > 0.0
                         && spec.pupil.transmission(spec.grid.x(row, col + 1), spec.grid.y(row, col + 1)) > 0.0;
        const double value = problem.regularization(p, nullptr);
        qInfo("prior %.6f: lattice %.6f, continuum %.6f (%d horizontal pairs)", value, 0.5 * w * pairs * a * a * spacing * spacing,
              0.5 * w * a * a * M_PI, pairs);
        WFS_VERIFY_CLOSE(value, 0.5 * w * pairs * std::pow(a * spacing, 2), 1e-12, 0.0);
        WFS_VERIFY_CLOSE(value, 0.5 * w * a * a * M_PI, 0.03, 0.0);
    }

    // The prior is quadratic, so central differences of its value are exact up to rounding: its gradient against them
    // (1e-7 relative, 1e-9 absolute), on the zonal phase with both projectors and on the zonal log-amplitude.
    void smoothnessPriorGradient()
    {
        for (const PupilPhaseModel model : {PupilPhaseModel::Zonal, PupilPhaseModel::Both}) {
            ProblemSpec spec = zonalSpec(32, 2.0, model);
            spec.amplitudeModel = PupilAmplitudeModel::Zonal;
            const Problem problem(spec);
            ModelParameters p = problem.unpack(problem.initialParameters().data());
            p.zonalPhase = randomValues(size_t(problem.pupilPixelCount()), 3);
            p.zonalAmplitude = randomValues(size_t(problem.pupilPixelCount()), 4);
            ModelParameters grad = problem.zeroLike();
            problem.regularization(p, &grad);
            for (int i = 0; i < problem.pupilPixelCount(); i += 7) {
                for (std::vector<double> ModelParameters::*values : {&ModelParameters::zonalPhase, &ModelParameters::zonalAmplitude}) {
                    const double h = 1e-4;
                    ModelParameters up = p, down = p;
                    (up.*values)[size_t(i)] += h;
                    (down.*values)[size_t(i)] -= h;
                    const double numeric = (problem.regularization(up, nullptr) - problem.regularization(down, nullptr)) / (2 * h);
                    WFS_VERIFY_CLOSE((grad.*values)[size_t(i)], numeric, 1e-7, 1e-9);
                }
            }
        }
    }

    // The zonal amplitude is transmission x exp(v - mean v): a common shift of v changes nothing (that factor is the
    // planes' flux), and the values are exact (1e-12).
    void zonalAmplitudeHoldsItsMean()
    {
        ProblemSpec spec = zonalSpec(32, 2.0, PupilPhaseModel::Zernike);
        spec.amplitudeModel = PupilAmplitudeModel::Zonal;
        const Problem problem(spec);
        ModelParameters p = problem.unpack(problem.initialParameters().data());
        p.zonalAmplitude = randomValues(size_t(problem.pupilPixelCount()), 5);
        double mean = 0.0;
        for (double v : p.zonalAmplitude)
            mean += v / double(p.zonalAmplitude.size());
        const std::vector<double> amplitude = problem.pupilAmplitude(p);
        for (size_t i = 0; i < amplitude.size(); ++i)
            WFS_VERIFY_CLOSE(amplitude[i], problem.transmission()[i] * std::exp(p.zonalAmplitude[i] - mean), 1e-12, 0.0);
        for (double& v : p.zonalAmplitude)
            v += 0.7;
        const std::vector<double> shifted = problem.pupilAmplitude(p);
        for (size_t i = 0; i < amplitude.size(); ++i)
            WFS_VERIFY_CLOSE(shifted[i], amplitude[i], 1e-12, 0.0);
    }

    // Plane k's defocus is scale x amount_k + offset_k: the model with a scale of 1.1 and an offset of 0.2 um on the
    // free plane is the model of a problem whose planes sit at those distances, without nuisance parameters (FFT
    // rounding: 1e-10 of the peak).
    void defocusScaleAndOffsetsMoveThePlanes()
    {
        ProblemSpec spec;
        spec.grid = PupilGrid::centred(32, 3.0);
        spec.basis.maxOrder = 3;
        spec.basis.start = {0.0, 0.0, 0.0, 0.2, 0.3, -0.1};
        spec.wavelength = 600e-9;
        const double distances[] = {-1e-6, 0.0, 1e-6, 0.5e-6};
        for (double z : distances) {
            PlaneSpec plane;
            plane.diversity.kind = DiversityKind::AxialParaxial;
            plane.diversity.axialDistance = z;
            plane.diversity.numericalAperture = 0.5;
            spec.planes.push_back(plane);
        }
        ProblemSpec fitted = spec;
        fitted.nuisance.fitDefocusScale = true;
        fitted.nuisance.fitDefocusOffsets = true;
        const auto problem = std::make_shared<const Problem>(fitted);
        const double scale = 1.1, offset = 0.2e-6;
        std::vector<double> x = problem->initialParameters();
        int offsets = 0;
        for (size_t i = 0; i < x.size(); ++i) {
            const ParameterInfo& info = problem->parameters()[i];
            if (info.kind == ParameterKind::DefocusScale)
                x[i] = scale;
            if (info.kind == ParameterKind::DefocusOffset) {
                QCOMPARE(info.index, 3); // plane 1 is the reference, planes 0 and 2 the outermost
                x[i] = offset;
                ++offsets;
            }
        }
        QCOMPARE(offsets, 1);
        const ModelParameters p = problem->unpack(x.data());
        WFS_VERIFY_CLOSE(problem->defocusAmountChange(p, 3), (scale - 1.0) * 0.5e-6 + offset, 1e-12, 0.0);
        WFS_VERIFY_CLOSE(problem->defocusAmountChange(p, 0), (scale - 1.0) * -1e-6, 1e-12, 0.0);

        ProblemSpec moved = spec;
        for (size_t k = 0; k < moved.planes.size(); ++k)
            moved.planes[k].diversity.axialDistance = scale * distances[k] + (k == 3 ? offset : 0.0);
        const auto reference = std::make_shared<const Problem>(moved);
        const auto expected = modelImages(reference, reference->initialParameters());
        const auto images = modelImages(problem, x);
        for (size_t k = 0; k < images.size(); ++k) {
            const double peak = *std::max_element(expected[k].begin(), expected[k].end());
            for (size_t i = 0; i < images[k].size(); ++i)
                WFS_VERIFY_CLOSE(images[k][i], expected[k][i], 0.0, 1e-10 * peak);
        }
    }
};

QTEST_GUILESS_MAIN(TestPupilTerms)
#include "tst_pupilterms.moc"
