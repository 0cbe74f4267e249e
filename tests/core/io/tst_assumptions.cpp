// What a run assumes where neither the user nor the files say (issue 40): decided once in core (io/Assumptions.h,
// prepareRun), reported as assumed, never overwriting a value given; the headline figures without defocus for
// defocus-diverse data with the figures with defocus beside them; and the verdict on a fit that converges without
// describing its data.
#include "TestSupport.h"

#include "engine/ReconstructionEngine.h"
#include "engine/Workflow.h"
#include "io/Assumptions.h"
#include "io/SettingsProblems.h"
#include "io/StackPlan.h"
#include "optics/Sampling.h"

#include <algorithm>
#include <cmath>

using namespace wfs;

namespace {

// The shared bead stack as a user opens it with the optics they know: the z step comes from the instrument's log; no
// focus plane and no planes are given.
Session beadSession()
{
    Session session;
    const auto messages = addFiles(session.dataset, {test::dataPath(QStringLiteral("bead_zstack_BIL113.tif")).toStdString()});
    for (const DatasetMessage& m : messages)
        if (m.level == MessageLevel::Error)
            qFatal("%s", m.text.c_str());
    DatasetMetadata& md = session.dataset.metadata;
    md.wavelength = 605e-9;
    md.numericalAperture = 1.1;
    md.immersionIndex = 1.33;
    md.pixelPitch = 0.1e-6;
    for (const char* key : {"wavelength", "numericalAperture", "immersionIndex", "pixelPitch"})
        md.origin[key] = "user";
    session.dataset.preprocess.cropSize = 64;
    return session;
}

const Assumption* findAssumption(const std::vector<Assumption>& assumptions, const std::string& setting)
{
    const auto it = std::find_if(assumptions.begin(), assumptions.end(), [&](const Assumption& a) { return a.setting == setting; });
    return it == assumptions.end() ? nullptr : &*it;
}

std::string listed(const std::vector<Assumption>& assumptions)
{
    std::string text;
    for (const Assumption& a : assumptions)
        text += assumptionText(a) + "\n";
    return text;
}

FitResult fit(const ReconstructionRequest& request)
{
    ReconstructionEngine engine;
    engine.start(request);
    engine.wait();
    if (!engine.error().empty())
        qFatal("%s", engine.error().c_str());
    return *engine.result();
}

// The demo preset's planes as a file's (its FITS header gives wavelength, Q 2 and each plane's defocus), on a small grid.
PresetSession demoSession()
{
    PresetOptions options;
    options.grid = 64;
    options.order = 4;
    return presetSession("demo", options);
}

} // namespace

class TestAssumptions : public QObject {
    Q_OBJECT
private slots:
    // Before: plane 0 was taken as focus (the real focus, plane 10, fitted as 3 um out of focus) and every plane fitted.
    void beadStackFocusAndPlanesAreAssumedOnce()
    {
        const PreparedRun run = prepareRun(beadSession());
        const std::vector<Assumption>& assumed = run.request.analysis.assumptions;
        const DatasetMetadata& md = run.dataset.metadata;
        QVERIFY(md.focusPlane);
        QCOMPARE(*md.focusPlane, 10.0);
        QVERIFY2(isAssumedOrigin(md.origin.at("focusPlane")), md.origin.at("focusPlane").c_str());
        const Assumption* focus = findAssumption(assumed, "focus-plane");
        QVERIFY2(focus && focus->value == "10", listed(assumed).c_str());
        // Planes with signal over at least +-2 depths of focus (605 nm x 1.33 / 1.1^2 = 0.665 um): every 3 planes of 0.3 um.
        QCOMPARE(usedPlanes(run.dataset), (std::vector<int>{4, 7, 10, 13, 16}));
        QVERIFY2(findAssumption(assumed, "planes"), listed(assumed).c_str());
        QVERIFY(!run.dataset.planesChosen);
        // NA / n = 0.83: the high-NA defocus; the stack centred on its peak; the headline without defocus.
        QCOMPARE(md.defocusModel, DefocusModel::HighNa);
        QVERIFY2(findAssumption(assumed, "defocus-model"), listed(assumed).c_str());
        QVERIFY2(findAssumption(assumed, "centre") && findAssumption(assumed, "centre")->value == "peak", listed(assumed).c_str());
        QCOMPARE(effectiveCentre(run.dataset), CentreMethod::Peak);
        QVERIFY(run.request.analysis.removeDefocus);
        QVERIFY2(findAssumption(assumed, "remove-defocus"), listed(assumed).c_str());
        // Every assumption is said with the run's messages, as the report prints them.
        for (const Assumption& a : assumed)
            QVERIFY2(
                std::any_of(run.messages.begin(), run.messages.end(), [&](const DatasetMessage& m) { return m.text == assumptionText(a); }),
                a.setting.c_str());
    }

