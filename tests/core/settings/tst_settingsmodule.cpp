// The settings module (core/settings/): every text <-> enum table round-trips, the checks name the setting they
// refuse (each range written once: the order's in zernike::orderError, the stages' in SolverSettings), and the
// command line's options and the session's keys go through the same tables.
#include "io/Session.h"
#include "io/SettingOptions.h"
#include "settings/SettingsText.h"

#include <QJsonArray>
#include <QJsonObject>
#include <QTest>

#include <map>
#include <set>

using namespace wfs;

namespace {

// Options given by name, as the command line or the Python module would give them.
class MapOptions : public OptionSource {
public:
    MapOptions(const std::string& name, const std::string& value)
        : m_values{{name, value}}
    {
    }
    explicit MapOptions(std::map<std::string, std::string> values)
        : m_values(std::move(values))
    {
    }
    bool has(const char* name) const override { return m_values.count(name) > 0; }
    std::string value(const char* name) const override { return m_values.at(name); }
    std::string spell(const char* name) const override { return std::string("--") + name; }

private:
    std::map<std::string, std::string> m_values;
};

template <typename E>
void checkTable(const char* what)
{
    std::set<std::string> texts, options;
    for (E value : SettingEnum<E>::values) {
        const std::string text = settingText(value);
        QVERIFY2(!text.empty() && text != "?", what);
        QVERIFY2(texts.insert(text).second, (std::string(what) + ": '" + text + "' twice").c_str());
        QVERIFY2(settingFromText<E>(text) == value, (std::string(what) + ": '" + text + "' does not read back").c_str());
        const std::string option = optionText(value);
        QVERIFY2(options.insert(option).second, what);
        QVERIFY2(optionFromText<E>(option) == value, (std::string(what) + ": option '" + option + "' does not read back").c_str());
        QCOMPARE(SettingEnum<E>::values[settingIndex(value)], value);
    }
    QCOMPARE(settingTexts<E>().size(), std::size(SettingEnum<E>::values));
    QCOMPARE(optionTexts<E>().size(), std::size(SettingEnum<E>::values)); // the command line offers every value
    QVERIFY(!settingFromText<E>("no-such-value"));
    QVERIFY(!optionFromText<E>(""));
}

template <typename Settings>
QString why(const Settings& settings)
{
    std::string text;
    return settings.isValid(&text) ? QString() : QString::fromStdString(text);
}

} // namespace

class TestSettingsModule : public QObject {
    Q_OBJECT
private slots:
    void everyTableRoundTrips()
    {
        checkTable<ZernikeOrdering>("ordering");
        checkTable<ZernikeNormalization>("normalization");
        checkTable<ObjectiveKind>("objective");
        checkTable<PupilPhaseModel>("pupil phase");
        checkTable<PupilAmplitudeModel>("pupil amplitude");
        checkTable<DefocusModel>("defocus model");
        checkTable<CentreMethod>("centre");
        checkTable<PlaneDefocus::Kind>("plane defocus");
        checkTable<BackendKind>("backend");
        checkTable<GradientKind>("gradient");
        checkTable<OptimizerKind>("optimizer");
        checkTable<Precision>("precision");
        checkTable<PhaseUnit>("phase unit");
        // The one spelling that differs: the command line's --objective weighted.
        QCOMPARE(std::string(optionText(ObjectiveKind::WeightedLeastSquares)), std::string("weighted"));
        QCOMPARE(std::string(settingText(ObjectiveKind::WeightedLeastSquares)), std::string("weighted-least-squares"));
        QCOMPARE(settingTexts<PupilPhaseModel>(), (std::vector<std::string>{"zernike", "zonal", "both"}));
    }

    void orderRangeIsWrittenOnce()
    {
        QVERIFY(zernike::orderError(1).empty());
        QVERIFY(zernike::orderError(zernike::kMaxOrder).empty());
        QCOMPARE(zernike::orderError(0), std::string("must be between 1 and 15 (got 0)"));
        QCOMPARE(zernike::orderError(16), std::string("must be between 1 and 15 (got 16)"));
        ModelSettings model;
        QVERIFY(model.isValid(nullptr));
        model.order = 16;
        QCOMPARE(why(model), QStringLiteral("order: must be between 1 and 15 (got 16)"));
        SolverSettings solver;
        solver.stages = {2, 16};
        QVERIFY(why(solver).startsWith(QLatin1String("stages: must be increasing Zernike orders from 1 to 15")));
        solver.stages = {4, 4};
        QVERIFY(why(solver).startsWith(QLatin1String("stages: ")));
        solver.stages = {2, 4, 6};
        QVERIFY(solver.isValid(nullptr));
        // With stages the last stage is the order: the model's own order is not what is fitted, so not checked.
        QCOMPARE(fittedOrders(model, solver), (std::vector<int>{2, 4, 6}));
    }

