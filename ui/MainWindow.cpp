#include "MainWindow.h"

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
    connect(m_engine, &EngineController::failed, this, [this](const QString& message) {
        setRunning(false);
        m_demoFollowUpOrder = 0; // the runs and the data stay as they were
        showError(tr("The fit could not run: %1").arg(message));
        emit fitFailed(message);
    });
    restoreSettings();
}

MainWindow::~MainWindow() = default;

QString MainWindow::errorText(const std::exception& e)
{
    if (const auto* wrapped = dynamic_cast<const QUnhandledException*>(&e); wrapped && wrapped->exception()) {
        try {
            std::rethrow_exception(wrapped->exception());
        } catch (const std::exception& original) {
            return QString::fromUtf8(original.what());
        } catch (...) {
            return tr("an unknown error");
        }
    }
    return QString::fromUtf8(e.what());
}

namespace {

// A teaching panel as a tab that scrolls vertically when the window is short; its width follows the window.
QScrollArea* scrolledTab(QTabWidget* tabs, QWidget* panel, const QString& key)
{
    auto* area = new QScrollArea(tabs);
    area->setWidget(panel);
    area->setWidgetResizable(true);
    area->setFrameShape(QFrame::NoFrame);
    area->setProperty("tabKey", key);
    return area;
}

// The setup panel, scrollable. Vertical scrolling only: the panel's width follows the dock, so nothing
// is clipped sideways.
QScrollArea* setupScrollArea(QWidget* parent, QWidget* setup)
{
    auto* scroll = new QScrollArea(parent);
    scroll->setObjectName(QStringLiteral("setupScroll"));
    scroll->setWidget(setup);
    scroll->setWidgetResizable(true);
    scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    scroll->setFrameShape(QFrame::NoFrame);
    scroll->setMinimumWidth(setup->minimumSizeHint().width() + scroll->verticalScrollBar()->sizeHint().width() + 4);
    return scroll;
}

// `content` in a new dock of `window`, in `area`.
QDockWidget* addDock(QMainWindow* window, Qt::DockWidgetArea area, const QString& title, const QString& objectName, QWidget* content)
{
    auto* dock = new QDockWidget(title, window);
    dock->setObjectName(objectName);
    dock->setWidget(content);
    window->addDockWidget(area, dock);
    return dock;
}

// The teaching tabs have nothing to do with the fit: while one is shown, the fit's docks make room
// for it (and come back as they were with the fit's tabs). `hidden` and `raised` remember the docks
// between the two calls; `fallback` is raised when none of them was in front.
void makeRoomForTeachingTab(QMainWindow* window, bool teaching, QList<QDockWidget*>& hidden, QList<QDockWidget*>& raised,
                            QDockWidget* fallback)
{
    if (teaching && hidden.isEmpty()) {
        // Open docks (tabified ones too), and which of each tab group was in front.
        raised.clear();
        for (QDockWidget* dock : window->findChildren<QDockWidget*>())
            if (!dock->isHidden() || dock->toggleViewAction()->isChecked()) {
                hidden.append(dock);
                if (dock->isVisible())
                    raised.append(dock);
            }
        for (QDockWidget* dock : std::as_const(hidden))
            dock->hide();
    } else if (!teaching && !hidden.isEmpty()) {
        for (QDockWidget* dock : std::as_const(hidden))
            dock->show();
        for (QDockWidget* dock : std::as_const(raised))
            dock->raise();
        if (raised.isEmpty())
            fallback->raise();
        hidden.clear();
    }
}

} // namespace

void MainWindow::buildViews()
{
    buildTabs();
    buildCentre();
    buildDocks();
    buildStatusBar();
}

