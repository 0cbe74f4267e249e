#pragma once
// The colour maps of core (io/ColorMap.h: one enum, the tables and their names) as Qt colour stops
// and combo-box names for the image views.
#include "io/ColorMap.h"

#include <QColor>
#include <QString>
#include <QStringList>

#include <utility>
#include <vector>

namespace wfs::ui {

QStringList colorMapNames(); // core's names in enum order, for combo boxes
// Colour stops (position in [0, 1], colour) to interpolate linearly.
const std::vector<std::pair<double, QColor>>& colorStops(ColorMap map);

} // namespace wfs::ui
