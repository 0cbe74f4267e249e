#pragma once
// Cost and gradient max-norm against iteration or elapsed time, on log scales.
#include "engine/ReconstructionEngine.h"

#include <QWidget>

class QCustomPlot;
class QComboBox;

namespace wfs::ui {

class ConvergencePlot : public QWidget {
    Q_OBJECT

public:
    explicit ConvergencePlot(QWidget* parent = nullptr);
    void clear();
    void addSnapshot(const ProgressSnapshot& snapshot);
    int pointCount() const { return int(m_iteration.size()); }

private:
    void rebuild();

    QCustomPlot* m_plot;
    QComboBox* m_axis;
    QVector<double> m_iteration, m_seconds, m_cost, m_gradient;
};

} // namespace wfs::ui
