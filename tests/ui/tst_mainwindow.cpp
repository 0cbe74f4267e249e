// The desktop program on the offscreen platform: the demo fit with live updates, cancel and restart,
// every export read back, a bad file that leaves the session intact, sessions saved and reopened,
// the backend choice without a GPU, and the longest stall of the event loop during a fit.
#include "IsolatedSettings.h"
#include "TestSupport.h"

#include "EngineController.h"
#include "ImageView.h"
#include "MainWindow.h"
#include "RunsPanel.h"
#include "SetupPanel.h"

#include "engine/RunComparison.h"
#include "io/Fits.h"

#include <QComboBox>
#include <QElapsedTimer>
#include <QFile>
#include <QImage>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSignalSpy>
#include <QStandardItemModel>
#include <QStandardPaths>
#include <QSettings>
#include <QTemporaryDir>
#include <QTimer>

using namespace wfs;
using namespace wfs::ui;

class TestMainWindow : public QObject {
    Q_OBJECT

private:
    wfs::test::IsolatedSettings m_settings; // declared first: outlives the window
    std::unique_ptr<MainWindow> m_window; // one window with a finished demo fit, shared by the tests
    QTemporaryDir m_dir;

    static bool waitFor(QSignalSpy& spy, int timeoutMs = 300000)
    {
        return spy.count() > 0 || spy.wait(timeoutMs);
    }

private slots:
    void initTestCase()
    {
        // Settings, demo data and caches in a temporary folder, never the user's (nor a previous run's).
        QVERIFY2(m_settings.isolate(QStringLiteral("tst_mainwindow")), qPrintable(QSettings().fileName()));
        QStandardPaths::setTestModeEnabled(true); // settings and demo data in a test location
        QVERIFY(m_dir.isValid());
        m_window = std::make_unique<MainWindow>();
        m_window->resize(1400, 900);
        m_window->show();
    }

    void demoFitUpdatesLiveAndConverges()
    {
        QSignalSpy progress(m_window->engine(), &EngineController::progress);
        QSignalSpy finished(m_window.get(), &MainWindow::fitFinished);
        // The longest gap between ticks of a 5 ms timer while the fit runs: the GUI's worst stall.
        QElapsedTimer clock;
        qint64 last = 0, worst = 0;
        QTimer ticker;
        ticker.setInterval(5);
        connect(&ticker, &QTimer::timeout, &ticker, [&] {
            const qint64 now = clock.elapsed();
            worst = std::max(worst, now - last);
            last = now;
        });
        // The ticker is the context: the connection ends with this test function.
        connect(m_window->engine(), &EngineController::started, &ticker, [&] {
            clock.start();
            last = 0;
            ticker.start();
        });
        m_window->loadDemo(true);
        QVERIFY2(waitFor(finished), "the demo fit did not finish");
        ticker.stop();
        qInfo("longest event-loop stall during the demo fit (grid 256): %lld ms", worst);
        // The real figure is printed above (and measured on a quiet machine by the benchmark); the bound
        // is generous enough for a loaded CI machine yet fails if a fit ever runs on the GUI thread.
        QVERIFY2(worst < 200, qPrintable(QStringLiteral("the event loop stalled for %1 ms during the fit").arg(worst)));
        QVERIFY(progress.count() >= 1);
        const auto& result = m_window->result();
        QVERIFY(result != nullptr);
        QVERIFY2(result->solver.termination == Termination::Converged, result->solver.message.c_str());
        // Live updates are throttled to the display rate: fewer signals than iterations.
        QVERIFY(progress.count() <= result->solver.iterations + 1);
        QVERIFY(result->rmsWaves > 0.14 && result->rmsWaves < 0.17); // injected 0.155 waves RMS
        QVERIFY(m_window->phaseView()->hasImage());
    }

