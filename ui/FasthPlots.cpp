#include "FasthPlots.h"

#include <qcustomplot.h>

#include <algorithm>
#include <cmath>
#include <map>

namespace wfs::ui {

using fasth::BenchMethod;
using fasth::Pass;

QColor methodColor(BenchMethod method)
{
    switch (method) {
    case BenchMethod::Sequential:
        return {203, 24, 29};
    case BenchMethod::SequentialFused:
        return {252, 141, 89};
    case BenchMethod::FastH:
        return {33, 113, 181};
    case BenchMethod::CompactWY:
        return {35, 139, 69};
    case BenchMethod::TreeMerge:
        return {117, 107, 177};
    case BenchMethod::Library:
        return {140, 81, 10};
    case BenchMethod::Dense:
        return {80, 80, 80};
    default:
        return {0, 0, 0};
    }
}

QString methodLabel(BenchMethod method)
{
    switch (method) {
    case BenchMethod::Sequential:
        return FasthPanel::tr("sequential");
    case BenchMethod::SequentialFused:
        return FasthPanel::tr("sequential, one fused kernel (GPU)");
    case BenchMethod::FastH:
        return FasthPanel::tr("FastH");
    case BenchMethod::CompactWY:
        return FasthPanel::tr("UT (compact WY)");
    case BenchMethod::TreeMerge:
        return FasthPanel::tr("tree merge");
    case BenchMethod::Library:
        return FasthPanel::tr("library (Eigen / cuSOLVER)");
    case BenchMethod::Dense:
        return FasthPanel::tr("dense GEMM, Q formed");
    default:
        return QString::fromLatin1(fasth::methodName(method));
    }
}

QString passLabel(Pass pass)
{
    switch (pass) {
    case Pass::Forward:
        return FasthPanel::tr("forward");
    case Pass::Backward:
        return FasthPanel::tr("backward");
    case Pass::Both:
        return FasthPanel::tr("forward + backward");
    }
    return {};
}

void setLogAxis(QCPAxis* axis, double base)
{
    QSharedPointer<QCPAxisTickerLog> ticker(new QCPAxisTickerLog);
    ticker->setLogBase(base);
    axis->setScaleType(QCPAxis::stLogarithmic);
    axis->setTicker(ticker);
    axis->setNumberFormat(QStringLiteral("g"));
}

void styleLegend(QCustomPlot* plot, Qt::Alignment alignment)
{
    plot->legend->setVisible(true);
    QFont font = plot->legend->font();
    font.setPointSizeF(font.pointSizeF() * 0.85);
    plot->legend->setFont(font);
    plot->legend->setBrush(QColor(255, 255, 255, 210));
    plot->axisRect()->insetLayout()->setInsetAlignment(0, alignment);
}

// The timing plots have curves everywhere: a legend inside would hide some of them.
void legendBelow(QCustomPlot* plot, int columns)
{
    styleLegend(plot, Qt::AlignTop | Qt::AlignLeft);
    plot->axisRect()->insetLayout()->take(plot->legend);
    plot->plotLayout()->addElement(1, 0, plot->legend);
    plot->plotLayout()->setRowStretchFactor(1, 0.001);
    plot->legend->setFillOrder(QCPLegend::foColumnsFirst);
    plot->legend->setWrap(columns);
    plot->legend->setBorderPen(Qt::NoPen);
}

QCustomPlot* makePlot(QWidget* parent, const QString& xLabel, const QString& yLabel)
{
    auto* plot = new QCustomPlot(parent);
    plot->xAxis->setLabel(xLabel);
    plot->yAxis->setLabel(yLabel);
    plot->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
    plot->setMinimumSize(300, 200);
    return plot;
}

void padLog(QCPAxis* axis, double factor)
{
    const QCPRange range = axis->range();
    if (range.lower > 0 && range.upper > 0)
        axis->setRange(range.lower / factor, range.upper * factor);
}

QString durationText(double ms)
{
    if (ms < 1.0)
        return QStringLiteral("%1 µs").arg(ms * 1000.0, 0, 'g', 3);
    return QStringLiteral("%1 ms").arg(ms, 0, 'g', 3);
}

void drawTimingPlot(QCustomPlot* plot, const std::vector<FasthTimingRow>& timingRows, Pass pass)
{
    // Time against d: one graph per method, quartiles as error bars.
    plot->clearPlottables();
    std::map<BenchMethod, std::vector<const fasth::SweepRow*>> byMethod;
    for (const FasthTimingRow& t : timingRows)
        if (t.sweep == FasthSweepKind::Dimension && t.row.pass == pass)
            byMethod[t.row.method].push_back(&t.row);
    for (auto& [method, rows] : byMethod) {
        std::sort(rows.begin(), rows.end(), [](auto* a, auto* b) { return a->d < b->d; });
        QVector<double> x, y, below, above;
        for (const fasth::SweepRow* r : rows) {
            x << r->d;
            y << r->ms;
            below << r->ms - r->msQ1;
            above << r->msQ3 - r->ms;
        }
        QCPGraph* graph = plot->addGraph();
        graph->setName(methodLabel(method));
        const QColor color = methodColor(method);
        graph->setPen(QPen(color, method == BenchMethod::FastH || method == BenchMethod::Sequential ? 2.5 : 1.5));
        graph->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, color, 6));
        graph->setData(x, y, true);
        auto* bars = new QCPErrorBars(plot->xAxis, plot->yAxis);
        bars->removeFromLegend();
        bars->setDataPlottable(graph);
        bars->setData(below, above);
        bars->setPen(QPen(color, 1));
    }
    plot->rescaleAxes();
    padLog(plot->xAxis, 1.25);
    padLog(plot->yAxis, 1.5);
    plot->replot(QCustomPlot::rpQueuedReplot);
}

