// The vectorial model in the desktop program (issue 24 item 6), on the offscreen platform: the setup panel's
// Imaging model box gives the same ModelSettings as the command line's flags, a session with the vectorial model
// round-trips through the desktop, and bad values (a sample index below 1, a negative depth, a dipole angle out of
// range, a vectorial model without the NA) are refused with the setting named, in the command line's words.
#include "IsolatedSettings.h"
#include "TestSupport.h"

#include "MainWindow.h"
#include "SetupPanel.h"

#include "engine/Presets.h"
#include "io/SettingOptions.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QSignalSpy>
#include <QTemporaryDir>

#include <map>

using namespace wfs;
using namespace wfs::ui;

namespace {

// Options given by name, as the command line gives them.
class MapOptions : public OptionSource {
public:
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

// The first problem of `setting`, or an empty message.
std::string problemOf(const std::vector<SettingProblem>& problems, const std::string& setting)
{
    for (const SettingProblem& p : problems)
        if (p.setting == setting && p.level == MessageLevel::Error)
            return p.message;
    return {};
}

// What the command line says of an option ("--sample-index: <problem>"), without its label.
std::string cliProblem(const std::map<std::string, std::string>& options)
{
    ModelSettings m;
    try {
        applyModelOptions(MapOptions(options), m);
    } catch (const std::exception& e) {
        const std::string what = e.what();
        const size_t colon = what.find(": ");
        return colon == std::string::npos ? what : what.substr(colon + 2);
    }
    return {};
}

} // namespace

class TestVectorialUi : public QObject {
    Q_OBJECT

private:
    wfs::test::IsolatedSettings m_settings;
    QTemporaryDir m_dir;

    static bool waitFor(QSignalSpy& spy, int timeoutMs = 120000) { return spy.count() > 0 || spy.wait(timeoutMs); }

private slots:
    void initTestCase()
    {
        QVERIFY2(m_settings.isolate(QStringLiteral("tst_vectorialui")), qPrintable(QSettings().fileName()));
        QVERIFY(m_dir.isValid());
    }

    void panelChoiceEqualsTheCommandLine()
    {
        SetupPanel panel;
        auto* model = panel.findChild<QComboBox*>(QStringLiteral("imagingModelCombo"));
        QVERIFY(model);
        // The items are core's words, in core's order (settings/SettingsText.h).
        QCOMPARE(model->count(), int(settingTexts<ImagingModel>().size()));
        for (int i = 0; i < model->count(); ++i)
            QCOMPARE(model->itemText(i).toStdString(), settingTexts<ImagingModel>()[size_t(i)]);
        // The vectorial rows are shown only with the vectorial model.
        panel.show();
        auto* sample = panel.findChild<QDoubleSpinBox*>(QStringLiteral("sampleIndexSpin"));
        QVERIFY(sample);
        QVERIFY(!sample->isVisible());
        model->setCurrentIndex(settingIndex(ImagingModel::Vectorial));
        QVERIFY(sample->isVisible());
        // The index boxes' tops are core's plausible range.
        QCOMPARE(sample->maximum(), plausibleRange(Setting::SampleIndex).hi);
        sample->setValue(1.33);
        panel.findChild<QLineEdit*>(QStringLiteral("emitterDepthEdit"))->setText(QStringLiteral("2.5um"));
        panel.findChild<QCheckBox*>(QStringLiteral("fitEmitterDepthCheck"))->setChecked(true);
        panel.findChild<QComboBox*>(QStringLiteral("dipoleCombo"))->setCurrentText(QStringLiteral("45,30"));
        panel.findChild<QDoubleSpinBox*>(QStringLiteral("coverslipIndexSpin"))->setValue(1.52);
        panel.findChild<QLineEdit*>(QStringLiteral("coverslipThicknessEdit"))->setText(QStringLiteral("180um"));
        panel.findChild<QDoubleSpinBox*>(QStringLiteral("designCoverslipIndexSpin"))->setValue(1.515);
        panel.findChild<QLineEdit*>(QStringLiteral("designCoverslipThicknessEdit"))->setText(QStringLiteral("170um"));

        ModelSettings cli = panel.modelSettings(); // the panel's other fields, as the command line's defaults leave them
        applyModelOptions(MapOptions({{"model", "vectorial"},
                                      {"sample-index", "1.33"},
                                      {"emitter-depth", "2.5um"},
                                      {"fit-emitter-depth", ""},
                                      {"dipole", "45,30"},
                                      {"coverslip-index", "1.52"},
                                      {"coverslip-thickness", "180um"},
                                      {"design-coverslip-index", "1.515"},
                                      {"design-coverslip-thickness", "170um"}}),
                          cli);
        const ModelSettings shown = panel.modelSettings();
        QCOMPARE(shown.imagingModel, ImagingModel::Vectorial);
        QCOMPARE(shown.sampleIndex, 1.33);
        WFS_VERIFY_CLOSE(shown.emitterDepth, 2.5e-6, 1e-12, 0.0);
        QVERIFY(shown.fitEmitterDepth);
        QVERIFY(!shown.dipole.free);
        WFS_VERIFY_CLOSE(shown.dipole.theta, M_PI / 4, 1e-12, 0.0);
        QVERIFY(shown == cli);

        // And back: the settings shown again read the same.
        SetupPanel other;
        other.setModelSettings(shown);
        QVERIFY(other.modelSettings() == shown);
        QCOMPARE(other.findChild<QComboBox*>(QStringLiteral("dipoleCombo"))->currentText(), QStringLiteral("45,30"));
    }

