#pragma once
// Drawing for the FastH panel (FasthPanel.h): the methods' colours and names, log axes and legends, and
// the timing and training plots drawn from the rows the engine measured (engine/FasthJobs.h). The panel
// owns the plots; these functions only draw.
#include "FasthPanel.h"

#include <QColor>
#include <QString>

#include <vector>

class QCPAxis;
class QCustomPlot;
class QWidget;

namespace wfs::ui {

QColor methodColor(fasth::BenchMethod method);
QString methodLabel(fasth::BenchMethod method);
QString passLabel(fasth::Pass pass);
QString durationText(double ms); // "850 µs", "12.3 ms"

// A plot with axis labels, drag and zoom, and a minimum size.
QCustomPlot* makePlot(QWidget* parent, const QString& xLabel, const QString& yLabel);
void setLogAxis(QCPAxis* axis, double base);
// Pads a logarithmic axis range by a factor on both sides, so that end points are not on the frame.
void padLog(QCPAxis* axis, double factor);
// A smaller, translucent legend inside the axis rectangle at `alignment`.
void styleLegend(QCustomPlot* plot, Qt::Alignment alignment);
// The legend in a row of its own under the axes, wrapped into `columns` columns.
void legendBelow(QCustomPlot* plot, int columns);

// Time against d for the pass: one graph per method, quartiles as error bars (log-log).
void drawTimingPlot(QCustomPlot* plot, const std::vector<FasthTimingRow>& rows, fasth::Pass pass);
// t(sequential) / t(method) against d, with the break-even line.
void drawSpeedUpPlot(QCustomPlot* plot, const std::vector<FasthSpeedUp>& speedUps);
// FastH against the block size b, sequential and dense GEMM at the same (d, k) as levels, and
// ceil(k/b) + b on the right axis.
void drawBlockPlot(QCustomPlot* plot, const std::vector<FasthTimingRow>& rows, fasth::Pass pass);
// Training loss against step (positive losses only: the axis is logarithmic).
void drawLossPlot(QCustomPlot* plot, const std::vector<double>& iterations, const std::vector<double>& losses);
// The learnt |sigma|, sorted, against the target's singular values.
void drawTrainedSigmaPlot(QCustomPlot* plot, const Eigen::VectorXd& liveSigma, const Eigen::VectorXd& targetSigma);

} // namespace wfs::ui