// The centre's tabs: phase map, the planes, PSF analysis, runs, and the teaching and live panels.
void MainWindow::buildTabs()
{
    // Centre: phase map, the planes, the teaching panels.
    m_tabs = new QTabWidget(this);
    m_tabs->setObjectName(QStringLiteral("mainTabs"));
    // An explicit minimum: the widest page must not widen the window beyond the size asked for (pages
    // arrange themselves in the room they get).
    m_tabs->setMinimumWidth(440);
    m_phasePanel = new PhasePanel(m_tabs);
    m_phaseView = m_phasePanel->view();
    m_tabs->addTab(m_phasePanel, tr("Phase"));
    m_tabs->setTabToolTip(m_tabs->count() - 1, tr("The fitted wavefront over the pupil, and the fitted pupil amplitude and zonal phase"));
    m_phasePanel->setProperty("tabKey", QStringLiteral("phase"));
    m_planesPanel = new PlanesPanel(m_tabs);
    m_dataView = m_planesPanel->dataView();
    m_modelView = m_planesPanel->modelView();
    m_residualView = m_planesPanel->residualView();
    // Short tab names (the tooltips say more): every tab in view at 1280 px, the loading step's too, without
    // scroll arrows.
    m_tabs->addTab(m_planesPanel, tr("Data / model"));
    m_tabs->setTabToolTip(m_tabs->count() - 1, tr("Data, model, residual and normalised residual of each plane"));
    m_planesPanel->setProperty("tabKey", QStringLiteral("planes"));
    m_psfPanel = new PsfPanel(m_tabs);
    m_tabs->addTab(m_psfPanel, tr("PSF"));
    m_tabs->setTabToolTip(m_tabs->count() - 1,
                          tr("PSF analysis: fitted and diffraction-limited PSF, MTF, profiles, encircled energy, Strehl"));
    m_psfPanel->setProperty("tabKey", QStringLiteral("psf"));
    m_runsPanel = new RunsPanel(m_tabs);
    m_tabs->addTab(m_runsPanel, tr("Runs"));
    m_runsPanel->setProperty("tabKey", QStringLiteral("runs"));
    m_speedupLab = new SpeedupLab;
    m_tabs->addTab(scrolledTab(m_tabs, m_speedupLab, QStringLiteral("speedup")), tr("Speed-up"));
    m_tabs->setTabToolTip(m_tabs->count() - 1,
                          tr("Speed-up lab: finite differences against the exact gradient, CPU and GPU, on this machine"));
    m_fasthPanel = new FasthPanel;
    m_fasthPanel->setProperty("tabKey", QStringLiteral("fasth")); // its controls scroll on their own
    m_tabs->addTab(m_fasthPanel, tr("FastH"));
    m_livePanel = new LivePanel(m_tabs);
    m_livePanel->setProperty("tabKey", QStringLiteral("live"));
    m_tabs->addTab(m_livePanel, tr("Live"));
    m_tabs->setTabToolTip(m_tabs->count() - 1, tr("Live mode: every stack a camera writes into a folder, fitted at once, with the trend"));
    connect(m_livePanel, &LivePanel::watchFolderRequested, this, [this] {
        const QString folder = QFileDialog::getExistingDirectory(this, tr("Watch folder"));
        if (!folder.isEmpty())
            watchFolder(folder);
    });
    connect(m_livePanel, &LivePanel::demoRequested, this, &MainWindow::startLiveDemo);
    connect(m_livePanel, &LivePanel::message, this, [this](const QString& text, bool error) {
        if (error)
            showInMessageBar(text, true);
        logLine(text);
    });
    // Before any data, the centre says how to begin.
    m_phasePanel->clear(tr("No data yet: open PSF images (Ctrl+O), or try the Demo or the Pupil demo (buttons on the left)"));
}

// The centre: the tabs under a bar with the latest error or warning.
void MainWindow::buildCentre()
{
    // Above the views, a bar with the latest error or warning: seen without a dialog in the way, closed
    // with its button (every message stays in Messages).
    m_messageBar = new QFrame(this);
    m_messageBar->setObjectName(QStringLiteral("messageBar"));
    m_messageBar->setAutoFillBackground(true);
    auto* barLayout = new QHBoxLayout(m_messageBar);
    barLayout->setContentsMargins(8, 4, 4, 4);
    m_messageText = new QLabel(m_messageBar);
    m_messageText->setObjectName(QStringLiteral("messageBarText"));
    m_messageText->setWordWrap(true);
    m_messageText->setTextInteractionFlags(Qt::TextSelectableByMouse);
    auto* closeBar = new QToolButton(m_messageBar);
    closeBar->setObjectName(QStringLiteral("messageBarClose"));
    closeBar->setAutoRaise(true);
    closeBar->setText(QStringLiteral("✕"));
    closeBar->setToolTip(tr("Close this message (it stays in Messages)"));
    connect(closeBar, &QToolButton::clicked, m_messageBar, &QWidget::hide);
    barLayout->addWidget(m_messageText, 1);
    barLayout->addWidget(closeBar, 0, Qt::AlignTop);
    m_messageBar->hide();
    auto* centre = new QWidget(this);
    auto* centreLayout = new QVBoxLayout(centre);
    centreLayout->setContentsMargins(0, 0, 0, 0);
    centreLayout->setSpacing(0);
    centreLayout->addWidget(m_messageBar);
    centreLayout->addWidget(m_tabs, 1);
    setCentralWidget(centre);
}

