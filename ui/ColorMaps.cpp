#include "ColorMaps.h"

#include "io/Exports.h"

namespace wfs::ui {

QStringList colorMapNames()
{
    return {QStringLiteral("viridis"), QStringLiteral("magma"), QStringLiteral("gray"), QStringLiteral("diverging"), QStringLiteral("cyclic")};
}

const char* colorMapName(ColorMap map)
{
    static const char* names[] = {"viridis", "magma", "gray", "diverging", "cyclic"};
    return names[int(map)];
}

bool isCyclic(ColorMap map)
{
    return map == ColorMap::Cyclic;
}

const std::vector<std::pair<double, QColor>>& colorStops(ColorMap map)
{
    // Viridis and the cyclic map come from the export code's tables (io/Exports.h), so the screen and
    // the exported PNG agree; magma, grey and the blue-white-red diverging map are display-only.
    auto sampled = [](wfs::ColorMap map) {
        std::vector<std::pair<double, QColor>> stops;
        for (int i = 0; i <= 32; ++i) {
            const auto rgb = wfs::colorMapRgb(map, i / 32.0);
            stops.emplace_back(i / 32.0, QColor(rgb[0], rgb[1], rgb[2]));
        }
        return stops;
    };
    static const std::vector<std::pair<double, QColor>> viridis = sampled(wfs::ColorMap::Viridis);
    static const std::vector<std::pair<double, QColor>> cyclic = sampled(wfs::ColorMap::Twilight);
    static const std::vector<std::pair<double, QColor>> magma = {
        {0.0, QColor(0, 0, 4)},        {0.125, QColor(28, 16, 68)},   {0.25, QColor(79, 18, 123)},
        {0.375, QColor(129, 37, 129)}, {0.5, QColor(181, 54, 122)},   {0.625, QColor(229, 80, 100)},
        {0.75, QColor(251, 135, 97)},  {0.875, QColor(254, 194, 135)}, {1.0, QColor(252, 253, 191)}};
    static const std::vector<std::pair<double, QColor>> gray = {{0.0, QColor(0, 0, 0)}, {1.0, QColor(255, 255, 255)}};
    static const std::vector<std::pair<double, QColor>> diverging = {
        {0.0, QColor(5, 48, 97)}, {0.25, QColor(67, 147, 195)}, {0.5, QColor(247, 247, 247)},
        {0.75, QColor(214, 96, 77)}, {1.0, QColor(103, 0, 31)}};
    switch (map) {
    case ColorMap::Viridis:
        return viridis;
    case ColorMap::Magma:
        return magma;
    case ColorMap::Gray:
        return gray;
    case ColorMap::Diverging:
        return diverging;
    case ColorMap::Cyclic:
        return cyclic;
    }
    return viridis;
}

} // namespace wfs::ui