    // Nothing given is overwritten: the user's planes, focus plane, defocus model and centring stand.
    void givenValuesStand()
    {
        Session session = beadSession();
        selectPlanes(session.dataset, {4, 10, 16});
        PreparedRun run = prepareRun(session);
        QCOMPARE(usedPlanes(run.dataset), (std::vector<int>{4, 10, 16}));
        QCOMPARE(*run.dataset.metadata.focusPlane, 10.0); // still the stack's brightest plane, not plane 4
        QVERIFY(!findAssumption(run.request.analysis.assumptions, "planes"));

        session = beadSession();
        session.dataset.metadata.focusPlane = 9;
        session.dataset.metadata.origin["focusPlane"] = "user";
        session.dataset.metadata.defocusModel = DefocusModel::Paraxial;
        session.dataset.metadata.origin["defocusModel"] = "user";
        session.dataset.preprocess.centre = CentreMethod::None;
        session.solver.removeDefocus = false;
        run = prepareRun(session);
        const std::vector<Assumption>& assumed = run.request.analysis.assumptions;
        QCOMPARE(*run.dataset.metadata.focusPlane, 9.0);
        QCOMPARE(run.dataset.metadata.defocusModel, DefocusModel::Paraxial);
        QCOMPARE(effectiveCentre(run.dataset), CentreMethod::None);
        QVERIFY(!run.request.analysis.removeDefocus);
        for (const char* setting : {"focus-plane", "defocus-model", "centre", "remove-defocus"})
            QVERIFY2(!findAssumption(assumed, setting), setting);
        // The paraxial model chosen at NA / n 0.83 is questioned, not replaced.
        const std::vector<SettingProblem> problems = settingsProblems(session);
        QVERIFY(std::any_of(problems.begin(), problems.end(), [](const SettingProblem& p) { return p.setting == "defocus-model"; }));
    }

    // The desktop's Load tab proposes with the same rule, and its assumed focus reaches the result as assumed.
    void loadTabProposalIsCoresAssumption()
    {
        Session session = beadSession();
        const StackPlan plan = proposeStackPlan(stackStatistics(session.dataset), planOptionsFor(session.dataset));
        QCOMPARE(plan.focusPlane, 10);
        QCOMPARE(plan.planes, (std::vector<int>{4, 7, 10, 13, 16}));
        applyStackPlan(session.dataset, plan);
        const PreparedRun run = prepareRun(session);
        const Assumption* focus = findAssumption(run.request.analysis.assumptions, "focus-plane");
        QVERIFY(focus);
        QCOMPARE(focus->reason, focusPlaneAssumption(plan).reason);
    }

