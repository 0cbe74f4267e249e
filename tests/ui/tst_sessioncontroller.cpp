// Issue 27 items 2 and 3: the desktop's state lives in a session controller beside EngineController, which says when
// it changes; presets load as core's presetSession (planes in memory, no file written), with the fit the desktop got
// before from the preset's FITS file; a session saved by the desktop restores as core restores it for every front end,
// and runs in wavefront-cli to the desktop's result, whose saved session the desktop restores to the CLI's result.
#include "IsolatedSettings.h"
#include "TestSupport.h"

#include "MainWindow.h"
#include "SessionController.h"
#include "SetupPanel.h"

#include "engine/Presets.h"
#include "engine/Workflow.h"

#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>

using namespace wfs;
using namespace wfs::ui;

namespace {

bool waitFor(QSignalSpy& spy, int timeoutMs = 300000)
{
    return spy.count() > 0 || spy.wait(timeoutMs);
}

QByteArray fileBytes(const QString& path)
{
    QFile file(path);
    return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray();
}

// Every file under `folder` (the program's data and cache folders: where the desktop wrote its preset's FITS before).
QStringList filesUnder(const QString& folder)
{
    QStringList files;
    for (QDirIterator it(folder, QDir::Files, QDirIterator::Subdirectories); it.hasNext();)
        files << it.next();
    return files;
}

} // namespace

class TestSessionController : public QObject {
    Q_OBJECT

private:
    wfs::test::IsolatedSettings m_settings; // declared first: outlives the windows
    QTemporaryDir m_dir;
    std::unique_ptr<MainWindow> m_window; // the demo, loaded and fitted (order 2, then 4)

    void compareResults(const FitResult& a, const FitResult& b, double relative)
    {
        WFS_VERIFY_CLOSE(a.solver.finalCost, b.solver.finalCost, relative, 0.0);
        QCOMPARE(a.coefficients.size(), b.coefficients.size());
        for (size_t i = 0; i < a.coefficients.size(); ++i)
            WFS_VERIFY_CLOSE(a.coefficients[i].waves, b.coefficients[i].waves, relative * 1e3, 1e-12);
    }

private slots:
    void initTestCase()
    {
        QVERIFY2(m_settings.isolate(QStringLiteral("tst_sessioncontroller")), qPrintable(QSettings().fileName()));
        QStandardPaths::setTestModeEnabled(true);
        QVERIFY(m_dir.isValid());
    }

    // The controller's signals for a preset: the settings it is made for first, then the data and planes, then the
    // end of the load; its planes are held in memory, and no file is written anywhere the program keeps files.
    void presetLoadsInMemoryWithItsSignals()
    {
        // Only this suite's own folders (IsolatedSettings: data, cache and TMPDIR in its temporary folder), never the
        // shared /tmp that other tests and builds write to at the same time.
        const QStringList folders = {QStandardPaths::writableLocation(QStandardPaths::AppLocalDataLocation),
                                     QStandardPaths::writableLocation(QStandardPaths::CacheLocation),
                                     QStandardPaths::writableLocation(QStandardPaths::TempLocation)};
        for (const QString& folder : folders)
            QVERIFY2(m_settings.isInside(folder), qPrintable(folder));
        QStringList before;
        for (const QString& folder : folders)
            before += filesUnder(folder);
        SessionController controller;
        QStringList order;
        const auto record = [&order](const char* name) { return [&order, name] { order << QString::fromLatin1(name); }; };
        connect(&controller, &SessionController::presetLoaded, this, record("presetLoaded"));
        connect(&controller, &SessionController::datasetChanged, this, record("datasetChanged"));
        connect(&controller, &SessionController::planesChanged, this, record("planesChanged"));
        connect(&controller, &SessionController::dataLoadFinished, this, record("dataLoadFinished"));
        connect(&controller, &SessionController::resultChanged, this, record("resultChanged"));
        connect(&controller, &SessionController::runsChanged, this, record("runsChanged"));
        QSignalSpy finished(&controller, &SessionController::dataLoadFinished);
        controller.loadPreset(QStringLiteral("pupil"), PreprocessOptions{});
        QVERIFY(controller.isBusy());
        QVERIFY(waitFor(finished));
        QCOMPARE(order, (QStringList{QStringLiteral("presetLoaded"), QStringLiteral("datasetChanged"), QStringLiteral("planesChanged"),
                                     QStringLiteral("dataLoadFinished")}));
        const LoadOutcome outcome = finished.front().front().value<LoadOutcome>();
        QVERIFY(outcome.loaded);
        QCOMPARE(int(outcome.source), int(LoadOutcome::Source::Preset));
        QVERIFY(!controller.isBusy());

        const Dataset& data = controller.dataset();
        QCOMPARE(data.files.size(), size_t(1));
        QCOMPARE(data.files.front().path, std::string("pupil.fits"));
        QVERIFY(controller.isInMemory(data.files.front()));
        for (const DatasetPlane& plane : data.planes) // named after the file too: the plane list, the problem
            QVERIFY2(plane.raw.source.rfind("pupil.fits[", 0) == 0, plane.raw.source.c_str());
        QVERIFY(!QFileInfo::exists(QStringLiteral("pupil.fits")));
        QStringList after;
        for (const QString& folder : folders)
            after += filesUnder(folder);
        QCOMPARE(after, before);
        // Core's preset session, its planes and truth, as the controller holds them.
        const PresetSession expected = presetSession("pupil", PresetOptions{});
        QCOMPARE(data.planes.size(), expected.session.dataset.planes.size());
        for (size_t k = 0; k < data.planes.size(); ++k)
            QCOMPARE(data.planes[k].raw.pixels, expected.session.dataset.planes[k].raw.pixels);
        QVERIFY(controller.truth().has_value());
        QCOMPARE(controller.truth()->terms.size(), expected.truth.terms.size());
        QCOMPARE(controller.planeEntries().size(), data.planes.size());
        QVERIFY(!controller.result() && controller.runs().empty());
    }

