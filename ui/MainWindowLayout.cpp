// The main window's construction: its tabs, centre, docks, status bar, tool bar, actions and menus, and the
// switching between tabs, docks and setup sections (MainWindow.cpp holds what it does once built).
#include "MainWindow.h"

#include "engine/Batch.h"
#include "engine/Workflow.h"

#include "ConvergencePlot.h"
#include "FasthPanel.h"
#include "FieldPanel.h"
#include "LivePanel.h"
#include "PhasePanel.h"
#include "PictureMenu.h"
#include "Presentation.h"
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
#include <QFontMetrics>
#include <QGridLayout>
#include <QHelpEvent>
#include <QHBoxLayout>
#include <QJsonDocument>
#include <QLabel>
#include <QMenuBar>
#include <QMenu>
#include <QMessageBox>
#include <QMimeData>
#include <QPlainTextEdit>
#include <QToolBar>
#include <QToolButton>
#include <QToolTip>
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

#include <algorithm>

#include <cmath>

namespace wfs::ui {

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

// The setup panel's scroll area as wide as the panel needs at the current font, its scroll bar included.
void fitSetupScroll(QScrollArea* scroll)
{
    scroll->setMinimumWidth(scroll->widget()->minimumSizeHint().width() + scroll->verticalScrollBar()->sizeHint().width() + 4);
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
    fitSetupScroll(scroll);
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

// Room left of the tab bar, as the tab widget's top-left corner widget: while a teaching tab hides the docks on
// the left, it takes their width, so that the tab bar stays where it was and the next tab is where the pointer is.
class TabBarIndent : public QWidget {
public:
    using QWidget::QWidget;
    void setIndent(int pixels)
    {
        m_indent = std::max(0, pixels);
        setVisible(m_indent > 0);
        updateGeometry();
    }
    int indent() const { return m_indent; }
    QSize sizeHint() const override { return {m_indent, 1}; }
    QSize minimumSizeHint() const override { return sizeHint(); }

private:
    int m_indent = 0;
};

// The teaching tabs have nothing to do with the fit: while one is shown, the fit's docks make room
// for it (and come back as they were with the fit's tabs). `hidden` and `raised` remember the docks
// between the two calls, `workingLayout` the layout as the user arranged it (what quitting saves while a
// teaching tab is shown); `fallback` is raised when none of them was in front.
void makeRoomForTeachingTab(QMainWindow* window, bool teaching, QList<QDockWidget*>& hidden, QList<QDockWidget*>& raised,
                            QByteArray& workingLayout, QDockWidget* fallback)
{
    if (teaching && hidden.isEmpty()) {
        workingLayout = window->saveState();
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

// A plain-text tooltip is shown as one line as long as its text (up to the screen's width: 1660 px for some);
// shown as rich text in a cell of about 60 characters it wraps there. Every long plain tooltip goes through here, a
// widget's own and a menu action's, so no text needs its own line breaks.
class ReadableToolTips : public QObject {
public:
    using QObject::QObject;

    static constexpr int kWrapFrom = 80; // characters: shorter tips stay on one line

    bool eventFilter(QObject* watched, QEvent* event) override
    {
        auto* widget = qobject_cast<QWidget*>(watched);
        if (event->type() != QEvent::ToolTip || !widget)
            return false;
        const auto* help = static_cast<QHelpEvent*>(event);
        QString text = widget->toolTip();
        if (auto* menu = qobject_cast<QMenu*>(widget)) {
            const QAction* action = menu->actionAt(help->pos());
            if (!action || !menu->toolTipsVisible())
                return false;
            text = action->toolTip();
        }
        if (text.size() < kWrapFrom || Qt::mightBeRichText(text))
            return false;
        // About 60 characters a line: one table cell of that width (Qt's own guess for a wrapped label is far narrower).
        const QFontMetrics metrics(QToolTip::font());
        const int width = std::min(metrics.horizontalAdvance(text), 60 * metrics.averageCharWidth());
        const QString cell = QStringLiteral("<table><tr><td width=\"%1\">%2</td></tr></table>")
                                 .arg(width)
                                 .arg(text.toHtmlEscaped().replace(QLatin1Char('\n'), QStringLiteral("<br>")));
        QToolTip::showText(help->globalPos(), cell, widget, {}, widget->toolTipDuration());
        return true;
    }
};

} // namespace

void MainWindow::buildViews()
{
    qApp->installEventFilter(new ReadableToolTips(this));
    installPictureMenus(this);      // right-click on any chart or image: copy, PNG, SVG, PDF
    installPresentationStyle(this); // every plot follows presentation mode
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
    buildFieldTab();
    // Before any data, the centre says how to begin.
    m_phasePanel->clear(tr("No data yet: open PSF images (Ctrl+O), or try the Demo or the Pupil demo (buttons on the left)"));
}

// A microscope's whole field of beads: a user's stack is fitted with the setup panel's model and solver, as a fit is.
void MainWindow::buildFieldTab()
{
    m_fieldPanel = new FieldPanel(m_tabs);
    m_fieldPanel->setProperty("tabKey", QStringLiteral("field"));
    m_tabs->addTab(m_fieldPanel, tr("Field"));
    m_tabs->setTabToolTip(m_tabs->count() - 1,
                          tr("A whole field of beads: each bead fitted, each aberration term as a smooth function of field position"));
    m_fieldPanel->setSettingsSource([this] {
        Session settings;
        settings.model = m_setup->modelSettings();
        settings.solver = m_setup->solverSettings();
        // What the user typed (a wavelength, an NA, a pitch) holds for the field's stack too; what the loaded data's
        // files said does not.
        DatasetMetadata shown = m_session->dataset().metadata;
        m_setup->applyMetadata(shown);
        settings.dataset.metadata = personSetMetadata(shown);
        return settings;
    });
    connect(m_fieldPanel, &FieldPanel::message, this, [this](const QString& text, bool error) {
        if (error)
            showInMessageBar(text, true);
        logLine(text);
    });
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

    auto* indent = new TabBarIndent(m_tabs);
    indent->setObjectName(QStringLiteral("tabBarIndent"));
    indent->setIndent(0);
    m_tabs->setCornerWidget(indent, Qt::TopLeftCorner);
    m_tabBarIndent = indent;
    connect(m_tabs, &QTabWidget::currentChanged, this, [this, indent] {
        const QString key = m_tabs->currentWidget()->property("tabKey").toString();
        // The Field tab too: its pictures need the room, and nothing of the single fit's docks concerns it.
        const bool teaching = key == QLatin1String("speedup") || key == QLatin1String("fasth") || key == QLatin1String("live")
                              || key == QLatin1String("field");
        const int tabsLeft = m_tabs->mapTo(this, QPoint()).x();
        makeRoomForTeachingTab(this, teaching, m_hiddenDocks, m_raisedDocks, m_workingLayout, m_chartDock);
        layout()->activate(); // the docks' room given to the centre now, not at the next event
        indent->setIndent(teaching ? indent->indent() + tabsLeft - m_tabs->mapTo(this, QPoint()).x() : 0);
    });
}

void MainWindow::showEvent(QShowEvent* event)
{
    QMainWindow::showEvent(event);
    // Started on a teaching tab (its docks hidden before any layout): the tab bar's place with the working docks is
    // measured now, so that it stays there when the user turns to a working tab.
    auto* indent = static_cast<TabBarIndent*>(m_tabBarIndent);
    if (m_hiddenDocks.isEmpty() || indent->indent() > 0)
        return;
    for (QDockWidget* dock : std::as_const(m_hiddenDocks))
        dock->show();
    layout()->activate();
    const int working = m_tabs->mapTo(this, QPoint()).x();
    for (QDockWidget* dock : std::as_const(m_hiddenDocks))
        dock->hide();
    layout()->activate();
    indent->setIndent(working - m_tabs->mapTo(this, QPoint()).x());
}

// The fit's state and the cursor's value in the status bar.
void MainWindow::buildStatusBar()
{
    m_statusFit = new QLabel(tr("ready"), this);
    m_statusFit->setObjectName(QStringLiteral("statusFit"));
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
        // Busy (a moving bar) for the whole fit: the iteration limit is a cap, not the fit's length, so a bar
        // filled against it stays empty; the label beside it counts stages and iterations.
        m_progress->setRange(0, 0);
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

bool MainWindow::showSetupSection(const QString& key)
{
    QWidget* box = m_setup->section(key);
    auto* scroll = findChild<QScrollArea*>(QStringLiteral("setupScroll"));
    if (!box || !scroll)
        return false;
    m_setupDock->show();
    m_setupDock->raise();
    scroll->verticalScrollBar()->setValue(box->mapTo(scroll->widget(), QPoint(0, 0)).y());
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
                if (!result()) {
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
            const QString why = !result() ? tr("Nothing to export yet: run a fit first.")
                                          : QString::fromStdString(e ? exportUnavailable(e->kind, *result()) : std::string());
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
    view->addSeparator();
    m_presentAction = view->addAction(tr("&Presentation mode"));
    m_presentAction->setObjectName(QStringLiteral("presentAction"));
    m_presentAction->setCheckable(true);
    m_presentAction->setShortcut(QKeySequence(Qt::Key_F5));
    m_presentAction->setToolTip(tr("Large text and thick lines, for teaching from a projector (F5 again to leave)"));
    connect(m_presentAction, &QAction::toggled, this, [](bool on) { setPresentationMode(on); });

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
    help->addAction(tr("&About Wavefront Studio"), this, [this] { QMessageBox::about(this, tr("About Wavefront Studio"), aboutText()); });
}

void MainWindow::fitSetupColumn()
{
    if (auto* scroll = findChild<QScrollArea*>(QStringLiteral("setupScroll"))) {
        fitSetupScroll(scroll);
        fitDocks();
    }
}

QString MainWindow::aboutText()
{
    QStringList backends;
    for (const BackendStatus& status : backendStatuses()) {
        QString state = QString::fromStdString(status.available ? status.device : status.reason);
        if (!status.available) // core's reasons start "no GPU: "
            state = tr("none here (%1)").arg(state.startsWith(QLatin1String("no GPU: ")) ? state.mid(8) : state);
        backends << QStringLiteral("%1: %2").arg(QString::fromLatin1(backendName(status.kind)).toUpper(), state.toHtmlEscaped());
    }
    return tr("<p><b>Wavefront Studio %1</b>: wavefront reconstruction from PSF images.</p>"
              "<p>Backends here:<br>%2</p>"
              "<p>Built with Qt %3 (LGPL 3), QCustomPlot (GPL 3), FFTW 3 (GPL 2+), Ceres Solver (BSD), Eigen (MPL 2), "
              "CFITSIO (NASA/GSFC licence), libtiff (libtiff licence), libpng (PNG licence), matio (BSD), HDF5 (BSD-style) and, "
              "in CUDA builds, NVIDIA's CUDA runtime, cuFFT, cuBLAS and cuSOLVER (NVIDIA EULA).</p>"
              "<p>Conventions: Help > Conventions; the user's guide: README.md.</p>")
        .arg(QCoreApplication::applicationVersion(), backends.join(QStringLiteral("<br>")), QString::fromLatin1(qVersion()));
}

} // namespace wfs::ui
