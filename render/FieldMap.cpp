#include "FieldMap.h"

#include "io/Exports.h"

#include <QBuffer>
#include <QCoreApplication>
#include <QFontMetrics>
#include <QGuiApplication>
#include <QImageWriter>
#include <QPainter>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace wfs {

namespace {

// Round tick values (1, 2, 2.5, 5 x 10^k steps) covering [lo, hi].
std::vector<double> roundTicks(double lo, double hi)
{
    const double span = hi - lo;
    if (!(span > 0.0))
        return {lo};
    const double raw = span / 4.0;
    const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
    double step = magnitude;
    for (double m : {1.0, 2.0, 2.5, 5.0, 10.0})
        if (m * magnitude >= raw) {
            step = m * magnitude;
            break;
        }
    std::vector<double> values;
    for (double v = std::ceil(lo / step - 1e-9) * step; v <= hi + 1e-9 * span; v += step)
        values.push_back(std::abs(v) < 1e-12 * span ? 0.0 : v);
    return values;
}

bool haveFonts()
{
    return qobject_cast<QGuiApplication*>(QCoreApplication::instance()) != nullptr;
}

QColor colourAt(double t)
{
    const auto rgb = colorMapRgb(ColorMap::Viridis, t);
    return QColor(rgb[0], rgb[1], rgb[2]);
}

// Where the map square and the colour bar sit in the image, and the field-to-pixel mapping.
struct FieldMapLayout {
    int size = 0; // side of the map square
    int left = 80, top = 0, bottom = 60, barGap = 30, barWidth = 22, barLabels = 110;
    double x0 = 0.0, y0 = 0.0, span = 0.0; // field coordinates of the square's lower-left corner, and its side

