#pragma once
// The Field tab (issue 43 item 5): a microscope's whole field of beads, as core's field run computes it
// (engine/FieldRun.h): the stack's mean projection with every bead found marked (in the field model, an outlier of a
// term, or set aside with its reason in the tooltip), the field model of a chosen term sampled over the image, each
// bead's residual from that model, and a clicked bead's own fit. The stack is core's simulated bead slide
// (engine/FieldSimulation.h) or a user's wide-field file; reading it, the run and the maps' sampling happen on a
// worker, which hands back one value object; progress arrives queued from the run's workers.
#include "engine/FieldRun.h"

#include <QFutureWatcher>
#include <QString>
#include <QStringList>
#include <QWidget>

#include <atomic>
#include <functional>
#include <memory>
#include <vector>

class QComboBox;
class QCPGraph;
class QCustomPlot;
class QDoubleSpinBox;
class QLabel;
class QPlainTextEdit;
class QProgressBar;
class QPushButton;
class QSpinBox;
class QStackedWidget;
class QTableWidget;
class QTabWidget;

namespace wfs::ui {

class ImageView;

// What one job hands back to the GUI thread: the stack it read or made (kept for the next Run even when the run
// failed), the run and every modelled term sampled on a grid, or why there is none.
struct FieldOutcome {
    std::shared_ptr<const Session> stack;
    QString source; // "simulated bead slide, ..." or the file's path
    std::shared_ptr<const FieldRun> run;
    std::vector<FieldTermGrid> maps; // one per run->modelTerms (empty without a model)
    QStringList notes;               // what reading the file said (warnings and errors)
    QString error;                   // empty when the run finished
    bool cancelled = false;
};

class FieldPanel : public QWidget {
    Q_OBJECT

public:
    explicit FieldPanel(QWidget* parent = nullptr);
    ~FieldPanel() override; // cancels a job and waits for it: its workers use the panel's flag and progress

    // The model and solver settings a user's stack is fitted with, and the metadata the user set (the setup panel's, in
    // the main window: engine/Batch.h personSetMetadata), which the stack's own headers complete; without one, the
    // session's defaults. Called on the GUI thread when a stack is loaded.
    void setSettingsSource(std::function<Session()> source) { m_settingsSource = std::move(source); }

    // Simulates core's bead slide (`beads` single beads, besides the planted doublets, saturated and edge beads, on
    // `width` x `width` pixels) and runs the field on it; false when a job is running.
    bool runSimulatedField(int beads = 100, int width = 512);
    // Reads `path` (a wide-field z-stack) with the settings source's model and solver and runs the field on it.
    bool loadStack(const QString& path);
    bool runAgain(); // the stack held, with the controls' detection and field order
    void cancel();
    // Writes the run's files into `dir` (core's fieldRunFiles: beads.csv, field.json, field-maps.fits, as
    // `wavefront-cli field --out` writes them), all or none; false with the reason in *error: no run, a file there
    // already without `overwrite`, a failed write.
    bool saveResults(const QString& dir, bool overwrite, QString* error) const;
    bool isRunning() const;

    // For tests and screenshots.
    std::shared_ptr<const FieldRun> fieldRun() const { return m_run; }
    ImageView* projectionView() const { return m_projection; }
    ImageView* mapView() const { return m_map; }
    QCustomPlot* residualPlot() const { return m_residuals; }
    QTableWidget* beadTable() const { return m_beadTable; }
    QString beadTitle() const; // the selected bead: where, its status and why it was set aside
    QComboBox* termChoice() const { return m_term; }
    int markerCount() const;   // beads marked on the projection (every group)
    void selectBead(int bead); // its fit in the table and its marker ringed; -1: none
    int selectedBead() const { return m_selected; }
    QString statusText() const;
    QString summaryText() const;

signals:
    void runFinished(bool ok); // a job has ended (false: failed or cancelled; the status says why)
    void message(const QString& text, bool error);

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    struct Markers {
        QCPGraph *inModel, *outlier, *setAside, *selected;
    };
    // FieldPanelLayout.cpp: the widgets.
    QWidget* buildControls();
    QWidget* buildStackBox();
    QWidget* buildSettingsBox();
    QWidget* buildResults();
    QWidget* buildBeadPages();
    QWidget* buildTermColumn();
    static Markers addMarkers(QCustomPlot* plot, bool onMap);
    void buildResidualPlot();
    void setRunning(bool running);
    void askAndSave(); // the folder asked for, and whether to replace the files there
    // FieldPanelJobs.cpp: the jobs.
    FieldRunOptions runOptions(); // the controls' values, the panel's cancel flag and progress
    // Starts a job on a worker: `stack` reads or makes the stack there (adding what reading said to its notes).
    void start(std::function<std::shared_ptr<const Session>(QStringList& notes)> stack, const QString& source);
    void finish(FieldOutcome outcome);
    void showProgress();
    // FieldPanel.cpp: the drawing and the bead picked.
    void showRun();
    void showTerm();
    void drawMarkers(const Markers& markers, int term) const;
    void drawResiduals(int term);
    void fillBeadTable();
    int beadNear(QCustomPlot* plot, const QPoint& at) const; // -1 when none within a few screen pixels
    QString beadToolTip(int bead) const;

    std::function<Session()> m_settingsSource;
    QPushButton *m_simulate, *m_load, *m_runButton, *m_cancelButton, *m_saveButton;
    QSpinBox* m_crop;
    QDoubleSpinBox* m_threshold;
    QComboBox *m_order, *m_term;
    QProgressBar* m_progress;
    QLabel *m_status, *m_mapNote;
    QStackedWidget* m_pages; // the explanation until a run, then the pictures
    ImageView *m_projection, *m_map;
    QCustomPlot* m_residuals;
    QTabWidget* m_beadPages;
    QLabel* m_beadTitle;
    QTableWidget* m_beadTable;
    QPlainTextEdit* m_summary;
    Markers m_projectionMarkers{}, m_mapMarkers{};
    QCPGraph *m_residualIn = nullptr, *m_residualOut = nullptr, *m_residualSelected = nullptr;
    std::vector<std::pair<int, double>> m_residualPoints; // (bead, residual / sigma) drawn for the chosen term

    QFutureWatcher<FieldOutcome>* m_watcher;
    std::atomic<bool> m_cancelFlag{false};
    std::atomic<int> m_done{0}, m_total{0};
    std::atomic<bool> m_progressQueued{false}; // one queued progress call at a time
    std::shared_ptr<const Session> m_stack;    // the stack held: what Run fits again
    QString m_source;
    std::shared_ptr<const FieldRun> m_run;
    std::vector<FieldTermGrid> m_maps;
    int m_selected = -1;
};

} // namespace wfs::ui
