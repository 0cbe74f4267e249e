#include "ConvergencePlot.h"

#include <qcustomplot.h>

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QVBoxLayout>

namespace wfs::ui {

ConvergencePlot::ConvergencePlot(QWidget* parent)
    : QWidget(parent)
    , m_plot(new QCustomPlot(this))
    , m_axis(new QComboBox(this))
{
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    auto* bar = new QHBoxLayout;
    bar->addWidget(new QLabel(tr("x axis:"), this));
    m_axis->addItems({tr("iteration"), tr("time (s)")});
    bar->addWidget(m_axis);
    bar->addStretch();
    layout->addLayout(bar);
    layout->addWidget(m_plot);
    connect(m_axis, &QComboBox::currentIndexChanged, this, &ConvergencePlot::rebuild);

    QSharedPointer<QCPAxisTickerLog> logTicker(new QCPAxisTickerLog);
    m_plot->yAxis->setScaleType(QCPAxis::stLogarithmic);
    m_plot->yAxis->setTicker(logTicker);
    m_plot->yAxis->setLabel(tr("cost"));
    m_plot->yAxis2->setVisible(true);
    m_plot->yAxis2->setScaleType(QCPAxis::stLogarithmic);
    m_plot->yAxis2->setTicker(logTicker);
    m_plot->yAxis2->setLabel(tr("gradient max-norm"));
    m_plot->addGraph(m_plot->xAxis, m_plot->yAxis);
    m_plot->graph(0)->setName(tr("cost"));
    m_plot->graph(0)->setPen(QPen(QColor(33, 113, 181), 2));
    m_plot->addGraph(m_plot->xAxis, m_plot->yAxis2);
    m_plot->graph(1)->setName(tr("gradient max-norm"));
    m_plot->graph(1)->setPen(QPen(QColor(217, 95, 2), 1, Qt::DashLine));
    m_plot->legend->setVisible(true);
    m_plot->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
    setMinimumSize(260, 200);
    rebuild();
}

void ConvergencePlot::clear()
{
    m_iteration.clear();
    m_seconds.clear();
    m_cost.clear();
    m_gradient.clear();
    rebuild();
}

void ConvergencePlot::addSnapshot(const ProgressSnapshot& s)
{
    m_iteration.append(s.iteration.iteration);
    m_seconds.append(s.iteration.elapsedSeconds);
    m_cost.append(s.iteration.cost);
    m_gradient.append(s.iteration.gradientMaxNorm);
    rebuild();
}

void ConvergencePlot::rebuild()
{
    const bool byTime = m_axis->currentIndex() == 1;
    const QVector<double>& x = byTime ? m_seconds : m_iteration;
    m_plot->xAxis->setLabel(byTime ? tr("elapsed time (s)") : tr("iteration"));
    // Log axes cannot show non-positive values; such points are left out.
    QVector<double> xc, yc, xg, yg;
    for (int i = 0; i < x.size(); ++i) {
        if (m_cost[i] > 0) {
            xc.append(x[i]);
            yc.append(m_cost[i]);
        }
        if (m_gradient[i] > 0) {
            xg.append(x[i]);
            yg.append(m_gradient[i]);
        }
    }
    m_plot->graph(0)->setData(xc, yc, true);
    m_plot->graph(1)->setData(xg, yg, true);
    m_plot->rescaleAxes();
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

} // namespace wfs::ui
