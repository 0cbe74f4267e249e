// Opening a stack is a guided step (issue 23), on the offscreen platform: the bead z-stack opened through
// MainWindow::openFiles shows its 21 planes as thumbnails with z, proposes 5 of them around the brightest,
// lists every missing setting at once (beside the fields, never as message boxes), keeps Start disabled
// until they are filled, and then starts. Contradicting metadata are shown as a choice; an unreadable
// file leaves the loaded stack as it was; every setting has a tooltip with its meaning, unit and a
// typical value.
#include "IsolatedSettings.h"
#include "TestSupport.h"

#include "MainWindow.h"
#include "SetupPanel.h"
#include "StackLoadPanel.h"

#include "engine/ReconstructionEngine.h"
#include "engine/Workflow.h"
#include "io/TiffWriter.h"

#include <QApplication>
#include <QComboBox>
#include <QDir>
#include <QDoubleSpinBox>
#include <QFile>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QMessageBox>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTabWidget>
#include <QTemporaryDir>

#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>

using namespace wfs;
using namespace wfs::ui;

namespace {

bool anyMessageBox()
{
    const auto widgets = QApplication::topLevelWidgets();
    return std::any_of(widgets.begin(), widgets.end(), [](QWidget* w) { return qobject_cast<QMessageBox*>(w) != nullptr; });
}

bool hasError(const std::vector<SettingProblem>& problems, const std::string& setting)
{
    return std::any_of(problems.begin(), problems.end(),
                       [&](const SettingProblem& p) { return p.setting == setting && p.level == MessageLevel::Error; });
}

QString problemsText(const std::vector<SettingProblem>& problems)
{
    QStringList lines;
    for (const SettingProblem& p : problems)
        lines << QString::fromStdString(std::string(messageLevelName(p.level)) + " " + p.setting + ": " + p.message);
    return lines.join(QLatin1Char('\n'));
}

int errorCount(const std::vector<SettingProblem>& problems)
{
    return int(std::count_if(problems.begin(), problems.end(), [](const SettingProblem& p) { return p.level == MessageLevel::Error; }));
}

} // namespace

class TestLoadStep : public QObject {
    Q_OBJECT

    test::IsolatedSettings m_settings;
    QTemporaryDir m_dir;
    std::unique_ptr<MainWindow> m_window;

    static bool waitFor(QSignalSpy& spy, int timeoutMs = 60000) { return spy.count() > 0 || spy.wait(timeoutMs); }

    StackLoadPanel* step() const { return loadStepOf(m_window.get()); }

    // Types `text` into one of the step's value fields, as a user does (then leaves the field).
    void type(const QString& objectName, const QString& text)
    {
        auto* edit = m_window->findChild<QLineEdit*>(objectName);
        QVERIFY2(edit, qPrintable(objectName));
        edit->setText(text);
        emit edit->editingFinished();
    }

    // With WFS_LOADSTEP_SHOTS=folder, pictures of the window at the states worth looking at (for review).
    void shot(const QString& name)
    {
        const QString dir = qEnvironmentVariable("WFS_LOADSTEP_SHOTS");
        if (dir.isEmpty())
            return;
        QTest::qWait(100); // the layouts settle as they would on screen
        m_window->grab().save(QDir(dir).filePath(name + QStringLiteral(".png")));
    }

    void open(const QString& path)
    {
        QSignalSpy loaded(m_window.get(), &MainWindow::dataLoaded);
        m_window->openFiles({path});
        QVERIFY(waitFor(loaded));
    }

private slots:
    void initTestCase()
    {
        QVERIFY2(m_settings.isolate(QStringLiteral("tst_loadstep")), qPrintable(QSettings().fileName()));
        QVERIFY(m_dir.isValid());
        m_window = std::make_unique<MainWindow>();
        m_window->resize(1366, 768);
        m_window->show();
    }