    // A session of a preset's simulated data (wavefront-cli reconstruct --preset --save-session) has no files to read:
    // the desktop says what it is and how to run it, and the data it held stay.
    void simulatedSessionIsRefusedClearly()
    {
        SessionController controller;
        QSignalSpy finished(&controller, &SessionController::dataLoadFinished);
        controller.loadPreset(QStringLiteral("demo"), PreprocessOptions{});
        QVERIFY(waitFor(finished));
        const std::vector<double> held = controller.dataset().planes.front().raw.pixels;
        const QString path = m_dir.filePath(QStringLiteral("simulated.json"));
        saveSession(path.toStdString(), simulatedSession("demo"), true);
        finished.clear();
        controller.openSession(path);
        QVERIFY(waitFor(finished));
        const LoadOutcome outcome = finished.front().front().value<LoadOutcome>();
        QVERIFY(!outcome.loaded);
        QVERIFY2(outcome.error.contains(QStringLiteral("demo preset's simulated data")), qPrintable(outcome.error));
        QVERIFY2(outcome.error.contains(QStringLiteral("wavefront-cli reconstruct --session ") + path), qPrintable(outcome.error));
        QCOMPARE(controller.dataset().planes.front().raw.pixels, held);
        QVERIFY(!controller.isBusy());
    }

    // The demo as the desktop loads it now (in memory) fits to the result the desktop got before, when it wrote the
    // preset to FITS and opened the file: the same cost and coefficients, bit for bit.
    void demoFitsAsFromItsFile()
    {
        m_window = std::make_unique<MainWindow>();
        m_window->resize(1280, 800);
        m_window->show();
        QSignalSpy finished(m_window.get(), &MainWindow::fitFinished);
        m_window->loadDemo(true);
        QVERIFY2(waitFor(finished), "the demo fit did not finish");
        QVERIFY(m_window->result());
        QCOMPARE(m_window->runs().size(), size_t(2));
        QVERIFY(m_window->session()->isInMemory(m_window->dataset().files.front()));

        // Before: makePreset, writePresetFits, then the file opened as a user's, fitted at order 4.
        const QString file = m_dir.filePath(QStringLiteral("demo.fits"));
        writePresetFits(file.toStdString(), makePreset("demo", {}), "demo", PresetOptions{}.seed, true);
        MainWindow before;
        QSignalSpy loaded(&before, &MainWindow::dataLoaded);
        before.openFiles({file});
        QVERIFY(waitFor(loaded));
        ModelSettings model = before.setupPanel()->modelSettings();
        model.order = 4;
        before.setupPanel()->setModelSettings(model);
        QSignalSpy done(&before, &MainWindow::fitFinished);
        before.startFit();
        QVERIFY2(waitFor(done), qPrintable(before.lastError()));
        compareResults(*m_window->result(), *before.result(), 0.0);
        QCOMPARE(m_window->result()->solver.iterations, before.result()->solver.iterations);
    }

