#pragma once
// The runs of the session: every fit kept (its settings, result, name and time), listed; two of them
// compared as core computes it (engine/RunComparison.h): the coefficients of both as grouped bars with
// their difference, and the phase difference map (second minus first, diverging colours centred on
// zero, nothing outside the pupil) with its RMS and PV; e.g. before and after an alignment step.
#include "engine/RunComparison.h"
#include "io/Session.h"

#include <QString>
#include <QWidget>

#include <memory>
#include <optional>
#include <vector>

class QComboBox;
class QCustomPlot;
class QGridLayout;
class QLabel;
class QScrollArea;
class QStackedWidget;
class QTableWidget;

namespace wfs::ui {

class ImageView;

struct RunEntry {
    SessionRun record;                       // what the session file keeps
    std::shared_ptr<const FitResult> result; // null when it could not be re-evaluated
    QString note;                            // why not
};

class RunsPanel : public QWidget {
    Q_OBJECT

public:
    explicit RunsPanel(QWidget* parent = nullptr);
    // The runs, oldest first. Keeps the two chosen when they are still there; otherwise compares the
    // last two (the newest as the second).
    void setRuns(const std::vector<RunEntry>& runs);
    void compare(int first, int second);
    int firstRun() const;
    int secondRun() const;
    // The comparison shown (computed on a worker; comparisonShown() when it is drawn).
    const std::optional<RunComparison>& comparison() const { return m_comparison; }
    QString summaryText() const;
    QTableWidget* table() const { return m_table; }
    QCustomPlot* coefficientPlot() const { return m_chart; }
    ImageView* differenceView() const { return m_difference; }
    QString hintShown() const; // the sentence shown instead of the comparison (fewer than two runs); empty otherwise

signals:
    void comparisonShown();

protected:
    void resizeEvent(QResizeEvent* event) override;

private:
    void buildChart();
    void requestComparison();
    void showComparison();
    void arrange();

    QTableWidget* m_table;
    QComboBox *m_first, *m_second;
    QLabel* m_summary;
    QCustomPlot* m_chart;
    QScrollArea* m_chartScroll;
    ImageView* m_difference;
    QLabel* m_hint;
    QWidget* m_viewsPage;
    QStackedWidget* m_pages;
    QGridLayout* m_views;
    int m_columns = 0;
    std::vector<RunEntry> m_runs;
    std::optional<RunComparison> m_comparison;
    int m_generation = 0;
};

} // namespace wfs::ui