    void everySettingHasATooltip()
    {
        // Meaning, unit and a typical value: each tooltip is a sentence that gives a number.
        const char* fields[] = {"wavelengthSpin",   "pixelPitchSpin",     "fNumberSpin",   "naSpin",
                                "immersionSpin",    "samplingQSpin",      "zStepSpin",     "focusPlaneSpin",
                                "zDirectionCombo",  "defocusModelCombo",  "orderSpin",     "field_grid",
                                "field_ordering",   "field_read_noise",   "field_threads", "field_max_iterations",
                                "field_crop",       "regularizationEdit", "gainEdit",      "offsetEdit",
                                "field_obscuration"};
        for (const char* name : fields) {
            auto* widget = m_window->setupPanel()->findChild<QWidget*>(QString::fromLatin1(name));
            QVERIFY2(widget, name);
            const QString tip = widget->toolTip();
            QVERIFY2(tip.size() > 40, qPrintable(QStringLiteral("%1: '%2'").arg(QString::fromLatin1(name), tip)));
            QVERIFY2(tip.contains(QRegularExpression(QStringLiteral("\\d"))),
                     qPrintable(QStringLiteral("%1 has no typical value: %2").arg(QString::fromLatin1(name), tip)));
        }
        // Choices without a number: the tooltip explains each choice.
        for (const char* name : {"field_objective", "field_gradient", "field_optimizer", "field_centre"}) {
            auto* widget = m_window->setupPanel()->findChild<QWidget*>(QString::fromLatin1(name));
            QVERIFY2(widget && widget->toolTip().size() > 60, name);
        }
        const QString wavelength = m_window->setupPanel()->findChild<QWidget*>(QStringLiteral("wavelengthSpin"))->toolTip();
        QVERIFY(wavelength.contains(QStringLiteral("nm")));
        QVERIFY(m_window->setupPanel()->findChild<QWidget*>(QStringLiteral("pixelPitchSpin"))->toolTip().contains(QStringLiteral("µm")));
        QVERIFY(m_window->setupPanel()->findChild<QWidget*>(QStringLiteral("naSpin"))->toolTip().contains(QStringLiteral("1.4")));
    }

    void beadStackOpensAsAGuidedStep()
    {
        open(test::dataPath(QStringLiteral("bead_zstack_BIL113.tif")));
        QCOMPARE(int(m_window->dataset().planes.size()), 21);
        // Issue 42: the title names the data.
        QCOMPARE(m_window->windowTitle(), QStringLiteral("bead_zstack_BIL113.tif — Wavefront Studio"));
        StackLoadPanel* panel = step();
        QVERIFY2(panel, "no loading step after opening a stack");
        QVERIFY(panel->isVisible()); // in front, not behind another tab
        QCOMPARE(m_window->tabs()->currentWidget(), static_cast<QWidget*>(panel));
        QTRY_COMPARE_WITH_TIMEOUT(panel->thumbnailCount(), 21, 30000);
        QTRY_COMPARE(panel->plan().planes.size(), size_t(5));

        // 21 thumbnails, each with its z from the focus plane (the z step, 0.3 um, from the acquisition log).
        const StackPlan& plan = panel->plan();
        for (int k = 0; k < 21; ++k) {
            const QString text = panel->thumbnailText(k);
            QVERIFY2(text.contains(QStringLiteral("µm")), qPrintable(text));
        }
        const QString focus = panel->thumbnailText(plan.focusPlane);
        QVERIFY2(focus.contains(QStringLiteral("focus")) && focus.contains(QStringLiteral("z 0 µm")), qPrintable(focus));
        const int outer = plan.planes.back();
        const QString outerText = panel->thumbnailText(outer);
        const QString expected = QStringLiteral("+%1 µm").arg((outer - plan.focusPlane) * 0.3, 0, 'g', 3);
        QVERIFY2(outerText.contains(expected), qPrintable(outerText + QStringLiteral(" lacks ") + expected));

        // The proposal is what takes part: 5 planes around the brightest, not all 21.
        QCOMPARE(m_window->setupPanel()->planesInUse(), plan.planes);
        auto* focusSpin = m_window->findChild<QDoubleSpinBox*>(QStringLiteral("focusPlaneSpin"));
        QCOMPARE(focusSpin->value(), double(plan.focusPlane));

        // Every missing setting at once, in the step and beside the setup panel's fields.
        const std::vector<SettingProblem>& problems = panel->problems();
        QVERIFY2(hasError(problems, "wavelength") && hasError(problems, "pixel-scale") && hasError(problems, "na"),
                 qPrintable(problemsText(problems)));
        QCOMPARE(errorCount(problems), 3);
        auto* list = m_window->findChild<QListWidget*>(QStringLiteral("loadProblems"));
        QVERIFY(list && list->count() >= 3);
        for (const char* setting : {"wavelength", "pixel-scale", "na"})
            QVERIFY2(!m_window->setupPanel()->problemText(setting).isEmpty(), setting);
        QVERIFY(m_window->findChild<QWidget*>(QStringLiteral("wavelengthSpin"))->property("problem").toBool());
        QVERIFY(m_window->findChild<QWidget*>(QStringLiteral("wavelengthSpin"))->toolTip().contains(QStringLiteral("unknown")));
        QVERIFY(m_window->setupPanel()->problemText("z-step").isEmpty()); // known: not marked
        auto* origin = m_window->findChild<QLabel*>(QStringLiteral("loadOrigin_zStep"));
        QVERIFY2(origin && origin->text().contains(QStringLiteral("settings.txt")), qPrintable(origin ? origin->text() : QString()));

        // Start waits; pressing it anyway (the toolbar, Ctrl+R) names all three at once, without a message box.
        QVERIFY(!panel->canStart());
        QVERIFY(!m_window->findChild<QPushButton*>(QStringLiteral("startButton"))->isEnabled());
        QSignalSpy failed(m_window.get(), &MainWindow::fitFailed);
        m_window->startFit();
        QVERIFY(waitFor(failed, 5000));
        const QString message = failed.first().first().toString();
        QVERIFY2(message.contains(QStringLiteral("wavelength")) && message.contains(QStringLiteral("pixel pitch"))
                     && message.contains(QStringLiteral("numerical aperture")),
                 qPrintable(message));
        QVERIFY(!m_window->isFitting());
        QVERIFY(!anyMessageBox());
    }

