// Real measured data: the bead z-stack of tests/data (a fluorescence microscope PSF, 21 planes of
// 128 x 128, 16-bit TIFF, 0.3 um steps; see tests/data/README.md for its origin). With plausible
// metadata (water objective NA 1.1, n = 1.33, emission 605 nm, 0.1 um pixels, high-NA defocus), a
// reconstruction from three planes must converge, lower the residual well below that of the
// unaberrated model, and give low-order coefficients that stay put when the order goes from 4 to 6.
#include "TestSupport.h"

#include "engine/FieldRun.h"
#include "engine/ReconstructionEngine.h"
#include "engine/Workflow.h"
#include "io/Dataset.h"

#include <cstdio>
#include <map>

using namespace wfs;

namespace {

struct Fit {
    FitResult result;
    double cost = 0.0;
};

Dataset beadData()
{
    Dataset data;
    const auto messages = addFiles(data, {test::dataPath(QStringLiteral("bead_zstack_BIL113.tif")).toStdString()});
    for (const DatasetMessage& m : messages)
        if (m.level == MessageLevel::Error)
            qFatal("%s", m.text.c_str());
    DatasetMetadata& md = data.metadata;
    md.wavelength = 605e-9;
    md.numericalAperture = 1.1;
    md.immersionIndex = 1.33;
    md.pixelPitch = 0.1e-6;
    md.zStep = 0.3e-6;
    md.defocusModel = DefocusModel::HighNa;
    return data;
}

// Issue 13's five planes (-1.8 .. +1.8 um), peak-centred and cropped to 64 x 64, prepared.
Dataset fivePlaneBead()
{
    Dataset data = beadData();
    data.metadata.focusPlane = 10;
    selectPlanes(data, {4, 7, 10, 13, 16});
    data.preprocess.centre = CentreMethod::Peak;
    data.preprocess.cropSize = 64;
    prepare(data);
    return data;
}

// The plane with the brightest (3 x 3 smoothed) pixel: the focus of the stack.
int brightestPlane(const Dataset& data)
{
    int best = 0;
    double bestValue = -1.0;
    for (size_t k = 0; k < data.planes.size(); ++k) {
        const Image& img = data.planes[k].raw;
        for (int r = 1; r + 1 < img.height; ++r)
            for (int c = 1; c + 1 < img.width; ++c) {
                double s = 0.0;
                for (int dr = -1; dr <= 1; ++dr)
                    for (int dc = -1; dc <= 1; ++dc)
                        s += img.at(r + dr, c + dc);
                if (s > bestValue) {
                    bestValue = s;
                    best = int(k);
                }
            }
    }
    return best;
}

Fit fit(const Dataset& data, ModelSettings model, std::vector<int> stages = {})
{
    const BuiltProblem built = buildProblem(data, model);
    ReconstructionRequest request;
    request.spec = built.spec;
    request.start = built.start;
    request.evaluator.measurePlans = false;
    request.solver.gradientTolerance = 1e-6;
    request.solver.functionTolerance = 1e-11;
    request.analysis.computeUncertainty = false;
    request.stages = stages;
    if (!stages.empty())
        request.start.clear();
    Fit f;
    f.result = reconstruct(request, {}, nullptr);
    f.cost = f.result.solver.finalCost;
    return f;
}

// Issue 13's model of the counts: order 6, Poisson with the camera's 100-count bias, the gain by photon transfer,
// grid 128, pixel integration and the 100 nm bead.
ModelSettings countsModel()
{
    ModelSettings model;
    model.order = 6;
    model.objective = ObjectiveKind::Poisson;
    model.offset = 100.0;
    model.gain = 0.0;
    model.grid = 128;
    model.pixelIntegration = true;
    model.objectDiameter = 100e-9;
    return model;
}

double coefficient(const FitResult& r, int index)
{
    for (const CoefficientResult& c : r.coefficients)
        if (c.index == index)
            return c.waves;
    return std::nan("");
}

} // namespace