    QPointF toPixel(double x, double y) const
    {
        return QPointF(left + (x - x0) / span * size, top + size - (y - y0) / span * size); // y up
    }
    int barX() const { return left + size + barGap; }
    int imageWidth() const { return left + size + barGap + barWidth + barLabels; }
    int imageHeight() const { return top + size + bottom; }
};

bool hasPosition(const FieldMapPoint& p)
{
    return std::isfinite(p.x) && std::isfinite(p.y);
}

// The square of field the map shows: every placed point with a margin, equal scales on both axes so the
// field is drawn as it lies. Throws when no point has a position.
FieldMapLayout fieldMapLayout(const std::vector<FieldMapPoint>& points, const FieldMapOptions& options)
{
    double xLo = std::numeric_limits<double>::infinity(), xHi = -xLo, yLo = xLo, yHi = -xLo;
    if (const auto& s = options.surface; s && !s->values.isEmpty()) {
        xLo = s->x0 - 0.5 * s->step;
        yLo = s->y0 - 0.5 * s->step;
        xHi = s->x0 + (s->values.width - 0.5) * s->step;
        yHi = s->y0 + (s->values.height - 0.5) * s->step;
    }
    for (const FieldMapPoint& p : points) {
        if (!hasPosition(p))
            continue;
        xLo = std::min(xLo, p.x);
        xHi = std::max(xHi, p.x);
        yLo = std::min(yLo, p.y);
        yHi = std::max(yHi, p.y);
    }
    if (!std::isfinite(xLo))
        throw std::invalid_argument("the field map needs at least one input with a field position");
    FieldMapLayout layout;
    // A surface is the field itself: no margin around it.
    layout.span = std::max({xHi - xLo, yHi - yLo, 1e-12}) * (options.surface ? 1.0 : 1.2);
    layout.x0 = 0.5 * (xLo + xHi) - layout.span / 2;
    layout.y0 = 0.5 * (yLo + yHi) - layout.span / 2;
    layout.size = std::max(200, options.size);
    layout.top = options.title.empty() ? 20 : 50;
    return layout;
}

// The colour scale's range: the finite values of placed points, widened when they are all equal (or
// absent) so that the bar still has a span.
std::pair<double, double> valueRange(const std::vector<FieldMapPoint>& points, const FieldMapOptions& options)
{
    double vLo = std::numeric_limits<double>::infinity(), vHi = -vLo;
    if (options.surface)
        for (double v : options.surface->values.pixels)
            if (std::isfinite(v)) {
                vLo = std::min(vLo, v);
                vHi = std::max(vHi, v);
            }
    for (const FieldMapPoint& p : points)
        if (hasPosition(p) && std::isfinite(p.value)) {
            vLo = std::min(vLo, p.value);
            vHi = std::max(vHi, p.value);
        }
    if (!std::isfinite(vLo)) {
        vLo = -0.5;
        vHi = 0.5;
    } else if (!(vHi > vLo)) {
        const double pad = std::max(std::abs(vLo) * 0.1, 1e-3);
        vLo -= pad;
        vHi += pad;
    }
    return {vLo, vHi};
}

// Frame and ticks of both axes, the axis labels and the title.
void drawFieldAxes(QPainter& painter, const FieldMapLayout& l, const FieldMapOptions& options, bool text, int imageWidth)
{
    const int left = l.left, top = l.top, size = l.size;
    painter.setPen(QPen(Qt::black, 1));
    painter.drawRect(QRectF(left, top, size, size));
    const QString unit = options.axisUnit.empty() ? QString() : QStringLiteral(" [%1]").arg(QString::fromStdString(options.axisUnit));
    for (double v : roundTicks(l.x0, l.x0 + l.span)) {
        const double px = l.toPixel(v, l.y0).x();
        painter.drawLine(QPointF(px, top + size), QPointF(px, top + size + 5));
        if (text)
            painter.drawText(QRectF(px - 40, top + size + 6, 80, 18), Qt::AlignHCenter | Qt::AlignTop, QString::number(v, 'g', 6));
    }
    for (double v : roundTicks(l.y0, l.y0 + l.span)) {
        const double py = l.toPixel(l.x0, v).y();
        painter.drawLine(QPointF(left - 5, py), QPointF(left, py));
        if (text)
            painter.drawText(QRectF(0, py - 9, left - 8, 18), Qt::AlignRight | Qt::AlignVCenter, QString::number(v, 'g', 6));
    }
    if (!text)
        return;
    painter.drawText(QRectF(left, top + size + 28, size, 20), Qt::AlignHCenter, QStringLiteral("field x") + unit);
    painter.save();
    painter.translate(16, top + size / 2.0);
    painter.rotate(-90);
    painter.drawText(QRectF(-size / 2.0, -10, size, 20), Qt::AlignHCenter, QStringLiteral("field y") + unit);
    painter.restore();
    if (!options.title.empty()) {
        QFont bold = painter.font();
        bold.setBold(true);
        painter.setFont(bold);
        painter.drawText(QRectF(0, 8, imageWidth, 30), Qt::AlignHCenter | Qt::AlignVCenter, QString::fromStdString(options.title));
        painter.setFont(QFont());
    }
}

// The points: discs coloured by value, grey crosses where there is no result (so a gap in the field
// shows); names beside them only when there are few enough to stay readable.
void drawFieldPoints(QPainter& painter, const std::vector<FieldMapPoint>& points, const FieldMapLayout& l, double vLo, double vHi,
                     bool text, bool overSurface)
{
    int placed = 0;
    for (const FieldMapPoint& p : points)
        placed += hasPosition(p);
    // Over a surface the points are markers that must leave the surface visible.
    const double radius = std::clamp(l.size / (3.0 * std::sqrt(double(std::max(placed, 1))) + 6.0), 4.0, overSurface ? 7.0 : 28.0);
    for (const FieldMapPoint& p : points) {
        if (!hasPosition(p))
            continue;
        const QPointF c = l.toPixel(p.x, p.y);
        if (std::isfinite(p.value)) {
            painter.setPen(QPen(Qt::black, 1));
            painter.setBrush(colourAt((p.value - vLo) / (vHi - vLo)));
            painter.drawEllipse(c, radius, radius);
        } else {
            painter.setPen(QPen(Qt::gray, 2));
            painter.drawLine(c + QPointF(-radius, -radius), c + QPointF(radius, radius));
            painter.drawLine(c + QPointF(-radius, radius), c + QPointF(radius, -radius));
        }
        if (text && placed <= 25 && !p.label.empty()) {
            painter.setPen(Qt::black);
            painter.drawText(QRectF(c.x() - 60, c.y() + radius + 1, 120, 16), Qt::AlignHCenter | Qt::AlignTop,
                             QString::fromStdString(p.label));
        }
    }
    painter.setBrush(Qt::NoBrush);
}

// Each surface sample as a square of its colour (NaN left white).
void drawFieldSurface(QPainter& painter, const FieldMapSurface& s, const FieldMapLayout& l, double vLo, double vHi)
{
    const double side = s.step / l.span * l.size;
    for (int r = 0; r < s.values.height; ++r)
        for (int c = 0; c < s.values.width; ++c) {
            const double v = s.values.at(r, c);
            if (!std::isfinite(v))
                continue;
            const QPointF centre = l.toPixel(s.x0 + c * s.step, s.y0 + r * s.step);
            painter.fillRect(QRectF(centre.x() - side / 2, centre.y() - side / 2, side + 0.5, side + 0.5),
                             colourAt((v - vLo) / (vHi - vLo)));
        }
}

// The colour bar with round ticks and its label.
void drawFieldColourBar(QPainter& painter, const FieldMapLayout& l, double vLo, double vHi, const FieldMapOptions& options, bool text)
{
    const int barX = l.barX(), top = l.top, size = l.size, barWidth = l.barWidth, barLabels = l.barLabels;
    for (int row = 0; row < size; ++row)
        painter.fillRect(QRect(barX, top + row, barWidth, 1), colourAt(1.0 - (row + 0.5) / size));
    painter.setPen(QPen(Qt::black, 1));
    painter.drawRect(QRect(barX, top, barWidth, size));
    for (double v : roundTicks(vLo, vHi)) {
        const double py = top + size - (v - vLo) / (vHi - vLo) * size;
        painter.drawLine(QPointF(barX + barWidth, py), QPointF(barX + barWidth + 4, py));
        if (text)
            painter.drawText(QRectF(barX + barWidth + 7, py - 9, barLabels - 10, 18), Qt::AlignLeft | Qt::AlignVCenter,
                             QString::number(v, 'g', 4));
    }
    if (text && !options.valueLabel.empty())
        painter.drawText(QRectF(barX - 40, top + size + 28, barWidth + 80 + barLabels / 2.0, 20), Qt::AlignHCenter,
                         QString::fromStdString(options.valueLabel));
}

} // namespace

