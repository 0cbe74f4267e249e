#include "ColorMaps.h"

#include <map>

namespace wfs::ui {

QStringList colorMapNames()
{
    QStringList names;
    for (ColorMap map : colorMaps())
        names << QString::fromLatin1(colorMapName(map));
    return names;
}

const std::vector<std::pair<double, QColor>>& colorStops(ColorMap map)
{
    // The same tables as the exported PNG (core/io/ColorMap.h), so the screen and the file agree.
    static const std::map<ColorMap, std::vector<std::pair<double, QColor>>> stops = [] {
        std::map<ColorMap, std::vector<std::pair<double, QColor>>> all;
        for (ColorMap m : colorMaps())
            for (const auto& [t, rgb] : colorMapStops(m))
                all[m].emplace_back(t, QColor(rgb[0], rgb[1], rgb[2]));
        return all;
    }();
    return stops.at(map);
}

} // namespace wfs::ui
