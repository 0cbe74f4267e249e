#include "PhaseImage.h"

#include "io/OutputTransaction.h"

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

bool haveFonts()
{
    return qobject_cast<QGuiApplication*>(QCoreApplication::instance()) != nullptr;
}

// The phase in the chosen unit (wrapped to one wave when asked) and the colour scale's range.
struct ScaledPhase {
    std::vector<double> values; // NaN outside the pupil
    double lo = 0.0, hi = 0.0;
};

ScaledPhase scalePhase(const Image& phase, const PhaseImageOptions& options)
{
    const bool phase_ = options.quantity.empty();
    const double factor = phase_ ? phaseFactor(options.unit, options.wavelength) : 1.0;
    const bool wrapped = phase_ && options.wrapped;
    const double cycle = 2.0 * M_PI * factor; // one wave in the chosen unit
    ScaledPhase s;
    s.values.resize(phase.pixels.size());
    double lo = std::numeric_limits<double>::infinity(), hi = -lo;
    for (size_t i = 0; i < s.values.size(); ++i) {
        double v = phase.pixels[i] * factor;
        if (std::isfinite(v) && wrapped)
            v -= cycle * std::floor(v / cycle + 0.5); // [-cycle/2, cycle/2)
        s.values[i] = v;
        if (std::isfinite(v)) {
            lo = std::min(lo, v);
            hi = std::max(hi, v);
        }
    }
    // A wrapped map spans exactly one wave, so the cyclic map's ends meet at the wrap; a flat or empty
    // map gets a small span of its own so that the colour bar still has a range.
    if (wrapped) {
        lo = -0.5 * cycle;
        hi = 0.5 * cycle;
    } else if (!std::isfinite(lo)) {
        lo = -0.5;
        hi = 0.5;
    } else if (!(hi > lo)) {
        lo -= 0.5 * std::max(std::abs(lo), 1e-3);
        hi = lo + std::max(std::abs(lo), 1e-3);
    }
    s.lo = lo;
    s.hi = hi;
    return s;
}

// The line under the map: unit, wavelength, colour map and orientation.
QString phaseCaption(const PhaseImageOptions& options)
{
    if (!options.quantity.empty())
        return QString::fromStdString(options.quantity) + QStringLiteral(", viridis; y up, row 0 at the bottom");
    QString caption = QStringLiteral("phase in %1").arg(QString::fromLatin1(phaseUnitName(options.unit)));
    if (options.wavelength > 0.0)
        caption += QStringLiteral(" (wavelength %1)").arg(QString::fromStdString(wavelengthText(options.wavelength)));
    caption += options.wrapped ? QStringLiteral(", wrapped to one wave, cyclic colour map") : QStringLiteral(", viridis");
    caption += QStringLiteral("; y up, row 0 at the bottom");
    return caption;
}

// Sizes and positions of the picture's parts. Without fonts (no QGuiApplication) the text areas are
// left out and the picture holds only the map and the bar.
struct PhaseLayout {
    bool text = false;
    int scale = 1; // drawn pixels per phase sample
    int mapW = 0, mapH = 0;
    int margin = 16, barWidth = 24, labelWidth = 0, barLabelWidth = 0, titleHeight = 0, captionHeight = 0;
    int axisLeft = 0, axisBottom = 0; // room for the pupil axes' ticks and titles (0 without axes)
    int width = 0, height = 0;
    int top() const { return margin + titleHeight; }
    int mapX() const { return margin + axisLeft; }
    int barX() const { return mapX() + mapW + margin; }
};