// The setup panel on the left; convergence, coefficients, results and messages on the right.
void MainWindow::buildDocks()
{
    // Left: the setup panel, scrollable.
    m_setupDock = addDock(this, Qt::LeftDockWidgetArea, tr("Setup"), QStringLiteral("setupDock"), setupScrollArea(this, m_setup));

    // Right, the whole height: convergence on top; below it the coefficients as a chart, as a table
    // (the results) and the message log, as tabs. The centre keeps the full height for images.
    setCorner(Qt::BottomRightCorner, Qt::RightDockWidgetArea);
    setCorner(Qt::BottomLeftCorner, Qt::LeftDockWidgetArea);
    m_convergence = new ConvergencePlot(this);
    m_convergenceDock = addDock(this, Qt::RightDockWidgetArea, tr("Convergence"), QStringLiteral("convergenceDock"), m_convergence);
    m_chart = new ZernikeChart(this);
    m_chartDock = addDock(this, Qt::RightDockWidgetArea, tr("Zernike coefficients"), QStringLiteral("chartDock"), m_chart);
    m_results = new ResultsPanel(this);
    m_resultsDock = addDock(this, Qt::RightDockWidgetArea, tr("Results"), QStringLiteral("resultsDock"), m_results);
    m_log = new QPlainTextEdit(this);
    m_log->setReadOnly(true);
    m_log->setObjectName(QStringLiteral("messageLog"));
    QDockWidget* logDock = addDock(this, Qt::RightDockWidgetArea, tr("Messages"), QStringLiteral("logDock"), m_log);
    tabifyDockWidget(m_chartDock, m_resultsDock);
    tabifyDockWidget(m_resultsDock, logDock);
    m_chartDock->raise();

    connect(m_tabs, &QTabWidget::currentChanged, this, [this] {
        const QString key = m_tabs->currentWidget()->property("tabKey").toString();
        const bool teaching = key == QLatin1String("speedup") || key == QLatin1String("fasth") || key == QLatin1String("live");
        makeRoomForTeachingTab(this, teaching, m_hiddenDocks, m_raisedDocks, m_chartDock);
    });
}

// The fit's state and the cursor's value in the status bar.
void MainWindow::buildStatusBar()
{
    m_statusFit = new QLabel(tr("ready"), this);
    m_statusCursor = new QLabel(this);
    statusBar()->addWidget(m_statusFit, 1);
    statusBar()->addPermanentWidget(m_statusCursor);
    for (ImageView* view : {m_phaseView, m_dataView, m_modelView, m_residualView})
        connect(view, &ImageView::cursorMoved, m_statusCursor, &QLabel::setText);
}

void MainWindow::buildToolBar()
{
    // Start and Cancel stay in reach whatever the window size and however far the setup panel scrolls.
    auto* bar = addToolBar(tr("Fit"));
    bar->setObjectName(QStringLiteral("fitToolBar"));
    bar->setMovable(false);
    bar->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
    bar->addAction(m_openAction);
    bar->addAction(style()->standardIcon(QStyle::SP_FileIcon), tr("Demo data"), this, [this] { loadDemo(false); });
    bar->addSeparator();
    bar->addAction(m_startAction);
    bar->addAction(m_cancelAction);
    bar->addSeparator();
    m_progress = new QProgressBar(bar);
    m_progress->setObjectName(QStringLiteral("fitProgress"));
    m_progress->setMaximumWidth(180);
    m_progress->setTextVisible(false);
    m_progress->setVisible(false);
    m_progressAction = bar->addWidget(m_progress);
    m_progressAction->setVisible(false);
    m_progressLabel = new QLabel(bar);
    m_progressLabel->setObjectName(QStringLiteral("fitProgressLabel"));
    m_progressLabel->setContentsMargins(6, 0, 6, 0);
    bar->addWidget(m_progressLabel);
}

void MainWindow::setRunning(bool running)
{
    m_setup->setRunning(running);
    m_startAction->setEnabled(!running);
    m_cancelAction->setEnabled(running);
    m_progressAction->setVisible(running);
    m_progress->setVisible(running);
    if (running) {
        m_progress->setRange(0, 0); // busy until the first iterate tells the stage
        m_progressLabel->setText(tr("preparing…"));
    } else {
        m_progressLabel->clear();
    }
}

bool MainWindow::showTab(const QString& key)
{
    for (int i = 0; i < m_tabs->count(); ++i)
        if (m_tabs->widget(i)->property("tabKey").toString() == key) {
            m_tabs->setCurrentIndex(i);
            return true;
        }
    return false;
}