class TestRealData : public QObject {
    Q_OBJECT

private slots:
    void fieldPipelineGivesTheSingleBeadFit()
    {
        // Issue 43's measure: the shared bead stack as a one-bead field. The bead is found, its crop fitted, and the
        // field model (order 0 from one bead) gives that bead's own fit, which a user running the same crop alone gets,
        // to 1e-6 wave.
        Session session;
        session.dataset = beadData();
        session.dataset.metadata.focusPlane = 10;
        selectPlanes(session.dataset, {4, 7, 10, 13, 16});
        session.model.order = 4;
        FieldRunOptions options;
        options.detection.crop = 64;
        const FieldRun run = runField(session, options);
        QCOMPARE(int(run.beads.size()), 1);
        const FieldBead& bead = run.beads.front();
        QVERIFY2(bead.status == "ok" || bead.status == "poor-fit", bead.reason.c_str());
        QVERIFY(std::abs(bead.detection.x - 64.0) < 6.0 && std::abs(bead.detection.y - 64.0) < 6.0);
        QVERIFY(run.model.has_value());
        QVERIFY(!run.joint || run.joint->beads < 2); // one bead: nothing to share
        const FitResult alone = reconstruct(prepareRun(fieldBeadSession(session, bead.detection, 64)).request, {}, nullptr);
        for (size_t t = 0; t < run.modelTerms.size(); ++t)
            for (const CoefficientResult& c : alone.coefficients)
                if (c.index == run.modelTerms[t])
                    QVERIFY2(std::abs(evaluateFieldTerm(*run.model, int(t), 10.0, 120.0).value - c.waves) < 1e-6,
                             qPrintable(QStringLiteral("Noll %1").arg(c.index)));
    }

    void readsTheStack()
    {
        Dataset data;
        const auto messages = addFiles(data, {test::dataPath(QStringLiteral("bead_zstack_BIL113.tif")).toStdString()});
        QCOMPARE(data.planes.size(), size_t(21));
        QCOMPARE(data.planes[0].raw.width, 128);
        QCOMPARE(data.planes[0].raw.height, 128);
        QCOMPARE(data.files[0].bitsPerSample, 16);
        QCOMPARE(data.planes[0].formatMaximum, 65535.0);
        QVERIFY(!messages.empty());
        QCOMPARE(messages.front().level, MessageLevel::Info);
        QVERIFY2(messages.front().text.find("21 plane(s) of 128 x 128") != std::string::npos, messages.front().text.c_str());
    }