PhaseLayout phaseLayout(const Image& phase, const PhaseImageOptions& options, const QString& caption)
{
    PhaseLayout l;
    const int longest = std::max(phase.width, phase.height);
    l.scale = options.mapSize > 0 ? std::max(1, options.mapSize / longest) : std::max(1, (384 + longest - 1) / longest);
    l.mapW = phase.width * l.scale;
    l.mapH = phase.height * l.scale;
    l.text = haveFonts();
    l.labelWidth = l.text ? 72 : 0;
    l.barLabelWidth = l.text ? 24 : 0;
    l.titleHeight = l.text && !options.title.empty() ? 28 : 0;
    l.captionHeight = l.text ? 24 : 0;
    if (l.text && options.geometry.spacing > 0) {
        l.axisLeft = 64;
        l.axisBottom = 40;
    }
    l.width = l.mapX() + l.mapW + l.margin + l.barWidth + 8 + l.labelWidth + l.barLabelWidth + l.margin;
    if (l.text) {
        // Wide enough for the caption and the title on one line each.
        const QFontMetrics metrics{QFont()};
        l.width = std::max(l.width, 2 * l.margin + metrics.horizontalAdvance(caption));
        if (!options.title.empty()) {
            QFont bold;
            bold.setBold(true);
            l.width = std::max(l.width, 2 * l.margin + QFontMetrics(bold).horizontalAdvance(QString::fromStdString(options.title)));
        }
    }
    l.height = l.margin + l.titleHeight + l.mapH + l.axisBottom + l.captionHeight + l.margin;
    return l;
}

// The map, row 0 at the bottom (drawn last line), each sample a scale x scale block; NaN (outside the
// pupil) stays white. And the colour bar beside it, top = hi.
void paintMapAndBar(QImage& image, const Image& phase, const ScaledPhase& s, const PhaseLayout& l, ColorMap map)
{
    const int top = l.top(), scale = l.scale;
    for (int row = 0; row < phase.height; ++row)
        for (int col = 0; col < phase.width; ++col) {
            const double v = s.values[size_t(row) * size_t(phase.width) + size_t(col)];
            if (!std::isfinite(v))
                continue;
            const auto c = colorMapRgb(map, (v - s.lo) / (s.hi - s.lo));
            const QRgb rgb = qRgb(c[0], c[1], c[2]);
            const int y0 = top + (phase.height - 1 - row) * scale, x0 = l.mapX() + col * scale;
            for (int dy = 0; dy < scale; ++dy) {
                QRgb* line = reinterpret_cast<QRgb*>(image.scanLine(y0 + dy));
                for (int dx = 0; dx < scale; ++dx)
                    line[x0 + dx] = rgb;
            }
        }
    for (int y = 0; y < l.mapH; ++y) {
        const auto c = colorMapRgb(map, 1.0 - (y + 0.5) / l.mapH);
        QRgb* line = reinterpret_cast<QRgb*>(image.scanLine(top + y));
        for (int x = 0; x < l.barWidth; ++x)
            line[l.barX() + x] = qRgb(c[0], c[1], c[2]);
    }
}

// The bar's frame and tick marks, with their labels when there are fonts; returns the labels (also
// written into the PNG's text, so they can be checked without reading pixels).
QStringList paintBarTicks(QPainter& painter, const PhaseLayout& l, double lo, double hi)
{
    const int top = l.top(), barX = l.barX();
    painter.setPen(QPen(Qt::black, 1));
    painter.drawRect(barX - 1, top - 1, l.barWidth + 1, l.mapH + 1);
    QStringList tickTexts;
    for (double v : colorBarTicks(lo, hi)) {
        const int y = top + int(std::lround((hi - v) / (hi - lo) * (l.mapH - 1)));
        painter.drawLine(barX + l.barWidth, y, barX + l.barWidth + 5, y);
        const QString label = QString::number(v, 'g', 6);
        tickTexts << label;
        if (l.text)
            painter.drawText(QRect(barX + l.barWidth + 8, y - 10, l.labelWidth, 20), Qt::AlignLeft | Qt::AlignVCenter, label);
    }
    return tickTexts;
}

// The bar's label, the title and the caption (only with fonts).
void paintPhaseTexts(QPainter& painter, const PhaseLayout& l, const PhaseImageOptions& options, const QString& barLabel,
                     const QString& caption)
{
    const int top = l.top(), barX = l.barX();
    // The bar's label, upright (reading bottom to top) beside the tick labels, centred on the bar.
    painter.save();
    painter.translate(barX + l.barWidth + 8 + l.labelWidth + l.barLabelWidth / 2, top + l.mapH / 2);
    painter.rotate(-90.0);
    painter.drawText(QRect(-l.mapH / 2 - 100, -l.barLabelWidth / 2, l.mapH + 200, l.barLabelWidth), Qt::AlignCenter, barLabel);
    painter.restore();
    QFont font = painter.font();
    if (!options.title.empty()) {
        QFont bold = font;
        bold.setBold(true);
        painter.setFont(bold);
        painter.drawText(QRect(l.margin, l.margin, l.width - 2 * l.margin, l.titleHeight), Qt::AlignLeft | Qt::AlignVCenter,
                         QString::fromStdString(options.title));
        painter.setFont(font);
    }
    painter.drawText(QRect(l.margin, top + l.mapH + l.axisBottom + 4, l.width - 2 * l.margin, l.captionHeight),
                     Qt::AlignLeft | Qt::AlignVCenter, caption);
}

