#include "RunsPanel.h"

#include "ImageView.h"
#include "PhasePanel.h"
#include "ZernikeChart.h"

#include "io/ResultJson.h"

#include <qcustomplot.h>

#include <QComboBox>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QScrollArea>
#include <QStackedWidget>
#include <QTableWidget>
#include <QVBoxLayout>
#include <QtConcurrent>

#include <algorithm>
#include <cmath>

namespace wfs::ui {

namespace {
const QColor kFirst(120, 120, 120), kSecond(33, 113, 181), kDifference(217, 95, 2);
constexpr double kSamePhaseWaves = 1e-6; // a phase difference below this everywhere is no difference
constexpr int kVisibleRows = 3;          // the table's height: up to this many runs without scrolling
} // namespace

RunsPanel::RunsPanel(QWidget* parent)
    : QWidget(parent)
    , m_table(new QTableWidget(this))
    , m_first(new QComboBox(this))
    , m_second(new QComboBox(this))
    , m_summary(new QLabel(this))
    , m_chart(new QCustomPlot(this))
    , m_chartScroll(new QScrollArea(this))
    , m_difference(new ImageView(this))
    , m_hint(makeHint(QString(), this))
    , m_viewsPage(new QWidget(this))
    , m_pages(new QStackedWidget(this))
{
    auto* layout = new QVBoxLayout(this);
    m_table->setObjectName(QStringLiteral("runsTable"));
    m_table->setColumnCount(7);
    m_table->setHorizontalHeaderLabels(
        {tr("run"), tr("finished"), tr("order"), tr("iterations"), tr("termination"), tr("RMS (waves)"), tr("Strehl")});
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->verticalHeader()->setVisible(false);
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_table->setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
    layout->addWidget(m_table);

    auto* bar = new QHBoxLayout;
    bar->addWidget(new QLabel(tr("compare"), this));
    m_first->setObjectName(QStringLiteral("firstRun"));
    m_second->setObjectName(QStringLiteral("secondRun"));
    for (QComboBox* box : {m_first, m_second}) {
        box->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
        box->setMinimumContentsLength(16); // "run 12 · order 4" whole
    }
    bar->addWidget(m_first, 1);
    bar->addWidget(new QLabel(tr("with"), this));
    bar->addWidget(m_second, 1);
    layout->addLayout(bar);
    m_summary->setObjectName(QStringLiteral("runsSummary"));
    m_summary->setWordWrap(true);
    m_summary->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addWidget(m_summary);

    buildChart();

    m_difference->setObjectName(QStringLiteral("phaseDifferenceView"));
    m_difference->setColorMap(ColorMap::Diverging);
    m_difference->setStretch(Stretch::Linear);
    m_difference->setMinimumSize(240, 200);

    // With fewer than two runs a sentence says what to do, in place of the chart and the map.
    m_views = new QGridLayout(m_viewsPage);
    m_views->setContentsMargins(0, 0, 0, 0);
    m_pages->addWidget(m_hint);
    m_pages->addWidget(m_viewsPage);
    layout->addWidget(m_pages, 1);
    arrange();

    connect(m_first, &QComboBox::currentIndexChanged, this, &RunsPanel::requestComparison);
    connect(m_second, &QComboBox::currentIndexChanged, this, &RunsPanel::requestComparison);
    setRuns({});
}

// Terms down the vertical axis, first at the top, two bars each (first and second run) and the difference as a
// marker; the legend in a row above the axes; one row per term, each at least a label high (the chart scrolls).
void RunsPanel::buildChart()
{
    m_chart->yAxis->setRangeReversed(true);
    m_chart->yAxis->grid()->setVisible(false);
    m_chart->xAxis->grid()->setZeroLinePen(QPen(QColor(90, 90, 90), 1));
    m_chart->xAxis->ticker()->setTickStepStrategy(QCPAxisTicker::tssReadability);
    m_chart->xAxis->setLabel(tr("coefficient (waves)"));
    auto* group = new QCPBarsGroup(m_chart);
    group->setSpacing(0);
    for (const QColor& color : {kFirst, kSecond}) {
        auto* bars = new QCPBars(m_chart->yAxis, m_chart->xAxis);
        bars->setBrush(color);
        bars->setPen(Qt::NoPen);
        bars->setWidth(0.4);
        bars->setBarsGroup(group);
    }
    QCPGraph* difference = m_chart->addGraph(m_chart->yAxis, m_chart->xAxis);
    difference->setName(tr("second − first"));
    difference->setLineStyle(QCPGraph::lsNone);
    difference->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDiamond, kDifference, kDifference, 8));
    m_chart->plotLayout()->insertRow(0);
    m_chart->plotLayout()->addElement(0, 0, m_chart->legend);
    m_chart->plotLayout()->setRowStretchFactor(0, 0.001);
    m_chart->legend->setFillOrder(QCPLegend::foColumnsFirst);
    m_chart->legend->setBorderPen(Qt::NoPen);
    m_chart->legend->setVisible(true);
    m_chart->setMinimumSize(240, 200);
    m_chartScroll->setWidget(m_chart);
    keepRowsApart(m_chartScroll, m_chart, m_chart->yAxis, 0);
}