    void demoKeepsTwoRunsAndComparesThem()
    {
        // The demo fits order 2, then order 4: two runs, the newest compared with the one before.
        const std::vector<RunEntry>& runs = m_window->runs();
        QCOMPARE(runs.size(), size_t(2));
        QCOMPARE(runs[0].record.model.order, 2);
        QCOMPARE(runs[1].record.model.order, 4);
        QVERIFY(runs[0].result && runs[1].result);
        QCOMPARE(runs[0].result->coefficients.size(), size_t(5));  // Noll 2..6
        QCOMPARE(runs[1].result->coefficients.size(), size_t(14)); // Noll 2..15
        QCOMPARE(runs[1].record.parameters, m_window->result()->solver.parameters);
        QVERIFY(!runs[1].record.time.empty());
        RunsPanel* panel = m_window->runsPanel();
        QCOMPARE(panel->firstRun(), 0);
        QCOMPARE(panel->secondRun(), 1);
        QTRY_VERIFY(panel->comparison().has_value());
        // What the tab shows is what core computes for the two results.
        const RunComparison expected = compareRuns(*runs[0].result, *runs[1].result);
        const RunComparison shown = *panel->comparison();
        QCOMPARE(shown.terms.size(), size_t(14));
        QCOMPARE(shown.rmsDifferenceWaves, expected.rmsDifferenceWaves);
        QVERIFY(shown.rmsDifferenceWaves > 0.01); // order 4 adds coma and spherical the order-2 fit lacks
        QCOMPARE(shown.terms[2].index, 4);
        QCOMPARE(shown.terms[2].differenceWaves, runs[1].result->coefficients[2].waves - runs[0].result->coefficients[2].waves);
        QVERIFY(!shown.terms[13].firstWaves && shown.terms[13].secondWaves);
        QVERIFY(panel->differenceView()->hasImage());
        const Image& map = panel->differenceView()->image();
        QCOMPARE(map.width, runs[1].result->phaseMap.width);
        for (size_t i = 0; i < map.pixels.size(); ++i)
            QCOMPARE(std::isnan(map.pixels[i]), std::isnan(runs[0].result->phaseMap.pixels[i])); // nothing outside the pupil
        QVERIFY(panel->summaryText().contains(QString::number(shown.rmsDifferenceWaves, 'f', 4)));
        // Choosing the other way round: the differences change sign.
        panel->compare(1, 0);
        QTRY_VERIFY(panel->comparison().has_value());
        QCOMPARE(panel->comparison()->terms[2].differenceWaves, -shown.terms[2].differenceWaves);
        panel->compare(0, 1);
        QTRY_VERIFY(panel->comparison().has_value());
    }

    void exportsReadBack()
    {
        QVERIFY(m_window->result() != nullptr);
        const FitResult& r = *m_window->result();
        const QString phase = m_dir.filePath(QStringLiteral("phase.fits"));
        QVERIFY(m_window->exportResult(ExportKind::PhaseFits, phase));
        const FitsContent content = readFits(phase.toStdString());
        QCOMPARE(content.planes.front().width, r.phaseMap.width);
        for (size_t i = 0; i < r.phaseMap.pixels.size(); ++i) {
            const double a = content.planes.front().pixels[i], e = r.phaseMap.pixels[i];
            QVERIFY(std::isnan(a) == std::isnan(e));
            if (!std::isnan(e))
                WFS_VERIFY_CLOSE(a, e, 1e-12, 1e-15);
        }

        const QString png = m_dir.filePath(QStringLiteral("phase.png"));
        QVERIFY(m_window->exportResult(ExportKind::PhasePng, png));
        QImage picture(png);
        QVERIFY(!picture.isNull() && picture.width() > r.phaseMap.width);

        const QString csv = m_dir.filePath(QStringLiteral("coefficients.csv"));
        QVERIFY(m_window->exportResult(ExportKind::CoefficientsCsv, csv));
        QFile csvFile(csv);
        QVERIFY(csvFile.open(QIODevice::ReadOnly));
        int dataLines = 0;
        for (const QByteArray& line : csvFile.readAll().split('\n'))
            dataLines += !line.isEmpty() && !line.startsWith('#') && !line.startsWith("index");
        QCOMPARE(dataLines, int(r.coefficients.size()));

        const QString json = m_dir.filePath(QStringLiteral("coefficients.json"));
        QVERIFY(m_window->exportResult(ExportKind::CoefficientsJson, json));
        QFile jsonFile(json);
        QVERIFY(jsonFile.open(QIODevice::ReadOnly));
        const QJsonArray coefficients = QJsonDocument::fromJson(jsonFile.readAll()).object().value(QStringLiteral("coefficients")).toArray();
        QCOMPARE(coefficients.size(), qsizetype(r.coefficients.size()));
        for (int i = 0; i < coefficients.size(); ++i)
            WFS_VERIFY_CLOSE(coefficients[i].toObject().value(QStringLiteral("value_waves")).toDouble(), r.coefficients[size_t(i)].waves, 1e-12, 1e-15);

        const QString resultJson = m_dir.filePath(QStringLiteral("result.json"));
        QVERIFY(m_window->exportResult(ExportKind::ResultJson, resultJson));
        QVERIFY(QFile::exists(resultJson));

        const QString model = m_dir.filePath(QStringLiteral("model.fits"));
        QVERIFY(m_window->exportResult(ExportKind::ModelFits, model));
        const FitsContent models = readFits(model.toStdString());
        QCOMPARE(models.planes.size(), r.planes.size());
        WFS_VERIFY_CLOSE(models.planes[1].at(10, 20), r.planes[1].model.at(10, 20), 1e-12, 0.0);
        const QString residual = m_dir.filePath(QStringLiteral("residual.fits"));
        QVERIFY(m_window->exportResult(ExportKind::ResidualFits, residual));
        QCOMPARE(readFits(residual.toStdString()).planes.size(), r.planes.size());
    }