void drawSpeedUpPlot(QCustomPlot* plot, const std::vector<FasthSpeedUp>& speedUps)
{
    // Speed-up over sequential against d, with the break-even line.
    plot->clearPlottables();
    std::map<BenchMethod, std::vector<std::pair<int, double>>> speedUpByMethod;
    for (const FasthSpeedUp& s : speedUps)
        speedUpByMethod[s.method].emplace_back(s.d, s.speedUp);
    double lowestD = 0, highestD = 0;
    for (auto& [method, points] : speedUpByMethod) {
        std::sort(points.begin(), points.end());
        QVector<double> x, y;
        for (const auto& [d, speedUp] : points) {
            x << d;
            y << speedUp;
            lowestD = lowestD == 0 ? d : std::min<double>(lowestD, d);
            highestD = std::max<double>(highestD, d);
        }
        QCPGraph* graph = plot->addGraph();
        graph->setName(method == BenchMethod::FastH ? FasthPanel::tr("FastH over sequential") : methodLabel(method));
        const QColor color = methodColor(method);
        graph->setPen(method == BenchMethod::FastH ? QPen(color, 2.5) : QPen(color, 1, Qt::DashLine));
        graph->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, color, method == BenchMethod::FastH ? 7 : 4));
        graph->setData(x, y, true);
    }
    if (highestD > 0) {
        QCPGraph* even = plot->addGraph();
        even->setName(FasthPanel::tr("as fast as sequential"));
        even->setPen(QPen(Qt::black, 1, Qt::DotLine));
        even->setData(QVector<double>{lowestD, highestD}, QVector<double>{1.0, 1.0});
    }
    plot->rescaleAxes();
    padLog(plot->xAxis, 1.25);
    if (plot->yAxis->range().upper > 0)
        plot->yAxis->setRange(0, plot->yAxis->range().upper * 1.15);
    plot->replot(QCustomPlot::rpQueuedReplot);
}

