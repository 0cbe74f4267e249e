#pragma once
// Live mode in the desktop program (issue 25): a folder watched by core's LiveWatch (engine/LiveWatch.h, on its
// own thread), its trend (coefficients with a threshold per term, RMS and Strehl against the stack number) and
// the latest stack's phase map and data / model / residual, updated in place; "Live demo" starts core's
// simulated camera (engine/LiveCamera.h) writing into a temporary folder that the same watch reads, with
// sliders for a few Zernike terms, photons and rate. The panel pulls the latest fit on a display-rate timer;
// rows arrive as queued signals and only add points. "Hold reference" takes the stack shown as the reference:
// from then on the phase map and the coefficient trend show each new stack minus it, as core's runs comparison
// (engine/RunComparison.h) computes it on the watch's thread; "Release" brings the absolute values back.
#include "engine/LiveCamera.h"
#include "engine/LiveWatch.h"

#include <QPen>
#include <QWidget>

#include <map>
#include <memory>
#include <vector>

class QCustomPlot;
class QCPGraph;
class QCPTextElement;
class QVBoxLayout;
class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QPushButton;
class QSlider;
class QSpinBox;
class QTabWidget;
class QTemporaryDir;
class QTimer;

namespace wfs::ui {

class PhasePanel;
class PlanesPanel;

class LivePanel : public QWidget {
    Q_OBJECT

public:
    explicit LivePanel(QWidget* parent = nullptr);
    ~LivePanel() override;

    // Watches `folder`, fitting each stack with `settings` (model and solver; each stack's headers give its
    // metadata); the log is FOLDER/live.jsonl, continued when it exists.
    void watchFolder(const QString& folder, const Session& settings);
    // The simulated camera into a temporary folder, watched like any other; the sliders drive it.
    void startDemo(const Session& settings);
    void stop();
    bool isWatching() const;

    int stacksShown() const { return m_rows; } // rows in the trend
    QCustomPlot* trendPlot() const { return m_trend; }
    QCustomPlot* qualityPlot() const { return m_quality; }
    PhasePanel* phasePanel() const { return m_phase; }
    PlanesPanel* planesPanel() const { return m_planes; }
    QTabWidget* latestPages() const { return m_latest; }
    QPushButton* demoButton() const { return m_demoButton; }
    QPushButton* holdButton() const { return m_holdButton; }
    // Holds a stack as the reference: `stack` (a number as the trend counts them, from 1) chosen from the stacks the
    // watch keeps (the last 500 fitted), or 0 for the stack shown now. False when there is no such stack (or none is
    // shown yet). The stacks already fitted after it show as differences at once, then every new one.
    // releaseReference() ends it.
    bool holdReference(int stack = 0);
    void releaseReference();
    // The reference to hold: "stack shown" or a stack picked in the list (filled with the kept stacks when opened)
    // or by clicking a point of the trend; chosen while one is held, it is held instead.
    QComboBox* referenceChoice() const { return m_referenceChoice; }
    void chooseReference(int stack);                        // selects it in the list (0 = the stack shown)
    int referenceStack() const { return m_referenceStack; } // 0 = none held
    // The comparison whose map is shown now (null when none: no reference, or no stack since it was held).
    std::shared_ptr<const RunComparison> shownDifference() const { return m_shownDifference; }
    QString trendTitle() const;
    // The threshold of a Noll term (waves): points beyond +-threshold are drawn in red.
    void setThreshold(int nollIndex, double waves);

signals:
    void watchFolderRequested(); // the "Watch folder..." button: the main window asks for a folder and settings
    void demoRequested();        // the "Live demo" button: the main window starts it with its settings
    void message(const QString& text, bool error);
    void rowAdded(int stacksShown);
    void stopped(); // the watch has ended (stop(), an error or its limits); the last fit is drawn and stays

private:
    void buildControls(QVBoxLayout* layout);
    void buildDemoRow(QVBoxLayout* layout);
    void buildPlots(QVBoxLayout* layout);
    void connectControls();
    void start(LiveWatchOptions options, std::unique_ptr<LiveCamera> camera, std::unique_ptr<QTemporaryDir> folder);
    void addRecord(const LiveRecord& record);
    void addDifference(const LiveDifference& difference);
    using TrendPoints = std::map<int, std::vector<std::pair<double, double>>>; // Noll index -> (stack, waves)
    void addTrendPoint(TrendPoints& points, int noll, double stack, double waves);
    TrendPoints& shownPoints() { return m_referenceStack > 0 ? m_differencePoints : m_points; }
    void showTrendPoints(); // the trend's graphs from shownPoints(), titled
    void refresh();
    void showLatest();       // the watch's latest fit, if new, on the page in view
    void drawPage(int page); // 0: the phase map, 1: data / model; only if the shown fit is not on it yet
    void cameraSettingsChanged();
    void redrawThresholds();
    void replotTrends();
    void setStatus();
    void fillReferenceChoice();         // the kept stacks, newest first, the choice kept
    static QColor termColour(int noll); // a trend term's colour: its graph and its threshold lines
    // A trend term's line: its colour, solid for Z4..Z7 and dashed for Z8 on (the eight colours include two near pairs,
    // blue / sky blue and orange / vermillion, four terms apart), thick enough to tell from the back of a room;
    // thicker for the term whose threshold is set.
    static QPen termPen(int noll, bool chosen);
    static constexpr double kDefaultThresholdWaves = 0.071; // every term's threshold at start: λ/14, the Maréchal criterion

    QLabel* m_status;
    QPushButton *m_watchButton, *m_demoButton, *m_stopButton, *m_holdButton;
    QWidget* m_demoControls;
    std::vector<std::pair<int, QSlider*>> m_termSliders; // Noll index, slider (hundredths of a wave)
    std::vector<QLabel*> m_termValues;
    QSlider* m_photons; // log10 photons per plane, tenths
    QLabel* m_photonsValue;
    QSpinBox* m_rate;
    QComboBox* m_referenceChoice;
    QComboBox* m_thresholdTerm;
    QDoubleSpinBox* m_thresholdValue;
    QCustomPlot *m_trend, *m_quality;
    QCPTextElement* m_trendTitle;
    std::map<int, QCPGraph*> m_termGraphs; // Noll index -> its trend
    QCPGraph *m_over, *m_rms, *m_strehl;
    QTabWidget* m_latest; // the latest stack: phase map, data / model
    PhasePanel* m_phase;
    PlanesPanel* m_planes;
    QTimer* m_refresh;

    std::unique_ptr<LiveWatch> m_watch;
    std::unique_ptr<LiveCamera> m_camera;
    std::unique_ptr<QTemporaryDir> m_demoFolder;
    std::map<int, double> m_thresholds; // Noll index -> waves
    TrendPoints m_points;               // every stack's coefficients, for the crossings and for a release
    TrendPoints m_differencePoints;     // while a reference is held: each later stack minus it
    std::shared_ptr<const LiveFit> m_shownFit;
    std::shared_ptr<const RunComparison> m_shownDifference;
    int m_referenceStack = 0; // the held reference's stack number (its sequence + 1); 0 = none
    unsigned long m_shownVersion = 0;
    int m_rows = 0, m_failed = 0, m_skipped = 0;
    bool m_replot = false;
    bool m_trendsTurn = true;
    bool m_phaseStale = false, m_planesStale = false; // the shown fit is not drawn on that page yet
    double m_lastLatency = 0.0;
    QString m_folder, m_stopReason;
};

} // namespace wfs::ui
