#pragma once
// The FastH teaching panel (issue 7): pictures of one SVD layer W = U diag(sigma) V^T with FastH's blocks
// of reflectors highlighted; timing sweeps over d and over the block size for the sequential algorithm,
// FastH, its variants and the library and dense-GEMM baselines (through the same engine path as
// `wavefront-cli fasth-bench`); and an SVD layer trained live, whose inverse and determinant are then
// compared with LU. Heavy work runs on worker threads with progress and cancel; a display-rate timer
// pulls the live state, so a fast job never floods the GUI with signals.
#include "engine/FasthJobs.h"

#include <QFutureWatcher>
#include <QWidget>

#include <memory>
#include <optional>
#include <vector>

class QCheckBox;
class QComboBox;
class QCustomPlot;
class QDoubleSpinBox;
class QGroupBox;
class QLabel;
class QLineEdit;
class QProgressBar;
class QPushButton;
class QSpinBox;
class QStackedWidget;
class QTabWidget;
class QTextBrowser;
class QTimer;

namespace wfs::ui {

class FasthMatrixView;

// The plots exportPng() can write.
enum class FasthPlot {
    Timing,                // time against d, log-log, for the pass shown
    SpeedUp,               // t(sequential) / t(method) against d
    BlockSize,             // FastH time against b, with ceil(k/b) + b on the right axis
    Pictures,              // the page of matrix pictures (reflectors with blocks, U, V, W, sigma)
    SingularValues,        // sigma of the pictured layer
    Loss,                  // training loss against step
    TrainedSingularValues, // learnt |sigma| (sorted) against the target's singular values
};
const char* fasthPlotName(FasthPlot plot); // "timing", "speedup", "blocks", "pictures", "sigma", "loss", "trained-sigma"

// Speed-up of a method over the sequential algorithm at one d: core's (fasth/FasthSweep.h).
using FasthSpeedUp = fasth::SpeedUp;

class FasthPanel : public QWidget {
    Q_OBJECT

public:
    explicit FasthPanel(QWidget* parent = nullptr);
    ~FasthPanel() override; // cancels and waits for running jobs

    // What the controls describe now.
    FasthSweepSettings sweepSettings() const;
    FasthPictureSettings pictureSettings() const;
    FasthTrainingSettings trainingSettings() const;

    // Starts a sweep (d sweep, then the block sweep) on a worker thread. False, with lastError(), when a
    // sweep or training already runs or the settings are invalid. Ends with exactly one of
    // sweepFinished(), sweepCancelled() or sweepFailed().
    bool runTimingSweep(const FasthSweepSettings& settings);
    // Trains the demo layer on a worker thread; ends with trainingFinished() (also when the loss diverged:
    // lastTraining()->summary says so), trainingCancelled() or trainingFailed().
    bool startTraining(const FasthTrainingSettings& settings);
    // Recomputes the pictures on a worker thread (deferred while a sweep runs, so as not to disturb its
    // timings); picturesUpdated() when they are shown. The controls call this themselves.
    void updatePictures(const FasthPictureSettings& settings);
    // Asks the running sweep or training to stop: checked between measurements (and repetitions) or
    // between training steps. Rows already measured and steps already taken are kept.
    void cancel();
    bool isRunning() const { return isSweepRunning() || isTrainingRunning(); }
    bool isSweepRunning() const { return m_sweepState != nullptr; }
    bool isTrainingRunning() const { return m_trainingState != nullptr; }

    // The rows of the last sweep (also while one runs: the rows measured so far), the engine's numbers.
    const std::vector<FasthTimingRow>& timingRows() const { return m_rows; }
    const std::optional<FasthSweepResults>& lastSweep() const { return m_lastSweep; }
    // t(sequential) / t(method) for every method and d of the d sweep measured in this pass (core computes it).
    std::vector<FasthSpeedUp> speedUps(fasth::Pass pass) const;
    const std::optional<FasthPictures>& pictures() const { return m_pictures; }
    const std::optional<FasthTrainingResult>& lastTraining() const { return m_lastTraining; }
    // Losses shown so far (live while training), for checks of the throttled display.
    int shownLossPoints() const { return int(m_lossIterations.size()); }
    QString lastError() const { return m_lastError; }
    QString explanationHtml() const;

    // The sweep rows as CSV (header from fasthCsvHeader(), each number in the shortest form that reads back exactly). False,
    // with lastError(), when there is nothing to write or the file cannot be written.
    bool exportCsv(const QString& path);
    // One plot as PNG (QCustomPlot::savePng; the picture page is grabbed), written to a temporary file
    // and renamed.
    bool exportPng(const QString& path, FasthPlot plot = FasthPlot::Timing);

signals:
    void sweepStarted();
    void sweepProgress(int done, int total); // at display rate, not per measurement
    void sweepFinished();
    void sweepCancelled();
    void sweepFailed(const QString& message);
    void trainingStarted();
    void trainingProgress(int iteration, double loss); // at display rate, not per step
    void trainingFinished();
    void trainingCancelled();
    void trainingFailed(const QString& message);
    void picturesUpdated();
    void runningChanged(bool running);

private:
    // Heatmaps of d x d matrices beyond this are more pixels than the screen has and slow to draw.
    static constexpr int kMaxPictureDimension = 512;

