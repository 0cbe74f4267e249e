// A preset's run through core's workflow (engine/Workflow.h: a simulated session through prepareRun), the one path every front end
// calls for a preset: the request it fills is the one the command line built from makePreset by hand before, and
// fits to the same result; the settings a front end gives (order, objective, read noise, stages, solver rules)
// override the preset's own, checked as a session's are; core's option table says which options those are.
#include "TestSupport.h"

#include "engine/Presets.h"
#include "engine/Workflow.h"
#include "io/ResultJson.h"
#include "io/SettingOptions.h"

#include <QJsonDocument>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>

using namespace wfs;

namespace {

// A preset's request as wavefront-cli reconstruct built it before presets ran through the workflow: the preset's problem, start
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

Session smallPreset(const std::string& name, int grid, int maxIterations)
{
    Session session = simulatedSession(name);
    session.simulated->options.grid = grid;
    session.solver.maxIterations = maxIterations;
    return session;
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
        const Session settings = smallPreset(name, grid, iterations);
        const PreparedRun run = prepareRun(settings);
        const ReconstructionRequest expected = handBuiltRequest(name, settings.simulated->options, iterations);

        const PresetCase c = makePreset(name, settings.simulated->options);
        QVERIFY(run.truth);
        QCOMPARE(run.truth->terms.size(), c.truth.terms.size());
        QCOMPARE(QString::fromStdString(run.noiseDescription), QString::fromStdString(c.noiseDescription));
        QCOMPARE(QString::fromStdString(run.context.preset), preset);
        QVERIFY(run.dataset.planes.empty()); // the planes are the request's, remade from the preset
        QCOMPARE(run.problem.spec.planes.size(), c.spec.planes.size());
        QCOMPARE(run.request.start, expected.start);
        QCOMPARE(run.request.spec.planes.size(), expected.spec.planes.size());
        for (size_t k = 0; k < expected.spec.planes.size(); ++k)
            QCOMPARE(run.request.spec.planes[k].data.pixels, expected.spec.planes[k].data.pixels);
        QCOMPARE(run.request.solver.gradientTolerance, presetDefaults(name).gradientTolerance);
        QCOMPARE(run.request.solver.functionTolerance, presetDefaults(name).functionTolerance);
        QCOMPARE(int(run.request.solver.optimizer), int(expected.solver.optimizer));

        const FitResult viaWorkflow = reconstruct(run.request, {}, nullptr);
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
        Session settings = smallPreset("demo", 32, 5);
        const PreparedRun own = prepareRun(settings);
        QCOMPARE(own.request.spec.basis.maxOrder, presetDefaults("demo").order);
        QCOMPARE(int(own.request.spec.objective), int(ObjectiveKind::Poisson));
        QCOMPARE(own.request.spec.readNoise, 2.0);
        QVERIFY(!own.request.start.empty());

        settings.simulated->options.order = 3;
        settings.simulated->objective = ObjectiveKind::LeastSquares;
        settings.simulated->readNoise = 0.5;
        settings.solver.stages = {2, 3};
        settings.solver.gradientTolerance = 1e-4;
        settings.solver.computeUncertainty = false;
        const PreparedRun given = prepareRun(settings);
        QCOMPARE(given.request.spec.basis.maxOrder, 3); // the last stage
        QCOMPARE(given.request.stages, (std::vector<int>{2, 3}));
        QVERIFY(given.request.start.empty()); // stages seed each other
        QCOMPARE(int(given.request.spec.objective), int(ObjectiveKind::LeastSquares));
        QCOMPARE(given.request.spec.readNoise, 0.5);
        QCOMPARE(given.request.solver.gradientTolerance, 1e-4);
        QCOMPARE(given.request.solver.functionTolerance, presetDefaults("demo").functionTolerance);
        QCOMPARE(given.request.solver.maxIterations, 5);
        QVERIFY(!given.request.analysis.computeUncertainty);
        // The data are the preset's at its seed, whatever the model: the same pixels.
        QCOMPARE(given.request.spec.planes.front().data.pixels, own.request.spec.planes.front().data.pixels);
    }

