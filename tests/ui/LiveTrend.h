#pragma once
// What the Live tab's tests read off its coefficient trend (ui/LivePanel: one graph per Noll term, named "Z<j>").
#include "LivePanel.h"

#include <qcustomplot.h>

#include <QSlider>

#include <optional>

namespace wfs::test {

// The graph of Noll term `noll`, or null.
inline QCPGraph* termGraph(QCustomPlot* trend, int noll)
{
    for (int i = 0; i < trend->graphCount(); ++i)
        if (trend->graph(i)->name() == QStringLiteral("Z%1").arg(noll))
            return trend->graph(i);
    return nullptr;
}

// The last value of the trend of Noll term `noll`; none while it has no point.
inline std::optional<double> lastTrendValue(QCustomPlot* trend, int noll)
{
    QCPGraph* g = termGraph(trend, noll);
    if (!g || g->dataCount() == 0)
        return std::nullopt;
    return (g->data()->constEnd() - 1)->value;
}

// The live demo's slider of Noll term `noll`, or null.
inline QSlider* termSlider(wfs::ui::LivePanel* live, int noll)
{
    for (QSlider* s : live->findChildren<QSlider*>())
        if (s->property("nollIndex").toInt() == noll)
            return s;
    return nullptr;
}

} // namespace wfs::test