QStringList MainWindow::dockKeys()
{
    return {QStringLiteral("coefficients"), QStringLiteral("results"), QStringLiteral("messages")};
}

bool MainWindow::showDock(const QString& key)
{
    const QString names[] = {QStringLiteral("chartDock"), QStringLiteral("resultsDock"), QStringLiteral("logDock")};
    const int index = int(dockKeys().indexOf(key));
    if (index < 0)
        return false;
    auto* dock = findChild<QDockWidget*>(names[index]);
    if (!dock)
        return false;
    dock->show();
    dock->raise();
    return true;
}

QStringList MainWindow::tabKeys() const
{
    QStringList keys;
    for (int i = 0; i < m_tabs->count(); ++i)
        keys << m_tabs->widget(i)->property("tabKey").toString();
    return keys;
}

void MainWindow::buildActions()
{
    // Each command is one action, in the menu and on the tool bar alike, so its shortcut is bound once
    // (two actions with one shortcut are ambiguous, and Qt then fires neither).
    m_openAction = new QAction(style()->standardIcon(QStyle::SP_DialogOpenButton), tr("&Open images…"), this);
    m_openAction->setObjectName(QStringLiteral("openAction"));
    m_openAction->setShortcut(QKeySequence::Open);
    m_openAction->setToolTip(tr("Open PSF images: FITS, TIFF stacks, PNG (Ctrl+O)"));
    connect(m_openAction, &QAction::triggered, m_setup, &SetupPanel::openRequested);
    m_startAction = new QAction(style()->standardIcon(QStyle::SP_MediaPlay), tr("&Start fit"), this);
    m_startAction->setObjectName(QStringLiteral("startAction"));
    m_startAction->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_R));
    m_startAction->setToolTip(tr("Start the reconstruction with the settings on the left (Ctrl+R)"));
    connect(m_startAction, &QAction::triggered, this, &MainWindow::startFit);
    m_cancelAction = new QAction(style()->standardIcon(QStyle::SP_MediaStop), tr("&Cancel fit"), this);
    m_cancelAction->setObjectName(QStringLiteral("cancelAction"));
    m_cancelAction->setShortcut(QKeySequence(Qt::Key_Escape));
    m_cancelAction->setToolTip(tr("Stop the fit; the last accepted iterate is kept (Esc)"));
    m_cancelAction->setEnabled(false);
    connect(m_cancelAction, &QAction::triggered, this, &MainWindow::cancelFit);
    m_saveSessionAction = new QAction(tr("&Save session…"), this);
    m_saveSessionAction->setObjectName(QStringLiteral("saveSessionAction"));
    m_saveSessionAction->setShortcut(QKeySequence::Save);
    connect(m_saveSessionAction, &QAction::triggered, this, [this] {
        const QString path =
            QFileDialog::getSaveFileName(this, tr("Save session"), suggestedExportName(QStringLiteral("session")), tr("Sessions (*.json)"));
        if (!path.isEmpty())
            saveSessionTo(path);
    });
}

