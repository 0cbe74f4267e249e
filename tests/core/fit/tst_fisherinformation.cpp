// The uncertainties' curvature (fit/Uncertainty.h): the Fisher information J^T C J from forward differences of the
// model images, the default, against the Hessian from central differences of the gradient (the curvature every
// earlier release reported), at the end of a converged fit.
//
// Tolerance: each parameter's sigma within 1 % of the Hessian's on the demo, vectorial and pupil presets (the issue's
// bar: "the uncertainties equal today's to 1 %"; measured 0.19, 0.26 and 0.12 %), and within 4 % on the rich problem's
// small noisy cases (32 x 32 data; measured up to 3.0 %, weighted least squares with 10 counts of read noise), where
// the Hessian's residual terms (zero on average, the Fisher information's only difference) are larger. Their zonal
// case has a strong smoothness prior (weight 300), whose curvature both must include: without it tilt's sigma
// differs by 12 %.
#include "TestSupport.h"

#include "engine/BackendFactory.h"
#include "engine/Presets.h"
#include "engine/ReconstructionEngine.h"
#include "fit/Uncertainty.h"

#include <random>

using namespace wfs;

namespace {

struct Converged {
    std::shared_ptr<const Problem> problem;
    std::vector<double> parameters;
    double cost = 0.0;
};

// Fits `spec` from `start` to convergence (no uncertainties), as the engine does.
Converged converge(const ProblemSpec& spec, const std::vector<double>& start, const SolverOptions& solver)
{
    ReconstructionRequest request;
    request.spec = spec;
    request.start = start;
    request.solver = solver;
    request.evaluator.measurePlans = false;
    request.analysis.computeUncertainty = false;
    const FitResult r = reconstruct(request, {}, nullptr);
    if (r.solver.termination != Termination::Converged && r.solver.termination != Termination::Stalled)
        qFatal("the fit did not converge: %s", r.solver.message.c_str());
    return {std::make_shared<const Problem>(spec), r.solver.parameters, r.solver.finalCost};
}

// Every parameter's sigma by both curvatures; fails naming the first that differ by more than `tolerance`.
void compareCurvatures(const Converged& c, double tolerance)
{
    EvaluatorOptions options;
    options.measurePlans = false;
    const auto evaluator = makeEvaluator(BackendKind::Cpu, c.problem, options, GradientKind::Adjoint);
    QCOMPARE(resolvedCurvatureMethod(*c.problem, CurvatureMethod::Automatic), CurvatureMethod::FisherInformation);
    const std::vector<double> fisher = estimateUncertainty(*evaluator, c.parameters, c.cost, CurvatureMethod::Automatic);
    const std::vector<double> hessian = estimateUncertainty(*evaluator, c.parameters, c.cost, CurvatureMethod::GradientDifferences);
    QCOMPARE(fisher.size(), hessian.size());
    double largest = 0.0;
    int compared = 0;
    for (size_t i = 0; i < fisher.size(); ++i) {
        const QString label = QString::fromStdString(c.problem->parameters()[i].label);
        QVERIFY2(std::isnan(fisher[i]) == std::isnan(hessian[i]),
                 qPrintable(label + QStringLiteral(": Fisher %1, Hessian %2").arg(fisher[i]).arg(hessian[i])));
        if (std::isnan(hessian[i]))
            continue;
        ++compared;
        const double difference = std::abs(fisher[i] / hessian[i] - 1.0);
        largest = std::max(largest, difference);
        QVERIFY2(difference <= tolerance, qPrintable(label
                                                     + QStringLiteral(": sigma %1 from the Fisher information, %2 from the Hessian (%3 %)")
                                                           .arg(fisher[i], 0, 'g', 6)
                                                           .arg(hessian[i], 0, 'g', 6)
                                                           .arg(100.0 * difference, 0, 'f', 3)));
    }
    QVERIFY2(compared > 0, "no parameter had an uncertainty");
    qInfo("%d sigmas, largest difference %.3f %%", compared, 100.0 * largest);
}

enum Variant { Plain, Formation, DefocusParameters, ZonalPupil };

// The rich problem (every parameter kind) with data simulated at its start values, with each objective's noise:
// Gaussian (sigma 6 counts) for least squares, photons and read noise (10 counts for weighted least squares) else.
ProblemSpec simulatedRichSpec(ObjectiveKind objective, Variant variant)
{
    // The zonal pupil on a 32 grid, so that its pupil pixels (below 400 parameters) get uncertainties of their own and
    // the smoothness prior's curvature enters.
    const int grid = variant == ZonalPupil ? 32 : 64, side = variant == ZonalPupil ? 28 : 32;
    ProblemSpec s = richProblemSpec(objective, grid, 4);
    // Parameters the data cannot tell apart have no uncertainty by either curvature: the illumination's amplitude
    // and the planes' fluxes are one scale, and shifts of every plane are the tip and tilt terms.
    s.pupil.illumination.fitAmplitude = false;
    s.planes[0].fitShift = false;
    if (variant == Formation) {
        s.spectrum.bandwidth = 0.1 * s.wavelength;
        s.spectrum.samples = 3;
        s.detector.pixelIntegration = true;
    }
    if (variant == DefocusParameters) {
        s.nuisance.fitDefocusScale = true;
        s.nuisance.fitDefocusOffsets = true;
        s.planes.push_back(s.planes[1]); // a fourth plane, so that one offset is free besides the held ones
        s.planes.back().diversity.axialDistance = 0.1e-6;
    }
    if (variant == ZonalPupil) {
        s.pupil.illumination = Illumination{};
        s.phaseModel = PupilPhaseModel::Both;
        s.amplitudeModel = PupilAmplitudeModel::Zonal;
        s.regularization = 300.0;
    }
    const std::vector<double> truth = Problem(s).initialParameters();
    std::mt19937_64 rng(23);
    std::vector<Image> images;
    if (objective == ObjectiveKind::LeastSquares) {
        images = simulateImages(s, truth, side, side, {}, nullptr);
        std::normal_distribution<double> noise(0.0, 6.0);
        for (Image& image : images)
            for (double& v : image.pixels)
                v += noise(rng);
    } else {
        const double read = objective == ObjectiveKind::WeightedLeastSquares ? 10.0 : 0.0;
        images = simulateImages(s, truth, side, side, {NoiseModel::PhotonAndRead, read}, &rng);
    }
    for (size_t k = 0; k < images.size(); ++k)
        s.planes[k].data = images[k];
    return s;
}

} // namespace

