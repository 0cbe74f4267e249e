#include "ImageToolDialogs.h"

#include "ImageView.h"

#include <qcustomplot.h>

#include <QApplication>
#include <QClipboard>
#include <QDoubleSpinBox>
#include <QHBoxLayout>
#include <QKeyEvent>
#include <QLabel>
#include <QMouseEvent>
#include <QPushButton>
#include <QSignalBlocker>
#include <QVBoxLayout>

#include <algorithm>
#include <cfloat>
#include <cmath>

namespace wfs::ui {

namespace {

// A box for any value an image may hold (counts of 65535, PSFs of 1e-6, phases of −3 waves): six significant digits
// shown, the value kept as typed. QDoubleSpinBox's fixed decimals would show 1e-6 as 0.00.
class ValueSpinBox : public QDoubleSpinBox {
public:
    explicit ValueSpinBox(QWidget* parent)
        : QDoubleSpinBox(parent)
    {
        setDecimals(DBL_MAX_10_EXP + DBL_DIG); // no rounding: the text decides what is shown
        setRange(-1e300, 1e300);
        setKeyboardTracking(false); // a typed number applies on Enter or when the box is left, not at each digit
        setAccelerated(true);
        setMinimumWidth(fontMetrics().horizontalAdvance(QStringLiteral("−0.000000e+00")) + 40);
    }

