// The unwrapping of a fitted zonal phase (optics/PhaseUnwrap.h) on exact cases: a smooth phase of several waves with
// whole waves added to blocks of zonal values comes back smooth, with the same field exp(i phase) (whole waves moved)
// and a lower smoothness prior, and with the zonal-only model as the smooth phase itself (to rounding, up to piston); a phase without jumps, a Zernike-only problem and fixed
// Zernike terms that would have to move give nothing.
#include "TestSupport.h"

#include "optics/PhaseUnwrap.h"

#include <Eigen/QR>

#include <cmath>

using namespace wfs;

namespace {

ProblemSpec zonalSpec(PupilPhaseModel phase)
{
    ProblemSpec s;
    s.grid = PupilGrid::centred(128, 2.0); // 32 pixels across the pupil radius
    s.basis.maxOrder = 4;
    s.phaseModel = phase;
    s.regularization = 1.0;
    s.planes.resize(2);
    s.planes[1].diversity.kind = DiversityKind::ZernikeDefocus;
    s.planes[1].diversity.defocusWaves = 1.0;
    return s;
}

// A smooth phase of about 3 waves peak-to-valley that no Zernike term of order 4 holds: 0.8 r^5 cos(5 theta) + 1.5 r
// (under a quarter wave between neighbours).
std::vector<double> smoothZonal(const Problem& problem)
{
    std::vector<double> z(size_t(problem.pupilPixelCount()));
    for (size_t i = 0; i < z.size(); ++i) {
        const double x = problem.pupilX()[i], y = problem.pupilY()[i];
        const double r = std::hypot(x, y), theta = std::atan2(y, x);
        z[i] = 2.0 * M_PI * (0.8 * std::pow(r, 5) * std::cos(5.0 * theta) + 1.5 * r);
    }
    return z;
}

double largestNeighbourStep(const Problem& problem, const Eigen::VectorXd& phase)
{
    double step = 0.0;
    for (const auto& [a, b] : problem.neighbourPairs())
        step = std::max(step, std::abs(phase[a] - phase[b]));
    return step;
}

} // namespace

class TestPhaseUnwrap : public QObject {
    Q_OBJECT

private slots:
    void wholeWavesComeOut_data()
    {
        QTest::addColumn<int>("model");
        QTest::newRow("zonal") << int(PupilPhaseModel::Zonal);
        QTest::newRow("both") << int(PupilPhaseModel::Both);
    }

    void wholeWavesComeOut()
    {
        QFETCH(int, model);
        const Problem problem(zonalSpec(PupilPhaseModel(model)));
        ModelParameters p = problem.unpack(problem.initialParameters().data());
        p.zonalPhase = smoothZonal(problem);
        std::vector<double> smooth(size_t(problem.parameterCount()));
        problem.pack(p, smooth.data());
        const Eigen::VectorXd truth = problem.pupilPhase(problem.unpack(smooth.data()));
        QVERIFY2(largestNeighbourStep(problem, truth) < M_PI / 2, "the smooth case must be well sampled");
        QVERIFY(!unwrappedPupilPhase(problem, smooth)); // nothing to do

        // +2 waves right of x = 0.3, -1 wave below y = -0.4, on the phase itself: the zonal values take the jumps, and
        // with both models the Zernike terms take back the part of them the zonal projector removes.
        const ModelParameters smoothParameters = p;
        Eigen::VectorXd jumps(problem.pupilPixelCount());
        for (Eigen::Index i = 0; i < jumps.size(); ++i) {
            jumps[i] = (problem.pupilX()[size_t(i)] > 0.3 ? 2 * 2.0 * M_PI : 0.0) - (problem.pupilY()[size_t(i)] < -0.4 ? 2.0 * M_PI : 0.0);
            p.zonalPhase[size_t(i)] += jumps[i];
        }
        if (PupilPhaseModel(model) == PupilPhaseModel::Both) {
            const Eigen::VectorXd inSpan = jumps - (problem.zonalPhase(p) - problem.zonalPhase(smoothParameters));
            const Eigen::VectorXd terms = problem.basis().colPivHouseholderQr().solve(inSpan);
            for (Eigen::Index k = 1; k < terms.size(); ++k) // piston changes nothing
                p.zernike[size_t(k)] += terms[k];
        }
        std::vector<double> jumped(size_t(problem.parameterCount()));
        problem.pack(p, jumped.data());
        const Eigen::VectorXd before = problem.pupilPhase(problem.unpack(jumped.data()));
        QVERIFY(largestNeighbourStep(problem, before) > 1.5 * M_PI);

        const auto unwrapped = unwrappedPupilPhase(problem, jumped);
        QVERIFY(unwrapped);
        const Eigen::VectorXd after = problem.pupilPhase(problem.unpack(unwrapped->data()));
        QVERIFY2(largestNeighbourStep(problem, after) < M_PI / 2, qPrintable(QString::number(largestNeighbourStep(problem, after))));
        // The same field: the phase moved by whole waves only (up to piston, which the zonal-only model takes off).
        for (Eigen::Index i = 0; i < after.size(); ++i) {
            const double d = ((after[i] - before[i]) - (after[0] - before[0])) / (2.0 * M_PI);
            QVERIFY2(std::abs(d - std::round(d)) < 1e-9, qPrintable(QString::number(d)));
        }
        Eigen::VectorXd fromTruth = after - truth; // the smooth phase itself, up to piston
        fromTruth.array() -= fromTruth.mean();
        QVERIFY2(fromTruth.cwiseAbs().maxCoeff() < 1e-9, qPrintable(QString::number(fromTruth.cwiseAbs().maxCoeff())));
        // The prior: the smooth map's again, far below the jumped one's.
        const double prior = problem.regularization(problem.unpack(unwrapped->data()), nullptr);
        QVERIFY2(std::abs(prior - problem.regularization(problem.unpack(smooth.data()), nullptr)) <= 1e-9 * prior,
                 qPrintable(QString::number(prior)));
        QVERIFY(prior < 0.5 * problem.regularization(problem.unpack(jumped.data()), nullptr));
    }

    void nothingWithoutAZonalPhase()
    {
        const Problem problem(zonalSpec(PupilPhaseModel::Zernike));
        QVERIFY(!unwrappedPupilPhase(problem, problem.initialParameters()));
    }

    void fixedTermsThatWouldMoveGiveNothing()
    {
        // Both: part of a jump lies in the Zernike span, and a fixed term cannot take its share.
        ProblemSpec spec = zonalSpec(PupilPhaseModel::Both);
        spec.basis.fixedTerms = {2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
        const Problem problem(spec);
        ModelParameters p = problem.unpack(problem.initialParameters().data());
        for (size_t i = 0; i < p.zonalPhase.size(); ++i)
            p.zonalPhase[i] = problem.pupilX()[i] > 0.3 ? 2.0 * M_PI : 0.0;
        std::vector<double> jumped(size_t(problem.parameterCount()));
        problem.pack(p, jumped.data());
        QVERIFY(!unwrappedPupilPhase(problem, jumped));
    }
};

QTEST_GUILESS_MAIN(TestPhaseUnwrap)
#include "tst_phaseunwrap.moc"
