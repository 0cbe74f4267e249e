#pragma once
// Zernike coefficients as horizontal bars, one row per term named by its index and name, in waves or
// nm, with one-sigma error bars, the truth as markers when known, the legend above the axes, and a
// tooltip with index, n, m and the value in waves and nm.
#include "optics/Zernike.h"

#include <QWidget>

#include <optional>
#include <vector>

class QCPAxis;
class QCustomPlot;
class QComboBox;
class QLabel;
class QMouseEvent;
class QRect;
class QScrollArea;
class QStackedWidget;
template <typename T>
class QList;

namespace wfs::ui {

struct ChartTerm {
    int index = 0; // in the ordering
    ZernikeMode mode;
    double waves = 0.0;
    std::optional<double> truthWaves;
    double sigmaWaves = 0.0; // one standard deviation; 0 or NaN = not drawn
};

// Where the tick labels of `axis` were drawn at its plot's last replot, in the plot's pixels, computed as
// QCustomPlot places them (outside, unrotated labels; a label that would cross the plot's border is not
// drawn and not listed). None when the axis or its labels are hidden. What tests check for overlaps.
QList<QRect> tickLabelRects(const QCPAxis* axis);
// The same for every visible axis of the plot's main axis rectangle.
QList<QRect> tickLabelRects(const QCustomPlot* plot);

// A chart with one category per row along `rowAxis` (terms down a vertical axis) keeps its rows at
// least a label's height apart: the plot's minimum height grows with the rows, and `scroll`, which holds
// the plot, scrolls the chart as a whole where the space is shorter. Call whenever the rows change.
void keepRowsApart(QScrollArea* scroll, QCustomPlot* plot, QCPAxis* rowAxis, int rows);

// A centred sentence in place of an empty chart: what to do to fill it.
QLabel* makeHint(const QString& text, QWidget* parent);

// A Zernike term's name short enough for a row label beside bars ("Vert. coma"); tooltips have the full name.
QString shortName(const ZernikeMode& mode);

class ZernikeChart : public QWidget {
    Q_OBJECT

public:
    explicit ZernikeChart(QWidget* parent = nullptr);
    void setTerms(const std::vector<ChartTerm>& terms, double wavelengthMetres, ZernikeOrdering ordering);
    void clear();
    bool showsNanometres() const;
    QCustomPlot* plot() const { return m_plot; }
    QString hintShown() const;                  // the sentence shown instead of the chart while it has no terms; empty otherwise
    QString toolTipAt(double coordinate) const; // the tooltip of the row at a key-axis coordinate

private:
    void rebuild();
    void showToolTip(QMouseEvent* event);

    QCustomPlot* m_plot;
    QComboBox* m_unit;
    QWidget* m_unitBar;
    QLabel* m_hint;
    QScrollArea* m_scroll;
    QStackedWidget* m_pages;
    std::vector<ChartTerm> m_terms;
    double m_wavelength = 0.0;
    ZernikeOrdering m_ordering = ZernikeOrdering::Noll;
    int m_shownCount = -1;
};

} // namespace wfs::ui