    void fillingTheSettingsEnablesStart()
    {
        StackLoadPanel* panel = step();
        QVERIFY(panel);
        type(QStringLiteral("load_wavelength"), QStringLiteral("605 nm"));
        QVERIFY(!hasError(panel->problems(), "wavelength"));
        QVERIFY(!panel->canStart()); // two more to go
        type(QStringLiteral("load_pixelPitch"), QStringLiteral("0.1 um"));
        type(QStringLiteral("load_numericalAperture"), QStringLiteral("1.1"));
        type(QStringLiteral("load_immersionIndex"), QStringLiteral("1.33"));
        QVERIFY2(errorCount(panel->problems()) == 0, qPrintable(problemsText(panel->problems())));
        QVERIFY(panel->canStart());
        QVERIFY(m_window->findChild<QPushButton*>(QStringLiteral("startButton"))->isEnabled());
        QVERIFY(m_window->setupPanel()->problemText("wavelength").isEmpty());
        // The setup panel shows the same values; their origin is the user.
        QCOMPARE(m_window->findChild<QDoubleSpinBox*>(QStringLiteral("wavelengthSpin"))->value(), 605.0);
        QCOMPARE(m_window->findChild<QDoubleSpinBox*>(QStringLiteral("pixelPitchSpin"))->value(), 0.1);
        QCOMPARE(m_window->findChild<QDoubleSpinBox*>(QStringLiteral("naSpin"))->value(), 1.1);
        QCOMPARE(m_window->findChild<QLabel*>(QStringLiteral("loadOrigin_wavelength"))->text(), tr("you"));
        // A bare number is metres to core: refused by name with the value that was meant, not taken as 605 m.
        type(QStringLiteral("load_wavelength"), QStringLiteral("605"));
        QVERIFY(hasError(panel->problems(), "wavelength"));
        QVERIFY(!panel->canStart());
        const QString refusal = m_window->findChild<QLabel*>(QStringLiteral("loadStatus_wavelength"))->toolTip();
        QVERIFY2(refusal.contains(QStringLiteral("605nm")), qPrintable(refusal));                         // core's "did you mean 605nm?"
        QCOMPARE(m_window->findChild<QDoubleSpinBox*>(QStringLiteral("wavelengthSpin"))->value(), 605.0); // not taken
        type(QStringLiteral("load_wavelength"), QStringLiteral("605nm"));
        QVERIFY(panel->canStart());

        // At NA 1.1 in water the high-NA defocus is assumed unless chosen (issue 40): nothing to question. Choosing it
        // keeps it so; then Start runs the fit.
        QVERIFY2(std::none_of(panel->problems().begin(), panel->problems().end(),
                              [](const SettingProblem& p) { return p.setting == "defocus-model"; }),
                 qPrintable(problemsText(panel->problems())));
        auto* model = m_window->findChild<QComboBox*>(QStringLiteral("load_defocusModel"));
        model->setCurrentIndex(1);
        emit model->activated(1);
        QVERIFY2(panel->problems().empty(), qPrintable(problemsText(panel->problems())));
        shot(QStringLiteral("loadstep-filled"));
        QSignalSpy finished(m_window.get(), &MainWindow::fitFinished);
        QSignalSpy failed(m_window.get(), &MainWindow::fitFailed);
        m_window->findChild<QPushButton*>(QStringLiteral("loadStartButton"))->click();
        QTRY_VERIFY_WITH_TIMEOUT(m_window->isFitting() || !failed.isEmpty(), 60000);
        QVERIFY2(failed.isEmpty(), failed.isEmpty() ? "" : qPrintable(failed.first().first().toString()));
        // Issue 42: started from the Load tab, the fit is shown where it draws, not behind the Load tab.
        QCOMPARE(m_window->tabs()->currentWidget()->property("tabKey").toString(), QStringLiteral("phase"));
        m_window->cancelFit();
        QVERIFY(waitFor(finished, 120000));
        QVERIFY(!anyMessageBox());
    }