    void reconstructsThreePlanes()
    {
        Dataset data = beadData();
        const int focus = brightestPlane(data);
        QVERIFY2(focus >= 3 && focus <= 17, "the focus lies inside the stack");
        data.metadata.focusPlane = focus;
        selectPlanes(data, {focus - 3, focus, focus + 3}); // -0.9, 0, +0.9 um
        data.preprocess.centre = CentreMethod::Peak;
        data.preprocess.cropSize = 64;
        prepare(data);
        for (int k : usedPlanes(data)) {
            const PlanePreparation& p = data.preparation->planes[size_t(k)];
            std::printf("plane %d: background %.2f sigma %.2f centre (%.1f, %.1f) signal %.4g saturated %d clipped %d\n", k, p.background,
                        p.backgroundSigma, p.centreX, p.centreY, p.signal, p.saturatedPixels, int(p.clipped));
        }

        ModelSettings model;
        model.order = 1; // tip and tilt only: the unaberrated model, placed where the bead is
        const Fit flat = fit(data, model);
        model.order = 4;
        const Fit four = fit(data, model);
        model.order = 6;
        const Fit six = fit(data, model, {4, 6}); // seeded from order 4, as a user would step up
        std::printf("focus plane %d; final cost: unaberrated %.6g, order 4 %.6g (%s, %d iterations), order 6 %.6g (%s, %d iterations)\n",
                    focus, flat.cost, four.cost, terminationName(four.result.solver.termination), four.result.solver.iterations, six.cost,
                    terminationName(six.result.solver.termination), six.result.solver.iterations);
        for (const FitResult* r : {&flat.result, &four.result, &six.result}) {
            std::printf("  order %d: chi2/pixel", r->coefficients.empty() ? 0 : r->coefficients.back().mode.n);
            for (const PlaneResult& p : r->planes)
                std::printf(" %.3f", p.reducedChiSquare);
            std::printf(", wavefront %.4f waves RMS, Strehl %.3f\n", r->rmsWaves, r->strehl);
        }
        std::printf("  Noll  order 4   order 6  (waves, rms normalisation)\n");
        for (int j = 2; j <= 15; ++j)
            std::printf("  %4d %8.4f %8.4f\n", j, coefficient(four.result, j), coefficient(six.result, j));

        QCOMPARE(four.result.solver.termination, Termination::Converged);
        QCOMPARE(six.result.solver.termination, Termination::Converged);
        // The aberrated model explains the data far better than the unaberrated one: the objective
        // (weighted least squares, noise floor about one per pixel) drops by more than a quarter
        // (measured: to 0.68), and the in-focus plane's chi^2 per pixel by more than 3x (measured 6x).
        QVERIFY2(four.cost < 0.75 * flat.cost,
                 qPrintable(QStringLiteral("order 4 cost %1 vs unaberrated %2").arg(four.cost).arg(flat.cost)));
        QVERIFY(four.result.planes[1].reducedChiSquare < flat.result.planes[1].reducedChiSquare / 3.0);
        QVERIFY(six.cost <= four.cost * (1.0 + 1e-9)); // a larger, nested model seeded from the smaller one
        // Low-order terms (defocus, astigmatism, coma, trefoil, spherical) stay within 0.01 wave
        // (6 nm) when the order goes from 4 to 6 (measured: at most 0.004 wave); tip/tilt too.
        for (int j = 2; j <= 11; ++j)
            WFS_VERIFY_CLOSE(coefficient(six.result, j), coefficient(four.result, j), 0.0, 0.01);
        // A clear primary spherical aberration, as expected from a water objective (measured ~0.03 wave).
        QVERIFY(coefficient(four.result, 11) > 0.01);
    }

    // Issue 13 on the same stack, five planes (-1.8 .. +1.8 um): photon transfer finds the camera's gain (the
    // ORCA-Flash4.0's nominal 0.46 e-/count), and the fuller model (gain, a 128 grid, pixel integration, the
    // bead's size, the z-step scale) fits every plane better than the Zernike-only one; a zonal pupil on the
    // same detector model keeps the Zernike terms up to order 4 within 0.01 wave.
    void pupilFunctionModelFitsBetter()
    {
        Dataset data = fivePlaneBead();
        ModelSettings model;
        model.order = 6;
        const Fit plain = fit(data, model);
        model.gain = 0.0; // photon transfer
        model.grid = 128;
        model.pixelIntegration = true;
        model.objectDiameter = 100e-9;
        const Fit detector = fit(data, model);
        model.fitDefocusScale = true;
        const Fit scaled = fit(data, model);
        model.fitDefocusScale = false;
        model.phaseModel = PupilPhaseModel::Both;
        model.amplitudeModel = PupilAmplitudeModel::Zonal;
        model.regularization = 10.0;
        const Fit zonal = fit(data, model);
        for (const Fit* f : {&plain, &detector, &scaled, &zonal}) {
            std::printf("  gain %.3f:", f->result.gain);
            for (const PlaneResult& p : f->result.planes)
                std::printf(" %.3f", p.reducedChiSquare);
            std::printf("; Z4 %.4f Z11 %.4f\n", coefficient(f->result, 4), coefficient(f->result, 11));
        }
        QVERIFY2(detector.result.gain > 0.35 && detector.result.gain < 0.6, qPrintable(QString::number(detector.result.gain)));
        for (size_t k = 0; k < plain.result.planes.size(); ++k)
            QVERIFY2(scaled.result.planes[k].reducedChiSquare < 0.9 * plain.result.planes[k].reducedChiSquare,
                     qPrintable(QString::number(k)));
        double scale = 0.0;
        for (size_t i = 0; i < scaled.result.parameterLabels.size(); ++i)
            if (scaled.result.parameterLabels[i] == "defocus scale")
                scale = scaled.result.parameterValues[i];
        QVERIFY2(scale > 1.1 && scale < 1.3, qPrintable(QString::number(scale))); // measured 1.195
        QVERIFY(std::isfinite(zonal.result.zonalRemainderRmsWaves));
        for (int j = 2; j <= 15; ++j)
            WFS_VERIFY_CLOSE(coefficient(zonal.result, j), coefficient(detector.result, j), 0.0, 0.01);
    }

