// A preset's run through core's workflow (engine/Workflow.h, preparePresetRun), the one function every front end
// calls for a preset: the request it fills is the one the command line built from makePreset by hand before, and
// fits to the same result; the settings a front end gives (order, objective, read noise, stages, solver rules)
// override the preset's own, checked as a session's are; core's option table says which options those are.
#include "TestSupport.h"

#include "engine/Presets.h"
#include "engine/Workflow.h"
#include "io/SettingOptions.h"

#include <QTest>

#include <algorithm>

using namespace wfs;

namespace {

// A preset's request as wavefront-cli reconstruct built it before preparePresetRun: the preset's problem, start
// and solver options, then its stopping rules (iterations and tolerances only) as solver settings over them.
ReconstructionRequest handBuiltRequest(const std::string& name, const PresetOptions& options, int maxIterations)
{
    const PresetCase c = makePreset(name, options);
    ReconstructionRequest request;
    request.spec = c.spec;
    request.start = c.start;
    request.solver = c.solver;
    SolverSettings solver;
    solver.maxIterations = maxIterations;
    solver.gradientTolerance = c.solver.gradientTolerance;
    solver.functionTolerance = c.solver.functionTolerance;
    applySolverSettings(solver, request);
    return request;
}

PresetSettings smallPreset(const std::string& name, int grid, int maxIterations)
{
    PresetSettings settings;
    settings.options.grid = grid;
    settings.solver = presetSolverSettings(name);
    settings.solver.maxIterations = maxIterations;
    return settings;
}

} // namespace

class TestPresetSession : public QObject {
    Q_OBJECT
private slots:
    void presetRunIsTheHandBuiltOne_data()
    {
        QTest::addColumn<QString>("preset");
        QTest::addColumn<int>("grid");
        for (const char* name : {"demo", "oof", "pupil", "vectorial"})
            QTest::newRow(name) << QString::fromLatin1(name) << (QByteArray(name) == "oof" ? 64 : 32);
    }

    void presetRunIsTheHandBuiltOne()
    {
        QFETCH(QString, preset);
        QFETCH(int, grid);
        const std::string name = preset.toStdString();
        constexpr int iterations = 15;
        const PresetSettings settings = smallPreset(name, grid, iterations);
        const PresetRun run = preparePresetRun(name, settings);
        const ReconstructionRequest expected = handBuiltRequest(name, settings.options, iterations);

        const PresetCase c = makePreset(name, settings.options);
        QCOMPARE(run.truth.terms.size(), c.truth.terms.size());
        QCOMPARE(QString::fromStdString(run.noiseDescription), QString::fromStdString(c.noiseDescription));
        QCOMPARE(QString::fromStdString(run.run.context.preset), preset);
        QCOMPARE(run.run.request.start, expected.start);
        QCOMPARE(run.run.request.spec.planes.size(), expected.spec.planes.size());
        for (size_t k = 0; k < expected.spec.planes.size(); ++k)
            QCOMPARE(run.run.request.spec.planes[k].data.pixels, expected.spec.planes[k].data.pixels);
        QCOMPARE(run.run.request.solver.gradientTolerance, presetDefaults(name).gradientTolerance);
        QCOMPARE(run.run.request.solver.functionTolerance, presetDefaults(name).functionTolerance);
        QCOMPARE(int(run.run.request.solver.optimizer), int(expected.solver.optimizer));

        const FitResult viaWorkflow = reconstruct(run.run.request, {}, nullptr);
        const FitResult byHand = reconstruct(expected, {}, nullptr);
        QCOMPARE(viaWorkflow.solver.iterations, byHand.solver.iterations);
        WFS_VERIFY_CLOSE(viaWorkflow.solver.finalCost, byHand.solver.finalCost, 1e-12, 0.0);
        QCOMPARE(viaWorkflow.coefficients.size(), byHand.coefficients.size());
        for (size_t t = 0; t < byHand.coefficients.size(); ++t)
            WFS_VERIFY_CLOSE(viaWorkflow.coefficients[t].waves, byHand.coefficients[t].waves, 1e-10, 1e-14);
    }

    // What a front end gives overrides the preset's setting; what it leaves out stays the preset's.
    void givenSettingsOverrideThePreset()
    {
        PresetSettings settings = smallPreset("demo", 32, 5);
        const PresetRun own = preparePresetRun("demo", settings);
        QCOMPARE(own.run.request.spec.basis.maxOrder, presetDefaults("demo").order);
        QCOMPARE(int(own.run.request.spec.objective), int(ObjectiveKind::Poisson));
        QCOMPARE(own.run.request.spec.readNoise, 2.0);
        QVERIFY(!own.run.request.start.empty());

        settings.options.order = 3;
        settings.objective = ObjectiveKind::LeastSquares;
        settings.readNoise = 0.5;
        settings.solver.stages = {2, 3};
        settings.solver.gradientTolerance = 1e-4;
        settings.solver.computeUncertainty = false;
        const PresetRun given = preparePresetRun("demo", settings);
        QCOMPARE(given.run.request.spec.basis.maxOrder, 3); // the last stage
        QCOMPARE(given.run.request.stages, (std::vector<int>{2, 3}));
        QVERIFY(given.run.request.start.empty()); // stages seed each other
        QCOMPARE(int(given.run.request.spec.objective), int(ObjectiveKind::LeastSquares));
        QCOMPARE(given.run.request.spec.readNoise, 0.5);
        QCOMPARE(given.run.request.solver.gradientTolerance, 1e-4);
        QCOMPARE(given.run.request.solver.functionTolerance, presetDefaults("demo").functionTolerance);
        QCOMPARE(given.run.request.solver.maxIterations, 5);
        QVERIFY(!given.run.request.analysis.computeUncertainty);
        // The data are the preset's at its seed, whatever the model: the same pixels.
        QCOMPARE(given.run.request.spec.planes.front().data.pixels, own.run.request.spec.planes.front().data.pixels);
    }