void drawBlockPlot(QCustomPlot* plot, const std::vector<FasthTimingRow>& timingRows, Pass pass)
{
    // The block sweep: FastH against b, sequential and dense GEMM at the same (d, k) as levels, and the
    // count of sequential matrix operations that the O(k/b + b) argument is about.
    plot->clearPlottables();
    std::vector<const fasth::SweepRow*> fasthRows;
    const fasth::SweepRow* sequentialRow = nullptr;
    const fasth::SweepRow* denseRow = nullptr;
    for (const FasthTimingRow& t : timingRows) {
        if (t.sweep != FasthSweepKind::BlockSize || t.row.pass != pass)
            continue;
        if (t.row.method == BenchMethod::FastH)
            fasthRows.push_back(&t.row);
        else if (t.row.method == BenchMethod::Sequential)
            sequentialRow = &t.row;
        else if (t.row.method == BenchMethod::Dense)
            denseRow = &t.row;
    }
    std::sort(fasthRows.begin(), fasthRows.end(), [](auto* a, auto* b) { return a->requestedBlock < b->requestedBlock; });
    if (!fasthRows.empty()) {
        const int k = fasthRows.front()->k;
        QVector<double> b, ms, below, above, steps;
        for (const fasth::SweepRow* r : fasthRows) {
            b << r->block;
            ms << r->ms;
            below << r->ms - r->msQ1;
            above << r->msQ3 - r->ms;
            steps << std::ceil(double(k) / r->block) + r->block;
        }
        QCPGraph* fasthGraph = plot->addGraph();
        fasthGraph->setName(FasthPanel::tr("FastH, d = %1, k = %2").arg(fasthRows.front()->d).arg(k));
        fasthGraph->setPen(QPen(methodColor(BenchMethod::FastH), 2.5));
        fasthGraph->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, methodColor(BenchMethod::FastH), 6));
        fasthGraph->setData(b, ms, true);
        auto* bars = new QCPErrorBars(plot->xAxis, plot->yAxis);
        bars->removeFromLegend();
        bars->setDataPlottable(fasthGraph);
        bars->setData(below, above);
        for (const fasth::SweepRow* level : {sequentialRow, denseRow}) {
            if (!level)
                continue;
            QCPGraph* graph = plot->addGraph();
            graph->setName(methodLabel(level->method));
            graph->setPen(QPen(methodColor(level->method), 1.5, Qt::DashLine));
            graph->setData(QVector<double>{b.front(), b.back()}, QVector<double>{level->ms, level->ms});
        }
        QCPGraph* count = plot->addGraph(plot->xAxis, plot->yAxis2);
        count->setName(FasthPanel::tr("ceil(k/b) + b (right axis)"));
        count->setPen(QPen(QColor(150, 150, 150), 1.5, Qt::DotLine));
        count->setData(b, steps, true);
    }
    plot->rescaleAxes();
    padLog(plot->xAxis, 1.25);
    padLog(plot->yAxis, 1.5);
    if (plot->yAxis2->range().upper > 0)
        plot->yAxis2->setRange(0, plot->yAxis2->range().upper * 1.15);
    plot->replot(QCustomPlot::rpQueuedReplot);
}

void drawLossPlot(QCustomPlot* plot, const std::vector<double>& iterations, const std::vector<double>& losses)
{
    QVector<double> x, y;
    for (size_t i = 0; i < losses.size(); ++i)
        if (losses[i] > 0) { // a log axis cannot show zero
            x << iterations[i];
            y << losses[i];
        }
    plot->graph(0)->setData(x, y, true);
    plot->rescaleAxes();
    padLog(plot->yAxis, 1.5);
    plot->replot(QCustomPlot::rpQueuedReplot);
}

void drawTrainedSigmaPlot(QCustomPlot* plot, const Eigen::VectorXd& liveSigma, const Eigen::VectorXd& targetSigma)
{
    std::vector<double> learnt(size_t(liveSigma.size()));
    for (Eigen::Index i = 0; i < liveSigma.size(); ++i)
        learnt[size_t(i)] = std::abs(liveSigma(i));
    std::sort(learnt.begin(), learnt.end(), std::greater<>());
    QVector<double> index, values, targetIndex, target;
    for (size_t i = 0; i < learnt.size(); ++i) {
        index << double(i + 1);
        values << learnt[i];
    }
    for (Eigen::Index i = 0; i < targetSigma.size(); ++i) {
        targetIndex << double(i + 1);
        target << targetSigma(i);
    }
    plot->graph(0)->setData(targetIndex, target, true);
    plot->graph(1)->setData(index, values, true);
    plot->rescaleAxes();
    if (plot->yAxis->range().upper > 0)
        plot->yAxis->setRange(0, plot->yAxis->range().upper * 1.1);
    plot->replot(QCustomPlot::rpQueuedReplot);
}

} // namespace wfs::ui