// The pupil axes (with fonts and a known geometry): a frame around the map, ticks every 0.5 pupil radius with their
// labels, and the axis titles; returns "x (pupil radius): -1 -0.5 0 0.5 1; y (pupil radius): ..." for the PNG's text.
QString paintPupilAxes(QPainter& painter, const PhaseLayout& l, const Image& phase, const PupilMapGeometry& g)
{
    if (l.axisLeft == 0 || !(g.spacing > 0))
        return {};
    const int top = l.top(), left = l.mapX();
    painter.setPen(QPen(Qt::black, 1));
    painter.drawRect(left - 1, top - 1, l.mapW + 1, l.mapH + 1);
    // Column c's centre at firstColumn + c spacing, drawn over [c, c + 1) x scale; row 0 at the bottom.
    const auto ticks = [](double low, double high) {
        std::vector<double> values;
        for (double v = std::ceil(low / 0.5 - 1e-9) * 0.5; v <= high + 1e-9; v += 0.5)
            values.push_back(std::abs(v) < 1e-12 ? 0.0 : v);
        return values;
    };
    const double x0 = g.firstColumn - 0.5 * g.spacing, x1 = x0 + phase.width * g.spacing;
    const double y0 = g.firstRow - 0.5 * g.spacing, y1 = y0 + phase.height * g.spacing;
    const QString across = g.columnsAlongX ? QStringLiteral("x (pupil radius)") : QStringLiteral("y (pupil radius)");
    const QString up = g.columnsAlongX ? QStringLiteral("y (pupil radius)") : QStringLiteral("x (pupil radius)");
    QStringList xs, ys;
    for (double v : ticks(x0, x1)) {
        const int x = left + int(std::lround((v - x0) / (x1 - x0) * (l.mapW - 1)));
        painter.drawLine(x, top + l.mapH, x, top + l.mapH + 5);
        const QString label = QString::number(v, 'g', 3);
        painter.drawText(QRect(x - 30, top + l.mapH + 6, 60, 16), Qt::AlignHCenter | Qt::AlignTop, label);
        xs << label;
    }
    for (double v : ticks(y0, y1)) {
        const int y = top + l.mapH - 1 - int(std::lround((v - y0) / (y1 - y0) * (l.mapH - 1)));
        painter.drawLine(left - 6, y, left - 1, y);
        const QString label = QString::number(v, 'g', 3);
        painter.drawText(QRect(left - 46, y - 8, 38, 16), Qt::AlignRight | Qt::AlignVCenter, label);
        ys << label;
    }
    painter.drawText(QRect(left, top + l.mapH + 22, l.mapW, 16), Qt::AlignHCenter | Qt::AlignTop, across);
    painter.save();
    painter.translate(l.margin + 6, top + l.mapH / 2);
    painter.rotate(-90.0);
    painter.drawText(QRect(-l.mapH / 2, -8, l.mapH, 16), Qt::AlignCenter, up);
    painter.restore();
    return across + QStringLiteral(": ") + xs.join(QLatin1Char(' ')) + QStringLiteral("; ") + up + QStringLiteral(": ")
           + ys.join(QLatin1Char(' '));
}

} // namespace

std::vector<double> colorBarTicks(double lo, double hi)
{
    const double span = hi - lo;
    if (!(span > 0.0) || !std::isfinite(span))
        return {lo};
    auto ticksWith = [&](double step) {
        std::vector<double> values;
        const double tolerance = 1e-9 * span;
        for (double k = std::ceil((lo - tolerance) / step); k * step <= hi + tolerance; k += 1.0)
            values.push_back(k == 0.0 ? 0.0 : k * step);
        return values;
    };
    // From a step of the whole span's order of magnitude downwards: 10, 5, 2, 1, 0.5, ... x 10^e.
    double magnitude = std::pow(10.0, std::ceil(std::log10(span)));
    for (int i = 0; i < 40; ++i) {
        for (double m : {1.0, 0.5, 0.2}) {
            const double step = m * magnitude;
            std::vector<double> values = ticksWith(step);
            if (values.size() >= 4)
                return values;
        }
        magnitude /= 10.0;
    }
    return {lo, hi};
}

