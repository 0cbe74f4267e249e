#include "MainWindow.h"

#include "engine/Report.h"
#include "engine/Workflow.h"

#include "ConvergencePlot.h"
#include "FasthPanel.h"
#include "LivePanel.h"
#include "PhasePanel.h"
#include "PlanesPanel.h"
#include "PsfPanel.h"
#include "ResultsPanel.h"
#include "RunsPanel.h"
#include "SetupPanel.h"
#include "SpeedupLab.h"
#include "StackLoadPanel.h"
#include "ZernikeChart.h"

#include "engine/Presets.h"
#include "ResultExports.h"
#include "io/Exports.h"
#include "PhaseImage.h"

#include <QAction>
#include <QApplication>
#include <QCheckBox>
#include <QCloseEvent>
#include <QComboBox>
#include <QDir>
#include <QDockWidget>
#include <QDragEnterEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QJsonDocument>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QPlainTextEdit>
#include <QToolBar>
#include <QToolButton>
#include <QVBoxLayout>
#include <QStyle>
#include <QProgressBar>
#include <QScrollArea>
#include <QScrollBar>
#include <QSettings>
#include <QStandardPaths>
#include <QStatusBar>
#include <QTabWidget>
#include <QTime>
#include <QException>
#include <QtConcurrent>

#include <cmath>

