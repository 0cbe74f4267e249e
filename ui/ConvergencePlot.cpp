#include "ConvergencePlot.h"

#include "ZernikeChart.h"

#include <qcustomplot.h>

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QStackedWidget>
#include <QVBoxLayout>

#include <cmath>

namespace wfs::ui {

ConvergencePlot::ConvergencePlot(QWidget* parent)
    : QWidget(parent)
    , m_plot(new QCustomPlot(this))
    , m_axis(new QComboBox(this))
    , m_axisBar(new QWidget(this))
    , m_hint(makeHint(tr("Start a fit (Ctrl+R) to see the cost fall: every iteration's cost and gradient appear here "
                         "as the fit runs."),
                      this))
    , m_pages(new QStackedWidget(this))
{
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    auto* bar = new QHBoxLayout(m_axisBar);
    bar->setContentsMargins(0, 0, 0, 0);
    bar->addWidget(new QLabel(tr("x axis:"), m_axisBar));
    m_axis->addItems({tr("iteration"), tr("time (s)")});
    m_axis->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    bar->addWidget(m_axis);
    bar->addStretch();
    layout->addWidget(m_axisBar);
    // Before the first iteration a sentence says what to do, not empty axes.
    m_pages->addWidget(m_hint);
    m_pages->addWidget(m_plot);
    layout->addWidget(m_pages, 1);
    connect(m_axis, &QComboBox::currentIndexChanged, this, &ConvergencePlot::rebuild);

    QSharedPointer<QCPAxisTickerLog> logTicker(new QCPAxisTickerLog);
    m_plot->yAxis->setScaleType(QCPAxis::stLogarithmic);
    m_plot->yAxis->setTicker(logTicker);
    m_plot->yAxis->setNumberFormat(QStringLiteral("eb"));
    m_plot->yAxis->setNumberPrecision(0);
    m_plot->yAxis->setLabel(tr("cost"));
    QSharedPointer<QCPAxisTickerLog> logTicker2(new QCPAxisTickerLog);
    m_plot->yAxis2->setVisible(true);
    m_plot->yAxis2->setScaleType(QCPAxis::stLogarithmic);
    m_plot->yAxis2->setTicker(logTicker2);
    m_plot->yAxis2->setNumberFormat(QStringLiteral("eb"));
    m_plot->yAxis2->setNumberPrecision(0);
    m_plot->yAxis2->setLabel(tr("gradient max-norm"));
    m_plot->addGraph(m_plot->xAxis, m_plot->yAxis);
    m_plot->graph(0)->setName(tr("cost"));
    m_plot->graph(0)->setPen(QPen(QColor(33, 113, 181), 2));
    m_plot->addGraph(m_plot->xAxis, m_plot->yAxis2);
    m_plot->graph(1)->setName(tr("gradient max-norm"));
    m_plot->graph(1)->setPen(QPen(QColor(217, 95, 2), 1, Qt::DashLine));
    // The legend sits in a row of its own above the axes, never over the curves.
    m_plot->plotLayout()->insertRow(0);
    auto* legendHolder = new QCPLayoutGrid;
    m_plot->plotLayout()->addElement(0, 0, legendHolder);
    m_plot->plotLayout()->setRowStretchFactor(0, 0.001);
    legendHolder->addElement(0, 0, m_plot->legend);
    m_plot->legend->setFillOrder(QCPLegend::foColumnsFirst);
    m_plot->legend->setBorderPen(Qt::NoPen);
    m_plot->legend->setMargins(QMargins(2, 0, 2, 0));
    m_plot->legend->setVisible(true);
    m_plot->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
    setMinimumSize(260, 200);
    rebuild();
}

QString ConvergencePlot::hintShown() const
{
    return m_pages->currentWidget() == m_hint ? m_hint->text() : QString();
}

void ConvergencePlot::clear()
{
    m_rows.clear();
    rebuild();
}

void ConvergencePlot::setRows(const std::vector<HistoryRow>& rows)
{
    m_rows = rows;
    rebuild();
}

void ConvergencePlot::addRows(const std::vector<HistoryRow>& rows)
{
    const size_t from = m_rows.size();
    m_rows.insert(m_rows.end(), rows.begin(), rows.end());
    append(from);
    rescale();
}

void ConvergencePlot::rebuild()
{
    const bool byTime = m_axis->currentIndex() == 1;
    m_plot->xAxis->setLabel(byTime ? tr("elapsed time (s)") : tr("iteration"));
    m_plot->graph(0)->data()->clear();
    m_plot->graph(1)->data()->clear();
    m_costLow = m_gradLow = INFINITY;
    m_costHigh = m_gradHigh = -INFINITY;
    append(0);
    rescale();
}

void ConvergencePlot::append(size_t from)
{
    const bool byTime = m_axis->currentIndex() == 1;
    // Log axes cannot show non-positive values; such points are left out.
    QVector<double> xc, yc, xg, yg;
    for (size_t i = from; i < m_rows.size(); ++i) {
        const HistoryRow& r = m_rows[i];
        const double x = byTime ? r.elapsedSeconds : double(r.iteration);
        if (r.cost > 0 && std::isfinite(r.cost)) {
            xc.append(x);
            yc.append(r.cost);
            m_costLow = std::min(m_costLow, r.cost);
            m_costHigh = std::max(m_costHigh, r.cost);
        }
        if (r.gradientMaxNorm > 0 && std::isfinite(r.gradientMaxNorm)) {
            xg.append(x);
            yg.append(r.gradientMaxNorm);
            m_gradLow = std::min(m_gradLow, r.gradientMaxNorm);
            m_gradHigh = std::max(m_gradHigh, r.gradientMaxNorm);
        }
    }
    m_plot->graph(0)->addData(xc, yc, true);
    m_plot->graph(1)->addData(xg, yg, true);
}

void ConvergencePlot::rescale()
{
    const bool byTime = m_axis->currentIndex() == 1;
    double xHigh = 1.0;
    if (!m_rows.empty())
        xHigh = std::max(byTime ? m_rows.back().elapsedSeconds : double(m_rows.back().iteration), byTime ? 1e-3 : 1.0);
    m_plot->xAxis->setRange(0.0, xHigh * 1.03); // from iteration 0, a little room on the right
    // Half a decade of padding on log axes so the first and last points sit inside the frame.
    auto pad = [](QCPAxis* axis, double low, double high) {
        if (!(high >= low) || !(low > 0))
            axis->setRange(0.1, 10.0);
        else
            axis->setRange(low / 3.0, high * 3.0);
    };
    pad(m_plot->yAxis, m_costLow, m_costHigh);
    pad(m_plot->yAxis2, m_gradLow, m_gradHigh);
    m_pages->setCurrentWidget(m_rows.empty() ? static_cast<QWidget*>(m_hint) : m_plot);
    m_axisBar->setVisible(!m_rows.empty());
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

} // namespace wfs::ui