    void badFileShowsAnErrorAndKeepsTheSession()
    {
        const size_t planes = m_window->dataset().planes.size();
        QVERIFY(planes > 0);
        const QString bad = m_dir.filePath(QStringLiteral("broken.fits"));
        QFile file(bad);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write("SIMPLE  = this is not FITS");
        file.close();
        QSignalSpy errors(m_window.get(), &MainWindow::errorShown);
        QSignalSpy loaded(m_window.get(), &MainWindow::dataLoaded);
        m_window->openFiles({bad});
        QVERIFY(waitFor(loaded, 30000));
        QVERIFY(errors.count() >= 1);
        QVERIFY2(m_window->lastError().contains(QStringLiteral("broken.fits")), qPrintable(m_window->lastError()));
        QCOMPARE(m_window->dataset().planes.size(), planes); // what was loaded stays
        QVERIFY(m_window->result() != nullptr);            // and so does the result
    }

    void sessionSavesAndReopens()
    {
        const QString path = m_dir.filePath(QStringLiteral("session.json"));
        QVERIFY(m_window->saveSessionTo(path));
        MainWindow other;
        QSignalSpy loaded(&other, &MainWindow::dataLoaded);
        other.openSessionFrom(path);
        QVERIFY(waitFor(loaded, 60000));
        QCOMPARE(other.dataset().planes.size(), m_window->dataset().planes.size());
        QCOMPARE(other.setupPanel()->modelSettings().order, m_window->setupPanel()->modelSettings().order);
        WFS_VERIFY_CLOSE(*other.dataset().metadata.wavelength, *m_window->dataset().metadata.wavelength, 1e-12, 0.0);
        // The saved result comes back, re-evaluated on the re-read data: same cost and coefficients.
        QVERIFY(other.result() != nullptr);
        const FitResult& saved = *m_window->result();
        const FitResult& restored = *other.result();
        WFS_VERIFY_CLOSE(restored.solver.finalCost, saved.solver.finalCost, 1e-9, 0.0);
        QCOMPARE(restored.coefficients.size(), saved.coefficients.size());
        for (size_t i = 0; i < saved.coefficients.size(); ++i)
            WFS_VERIFY_CLOSE(restored.coefficients[i].waves, saved.coefficients[i].waves, 1e-12, 1e-15);
        QCOMPARE(restored.solver.termination, saved.solver.termination);
        // And every run, re-evaluated with its own settings.
        QCOMPARE(other.runs().size(), m_window->runs().size());
        for (size_t k = 0; k < other.runs().size(); ++k) {
            const RunEntry& a = m_window->runs()[k];
            const RunEntry& b = other.runs()[k];
            QCOMPARE(b.record.name, a.record.name);
            QCOMPARE(b.record.time, a.record.time);
            QVERIFY2(b.result, qPrintable(b.note));
            QCOMPARE(b.result->coefficients.size(), a.result->coefficients.size());
            for (size_t i = 0; i < a.result->coefficients.size(); ++i)
                WFS_VERIFY_CLOSE(b.result->coefficients[i].waves, a.result->coefficients[i].waves, 1e-12, 1e-15);
        }
        QTRY_VERIFY(other.runsPanel()->comparison().has_value());
    }

