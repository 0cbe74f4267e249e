#include "io/ColorMap.h"

#include <algorithm>
#include <cmath>

namespace wfs {

namespace {

using Rgb = std::array<double, 3>; // 0..1 sRGB
struct Stop {
    double t;
    std::array<int, 3> rgb; // 0..255
};

// viridis (van der Walt, Smith and Firing, matplotlib 2.0; CC0) at t = 0, 1/8, ..., 1, interpolated
// linearly in sRGB: within about 2/255 of the full 256-entry table.
const std::vector<Stop> kViridis = {
    {0.0, {0x44, 0x01, 0x54}},   {0.125, {0x47, 0x2D, 0x7B}}, {0.25, {0x3B, 0x52, 0x8B}},
    {0.375, {0x2C, 0x72, 0x8E}}, {0.5, {0x21, 0x91, 0x8C}},   {0.625, {0x28, 0xAE, 0x80}},
    {0.75, {0x5E, 0xC9, 0x62}},  {0.875, {0xAD, 0xDC, 0x30}}, {1.0, {0xFD, 0xE7, 0x25}},
};
// magma (matplotlib; CC0) at t = 0, 1/8, ..., 1.
const std::vector<Stop> kMagma = {
    {0.0, {0, 0, 4}},        {0.125, {28, 16, 68}},  {0.25, {79, 18, 123}},    {0.375, {129, 37, 129}}, {0.5, {181, 54, 122}},
    {0.625, {229, 80, 100}}, {0.75, {251, 135, 97}}, {0.875, {254, 194, 135}}, {1.0, {252, 253, 191}},
};
const std::vector<Stop> kGray = {{0.0, {0, 0, 0}}, {1.0, {255, 255, 255}}};
// ColorBrewer RdBu (reversed: blue for negative), five classes.
const std::vector<Stop> kDiverging = {
    {0.0, {5, 48, 97}}, {0.25, {67, 147, 195}}, {0.5, {247, 247, 247}}, {0.75, {214, 96, 77}}, {1.0, {103, 0, 31}},
};

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
            length[size_t(i)] = length[size_t(i - 1)]
                                + std::sqrt((p[0] - q[0]) * (p[0] - q[0]) + (p[1] - q[1]) * (p[1] - q[1]) + (p[2] - q[2]) * (p[2] - q[2]));
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

const std::vector<Stop>& stopsOf(ColorMap map)
{
    switch (map) {
    case ColorMap::Magma:
        return kMagma;
    case ColorMap::Gray:
        return kGray;
    case ColorMap::Diverging:
        return kDiverging;
    case ColorMap::Viridis:
    case ColorMap::Twilight:
        break;
    }
    return kViridis;
}

Rgb8 rounded(const Rgb& c)
{
    return {std::uint8_t(std::lround(255.0 * c[0])), std::uint8_t(std::lround(255.0 * c[1])), std::uint8_t(std::lround(255.0 * c[2]))};
}

} // namespace

const std::vector<ColorMap>& colorMaps()
{
    static const std::vector<ColorMap> all = {ColorMap::Viridis, ColorMap::Magma, ColorMap::Gray, ColorMap::Diverging, ColorMap::Twilight};
    return all;
}

const char* colorMapName(ColorMap map)
{
    switch (map) {
    case ColorMap::Viridis:
        return "viridis";
    case ColorMap::Magma:
        return "magma";
    case ColorMap::Gray:
        return "gray";
    case ColorMap::Diverging:
        return "diverging";
    case ColorMap::Twilight:
        return "twilight";
    }
    return "viridis";
}

bool isCyclic(ColorMap map)
{
    return map == ColorMap::Twilight;
}

Rgb8 colorMapRgb(ColorMap map, double t)
{
    if (std::isnan(t))
        return {128, 128, 128};
    t = std::clamp(t, 0.0, 1.0);
    Rgb c;
    if (map == ColorMap::Twilight) {
        static const CyclicTable table;
        const double x = t * double(table.colours.size() - 1);
        const size_t i = std::min(size_t(x), table.colours.size() - 2);
        const double f = x - double(i);
        for (int k = 0; k < 3; ++k)
            c[size_t(k)] = (1.0 - f) * table.colours[i][size_t(k)] + f * table.colours[i + 1][size_t(k)];
        return rounded(c);
    }
    const std::vector<Stop>& stops = stopsOf(map); // equally spaced
    const double x = t * double(stops.size() - 1);
    const size_t i = std::min(size_t(x), stops.size() - 2);
    const double f = x - double(i);
    for (int k = 0; k < 3; ++k)
        c[size_t(k)] = ((1.0 - f) * stops[i].rgb[size_t(k)] + f * stops[i + 1].rgb[size_t(k)]) / 255.0;
    return rounded(c);
}

std::vector<std::pair<double, Rgb8>> colorMapStops(ColorMap map)
{
    std::vector<std::pair<double, Rgb8>> stops;
    if (map == ColorMap::Twilight) {
        for (int i = 0; i <= 32; ++i)
            stops.emplace_back(i / 32.0, colorMapRgb(map, i / 32.0));
        return stops;
    }
    for (const Stop& s : stopsOf(map))
        stops.emplace_back(s.t, Rgb8{std::uint8_t(s.rgb[0]), std::uint8_t(s.rgb[1]), std::uint8_t(s.rgb[2])});
    return stops;
}

} // namespace wfs
