#include "ZernikeChart.h"

#include <qcustomplot.h>

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QScrollArea>
#include <QStackedWidget>
#include <QToolTip>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

namespace wfs::ui {

namespace {
// Legend entries live in a row of their own above the axis rectangle, so they never cover a bar.
void legendAbove(QCustomPlot* plot)
{
    plot->plotLayout()->insertRow(0);
    auto* holder = new QCPLayoutGrid;
    plot->plotLayout()->addElement(0, 0, holder);
    plot->plotLayout()->setRowStretchFactor(0, 0.001);
    holder->addElement(0, 0, plot->legend);
    plot->legend->setFillOrder(QCPLegend::foColumnsFirst);
    plot->legend->setBorderPen(Qt::NoPen);
    plot->legend->setMargins(QMargins(2, 0, 2, 0));
    plot->legend->setVisible(true);
}

} // namespace

QList<QRect> tickLabelRects(const QCPAxis* axis)
{
    QList<QRect> rects;
    if (!axis || !axis->visible() || !axis->tickLabels() || axis->tickLabelSide() != QCPAxis::lsOutside)
        return rects;
    const QCustomPlot* plot = axis->parentPlot();
    const QRect frame = axis->axisRect()->rect();
    const QRect viewport = plot->viewport();
    // Labels sit beyond the outer tick marks and the padding, shifted by the axis offset.
    const int distance = std::max({0, axis->tickLengthOut(), axis->subTickLengthOut()}) + axis->tickLabelPadding() + axis->offset();
    QFont font = axis->tickLabelFont();
    if (font.pointSizeF() > 0)
        font.setPointSizeF(font.pointSizeF() + 0.05); // as QCustomPlot measures its labels
    const QFontMetrics metrics(font);
    QFont exponentFont = axis->tickLabelFont();
    exponentFont.setPointSizeF(exponentFont.pointSizeF() * 0.75);
    const QFontMetrics exponentMetrics(exponentFont);
    const bool powers = axis->numberFormat().contains(QLatin1Char('b'));
    const QVector<double> ticks = axis->tickVector();
    const QVector<QString> labels = axis->tickVectorLabels();
    for (int i = 0; i < ticks.size() && i < labels.size(); ++i) {
        const QString& text = labels[i];
        if (text.isEmpty() || !axis->range().contains(ticks[i]))
            continue;
        QSize size = metrics.boundingRect(0, 0, 0, 0, Qt::TextDontClip | Qt::AlignHCenter, text).size();
        const qsizetype e = powers ? text.indexOf(QLatin1Char('e')) : -1;
        if (e >= 0) { // "1e+05" drawn as a base and a smaller exponent
            const QString base = text.left(e) == QLatin1String("1") ? QStringLiteral("10") : text.left(e) + QStringLiteral("·10");
            QString exponent = text.mid(e + 1);
            exponent.remove(QLatin1Char('+'));
            const QRect baseBounds = metrics.boundingRect(0, 0, 0, 0, Qt::TextDontClip, base);
            size = QSize(baseBounds.width() + exponentMetrics.boundingRect(0, 0, 0, 0, Qt::TextDontClip, exponent).width() + 2,
                         baseBounds.height());
        }
        const double at = axis->coordToPixel(ticks[i]);
        QRect r;
        switch (axis->axisType()) {
        case QCPAxis::atLeft:
            r = QRect(frame.left() - distance - size.width(), int(at - size.height() / 2.0), size.width(), size.height());
            break;
        case QCPAxis::atRight:
            r = QRect(frame.right() + distance, int(at - size.height() / 2.0), size.width(), size.height());
            break;
        case QCPAxis::atTop:
            r = QRect(int(at - size.width() / 2.0), frame.top() - distance - size.height(), size.width(), size.height());
            break;
        case QCPAxis::atBottom:
            r = QRect(int(at - size.width() / 2.0), frame.bottom() + distance, size.width(), size.height());
            break;
        }
        const bool clipped = QCPAxis::orientation(axis->axisType()) == Qt::Horizontal
                                 ? r.right() + 1 > viewport.right() || r.left() < viewport.left()
                                 : r.bottom() + 1 > viewport.bottom() || r.top() < viewport.top();
        if (!clipped)
            rects.append(r);
    }
    return rects;
}

QList<QRect> tickLabelRects(const QCustomPlot* plot)
{
    QList<QRect> rects;
    if (!plot->axisRect())
        return rects;
    for (const QCPAxis* axis : plot->axisRect()->axes())
        rects += tickLabelRects(axis);
    return rects;
}

void keepRowsApart(QScrollArea* scroll, QCustomPlot* plot, QCPAxis* rowAxis, int rows)
{
    // Each row a label's height and a little air; what is not axis rectangle (legend, value axis) comes
    // on top. That part does not depend on the plot's height, so one layout pass tells it.
    auto fit = [plot, rowAxis, rows] {
        const int pitch = QFontMetrics(rowAxis->tickLabelFont()).height() + 4;
        const int around = plot->height() - rowAxis->axisRect()->rect().height();
        const int needed = std::max(200, rows * pitch + std::max(around, 0));
        if (plot->minimumHeight() != needed)
            plot->setMinimumHeight(needed);
    };
    QObject::disconnect(plot, &QCustomPlot::afterLayout, nullptr, nullptr);
    QObject::connect(plot, &QCustomPlot::afterLayout, plot, fit);
    scroll->setWidgetResizable(true);
    scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    scroll->setFrameShape(QFrame::NoFrame);
    fit();
}

QLabel* makeHint(const QString& text, QWidget* parent)
{
    auto* hint = new QLabel(text, parent);
    hint->setWordWrap(true);
    hint->setAlignment(Qt::AlignCenter);
    hint->setMargin(16);
    hint->setForegroundRole(QPalette::PlaceholderText);
    return hint;
}

QString shortName(const ZernikeMode& mode)
{
    QString name = QString::fromStdString(zernike::name(mode));
    static const std::pair<const char*, const char*> words[] = {
        {"Vertical", "vert."},     {"Horizontal", "horiz."}, {"Oblique", "obl."},   {"secondary", "2nd"},       {"tertiary", "3rd"},
        {"astigmatism", "astig."}, {"Primary ", ""},         {"spherical", "sph."}, {"quadrafoil", "quadraf."}, {"pentafoil", "pentaf."}};
    for (const auto& [word, abbreviation] : words)
        name.replace(QLatin1String(word), QLatin1String(abbreviation));
    if (!name.isEmpty())
        name[0] = name[0].toUpper();
    return name;
}

ZernikeChart::ZernikeChart(QWidget* parent)
    : QWidget(parent)
    , m_plot(new QCustomPlot(this))
    , m_unit(new QComboBox(this))
    , m_unitBar(new QWidget(this))
    , m_hint(makeHint(tr("The fitted Zernike coefficients appear here while a fit runs, one bar per term.\n\n"
                         "Load data (or the demo) and start a fit (Ctrl+R)."),
                      this))
    , m_scroll(new QScrollArea(this))
    , m_pages(new QStackedWidget(this))
{
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    auto* bar = new QHBoxLayout(m_unitBar);
    bar->setContentsMargins(0, 0, 0, 0);
    bar->addWidget(new QLabel(tr("unit:"), m_unitBar));
    m_unit->addItems({tr("waves"), tr("nm")});
    m_unit->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    bar->addWidget(m_unit);
    bar->addStretch();
    layout->addWidget(m_unitBar);
    // Before a fit a sentence says what to do; then the chart, scrolling as a whole where its rows do not fit.
    m_scroll->setWidget(m_plot);
    m_pages->addWidget(m_hint);
    m_pages->addWidget(m_scroll);
    layout->addWidget(m_pages, 1);
    connect(m_unit, &QComboBox::currentIndexChanged, this, [this] {
        m_shownCount = -1;
        rebuild();
    });
    // Terms run down the vertical (key) axis, one row each, first term at the top; values along x.
    auto* bars = new QCPBars(m_plot->yAxis, m_plot->xAxis);
    bars->setName(tr("fitted"));
    bars->setBrush(QColor(33, 144, 141, 200));
    bars->setPen(Qt::NoPen);
    bars->setWidth(0.7);
    auto* errors = new QCPErrorBars(m_plot->yAxis, m_plot->xAxis);
    errors->setName(tr("±1 σ"));
    errors->setDataPlottable(bars);
    errors->setErrorType(QCPErrorBars::etValueError);
    errors->setPen(QPen(QColor(40, 40, 40), 1.2));
    errors->setWhiskerWidth(6);
    QCPGraph* truth = m_plot->addGraph(m_plot->yAxis, m_plot->xAxis);
    truth->setName(tr("truth"));
    truth->setLineStyle(QCPGraph::lsNone);
    truth->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDiamond, QColor(217, 95, 2), QColor(217, 95, 2), 9));
    m_plot->yAxis->setRangeReversed(true);
    m_plot->yAxis->grid()->setVisible(false);
    m_plot->xAxis->grid()->setZeroLinePen(QPen(QColor(90, 90, 90), 1));
    m_plot->xAxis->ticker()->setTickCount(4);
    m_plot->xAxis->ticker()->setTickStepStrategy(QCPAxisTicker::tssReadability);
    legendAbove(m_plot);
    m_plot->setMouseTracking(true);
    connect(m_plot, &QCustomPlot::mouseMove, this, &ZernikeChart::showToolTip);
    setMinimumSize(260, 200);
    keepRowsApart(m_scroll, m_plot, m_plot->yAxis, 0);
    rebuild();
}