void RunsPanel::resizeEvent(QResizeEvent* event)
{
    QWidget::resizeEvent(event);
    arrange();
}

void RunsPanel::arrange()
{
    // Chart and map side by side where the space is wide, one above the other otherwise.
    const int columns = width() >= 1.4 * height() ? 2 : 1;
    if (columns == m_columns)
        return;
    m_columns = columns;
    m_views->removeWidget(m_chartScroll);
    m_views->removeWidget(m_difference);
    m_views->addWidget(m_chartScroll, 0, 0);
    m_views->addWidget(m_difference, columns == 2 ? 0 : 1, columns == 2 ? 1 : 0);
    m_views->setColumnStretch(0, 1);
    m_views->setColumnStretch(1, columns == 2 ? 1 : 0);
    m_views->setRowStretch(0, 1);
    m_views->setRowStretch(1, columns == 2 ? 0 : 1);
}

int RunsPanel::firstRun() const
{
    return m_first->currentIndex();
}

int RunsPanel::secondRun() const
{
    return m_second->currentIndex();
}

void RunsPanel::setRuns(const std::vector<RunEntry>& runs)
{
    const int count = int(runs.size());
    int first = m_first->currentIndex(), second = m_second->currentIndex();
    const bool kept = first >= 0 && second >= 0 && first < count && second < count && first != second && count >= int(m_runs.size());
    if (!kept || count > int(m_runs.size())) {
        // A new run: compare it with the one before.
        first = std::max(0, count - 2);
        second = count - 1;
    }
    m_runs = runs;

    m_table->setRowCount(count);
    for (int i = 0; i < count; ++i) {
        const RunEntry& run = runs[size_t(i)];
        const FitResult* r = run.result.get();
        const int order = r && !r->coefficients.empty() ? r->coefficients.back().mode.n : run.record.model.order;
        const QStringList cells = {
            QString::fromStdString(run.record.name),
            QString::fromStdString(run.record.time)
                .section(QLatin1Char('T'), 1)
                .remove(QLatin1Char('Z')), // the time; the date in the tooltip
            QString::number(order),
            r ? QString::number(r->solver.iterations) : QString(),
            r ? QString::fromLatin1(terminationName(r->solver.termination)) : run.note,
            r ? QString::number(r->rmsWaves, 'f', 4) : QString(),
            r ? QString::number(r->strehl, 'f', 3) : QString(),
        };
        for (int c = 0; c < cells.size(); ++c) {
            auto* item = new QTableWidgetItem(cells[c]);
            if (c == 0 || c == 4)
                item->setToolTip(c == 4 && !r ? run.note : cells[c]);
            if (c == 1)
                item->setToolTip(tr("%1 (UTC)").arg(QString::fromStdString(run.record.time)));
            m_table->setItem(i, c, item);
        }
    }
    const int rowHeight = m_table->verticalHeader()->defaultSectionSize();
    m_table->setFixedHeight(m_table->horizontalHeader()->sizeHint().height() + std::clamp(count, 1, kVisibleRows) * rowHeight
                            + 2 * m_table->frameWidth()
                            + (m_table->horizontalScrollBar()->isVisible() ? m_table->horizontalScrollBar()->height() : 0));

    const QSignalBlocker blockFirst(m_first), blockSecond(m_second);
    for (QComboBox* box : {m_first, m_second}) {
        box->clear();
        for (const RunEntry& run : runs)
            box->addItem(QString::fromStdString(run.record.name));
    }
    m_first->setCurrentIndex(first);
    m_second->setCurrentIndex(second);
    m_first->setEnabled(count >= 2); // nothing to choose before there are two
    m_second->setEnabled(count >= 2);
    requestComparison();
}