std::string colorBarLabel(PhaseUnit unit)
{
    return std::string("phase [") + phaseUnitName(unit) + "]";
}

QImage renderPhaseImage(const Image& phase, const PhaseImageOptions& options)
{
    if (phase.isEmpty())
        return {};
    const ScaledPhase scaled = scalePhase(phase, options);
    const double lo = scaled.lo, hi = scaled.hi;
    const ColorMap map = options.wrapped && options.quantity.empty() ? ColorMap::Twilight : ColorMap::Viridis;
    const QString caption = phaseCaption(options);
    const PhaseLayout layout = phaseLayout(phase, options, caption);

    QImage image(layout.width, layout.height, QImage::Format_RGB32);
    image.fill(Qt::white);
    paintMapAndBar(image, phase, scaled, layout, map);
    QPainter painter(&image);
    const QStringList tickTexts = paintBarTicks(painter, layout, lo, hi);
    const QString barLabel = QString::fromStdString(options.quantity.empty() ? colorBarLabel(options.unit) : options.quantity);
    QString axes;
    if (layout.text) {
        paintPhaseTexts(painter, layout, options, barLabel, caption);
        axes = paintPupilAxes(painter, layout, phase, options.geometry);
    }
    painter.end();
    if (!axes.isEmpty())
        image.setText(QStringLiteral("Axes"), axes);
    // The PNG's text says what the pixels show, for readers and for checks without fonts.
    image.setText(QStringLiteral("Unit"),
                  options.quantity.empty() ? QString::fromLatin1(phaseUnitName(options.unit)) : QStringLiteral("relative"));
    image.setText(QStringLiteral("Range"), QStringLiteral("%1 .. %2").arg(lo, 0, 'g', 6).arg(hi, 0, 'g', 6));
    image.setText(QStringLiteral("ColorMap"), QString::fromLatin1(colorMapName(map)));
    image.setText(QStringLiteral("ColorBarLabel"), barLabel);
    image.setText(QStringLiteral("Ticks"), tickTexts.join(QLatin1Char(' ')));
    if (!options.title.empty())
        image.setText(QStringLiteral("Title"), QString::fromStdString(options.title));
    if (!layout.text)
        image.setText(QStringLiteral("Comment"), QStringLiteral("labels omitted: drawn without a QGuiApplication (no fonts)"));
    return image;
}

QByteArray phasePngBytes(const FitResult& result, const PhaseImageOptions& optionsIn)
{
    if (result.phaseMap.isEmpty())
        throw std::runtime_error("the result has no phase map");
    PhaseImageOptions options = optionsIn;
    if (!(options.wavelength > 0.0))
        options.wavelength = result.wavelength;
    if (!(options.geometry.spacing > 0))
        options.geometry = result.phaseMapGeometry;
    return mapPngBytes(result.phaseMap, options);
}

QByteArray mapPngBytes(const Image& map, const PhaseImageOptions& options)
{
    const QImage image = renderPhaseImage(map, options);
    // Encoded in memory: the file is written (and its every write checked) by the output layer.
    QByteArray bytes;
    QBuffer buffer(&bytes);
    buffer.open(QIODevice::WriteOnly);
    QImageWriter writer(&buffer, "png");
    for (const QString& key : image.textKeys())
        writer.setText(key, image.text(key));
    if (!writer.write(image))
        throw std::runtime_error("PNG encoding failed (" + writer.errorString().toStdString() + ")");
    buffer.close();
    return bytes;
}

void writePhasePng(const std::string& path, const FitResult& result, const PhaseImageOptions& options, bool overwrite)
{
    QByteArray bytes;
    try {
        bytes = phasePngBytes(result, options);
    } catch (const std::runtime_error& e) {
        throw std::runtime_error(path + ": " + e.what());
    }
    writeFileAtomically(path, bytes, overwrite);
}

} // namespace wfs
