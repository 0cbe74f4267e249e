// The one workflow from settings to a result (engine/Workflow.h) and the report formatted once
// (engine/Report.h): orders and stages checked in one place with the setting named, a simulated FITS
// stack taken through prepareRun to a fit, a saved result read back and re-evaluated to the same cost.
#include "TestSupport.h"

#include "engine/Presets.h"
#include "engine/Report.h"
#include "engine/Workflow.h"
#include "io/OutputTransaction.h"
#include "io/ResultJson.h"

#include <QTemporaryDir>
#include <QTest>

using namespace wfs;

namespace {

template <typename F>
QString settingOf(F&& f)
{
    try {
        f();
    } catch (const SettingsError& e) {
        return QString::fromStdString(e.setting());
    }
    return {};
}

// The demo preset at a small grid, noise-free, as a FITS cube on disk, loaded as a user's file would be.
Session demoSession(const QTemporaryDir& dir)
{
    PresetOptions options;
    options.grid = 64;
    options.noise = false;
    const PresetCase demo = makePreset("demo", options);
    const std::string path = dir.filePath(QStringLiteral("demo.fits")).toStdString();
    writePresetFits(path, demo, "demo", options.seed, false);
    Session session;
    addFiles(session.dataset, {path});
    session.model.order = 4;
    return session;
}

} // namespace

class TestWorkflow : public QObject {
    Q_OBJECT
private slots:
    // The window's symbols for the command line's ASCII: every occurrence, nothing else touched.
    void reportLinesTakeSymbols()
    {
        QCOMPARE(QString::fromStdString(withSymbols("sampling Q 2.01 +/- 0.03 (NA 1.39 +/- 0.01); plane 0 chi2/pixel 1.002")),
                 QStringLiteral("sampling Q 2.01 ± 0.03 (NA 1.39 ± 0.01); plane 0 χ²/pixel 1.002"));
        QCOMPARE(withSymbols("no symbols here: +/ chi 2"), std::string("no symbols here: +/ chi 2"));
        QCOMPARE(withSymbols(""), std::string());
    }

    void ordersHaveOneCarrier()
    {
        ModelSettings model;
        SolverSettings solver;
        model.order = 6;
        QCOMPARE(fittedOrders(model, solver), std::vector<int>{6});
        solver.stages = {2, 4, 8};
        QCOMPARE(fittedOrders(model, solver), (std::vector<int>{2, 4, 8})); // the last stage is the order
    }

    void badSettingsNameTheSetting()
    {
        ModelSettings model;
        SolverSettings solver;
        model.order = 16;
        QCOMPARE(settingOf([&] { checkSettings(model, solver); }), QStringLiteral("order"));
        model.order = 4;
        solver.stages = {4, 2};
        QCOMPARE(settingOf([&] { checkSettings(model, solver); }), QStringLiteral("stages"));
        solver.stages = {2, 16};
        QCOMPARE(settingOf([&] { checkSettings(model, solver); }), QStringLiteral("stages"));
        solver.stages.clear();
        solver.threads = 0;
        QCOMPARE(settingOf([&] { checkSettings(model, solver); }), QStringLiteral("threads"));
        solver.threads = 1;
        solver.maxIterations = 0;
        QCOMPARE(settingOf([&] { checkSettings(model, solver); }), QStringLiteral("max-iterations"));
        solver.maxIterations = 10;
        solver.gradientTolerance = -1;
        QCOMPARE(settingOf([&] { checkSettings(model, solver); }), QStringLiteral("gtol"));
        solver.gradientTolerance = 1e-6;
        QCOMPARE(settingOf([&] { checkSettings(model, solver); }), QString());
    }

    void prepareRunFitsAndRestores()
    {
        QTemporaryDir dir;
        Session session = demoSession(dir);
        session.solver.stages = {2, 4};
        PreparedRun run = prepareRun(session);
        QCOMPARE(run.request.spec.basis.maxOrder, 4); // from the stages
        QCOMPARE(run.request.stages, (std::vector<int>{2, 4}));
        QVERIFY(run.request.start.empty()); // stages seed each other
        QVERIFY(run.dataset.preparation.has_value());
        QCOMPARE(run.context.inputs.size(), size_t(1));
        QVERIFY(run.context.samplingQ > 1.9 && run.context.samplingQ < 2.1);

        const FitResult fitted = reconstruct(run.request, {}, nullptr);
        QCOMPARE(fitted.solver.termination, Termination::Converged);

        session.result = resultToJson(fitted);
        session.resultParameters = fitted.parameterValues;
        const FitResult restored = restoreSavedResult(session, run.problem);
        WFS_VERIFY_CLOSE(restored.solver.finalCost, fitted.solver.finalCost, 1e-9, 1e-12);
        QCOMPARE(restored.solver.iterations, fitted.solver.iterations);
        QCOMPARE(restored.solver.termination, fitted.solver.termination);
        QCOMPARE(restored.coefficients.size(), fitted.coefficients.size());
        for (size_t t = 0; t < fitted.coefficients.size(); ++t)
            WFS_VERIFY_CLOSE(restored.coefficients[t].waves, fitted.coefficients[t].waves, 1e-9, 1e-12);

        session.resultParameters.pop_back();
        QVERIFY_THROWS_EXCEPTION(std::runtime_error, restoreSavedResult(session, run.problem));
    }