void MainWindow::buildMenus()
{
    QMenu* file = menuBar()->addMenu(tr("&File"));
    file->addAction(m_openAction);
    m_recentMenu = file->addMenu(tr("Open &recent"));
    file->addAction(tr("&Demo data"), this, [this] { loadDemo(false); });
    file->addAction(tr("&Pupil demo data (zonal pupil)"), this, [this] { loadDemo(false, QStringLiteral("pupil")); });
    file->addSeparator();
    file->addAction(tr("Open &session…"), this, [this] {
        const QString path = QFileDialog::getOpenFileName(this, tr("Open session"), QString(), tr("Sessions (*.json)"));
        if (!path.isEmpty())
            openSessionFrom(path);
    });
    file->addAction(m_saveSessionAction);
    file->addAction(tr("&Watch folder…"), this, [this] {
        const QString folder = QFileDialog::getExistingDirectory(this, tr("Watch folder"));
        if (!folder.isEmpty())
            watchFolder(folder);
    });
    // Everything the command line writes after a fit (core's table, io/ExportKinds.h), each with its file type
    // and a name made from the data's.
    QMenu* exports = file->addMenu(tr("&Export"));
    exports->setObjectName(QStringLiteral("exportMenu"));
    for (const ResultExport& e : resultExports()) {
        const QString key = QString::fromLatin1(e.key), label = tr(e.label);
        QAction* action =
            exports->addAction(label + QStringLiteral("…"), this, [this, key, label, filter = QString::fromLatin1(e.fileFilter)] {
                if (!m_result) {
                    showError(tr("Nothing to export yet: run a fit first."));
                    return;
                }
                const QString path = QFileDialog::getSaveFileName(this, tr("Export: %1").arg(label), suggestedExportName(key), filter);
                if (!path.isEmpty())
                    exportResultInBackground(key, path); // the dialog has asked about replacing a file
            });
        action->setData(key);
    }
    // What the fit shown has nothing of is greyed out, saying why (e.g. no fitted pupil amplitude).
    exports->setToolTipsVisible(true);
    connect(exports, &QMenu::aboutToShow, this, [this, exports] {
        for (QAction* action : exports->actions()) {
            const ResultExport* e = findResultExport(action->data().toString().toStdString());
            const QString why = !m_result ? tr("Nothing to export yet: run a fit first.")
                                          : QString::fromStdString(e ? exportUnavailable(e->kind, *m_result) : std::string());
            action->setEnabled(why.isEmpty());
            action->setToolTip(why.isEmpty() ? action->text() : why);
        }
    });
    file->addSeparator();
    file->addAction(tr("&Quit"), QKeySequence::Quit, this, &QWidget::close);

    QMenu* fit = menuBar()->addMenu(tr("F&it"));
    fit->addAction(m_startAction);
    fit->addAction(m_cancelAction);
    fit->addAction(tr("Copy coefficient table"), m_results, &ResultsPanel::copySelection);

    QMenu* view = menuBar()->addMenu(tr("&View"));
    for (QDockWidget* dock : findChildren<QDockWidget*>())
        view->addAction(dock->toggleViewAction());

    QMenu* help = menuBar()->addMenu(tr("&Help"));
    help->addAction(tr("&Conventions"), this, [this] {
        QMessageBox::information(this, tr("Conventions"),
                                 tr("Zernike ordering Noll (default) or OSA/ANSI; normalisation RMS (Noll 1976) or unit (R(1) = 1).\n"
                                    "Phase in radians internally, shown in waves or nm at the stated wavelength.\n"
                                    "RMS and PV with piston, tip and tilt removed. Strehl from the PSF peak.\n"
                                    "Images: row 0 at the bottom, x right, y up. Pupil radius 1, angles counter-clockwise from +x.\n"
                                    "Sampling Q = lambda F# / pixel; Q < 2 is undersampled.\n"
                                    "One in-focus image cannot tell the sign of even aberrations: use defocused planes."));
    });
}

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
    if (m_busy || isFitting())
        return;
    const bool pupil = preset == QLatin1String("pupil"), vectorial = preset == QLatin1String("vectorial");
    if (!pupil && !vectorial && preset != QLatin1String("demo")) {
        showError(tr("Unknown demo '%1' (demo, pupil or vectorial).").arg(preset));
        return;
    }
    m_busy = true;
    statusBar()->showMessage(tr("simulating the demo data…"));
    const QString dir = QStandardPaths::writableLocation(QStandardPaths::AppLocalDataLocation);
    QDir().mkpath(dir);
    const QString path =
        QDir(dir).filePath(preset == QLatin1String("demo") ? QStringLiteral("demo.fits") : preset + QStringLiteral("-demo.fits"));
    QtConcurrent::run([path, name = preset.toStdString()] {
        const PresetCase demo = makePreset(name, {});
        writePresetFits(path.toStdString(), demo, name, PresetOptions{}.seed, true);
        return demo.truth;
    })
        .then(this,
              [this, path, startAfterLoading, name = preset.toStdString()](Truth truth) {
                  m_busy = false;
                  ModelSettings model = m_setup->modelSettings();
                  if (name != "demo") {
                      // The model the preset is made for (engine/Presets.h). One fit.
                      SolverSettings solver = m_setup->solverSettings();
                      applyPresetSettings(name, model, solver);
                      m_demoFollowUpOrder = 0;
                      m_setup->setSolverSettings(solver);
                  } else {
                      // Started at once, the demo fits twice, order 2 and then order 4, so that the Runs tab has two
                      // runs to compare (what the higher orders add); fitFinished() comes after the second.
                      model.order = startAfterLoading ? 2 : 4;
                      m_demoFollowUpOrder = startAfterLoading ? 4 : 0;
                  }
                  m_setup->setModelSettings(model);
                  m_pendingTruth = truth; // becomes m_truth when the file has loaded
                  // Connected before the file is opened: a small file can be read before openFiles() returns, and
                  // then its continuation (and dataLoaded) runs at once, inside openFiles().
                  if (startAfterLoading)
                      fitWhenLoaded();
                  openFiles({path});
              })
        .onFailed(this, [this](const std::exception& e) {
            m_busy = false;
            showError(tr("The demo could not be created: %1").arg(errorText(e)));
        });
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
    if (m_busy || isFitting()) {
        showError(tr("Wait for the running job to end (or cancel the fit) before loading data."));
        return;
    }
    m_busy = true;
    statusBar()->showMessage(tr("reading %1 file(s)…").arg(paths.size()));
    Dataset start = append ? m_dataset : Dataset();
    start.preprocess = m_setup->preprocessOptions();
    std::vector<std::string> files;
    for (const QString& p : paths)
        files.push_back(p.toStdString());
    QtConcurrent::run([start = std::move(start), files] {
        Dataset dataset = start;
        std::vector<DatasetMessage> messages = addFiles(dataset, files);
        return std::make_pair(std::move(dataset), std::move(messages));
    }).then(this, [this, paths](std::pair<Dataset, std::vector<DatasetMessage>> loaded) {
        m_busy = false;
        m_loggedMessages.clear(); // notes about other data may be said again
        logMessages(loaded.second);
        const QString errors = QString::fromStdString(messagesText(loaded.second, MessageLevel::Error));
        if (loaded.first.planes.empty()) {
            // Nothing usable: keep what was loaded before.
            m_pendingTruth.reset();
            statusBar()->clearMessage();
            showError(errors.isEmpty() ? tr("No image planes were read.") : errors);
            emit dataLoaded();
            return;
        }
        m_dataset = std::move(loaded.first);
        m_truth = std::exchange(m_pendingTruth, std::nullopt);
        addRecent(paths);
        datasetChanged();
        // Real data open on the loading step (the planes, a proposal, every missing setting at once); the demos come set up.
        showLoadStep(this, m_setup, m_dataset, !m_truth);
        if (!errors.isEmpty())
            showError(errors); // some files failed; the planes that loaded stay
        statusBar()->showMessage(tr("%1 plane(s) loaded").arg(m_dataset.planes.size()), 5000);
        emit dataLoaded();
    });
}

