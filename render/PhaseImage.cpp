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
    const double factor = phaseFactor(options.unit, options.wavelength);
    const double cycle = 2.0 * M_PI * factor; // one wave in the chosen unit
    std::vector<double> values(phase.pixels.size());
    double lo = std::numeric_limits<double>::infinity(), hi = -lo;
    for (size_t i = 0; i < values.size(); ++i) {
        double v = phase.pixels[i] * factor;
        if (std::isfinite(v) && options.wrapped)
            v -= cycle * std::floor(v / cycle + 0.5); // [-cycle/2, cycle/2)
        values[i] = v;
        if (std::isfinite(v)) {
            lo = std::min(lo, v);
            hi = std::max(hi, v);
        }
    }
    if (options.wrapped) {
        lo = -0.5 * cycle;
        hi = 0.5 * cycle;
    } else if (!std::isfinite(lo)) {
        lo = -0.5;
        hi = 0.5;
    } else if (!(hi > lo)) {
        lo -= 0.5 * std::max(std::abs(lo), 1e-3);
        hi = lo + std::max(std::abs(lo), 1e-3);
    }
    const ColorMap map = options.wrapped ? ColorMap::Twilight : ColorMap::Viridis;

    const int longest = std::max(phase.width, phase.height);
    const int scale = options.mapSize > 0 ? std::max(1, options.mapSize / longest) : std::max(1, (384 + longest - 1) / longest);
    const int mapW = phase.width * scale, mapH = phase.height * scale;
    const bool text = haveFonts();
    const int margin = 16, barWidth = 24, labelWidth = text ? 72 : 0, barLabelWidth = text ? 24 : 0;
    const int titleHeight = text && !options.title.empty() ? 28 : 0;
    const int captionHeight = text ? 24 : 0;
    QString caption = QStringLiteral("phase in %1").arg(QString::fromLatin1(phaseUnitName(options.unit)));
    if (options.wavelength > 0.0)
        caption += QStringLiteral(" (wavelength %1)").arg(QString::fromStdString(wavelengthText(options.wavelength)));
    caption += options.wrapped ? QStringLiteral(", wrapped to one wave, cyclic colour map") : QStringLiteral(", viridis");
    caption += QStringLiteral("; y up, row 0 at the bottom");
    int width = margin + mapW + margin + barWidth + 8 + labelWidth + barLabelWidth + margin;
    if (text) {
        const QFontMetrics metrics{QFont()};
        width = std::max(width, 2 * margin + metrics.horizontalAdvance(caption));
        if (!options.title.empty()) {
            QFont bold;
            bold.setBold(true);
            width = std::max(width, 2 * margin + QFontMetrics(bold).horizontalAdvance(QString::fromStdString(options.title)));
        }
    }
    QImage image(width, margin + titleHeight + mapH + captionHeight + margin, QImage::Format_RGB32);
    image.fill(Qt::white);
    const int top = margin + titleHeight, barX = margin + mapW + margin;
    // The map, row 0 at the bottom (drawn last line); NaN (outside the pupil) stays white.
    for (int row = 0; row < phase.height; ++row)
        for (int col = 0; col < phase.width; ++col) {
            const double v = values[size_t(row) * size_t(phase.width) + size_t(col)];
            if (!std::isfinite(v))
                continue;
            const auto c = colorMapRgb(map, (v - lo) / (hi - lo));
            const QRgb rgb = qRgb(c[0], c[1], c[2]);
            const int y0 = top + (phase.height - 1 - row) * scale, x0 = margin + col * scale;
            for (int dy = 0; dy < scale; ++dy) {
                QRgb* line = reinterpret_cast<QRgb*>(image.scanLine(y0 + dy));
                for (int dx = 0; dx < scale; ++dx)
                    line[x0 + dx] = rgb;
            }
        }
    // The colour bar: top = hi.
    for (int y = 0; y < mapH; ++y) {
        const auto c = colorMapRgb(map, 1.0 - (y + 0.5) / mapH);
        QRgb* line = reinterpret_cast<QRgb*>(image.scanLine(top + y));
        for (int x = 0; x < barWidth; ++x)
            line[barX + x] = qRgb(c[0], c[1], c[2]);
    }
    QPainter painter(&image);
    painter.setPen(QPen(Qt::black, 1));
    painter.drawRect(barX - 1, top - 1, barWidth + 1, mapH + 1);
    const std::vector<double> tickValues = colorBarTicks(lo, hi);
    QStringList tickTexts;
    for (double v : tickValues) {
        const int y = top + int(std::lround((hi - v) / (hi - lo) * (mapH - 1)));
        painter.drawLine(barX + barWidth, y, barX + barWidth + 5, y);
        const QString label = QString::number(v, 'g', 6);
        tickTexts << label;
        if (text)
            painter.drawText(QRect(barX + barWidth + 8, y - 10, labelWidth, 20), Qt::AlignLeft | Qt::AlignVCenter, label);
    }
    const QString barLabel = QString::fromStdString(colorBarLabel(options.unit));
    if (text) {
        // The bar's label, upright (reading bottom to top) beside the tick labels, centred on the bar.
        painter.save();
        painter.translate(barX + barWidth + 8 + labelWidth + barLabelWidth / 2, top + mapH / 2);
        painter.rotate(-90.0);
        painter.drawText(QRect(-mapH / 2 - 100, -barLabelWidth / 2, mapH + 200, barLabelWidth), Qt::AlignCenter, barLabel);
        painter.restore();
    }
    if (text) {
        QFont font = painter.font();
        if (!options.title.empty()) {
            QFont bold = font;
            bold.setBold(true);
            painter.setFont(bold);
            painter.drawText(QRect(margin, margin, image.width() - 2 * margin, titleHeight), Qt::AlignLeft | Qt::AlignVCenter,
                             QString::fromStdString(options.title));
            painter.setFont(font);
        }
        painter.drawText(QRect(margin, top + mapH + 4, image.width() - 2 * margin, captionHeight), Qt::AlignLeft | Qt::AlignVCenter, caption);
    }
    painter.end();
    image.setText(QStringLiteral("Unit"), QString::fromLatin1(phaseUnitName(options.unit)));
    image.setText(QStringLiteral("Range"), QStringLiteral("%1 .. %2").arg(lo, 0, 'g', 6).arg(hi, 0, 'g', 6));
    image.setText(QStringLiteral("ColorMap"), QString::fromLatin1(colorMapName(map)));
    image.setText(QStringLiteral("ColorBarLabel"), barLabel);
    image.setText(QStringLiteral("Ticks"), tickTexts.join(QLatin1Char(' ')));
    if (!text)
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
    const QImage image = renderPhaseImage(result.phaseMap, options);
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
