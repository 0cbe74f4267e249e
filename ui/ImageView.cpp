#include "ImageView.h"

#include <qcustomplot.h>

#include <QFontMetrics>
#include <QGuiApplication>
#include <QLabel>
#include <QSignalBlocker>
#include <QTimer>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

namespace wfs::ui {

QStringList stretchNames()
{
    return {QStringLiteral("linear"), QStringLiteral("sqrt"), QStringLiteral("log"), QStringLiteral("asinh")};
}

QImage thumbnail(const Image& image, int size, const QRect& region)
{
    QImage picture(size, size, QImage::Format_Grayscale8);
    picture.fill(0);
    if (image.isEmpty())
        return picture;
    QRect shown = region.isEmpty() ? QRect(0, 0, image.width, image.height) : region.intersected(QRect(0, 0, image.width, image.height));
    if (shown.isEmpty())
        shown = QRect(0, 0, image.width, image.height);
    double low = INFINITY, high = -INFINITY;
    for (int row = shown.top(); row <= shown.bottom(); ++row)
        for (int col = shown.left(); col <= shown.right(); ++col)
            if (const double v = image.at(row, col); std::isfinite(v)) {
                low = std::min(low, v);
                high = std::max(high, v);
            }
    if (!(high > low))
        return picture;
    // Square picture of the region's longer side, centred; each output pixel takes the largest value
    // of the image pixels it covers (nearest sample when it covers less than one).
    const double side = std::max(shown.width(), shown.height());
    const double step = side / size;
    const double x0 = shown.left() + 0.5 * (shown.width() - side), y0 = shown.top() + 0.5 * (shown.height() - side);
    for (int y = 0; y < size; ++y) {
        const int rowBegin = int(std::floor(y0 + (size - 1 - y) * step)); // row 0 at the bottom
        const int rowEnd = std::max(rowBegin + 1, int(std::floor(y0 + (size - y) * step)));
        for (int x = 0; x < size; ++x) {
            const int colBegin = int(std::floor(x0 + x * step));
            const int colEnd = std::max(colBegin + 1, int(std::floor(x0 + (x + 1) * step)));
            double v = -INFINITY;
            for (int row = std::max(rowBegin, shown.top()); row < std::min(rowEnd, shown.bottom() + 1); ++row)
                for (int col = std::max(colBegin, shown.left()); col < std::min(colEnd, shown.right() + 1); ++col)
                    if (const double p = image.at(row, col); std::isfinite(p))
                        v = std::max(v, p);
            const double t = std::isfinite(v) ? std::asinh(50.0 * (v - low) / (high - low)) / std::asinh(50.0) : 0.0;
            const int grey = std::clamp(int(255 * t), 0, 255);
            picture.setPixel(x, y, qRgb(grey, grey, grey));
        }
    }
    return picture;
}

std::vector<double> roundTicks(double low, double high, int count)
{
    std::vector<double> ticks;
    if (!(high > low) || !std::isfinite(low) || !std::isfinite(high))
        return ticks;
    const double rough = (high - low) / std::max(1, count);
    const double magnitude = std::pow(10.0, std::floor(std::log10(rough)));
    double step = magnitude;
    for (double factor : {1.0, 2.0, 5.0, 10.0})
        if (factor * magnitude >= rough) {
            step = factor * magnitude;
            break;
        }
    for (double v = std::ceil(low / step - 1e-9) * step; v <= high + 1e-9 * step; v += step)
        ticks.push_back(std::abs(v) < 1e-9 * step ? 0.0 : v);
    return ticks;
}

double stretchOrigin(const DisplayRange& range)
{
    return range.low < 0.0 && range.high > 0.0 ? 0.0 : range.low;
}

double stretchPosition(double value, const DisplayRange& range, Stretch stretch)
{
    const double t = std::clamp((value - range.low) / (range.high - range.low), 0.0, 1.0);
    if (stretch == Stretch::Linear)
        return t;
    // Measured from the origin in units of (high - origin): 0 at the origin, 1 at the top.
    const double origin = stretchOrigin(range);
    const double u = std::clamp((value - origin) / (range.high - origin), (range.low - origin) / (range.high - origin), 1.0);
    switch (stretch) {
    case Stretch::Linear:
        break;
    case Stretch::Sqrt:
        return std::sqrt(std::max(0.0, u));
    case Stretch::Log:
        return std::log10(1.0 + 1000.0 * std::max(0.0, u)) / std::log10(1001.0);
    case Stretch::Asinh: {
        const double bottom = std::asinh(10.0 * (range.low - origin) / (range.high - origin));
        return (std::asinh(10.0 * u) - bottom) / (std::asinh(10.0) - bottom);
    }
    }
    return t;
}

std::vector<double> colorBarTicks(const DisplayRange& range, Stretch stretch, double lengthPixels, double labelPixels)
{
    const double span = range.high - range.low;
    if (!(span > 0) || !std::isfinite(span) || !(lengthPixels > 0))
        return {};
    const int room = std::max(2, int(lengthPixels / std::max(1.0, labelPixels)));
    // Candidates in the order they are wanted: a stretched bar first gets the decades above its low
    // end (they are what a log or asinh stretch spreads evenly), then evenly spaced round values, then
    // the fives and twos between the decades; each is kept where its label has room.
    std::vector<double> candidates;
    if (stretch == Stretch::Log || stretch == Stretch::Asinh || stretch == Stretch::Sqrt) {
        const double origin = stretchOrigin(range);
        if (origin > range.low)
            candidates.push_back(origin); // zero, where the stretch starts
        const int top = int(std::ceil(std::log10(range.high - origin)));
        for (double mantissa : {1.0, 5.0, 2.0}) {
            for (int k = top; k >= top - 4; --k) {
                const double unit = std::pow(10.0, k);
                // Rounded to the decade's own unit: a round number near origin + mantissa * 10^k.
                const double v = std::round((origin + mantissa * unit) / unit) * unit;
                if (v > origin && v <= range.high + 1e-9 * span)
                    candidates.push_back(v);
            }
            if (mantissa == 1.0)
                for (double v : roundTicks(range.low, range.high, std::min(room, 6)))
                    candidates.push_back(v);
        }
    } else {
        // The coarse round values first, then finer ones where their labels fit between them.
        candidates = roundTicks(range.low, range.high, room);
        for (double v : roundTicks(range.low, range.high, 2 * room + 1))
            candidates.push_back(v);
    }
    std::vector<double> chosen, positions;
    for (double v : candidates) {
        const double position = stretchPosition(v, range, stretch);
        if (v < range.low - 1e-9 * span || v > range.high + 1e-9 * span)
            continue;
        const bool crowded =
            std::any_of(positions.begin(), positions.end(), [&](double p) { return std::abs(p - position) * lengthPixels < labelPixels; });
        if (crowded)
            continue;
        chosen.push_back(std::abs(v) < 1e-12 * span ? 0.0 : v);
        positions.push_back(position);
    }
    std::sort(chosen.begin(), chosen.end());
    return chosen;
}

ImageView::ImageView(QWidget* parent)
    : QWidget(parent)
    , m_plot(new QCustomPlot(this))
    , m_titleLabel(new QLabel(this))
    , m_message(new QLabel(this))
{
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(0);
    m_titleLabel->setObjectName(QStringLiteral("imageTitle"));
    m_titleLabel->setAlignment(Qt::AlignCenter);
    QFont bold = m_titleLabel->font();
    bold.setBold(true);
    m_titleLabel->setFont(bold);
    m_titleLabel->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Fixed); // a long title never widens the view
    m_titleLabel->hide();
    m_message->setObjectName(QStringLiteral("imageMessage"));
    m_message->setAlignment(Qt::AlignCenter);
    m_message->setWordWrap(true);
    m_message->setMargin(12);
    m_message->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Ignored);
    m_message->setForegroundRole(QPalette::PlaceholderText);
    layout->addWidget(m_titleLabel);
    layout->addWidget(m_plot, 1);
    layout->addWidget(m_message, 1);
    m_plot->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
    m_plot->axisRect()->setupFullAxesBox(true);
    for (QCPAxis* axis : {m_plot->xAxis2, m_plot->yAxis2})
        axis->setPadding(1); // the box's far sides carry no labels: the colour bar sits close to the image
    m_xLabel = QStringLiteral("x (pixel)");
    m_yLabel = QStringLiteral("y (pixel)");
    for (QCPAxis* axis : {m_plot->xAxis, m_plot->yAxis}) {
        axis->ticker()->setTickStepStrategy(QCPAxisTicker::tssReadability);
        axis->setLabelPadding(2); // tighter than the defaults, as the program's curve plots: the image keeps the room
        axis->setTickLabelPadding(3);
    }
    m_map = new QCPColorMap(m_plot->xAxis, m_plot->yAxis);
    m_map->setInterpolate(false);
    m_scale = new QCPColorScale(m_plot);
    m_scale->setBarWidth(12);
    m_map->setColorScale(m_scale);
    m_marginGroup = new QCPMarginGroup(m_plot);
    placeColorBar();
    // Square pixels: the ranges follow the axis rectangle of every layout pass, before drawing.
    connect(m_plot, &QCustomPlot::afterLayout, this, &ImageView::applyAspect);
    // A press or wheel turn makes the view the user's; the ranges it then changes are told to linked views.
    // (A drag until the release; a wheel turn's zoom is applied right after the signal, within this event.)
    connect(m_plot, &QCustomPlot::mousePress, this, [this] {
        m_autoFit = false;
        m_userMoving = true;
    });
    connect(m_plot, &QCustomPlot::mouseRelease, this, [this] { m_userMoving = false; });
    connect(m_plot, &QCustomPlot::mouseWheel, this, [this] {
        m_autoFit = false;
        m_userMoving = true;
        QTimer::singleShot(0, this, [this] { m_userMoving = QGuiApplication::mouseButtons() != Qt::NoButton; });
    });
    const auto tellLinkedViews = [this] {
        if (!m_userMoving || m_autoFit || m_image.isEmpty() || m_plot->axisRect()->width() < 2)
            return;
        const double step = m_axisScale ? m_axisScale->step : 1.0;
        const QPointF centre((m_plot->xAxis->range().center() - (m_axisScale ? m_axisScale->x0 : 0.0)) / step,
                             (m_plot->yAxis->range().center() - (m_axisScale ? m_axisScale->y0 : 0.0)) / step);
        emit zoomedByUser(centre, m_plot->xAxis->range().size() / step / m_plot->axisRect()->width());
    };
    // Both axes: a zoom about the pointer moves the centre in y after x.
    connect(m_plot->xAxis, qOverload<const QCPRange&>(&QCPAxis::rangeChanged), this, tellLinkedViews);
    connect(m_plot->yAxis, qOverload<const QCPRange&>(&QCPAxis::rangeChanged), this, tellLinkedViews);
    connect(m_plot, &QCustomPlot::mouseDoubleClick, this, [this] {
        m_userMoving = false;
        resetZoom();
        emit zoomResetByUser();
    });
    m_plot->setMouseTracking(true);
    m_plot->installEventFilter(this);
    m_plot->setToolTip(tr("Wheel: zoom · drag: pan · double-click: fit the image again"));
    setMinimumSize(120, 120);
    clear(tr("no image"));
}