class TestFisherInformation : public QObject {
    Q_OBJECT

private slots:
    void presetsAgreeWithTheHessian_data()
    {
        QTest::addColumn<QString>("preset");
        QTest::addColumn<int>("grid");
        QTest::addColumn<double>("tolerance");
        QTest::newRow("demo") << "demo" << 128 << 0.01;
        QTest::newRow("vectorial") << "vectorial" << 64 << 0.01;
        QTest::newRow("pupil") << "pupil" << 64 << 0.02;
    }

    void presetsAgreeWithTheHessian()
    {
        QFETCH(QString, preset);
        QFETCH(int, grid);
        QFETCH(double, tolerance);
        PresetOptions options;
        options.grid = grid;
        const PresetCase c = makePreset(preset.toStdString(), options);
        compareCurvatures(converge(c.spec, c.start, c.solver), tolerance);
    }

    void everyModelPathAgreesWithTheHessian_data()
    {
        QTest::addColumn<int>("objective");
        QTest::addColumn<int>("variant");
        QTest::newRow("least squares") << int(ObjectiveKind::LeastSquares) << int(Plain);
        QTest::newRow("weighted least squares") << int(ObjectiveKind::WeightedLeastSquares) << int(Plain);
        QTest::newRow("Poisson") << int(ObjectiveKind::Poisson) << int(Plain);
        QTest::newRow("Poisson, pixel integration and spectrum") << int(ObjectiveKind::Poisson) << int(Formation);
        QTest::newRow("Poisson, defocus scale and offsets") << int(ObjectiveKind::Poisson) << int(DefocusParameters);
        QTest::newRow("Poisson, zonal phase and amplitude") << int(ObjectiveKind::Poisson) << int(ZonalPupil);
    }

    // Every parameter kind (flux, background, shifts, illumination, defocus) under each objective's own curvature,
    // through the scalar model, the image-formation path (pixel integration, several wavelengths) and the defocus
    // nuisance parameters.
    void everyModelPathAgreesWithTheHessian()
    {
        QFETCH(int, objective);
        QFETCH(int, variant);
        const ProblemSpec spec = simulatedRichSpec(ObjectiveKind(objective), Variant(variant));
        SolverOptions solver;
        solver.gradientTolerance = 1e-9;
        solver.functionTolerance = 1e-14;
        solver.maxIterations = 3000;
        compareCurvatures(converge(spec, {}, solver), 0.04);
    }

    // A model the data cannot be fitted with (a non-positive Poisson intensity where data are) has no curvature:
    // no uncertainty rather than a number.
    void invalidModelGivesNoUncertainty()
    {
        const auto problem = std::make_shared<const Problem>(simulatedRichSpec(ObjectiveKind::Poisson, Plain));
        std::vector<double> x = problem->initialParameters();
        for (size_t i = 0; i < x.size(); ++i)
            if (problem->parameters()[i].kind == ParameterKind::Flux || problem->parameters()[i].kind == ParameterKind::Background)
                x[i] = 0.0;
        EvaluatorOptions options;
        options.measurePlans = false;
        const auto evaluator = makeEvaluator(BackendKind::Cpu, problem, options, GradientKind::Adjoint);
        for (double sigma : estimateUncertainty(*evaluator, x, 1.0, CurvatureMethod::FisherInformation))
            QVERIFY(std::isnan(sigma));
    }
};

QTEST_GUILESS_MAIN(TestFisherInformation)
#include "tst_fisherinformation.moc"
