#pragma once
// The speed-up lab: the experiment of Nikolic (2018) on the OOF benchmark problem, on this machine.
// The same BFGS fit with finite-difference gradients on the CPU (the "NumPy-style" baseline), with
// exact adjoint gradients on the CPU (float64 and float32, one and all threads) and on the GPU when
// there is one; time to solution, speed-up, evaluations per second, and whether the methods agree.
#include "engine/SpeedupExperiment.h"

#include <QFuture>
#include <QWidget>

#include <atomic>
#include <vector>

class QCheckBox;
class QCustomPlot;
class QGroupBox;
class QLabel;
class QLineEdit;
class QProgressBar;
class QPushButton;
class QScrollArea;
class QStackedWidget;
class QTableWidget;
class QTabWidget;

namespace wfs::ui {

class SpeedupLab : public QWidget {
    Q_OBJECT

public:
    explicit SpeedupLab(QWidget* parent = nullptr);
    ~SpeedupLab() override; // cancels and waits for the worker

    void run(const LabSettings& settings);
    void runEstimatedForReal(); // re-runs the estimated rows of the last sweep as real fits
    void cancel();
    bool isRunning() const { return m_running; } // until the results of the last job have landed
    const std::vector<LabRow>& rows() const { return m_rows; }
    LabSettings settingsFromControls() const;

    bool exportCsv(const QString& path);
    bool exportPng(const QString& path);

signals:
    void rowAdded(int index);
    void finished();
    void cancelled();
    void failed(const QString& message);

private:
    QWidget* buildControls();
    QGroupBox* buildMethods();
    QWidget* buildResults(); // the hint before a run, then the plots above the table
    void start(const LabSettings& settings, const std::vector<LabRow>& redo);
    void addRow(const LabRow& row);
    void refresh(); // table and plots from m_rows
    void refreshTable();
    void fitTable(); // the columns to the width: method names on two lines where one does not leave room
    void drawTimeAndRate(const std::vector<int>& grids);
    void drawSpeedups(const std::vector<int>& grids);
    void workerDone(bool wasCancelled, const QString& error);
    bool eventFilter(QObject* watched, QEvent* event) override;
    void changeEvent(QEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;
    void fitControlsWidth();

    std::vector<QCheckBox*> m_methodBoxes;
    QLineEdit *m_grids, *m_orders;
    QCheckBox* m_forReal;
    QPushButton *m_run, *m_cancelButton, *m_realButton;
    QProgressBar* m_progress;
    QCustomPlot *m_timePlot, *m_speedupPlot, *m_ratePlot;
    QWidget* m_plots;
    QTabWidget* m_plotTabs;
    QStackedWidget* m_pages;
    QTableWidget* m_table;
    QLabel* m_status;
    QLabel* m_speedupStory; // beside the speed-up plot: what counting predicts, what was measured
    QScrollArea* m_controlsScroll = nullptr;
    bool m_twoLineNames = false;

    std::vector<LabRow> m_rows;
    LabSettings m_lastSettings;
    QFuture<void> m_future;
    bool m_running = false;
    std::atomic<bool> m_cancelRequested{false};
};

} // namespace wfs::ui