    QWidget* buildControls();
    QGroupBox* buildProblemGroup(QWidget* controls);
    QGroupBox* buildSweepGroup(QWidget* controls);
    QGroupBox* buildTrainingGroup(QWidget* controls);
    QWidget* buildActions(QWidget* controls);
    void fitControlsWidth();
    void changeEvent(QEvent* event) override;
    QStackedWidget* withEmptyState(QWidget* content, const QString& message);
    void connectControls();
    QWidget* buildPicturesPage();
    QWidget* buildTimingPage();
    QWidget* buildTrainingPage();
    void populateBackends();
    void updateControlState();
    void schedulePictures();
    void startPictures(const FasthPictureSettings& settings);
    void showPictures(FasthPictures pictures);
    void poll(); // the display-rate pull of the live state
    void onSweepDone(FasthSweepResults results);
    void onTrainingDone(FasthTrainingResult result);
    void rebuildTimingPlots();
    void rebuildTrainingPlots();
    void showUseCases();
    void updateExplanation();
    void setStatus(const QString& text);
    void fail(const QString& message); // lastError and status line
    QCustomPlot* plotFor(FasthPlot plot) const;
    void exportCsvInteractive();
    void exportPngInteractive();

    // Controls.
    QSpinBox* m_dimension;
    QSpinBox* m_reflectors;
    QSpinBox* m_batch;
    QSpinBox* m_blockSize;
    QComboBox* m_precision;
    QComboBox* m_backend;
    QSpinBox* m_threads;
    QLineEdit* m_sweepDimensions;
    std::vector<std::pair<fasth::BenchMethod, QCheckBox*>> m_methodChecks;
    std::vector<std::pair<fasth::Pass, QCheckBox*>> m_passChecks;
    QSpinBox* m_repeat;
    QSpinBox* m_warmup;
    QComboBox* m_layout;
    QCheckBox* m_blockSweep;
    QSpinBox* m_samples;
    QSpinBox* m_steps;
    QDoubleSpinBox* m_learningRate;
    QPushButton* m_runSweep;
    QPushButton* m_train;
    QPushButton* m_cancel;
    QPushButton* m_saveCsv;
    QPushButton* m_savePng;
    QProgressBar* m_progress;
    QLabel* m_status;

    // Views.
    QTabWidget* m_tabs;
    QWidget* m_picturesPage = nullptr;
    FasthMatrixView* m_reflectorView;
    FasthMatrixView* m_uView;
    FasthMatrixView* m_vView;
    FasthMatrixView* m_wView;
    QCustomPlot* m_sigmaPlot;
    QLabel* m_pictureInfo;
    QComboBox* m_shownPass;
    QWidget* m_controls = nullptr;             // the settings' column with the actions below
    QStackedWidget* m_timingPages = nullptr;   // what to press, then the timing plots
    QStackedWidget* m_trainingPages = nullptr; // what to press, then the training plots
    QCustomPlot* m_timingPlot;
    QCustomPlot* m_speedUpPlot;
    QCustomPlot* m_blockPlot;
    QCustomPlot* m_lossPlot;
    QCustomPlot* m_trainedSigmaPlot;
    QLabel* m_useCaseLabel;
    QTextBrowser* m_explanation;

    // Jobs. A non-null state means the job runs; the watchers deliver results on this thread and, being
    // children, detach from the futures when the panel goes (so a late result never reaches a dead panel).
    std::shared_ptr<FasthSweepState> m_sweepState;
    std::shared_ptr<FasthTrainingState> m_trainingState;
    QFutureWatcher<FasthSweepResults>* m_sweepWatcher;
    QFutureWatcher<FasthTrainingResult>* m_trainingWatcher;
    QFutureWatcher<FasthPictures>* m_pictureWatcher;
    std::optional<FasthPictureSettings> m_pendingPictures; // asked for while busy
    QTimer* m_pollTimer;
    QTimer* m_pictureTimer; // gathers control changes into one picture update

    // Results.
    std::vector<FasthTimingRow> m_rows;
    std::optional<FasthSweepResults> m_lastSweep;
    std::optional<FasthPictures> m_pictures;
    std::optional<FasthTrainingResult> m_lastTraining;
    std::vector<double> m_lossIterations, m_losses;
    Eigen::VectorXd m_liveSigma, m_targetSigma;
    int m_trainingSteps = 0;
    int m_lastDone = -1, m_lastTotal = -1;
    QString m_lastError;
};

} // namespace wfs::ui