QString ZernikeChart::hintShown() const
{
    return m_pages->currentWidget() == m_hint ? m_hint->text() : QString();
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

QString ZernikeChart::toolTipAt(double coordinate) const
{
    const long i = std::lround(coordinate);
    if (i < 0 || i >= long(m_terms.size()) || std::abs(coordinate - double(i)) > 0.45)
        return {};
    const ChartTerm& t = m_terms[size_t(i)];
    const double nm = m_wavelength * 1e9;
    QString text = tr("%1 %2 %3 (n %4, m %5)\n%6 waves = %7 nm")
                       .arg(m_ordering == ZernikeOrdering::Noll ? tr("Noll") : tr("OSA/ANSI"))
                       .arg(t.index)
                       .arg(QString::fromStdString(zernike::name(t.mode)))
                       .arg(t.mode.n)
                       .arg(t.mode.m)
                       .arg(t.waves, 0, 'f', 4)
                       .arg(t.waves * nm, 0, 'f', 1);
    if (t.sigmaWaves > 0 && std::isfinite(t.sigmaWaves))
        text += tr("\n± %1 waves = %2 nm (1 σ)").arg(t.sigmaWaves, 0, 'f', 4).arg(t.sigmaWaves * nm, 0, 'f', 1);
    if (t.truthWaves)
        text += tr("\ntruth %1 waves = %2 nm").arg(*t.truthWaves, 0, 'f', 4).arg(*t.truthWaves * nm, 0, 'f', 1);
    return text;
}

void ZernikeChart::showToolTip(QMouseEvent* event)
{
    if (!m_plot->axisRect()->rect().contains(event->pos())) {
        QToolTip::hideText();
        return;
    }
    const QString text = toolTipAt(m_plot->yAxis->pixelToCoord(event->position().y()));
    if (text.isEmpty())
        QToolTip::hideText();
    else
        QToolTip::showText(event->globalPosition().toPoint(), text, m_plot);
}

void ZernikeChart::rebuild()
{
    const double scale = showsNanometres() ? m_wavelength * 1e9 : 1.0;
    QVector<double> key, value, sigma, tk, tv;
    bool anySigma = false;
    for (size_t i = 0; i < m_terms.size(); ++i) {
        const ChartTerm& t = m_terms[i];
        key.append(double(i));
        value.append(t.waves * scale);
        const bool hasSigma = t.sigmaWaves > 0 && std::isfinite(t.sigmaWaves);
        sigma.append(hasSigma ? t.sigmaWaves * scale : 0.0);
        anySigma = anySigma || hasSigma;
        if (t.truthWaves) {
            tk.append(double(i));
            tv.append(*t.truthWaves * scale);
        }
    }
    auto* bars = qobject_cast<QCPBars*>(m_plot->plottable(0));
    auto* errors = qobject_cast<QCPErrorBars*>(m_plot->plottable(1));
    bars->setData(key, value, true);
    errors->setData(sigma);
    errors->setVisible(anySigma);
    m_plot->graph(0)->setData(tk, tv, true);
    m_plot->graph(0)->setVisible(!tk.isEmpty());
    // Legend entries only for what is drawn.
    errors->removeFromLegend();
    m_plot->graph(0)->removeFromLegend();
    if (anySigma)
        errors->addToLegend();
    if (!tk.isEmpty())
        m_plot->graph(0)->addToLegend();
    if (m_shownCount != int(m_terms.size())) {
        // Tick labels and the key range change only when the set of terms does, not at every iteration.
        QSharedPointer<QCPAxisTickerText> ticker(new QCPAxisTickerText);
        for (size_t i = 0; i < m_terms.size(); ++i)
            ticker->addTick(double(i), QStringLiteral("%1  %2").arg(m_terms[i].index).arg(shortName(m_terms[i].mode)));
        m_plot->yAxis->setTicker(ticker);
        m_plot->yAxis->setRange(-0.6, double(std::max<size_t>(m_terms.size(), 1)) - 0.4);
        m_shownCount = int(m_terms.size());
        keepRowsApart(m_scroll, m_plot, m_plot->yAxis, int(m_terms.size()));
        m_pages->setCurrentWidget(m_terms.empty() ? static_cast<QWidget*>(m_hint) : m_scroll);
        m_unitBar->setVisible(!m_terms.empty());
    }
    m_plot->xAxis->setLabel(
        tr("coefficient (%1) · %2 indices")
            .arg(showsNanometres() ? tr("nm") : tr("waves"), m_ordering == ZernikeOrdering::Noll ? tr("Noll") : tr("OSA/ANSI")));
    double extent = 1e-3 * scale;
    for (int i = 0; i < value.size(); ++i)
        extent = std::max(extent, std::abs(value[i]) + sigma[i]);
    for (double v : tv)
        extent = std::max(extent, std::abs(v));
    m_plot->xAxis->setRange(-1.1 * extent, 1.1 * extent);
    // Few enough x labels for a narrow dock: about one per 70 px of axis.
    m_plot->xAxis->ticker()->setTickCount(std::clamp(m_plot->axisRect()->width() / 70, 2, 6));
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

} // namespace wfs::ui