    // Issue 45: "the last stage is the order" is settled where settings are read (options, session files), so that
    // everything after reads model.order; settings never settled are refused by name, not fitted at one order and
    // reported at another.
    void theOrderIsSettledWhenRead()
    {
        Session fromOptions;
        applyRunOptions(MapOptions(std::map<std::string, std::string>{{"order", "8"}, {"stages", "2,4"}}), fromOptions, true);
        QCOMPARE(fromOptions.model.order, 4);
        QJsonObject root = sessionToJson(Session{}, "/tmp/s.json");
        QJsonObject model = root.value(QStringLiteral("model")).toObject(), solver = root.value(QStringLiteral("solver")).toObject();
        model.insert(QStringLiteral("order"), 4);
        solver.insert(QStringLiteral("stages"), QJsonArray{2, 6});
        root.insert(QStringLiteral("model"), model);
        root.insert(QStringLiteral("solver"), solver);
        QCOMPARE(sessionFromJson(root, "s.json").model.order, 6);
        ModelSettings unsettled;
        unsettled.order = 4;
        SolverSettings staged;
        staged.stages = {2, 6};
        try {
            checkSettings(unsettled, staged);
            QFAIL("order 4 with stages 2,6 is checked as valid");
        } catch (const SettingsError& e) {
            QCOMPARE(e.setting(), std::string("order"));
        }
        settleOrder(unsettled, staged);
        QCOMPARE(unsettled.order, 6);
        checkSettings(unsettled, staged);
        staged.stages = {4, 2}; // refused as the stages, by checkSettings; the order is left alone
        ModelSettings untouched;
        settleOrder(untouched, staged);
        QCOMPARE(untouched.order, ModelSettings{}.order);
    }

    void everyGroupNamesWhatItRefuses()
    {
        ModelSettings model;
        model.spectralSamples = 16;
        QVERIFY(why(model).startsWith(QLatin1String("spectral-samples: ")));
        model = {};
        model.readNoise = -1.0;
        QVERIFY(why(model).startsWith(QLatin1String("read-noise: ")));
        // What Problem would refuse in any data set, refused without one (batch checks its settings so).
        model = {};
        model.grid = 31;
        QVERIFY(why(model).startsWith(QLatin1String("grid: ")));
        model.grid = 0; // the data's size
        QVERIFY(model.isValid(nullptr));
        model.obscuration = 1.5;
        QVERIFY(why(model).startsWith(QLatin1String("obscuration: ")));
        model = {};
        model.spiderWidth = 0.5;
        QVERIFY(why(model).startsWith(QLatin1String("spider-width: ")));
        model = {};
        model.fixedTerms = {0}; // Noll counts from 1
        QVERIFY(why(model).startsWith(QLatin1String("fixed-terms: ")));
        model.ordering = ZernikeOrdering::Ansi; // ANSI from 0
        QVERIFY(model.isValid(nullptr));
        model = {};
        model.regularization = 0.0; // auto
        QVERIFY(model.isValid(nullptr));
        model.regularization = -1.0;
        QVERIFY(why(model).startsWith(QLatin1String("regularization: ")));

        SolverSettings solver;
        QVERIFY(solver.isValid(nullptr));
        solver.threads = 0;
        QVERIFY(why(solver).startsWith(QLatin1String("threads: ")));
        solver = {};
        solver.functionTolerance = -1.0;
        QVERIFY(why(solver).startsWith(QLatin1String("ftol: ")));

        PreprocessOptions preprocess;
        QVERIFY(preprocess.isValid(nullptr));
        preprocess.cropSize = 33;
        QVERIFY(why(preprocess).startsWith(QLatin1String("crop: ")));
        preprocess = {};
        preprocess.clipSigma = 0.0;
        QVERIFY(why(preprocess).startsWith(QLatin1String("clip-sigma: ")));

        DatasetMetadata metadata;
        QVERIFY(metadata.isValid(nullptr));
        metadata.wavelength = 633.0; // metres: a unit left out
        metadata.origin["wavelength"] = "a.fits: keyword WAVELENG";
        QVERIFY(why(metadata).contains(QLatin1String("a.fits: keyword WAVELENG")));
        QCOMPARE(metadata.issues().front().setting, std::string("wavelength"));
        metadata = {};
        metadata.numericalAperture = 1.4;
        QCOMPARE(metadata.issues().front().setting, std::string("na"));
        QCOMPARE(metadata.issues().front().alternatives, std::vector<std::string>{"immersion"});
    }