    // Issue 13's target. The counts less the camera's documented bias (100 counts on the ORCA-Flash4.0) under the
    // Poisson objective, the gain by photon transfer (the read noise then comes from the border: 2.9 counts, 1.3 e-),
    // pixel integration, the bead's size and the NA fitted (--fit-sampling): every plane fits to chi2/pixel <= 2.
    // A zonal phase and amplitude at the fitted NA keep the Zernike terms up to order 4 within 0.01 wave.
    void countsFitToTheNoise()
    {
        Dataset data = fivePlaneBead();
        ModelSettings model = countsModel();
        const BuiltProblem built = buildProblem(data, model);
        ReconstructionRequest request;
        request.spec = built.spec;
        request.start = built.start;
        request.evaluator.measurePlans = false;
        request.analysis.computeUncertainty = false;
        request.fitSampling = true;
        const FitResult sampled = reconstruct(request, {}, nullptr);
        QVERIFY(sampled.samplingFit.has_value());
        const double na = sampled.samplingFit->numericalAperture;
        std::printf("  NA %.4f +/- %.4f, Q %.4f, chi2/pixel", na, sampled.samplingFit->numericalApertureSigma, sampled.samplingQ);
        for (const PlaneResult& p : sampled.planes)
            std::printf(" %.3f", p.reducedChiSquare);
        std::printf("\n");
        QVERIFY2(na > 1.18 && na < 1.28, qPrintable(QString::number(na))); // measured 1.232
        for (const PlaneResult& p : sampled.planes)
            QVERIFY2(p.reducedChiSquare <= 2.0, qPrintable(QString::number(p.reducedChiSquare)));

        data.metadata.numericalAperture = na;
        const Fit zernike = fit(data, model);
        model.phaseModel = PupilPhaseModel::Both;
        model.amplitudeModel = PupilAmplitudeModel::Zonal;
        model.regularization = 10.0;
        const Fit zonal = fit(data, model);
        double largest = 0.0;
        for (int j = 4; j <= 15; ++j)
            largest = std::max(largest, std::abs(coefficient(zonal.result, j) - coefficient(zernike.result, j)));
        std::printf("  zonal pupil: chi2/pixel");
        for (const PlaneResult& p : zonal.result.planes)
            std::printf(" %.3f", p.reducedChiSquare);
        std::printf("; Noll 4..15 within %.4f wave of the Zernike-only fit\n", largest);
        QVERIFY2(largest <= 0.01, qPrintable(QString::number(largest)));
    }

    // Issue 29: the bead stack's seven planes (-2.7 .. +2.7 um), 128 x 128, grid 256 (8529 pupil pixels, 17099
    // parameters), Poisson with the bias, NA 1.232, a zonal phase and amplitude at smoothness weight `weight`, one thread.
    static ReconstructionRequest fullSizeZonalRequest(double weight)
    {
        Dataset data = beadData();
        data.metadata.focusPlane = 10;
        data.metadata.numericalAperture = 1.232;
        selectPlanes(data, {1, 4, 7, 10, 13, 16, 19});
        data.preprocess.centre = CentreMethod::Peak;
        data.preprocess.cropSize = 128;
        data.preprocess.maskHotPixels = false; // the costs below were measured with every pixel in the fit
        prepare(data);
        ModelSettings model = countsModel();
        model.grid = 256;
        model.objectDiameter = ModelSettings{}.objectDiameter; // a point, as measured
        model.phaseModel = PupilPhaseModel::Both;
        model.amplitudeModel = PupilAmplitudeModel::Zonal;
        model.regularization = weight;
        const BuiltProblem built = buildProblem(data, model);
        ReconstructionRequest request;
        request.spec = built.spec;
        request.start = built.start;
        request.evaluator.measurePlans = false;
        request.evaluator.threads = 1;
        request.analysis.computeUncertainty = false;
        return request;
    }

