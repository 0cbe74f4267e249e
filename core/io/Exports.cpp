#include "io/Exports.h"

#include "io/OutputTransaction.h"

#include "io/ResultJson.h"

#include <QFile>
#include <QFontMetrics>
#include <QGuiApplication>
#include <QBuffer>
#include <QImageWriter>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QPainter>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <stdexcept>

namespace wfs {

// ---- Colour maps --------------------------------------------------------------------------------

const char* colorMapName(ColorMap map)
{
    return map == ColorMap::Viridis ? "viridis" : "twilight";
}

namespace {

using Rgb = std::array<double, 3>; // 0..1 sRGB

// viridis (van der Walt, Smith and Firing, matplotlib 2.0; CC0) at t = 0, 1/8, ..., 1, interpolated
// linearly in sRGB: within about 2/255 of the full 256-entry table.
constexpr std::array<std::array<int, 3>, 9> kViridisStops = {{
    {0x44, 0x01, 0x54}, {0x47, 0x2D, 0x7B}, {0x3B, 0x52, 0x8B}, {0x2C, 0x72, 0x8E}, {0x21, 0x91, 0x8C},
    {0x28, 0xAE, 0x80}, {0x5E, 0xC9, 0x62}, {0xAD, 0xDC, 0x30}, {0xFD, 0xE7, 0x25},
}};

double srgbFromLinear(double v)
{
    v = std::clamp(v, 0.0, 1.0);
    return v <= 0.0031308 ? 12.92 * v : 1.055 * std::pow(v, 1.0 / 2.4) - 0.055;
}

Rgb srgbFromLab(double l, double a, double b)
{
    // CIELAB (D65) -> XYZ -> linear sRGB -> sRGB.
    const double fy = (l + 16.0) / 116.0, fx = fy + a / 500.0, fz = fy - b / 200.0;
    auto finv = [](double t) { return t > 6.0 / 29.0 ? t * t * t : 3.0 * (6.0 / 29.0) * (6.0 / 29.0) * (t - 4.0 / 29.0); };
    const double x = 0.95047 * finv(fx), y = finv(fy), z = 1.08883 * finv(fz);
    const double r = 3.2404542 * x - 1.5371385 * y - 0.4985314 * z;
    const double g = -0.9692660 * x + 1.8760108 * y + 0.0415560 * z;
    const double bl = 0.0556434 * x - 0.2040259 * y + 1.0572252 * z;
    return {srgbFromLinear(r), srgbFromLinear(g), srgbFromLinear(bl)};
}

// The cyclic map: a closed path in CIELAB, light at both ends (phase +-pi), through blue to dark at
// the middle (phase 0 when centred) and back through red, re-parametrised by CIE76 colour distance
// so that equal steps of phase are equal steps of colour. Built once.
struct CyclicTable {
    std::array<Rgb, 512> colours;
    CyclicTable()
    {
        constexpr int fine = 8192;
        std::vector<std::array<double, 3>> lab(fine + 1);
        for (int i = 0; i <= fine; ++i) {
            const double t = double(i) / fine;
            const double l = 52.0 + 33.0 * std::cos(2.0 * M_PI * t);
            const double chroma = 42.0 * std::abs(std::sin(2.0 * M_PI * t));
            const double hue = (t < 0.5 ? 285.0 : 35.0) * M_PI / 180.0;
            lab[size_t(i)] = {l, chroma * std::cos(hue), chroma * std::sin(hue)};
        }
        std::vector<double> length(fine + 1, 0.0);
        for (int i = 1; i <= fine; ++i) {
            const auto& p = lab[size_t(i - 1)];
            const auto& q = lab[size_t(i)];
            length[size_t(i)] = length[size_t(i - 1)] + std::sqrt((p[0] - q[0]) * (p[0] - q[0]) + (p[1] - q[1]) * (p[1] - q[1]) + (p[2] - q[2]) * (p[2] - q[2]));
        }
        size_t j = 0;
        for (size_t k = 0; k < colours.size(); ++k) {
            const double target = length.back() * double(k) / double(colours.size() - 1);
            while (j + 1 < length.size() - 1 && length[j + 1] < target)
                ++j;
            const double span = length[j + 1] - length[j];
            const double f = span > 0.0 ? (target - length[j]) / span : 0.0;
            const auto& p = lab[j];
            const auto& q = lab[j + 1];
            colours[k] = srgbFromLab(p[0] + f * (q[0] - p[0]), p[1] + f * (q[1] - p[1]), p[2] + f * (q[2] - p[2]));
        }
    }
};

} // namespace

std::array<std::uint8_t, 3> colorMapRgb(ColorMap map, double t)
{
    if (std::isnan(t))
        return {128, 128, 128};
    t = std::clamp(t, 0.0, 1.0);
    Rgb c;
    if (map == ColorMap::Viridis) {
        const double x = t * double(kViridisStops.size() - 1);
        const size_t i = std::min(size_t(x), kViridisStops.size() - 2);
        const double f = x - double(i);
        for (int k = 0; k < 3; ++k)
            c[size_t(k)] = ((1.0 - f) * kViridisStops[i][size_t(k)] + f * kViridisStops[i + 1][size_t(k)]) / 255.0;
    } else {
        static const CyclicTable table;
        const double x = t * double(table.colours.size() - 1);
        const size_t i = std::min(size_t(x), table.colours.size() - 2);
        const double f = x - double(i);
        for (int k = 0; k < 3; ++k)
            c[size_t(k)] = (1.0 - f) * table.colours[i][size_t(k)] + f * table.colours[i + 1][size_t(k)];
    }
    return {std::uint8_t(std::lround(255.0 * c[0])), std::uint8_t(std::lround(255.0 * c[1])), std::uint8_t(std::lround(255.0 * c[2]))};
}

// ---- FITS ---------------------------------------------------------------------------------------

const char* phaseUnitName(PhaseUnit unit)
{
    switch (unit) {
    case PhaseUnit::Waves:
        return "waves";
    case PhaseUnit::Nanometres:
        return "nm";
    case PhaseUnit::Radians:
        return "rad";
    }
    return "?";
}

namespace {

double phaseFactor(PhaseUnit unit, double wavelength)
{
    switch (unit) {
    case PhaseUnit::Waves:
        return 1.0 / (2.0 * M_PI);
    case PhaseUnit::Nanometres:
        if (!(wavelength > 0.0))
            throw std::runtime_error("a phase in nm needs the wavelength");
        return wavelength * 1e9 / (2.0 * M_PI);
    case PhaseUnit::Radians:
        break;
    }
    return 1.0;
}

std::string wavelengthText(double wavelength)
{
    char text[64];
    std::snprintf(text, sizeof text, "%.1f nm", wavelength * 1e9);
    return text;
}

} // namespace

std::vector<FitsKeyword> resultKeywords(const FitResult& r, const ExportContext& context, const std::string& bunit)
{
    std::vector<FitsKeyword> k = {
        {"BUNIT", bunit, bunit == "rad" ? "phase in radians; waves = rad / (2 pi)" : "unit of the pixel values"},
        {"WAVELENG", r.wavelength, "[m] wavelength"},
        {"ZORDERNG", std::string(zernike::orderingName(r.ordering)), "Zernike ordering (noll or ansi)"},
        {"ZNORM", std::string(zernike::normalizationName(r.normalization)), "Zernike normalisation (rms: Noll, unit: R(1)=1)"},
        {"ZORDER", (long long)(r.coefficients.empty() ? 0 : r.coefficients.back().mode.n), "highest radial order"},
        {"ZUNIT", std::string("waves"), "unit of the ZCk coefficients"},
        {"RMSWAVE", r.rmsWaves, r.defocusRemoved ? "[waves] RMS, piston/tip/tilt/defocus removed" : "[waves] RMS, piston/tip/tilt removed"},
        {"PVWAVE", r.pvWaves, "[waves] peak-to-valley wavefront error"},
        {"STREHL", r.strehl, "Strehl ratio from the model PSF peak"},
        {"FINLCOST", r.solver.finalCost, "final objective value"},
        {"ITERATNS", (long long)r.solver.iterations, "solver iterations"},
        {"TERMINAT", std::string(terminationName(r.solver.termination)), "solver termination"},
        {"BACKEND", r.backend.backend, "model backend"},
        {"ROWORDER", std::string("bottom-up"), "row 0 is the bottom row, x right, y up"},
        {"PUPILORI", std::string("x right, y up, angle CCW from +x"), "pupil coordinates, radius 1 at the edge"},
    };
    if (context.pupilSampleSpacing > 0.0)
        k.push_back({"PUPSAMP", context.pupilSampleSpacing, "pupil radii per pixel"});
    if (context.samplingQ > 0.0)
        k.push_back({"SAMPLING", context.samplingQ, "Q = lambda F# / pixel of the data"});
    if (context.pupil) {
        k.push_back({"OBSCUR", context.pupil->obscuration, "central obscuration / pupil diameter"});
        k.push_back({"SPIDERS", (long long)context.pupil->spiderCount, "number of spider vanes"});
        k.push_back({"SPIDERW", context.pupil->spiderWidth, "vane width / pupil diameter"});
        k.push_back({"SPIDERA", context.pupil->spiderAngleDeg, "[deg] first vane angle from +x"});
    }
    for (const CoefficientResult& c : r.coefficients) {
        k.push_back({"ZC" + std::to_string(c.index), c.waves, "[waves] Z(" + std::to_string(c.mode.n) + "," + std::to_string(c.mode.m) + ") " + c.name});
        if (std::isfinite(c.uncertaintyWaves) && c.free)
            k.push_back({"ZE" + std::to_string(c.index), c.uncertaintyWaves, "[waves] 1-sigma uncertainty of ZC" + std::to_string(c.index)});
    }
    for (size_t i = 0; i < context.inputs.size() && i < 999; ++i)
        k.push_back({"INPUT" + std::to_string(i + 1), context.inputs[i], "input file"});
    return k;
}

QByteArray phaseFitsBytes(const FitResult& result, const ExportContext& context, const PhaseFitsOptions& options)
{
    if (result.phaseMap.isEmpty())
        throw std::runtime_error("the result has no phase map");
    Image map = result.phaseMap;
    const double factor = phaseFactor(options.unit, result.wavelength);
    for (double& v : map.pixels)
        v *= factor;
    return QByteArray::fromStdString(fitsBytes({map}, resultKeywords(result, context, phaseUnitName(options.unit)), options.float32));
}

QByteArray planesFitsBytes(const FitResult& result, const ExportContext& context, bool float32, bool residual)
{
    if (result.planes.empty() || result.planes.front().model.isEmpty())
        throw std::runtime_error("the result has no model images");
    std::vector<Image> images;
    for (const PlaneResult& p : result.planes)
        images.push_back(residual ? p.residual : p.model);
    std::vector<FitsKeyword> keywords = resultKeywords(result, context, "counts");
    keywords.push_back({"IMAGETYP", std::string(residual ? "residual" : "model"),
                        residual ? "data - model, NaN where not fitted" : "model intensity at the solution"});
    for (size_t k = 0; k < result.planes.size() && k < 999; ++k)
        keywords.push_back({"PLANE" + std::to_string(k + 1), result.planes[k].diversity, "diversity of slice " + std::to_string(k + 1)});
    return QByteArray::fromStdString(fitsBytes(images, keywords, float32));
}

namespace {
// Encodes with `make` (whose errors get the path in front) and writes all or nothing.
template <class Make>
void writeBytes(const std::string& path, bool overwrite, Make make)
{
    QByteArray bytes;
    try {
        bytes = make();
    } catch (const std::runtime_error& e) {
        throw std::runtime_error(path + ": " + e.what());
    }
    writeFileAtomically(path, bytes, overwrite);
}
} // namespace

void writePhaseFits(const std::string& path, const FitResult& result, const ExportContext& context, const PhaseFitsOptions& options)
{
    writeBytes(path, options.overwrite, [&] { return phaseFitsBytes(result, context, options); });
}

void writeModelFits(const std::string& path, const FitResult& result, const ExportContext& context, bool float32, bool overwrite)
{
    writeBytes(path, overwrite, [&] { return planesFitsBytes(result, context, float32, false); });
}

void writeResidualFits(const std::string& path, const FitResult& result, const ExportContext& context, bool float32, bool overwrite)
{
    writeBytes(path, overwrite, [&] { return planesFitsBytes(result, context, float32, true); });
}

// ---- PNG ----------------------------------------------------------------------------------------

namespace {

// "Nice" tick values covering [lo, hi].
std::vector<double> ticks(double lo, double hi)
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

} // namespace

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
    const int margin = 16, barWidth = 24, labelWidth = text ? 90 : 0;
    const int titleHeight = text && !options.title.empty() ? 28 : 0;
    const int captionHeight = text ? 24 : 0;
    QString caption = QStringLiteral("phase in %1").arg(QString::fromLatin1(phaseUnitName(options.unit)));
    if (options.wavelength > 0.0)
        caption += QStringLiteral(" (wavelength %1)").arg(QString::fromStdString(wavelengthText(options.wavelength)));
    caption += options.wrapped ? QStringLiteral(", wrapped to one wave, cyclic colour map") : QStringLiteral(", viridis");
    caption += QStringLiteral("; y up, row 0 at the bottom");
    int width = margin + mapW + margin + barWidth + 8 + labelWidth + margin;
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
    const std::vector<double> tickValues = ticks(lo, hi);
    for (double v : tickValues) {
        const int y = top + int(std::lround((hi - v) / (hi - lo) * (mapH - 1)));
        painter.drawLine(barX + barWidth, y, barX + barWidth + 5, y);
        if (text) {
            const QString label = QString::number(v, 'g', 3);
            painter.drawText(QRect(barX + barWidth + 8, y - 10, labelWidth, 20), Qt::AlignLeft | Qt::AlignVCenter, label);
        }
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
    writeBytes(path, overwrite, [&] { return phasePngBytes(result, options); });
}

// ---- Coefficients -------------------------------------------------------------------------------

QByteArray coefficientsJson(const FitResult& r)
{
    const QJsonObject o{
        {QStringLiteral("convention"), conventionJson(r.ordering, r.normalization, r.wavelength)},
        {QStringLiteral("coefficients"), coefficientsJsonArray(r)},
        {QStringLiteral("rms_waves"), r.rmsWaves},
        {QStringLiteral("pv_waves"), r.pvWaves},
        {QStringLiteral("strehl"), r.strehl},
    };
    return QJsonDocument(o).toJson();
}

QByteArray coefficientsCsvBytes(const FitResult& result)
{
    return coefficientsCsv(result).toUtf8();
}

} // namespace wfs