void ImageView::clear(const QString& message)
{
    setOverlays({});
    m_image = Image();
    m_map->data()->clear();
    m_message->setText(message);
    layout()->setContentsMargins(0, 0, 0, 0);
    // Nothing to draw: the message alone, no axes or colour bar that would suggest a picture.
    m_plot->hide();
    m_message->show();
    emit imageChanged();
}

QString ImageView::message() const
{
    return m_image.isEmpty() ? m_message->text() : QString();
}

void ImageView::setTitle(const QString& title)
{
    m_title = title;
    m_titleLabel->setText(title);
    m_titleLabel->setVisible(!title.isEmpty());
}

void ImageView::setAxisScale(std::optional<AxisScale> scale)
{
    const bool same =
        scale.has_value() == m_axisScale.has_value()
        && (!scale
            || (scale->x0 == m_axisScale->x0 && scale->y0 == m_axisScale->y0 && scale->step == m_axisScale->step
                && scale->xLabel == m_axisScale->xLabel && scale->yLabel == m_axisScale->yLabel && scale->unit == m_axisScale->unit));
    if (same)
        return;
    if (scale && !(scale->step > 0))
        scale.reset();
    m_axisScale = scale;
    m_autoFit = true;
    placeMapCells();
    setOverlays(std::vector<ImageOverlay>(m_overlays)); // placed again in the new coordinates
    m_plot->replot(QCustomPlot::rpQueuedReplot);
    emit imageChanged();
}

