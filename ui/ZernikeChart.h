#pragma once
// Zernike coefficients as bars with their names, in waves or nm, with the truth overlaid when known.
#include "optics/Zernike.h"

#include <QWidget>

#include <optional>
#include <vector>

class QCustomPlot;
class QComboBox;

namespace wfs::ui {

struct ChartTerm {
    int index = 0;        // in the ordering
    ZernikeMode mode;
    double waves = 0.0;
    std::optional<double> truthWaves;
};

class ZernikeChart : public QWidget {
    Q_OBJECT

public:
    explicit ZernikeChart(QWidget* parent = nullptr);
    void setTerms(const std::vector<ChartTerm>& terms, double wavelengthMetres, ZernikeOrdering ordering);
    void clear();
    bool showsNanometres() const;

private:
    void rebuild();

    QCustomPlot* m_plot;
    QComboBox* m_unit;
    std::vector<ChartTerm> m_terms;
    double m_wavelength = 0.0;
    ZernikeOrdering m_ordering = ZernikeOrdering::Noll;
    int m_shownCount = -1;
};

} // namespace wfs::ui
