#include "io/Exports.h"

#include "io/OutputTransaction.h"

#include "io/ResultJson.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

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