void ImageView::placeMapCells()
{
    // The cells' centres in the axes' units: pixel (c, r) at c, r, or where the axis scale puts it.
    const QRectF all = toAxes(QRectF(0, 0, std::max(0, m_image.width - 1), std::max(0, m_image.height - 1)));
    m_map->data()->setRange(QCPRange(all.left(), all.right()), QCPRange(all.top(), all.bottom()));
}

QRectF ImageView::toAxes(const QRectF& pixels) const
{
    if (!m_axisScale)
        return pixels;
    const AxisScale& s = *m_axisScale;
    return QRectF(s.x0 + pixels.x() * s.step, s.y0 + pixels.y() * s.step, pixels.width() * s.step, pixels.height() * s.step);
}

void ImageView::setImage(const Image& image, const QString& title, const QString& unit, std::optional<DisplayRange> range)
{
    m_fixedRange = range;
    setImage(image, title, unit);
}

void ImageView::setImage(const Image& image, const QString& title, const QString& unit)
{
    const bool sameSize = image.width == m_image.width && image.height == m_image.height;
    if (m_userRange && (QSize(image.width, image.height) != m_userRangeSize || unit != m_userRangeUnit))
        m_userRange.reset(); // typed for other data
    m_image = image;
    setTitle(title);
    m_unit = unit;
    m_autoRangeValid = false; // worked out when asked for (a fixed range needs no percentiles)
    m_map->data()->setSize(image.width, image.height);
    placeMapCells();
    if (!sameSize)
        m_autoFit = true;
    if (m_image.isEmpty()) {
        clear(QString());
        return;
    }
    m_message->hide();
    m_plot->show();
    if (!sameSize)
        placeColorBar(); // the bar goes where the image's shape leaves room
    redraw();
    emit imageChanged();
}

