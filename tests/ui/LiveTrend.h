#pragma once
// What the Live tab's tests read off its coefficient trend (ui/LivePanel: one graph per Noll term, named "Z<j>").
#include <qcustomplot.h>

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

} // namespace wfs::test