namespace wfs::ui {

MainWindow::MainWindow(QWidget* parent)
    : QMainWindow(parent)
    , m_setup(new SetupPanel(this))
    , m_engine(new EngineController(this))
    , m_session(new SessionController(this))
{
    setWindowTitle(tr("Wavefront Studio"));
    setAcceptDrops(true);
    buildViews();
    buildActions();
    buildMenus();
    buildToolBar();
    m_setup->setBackends(backendStatuses());

    connect(m_setup, &SetupPanel::openRequested, this, [this] {
        QSettings settings;
        const QStringList paths =
            QFileDialog::getOpenFileNames(this, tr("Open PSF images"), settings.value(QStringLiteral("lastDirectory")).toString(),
                                          tr("PSF images (*.fits *.fit *.fts *.tif *.tiff *.png);;All files (*)"));
        if (!paths.isEmpty())
            openFiles(paths);
    });
    connect(m_setup, &SetupPanel::demoRequested, this, [this] { loadDemo(false); });
    connect(m_setup, &SetupPanel::pupilDemoRequested, this, [this] { loadDemo(false, QStringLiteral("pupil")); });
    connect(m_setup, &SetupPanel::startRequested, this, &MainWindow::startFit);
    connect(m_setup, &SetupPanel::cancelRequested, this, &MainWindow::cancelFit);
    connect(m_setup, &SetupPanel::metadataChanged, this, &MainWindow::updateSampling);
    m_previewTimer = new QTimer(this);
    m_previewTimer->setSingleShot(true);
    m_previewTimer->setInterval(300);
    connect(m_previewTimer, &QTimer::timeout, this, &MainWindow::previewPreparation);
    connect(m_setup, &SetupPanel::preparationChanged, m_previewTimer, qOverload<>(&QTimer::start));
    connect(m_engine, &EngineController::progress, this, &MainWindow::onProgress);
    connect(m_engine, &EngineController::historyAppended, m_convergence, &ConvergencePlot::addRows);
    connect(m_engine, &EngineController::finished, this, &MainWindow::onFinished);
    connect(m_session, &SessionController::presetLoaded, this, &MainWindow::applyPresetSettings);
    connect(m_session, &SessionController::datasetChanged, this, &MainWindow::datasetChanged);
    connect(m_session, &SessionController::planesChanged, this, [this] { m_planesPanel->setPlanes(m_session->planeEntries()); });
    connect(m_session, &SessionController::resultChanged, this, &MainWindow::showResult);
    connect(m_session, &SessionController::runsChanged, this, [this] { m_runsPanel->setRuns(m_session->runs()); });
    connect(m_session, &SessionController::sessionOpened, this, &MainWindow::applySessionSettings);
    connect(m_session, &SessionController::dataLoadFinished, this, &MainWindow::loadFinished);
    connect(m_session, &SessionController::fitPrepared, this, &MainWindow::fitPrepared);
    connect(m_session, &SessionController::fitPreparationFailed, this, [this](const QString& message) {
        setRunning(false);
        m_demoFollowUpOrder = 0;
        showError(message);
        emit fitFailed(message);
    });
    connect(m_engine, &EngineController::failed, this, [this](const QString& message) {
        setRunning(false);
        m_demoFollowUpOrder = 0; // the runs and the data stay as they were
        showError(tr("The fit could not run: %1").arg(message));
        emit fitFailed(message);
    });
    restoreSettings();
}

MainWindow::~MainWindow() = default;

void MainWindow::logLine(const QString& text)
{
    m_log->appendPlainText(QStringLiteral("%1  %2").arg(QTime::currentTime().toString(QStringLiteral("HH:mm:ss")), text));
}

void MainWindow::logMessages(const std::vector<DatasetMessage>& messages)
{
    // The same data give the same notes at every preview and fit: each is said once per data set.
    for (const DatasetMessage& m : messages) {
        const QString line = QStringLiteral("%1: %2").arg(QString::fromLatin1(messageLevelName(m.level)), QString::fromStdString(m.text));
        if (!m_loggedMessages.contains(line)) {
            m_loggedMessages.insert(line);
            logLine(line);
        }
    }
}

void MainWindow::showError(const QString& message)
{
    m_lastError = message;
    logLine(tr("error: %1").arg(message));
    showInMessageBar(message, true);
    emit errorShown(message);
}

void MainWindow::showInMessageBar(const QString& message, bool error)
{
    // No dialog: the user's work and a running fit go on, and nothing waits for a click.
    m_messageText->setText(message);
    QPalette palette = m_messageBar->palette();
    palette.setColor(QPalette::Window, error ? QColor(250, 222, 220) : QColor(253, 240, 205));
    palette.setColor(QPalette::WindowText, QColor(30, 30, 30));
    m_messageBar->setPalette(palette);
    m_messageText->setPalette(palette);
    m_messageBar->show();
}

QString MainWindow::messageBarText() const
{
    return m_messageBar->isHidden() ? QString() : m_messageText->text();
}

void MainWindow::loadDemo(bool startAfterLoading, const QString& preset)
{
    if (m_session->isBusy() || isFitting())
        return;
    if (!presetSessionNames().contains(preset)) {
        showError(tr("Unknown demo '%1' (demo, pupil or vectorial).").arg(preset));
        return;
    }
    // Started at once, the demo fits twice, order 2 and then order 4, so that the Runs tab has two runs to compare
    // (what the higher orders add); fitFinished() comes after the second. The other presets fit once.
    m_demoFollowUpOrder = preset == QLatin1String("demo") && startAfterLoading ? 4 : 0;
    m_demoStartOrder = startAfterLoading ? 2 : 4;
    statusBar()->showMessage(tr("simulating the demo data…"));
    // Connected before the preset is made: its continuation (and dataLoaded) may come before loadPreset() returns.
    if (startAfterLoading)
        fitWhenLoaded();
    m_session->loadPreset(preset, m_setup->preprocessOptions());
}

QStringList MainWindow::presetSessionNames()
{
    return {QStringLiteral("demo"), QStringLiteral("pupil"), QStringLiteral("vectorial"), QStringLiteral("air")};
}

void MainWindow::applyPresetSettings(const QString& name)
{
    ModelSettings model = m_setup->modelSettings();
    if (name != QLatin1String("demo")) {
        // The model the preset is made for (core's applyPresetSettings) over the settings on the left.
        SolverSettings solver = m_setup->solverSettings();
        wfs::applyPresetSettings(name.toStdString(), model, solver);
        m_setup->setSolverSettings(solver);
    } else {
        model.order = m_demoStartOrder;
    }
    m_setup->setModelSettings(model);
}

void MainWindow::fitWhenLoaded()
{
    auto connection = std::make_shared<QMetaObject::Connection>();
    *connection = connect(this, &MainWindow::dataLoaded, this, [this, connection] {
        disconnect(*connection);
        startFit();
    });
}

void MainWindow::openFiles(const QStringList& paths, bool append)
{
    if (m_session->isBusy() || isFitting()) {
        showError(tr("Wait for the running job to end (or cancel the fit) before loading data."));
        return;
    }
    statusBar()->showMessage(tr("reading %1 file(s)…").arg(paths.size()));
    m_session->openFiles(paths, append, m_setup->preprocessOptions());
}

// Every load (files, a preset, a session) ends here: what it said, then dataLoaded().
void MainWindow::loadFinished(const LoadOutcome& outcome)
{
    statusBar()->clearMessage();
    m_loggedMessages.clear(); // notes about other data may be said again
    logMessages(outcome.messages);
    const QString errors = QString::fromStdString(messagesText(outcome.messages, MessageLevel::Error));
    if (!outcome.loaded) {
        // Nothing usable: what was loaded before stays.
        m_demoFollowUpOrder = 0;
        showError(!outcome.error.isEmpty() ? outcome.error : errors.isEmpty() ? tr("No image planes were read.") : errors);
        emit dataLoaded();
        return;
    }
    const Dataset& dataset = m_session->dataset();
    switch (outcome.source) {
    case LoadOutcome::Source::Files:
        addRecent(outcome.paths);
        // Real data open on the loading step (the planes, a proposal, every missing setting at once); the demos come set up.
        showLoadStep(this, m_setup, dataset, !m_session->truth());
        if (!errors.isEmpty())
            showError(errors); // some files failed; the planes that loaded stay
        statusBar()->showMessage(tr("%1 plane(s) loaded").arg(dataset.planes.size()), 5000);
        break;
    case LoadOutcome::Source::Preset:
        showLoadStep(this, m_setup, dataset, false);
        statusBar()->showMessage(tr("%1 plane(s) simulated").arg(dataset.planes.size()), 5000);
        break;
    case LoadOutcome::Source::Session: {
        const QString warnings = QString::fromStdString(messagesText(outcome.messages, MessageLevel::Warning));
        if (!errors.isEmpty() || !warnings.isEmpty()) // said in Messages already; the bar keeps them in sight
            showInMessageBar((errors + QLatin1Char('\n') + warnings).trimmed(), !errors.isEmpty());
        logLine(tr("session %1 opened").arg(outcome.paths.value(0)));
        if (outcome.resultRestored)
            logLine(tr("saved result restored: final cost %1").arg(result()->solver.finalCost, 0, 'g', 10));
        else if (!outcome.error.isEmpty())
            showError(outcome.error);
        break;
    }
    }
    emit dataLoaded();
}

void MainWindow::applySessionSettings(const Session& settings)
{
    m_setup->setModelSettings(settings.model);
    m_setup->setSolverSettings(settings.solver);
}

// Empties every view of the current result (the runs keep theirs) and leaves nothing to export: for a fit starting,
// and when other data are loaded, so that no number on screen describes data that are no longer the ones shown.
void MainWindow::clearResult(const QString& resultsMessage, const QString& phaseMessage)
{
    m_session->setResult(nullptr);
    m_convergence->clear();
    m_chart->clear();
    m_results->clear(resultsMessage);
    m_psfPanel->setAnalysis(nullptr);
    m_phasePanel->clear(phaseMessage);
    m_planesPanel->clearModels();
    m_statusFit->clear();
}

// The pixel pitch the views' µm axes and widths use: the fit's (a value typed in Setup included), else the file's.
double MainWindow::pixelPitchShown() const
{
    const double fitted = m_session->result() ? m_session->exportContext().samplePixelPitch : 0.0;
    return fitted > 0 ? fitted : m_session->dataset().metadata.pixelPitch.value_or(0.0);
}

void MainWindow::datasetChanged()
{
    const Dataset& dataset = m_session->dataset();
    if (m_session->result())
        clearResult(tr("New data loaded: no fit of them yet. Start a fit (Ctrl+R); earlier fits stay in the Runs tab."),
                    tr("no fit of these data yet: start one (Ctrl+R)"));
    m_setup->showPlanes(dataset);
    m_planesPanel->setPixelPitch(pixelPitchShown());
    // What the user typed for these files survives opening them again; other data show their own values.
    QStringList files;
    for (const DatasetFile& file : dataset.files)
        files << QString::fromStdString(file.path);
    if (!files.isEmpty() && files == m_shownFiles)
        m_setup->showMetadataKeepingEdits(dataset.metadata);
    else
        m_setup->showMetadata(dataset.metadata);
    m_shownFiles = files;
    m_setup->setPreprocessOptions(dataset.preprocess);
    m_setup->setDataMode(true);
    updateSampling();
    // The title names the data, as a viewer's does: the first file, and how many more.
    QString name;
    if (!dataset.files.empty())
        name = QFileInfo(QString::fromStdString(dataset.files.front().path)).fileName();
    if (dataset.files.size() > 1)
        name = tr("%1 and %n more", nullptr, int(dataset.files.size() - 1)).arg(name);
    setWindowTitle(name.isEmpty() ? tr("Wavefront Studio") : tr("%1 — Wavefront Studio").arg(name));
}

void MainWindow::previewPreparation()
{
    // Shows what the preparation does (background, centring, crop, masks as blank pixels) on the
    // planes before a fit; computed on a worker, and only the newest request is shown.
    if (m_session->dataset().planes.empty() || isFitting())
        return;
    Dataset dataset = m_session->dataset();
    dataset.preprocess = m_setup->preprocessOptions();
    const int generation = ++m_previewGeneration;
    QtConcurrent::run([dataset = std::move(dataset)] { return computePreparation(dataset); })
        .then(this,
              [this, generation](Preparation preparation) {
                  if (generation != m_previewGeneration || isFitting() || preparation.planes.size() != m_session->dataset().planes.size())
                      return;
                  logMessages(preparation.messages);
                  m_session->showPreparedPlanes(preparation);
                  int masked = 0;
                  for (const PlanePreparation& plane : preparation.planes)
                      masked += plane.saturatedPixels + plane.badPixels;
                  statusBar()->showMessage(
                      tr("preparation preview: %1 plane(s), %2 masked pixel(s)").arg(preparation.planes.size()).arg(masked), 5000);
                  emit preparationPreviewed();
              })
        .onFailed(this, [this](const std::exception& e) { showError(tr("Preparation failed: %1").arg(workerErrorText(e))); });
}

void MainWindow::updateSampling()
{
    DatasetMetadata metadata = m_session->dataset().metadata;
    m_setup->applyMetadata(metadata);
    std::vector<DatasetMessage> messages;
    try {
        const double q = samplingFromMetadata(metadata, &messages);
        const QString warnings = QString::fromStdString(messagesText(messages, MessageLevel::Warning));
        m_setup->setSamplingInfo(
            tr("Sampling Q = %1 (Nyquist at 2)%2").arg(q, 0, 'g', 4).arg(warnings.isEmpty() ? QString() : QStringLiteral("\n") + warnings),
            !warnings.isEmpty());
    } catch (const std::exception& e) {
        m_setup->setSamplingInfo(workerErrorText(e), true);
    }
}

bool MainWindow::isFitting() const
{
    return m_engine->isRunning();
}

void MainWindow::startFit()
{
    if (isFitting() || m_session->isBusy())
        return;
    // A fit refused before it starts ends like one that failed: fitFailed() says why.
    Dataset& dataset = m_session->editableDataset();
    if (dataset.planes.empty()) {
        const QString message = tr("No data: open PSF images (Ctrl+O) or try the demo first.");
        showError(message);
        emit fitFailed(message);
        return;
    }
    // Every missing or invalid setting at once (core's list), each also marked beside its field.
    if (const std::vector<SettingProblem> missing = m_setup->checkSettings(dataset); hasErrors(missing)) {
        QStringList texts;
        for (const SettingProblem& p : missing)
            if (p.level == MessageLevel::Error)
                texts << QString::fromStdString(p.message);
        const QString message = tr("Cannot start: %n setting(s) missing or invalid, marked on the left:", nullptr, int(texts.size()))
                                + QLatin1Char('\n') + texts.join(QLatin1Char('\n'));
        showError(message);
        emit fitFailed(message);
        return;
    }
    const QStringList problems = m_setup->applyPlaneEdits(dataset) + m_setup->modelTextProblems();
    if (!problems.isEmpty()) {
        showError(problems.join(QLatin1Char('\n')));
        emit fitFailed(problems.join(QLatin1Char('\n')));
        return;
    }
    m_setup->applyMetadata(dataset.metadata);
    dataset.preprocess = m_setup->preprocessOptions();
    Session settings;
    settings.dataset = dataset;
    settings.model = m_setup->modelSettings();
    settings.solver = m_setup->solverSettings();
    // A fit started from the Load tab is watched where it shows: the phase map (and the docks' results).
    if (m_tabs->currentWidget()->property("tabKey").toString() == QLatin1String("load"))
        showTab(QStringLiteral("phase"));
    setRunning(true);
    statusBar()->showMessage(tr("preparing the data…"));
    m_session->prepareFit(std::move(settings)); // fitPrepared() or fitPreparationFailed()
}

void MainWindow::fitPrepared(const PreparedRun& run)
{
    const BuiltProblem& built = run.problem;
    logMessages(run.messages);
    statusBar()->clearMessage();
    ReconstructionRequest request = run.request;
    request.liveImageInterval = 0.25;
    request.analysis.psfAnalysis = true; // the PSF tab's pictures, computed with the result on the worker

    m_session->adoptProblem(built, run.context);
    clearResult(tr("Fitting…"), tr("waiting for the first iterate…"));
    logLine(tr("fit started: %1 planes, grid %2, order %3, %4 parameters, Q = %5")
                .arg(built.spec.planes.size())
                .arg(built.spec.grid.size)
                .arg(built.spec.basis.maxOrder)
                .arg(built.start.size())
                .arg(built.samplingQ, 0, 'g', 4));
    m_engine->start(std::move(request));
}

void MainWindow::cancelFit()
{
    if (isFitting()) {
        logLine(tr("cancelling; the last accepted iterate is kept"));
        m_engine->cancel();
        // Until the worker stops (within one model evaluation) the bar stays busy and says so.
        m_cancelAction->setEnabled(false);
        m_progressLabel->setText(tr("cancelling…"));
    }
}

namespace {
// The truth's value of `mode`, when the data are simulated and the truth has that term.
std::optional<double> truthWaves(const std::optional<Truth>& truth, const ZernikeMode& mode)
{
    std::optional<double> waves;
    if (truth)
        for (const TruthTerm& tt : truth->terms)
            if (zernike::modeFromIndex(tt.index, truth->ordering) == mode)
                waves = tt.valueWaves;
    return waves;
}
} // namespace

void MainWindow::onProgress(const ProgressSnapshot& s)
{
    std::vector<ChartTerm> terms;
    const ZernikeOrdering ordering = m_session->ordering();
    const auto modes = zernike::modes(s.order, ordering);
    for (size_t t = 1; t < s.zernikeWaves.size() && t < modes.size(); ++t)
        terms.push_back(
            {zernike::indexFromMode(modes[t], ordering), modes[t], s.zernikeWaves[t], truthWaves(m_session->truth(), modes[t]), 0.0});
    m_chart->setTerms(terms, m_session->wavelength(), ordering);
    m_phasePanel->setPupilGeometry(s.phaseGeometry);
    m_phasePanel->setPhase(s.phase, m_session->wavelength());
    if (!s.models.empty())
        m_planesPanel->setModels(s.models, s.residuals);
    const bool cancelling = !m_cancelAction->isEnabled(); // the label says so until the fit has stopped
    if (!cancelling)
        m_progressLabel->setText(tr("stage %1/%2 · iteration %3 · cost %4")
                                     .arg(s.stage + 1)
                                     .arg(s.stageCount)
                                     .arg(s.iteration.iteration)
                                     .arg(s.iteration.cost, 0, 'g', 6));
    const double rate = s.iteration.elapsedSeconds > 0 ? double(s.iteration.costEvaluations) / s.iteration.elapsedSeconds : 0.0;
    m_statusFit->setText(tr("stage %1/%2 · iteration %3 · %4 evaluations · %5 s · %6 evaluations/s · cost %7")
                             .arg(s.stage + 1)
                             .arg(s.stageCount)
                             .arg(s.iteration.iteration)
                             .arg(s.iteration.costEvaluations)
                             .arg(s.iteration.elapsedSeconds, 0, 'f', 1)
                             .arg(rate, 0, 'f', 0)
                             .arg(s.iteration.cost, 0, 'g', 8));
}

void MainWindow::onFinished(std::shared_ptr<const FitResult> shared)
{
    setRunning(false);
    // The engine's result, shared from here on by the views, the exports and the run that keeps it.
    const FitResult& result = *shared;
    m_session->setResult(shared);
    logLine(tr("fit %1: %2")
                .arg(QString::fromLatin1(terminationName(result.solver.termination)), QString::fromStdString(result.solver.message)));
    for (const std::string& w : result.warnings)
        logLine(tr("warning: %1").arg(QString::fromStdString(withSymbols(w))));
    const Termination termination = result.solver.termination;
    if (termination == Termination::Failed) {
        showError(tr("The fit failed: %1. The settings, data and runs are kept; try the CPU backend or other settings.")
                      .arg(QString::fromStdString(result.solver.message)));
        concludeFit(termination);
        return;
    }
    // The run's record (the result as JSON) in an event of its own, so that drawing the result and
    // recording it do not add up to one long stall of the event loop.
    QTimer::singleShot(0, this, [this, shared] {
        m_session->addRun(shared);
        concludeFit(shared->solver.termination);
    });
}

// After a fit and its run: the demo's second fit, or fitFinished().
void MainWindow::concludeFit(Termination termination)
{
    if (m_demoFollowUpOrder > 0 && termination != Termination::Failed && termination != Termination::Cancelled) {
        ModelSettings model = m_setup->modelSettings();
        model.order = std::exchange(m_demoFollowUpOrder, 0);
        m_setup->setModelSettings(model);
        logLine(tr("demo: now fitting order %1; the Runs tab compares the two fits").arg(model.order));
        QTimer::singleShot(0, this, &MainWindow::startFit);
        return;
    }
    m_demoFollowUpOrder = 0;
    emit fitFinished();
}

void MainWindow::watchFolder(const QString& folder)
{
    Session settings;
    settings.model = m_setup->modelSettings();
    settings.solver = m_setup->solverSettings();
    showTab(QStringLiteral("live"));
    m_livePanel->watchFolder(folder, settings);
    logLine(tr("Live: watching %1 (log %2)").arg(folder, QDir(folder).filePath(QStringLiteral("live.jsonl"))));
}

void MainWindow::startLiveDemo()
{
    Session settings;
    settings.model = m_setup->modelSettings();
    settings.solver = m_setup->solverSettings();
    showTab(QStringLiteral("live"));
    m_livePanel->startDemo(settings);
}

void MainWindow::showResult()
{
    if (!m_session->result())
        return; // cleared for a fit starting: the views say so themselves
    const FitResult& result = *m_session->result();
    const std::optional<Truth>& truth = m_session->truth();
    m_results->showResult(result, truth);
    std::vector<ChartTerm> terms;
    for (const CoefficientResult& c : result.coefficients)
        terms.push_back({c.index, c.mode, c.waves, truthWaves(truth, c.mode), c.uncertaintyWaves});
    m_chart->setTerms(terms, result.wavelength, result.ordering);
    m_phasePanel->setPupilGeometry(result.phaseMapGeometry);
    m_phasePanel->setPhase(result.phaseMap, result.wavelength);
    m_phasePanel->setAberration(result.aberrationMap, result.defocusRemoved ? tr("piston, tip, tilt, defocus") : tr("piston, tip, tilt"));
    m_phasePanel->setPupilMaps(result.pupilAmplitude, result.zonalRemainderMap); // absent when the fit has none
    std::vector<Image> models;
    std::vector<PlaneResiduals> residuals;
    for (const PlaneResult& plane : result.planes) {
        models.push_back(plane.model);
        residuals.push_back({plane.residual, plane.normalizedResidual});
    }
    m_planesPanel->setModels(std::move(models), std::move(residuals));
    m_psfPanel->setPixelPitch(pixelPitchShown());
    m_planesPanel->setPixelPitch(pixelPitchShown());
    m_psfPanel->setAnalysis(result.psf ? std::shared_ptr<const PsfAnalysis>(m_session->result(), &*result.psf) : nullptr);
    m_statusFit->setText(tr("%1 · %2 iterations · %3 evaluations · %4 s · %5 waves RMS · Strehl %6")
                             .arg(QString::fromLatin1(terminationName(result.solver.termination))
                                  + (result.verdict.describesData ? QString() : tr(", but the model does not fit its data")))
                             .arg(result.solver.iterations)
                             .arg(result.solver.costEvaluations)
                             .arg(result.solver.seconds, 0, 'f', 2)
                             .arg(result.rmsWaves, 0, 'f', 4)
                             .arg(result.strehl, 0, 'f', 3));
}

void MainWindow::resizeEvent(QResizeEvent* event)
{
    QMainWindow::resizeEvent(event);
    fitDocks();
}

// A new font (presentation mode) makes the setup panel wider: its scroll area, then the docks, follow.
void MainWindow::changeEvent(QEvent* event)
{
    QMainWindow::changeEvent(event);
    if (event->type() == QEvent::FontChange) // measured once every widget has the new font and its layout's hints
        QTimer::singleShot(0, this, &MainWindow::fitSetupColumn);
}

void MainWindow::fitDocks()
{
    // The docks take a share of the window, within limits, so that the images in the centre keep
    // room at 1280 x 800 as at 1920 x 1080; the setup dock never narrower than its panel.
    const int w = width(), h = height();
    const int setup = std::max(m_setupDock->minimumSizeHint().width(), std::min(int(0.2 * w), 400));
    const int right = std::clamp(int(0.3 * w), 340, 540);
    resizeDocks({m_setupDock, m_convergenceDock}, {setup, right}, Qt::Horizontal);
    resizeDocks({m_convergenceDock, m_chartDock}, {int(0.4 * h), int(0.6 * h)}, Qt::Vertical);
}

void MainWindow::closeEvent(QCloseEvent* event)
{
    m_engine->cancel();
    saveSettings();
    event->accept();
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event)
{
    if (event->mimeData()->hasUrls())
        event->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* event)
{
    QStringList paths;
    for (const QUrl& url : event->mimeData()->urls())
        if (url.isLocalFile())
            paths << url.toLocalFile();
    if (!paths.isEmpty())
        openFiles(paths, !dataset().planes.empty()); // dropped files join what is loaded
}

} // namespace wfs::ui