void ImageView::setFitRegion(const QRectF& region)
{
    if (region == m_fitRegion)
        return;
    m_fitRegion = region;
    m_autoFit = true;
    placeColorBar();
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

void ImageView::resetZoom()
{
    m_autoFit = true;
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

void ImageView::showAround(const QPointF& centre, double scale)
{
    const QRect rect = m_plot->axisRect()->rect();
    if (m_image.isEmpty() || !(scale > 0) || rect.width() < 2 || rect.height() < 2)
        return;
    m_autoFit = false;
    const QPointF at = toAxes(QRectF(centre, QSizeF())).topLeft();
    const double axisScale = scale * (m_axisScale ? m_axisScale->step : 1.0);
    m_plot->xAxis->setRange(at.x() - 0.5 * rect.width() * axisScale, at.x() + 0.5 * rect.width() * axisScale);
    m_plot->yAxis->setRange(at.y() - 0.5 * rect.height() * axisScale, at.y() + 0.5 * rect.height() * axisScale);
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

void linkZoom(const std::vector<ImageView*>& views)
{
    for (ImageView* from : views)
        for (ImageView* to : views)
            if (to != from) {
                QObject::connect(from, &ImageView::zoomedByUser, to, &ImageView::showAround);
                QObject::connect(from, &ImageView::zoomResetByUser, to, &ImageView::resetZoom);
            }
}

void ImageView::applyAspect()
{
    const QRect rect = m_plot->axisRect()->rect();
    if (m_image.isEmpty())
        return;
    if (rect.width() < 20 || rect.height() < 20) {
        // Padded for another layout (the colour bar moved since): all the room again, then fit anew.
        if (layout()->contentsMargins() != QMargins())
            layout()->setContentsMargins(0, 0, 0, 0);
        if (rect.width() < 2 || rect.height() < 2)
            return;
    }
    // The colour bar's labels are chosen for its length, known only now, and for their font (presentation mode
    // enlarges it).
    const QRect bar = colourBarRect();
    const int barLength = m_colorBarBelow ? bar.width() : bar.height();
    const QFont tickFont = m_scale->axis()->tickLabelFont();
    if (!bar.isEmpty() && (std::abs(barLength - m_tickedBarLength) > 2 || tickFont != m_tickedFont)) {
        m_tickedBarLength = barLength;
        m_tickedFont = tickFont;
        updateColorTicks();
        m_plot->replot(QCustomPlot::rpQueuedReplot);
    }
    const double width = rect.width(), height = rect.height();
    double cx, cy, scale; // scale: image pixels per screen pixel, the same on both axes
    if (m_autoFit) {
        const QRectF region = toAxes(m_fitRegion.isEmpty() ? QRectF(-0.5, -0.5, m_image.width, m_image.height) : m_fitRegion);
        if (hugImage(rect, region.width() / region.height()))
            return; // the plot is resized; the next layout pass sets the ranges
        scale = std::max(region.width() / width, region.height() / height);
        cx = region.center().x();
        cy = region.center().y();
    } else {
        scale = m_plot->xAxis->range().size() / width;
        cx = m_plot->xAxis->range().center();
        cy = m_plot->yAxis->range().center();
    }
    const QCPRange x(cx - 0.5 * width * scale, cx + 0.5 * width * scale);
    const QCPRange y(cy - 0.5 * height * scale, cy + 0.5 * height * scale);
    auto differs = [](const QCPRange& a, const QCPRange& b) {
        return std::abs(a.lower - b.lower) > 1e-9 * a.size() || std::abs(a.upper - b.upper) > 1e-9 * a.size();
    };
    // Fewer ticks on a narrow axis, so that labels never run into each other.
    const int xTicks = std::clamp(int(width / 70), 3, 8), yTicks = std::clamp(int(height / 60), 3, 8);
    const bool ticksChanged = m_plot->xAxis->ticker()->tickCount() != xTicks || m_plot->yAxis->ticker()->tickCount() != yTicks;
    const bool labels = width >= 60; // a sliver of an axis has no room for numbers that do not collide
    // Axis titles only where the plot is wide enough to spare them (decided on the widget's width,
    // which the titles do not change, so the layout cannot flip between two states); the cursor
    // readout says x and y anyway.
    const bool titles = QWidget::width() >= 240;
    const QString xTitle = !titles ? QString() : m_axisScale ? m_axisScale->xLabel : m_xLabel;
    const QString yTitle = !titles ? QString() : m_axisScale ? m_axisScale->yLabel : m_yLabel;
    if (xTitle != m_plot->xAxis->label() || yTitle != m_plot->yAxis->label()) {
        m_plot->xAxis->setLabel(xTitle);
        m_plot->yAxis->setLabel(yTitle);
        m_plot->replot(QCustomPlot::rpQueuedReplot); // the margins change with the next layout pass
    }
    if (!differs(x, m_plot->xAxis->range()) && !differs(y, m_plot->yAxis->range()) && !ticksChanged
        && labels == m_plot->xAxis->tickLabels())
        return;
    m_plot->xAxis->setTickLabels(labels);
    m_plot->xAxis->ticker()->setTickCount(xTicks);
    m_plot->yAxis->ticker()->setTickCount(yTicks);
    m_plot->xAxis->setRange(x);
    m_plot->yAxis->setRange(y);
    m_plot->axisRect()->update(QCPLayoutElement::upPreparation); // ticks for the ranges drawn now
    // New tick labels may need other margins: one more pass lays them out (it ends here, as its
    // ranges come out the same).
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

bool ImageView::hugImage(const QRect& axes, double aspect)
{
    // The room the plot could have, less what its margins and colour bar take, against the shape of
    // the region shown: the spare width (or height) goes around the plot instead of into white bands
    // inside the axes, so the axes, ticks and colour bar sit at the image's edges.
    const int titleHeight = m_titleLabel->isVisible() ? m_titleLabel->sizeHint().height() : 0;
    const double overX = m_plot->width() - axes.width(), overY = m_plot->height() - axes.height();
    const double roomX = QWidget::width() - overX, roomY = QWidget::height() - titleHeight - overY;
    if (!(aspect > 0) || roomX < 20 || roomY < 20)
        return false;
    // Never narrower than 200 x 150 px, the least axis rectangle the program gives a plot (a small
    // view keeps a little white beside its image rather than crowd its ticks).
    int padX = 0, padY = 0;
    if (roomX > aspect * roomY)
        padX = int((roomX - std::max(aspect * roomY, std::min(roomX, 200.0))) / 2);
    else
        padY = int((roomY - std::max(roomX / aspect, std::min(roomY, 150.0))) / 2);
    const QMargins now = layout()->contentsMargins();
    // A few pixels either way are left alone (tick labels change the margins a little with the size).
    if (std::abs(now.left() - padX) <= 3 && std::abs(now.top() - padY) <= 3)
        return false;
    layout()->setContentsMargins(padX, padY, padX, padY);
    return true;
}

void ImageView::setAxisLabels(const QString& x, const QString& y)
{
    m_xLabel = x;
    m_yLabel = y;
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

void ImageView::setRowZeroAtTop(bool top)
{
    m_plot->yAxis->setRangeReversed(top);
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

void ImageView::setOverlays(const std::vector<ImageOverlay>& pixelOverlays)
{
    for (QCPAbstractItem* item : m_overlayItems)
        m_plot->removeItem(item);
    m_overlayItems.clear();
    m_overlays = pixelOverlays;
    for (ImageOverlay overlay : pixelOverlays) {
        overlay.rect = toAxes(overlay.rect);
        auto* rect = new QCPItemRect(m_plot);
        rect->topLeft->setCoords(overlay.rect.left(), overlay.rect.top());
        rect->bottomRight->setCoords(overlay.rect.right(), overlay.rect.bottom());
        rect->setPen(QPen(QColor(40, 40, 40), 1.5));
        rect->setBrush(overlay.shaded ? QBrush(QColor(0, 0, 0, 40)) : QBrush(Qt::NoBrush));
        rect->setSelectable(false);
        m_overlayItems.push_back(rect);
        if (!overlay.label.isEmpty()) {
            auto* label = new QCPItemText(m_plot);
            label->position->setCoords(overlay.rect.center().x(), overlay.rect.top());
            label->setPositionAlignment(Qt::AlignHCenter | Qt::AlignTop);
            label->setText(overlay.label);
            label->setColor(QColor(20, 20, 20));
            label->setBrush(QBrush(QColor(255, 255, 255, 200)));
            label->setPadding(QMargins(2, 1, 2, 1));
            label->setSelectable(false);
            m_overlayItems.push_back(label);
        }
    }
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

double ImageView::pixelAspect() const
{
    const double step = m_axisScale ? m_axisScale->step : 1.0;
    const double sx = std::abs(m_plot->xAxis->coordToPixel(step) - m_plot->xAxis->coordToPixel(0.0));
    const double sy = std::abs(m_plot->yAxis->coordToPixel(step) - m_plot->yAxis->coordToPixel(0.0));
    return sy > 0 ? sx / sy : 0.0;
}

double ImageView::screenPixelsPerImagePixel() const
{
    if (m_image.isEmpty())
        return 0.0;
    const double step = m_axisScale ? m_axisScale->step : 1.0;
    return std::abs(m_plot->xAxis->coordToPixel(step) - m_plot->xAxis->coordToPixel(0.0));
}

QCPColorScale* ImageView::colorScale() const
{
    return m_colorBarVisible && !m_image.isEmpty() ? m_scale : nullptr;
}

QRect ImageView::colourBarRect() const
{
    // The colour axis's rectangle is the bar itself; the scale's own rectangle adds the tick labels.
    if (!colorScale() || !m_scale->axis() || !m_scale->axis()->axisRect())
        return QRect();
    return m_scale->axis()->axisRect()->rect();
}

void ImageView::setColorBarVisible(bool visible)
{
    if (visible == m_colorBarVisible)
        return;
    m_colorBarVisible = visible;
    placeColorBar();
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

void ImageView::placeColorBar()
{
    // Where the room is: beside the image where the view is clearly wider than the region shown,
    // below it otherwise (a tall matrix gets its bar beside it, a square image in a square view below).
    // Decided on the view's own size and the region's shape, which neither the bar's place nor the
    // padding around a fitted image changes (so the layout cannot flip).
    const double room = double(width()) / std::max(1, height() - m_titleLabel->sizeHint().height());
    const QRectF region =
        m_fitRegion.isEmpty() || m_image.isEmpty() ? QRectF(0, 0, std::max(1, m_image.width), std::max(1, m_image.height)) : m_fitRegion;
    const bool below = room < 1.15 * region.width() / region.height();
    QCPLayoutGrid* layout = m_plot->plotLayout();
    const bool placed = layout->hasElement(0, 1) || layout->hasElement(1, 0);
    if (placed == m_colorBarVisible && below == m_colorBarBelow)
        return;
    if (placed) {
        layout->take(m_scale);
        layout->simplify();
    }
    m_colorBarBelow = below;
    m_plot->axisRect()->setMarginGroup(QCP::msAll, nullptr);
    m_scale->setMarginGroup(QCP::msAll, nullptr);
    // A layout element's automatic margin never shrinks by itself (QCPLayoutElement::calculateAutoMargin
    // keeps the larger of the current and the minimum one): the sides the margin group gave the bar in
    // its old place would stay as a gap between image and bar.
    m_scale->setMargins(QMargins());
    m_scale->setVisible(m_colorBarVisible);
    if (!m_colorBarVisible)
        return;
    const QCP::MarginSides shared = below ? (QCP::msLeft | QCP::msRight) : (QCP::msBottom | QCP::msTop);
    m_plot->axisRect()->setMarginGroup(shared, m_marginGroup);
    m_scale->setMarginGroup(shared, m_marginGroup);
    m_scale->setType(below ? QCPAxis::atBottom : QCPAxis::atRight);
    // The colour axis is another QCPAxis for each side: ticks outside the bar (inside they would hide
    // the colours they label), and a picture of the bar drawn for this orientation.
    m_scale->axis()->setTickLength(0, 4);
    m_scale->axis()->setSubTickLength(0, 2);
    m_scale->axis()->setLabelPadding(2);
    m_scale->axis()->setTickLabelPadding(3);
    invalidateColorBarImage();
    if (below) {
        layout->addElement(1, 0, m_scale);
        layout->setRowStretchFactor(1, 0.001);
    } else {
        layout->addElement(0, 1, m_scale);
        layout->setColumnStretchFactor(1, 0.001);
    }
    updateColorTicks();
}

void ImageView::invalidateColorBarImage()
{
    // QCPColorScale caches the bar's picture for the orientation it had when first drawn and only
    // makes it again when the gradient changes; moved from the side to below (or back) it would
    // stretch the old picture across the bar. A different gradient and back makes it draw a new one
    // (signals blocked: the colour map keeps its own picture).
    const QSignalBlocker block(m_scale);
    const QCPColorGradient gradient = m_scale->gradient();
    QCPColorGradient other = gradient;
    other.setLevelCount(gradient.levelCount() == 2 ? 3 : 2);
    m_scale->setGradient(other);
    m_scale->setGradient(gradient);
}

void ImageView::setColorMap(ColorMap map)
{
    if (map == m_colorMap && m_gradientSet)
        return; // views are reconfigured at every update; redraw only on a real change
    m_colorMap = map;
    redraw();
}

void ImageView::setStretch(Stretch stretch)
{
    if (stretch == m_stretch)
        return;
    m_stretch = stretch;
    redraw();
}

void ImageView::setClipPercentiles(double low, double high)
{
    if (low == m_clipLow && high == m_clipHigh)
        return;
    m_clipLow = low;
    m_clipHigh = high;
    if (!m_image.isEmpty())
        setImage(Image(m_image), m_title, m_unit);
}

void ImageView::setFixedRange(std::optional<DisplayRange> range)
{
    const bool same =
        range.has_value() == m_fixedRange.has_value() && (!range || (range->low == m_fixedRange->low && range->high == m_fixedRange->high));
    if (same)
        return;
    m_fixedRange = range;
    redraw();
}

void ImageView::setUserRange(std::optional<DisplayRange> range)
{
    if (range && !(range->high > range->low && std::isfinite(range->low) && std::isfinite(range->high)))
        return; // the dialog refuses these with a message; nothing to draw them with
    m_userRange = range;
    m_userRangeSize = QSize(m_image.width, m_image.height);
    m_userRangeUnit = m_unit;
    redraw();
}

DisplayRange ImageView::autoRange() const
{
    if (m_autoRangeValid)
        return m_autoRange;
    // Percentiles of the finite values (NaN marks pixels without data).
    std::vector<double> values;
    values.reserve(m_image.pixels.size());
    for (double v : m_image.pixels)
        if (std::isfinite(v))
            values.push_back(v);
    if (values.empty()) {
        m_autoRange = {0.0, 1.0};
    } else {
        auto at = [&](double percentile) {
            const size_t i = std::min(values.size() - 1, size_t(percentile / 100.0 * double(values.size() - 1) + 0.5));
            std::nth_element(values.begin(), values.begin() + long(i), values.end());
            return values[i];
        };
        m_autoRange = {at(m_clipLow), at(m_clipHigh)};
        if (!(m_autoRange.high > m_autoRange.low))
            m_autoRange.high = m_autoRange.low + 1.0;
    }
    m_autoRangeValid = true;
    return m_autoRange;
}

DisplayRange ImageView::displayRange() const
{
    // The user's range first: a scientist who typed limits for one view means them, also where the program shares
    // one scale across compared views (that view leaves the shared scale until "Automatic" gives it back).
    if (m_userRange)
        return *m_userRange;
    return m_fixedRange ? *m_fixedRange : autoRange();
}

double ImageView::transform(double value, const DisplayRange& range) const
{
    return stretchPosition(value, range, m_stretch);
}

void ImageView::redraw()
{
    QCPColorGradient gradient;
    gradient.clearColorStops();
    for (const auto& [position, color] : colorStops(m_colorMap))
        gradient.setColorStopAt(position, color);
    gradient.setPeriodic(isCyclic(m_colorMap));
    gradient.setNanHandling(QCPColorGradient::nhTransparent);
    m_map->setGradient(gradient);
    m_gradientSet = true;
    if (m_image.isEmpty()) {
        m_plot->replot(QCustomPlot::rpQueuedReplot);
        return;
    }
    const DisplayRange range = displayRange();
    QCPColorMapData* data = m_map->data();
    for (int row = 0; row < m_image.height; ++row)
        for (int col = 0; col < m_image.width; ++col) {
            const double v = m_image.at(row, col);
            data->setCell(col, row, std::isfinite(v) ? transform(v, range) : std::nan(""));
        }
    m_map->setDataRange(QCPRange(0.0, 1.0));
    updateColorTicks();
    m_scale->axis()->setLabel(m_unit);
    m_plot->replot(QCustomPlot::rpQueuedReplot);
    emit displayRangeChanged();
}

void ImageView::updateColorTicks()
{
    if (m_image.isEmpty())
        return;
    // The colour bar is labelled in the image's own values, at round numbers, wherever the stretch
    // puts them; a stretched bar keeps the ticks whose labels stay apart on screen (along a bar below
    // the image a label takes its width, beside it its height).
    const DisplayRange range = displayRange();
    const std::vector<double> rough = roundTicks(range.low, range.high, 7);
    const double step = rough.size() > 1 ? rough[1] - rough[0] : range.high - range.low;
    const int decimals = std::max(0, -int(std::floor(std::log10(step) + 1e-9)));
    auto label = [&](double v) {
        const bool scientific = std::abs(v) >= 1e5 || (v != 0.0 && std::abs(v) < 1e-3);
        if (scientific)
            return QString::number(v, 'g', 3);
        // Enough decimals for the value itself (0.002 on a log bar whose rough step is 0.2).
        int places = decimals;
        while (places < 6 && std::abs(v - std::round(v * std::pow(10.0, places)) / std::pow(10.0, places)) > 1e-9 * std::abs(step))
            ++places;
        return QString::number(v, 'f', places);
    };
    const QFontMetrics metrics(m_scale->axis()->tickLabelFont());
    // Along a bar below the image a label takes its width, beside it its height; plus a gap.
    int widest = 0; // of the round values' labels (the range's own ends need not be round)
    for (double v : rough)
        widest = std::max(widest, metrics.horizontalAdvance(label(v)));
    double room = m_colorBarBelow ? widest + 12.0 : metrics.height() + 4.0;
    const QRect bar = colourBarRect();
    const double length = bar.isEmpty() ? std::max(40, m_colorBarBelow ? m_plot->width() - 80 : m_plot->height() - 60)
                                        : double(m_colorBarBelow ? bar.width() : bar.height());
    // The ticks chosen may be finer than the round values measured ("-0.15" between "-0.2" and "-0.1"): along a bar
    // below the image, measured again with the labels chosen until they fit.
    std::vector<double> ticks = colorBarTicks(range, m_stretch, length, room);
    for (int pass = 0; pass < 3 && m_colorBarBelow; ++pass) {
        int chosen = 0;
        for (double v : ticks)
            chosen = std::max(chosen, metrics.horizontalAdvance(label(v)));
        if (chosen + 12.0 <= room)
            break;
        room = chosen + 12.0;
        ticks = colorBarTicks(range, m_stretch, length, room);
    }
    QSharedPointer<QCPAxisTickerText> ticker(new QCPAxisTickerText);
    for (double v : ticks)
        ticker->addTick(transform(v, range), label(v));
    m_scale->axis()->setTicker(ticker);
}

void ImageView::resizeEvent(QResizeEvent* event)
{
    QWidget::resizeEvent(event);
    placeColorBar(); // decided on the view's size
}

bool ImageView::eventFilter(QObject* watched, QEvent* event)
{
    if (watched == m_plot && event->type() == QEvent::Resize) {
        placeColorBar(); // before the plot lays itself out for the new size
        if (m_colorBarBelow)
            updateColorTicks(); // the labels that fit along the bar
    }
    if (watched == m_plot && event->type() == QEvent::MouseMove && !m_image.isEmpty()) {
        const auto* mouse = static_cast<QMouseEvent*>(event);
        const double x = m_plot->xAxis->pixelToCoord(mouse->position().x());
        const double y = m_plot->yAxis->pixelToCoord(mouse->position().y());
        const double step = m_axisScale ? m_axisScale->step : 1.0;
        const int col = int(std::lround((x - (m_axisScale ? m_axisScale->x0 : 0.0)) / step));
        const int row = int(std::lround((y - (m_axisScale ? m_axisScale->y0 : 0.0)) / step));
        if (col >= 0 && row >= 0 && col < m_image.width && row < m_image.height) {
            const double v = m_image.at(row, col);
            const QString where = m_axisScale ? QStringLiteral("x %1, y %2 %3 (pixel %4, %5)")
                                                    .arg(x, 0, 'g', 3)
                                                    .arg(y, 0, 'g', 3)
                                                    .arg(m_axisScale->unit)
                                                    .arg(col)
                                                    .arg(row)
                                              : QStringLiteral("x %1, y %2").arg(col).arg(row);
            emit cursorMoved(QStringLiteral("%1  %2: %3 %4")
                                 .arg(m_title, where)
                                 .arg(std::isfinite(v) ? QString::number(v, 'g', 6) : QStringLiteral("no data"))
                                 .arg(m_unit));
        } else {
            emit cursorMoved(QString());
        }
    }
    return QWidget::eventFilter(watched, event);
}

} // namespace wfs::ui