    // Bad settings are refused as a session's are, with the setting named; a bad preset input as invalid_argument.
    void badSettingsAreRefused()
    {
        PresetSettings settings = smallPreset("demo", 32, 5);
        settings.solver.stages = {4, 2};
        try {
            preparePresetRun("demo", settings);
            QFAIL("decreasing stages were taken");
        } catch (const SettingsError& e) {
            QCOMPARE(QString::fromStdString(e.setting()), QStringLiteral("stages"));
        }
        settings = smallPreset("demo", 32, 5);
        settings.options.order = 99;
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, preparePresetRun("demo", settings));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, preparePresetRun("nonesuch", smallPreset("demo", 32, 5)));
    }

    // A preset as a session (presetSession): its planes read as simulate's cube, its model and solver the preset's;
    // prepareRun takes it as a session file's, at the preset's sampling and with its planes.
    void presetSessionRunsThroughPrepareRun_data()
    {
        QTest::addColumn<QString>("preset");
        for (const char* name : {"demo", "pupil", "vectorial"})
            QTest::newRow(name) << QString::fromLatin1(name);
    }

    void presetSessionRunsThroughPrepareRun()
    {
        QFETCH(QString, preset);
        const std::string name = preset.toStdString();
        PresetOptions options;
        options.grid = 32;
        const PresetSession loaded = presetSession(name, options);
        const PresetCase c = makePreset(name, options);
        QCOMPARE(loaded.session.dataset.planes.size(), c.spec.planes.size());
        for (size_t k = 0; k < c.spec.planes.size(); ++k) {
            const std::vector<double>& read = loaded.session.dataset.planes[k].raw.pixels;
            QCOMPARE(read.size(), c.spec.planes[k].data.pixels.size());
            for (size_t i = 0; i < read.size(); i += 97)
                WFS_VERIFY_CLOSE(read[i], c.spec.planes[k].data.pixels[i], 1e-6, 1e-6); // FITS keeps float32 or better
        }
        ModelSettings model;
        SolverSettings solver = presetSolverSettings(name);
        model.order = c.spec.basis.maxOrder;
        applyPresetSettings(name, model, solver);
        QCOMPARE(loaded.session.model.order, model.order);
        QCOMPARE(int(loaded.session.model.phaseModel), int(model.phaseModel));
        QCOMPARE(int(loaded.session.model.imagingModel), int(model.imagingModel));
        QCOMPARE(int(loaded.session.solver.optimizer), int(solver.optimizer));
        QCOMPARE(loaded.session.solver.gradientTolerance, presetDefaults(name).gradientTolerance);
        QCOMPARE(loaded.truth.terms.size(), c.truth.terms.size());

        const PreparedRun run = prepareRun(loaded.session);
        QCOMPARE(run.request.spec.planes.size(), c.spec.planes.size());
        WFS_VERIFY_CLOSE(run.context.samplingQ, c.spec.grid.spacing * c.spec.grid.size / 2.0, 1e-6, 0.0);
        QCOMPARE(run.request.spec.basis.maxOrder, c.spec.basis.maxOrder);
        QCOMPARE(int(run.request.spec.model), int(c.spec.model));
    }

    // Core's option table says which reconstruct options a preset's run takes: exactly those PresetSettings carries
    // (grid and order in its options, objective, read noise, and the solver's stages and analysis); every other
    // metadata, preparation and model option describes files.
    void optionTableNamesThePresetOptions()
    {
        QStringList taken;
        int total = 0;
        for (const auto& group : {metadataOptionHelp(), preprocessOptionHelp(), modelOptionHelp()})
            for (const OptionHelp& o : group) {
                ++total;
                if (o.withPreset)
                    taken << o.name;
            }
        std::sort(taken.begin(), taken.end());
        QCOMPARE(taken, (QStringList{QStringLiteral("grid"), QStringLiteral("no-uncertainty"), QStringLiteral("objective"),
                                     QStringLiteral("order"), QStringLiteral("read-noise"), QStringLiteral("remove-defocus"),
                                     QStringLiteral("stages")}));
        QVERIFY(total - taken.size() > 41); // the vectorial model's options are named too, not only the old hand list's 41
    }
};

QTEST_GUILESS_MAIN(TestPresetSession)
#include "tst_presetsession.moc"