void RunsPanel::compare(int first, int second)
{
    {
        const QSignalBlocker blockFirst(m_first), blockSecond(m_second);
        m_first->setCurrentIndex(first);
        m_second->setCurrentIndex(second);
    }
    requestComparison();
}

void RunsPanel::requestComparison()
{
    const int first = m_first->currentIndex(), second = m_second->currentIndex();
    const int generation = ++m_generation;
    m_comparison.reset();
    auto says = [this](const QString& text) {
        m_summary->setText(text);
        showComparison();
    };
    if (m_runs.size() < 2)
        return says(m_runs.empty() ? tr("No runs yet. Every fit of the session is kept here, with its settings and result. "
                                        "Fit twice (Ctrl+R) to compare two runs, e.g. before and after an alignment step.")
                                   : tr("One run so far. Fit again (Ctrl+R; other settings, or new data after an alignment step) "
                                        "to compare two runs: their coefficients side by side and the phase difference map."));
    if (first < 0 || second < 0 || first == second)
        return says(tr("Choose two different runs to compare."));
    const auto a = m_runs[size_t(first)].result, b = m_runs[size_t(second)].result;
    if (!a || !b)
        return says(
            tr("%1 could not be re-evaluated: %2")
                .arg(QString::fromStdString(m_runs[size_t(a ? second : first)].record.name), m_runs[size_t(a ? second : first)].note));
    m_summary->setText(tr("comparing…"));
    // Core computes the comparison (the difference map is a pass over the pupil pixels), on a worker.
    QtConcurrent::run([a, b] { return compareRuns(*a, *b); }).then(this, [this, generation](RunComparison comparison) {
        if (generation != m_generation)
            return;
        m_comparison = std::move(comparison);
        const RunComparison& c = *m_comparison;
        const double nm = c.wavelength * 1e9;
        QString text = tr("<b>%1</b> − <b>%2</b>: wavefront difference %3 waves RMS (%4 nm), PV %5 waves over %6 pupil pixels "
                          "(piston removed); coefficients differ by %7 waves in quadrature.")
                           .arg(m_second->currentText().toHtmlEscaped(), m_first->currentText().toHtmlEscaped())
                           .arg(c.rmsDifferenceWaves, 0, 'f', 4)
                           .arg(c.rmsDifferenceWaves * nm, 0, 'f', 1)
                           .arg(c.pvDifferenceWaves, 0, 'f', 4)
                           .arg(c.pupilPixels)
                           .arg(c.coefficientRmsWaves, 0, 'f', 4);
        for (const std::string& note : c.notes)
            text += QStringLiteral("<br>") + QString::fromStdString(note).toHtmlEscaped();
        m_summary->setText(text);
        showComparison();
    });
}

QString RunsPanel::summaryText() const
{
    return m_summary->text();
}

QString RunsPanel::hintShown() const
{
    return m_pages->currentWidget() == m_hint ? m_hint->text() : QString();
}