    void badValuesAreRefusedByName_data()
    {
        QTest::addColumn<QString>("setting");
        QTest::addColumn<QString>("value");
        QTest::newRow("sample index below 1") << "sample-index"
                                              << "0.9";
        QTest::newRow("negative depth") << "emitter-depth"
                                        << "-1um";
        QTest::newRow("depth beyond 1 mm") << "emitter-depth"
                                           << "2mm";
        QTest::newRow("coverslip thickness") << "coverslip-thickness"
                                             << "3mm";
        QTest::newRow("dipole polar angle") << "dipole"
                                            << "200,0";
        QTest::newRow("dipole azimuth") << "dipole"
                                        << "45,400";
    }

    void badValuesAreRefusedByName()
    {
        QFETCH(QString, setting);
        QFETCH(QString, value);
        MainWindow window;
        QSignalSpy loaded(&window, &MainWindow::dataLoaded);
        window.loadDemo(false, QStringLiteral("vectorial"));
        QVERIFY(waitFor(loaded));
        SetupPanel* panel = window.setupPanel();
        QCOMPARE(panel->modelSettings().imagingModel, ImagingModel::Vectorial);
        QVERIFY2(!hasErrors(panel->checkSettings(window.dataset())), "the vectorial preset's settings are refused");

        if (setting == QLatin1String("sample-index"))
            panel->findChild<QDoubleSpinBox*>(QStringLiteral("sampleIndexSpin"))->setValue(value.toDouble());
        else if (setting == QLatin1String("emitter-depth"))
            panel->findChild<QLineEdit*>(QStringLiteral("emitterDepthEdit"))->setText(value);
        else if (setting == QLatin1String("coverslip-thickness"))
            panel->findChild<QLineEdit*>(QStringLiteral("coverslipThicknessEdit"))->setText(value);
        else
            panel->findChild<QComboBox*>(QStringLiteral("dipoleCombo"))->setCurrentText(value);
        const std::vector<SettingProblem> problems = panel->checkSettings(window.dataset());
        const std::string message = problemOf(problems, setting.toStdString());
        QVERIFY2(!message.empty(), qPrintable(setting + QStringLiteral(" is not named")));
        // The field is marked, and the words are the command line's.
        QVERIFY(!panel->problemText(setting.toStdString()).isEmpty());
        QCOMPARE(QString::fromStdString(message),
                 setting + QStringLiteral(": ")
                     + QString::fromStdString(cliProblem({{"model", "vectorial"}, {setting.toStdString(), value.toStdString()}})));
        // The workflow refuses what the panel refuses (one check, core's).
        QVERIFY(!panel->modelSettings().isValid(nullptr));
    }

