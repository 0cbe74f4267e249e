#pragma once
// The colour maps of every picture the program draws: the exported PNG (render/PhaseImage.h) and the
// desktop program's image views (ui/ColorMaps.h turns these tables into Qt colour stops). One enum,
// one table per map, one place for the names.
#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace wfs {

enum class ColorMap {
    Viridis,   // perceptually uniform, sequential (matplotlib's viridis)
    Magma,     // perceptually uniform, sequential, black to pale yellow (matplotlib's magma)
    Gray,      // black to white
    Diverging, // blue - white - red (ColorBrewer RdBu), for residuals centred on zero
    Twilight,  // perceptually uniform, cyclic: equal colours at both ends, for wrapped phase
};

// Every map in enum order (combo boxes list them in this order).
const std::vector<ColorMap>& colorMaps();
// "viridis", "magma", "gray", "diverging", "twilight".
const char* colorMapName(ColorMap map);
// Whether the map meets itself at both ends.
bool isCyclic(ColorMap map);

using Rgb8 = std::array<std::uint8_t, 3>;
// The colour at t in [0, 1] (clamped; NaN gives mid grey), linearly interpolated in the map's table.
Rgb8 colorMapRgb(ColorMap map, double t);
// The map's table as stops (position in [0, 1], colour), first at 0 and last at 1, to interpolate
// linearly: the tables themselves for viridis, magma, gray and diverging; 33 samples of the cyclic map.
std::vector<std::pair<double, Rgb8>> colorMapStops(ColorMap map);

} // namespace wfs