    // Planes that are mostly noise are never proposed, and the spread follows the depth of focus.
    void proposalSkipsNoiseAndFollowsDepthOfFocus()
    {
        std::vector<PlaneStatistics> stats;
        for (int k = 0; k < 21; ++k) {
            PlaneStatistics s;
            s.plane = k;
            s.noise = 10.0;
            s.peak = 2000.0 / (1.0 + 0.1 * (k - 10) * (k - 10)); // at least 18 noise deviations
            stats.push_back(s);
        }
        for (int k : {0, 1, 19, 20})
            stats[size_t(k)].peak = 30.0; // hot pixels and noise only
        StackPlanOptions options;
        const StackPlan wide = proposeStackPlan(stats, options);
        QCOMPARE(wide.focusPlane, 10);
        for (int k : wide.planes)
            QVERIFY2(k >= 2 && k <= 18, qPrintable(QString::number(k)));
        options.zStep = 0.1e-6;
        options.depthOfFocus = 0.2e-6; // +-2 depths = +-4 planes: every 2 planes
        QCOMPARE(proposeStackPlan(stats, options).planes, (std::vector<int>{6, 8, 10, 12, 14}));
        options.depthOfFocus = 0.125e-6; // +-2.5 planes: every 2 planes reaches it, 1 does not
        QCOMPARE(proposeStackPlan(stats, options).planes, (std::vector<int>{6, 8, 10, 12, 14}));
    }

    // An NA above 1 needs an immersion medium: asked for by name, never defaulted to air.
    void immersionIsAskedForAboveNaOne()
    {
        Session session = beadSession();
        session.dataset.metadata.immersionIndex = 1.0;
        session.dataset.metadata.origin.erase("immersionIndex");
        const std::vector<SettingProblem> problems = settingsProblems(session);
        const auto it = std::find_if(problems.begin(), problems.end(), [](const SettingProblem& p) { return p.setting == "na"; });
        QVERIFY(it != problems.end());
        QCOMPARE(it->level, MessageLevel::Error);
        QVERIFY2(it->message.find("immersion medium is not given") != std::string::npos && it->message.find("1.333") != std::string::npos
                     && it->message.find("1.518") != std::string::npos,
                 it->message.c_str());
        QVERIFY_THROWS_EXCEPTION(DatasetError, prepareRun(session));
    }

    // Defocus-diverse data: the headline without defocus, the figures with it beside; both from the same fit.
    void headlineWithoutDefocusAndWithItBeside()
    {
        PresetSession demo = demoSession();
        const PreparedRun run = prepareRun(demo.session);
        QVERIFY(run.request.analysis.removeDefocus);
        const FitResult r = fit(run.request);
        QVERIFY(r.defocusRemoved);
        QVERIFY(r.withDefocus);
        // The demo's truth has 0.06 wave of Z4: the figure with defocus is larger by it in quadrature
        const auto z4 = std::find_if(r.coefficients.begin(), r.coefficients.end(),
                                     [](const CoefficientResult& c) { return c.mode.n == 2 && c.mode.m == 0; });
        QVERIFY(z4 != r.coefficients.end());
        const double defocus = std::abs(z4->waves);
        WFS_VERIFY_CLOSE(defocus, 0.06, 0.0, 0.01);
        // (in quadrature on the continuous disc; within 2 % on the 32-sample pupil of this 64 grid)
        WFS_VERIFY_CLOSE(r.withDefocus->rmsWaves, std::sqrt(r.rmsWaves * r.rmsWaves + defocus * defocus), 0.02, 0.0);
        QVERIFY(r.withDefocus->strehl < r.strehl);
        QVERIFY(r.verdict.judged && r.verdict.describesData);
        QVERIFY(!r.aberrationMap.isEmpty());
        // Asked for, defocus is kept: no second set of figures.
        Session keep = demo.session;
        keep.solver.removeDefocus = false;
        const FitResult kept = fit(prepareRun(keep).request);
        QVERIFY(!kept.defocusRemoved && !kept.withDefocus);
        WFS_VERIFY_CLOSE(kept.rmsWaves, r.withDefocus->rmsWaves, 1e-6, 1e-7);
    }