    QString textFromValue(double value) const override
    {
        QString text = locale().toString(value, 'g', 6);
        text.remove(locale().groupSeparator());
        return text;
    }
    double valueFromText(const QString& text) const override { return locale().toDouble(cleaned(text)); }
    QValidator::State validate(QString& text, int&) const override
    {
        const QString number = cleaned(text);
        bool ok = false;
        const double v = locale().toDouble(number, &ok);
        if (ok && std::isfinite(v))
            return QValidator::Acceptable;
        // Part of a number on its way (a sign, a decimal point, an exponent not yet written).
        for (const QChar c : number)
            if (!c.isDigit() && !QStringLiteral("+-eE").contains(c) && c != locale().decimalPoint().front())
                return QValidator::Invalid;
        return QValidator::Intermediate;
    }

private:
    QString cleaned(QString text) const
    {
        text.replace(QChar(0x2212), QLatin1Char('-')); // a pasted typographic minus
        text.remove(locale().groupSeparator());
        return text.trimmed();
    }
};

QString valueText(double v, int digits = 6)
{
    return QString::number(v, 'g', digits).replace(QLatin1Char('-'), QChar(0x2212));
}

QString withUnit(const QString& what, const QString& unit)
{
    return unit.isEmpty() ? what : QStringLiteral("%1 (%2)").arg(what, unit);
}

QCPItemStraightLine* rangeLine(QCustomPlot* plot, const QColor& colour)
{
    auto* line = new QCPItemStraightLine(plot);
    line->setPen(QPen(colour, 2));
    line->setSelectable(false);
    return line;
}

} // namespace

DisplayRangeDialog::DisplayRangeDialog(ImageView* view)
    : QDialog(view)
    , m_view(view)
    , m_plot(new QCustomPlot(this))
    , m_low(new ValueSpinBox(this))
    , m_high(new ValueSpinBox(this))
    , m_automatic(new QPushButton(tr("Automatic"), this))
    , m_message(new QLabel(this))
    , m_source(new QLabel(this))
    , m_counts(new QLabel(this))
{
    setObjectName(QStringLiteral("displayRangeDialog"));
    setModal(false);
    setAttribute(Qt::WA_DeleteOnClose);
    setWindowTitle(view->title().isEmpty() ? tr("Display range") : tr("Display range — %1").arg(view->title()));
    m_plot->setObjectName(QStringLiteral("rangeHistogramPlot"));
    m_plot->setMinimumSize(440, 220);
    // Counts on a log axis: the few bright pixels of a PSF stay visible beside the many of the background.
    m_plot->yAxis->setScaleType(QCPAxis::stLogarithmic);
    m_plot->yAxis->setTicker(QSharedPointer<QCPAxisTickerLog>(new QCPAxisTickerLog));
    m_plot->yAxis->setNumberFormat(QStringLiteral("gb"));
    m_plot->yAxis->setLabel(tr("pixels"));
    m_bars = new QCPBars(m_plot->xAxis, m_plot->yAxis);
    m_bars->setWidthType(QCPBars::wtPlotCoords);
    m_bars->setPen(Qt::NoPen);
    m_bars->setBrush(QColor(90, 90, 110));
    m_lowLine = rangeLine(m_plot, QColor(0, 100, 200));
    m_highLine = rangeLine(m_plot, QColor(210, 70, 0));
    m_low->setObjectName(QStringLiteral("rangeLow"));
    m_high->setObjectName(QStringLiteral("rangeHigh"));
    m_automatic->setObjectName(QStringLiteral("rangeAutomatic"));
    // Enter in a box applies the box; a default button would take the key too and undo what was typed.
    m_automatic->setAutoDefault(false);
    m_automatic->setToolTip(tr("Back to the view's own range (its clip percentiles, or the scale it shares with compared images)"));
    m_message->setObjectName(QStringLiteral("rangeMessage"));
    m_message->setWordWrap(true);
    QPalette warning = m_message->palette();
    warning.setColor(QPalette::WindowText, QColor(180, 30, 30));
    m_message->setPalette(warning);
    m_message->hide();
    m_source->setObjectName(QStringLiteral("rangeSource"));
    m_source->setWordWrap(true);
    m_counts->setWordWrap(true);
    m_counts->setForegroundRole(QPalette::PlaceholderText);

    auto* lowLabel = new QLabel(tr("Low"), this);
    lowLabel->setStyleSheet(QStringLiteral("color: rgb(0, 100, 200); font-weight: bold"));
    lowLabel->setBuddy(m_low);
    auto* highLabel = new QLabel(tr("High"), this);
    highLabel->setStyleSheet(QStringLiteral("color: rgb(210, 70, 0); font-weight: bold"));
    highLabel->setBuddy(m_high);
    auto* boxes = new QHBoxLayout;
    boxes->addWidget(lowLabel);
    boxes->addWidget(m_low, 1);
    boxes->addSpacing(12);
    boxes->addWidget(highLabel);
    boxes->addWidget(m_high, 1);
    boxes->addSpacing(12);
    boxes->addWidget(m_automatic);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(m_plot, 1);
    layout->addWidget(m_counts);
    layout->addLayout(boxes);
    layout->addWidget(m_message);
    layout->addWidget(m_source);

    connect(m_low, &QDoubleSpinBox::valueChanged, this, &DisplayRangeDialog::apply);
    connect(m_high, &QDoubleSpinBox::valueChanged, this, &DisplayRangeDialog::apply);
    connect(m_automatic, &QPushButton::clicked, this, [this] {
        m_message->clear();
        m_message->hide();
        m_view->setUserRange(std::nullopt);
        showRange(); // also when the view's range did not change
    });
    connect(view, &ImageView::imageChanged, this, &DisplayRangeDialog::updateHistogram);
    connect(view, &ImageView::displayRangeChanged, this, &DisplayRangeDialog::showRange);
    updateHistogram();
}

QString DisplayRangeDialog::problem() const
{
    return m_message->text();
}

void DisplayRangeDialog::apply()
{
    const double low = m_low->value(), high = m_high->value();
    if (!(low < high)) {
        m_message->setText(
            tr("The low end (%1) must be below the high end (%2): the range shown is unchanged.").arg(valueText(low), valueText(high)));
        m_message->show();
        return;
    }
    m_message->clear();
    m_message->hide();
    m_view->setUserRange(DisplayRange{low, high});
}

void DisplayRangeDialog::updateHistogram()
{
    const Image& image = m_view->image();
    m_histogram = Histogram();
    QSharedPointer<QCPBarsDataContainer> data(new QCPBarsDataContainer);
    if (const auto extent = finiteExtent(image.pixels)) {
        // One value everywhere: a bin around it.
        const double low = extent->second > extent->first ? extent->first : extent->first - 0.5;
        const double high = extent->second > extent->first ? extent->second : extent->first + 0.5;
        m_histogram = wfs::histogram(image.pixels, low, high, kBins);
        double most = 1.0;
        for (size_t i = 0; i < m_histogram.counts.size(); ++i)
            if (m_histogram.counts[i] > 0) { // an empty bin has no height on a log axis
                data->add(QCPBarsData(m_histogram.binCentre(i), double(m_histogram.counts[i])));
                most = std::max(most, double(m_histogram.counts[i]));
            }
        m_bars->setWidth(m_histogram.binWidth());
        m_plot->yAxis->setRange(0.7, most * 2.0);
    }
    m_bars->setData(data);
    m_plot->xAxis->setLabel(withUnit(tr("value"), m_view->unit()));
    const size_t total = image.pixels.size();
    m_counts->setText(m_histogram.nonFinite == 0 ? tr("%1 pixels in %2 bins").arg(total).arg(kBins)
                                                 : tr("%1 pixels with values in %2 bins; %3 without data (NaN or infinite) left out")
                                                       .arg(total - m_histogram.nonFinite)
                                                       .arg(kBins)
                                                       .arg(m_histogram.nonFinite));
    setWindowTitle(m_view->title().isEmpty() ? tr("Display range") : tr("Display range — %1").arg(m_view->title()));
    showRange();
}

void DisplayRangeDialog::showRange()
{
    const bool has = m_view->hasImage();
    m_low->setEnabled(has);
    m_high->setEnabled(has);
    const DisplayRange range = m_view->displayRange();
    // The typed values stay in the boxes while they are refused: the message is about them.
    if (m_message->text().isEmpty()) {
        const QSignalBlocker lowBlocker(m_low), highBlocker(m_high);
        m_low->setValue(range.low);
        m_high->setValue(range.high);
        // Arrow steps of 1 % of the values' spread.
        const double spread = m_histogram.counts.empty() ? range.high - range.low : m_histogram.high - m_histogram.low;
        m_low->setSingleStep(spread / 100.0);
        m_high->setSingleStep(spread / 100.0);
    }
    for (auto [item, at] : {std::pair{m_lowLine, range.low}, std::pair{m_highLine, range.high}}) {
        auto* line = static_cast<QCPItemStraightLine*>(item);
        line->point1->setCoords(at, 1.0);
        line->point2->setCoords(at, 10.0);
    }
    // The values and both ends in view.
    double low = range.low, high = range.high;
    if (!m_histogram.counts.empty()) {
        low = std::min(low, m_histogram.low);
        high = std::max(high, m_histogram.high);
    }
    const double pad = 0.03 * (high - low);
    m_plot->xAxis->setRange(low - pad, high + pad);
    m_automatic->setEnabled(m_view->userRange().has_value());
    m_source->setText(m_view->userRange() ? tr("Your range: kept through live updates of this view until “Automatic”.")
                      : m_view->fixedRange()
                          ? tr("The range this view shares with the images it is compared with. Type a range to override it here.")
                          : tr("Automatic: from the view's clip percentiles. Type a range to fix it."));
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

DisplayRangeDialog* showDisplayRangeDialog(ImageView* view)
{
    auto* dialog = view->findChild<DisplayRangeDialog*>(QString(), Qt::FindDirectChildrenOnly);
    if (!dialog)
        dialog = new DisplayRangeDialog(view);
    dialog->show();
    dialog->raise();
    dialog->activateWindow();
    return dialog;
}

LineProfileWindow::LineProfileWindow(ImageView* view)
    : QDialog(view)
    , m_view(view)
    , m_imagePlot(view->plot())
    , m_plot(new QCustomPlot(this))
    , m_summary(new QLabel(this))
{
    setObjectName(QStringLiteral("lineProfileWindow"));
    setModal(false);
    setAttribute(Qt::WA_DeleteOnClose);
    m_plot->setObjectName(QStringLiteral("lineProfilePlot"));
    m_plot->setMinimumSize(460, 260);
    m_plot->addGraph();
    m_plot->graph(0)->setPen(QPen(QColor(0, 90, 170), 1.5));
    m_summary->setObjectName(QStringLiteral("lineProfileSummary"));
    m_summary->setWordWrap(true);
    auto* copy = new QPushButton(tr("Copy as CSV"), this);
    copy->setObjectName(QStringLiteral("copyProfileCsv"));
    copy->setToolTip(tr("distance,value rows under a header line with the units"));
    connect(copy, &QPushButton::clicked, this, [this] { QApplication::clipboard()->setText(csv()); });
    copy->setAutoDefault(false);
    auto* again = new QPushButton(tr("Draw another line"), this);
    again->setAutoDefault(false);
    connect(again, &QPushButton::clicked, this, &LineProfileWindow::beginDrawing);
    auto* buttons = new QHBoxLayout;
    buttons->addWidget(again);
    buttons->addStretch(1);
    buttons->addWidget(copy);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(m_plot, 1);
    layout->addWidget(m_summary);
    layout->addLayout(buttons);
    // New pixels, or a new axis scale: the profile and the line's place follow (live mode).
    connect(view, &ImageView::imageChanged, this, &LineProfileWindow::refresh);
    refresh();
}

LineProfileWindow::~LineProfileWindow()
{
    // The line and the hint go with the window (the view's plot may already be gone with its view).
    endDrawing();
    if (m_imagePlot && m_lineItem) {
        m_imagePlot->removeItem(m_lineItem);
        m_imagePlot->replot(QCustomPlot::rpQueuedReplot);
    }
}

void LineProfileWindow::beginDrawing()
{
    if (!m_imagePlot || m_drawing)
        return;
    m_drawing = true;
    m_pressed = false;
    // On the application: Esc reaches it wherever the keyboard focus is, and the presses on the image reach it before
    // the plot would start a pan.
    qApp->installEventFilter(this);
    m_imagePlot->setCursor(Qt::CrossCursor);
    m_hint = new QCPItemText(m_imagePlot);
    m_hint->position->setType(QCPItemPosition::ptAxisRectRatio);
    m_hint->position->setCoords(0.5, 0.0);
    m_hint->setPositionAlignment(Qt::AlignHCenter | Qt::AlignTop);
    m_hint->setText(tr("Drag a line over the image · Esc cancels"));
    m_hint->setBrush(QColor(255, 255, 255, 220));
    m_hint->setPadding(QMargins(4, 2, 4, 2));
    m_hint->setSelectable(false);
    m_imagePlot->replot(QCustomPlot::rpQueuedReplot);
}

void LineProfileWindow::endDrawing()
{
    if (!m_drawing)
        return;
    m_drawing = false;
    m_pressed = false;
    qApp->removeEventFilter(this);
    if (m_imagePlot) {
        m_imagePlot->unsetCursor();
        if (m_hint)
            m_imagePlot->removeItem(m_hint);
        m_imagePlot->replot(QCustomPlot::rpQueuedReplot);
    }
}

QPointF LineProfileWindow::toPixels(const QPointF& screen) const
{
    const double x = m_imagePlot->xAxis->pixelToCoord(screen.x()), y = m_imagePlot->yAxis->pixelToCoord(screen.y());
    const std::optional<AxisScale>& scale = m_view->axisScale();
    return scale ? QPointF((x - scale->x0) / scale->step, (y - scale->y0) / scale->step) : QPointF(x, y);
}

bool LineProfileWindow::eventFilter(QObject* watched, QEvent* event)
{
    if (!m_drawing || !m_imagePlot)
        return QDialog::eventFilter(watched, event);
    if (event->type() == QEvent::KeyPress && static_cast<QKeyEvent*>(event)->key() == Qt::Key_Escape) {
        endDrawing();
        placeLine(); // the line before, if there was one
        return true;
    }
    if (watched != m_imagePlot.data())
        return QDialog::eventFilter(watched, event);
    const auto* mouse = static_cast<QMouseEvent*>(event);
    switch (event->type()) {
    case QEvent::MouseButtonPress:
        if (mouse->button() != Qt::LeftButton)
            return false;
        m_pressed = true;
        m_dragged = QLineF(toPixels(mouse->position()), toPixels(mouse->position()));
        placeLine();
        return true; // not to the plot: no pan, and the view stays fitted
    case QEvent::MouseMove:
        if (m_pressed) {
            m_dragged.setP2(toPixels(mouse->position()));
            placeLine();
        }
        return false; // the view's cursor readout goes on
    case QEvent::MouseButtonRelease:
        if (mouse->button() != Qt::LeftButton || !m_pressed)
            return true;
        m_dragged.setP2(toPixels(mouse->position()));
        endDrawing();
        setLine(m_dragged);
        show();
        raise();
        return true;
    case QEvent::MouseButtonDblClick:
        return true; // no refit while drawing
    default:
        return false;
    }
}

void LineProfileWindow::setLine(const QLineF& pixels)
{
    m_line = pixels;
    refresh();
}

void LineProfileWindow::placeLine()
{
    if (!m_imagePlot)
        return;
    const std::optional<QLineF> shown = m_pressed ? std::optional<QLineF>(m_dragged) : m_line;
    if (!shown || !m_view->hasImage()) {
        if (m_lineItem)
            m_imagePlot->removeItem(m_lineItem);
        m_imagePlot->replot(QCustomPlot::rpQueuedReplot);
        return;
    }
    if (!m_lineItem) {
        m_lineItem = new QCPItemLine(m_imagePlot);
        // Red with a disc at the start and an arrow at the end: seen on every colour map, and which way distance runs.
        m_lineItem->setPen(QPen(QColor(230, 40, 60), 2));
        m_lineItem->setTail(QCPLineEnding(QCPLineEnding::esDisc, 7, 7));
        m_lineItem->setHead(QCPLineEnding(QCPLineEnding::esSpikeArrow, 10, 12));
        m_lineItem->setSelectable(false);
    }
    const std::optional<AxisScale>& scale = m_view->axisScale();
    const auto toAxes = [&](const QPointF& p) {
        return scale ? QPointF(scale->x0 + p.x() * scale->step, scale->y0 + p.y() * scale->step) : p;
    };
    m_lineItem->start->setCoords(toAxes(shown->p1()));
    m_lineItem->end->setCoords(toAxes(shown->p2()));
    m_imagePlot->replot(QCustomPlot::rpQueuedReplot);
}

QString LineProfileWindow::distanceUnit() const
{
    const std::optional<AxisScale>& scale = m_view->axisScale();
    return scale ? scale->unit : tr("pixel");
}

std::vector<double> LineProfileWindow::distances() const
{
    const std::optional<AxisScale>& scale = m_view->axisScale();
    std::vector<double> d = m_profile.distance;
    if (scale)
        for (double& v : d)
            v *= scale->step; // square pixels: one step along any direction
    return d;
}

QString LineProfileWindow::csv() const
{
    QString text = QStringLiteral("%1,%2\n").arg(withUnit(QStringLiteral("distance"), distanceUnit()),
                                                 withUnit(QStringLiteral("value"), m_view->unit()));
    const std::vector<double> d = distances();
    for (size_t i = 0; i < d.size(); ++i)
        text += QStringLiteral("%1,%2\n").arg(QString::number(d[i], 'g', 10), QString::number(m_profile.value[i], 'g', 10));
    return text;
}

void LineProfileWindow::refresh()
{
    m_profile = LineProfile();
    if (m_line && m_view->hasImage())
        m_profile = lineProfile(m_view->image(), m_line->x1(), m_line->y1(), m_line->x2(), m_line->y2());
    const std::vector<double> d = distances();
    QVector<double> keys(d.begin(), d.end()), values(m_profile.value.begin(), m_profile.value.end());
    QCPGraph* graph = m_plot->graph(0);
    graph->setData(keys, values, true);
    // Few samples: each one marked, so that a short line does not look smoother than it was sampled.
    graph->setScatterStyle(d.size() <= 60 ? QCPScatterStyle(QCPScatterStyle::ssDisc, 4) : QCPScatterStyle());
    m_plot->xAxis->setLabel(withUnit(tr("distance along the line"), distanceUnit()));
    m_plot->yAxis->setLabel(withUnit(tr("value"), m_view->unit()));
    bool found = false;
    const QCPRange values1 = graph->getValueRange(found);
    if (found) {
        const double pad = values1.size() > 0 ? 0.05 * values1.size() : std::max(1e-12, 0.05 * std::abs(values1.lower));
        m_plot->yAxis->setRange(values1.lower - pad, values1.upper + pad);
    }
    if (!d.empty())
        m_plot->xAxis->setRange(0.0, std::max(d.back(), 1e-12));
    setWindowTitle(m_view->title().isEmpty() ? tr("Line profile") : tr("Line profile — %1").arg(m_view->title()));
    if (!m_line) {
        m_summary->setText(tr("Drag a line over the image (press, drag, release); Esc cancels."));
    } else {
        const std::optional<AxisScale>& scale = m_view->axisScale();
        const auto at = [&](const QPointF& p) {
            const QPointF a = scale ? QPointF(scale->x0 + p.x() * scale->step, scale->y0 + p.y() * scale->step) : p;
            return QStringLiteral("(%1, %2)").arg(valueText(a.x(), 4), valueText(a.y(), 4));
        };
        const size_t outside =
            size_t(std::count_if(m_profile.value.begin(), m_profile.value.end(), [](double v) { return std::isnan(v); }));
        QString text = tr("From %1 to %2 %3: %4 %3 long, %5 samples (bilinear, at most one image pixel apart)")
                           .arg(at(m_line->p1()), at(m_line->p2()), distanceUnit(), valueText(d.empty() ? 0.0 : d.back(), 4))
                           .arg(d.size());
        if (outside > 0)
            text += tr("; %1 outside the image or without data (gaps)").arg(outside);
        m_summary->setText(text + QLatin1Char('.'));
    }
    placeLine();
    m_plot->replot(QCustomPlot::rpQueuedReplot);
    emit profileChanged();
}

LineProfileWindow* startLineProfile(ImageView* view)
{
    auto* window = view->findChild<LineProfileWindow*>(QString(), Qt::FindDirectChildrenOnly);
    if (!window)
        window = new LineProfileWindow(view);
    window->beginDrawing();
    return window;
}

} // namespace wfs::ui