void RunsPanel::showComparison()
{
    auto* first = qobject_cast<QCPBars*>(m_chart->plottable(0));
    auto* second = qobject_cast<QCPBars*>(m_chart->plottable(1));
    QCPGraph* difference = m_chart->graph(0);
    QVector<double> k1, v1, k2, v2, kd, vd;
    QSharedPointer<QCPAxisTickerText> ticker(new QCPAxisTickerText);
    double extent = 1e-3;
    if (m_comparison) {
        const RunComparison& c = *m_comparison;
        for (size_t i = 0; i < c.terms.size(); ++i) {
            const ComparedTerm& t = c.terms[i];
            ticker->addTick(double(i), QStringLiteral("%1  %2").arg(t.index).arg(shortName(t.mode)));
            if (t.firstWaves) {
                k1.append(double(i));
                v1.append(*t.firstWaves);
                extent = std::max(extent, std::abs(*t.firstWaves));
            }
            if (t.secondWaves) {
                k2.append(double(i));
                v2.append(*t.secondWaves);
                extent = std::max(extent, std::abs(*t.secondWaves));
            }
            kd.append(double(i));
            vd.append(t.differenceWaves);
            extent = std::max(extent, std::abs(t.differenceWaves));
        }
        first->setName(tr("first: %1").arg(m_first->currentText()));
        second->setName(tr("second: %1").arg(m_second->currentText()));
        m_chart->xAxis->setLabel(
            tr("coefficient (waves) · %1 indices").arg(c.ordering == ZernikeOrdering::Noll ? tr("Noll") : tr("OSA/ANSI")));
    } else {
        first->setName(tr("first run"));
        second->setName(tr("second run"));
    }
    first->setData(k1, v1, true);
    second->setData(k2, v2, true);
    difference->setData(kd, vd, true);
    m_chart->yAxis->setTicker(ticker);
    m_chart->yAxis->setRange(-0.6, double(std::max<qsizetype>(kd.size(), 1)) - 0.4);
    keepRowsApart(m_chartScroll, m_chart, m_chart->yAxis, int(kd.size()));
    // No comparison (fewer than two runs, or one that could not be re-evaluated): the reason, centred,
    // not empty axes; the summary line above would only repeat it.
    const bool compared = m_comparison.has_value();
    m_hint->setText(m_summary->text());
    m_pages->setCurrentWidget(compared ? m_viewsPage : static_cast<QWidget*>(m_hint));
    m_summary->setVisible(compared);
    m_chart->xAxis->setRange(-1.1 * extent, 1.1 * extent);
    m_chart->xAxis->ticker()->setTickCount(std::clamp(m_chart->axisRect()->width() / 80, 2, 6));
    m_chart->replot(QCustomPlot::rpQueuedReplot);

    if (m_comparison && m_comparison->pupilPixels > 0) {
        double largest = 0.0;
        for (double v : m_comparison->phaseDifferenceWaves.pixels)
            if (std::isfinite(v))
                largest = std::max(largest, std::abs(v));
        m_difference->setAxisScale(pupilAxisScale(m_comparison->phaseDifferenceGeometry));
        // Below a micro-wave the map is rounding: a colour bar over ±1e-6 labelled "0.0000000" would only say
        // nothing; the view says it in words.
        if (largest < kSamePhaseWaves) {
            m_difference->setTitle(tr("second − first"));
            m_difference->clear(tr("The two runs' phases are the same: the largest difference is %1 waves.")
                                    .arg(largest == 0.0 ? QStringLiteral("0") : QString::number(largest, 'g', 2)));
        } else {
            m_difference->setImage(m_comparison->phaseDifferenceWaves, tr("second − first"), tr("waves"),
                                   DisplayRange{-largest, largest}); // symmetric: zero in the middle of the map
        }
    } else {
        m_difference->clear(tr("no phase difference"));
    }
    emit comparisonShown();
}

} // namespace wfs::ui
