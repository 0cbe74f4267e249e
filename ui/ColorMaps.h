#pragma once
// Colour maps for images: perceptually uniform sequential maps, a diverging one for residuals and a
// cyclic one for wrapped phase.
#include <QColor>
#include <QString>
#include <QStringList>

#include <utility>
#include <vector>

namespace wfs::ui {

enum class ColorMap { Viridis, Magma, Gray, Diverging, Cyclic };

QStringList colorMapNames(); // in enum order, for combo boxes
const char* colorMapName(ColorMap map);
// Colour stops (position in [0, 1], colour) to interpolate linearly.
const std::vector<std::pair<double, QColor>>& colorStops(ColorMap map);
bool isCyclic(ColorMap map);

} // namespace wfs::ui