void MainWindow::datasetChanged()
{
    m_setup->showPlanes(m_dataset);
    m_setup->showMetadata(m_dataset.metadata);
    m_setup->setPreprocessOptions(m_dataset.preprocess);
    m_setup->setDataMode(true);
    updateSampling();
    // Show the raw planes until a fit gives prepared data and models.
    m_planeEntries.clear();
    for (const DatasetPlane& plane : m_dataset.planes) {
        const QString source = QString::fromStdString(plane.raw.source);
        m_planeEntries.push_back({QFileInfo(source).fileName(), source, plane.raw});
    }
    m_planesPanel->setPlanes(m_planeEntries);
}

void MainWindow::previewPreparation()
{
    // Shows what the preparation does (background, centring, crop, masks as blank pixels) on the
    // planes before a fit; computed on a worker, and only the newest request is shown.
    if (m_dataset.planes.empty() || isFitting())
        return;
    Dataset dataset = m_dataset;
    dataset.preprocess = m_setup->preprocessOptions();
    const int generation = ++m_previewGeneration;
    QtConcurrent::run([dataset = std::move(dataset)] { return computePreparation(dataset); })
        .then(this,
              [this, generation](Preparation preparation) {
                  if (generation != m_previewGeneration || isFitting() || preparation.planes.size() != m_dataset.planes.size())
                      return;
                  logMessages(preparation.messages);
                  for (size_t k = 0; k < preparation.planes.size() && k < m_planeEntries.size(); ++k)
                      m_planeEntries[k].data = preparation.planes[k].image;
                  m_planesPanel->setPlanes(m_planeEntries);
                  int masked = 0;
                  for (const PlanePreparation& plane : preparation.planes)
                      masked += plane.saturatedPixels + plane.badPixels;
                  statusBar()->showMessage(
                      tr("preparation preview: %1 plane(s), %2 masked pixel(s)").arg(preparation.planes.size()).arg(masked), 5000);
                  emit preparationPreviewed();
              })
        .onFailed(this, [this](const std::exception& e) { showError(tr("Preparation failed: %1").arg(errorText(e))); });
}

void MainWindow::updateSampling()
{
    DatasetMetadata metadata = m_dataset.metadata;
    m_setup->applyMetadata(metadata);
    std::vector<DatasetMessage> messages;
    try {
        const double q = samplingFromMetadata(metadata, &messages);
        const QString warnings = QString::fromStdString(messagesText(messages, MessageLevel::Warning));
        m_setup->setSamplingInfo(
            tr("Sampling Q = %1 (Nyquist at 2)%2").arg(q, 0, 'g', 4).arg(warnings.isEmpty() ? QString() : QStringLiteral("\n") + warnings),
            !warnings.isEmpty());
    } catch (const std::exception& e) {
        m_setup->setSamplingInfo(errorText(e), true);
    }
}