QImage renderFieldMap(const std::vector<FieldMapPoint>& points, const FieldMapOptions& options)
{
    const FieldMapLayout layout = fieldMapLayout(points, options);
    const auto [vLo, vHi] = valueRange(points, options);
    QImage image(layout.imageWidth(), layout.imageHeight(), QImage::Format_RGB32);
    image.fill(Qt::white);
    QPainter painter(&image);
    const bool text = haveFonts();
    if (options.surface)
        drawFieldSurface(painter, *options.surface, layout, vLo, vHi);
    painter.setRenderHint(QPainter::Antialiasing);
    drawFieldAxes(painter, layout, options, text, image.width());
    drawFieldPoints(painter, points, layout, vLo, vHi, text, options.surface.has_value());
    drawFieldColourBar(painter, layout, vLo, vHi, options, text);
    painter.end();
    return image;
}

QByteArray fieldMapPngBytes(const std::vector<FieldMapPoint>& points, const FieldMapOptions& options)
{
    const QImage image = renderFieldMap(points, options);
    QByteArray bytes;
    QBuffer buffer(&bytes);
    buffer.open(QIODevice::WriteOnly);
    QImageWriter writer(&buffer, "png");
    if (!haveFonts())
        writer.setText(QStringLiteral("Comment"), QStringLiteral("drawn without text: no QGuiApplication"));
    if (!writer.write(image))
        throw std::runtime_error("the field map could not be encoded as PNG: " + writer.errorString().toStdString());
    return bytes;
}

} // namespace wfs
