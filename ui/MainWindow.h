#pragma once
// The desktop program's main window: data and settings on the left, live views in the middle
// (phase map, data / model / residual), convergence and coefficients on the right, results below.
// All numerical work runs on worker threads (loading, preparation, the fit); this class only wires
// the panels and draws what the engine hands back.
#include "EngineController.h"
#include "ImageView.h"
#include "PlanesPanel.h"
#include "RunsPanel.h"
#include "SessionController.h"

#include "io/Dataset.h"
#include "io/Exports.h"
#include "io/ResultJson.h"
#include "io/Session.h"

#include <QMainWindow>
#include <QSet>

#include <functional>
#include <optional>

class QCheckBox;
class QComboBox;
class QLabel;
class QMenu;
class QPlainTextEdit;
class QAction;
class QProgressBar;
class QDockWidget;
class QFrame;
class QTabWidget;
class QTimer;

namespace wfs::ui {

class SetupPanel;
class ConvergencePlot;
class ZernikeChart;
class ResultsPanel;
class SpeedupLab;
class FasthPanel;
class PhasePanel;
class PsfPanel;
class LivePanel;
class FieldPanel;

class MainWindow : public QMainWindow {
    Q_OBJECT

public:
    explicit MainWindow(QWidget* parent = nullptr);
    ~MainWindow() override;

    // Entry points for the menus, the command line and tests. Loading runs on a worker thread and
    // ends with dataLoaded(); a fit ends with fitFinished() or fitFailed().
    // `preset` "demo": three planes, Zernike aberrations; "pupil": five planes of a pupil no Zernike basis
    // describes (a phase step, apodisation, dust), set up for a Zernike + zonal phase and a zonal amplitude
    // with the defocus scale fitted; "vectorial": a bead under an NA 1.4 objective; "air": a bead under a dry NA 0.85
    // objective over a camera's bias, set up for the full pupil recipe. Each is core's presetSession:
    // planes simulated and held in memory (a saved session writes them beside it).
    void loadDemo(bool startFit, const QString& preset = QStringLiteral("demo"));
    void openFiles(const QStringList& paths, bool append = false);
    void startFit();
    // Starts a fit once the data being loaded (openFiles, openSessionFrom) have loaded, or failed to (the
    // fit is then refused and says why). Call it before the loading starts: a small file can load at once.
    void fitWhenLoaded();
    void cancelFit();
    // The presets loadDemo() takes.
    static QStringList presetSessionNames();
    // Writes the export `key` of the result shown (io/ExportKinds.h: "phase-out", "csv", ...), the
    // same bytes as the command line's option of that name; false (and the reason shown) on failure.
    // Blocks while the export is made (for scripts and tests); the Export menu uses exportResultInBackground.
    bool exportResult(const QString& key, const QString& path);
    // The same export made and written on a worker (a 3-D PSF stack is a computation; a results file of large
    // images takes time to encode): ends with exportFinished(), the reason shown on failure.
    void exportResultInBackground(const QString& key, const QString& path);
    // The file name an export of the data loaded is offered under: the data's name and the export's ending.
    QString suggestedExportName(const QString& key) const;
    bool saveSessionTo(const QString& path);
    // Live mode (the Live tab): fit every stack written into `folder` with the settings on the left, or the
    // simulated camera's stacks (the live demo).
    void watchFolder(const QString& folder);
    void startLiveDemo();
    LivePanel* livePanel() const { return m_livePanel; }
    FieldPanel* fieldPanel() const { return m_fieldPanel; }
    void openSessionFrom(const QString& path);