    // Issue 42: no built-in preset warns about its own data (the vectorial one said "PSF reaches the edge, 46.1 % of
    // peak"): after its fit, no warning in Messages names one of its planes (the preparation's warnings do). The
    // fit's own notes (L-BFGS for a zonal pupil's many parameters) are about the method, not the data.
    void presetsDoNotWarnAboutTheirData_data()
    {
        QTest::addColumn<QString>("preset");
        for (const QString& preset : MainWindow::presetSessionNames())
            QTest::newRow(qPrintable(preset)) << preset;
    }

    void presetsDoNotWarnAboutTheirData()
    {
        QFETCH(QString, preset);
        MainWindow window;
        QSignalSpy finished(&window, &MainWindow::fitFinished);
        window.loadDemo(true, preset);
        QVERIFY(waitFor(finished));
        auto* log = window.findChild<QPlainTextEdit*>(QStringLiteral("messageLog"));
        QVERIFY(log);
        QStringList sources;
        for (const DatasetPlane& plane : window.dataset().planes)
            sources << QString::fromStdString(plane.raw.source);
        QVERIFY(!sources.isEmpty());
        QStringList warnings;
        for (const QString& line : log->toPlainText().split(QLatin1Char('\n')))
            if (line.contains(QStringLiteral("warning")))
                for (const QString& source : sources)
                    if (line.contains(source))
                        warnings << line;
        QVERIFY2(warnings.isEmpty(), qPrintable(warnings.join(QLatin1Char('\n'))));
    }

    void vectorialWithoutNaIsRefused()
    {
        MainWindow window;
        QSignalSpy loaded(&window, &MainWindow::dataLoaded);
        window.loadDemo(false, QStringLiteral("vectorial"));
        QVERIFY(waitFor(loaded));
        Dataset data = window.dataset();
        data.metadata.numericalAperture.reset();
        data.metadata.origin.erase("numericalAperture");
        window.setupPanel()->showMetadata(data.metadata);
        const std::vector<SettingProblem> problems = window.setupPanel()->checkSettings(data);
        const std::string message = problemOf(problems, "na");
        QVERIFY2(message.find("vectorial model") != std::string::npos, message.c_str());
    }

    void vectorialSessionRoundTrips()
    {
        MainWindow window;
        window.resize(1280, 800);
        window.show();
        QSignalSpy loaded(&window, &MainWindow::dataLoaded);
        window.loadDemo(false, QStringLiteral("vectorial"));
        QVERIFY(waitFor(loaded));
        ModelSettings model = window.setupPanel()->modelSettings();
        // The preset's own model (core's applyPresetSettings), then values other than its defaults.
        QCOMPARE(model.imagingModel, ImagingModel::Vectorial);
        QCOMPARE(model.sampleIndex, kVectorialPresetSampleIndex);
        QCOMPARE(model.emitterDepth, kVectorialPresetDepth);
        model.fitEmitterDepth = true;
        model.dipole = *dipoleFromText("x");
        model.coverslipIndex = 1.52;
        model.coverslipThickness = 160e-6;
        model.designCoverslipThickness = 170e-6;
        window.setupPanel()->setModelSettings(model);
        const ModelSettings shown = window.setupPanel()->modelSettings();
        WFS_VERIFY_CLOSE(shown.coverslipThickness, 160e-6, 1e-12, 0.0);

        const QString path = m_dir.filePath(QStringLiteral("vectorial-session.json"));
        QVERIFY(window.saveSessionTo(path));
        MainWindow reopened;
        QSignalSpy reloaded(&reopened, &MainWindow::dataLoaded);
        reopened.openSessionFrom(path);
        QVERIFY(waitFor(reloaded));
        const ModelSettings back = reopened.setupPanel()->modelSettings();
        QCOMPARE(back.imagingModel, ImagingModel::Vectorial);
        QVERIFY(back.fitEmitterDepth);
        QCOMPARE(back.dipole, *dipoleFromText("x"));
        QVERIFY(back == shown);
    }
};

QTEST_MAIN(TestVectorialUi)
#include "tst_vectorialui.moc"
