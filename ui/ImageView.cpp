#include "ImageView.h"

#include <qcustomplot.h>

#include <QTimer>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

namespace wfs::ui {

QStringList stretchNames()
{
    return {QStringLiteral("linear"), QStringLiteral("sqrt"), QStringLiteral("log"), QStringLiteral("asinh")};
}

QImage thumbnail(const Image& image, int size)
{
    QImage picture(size, size, QImage::Format_Grayscale8);
    picture.fill(0);
    if (image.isEmpty())
        return picture;
    double low = INFINITY, high = -INFINITY;
    for (double v : image.pixels)
        if (std::isfinite(v)) {
            low = std::min(low, v);
            high = std::max(high, v);
        }
    if (!(high > low))
        return picture;
    const double step = double(std::max(image.width, image.height)) / size;
    for (int y = 0; y < size; ++y) {
        for (int x = 0; x < size; ++x) {
            const int col = std::min(image.width - 1, int(x * step));
            const int row = std::min(image.height - 1, int((size - 1 - y) * step)); // row 0 at the bottom
            const double v = image.at(row, col);
            const double t = std::isfinite(v) ? std::asinh(10.0 * (v - low) / (high - low)) / std::asinh(10.0) : 0.0;
            picture.setPixel(x, y, qRgb(int(255 * t), int(255 * t), int(255 * t)));
        }
    }
    return picture;
}

ImageView::ImageView(QWidget* parent)
    : QWidget(parent)
    , m_plot(new QCustomPlot(this))
{
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_plot);
    m_plot->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
    m_plot->axisRect()->setupFullAxesBox(true);
    m_plot->xAxis->setLabel(QStringLiteral("x (pixel)"));
    m_plot->yAxis->setLabel(QStringLiteral("y (pixel)"));
    m_map = new QCPColorMap(m_plot->xAxis, m_plot->yAxis);
    m_map->setInterpolate(false);
    m_scale = new QCPColorScale(m_plot);
    m_plot->plotLayout()->addElement(0, 1, m_scale);
    m_scale->setType(QCPAxis::atRight);
    m_map->setColorScale(m_scale);
    auto* group = new QCPMarginGroup(m_plot);
    m_plot->axisRect()->setMarginGroup(QCP::msBottom | QCP::msTop, group);
    m_scale->setMarginGroup(QCP::msBottom | QCP::msTop, group);
    m_plot->setMouseTracking(true);
    m_plot->installEventFilter(this);
    setMinimumSize(150, 150);
    clear(tr("no image"));
}

void ImageView::clear(const QString& message)
{
    m_image = Image();
    m_map->data()->clear();
    m_plot->plotLayout()->setRowStretchFactor(0, 1);
    m_scale->axis()->setLabel(message);
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

void ImageView::setImage(const Image& image, const QString& title, const QString& unit, std::optional<DisplayRange> range)
{
    m_fixedRange = range;
    setImage(image, title, unit);
}

void ImageView::setImage(const Image& image, const QString& title, const QString& unit)
{
    const bool sameSize = image.width == m_image.width && image.height == m_image.height;
    m_image = image;
    m_title = title;
    m_unit = unit;
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
    m_map->data()->setSize(image.width, image.height);
    m_map->data()->setRange(QCPRange(0, image.width - 1), QCPRange(0, image.height - 1));
    redraw();
    if (!sameSize)
        resetZoom();
}

void ImageView::resetZoom()
{
    if (m_image.isEmpty())
        return;
    // Square pixels: one scale (image pixels per screen pixel) on both axes, the larger of the two
    // that make the image fit, so the whole image shows with margins on one side.
    const QRect rect = m_plot->axisRect()->rect();
    const double width = std::max(1, rect.width()), height = std::max(1, rect.height());
    const double scale = std::max(m_image.width / width, m_image.height / height);
    const double cx = 0.5 * (m_image.width - 1), cy = 0.5 * (m_image.height - 1);
    m_plot->xAxis->setRange(cx - 0.5 * width * scale, cx + 0.5 * width * scale);
    m_plot->yAxis->setRange(cy - 0.5 * height * scale, cy + 0.5 * height * scale);
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

void ImageView::setColorMap(ColorMap map)
{
    if (map == m_colorMap)
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
    const bool same = range.has_value() == m_fixedRange.has_value()
                      && (!range || (range->low == m_fixedRange->low && range->high == m_fixedRange->high));
    if (same)
        return;
    m_fixedRange = range;
    redraw();
}

DisplayRange ImageView::autoRange() const
{
    return m_autoRange;
}

DisplayRange ImageView::displayRange() const
{
    return m_fixedRange.value_or(m_autoRange);
}

double ImageView::transform(double value, const DisplayRange& range) const
{
    const double t = std::clamp((value - range.low) / (range.high - range.low), 0.0, 1.0);
    switch (m_stretch) {
    case Stretch::Linear:
        return t;
    case Stretch::Sqrt:
        return std::sqrt(t);
    case Stretch::Log:
        return std::log10(1.0 + 1000.0 * t) / std::log10(1001.0);
    case Stretch::Asinh:
        return std::asinh(10.0 * t) / std::asinh(10.0);
    }
    return t;
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
    // The colour bar is labelled in the image's own values, wherever the stretch puts them.
    QSharedPointer<QCPAxisTickerText> ticker(new QCPAxisTickerText);
    const int ticks = 5;
    for (int i = 0; i < ticks; ++i) {
        const double v = range.low + (range.high - range.low) * i / (ticks - 1);
        ticker->addTick(transform(v, range), QString::number(v, 'g', 3));
    }
    m_scale->axis()->setTicker(ticker);
    m_scale->axis()->setLabel(m_unit.isEmpty() ? m_title : QStringLiteral("%1 (%2)").arg(m_title, m_unit));
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

bool ImageView::eventFilter(QObject* watched, QEvent* event)
{
    if (watched == m_plot && event->type() == QEvent::MouseMove && !m_image.isEmpty()) {
        const auto* mouse = static_cast<QMouseEvent*>(event);
        const int col = int(std::lround(m_plot->xAxis->pixelToCoord(mouse->position().x())));
        const int row = int(std::lround(m_plot->yAxis->pixelToCoord(mouse->position().y())));
        if (col >= 0 && row >= 0 && col < m_image.width && row < m_image.height) {
            const double v = m_image.at(row, col);
            emit cursorMoved(QStringLiteral("%1  x %2, y %3: %4 %5")
                                 .arg(m_title)
                                 .arg(col)
                                 .arg(row)
                                 .arg(std::isfinite(v) ? QString::number(v, 'g', 6) : QStringLiteral("no data"))
                                 .arg(m_unit));
        } else {
            emit cursorMoved(QString());
        }
    } else if (watched == m_plot && event->type() == QEvent::Resize) {
        QTimer::singleShot(0, this, &ImageView::resetZoom); // after the layout has the new axis rectangle
    }
    return QWidget::eventFilter(watched, event);
}

} // namespace wfs::ui