    // Bad settings are refused as a session's are, with the setting named; a bad preset input as invalid_argument.
    void badSettingsAreRefused()
    {
        Session settings = smallPreset("demo", 32, 5);
        settings.solver.stages = {4, 2};
        try {
            prepareRun(settings);
            QFAIL("decreasing stages were taken");
        } catch (const SettingsError& e) {
            QCOMPARE(QString::fromStdString(e.setting()), QStringLiteral("stages"));
        }
        settings = smallPreset("demo", 32, 5);
        settings.simulated->options.order = 99;
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, prepareRun(settings));
        settings = smallPreset("demo", 32, 5);
        settings.simulated->preset = "nonesuch";
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, prepareRun(settings));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, simulatedSession("nonesuch"));
    }

    // A preset's run saved as a session file ("simulated") reopens with the same source and settings, and its saved
    // result is re-evaluated on the remade planes to the cost the fit ended at; a custom truth travels with it.
    void simulatedSessionRoundTrips()
    {
        Session session = smallPreset("demo", 32, 15);
        SimulatedSource& source = *session.simulated;
        source.options.seed = 7;
        source.objective = ObjectiveKind::LeastSquares;
        source.readNoise = 0.5;
        source.options.truth = Truth{ZernikeOrdering::Noll, ZernikeNormalization::Rms, {{4, 0.05}, {7, -0.03}}, "two terms"};
        session.solver.stages = {2, 4};
        const PreparedRun run = prepareRun(session);
        const FitResult fit = reconstruct(run.request, {}, nullptr);
        session.result = resultToJson(fit);
        session.resultParameters = fit.parameterValues;

        QTemporaryDir dir;
        const std::string path = dir.filePath(QStringLiteral("preset.json")).toStdString();
        saveSession(path, session, false);
        const OpenedSession opened = openSession(path);
        QVERIFY(opened.messages.empty());
        QVERIFY(opened.session.dataset.files.empty());
        QVERIFY(opened.session.simulated);
        const SimulatedSource& read = *opened.session.simulated;
        QCOMPARE(QString::fromStdString(read.preset), QStringLiteral("demo"));
        QCOMPARE(read.options.grid, 32);
        QCOMPARE(read.options.order, 0);
        QCOMPARE(read.options.seed, std::uint64_t(7));
        QVERIFY(read.options.noise);
        QCOMPARE(int(*read.objective), int(ObjectiveKind::LeastSquares));
        QCOMPARE(*read.readNoise, 0.5);
        QVERIFY(read.options.truth);
        QCOMPARE(read.options.truth->terms.size(), size_t(2));
        QCOMPARE(read.options.truth->terms[1].index, 7);
        QCOMPARE(read.options.truth->terms[1].valueWaves, -0.03);
        QCOMPARE(QString::fromStdString(read.options.truth->note), QStringLiteral("two terms"));
        QCOMPARE(opened.session.solver.stages, (std::vector<int>{2, 4}));

        const PreparedRun again = prepareRun(opened.session);
        QCOMPARE(again.request.spec.planes.front().data.pixels, run.request.spec.planes.front().data.pixels);
        const RestoredSession restored = restoreSession(opened.session);
        QVERIFY2(restored.result, restored.resultError.c_str());
        WFS_VERIFY_CLOSE(restored.result->solver.finalCost, fit.solver.finalCost, 1e-12, 0.0);
        QCOMPARE(restored.runs.size(), size_t(1)); // the saved result, read back as one run
        QVERIFY2(restored.runs.front().result, restored.runs.front().error.c_str());
    }

    // A malformed "simulated" object is refused naming its key; a session does not give both files and a preset.
    void malformedSimulatedSessionsAreRefused_data()
    {
        QTest::addColumn<QByteArray>("simulated");
        QTest::addColumn<QString>("key");
        QTest::newRow("no preset") << QByteArray(R"({"grid": 32})") << QStringLiteral("simulated.preset");
        QTest::newRow("negative seed") << QByteArray(R"({"preset": "demo", "seed": -1})") << QStringLiteral("simulated.seed");
        QTest::newRow("fractional grid") << QByteArray(R"({"preset": "demo", "grid": 32.5})") << QStringLiteral("simulated.grid");
        QTest::newRow("unknown objective") << QByteArray(R"({"preset": "demo", "objective": "huber"})")
                                           << QStringLiteral("simulated.objective");
        QTest::newRow("bad truth") << QByteArray(R"({"preset": "demo", "truth": {"coefficients": [{"index": 0, "value_waves": 1}]}})")
                                   << QStringLiteral("simulated.truth");
        QTest::newRow("not an object") << QByteArray(R"("demo")") << QStringLiteral("simulated");
    }

    void malformedSimulatedSessionsAreRefused()
    {
        QFETCH(QByteArray, simulated);
        QFETCH(QString, key);
        QJsonObject root = sessionToJson(smallPreset("demo", 32, 5), "/tmp/s.json");
        root.insert(QStringLiteral("simulated"), QJsonDocument::fromJson("[" + simulated + "]").array().at(0));
        try {
            sessionFromJson(root, "s.json");
            QFAIL("a malformed simulated source was taken");
        } catch (const SessionError& e) {
            QVERIFY2(QString::fromStdString(e.what()).contains("\"" + key + "\""), e.what());
        }
        // Files and a preset at once.
        root = sessionToJson(smallPreset("demo", 32, 5), "/tmp/s.json");
        QJsonArray inputs{QJsonObject{{QStringLiteral("path"), QStringLiteral("/tmp/a.fits")}}};
        root.insert(QStringLiteral("inputs"), inputs);
        QVERIFY_THROWS_EXCEPTION(SessionError, sessionFromJson(root, "s.json"));
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

    // Core's option table says which reconstruct options a preset's run takes: exactly those a simulated session carries
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