    void failedFitKeepsRunsAndData()
    {
        const size_t runs = m_window->runs().size(), planes = m_window->dataset().planes.size();
        const ModelSettings normal = m_window->setupPanel()->modelSettings();
        ModelSettings bad = normal;
        bad.grid = 16; // smaller than the planes: refused before any fitting
        m_window->setupPanel()->setModelSettings(bad);
        QSignalSpy failed(m_window.get(), &MainWindow::fitFailed);
        m_window->startFit();
        QVERIFY(waitFor(failed, 30000));
        QCOMPARE(m_window->runs().size(), runs);
        QCOMPARE(m_window->dataset().planes.size(), planes);
        QVERIFY(m_window->result() != nullptr);
        m_window->setupPanel()->setModelSettings(normal);
    }

    void cancelMidFitThenRestart()
    {
        SolverSettings slow = m_window->setupPanel()->solverSettings();
        const SolverSettings normal = slow;
        slow.gradientTolerance = 0.0;
        slow.functionTolerance = 0.0;
        slow.maxIterations = 1000000;
        m_window->setupPanel()->setSolverSettings(slow);
        QSignalSpy progress(m_window->engine(), &EngineController::progress);
        QSignalSpy finished(m_window.get(), &MainWindow::fitFinished);
        m_window->startFit();
        QVERIFY(waitFor(progress, 60000));
        m_window->cancelFit();
        QVERIFY(waitFor(finished, 60000));
        QCOMPARE(m_window->result()->solver.termination, Termination::Cancelled);
        QVERIFY(std::isfinite(m_window->result()->rmsWaves));
        // The cancelled fit is kept as a run (its last accepted iterate), after the ones before.
        const size_t runs = m_window->runs().size();
        QVERIFY(runs >= 3);
        QVERIFY(QString::fromStdString(m_window->runs().back().record.name).contains(QStringLiteral("cancelled")));

        m_window->setupPanel()->setSolverSettings(normal);
        finished.clear();
        m_window->startFit();
        QVERIFY(waitFor(finished, 300000));
        QCOMPARE(m_window->result()->solver.termination, Termination::Converged);
        QCOMPARE(m_window->runs().size(), runs + 1);
    }

    void preparationIsPreviewedOnTheImage()
    {
        QSignalSpy previewed(m_window.get(), &MainWindow::preparationPreviewed);
        PreprocessOptions options = m_window->setupPanel()->preprocessOptions();
        options.centre = CentreMethod::Peak;
        options.cropSize = 96;
        m_window->setupPanel()->setPreprocessOptions(options);
        QVERIFY(waitFor(previewed, 30000));
        QCOMPARE(m_window->dataView()->image().width, 96);
        QCOMPARE(m_window->dataView()->image().height, 96);
        options.cropSize = 0;
        options.centre = CentreMethod::None;
        m_window->setupPanel()->setPreprocessOptions(options);
    }

    void onlyAvailableBackendsAreSelectable()
    {
        auto* combo = m_window->findChild<QComboBox*>(QStringLiteral("backendCombo"));
        QVERIFY(combo);
        QCOMPARE(combo->count(), 2);
        const BackendStatus gpu = backendStatus(BackendKind::Gpu);
        const auto* model = qobject_cast<QStandardItemModel*>(combo->model());
        QCOMPARE(model->item(1)->isEnabled(), gpu.available);
        if (!gpu.available)
            QVERIFY(combo->itemData(1, Qt::ToolTipRole).toString().contains(QStringLiteral("GPU")));
        QCOMPARE(m_window->setupPanel()->solverSettings().backend, BackendKind::Cpu);
    }

    void cleanupTestCase()
    {
        m_window.reset();
    }
};

QTEST_MAIN(TestMainWindow)
#include "tst_mainwindow.moc"