    static void printFit(const FitResult& result)
    {
        std::printf("  %s after %d iterations; chi2/pixel", terminationName(result.solver.termination), result.solver.iterations);
        for (const PlaneResult& p : result.planes)
            std::printf(" %.3f", p.reducedChiSquare);
        std::printf("; cost %.2f\n", result.solver.finalCost);
    }

    // Issue 29: the zonal pupil at full size converges by the solver's own criteria, and quickly. Before the zonal
    // terms were scaled by their curvature it took 909 L-BFGS iterations (and 2000 on another stack); now 58. Held to
    // 300 iterations, the target, with every plane's chi2/pixel at most 1.2 (measured 0.97-1.14, as before the
    // change).
    void zonalPupilConvergesAtFullSize()
    {
        const FitResult result = reconstruct(fullSizeZonalRequest(10.0), {}, nullptr);
        printFit(result);
        QCOMPARE(result.solver.termination, Termination::Converged);
        QVERIFY2(result.solver.iterations <= 300, qPrintable(QString::number(result.solver.iterations)));
        for (const PlaneResult& p : result.planes)
            QVERIFY2(p.reducedChiSquare <= 1.2, qPrintable(QString::number(p.reducedChiSquare)));
    }

    // Issue 29: a weak weight (1, the default) from flat zonal maps is reached by continuation, through weight 10.
    // Fitted straight at weight 1 (wavefront-cli, measured plans) the same problem took 798 iterations to cost 98955.2;
    // through weight 10 it takes 382 here (63 + 319) to 98945.69, every plane's chi2/pixel within 0.005 of the
    // straight fit's (0.92-1.11). Held to 450 iterations and to a cost no higher than the straight fit's; the straight
    // fit is not rerun here, for time.
    void weakWeightReachedByContinuation()
    {
        const FitResult result = reconstruct(fullSizeZonalRequest(1.0), {}, nullptr);
        printFit(result);
        QCOMPARE(result.solver.termination, Termination::Converged);
        QCOMPARE(result.regularizationSweep.size(), size_t(2));
        QCOMPARE(result.regularizationSweep[0].weight, 10.0);
        QCOMPARE(result.regularizationSweep[1].weight, 1.0);
        QCOMPARE(result.regularization, 1.0);
        QVERIFY2(result.solver.iterations <= 450, qPrintable(QString::number(result.solver.iterations)));
        QVERIFY2(result.solver.finalCost <= 98955.2, qPrintable(QString::number(result.solver.finalCost, 'f', 2)));
        for (const PlaneResult& p : result.planes)
            QVERIFY2(p.reducedChiSquare <= 1.15, qPrintable(QString::number(p.reducedChiSquare)));
    }

    // Issue 24: the vectorial model fits the five planes to chi2/pixel <= 1.5 with the NA held at 1.133, 3 % above the
    // objective's nominal 1.1 (a water objective, so the sample's index is the immersion's), where the scalar model
    // needs 1.232. A zonal phase and amplitude at weight 1 carry what the Zernike terms cannot. Measured: chi2/pixel
    // 1.42, 1.50, 1.30, 1.09, 1.01 after 1216 iterations, through weight 10 (fitted straight at weight 1: 1.33, 1.42,
    // 1.40, 1.18, 1.00 after 696, at a higher cost). The Zernike terms the NA does not trade with (Noll 5-10,
    // 12-15) stay within 0.01 wave of the scalar Zernike fit at its NA (measured 0.0019); defocus (Z4) and spherical (Z11) are how
    // the two models differ, and are left out.
    void vectorialFitsAtTheObjectivesAperture()
    {
        ModelSettings model = countsModel();
        Dataset scalarData = fivePlaneBead();
        scalarData.metadata.numericalAperture = 1.232; // the scalar model's fitted NA (countsFitToTheNoise)
        const Fit scalar = fit(scalarData, model);

        Dataset data = fivePlaneBead();
        data.metadata.numericalAperture = 1.133;
        model.imagingModel = ImagingModel::Vectorial;
        model.sampleIndex = 1.33;
        model.phaseModel = PupilPhaseModel::Both;
        model.amplitudeModel = PupilAmplitudeModel::Zonal;
        model.regularization = 1.0;
        const Fit vectorial = fit(data, model);
        std::printf("  vectorial at NA 1.133: %s after %d iterations; chi2/pixel", terminationName(vectorial.result.solver.termination),
                    vectorial.result.solver.iterations);
        for (const PlaneResult& p : vectorial.result.planes)
            std::printf(" %.3f", p.reducedChiSquare);
        QCOMPARE(vectorial.result.solver.termination, Termination::Converged);
        for (const PlaneResult& p : vectorial.result.planes)
            QVERIFY2(p.reducedChiSquare <= 1.5, qPrintable(QString::number(p.reducedChiSquare)));
        double largest = 0.0;
        for (int j = 5; j <= 15; ++j)
            if (j != 11)
                largest = std::max(largest, std::abs(coefficient(vectorial.result, j) - coefficient(scalar.result, j)));
        std::printf("; Noll 5-10, 12-15 within %.4f wave of the scalar fit\n", largest);
        QVERIFY2(largest <= 0.01, qPrintable(QString::number(largest)));
    }

