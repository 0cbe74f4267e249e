#include "ZernikeChart.h"

#include <qcustomplot.h>

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QVBoxLayout>

namespace wfs::ui {

ZernikeChart::ZernikeChart(QWidget* parent)
    : QWidget(parent)
    , m_plot(new QCustomPlot(this))
    , m_unit(new QComboBox(this))
{
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    auto* bar = new QHBoxLayout;
    bar->addWidget(new QLabel(tr("unit:"), this));
    m_unit->addItems({tr("waves"), tr("nm")});
    bar->addWidget(m_unit);
    bar->addStretch();
    layout->addLayout(bar);
    layout->addWidget(m_plot);
    connect(m_unit, &QComboBox::currentIndexChanged, this, [this] {
        m_shownCount = -1;
        rebuild();
    });
    auto* bars = new QCPBars(m_plot->xAxis, m_plot->yAxis);
    bars->setName(tr("fitted"));
    bars->setBrush(QColor(33, 144, 141, 200));
    bars->setPen(Qt::NoPen);
    bars->setWidth(0.7);
    QCPGraph* truth = m_plot->addGraph();
    truth->setName(tr("truth"));
    truth->setLineStyle(QCPGraph::lsNone);
    truth->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDiamond, QColor(217, 95, 2), QColor(217, 95, 2), 8));
    m_plot->legend->setVisible(true);
    m_plot->xAxis->setTickLabelRotation(60);
    QFont small = m_plot->xAxis->tickLabelFont();
    small.setPointSizeF(small.pointSizeF() * 0.8); // many named terms share the axis
    m_plot->xAxis->setTickLabelFont(small);
    setMinimumSize(260, 200);
}

bool ZernikeChart::showsNanometres() const
{
    return m_unit->currentIndex() == 1;
}

void ZernikeChart::clear()
{
    m_terms.clear();
    m_shownCount = -1;
    rebuild();
}

void ZernikeChart::setTerms(const std::vector<ChartTerm>& terms, double wavelengthMetres, ZernikeOrdering ordering)
{
    m_terms = terms;
    m_wavelength = wavelengthMetres;
    m_ordering = ordering;
    rebuild();
}

void ZernikeChart::rebuild()
{
    const double scale = showsNanometres() ? m_wavelength * 1e9 : 1.0;
    QVector<double> x, y, tx, ty;
    for (size_t i = 0; i < m_terms.size(); ++i) {
        x.append(double(i));
        y.append(m_terms[i].waves * scale);
        if (m_terms[i].truthWaves) {
            tx.append(double(i));
            ty.append(*m_terms[i].truthWaves * scale);
        }
    }
    auto* bars = qobject_cast<QCPBars*>(m_plot->plottable(0));
    bars->setData(x, y, true);
    m_plot->graph(0)->setData(tx, ty, true);
    m_plot->graph(0)->setVisible(!tx.isEmpty());
    if (m_shownCount != int(m_terms.size())) {
        // Tick labels and axis ranges change only when the set of terms does, not at every iteration.
        QSharedPointer<QCPAxisTickerText> ticker(new QCPAxisTickerText);
        for (size_t i = 0; i < m_terms.size(); ++i)
            ticker->addTick(double(i), QStringLiteral("%1 %2").arg(m_terms[i].index).arg(QString::fromStdString(zernike::name(m_terms[i].mode))));
        m_plot->xAxis->setTicker(ticker);
        m_plot->xAxis->setRange(-0.7, double(m_terms.size()) - 0.3);
        m_plot->xAxis->setLabel(QStringLiteral("%1 index").arg(m_ordering == ZernikeOrdering::Noll ? tr("Noll") : tr("OSA/ANSI")));
        m_shownCount = int(m_terms.size());
    }
    m_plot->yAxis->setLabel(showsNanometres() ? tr("coefficient (nm)") : tr("coefficient (waves)"));
    double extent = 1e-3 * scale;
    for (double v : y)
        extent = std::max(extent, std::abs(v));
    for (double v : ty)
        extent = std::max(extent, std::abs(v));
    m_plot->yAxis->setRange(-1.15 * extent, 1.15 * extent);
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

} // namespace wfs::ui