    // One border pixel at 1e20: masked by default at Q >= 2 (the fit is right); with the mask off the fit still
    // "converges", and the verdict says the model does not fit and names the pixel.
    void extremePixelIsMaskedOrNamed()
    {
        PresetSession demo = demoSession();
        Image& plane = demo.session.dataset.planes.front().raw;
        plane.pixels[size_t(plane.width) * 1 + 2] = 1e20; // column 2, row 1
        const PreparedRun masked = prepareRun(demo.session);
        QVERIFY2(findAssumption(masked.request.analysis.assumptions, "hot-pixels")
                     && findAssumption(masked.request.analysis.assumptions, "hot-pixels")->value != "off",
                 listed(masked.request.analysis.assumptions).c_str());
        const FitResult good = fit(masked.request);
        QVERIFY2(good.verdict.describesData, good.verdict.text.c_str());
        for (const TruthTerm& t : demo.truth.terms)
            for (const CoefficientResult& c : good.coefficients)
                if (c.index == t.index)
                    WFS_VERIFY_CLOSE(c.waves, t.valueWaves, 0.0, 0.01);

        demo.session.dataset.preprocess.maskHotPixels = false;
        const FitResult poor = fit(prepareRun(demo.session).request);
        QVERIFY(poor.solver.termination != Termination::Failed);
        QVERIFY(poor.verdict.judged);
        QVERIFY(!poor.verdict.describesData);
        QCOMPARE(poor.verdict.worstPlane, 0);
        QVERIFY2(poor.verdict.cause.find("one pixel") != std::string::npos, poor.verdict.cause.c_str());
        QVERIFY(std::find(poor.warnings.begin(), poor.warnings.end(), poor.verdict.text) != poor.warnings.end());
    }

    // A pitch chosen for Nyquist computes to a Q one rounding below 2 (the simulated field's 600 nm / (2 x 0.9 x
    // 166.67 nm)): it is Nyquist, not undersampled, for the warning and for the hot-pixel rule alike. A Q truly below
    // 2 still warns and leaves the mask off.
    void nyquistWithinRoundingIsNyquist()
    {
        SamplingInput in;
        in.wavelength = 600e-9;
        in.numericalAperture = 0.9;
        in.pixelPitch = std::nextafter(600e-9 / (2.0 * 0.9 * 2.0), 1.0);
        const Sampling rounded = computeSampling(in);
        QVERIFY(rounded.q < 2.0);
        QVERIFY2(rounded.warnings.empty(), rounded.warnings.empty() ? "" : rounded.warnings.front().c_str());

        Dataset dataset;
        dataset.metadata.wavelength = in.wavelength;
        dataset.metadata.numericalAperture = in.numericalAperture;
        dataset.metadata.pixelPitch = in.pixelPitch;
        QVERIFY(effectiveHotPixelMask(dataset));

        in.pixelPitch = *in.pixelPitch * 1.001;
        QCOMPARE(computeSampling(in).warnings.size(), size_t(1));
        dataset.metadata.pixelPitch = in.pixelPitch;
        QVERIFY(!effectiveHotPixelMask(dataset));
    }

    // A wrong focus plane: the fit converges on a model that cannot describe the stack, and the verdict asks about it.
    void wrongFocusPlaneIsQuestioned()
    {
        Session session = beadSession();
        session.dataset.metadata.focusPlane = 0;
        session.dataset.metadata.origin["focusPlane"] = "user";
        selectPlanes(session.dataset, {4, 10, 16});
        PreparedRun run = prepareRun(session);
        run.request.solver.maxIterations = 300;
        const FitResult r = fit(run.request);
        QVERIFY(r.verdict.judged);
        QVERIFY2(!r.verdict.describesData, qPrintable(QString::number(r.verdict.worstReducedChiSquare)));
        QVERIFY2(r.verdict.text.find("focus plane") != std::string::npos, r.verdict.text.c_str());
    }
};

QTEST_GUILESS_MAIN(TestAssumptions)
#include "tst_assumptions.moc"