    // The default preparation must not bias clean data: simulate's own FITS output, fitted with the
    // defaults (border background subtracted and added back for Poisson, read noise from RDNOISE or the
    // border), gives the chi-square per pixel of the same preset fitted in memory.
    void fileFitMatchesInMemoryChiSquare_data()
    {
        QTest::addColumn<bool>("withHeader");
        QTest::newRow("RDNOISE in the header") << true;
        QTest::newRow("read noise from the border") << false;
    }

    void fileFitMatchesInMemoryChiSquare()
    {
        QFETCH(bool, withHeader);
        PresetOptions options; // the demo's own grid, 256: at 128 its defocused rings reach the border
        const PresetCase demo = makePreset("demo", options);
        ReconstructionRequest memory;
        memory.spec = demo.spec;
        memory.start = demo.start;
        memory.solver = demo.solver;
        const FitResult inMemory = reconstruct(memory, {}, nullptr);

        QTemporaryDir dir;
        const std::string path = dir.filePath(QStringLiteral("demo.fits")).toStdString();
        QByteArray bytes = presetFitsBytes(demo, "demo", options.seed);
        const qsizetype card = bytes.indexOf("RDNOISE ");
        QVERIFY(card > 0 && card % 80 == 0);
        if (!withHeader)
            bytes.replace(card, 80, QByteArray("COMMENT").leftJustified(80, ' '));
        writeFileAtomically(path, bytes, false);
        Session session;
        addFiles(session.dataset, {path});
        session.model.order = demo.spec.basis.maxOrder;
        const PreparedRun run = prepareRun(session);
        QCOMPARE(run.request.spec.objective, ObjectiveKind::Poisson);
        if (withHeader)
            QCOMPARE(run.request.spec.readNoise, demo.spec.readNoise);
        else
            WFS_VERIFY_CLOSE(run.request.spec.readNoise, demo.spec.readNoise, 0.1, 0.0); // from the border, 16 pixels wide
        const FitResult fromFile = reconstruct(run.request, {}, nullptr);
        QCOMPARE(fromFile.planes.size(), inMemory.planes.size());
        for (size_t k = 0; k < fromFile.planes.size(); ++k) {
            WFS_VERIFY_CLOSE(inMemory.planes[k].reducedChiSquare, 1.0, 0.03, 0.0);
            WFS_VERIFY_CLOSE(fromFile.planes[k].reducedChiSquare, inMemory.planes[k].reducedChiSquare, 0.02, 0.0);
        }
    }

    void solverRecordReadsBack()
    {
        FitResult r;
        r.solver.termination = Termination::MaxIterations;
        r.solver.message = "limit";
        r.solver.initialCost = 12.5;
        r.solver.finalCost = 3.25;
        r.solver.gradientMaxNorm = 0.5;
        r.solver.iterations = 17;
        r.solver.costEvaluations = 21;
        r.solver.gradientEvaluations = 19;
        r.solver.seconds = 1.5;
        const SolverSummary back = solverSummaryFromJson(resultToJson(r));
        QCOMPARE(back.termination, Termination::MaxIterations);
        QCOMPARE(back.message, std::string("limit"));
        QCOMPARE(back.initialCost, 12.5);
        QCOMPARE(back.finalCost, 3.25);
        QCOMPARE(back.gradientMaxNorm, 0.5);
        QCOMPARE(back.iterations, 17);
        QCOMPARE(back.costEvaluations, 21L);
        QCOMPARE(back.gradientEvaluations, 19L);
        QCOMPARE(back.seconds, 1.5);
    }

    void reportsSayWhatHappened()
    {
        FitResult r;
        r.problemName = "demo";
        r.wavelength = 633e-9;
        r.rmsWaves = 0.1;
        r.strehl = 0.6;
        r.solver.termination = Termination::Converged;
        r.solver.iterations = 28;
        CoefficientResult c;
        c.index = 4;
        c.mode = {2, 0};
        c.name = "Defocus";
        c.waves = 0.06;
        r.coefficients.push_back(c);
        r.warnings.push_back("one plane only");
        const QString brief = QString::fromStdString(briefReport(r));
        QVERIFY2(brief.contains(QLatin1String("converged after 28 iterations")) && brief.contains(QLatin1String("63.3 nm RMS")),
                 qPrintable(brief));
        QVERIFY(!brief.contains(QLatin1Char('\n')));
        Truth truth;
        truth.terms.push_back({4, 0.05});
        const QString full = QString::fromStdString(fullReport(r, {"simulated data"}, &truth));
        QVERIFY(full.startsWith(QLatin1String("Wavefront Studio reconstruction: demo\n")));
        QVERIFY(full.contains(QLatin1String("  note: simulated data\n")));
        QVERIFY(full.contains(QLatin1String("Defocus")));
        QVERIFY2(full.endsWith(QLatin1String("0.05000\n")), qPrintable(full)); // the truth column ends the table
        QVERIFY(!full.contains(QLatin1String("one plane only")));              // warnings are shown once, by the front end
    }
};

QTEST_GUILESS_MAIN(TestWorkflow)
#include "tst_workflow.moc"