bool MainWindow::isFitting() const
{
    return m_engine->isRunning();
}

void MainWindow::startFit()
{
    if (isFitting() || m_busy)
        return;
    // A fit refused before it starts ends like one that failed: fitFailed() says why.
    if (m_dataset.planes.empty()) {
        const QString message = tr("No data: open PSF images (Ctrl+O) or try the demo first.");
        showError(message);
        emit fitFailed(message);
        return;
    }
    // Every missing or invalid setting at once (core's list), each also marked beside its field.
    if (const std::vector<SettingProblem> missing = m_setup->checkSettings(m_dataset); hasErrors(missing)) {
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
    const QStringList problems = m_setup->applyPlaneEdits(m_dataset) + m_setup->modelTextProblems();
    if (!problems.isEmpty()) {
        showError(problems.join(QLatin1Char('\n')));
        emit fitFailed(problems.join(QLatin1Char('\n')));
        return;
    }
    m_setup->applyMetadata(m_dataset.metadata);
    m_dataset.preprocess = m_setup->preprocessOptions();
    Session settings;
    settings.dataset = m_dataset;
    settings.model = m_setup->modelSettings();
    settings.solver = m_setup->solverSettings();
    m_busy = true;
    setRunning(true);
    m_fitSettings.model = settings.model;
    m_fitSettings.solver = settings.solver;
    statusBar()->showMessage(tr("preparing the data…"));
    // Settings checked, data prepared, problem built: numerical work, so a worker does it, through the
    // same workflow as the command line (engine/Workflow.h).
    QtConcurrent::run([settings]() { return prepareRun(settings); })
        .then(this,
              [this](PreparedRun run) {
                  m_busy = false;
                  m_dataset.preparation = run.dataset.preparation;
                  const BuiltProblem& built = run.problem;
                  logMessages(run.messages);
                  statusBar()->clearMessage();
                  ReconstructionRequest request = std::move(run.request);
                  request.liveImageInterval = 0.25;
                  request.analysis.psfAnalysis = true; // the PSF tab's pictures, computed with the result on the worker

                  adoptProblem(built, run.context);
                  m_convergence->clear();
                  m_result.reset();
                  m_results->clear(tr("Fitting…"));
                  m_psfPanel->setAnalysis(nullptr);
                  m_phasePanel->clear(tr("waiting for the first iterate…"));
                  logLine(tr("fit started: %1 planes, grid %2, order %3, %4 parameters, Q = %5")
                              .arg(built.spec.planes.size())
                              .arg(built.spec.grid.size)
                              .arg(built.spec.basis.maxOrder)
                              .arg(built.start.size())
                              .arg(built.samplingQ, 0, 'g', 4));
                  m_engine->start(std::move(request));
              })
        .onFailed(this, [this](const std::exception& e) {
            m_busy = false;
            setRunning(false);
            m_demoFollowUpOrder = 0;
            showError(errorText(e));
            emit fitFailed(errorText(e));
        });
}

void MainWindow::adoptProblem(const BuiltProblem& built, const ExportContext& context)
{
    m_ordering = built.spec.basis.ordering;
    m_wavelength = built.spec.wavelength;
    m_exportContext = context;
    m_spec = built.spec;
    m_planeEntries.clear();
    for (size_t k = 0; k < built.spec.planes.size(); ++k) {
        const QString source = QString::fromStdString(m_dataset.planes[size_t(built.planes[k])].raw.source);
        const QString diversity = QString::fromStdString(built.spec.planes[k].diversity.describe());
        m_planeEntries.push_back({QStringLiteral("%1 · %2").arg(QFileInfo(source).fileName(), diversity),
                                  QStringLiteral("%1 (%2)").arg(source, diversity), built.spec.planes[k].data});
    }
    m_planesPanel->setPlanes(m_planeEntries);
}

void MainWindow::cancelFit()
{
    if (isFitting()) {
        logLine(tr("cancelling; the last accepted iterate is kept"));
        m_engine->cancel();
    }
}

void MainWindow::onProgress(const ProgressSnapshot& s)
{
    std::vector<ChartTerm> terms;
    const auto modes = zernike::modes(s.order, m_ordering);
    for (size_t t = 1; t < s.zernikeWaves.size() && t < modes.size(); ++t) {
        ChartTerm term{zernike::indexFromMode(modes[t], m_ordering), modes[t], s.zernikeWaves[t], std::nullopt, 0.0};
        if (m_truth)
            for (const TruthTerm& tt : m_truth->terms)
                if (zernike::modeFromIndex(tt.index, m_truth->ordering) == modes[t])
                    term.truthWaves = tt.valueWaves;
        terms.push_back(term);
    }
    m_chart->setTerms(terms, m_wavelength, m_ordering);
    m_phasePanel->setPupilGeometry(s.phaseGeometry);
    m_phasePanel->setPhase(s.phase, m_wavelength);
    if (!s.models.empty())
        m_planesPanel->setModels(s.models, s.residuals);
    const int maxIterations = std::max(1, m_setup->solverSettings().maxIterations);
    m_progress->setRange(0, maxIterations);
    m_progress->setValue(std::min(maxIterations, s.iteration.iteration));
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
    showResult(shared);
    logLine(tr("fit %1: %2")
                .arg(QString::fromLatin1(terminationName(result.solver.termination)), QString::fromStdString(result.solver.message)));
    for (const std::string& w : result.warnings)
        logLine(tr("warning: %1").arg(QString::fromStdString(w)));
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
        addRun(shared);
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

void MainWindow::addRun(std::shared_ptr<const FitResult> shared)
{
    const FitResult& result = *shared;
    const int order = fittedOrders(m_fitSettings.model, m_fitSettings.solver).back();
    QString name = tr("run %1 · order %2").arg(m_runs.size() + 1).arg(order);
    if (result.solver.termination == Termination::Cancelled)
        name += tr(" (cancelled)");
    RunEntry run{makeRun(result, m_fitSettings.model, m_fitSettings.solver, name.toStdString()), std::move(shared), {}};
    m_runs.push_back(std::move(run));
    m_runsPanel->setRuns(m_runs);
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

void MainWindow::showResult(std::shared_ptr<const FitResult> shown)
{
    m_result = std::move(shown);
    const FitResult& result = *m_result;
    m_resultParameters = result.solver.parameters;
    m_results->showResult(result, m_truth);
    std::vector<ChartTerm> terms;
    for (const CoefficientResult& c : result.coefficients) {
        ChartTerm term{c.index, c.mode, c.waves, std::nullopt, c.uncertaintyWaves};
        if (m_truth)
            for (const TruthTerm& tt : m_truth->terms)
                if (zernike::modeFromIndex(tt.index, m_truth->ordering) == c.mode)
                    term.truthWaves = tt.valueWaves;
        terms.push_back(term);
    }
    m_chart->setTerms(terms, result.wavelength, result.ordering);
    m_phasePanel->setPupilGeometry(result.phaseMapGeometry);
    m_phasePanel->setPhase(result.phaseMap, result.wavelength);
    m_phasePanel->setPupilMaps(result.pupilAmplitude, result.zonalRemainderMap); // absent when the fit has none
    std::vector<Image> models;
    std::vector<PlaneResiduals> residuals;
    for (const PlaneResult& plane : result.planes) {
        models.push_back(plane.model);
        residuals.push_back({plane.residual, plane.normalizedResidual});
    }
    m_planesPanel->setModels(std::move(models), std::move(residuals));
    m_psfPanel->setPixelPitch(m_dataset.metadata.pixelPitch.value_or(0.0));
    m_psfPanel->setAnalysis(result.psf ? std::shared_ptr<const PsfAnalysis>(m_result, &*result.psf) : nullptr);
    m_statusFit->setText(tr("%1 · %2 iterations · %3 evaluations · %4 s · %5 waves RMS · Strehl %6")
                             .arg(QString::fromLatin1(terminationName(result.solver.termination)))
                             .arg(result.solver.iterations)
                             .arg(result.solver.costEvaluations)
                             .arg(result.solver.seconds, 0, 'f', 2)
                             .arg(result.rmsWaves, 0, 'f', 4)
                             .arg(result.strehl, 0, 'f', 3));
}

void MainWindow::resizeEvent(QResizeEvent* event)
{
    QMainWindow::resizeEvent(event);
    // The docks take a share of the window, within limits, so that the images in the centre keep
    // room at 1280 x 800 as at 1920 x 1080.
    const int w = width(), h = height();
    const int setup = std::clamp(int(0.2 * w), m_setupDock->minimumSizeHint().width(), 400);
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
        openFiles(paths, !m_dataset.planes.empty()); // dropped files join what is loaded
}

} // namespace wfs::ui