    // Issue 40: the desktop assumes as core does. The bead stack with the optics typed (and a crop) gives the same
    // planes, focus plane (assumed, and said so on the Results line) and coefficients as core's workflow run on the same
    // file and settings, which the CLI and the Python module call.
    void sameAssumptionsAndResultAsCore()
    {
        auto* crop = m_window->setupPanel()->findChild<QSpinBox*>(QStringLiteral("field_crop"));
        QVERIFY(crop);
        crop->setValue(64);
        const std::shared_ptr<void> uncrop(nullptr, [crop](void*) { crop->setValue(0); }); // the next tests' small images
        QSignalSpy finished(m_window.get(), &MainWindow::fitFinished);
        m_window->findChild<QPushButton*>(QStringLiteral("loadStartButton"))->click();
        QVERIFY(waitFor(finished, 120000));
        const std::shared_ptr<const FitResult> desktop = m_window->result();
        QVERIFY(desktop);

        Session session;
        addFiles(session.dataset, {test::dataPath(QStringLiteral("bead_zstack_BIL113.tif")).toStdString()});
        DatasetMetadata& m = session.dataset.metadata;
        m.wavelength = 605e-9;
        m.pixelPitch = 0.1e-6;
        m.numericalAperture = 1.1;
        m.immersionIndex = 1.33;
        m.defocusModel = DefocusModel::HighNa; // chosen in the step above
        for (const char* key : {"wavelength", "pixelPitch", "numericalAperture", "immersionIndex", "defocusModel"})
            m.origin[key] = "user";
        session.dataset.preprocess.cropSize = 64;
        const PreparedRun run = prepareRun(session);
        QCOMPARE(m_window->setupPanel()->planesInUse(), usedPlanes(run.dataset));
        QCOMPARE(*m_window->dataset().metadata.focusPlane, *run.dataset.metadata.focusPlane);
        ReconstructionEngine engine;
        engine.start(run.request);
        engine.wait();
        const FitResult core = *engine.result();
        QCOMPARE(desktop->coefficients.size(), core.coefficients.size());
        for (size_t k = 0; k < core.coefficients.size(); ++k)
            WFS_VERIFY_CLOSE(desktop->coefficients[k].waves, core.coefficients[k].waves, 0.0, 1e-9);
        WFS_VERIFY_CLOSE(desktop->rmsWaves, core.rmsWaves, 0.0, 1e-9);
        const auto focus = std::find_if(desktop->assumptions.begin(), desktop->assumptions.end(),
                                        [](const Assumption& a) { return a.setting == "focus-plane"; });
        QVERIFY2(focus != desktop->assumptions.end(), m_window->dataset().metadata.origin.count("focusPlane")
                                                          ? m_window->dataset().metadata.origin.at("focusPlane").c_str()
                                                          : "no origin");
        QCOMPARE(focus->value, std::string("10"));
        auto* key = m_window->findChild<QLabel*>(QStringLiteral("resultKeyLine"));
        QVERIFY2(key && key->text().contains(QStringLiteral("assumed: focus-plane 10"))
                     && key->text().contains(QStringLiteral("with defocus")),
                 key ? qPrintable(key->text()) : "no key line");
        shot(QStringLiteral("loadstep-fitted"));
    }

