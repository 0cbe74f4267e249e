#pragma once
// Cost and gradient max-norm against iteration or elapsed time, on log scales: every iteration the
// engine recorded, from iteration 0, appended as the rows arrive (at display rate).
#include "engine/ReconstructionEngine.h"

#include <QWidget>

class QCustomPlot;
class QComboBox;
class QLabel;
class QStackedWidget;

namespace wfs::ui {

class ConvergencePlot : public QWidget {
    Q_OBJECT

public:
    explicit ConvergencePlot(QWidget* parent = nullptr);
    void clear();
    void addRows(const std::vector<HistoryRow>& rows);
    void setRows(const std::vector<HistoryRow>& rows); // a whole history at once (a kept run)
    int pointCount() const { return int(m_rows.size()); }
    int firstIteration() const { return m_rows.empty() ? -1 : m_rows.front().iteration; }
    QCustomPlot* plot() const { return m_plot; }
    QString hintShown() const; // the sentence shown instead of empty axes before the first iteration; empty otherwise

private:
    void rebuild();           // all points again (the x axis changed)
    void append(size_t from); // the points from row `from` on
    void rescale();

    QCustomPlot* m_plot;
    QComboBox* m_axis;
    QWidget* m_axisBar;
    QLabel* m_hint;
    QStackedWidget* m_pages;
    std::vector<HistoryRow> m_rows;
    double m_costLow = 0, m_costHigh = 0, m_gradLow = 0, m_gradHigh = 0;
};

} // namespace wfs::ui