    void zonalTermsHaveOneDefinition()
    {
        ModelSettings model;
        QVERIFY(!model.hasZonalTerms());
        model.amplitudeModel = PupilAmplitudeModel::Gaussian;
        QVERIFY(!model.hasZonalTerms());
        model.amplitudeModel = PupilAmplitudeModel::Zonal;
        QVERIFY(model.hasZonalTerms());
        for (PupilPhaseModel phase : {PupilPhaseModel::Zonal, PupilPhaseModel::Both}) {
            model = {};
            model.phaseModel = phase;
            QVERIFY(model.hasZonalTerms());
        }
    }

    void optionsAndSessionKeysUseTheTables()
    {
        // Every pupil phase through the command line's option and back out of a session file.
        for (PupilPhaseModel phase : SettingEnum<PupilPhaseModel>::values) {
            Session session;
            applyModelOptions(MapOptions("pupil-phase", settingText(phase)), session.model);
            QCOMPARE(session.model.phaseModel, phase);
            const QJsonObject json = sessionToJson(session, "/tmp/s.json");
            QCOMPARE(json.value(QStringLiteral("model")).toObject().value(QStringLiteral("pupil_phase")).toString().toStdString(),
                     std::string(settingText(phase)));
            QCOMPARE(sessionFromJson(json, "s.json").model.phaseModel, phase);
        }
        for (ObjectiveKind objective : SettingEnum<ObjectiveKind>::values) {
            Session session;
            applyModelOptions(MapOptions("objective", optionText(objective)), session.model);
            QCOMPARE(*session.model.objective, objective);
            QCOMPARE(*sessionFromJson(sessionToJson(session, "/tmp/s.json"), "s.json").model.objective, objective);
        }
        for (CentreMethod centre : SettingEnum<CentreMethod>::values) {
            Session session;
            applyPreprocessOptions(MapOptions("centre", settingText(centre)), session.dataset.preprocess);
            QCOMPARE(sessionFromJson(sessionToJson(session, "/tmp/s.json"), "s.json").dataset.preprocess.centre, centre);
        }
        for (Precision precision : SettingEnum<Precision>::values) {
            Session session;
            applySolverOptions(MapOptions("precision", settingText(precision)), session.solver);
            QCOMPARE(sessionFromJson(sessionToJson(session, "/tmp/s.json"), "s.json").solver.precision, precision);
        }
        // A word outside the table is refused with the table's words.
        Session session;
        try {
            applyModelOptions(MapOptions("pupil-phase", "zonall"), session.model);
            QFAIL("a bad pupil phase was accepted");
        } catch (const OptionError& e) {
            QCOMPARE(QString::fromUtf8(e.what()), QStringLiteral("--pupil-phase: 'zonall' is not one of zernike|zonal|both"));
        }
        // The session reader refuses the same way, naming the key.
        QJsonObject json = sessionToJson(session, "/tmp/s.json");
        QJsonObject model = json.value(QStringLiteral("model")).toObject();
        model.insert(QStringLiteral("pupil_phase"), QStringLiteral("zonall"));
        json.insert(QStringLiteral("model"), model);
        try {
            sessionFromJson(json, "s.json");
            QFAIL("a bad pupil phase was read");
        } catch (const SessionError& e) {
            QVERIFY2(QString::fromUtf8(e.what()).contains(QLatin1String("\"model.pupil_phase\" must be one of zernike|zonal|both")),
                     e.what());
        }
    }

    void solverDefaultsAreTheCommandLines()
    {
        // One set of defaults: the command line's help states these, the desktop's fields start at them.
        const SolverSettings defaults;
        QCOMPARE(defaults.gradientTolerance, 1e-6);
        QCOMPARE(defaults.functionTolerance, 1e-11);
        QCOMPARE(defaults.maxIterations, 2000);
        const std::vector<OptionHelp> help = solverOptionHelp();
        for (const OptionHelp& option : help) {
            if (option.name == QLatin1String("gtol"))
                QVERIFY(option.description.contains(QLatin1String("(default 1e-06")));
            if (option.name == QLatin1String("ftol"))
                QVERIFY(option.description.contains(QLatin1String("(default 1e-11")));
        }
    }
};

QTEST_GUILESS_MAIN(TestSettingsModule)
#include "tst_settingsmodule.moc"