    void contradictingMetadataAreAChoice()
    {
        const QString tif = m_dir.filePath(QStringLiteral("contradicting.tif"));
        std::vector<Image> planes(3, Image(16, 16, 10.0));
        for (size_t k = 0; k < planes.size(); ++k)
            planes[k].at(8, 8) = 500.0 + 300.0 * double(k == 1);
        // An ImageJ stack whose z step (0.5 um) its sidecar contradicts (0.3 um).
        const std::string bytes = tiffStackBytes(planes, "ImageJ=1.11a\nimages=3\nslices=3\nunit=micron\nspacing=0.5\n");
        QVERIFY(wfs::test::writeFile(tif, QByteArray::fromStdString(bytes)));
        QVERIFY(wfs::test::writeFile(tif + QStringLiteral(".json"),
                                     R"({"z_step": "0.3um", "wavelength": "605nm", "pixel_size": "0.1um", "na": 1.4})"));
        open(tif);
        StackLoadPanel* panel = step();
        QVERIFY(panel);
        QTRY_COMPARE(panel->thumbnailCount(), 3);
        // Both z steps are shown, none taken silently; the NA above the immersion index (1, air) is named with both values.
        QVERIFY2(hasError(panel->problems(), "z-step"), qPrintable(problemsText(panel->problems())));
        QVERIFY2(hasError(panel->problems(), "na"), qPrintable(problemsText(panel->problems())));
        QVERIFY(!panel->canStart());
        const auto choices = m_window->findChildren<QPushButton*>(QStringLiteral("loadChoice_zStep"));
        QCOMPARE(choices.size(), 2);
        shot(QStringLiteral("loadstep-conflict"));
        QVERIFY(choices[0]->text().contains(QStringLiteral("0.3")) && choices[1]->text().contains(QStringLiteral("0.5")));
        choices[1]->click();
        QVERIFY(!hasError(panel->problems(), "z-step"));
        QCOMPARE(m_window->findChild<QDoubleSpinBox*>(QStringLiteral("zStepSpin"))->value(), 0.5);
        QVERIFY(m_window->findChildren<QPushButton*>(QStringLiteral("loadChoice_zStep")).isEmpty()
                || !m_window->findChildren<QPushButton*>(QStringLiteral("loadChoice_zStep")).first()->isVisible());
        QVERIFY(!m_window->setupPanel()->problemText("immersion").isEmpty()); // "or: set the immersion index"
        type(QStringLiteral("load_immersionIndex"), QStringLiteral("1.518"));
        QVERIFY2(errorCount(panel->problems()) == 0, qPrintable(problemsText(panel->problems())));
        QVERIFY(panel->canStart());
        QVERIFY(!anyMessageBox());
    }