    // Saved by the desktop, a session restores in a new controller as core's restoreSession restores it for every
    // front end (the same numbers exactly), with the result and the runs of the desktop.
    void savedSessionRestoresAsCoreRestoresIt()
    {
        const QString path = m_dir.filePath(QStringLiteral("desktop.json"));
        // A file of the preset's name with other pixels (another seed). The test before wrote one there too, but with
        // the same pixels its bytes differ only when its DATE fell in another second.
        const QString other = m_dir.filePath(QStringLiteral("demo.fits"));
        PresetOptions otherSeed;
        otherSeed.seed += 1;
        writePresetFits(other.toStdString(), makePreset("demo", otherSeed), "demo", otherSeed.seed, true);
        const QByteArray otherBytes = fileBytes(other);
        QVERIFY(!otherBytes.isEmpty());
        QVERIFY(m_window->saveSessionTo(path));
        // The preset's planes are written beside the session under their name (demo.fits is taken by other bytes, which
        // stay as they were: demo-2.fits), and are that file from now on.
        QCOMPARE(fileBytes(other), otherBytes);
        const QString data = m_dir.filePath(QStringLiteral("demo-2.fits"));
        QCOMPARE(QString::fromStdString(m_window->dataset().files.front().path), data);
        QVERIFY(!m_window->session()->isInMemory(m_window->dataset().files.front()));
        QCOMPARE(QString::fromStdString(m_window->session()->exportContext().inputs.front()), data);
        QVERIFY(QString::fromStdString(m_window->dataset().planes.front().raw.source).startsWith(data + QLatin1Char('[')));

        SessionController controller;
        QSignalSpy opened(&controller, &SessionController::sessionOpened);
        QSignalSpy runs(&controller, &SessionController::runsChanged);
        QSignalSpy finished(&controller, &SessionController::dataLoadFinished);
        controller.openSession(path);
        QVERIFY(waitFor(finished, 120000));
        QCOMPARE(opened.count(), 1);
        QVERIFY(runs.count() >= 1);
        const LoadOutcome outcome = finished.front().front().value<LoadOutcome>();
        QVERIFY(outcome.loaded && outcome.resultRestored);
        QVERIFY2(outcome.error.isEmpty(), qPrintable(outcome.error));
        QVERIFY(controller.result());

        OpenedSession core = openSession(path.toStdString());
        const RestoredSession expected = restoreSession(core.session, true);
        QVERIFY(expected.result);
        compareResults(*controller.result(), *expected.result, 0.0);
        compareResults(*controller.result(), *m_window->result(), 1e-9);
        QCOMPARE(controller.runs().size(), m_window->runs().size());
        for (size_t k = 0; k < controller.runs().size(); ++k) {
            QVERIFY2(controller.runs()[k].result, qPrintable(controller.runs()[k].note));
            QCOMPARE(controller.runs()[k].record.name, m_window->runs()[k].record.name);
            compareResults(*controller.runs()[k].result, *expected.runs[k].result, 0.0);
        }
        QCOMPARE(controller.exportContext().inputs, expected.run->context.inputs);
    }

    // Across front ends: wavefront-cli fits the desktop's session to the desktop's result, and the session it saves
    // restores in the desktop to the CLI's result.
    void sessionRoundTripsThroughTheCommandLine()
    {
        const QString desktop = m_dir.filePath(QStringLiteral("desktop.json")), cli = m_dir.filePath(QStringLiteral("cli.json"));
        const test::ProgramRun run =
            test::runProgram(QStringLiteral(WFS_CLI_PATH),
                             {QStringLiteral("reconstruct"), QStringLiteral("--session"), desktop, QStringLiteral("--save-session"), cli,
                              QStringLiteral("--json"), QStringLiteral("-"), QStringLiteral("--quiet")});
        QVERIFY2(run.status == 0, run.err.constData());
        const QJsonObject fromCli = QJsonDocument::fromJson(run.out).object();
        const double cliCost = fromCli.value(QStringLiteral("final_cost")).toDouble();
        WFS_VERIFY_CLOSE(cliCost, m_window->result()->solver.finalCost, 1e-9, 0.0);

        SessionController controller;
        QSignalSpy finished(&controller, &SessionController::dataLoadFinished);
        controller.openSession(cli);
        QVERIFY(waitFor(finished, 120000));
        QVERIFY(finished.front().front().value<LoadOutcome>().resultRestored);
        WFS_VERIFY_CLOSE(controller.result()->solver.finalCost, cliCost, 1e-9, 0.0);
    }

    void cleanupTestCase() { m_window.reset(); }
};

QTEST_MAIN(TestSessionController)
#include "tst_sessioncontroller.moc"