    // Issue 29: --regularization auto where no weight reaches the noise level (the vectorial model at the nominal
    // NA 1.1 with a z-step scale: chi2/pixel 1.2-1.4), so every weight is fitted for the fallback rule, each from the
    // nearest weight already fitted. Fits at true minima give a chi-square that only grows with the weight, and the
    // rule (the strongest within 2 % of the least) then picks a middle weight. From the CLI (measured FFTW plans) the
    // strong weights once started from the weakest's rough map, stalled there at iteration 0 with its chi-square
    // (1.218 at 1000, 100 and 0.1) and weight 1000 was chosen; with this test's estimated plans that start happens not
    // to stall, so the test guards the rule's outcome, not that particular stall.
    void regularizationFallbackFitsEveryWeight()
    {
        Dataset data = fivePlaneBead();
        ModelSettings model = countsModel();
        model.imagingModel = ImagingModel::Vectorial;
        model.sampleIndex = 1.33;
        model.phaseModel = PupilPhaseModel::Both;
        model.amplitudeModel = PupilAmplitudeModel::Zonal;
        model.fitDefocusScale = true;
        const BuiltProblem built = buildProblem(data, model);
        ReconstructionRequest request;
        request.spec = built.spec;
        request.start = built.start;
        request.evaluator.measurePlans = false;
        request.evaluator.threads = 1;
        request.analysis.computeUncertainty = false;
        request.solver.gradientTolerance = 1e-6; // the CLI's defaults
        request.solver.functionTolerance = 1e-11;
        // The iteration limit bounds the whole search (issue 44): at the default 2000 it ends after three weights
        // (not converged, said so), and this test is about the rule once every weight is fitted.
        request.solver.maxIterations = 20000;
        request.autoRegularization = true;
        const FitResult result = reconstruct(request, {}, nullptr);
        std::printf("  %s\n", result.regularizationChoice.c_str());
        const std::vector<double> weights = regularizationSweepWeights();
        QCOMPARE(result.regularizationSweep.size(), weights.size()); // the fallback fits them all
        std::map<double, double> chi;                                // weight -> chi2/pixel
        for (const FitResult::SweepPoint& point : result.regularizationSweep)
            chi[point.weight] = point.reducedChiSquare;
        for (auto weaker = chi.begin(), stronger = std::next(chi.begin()); stronger != chi.end(); ++weaker, ++stronger)
            QVERIFY2(stronger->second >= weaker->second - 1e-3, qPrintable(QStringLiteral("weight %1: %2, weight %3: %4")
                                                                               .arg(stronger->first)
                                                                               .arg(stronger->second)
                                                                               .arg(weaker->first)
                                                                               .arg(weaker->second)));
        QVERIFY2(chi[weights.front()] > chi[weights.back()] + 0.05, result.regularizationChoice.c_str());
        QVERIFY(result.regularization < weights.front());
    }
};

QTEST_APPLESS_MAIN(TestRealData)
#include "tst_realdata.moc"