    void lengthsWithoutTheirUnitAreQuestioned()
    {
        // Issue 40, part 3: "0.1" in the pixel pitch was taken as 0.1 m, shown as "1e+05 µm" with a tick, and the fit
        // then failed with "use a larger grid". Core questions a length typed without its unit, naming the setting and
        // the unit meant, and nothing is taken until the unit is there.
        open(test::dataPath(QStringLiteral("bead_zstack_BIL113.tif")));
        StackLoadPanel* panel = step();
        QVERIFY(panel);
        QTRY_COMPARE(panel->thumbnailCount(), 21);
        auto* pitchSpin = m_window->findChild<QDoubleSpinBox*>(QStringLiteral("pixelPitchSpin"));
        auto* status = m_window->findChild<QLabel*>(QStringLiteral("loadStatus_pixelPitch"));
        auto* edit = m_window->findChild<QLineEdit*>(QStringLiteral("load_pixelPitch"));
        QVERIFY(pitchSpin && status && edit);
        const auto pitchNow = [this] { return m_window->setupPanel()->sessionFor(m_window->dataset()).dataset.metadata.pixelPitch; };

        const std::optional<double> pitchBefore = pitchNow();
        const double spinBefore = pitchSpin->value();
        QVERIFY(!pitchBefore || *pitchBefore != 0.1);
        type(QStringLiteral("load_pixelPitch"), QStringLiteral("0.1"));
        QCOMPARE(status->text(), tr("unit?")); // the verdict asks; no tick
        QString verdict = status->toolTip();
        QVERIFY2(verdict.contains(QStringLiteral("pixel pitch '0.1' has no unit"))
                     && verdict.contains(QStringLiteral("did you mean 0.1um?")),
                 qPrintable(verdict));
        QVERIFY2(hasError(panel->problems(), "pixel-scale"), qPrintable(problemsText(panel->problems())));
        QVERIFY(!panel->canStart());
        QVERIFY(pitchNow() == pitchBefore);            // not taken as 0.1 m, nor as anything else
        QCOMPARE(pitchSpin->value(), spinBefore);      // not 1e+05 µm
        QCOMPARE(edit->text(), QStringLiteral("0.1")); // the text stays for the user to correct
        shot(QStringLiteral("loadstep-unit-question"));

        // With a unit that makes it implausible: refused by name, with the unit meant.
        type(QStringLiteral("load_pixelPitch"), QStringLiteral("0.1 m"));
        QCOMPARE(status->text(), tr("invalid"));
        verdict = status->toolTip();
        QVERIFY2(verdict.contains(QStringLiteral("pixel pitch 0.1 m is not plausible"))
                     && verdict.contains(QStringLiteral("did you mean 0.1um?")),
                 qPrintable(verdict));
        QVERIFY(pitchNow() == pitchBefore);

        // With its unit: taken, and shown with its unit.
        type(QStringLiteral("load_pixelPitch"), QStringLiteral("0.1um"));
        QVERIFY2(!hasError(panel->problems(), "pixel-scale"), qPrintable(problemsText(panel->problems())));
        QCOMPARE(status->text(), QStringLiteral("✓"));
        QVERIFY(pitchNow() && std::abs(*pitchNow() - 0.1e-6) < 1e-15);
        QCOMPARE(pitchSpin->value(), 0.1);
        QVERIFY2(edit->text().contains(QStringLiteral("µm")), qPrintable(edit->text()));

        // Every length field: the z step (0.3 um from the acquisition log) is not replaced by a bare 0.3.
        auto* zStatus = m_window->findChild<QLabel*>(QStringLiteral("loadStatus_zStep"));
        type(QStringLiteral("load_zStep"), QStringLiteral("0.3"));
        QCOMPARE(zStatus->text(), tr("unit?"));
        QVERIFY2(zStatus->toolTip().contains(QStringLiteral("z step '0.3' has no unit"))
                     && zStatus->toolTip().contains(QStringLiteral("did you mean 0.3um?")),
                 qPrintable(zStatus->toolTip()));
        QCOMPARE(m_window->findChild<QDoubleSpinBox*>(QStringLiteral("zStepSpin"))->value(), 0.3);
        type(QStringLiteral("load_zStep"), QStringLiteral("0.3 um"));
        QVERIFY(!hasError(panel->problems(), "z-step"));

        // The setup panel's length fields (object diameter, emitter depth, coverslip thicknesses) ask the same.
        auto* diameter = m_window->findChild<QLineEdit*>(QStringLiteral("objectDiameterEdit"));
        diameter->setText(QStringLiteral("100"));
        const QString note = m_window->setupPanel()->problemText("object-diameter");
        QVERIFY2(note.contains(QStringLiteral("object diameter '100' has no unit")) && note.contains(QStringLiteral("did you mean 100nm?")),
                 qPrintable(note));
        QVERIFY(!m_window->setupPanel()->modelTextProblems().isEmpty()); // Start waits for the unit
        diameter->setText(QStringLiteral("100nm"));
        QVERIFY2(!m_window->setupPanel()->problemText("object-diameter").contains(QStringLiteral("no unit")),
                 qPrintable(m_window->setupPanel()->problemText("object-diameter")));
        QVERIFY(m_window->setupPanel()->modelTextProblems().isEmpty());
        diameter->clear();
        QVERIFY(!anyMessageBox());
    }

    void unreadableFileLeavesTheStackLoaded()
    {
        open(test::dataPath(QStringLiteral("bead_zstack_BIL113.tif")));
        QTRY_COMPARE(step()->thumbnailCount(), 21);
        const QString bad = m_dir.filePath(QStringLiteral("broken.tif"));
        QFile file(bad);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write("II*\0 this is not a TIFF", 24);
        file.close();
        open(bad);
        QCOMPARE(int(m_window->dataset().planes.size()), 21);
        QVERIFY(step());
        QCOMPARE(step()->thumbnailCount(), 21);
        QVERIFY(m_window->lastError().contains(QStringLiteral("broken.tif")));
    }

    void cleanupTestCase() { m_window.reset(); }
};

QTEST_MAIN(TestLoadStep)
#include "tst_loadstep.moc"