    bool isFitting() const;
    // Shows the tab with this key (phase, planes, psf, runs, speedup, fasth, live, field); false when there is none.
    bool showTab(const QString& key);
    QStringList tabKeys() const;
    // Brings the dock with this key to the front of its group (coefficients, results, messages); false when
    // there is none.
    bool showDock(const QString& key);
    static QStringList dockKeys();
    // Scrolls the setup panel so that its box `key` (SetupPanel::sectionKeys) starts at the top of the dock, as far as
    // the panel scrolls; false when there is no such box.
    bool showSetupSection(const QString& key);
    QTabWidget* tabs() const { return m_tabs; }
    ConvergencePlot* convergencePlot() const { return m_convergence; }
    ZernikeChart* zernikeChart() const { return m_chart; }
    QAction* startAction() const { return m_startAction; }
    QAction* presentationAction() const { return m_presentAction; } // View > Presentation mode (F5), checkable
    // The message bar above the views: the latest error or warning, until closed or replaced (also in Messages).
    QString messageBarText() const;
    // Help > About's text: the version, each backend's state here (the device, or why not), the libraries' licences.
    static QString aboutText();
    // The session's state (data, truth, planes, result, runs), which the views draw.
    SessionController* session() const { return m_session; }
    const Dataset& dataset() const { return m_session->dataset(); }
    // The result shown (null before any fit); shared with the run that keeps it, never copied.
    const std::shared_ptr<const FitResult>& result() const { return m_session->result(); }
    QString lastError() const { return m_lastError; }
    SetupPanel* setupPanel() const { return m_setup; }
    EngineController* engine() const { return m_engine; }
    ImageView* phaseView() const { return m_phaseView; }
    ImageView* dataView() const { return m_dataView; }
    PsfPanel* psfPanel() const { return m_psfPanel; }
    SpeedupLab* speedupLab() const { return m_speedupLab; }
    RunsPanel* runsPanel() const { return m_runsPanel; }
    // Every fit of the session, oldest first (finished and cancelled ones; a failed fit adds none).
    const std::vector<RunEntry>& runs() const { return m_session->runs(); }

signals:
    void dataLoaded();
    void fitFinished();
    void fitFailed(const QString& message);
    void errorShown(const QString& message);
    void exportFinished(bool written);
    void preparationPreviewed();

protected:
    void closeEvent(QCloseEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;
    void changeEvent(QEvent* event) override;
    void fitDocks();       // the docks' share of the window
    void fitSetupColumn(); // the setup panel's scroll area as wide as the panel, then the docks
    void showEvent(QShowEvent* event) override;
    void dragEnterEvent(QDragEnterEvent* event) override;
    void dropEvent(QDropEvent* event) override;

private:
    void buildActions();
    void buildMenus();
    void buildToolBar();
    void setRunning(bool running);
    void buildViews();
    void buildTabs();
    void buildFieldTab();
    void buildCentre();
    void buildDocks();
    void buildStatusBar();
    void showError(const QString& message);
    void showInMessageBar(const QString& message, bool error);
    void logLine(const QString& text);
    void logMessages(const std::vector<DatasetMessage>& messages);
    void datasetChanged();
    void clearResult(const QString& resultsMessage, const QString& phaseMessage);
    double pixelPitchShown() const;
    void loadFinished(const LoadOutcome& outcome);
    void applySessionSettings(const Session& settings);
    void applyPresetSettings(const QString& name);
    void fitPrepared(const PreparedRun& run);
    void updateSampling();
    void onProgress(const ProgressSnapshot& snapshot);
    void onFinished(std::shared_ptr<const FitResult> result);
    void concludeFit(Termination termination);
    void showResult(); // draws the session's result
    void previewPreparation();
    void addRecent(const QStringList& paths);
    void rebuildRecentMenu();
    void restoreSettings();
    void saveSettings() const;
    // The export `key` to `path` as a task that throws with the reason, made from copies so that a worker can
    // run it; empty (and the reason shown) when there is nothing to export or no such export.
    std::function<void()> exportTask(const QString& key, const QString& path);
    SetupPanel* m_setup;
    EngineController* m_engine;
    SessionController* m_session;
    QTabWidget* m_tabs;
    QList<QDockWidget*> m_hiddenDocks, m_raisedDocks; // hidden while a teaching tab is shown
    QByteArray m_workingLayout;                       // the docks as arranged before a teaching tab hid them
    QWidget* m_tabBarIndent = nullptr;                // room left of the tabs while a teaching tab hides the docks
    QStringList m_shownFiles;                         // the files whose metadata the setup panel shows
    QDockWidget *m_setupDock, *m_convergenceDock, *m_chartDock, *m_resultsDock;
    PhasePanel* m_phasePanel;
    PlanesPanel* m_planesPanel;
    PsfPanel* m_psfPanel;
    RunsPanel* m_runsPanel;
    FasthPanel* m_fasthPanel;
    LivePanel* m_livePanel;
    FieldPanel* m_fieldPanel;
    ImageView *m_phaseView, *m_dataView, *m_modelView, *m_residualView;
    ConvergencePlot* m_convergence;
    ZernikeChart* m_chart;
    ResultsPanel* m_results;
    SpeedupLab* m_speedupLab;
    QPlainTextEdit* m_log;
    QSet<QString> m_loggedMessages; // the data's messages said once in Messages, until other data are loaded
    QWidget* m_messageBar;
    QLabel* m_messageText;
    QLabel *m_statusFit, *m_statusCursor, *m_progressLabel;
    QAction *m_openAction, *m_startAction, *m_cancelAction, *m_saveSessionAction, *m_progressAction;
    QAction* m_presentAction = nullptr;
    QProgressBar* m_progress;
    QMenu* m_recentMenu;
    QTimer* m_previewTimer;
    int m_previewGeneration = 0; // newer previews supersede older ones

    int m_demoStartOrder = 4;    // the demo's order, 2 when it fits twice
    int m_demoFollowUpOrder = 0; // the demo's second fit, started when its first has finished
    QString m_lastError;
};

} // namespace wfs::ui
