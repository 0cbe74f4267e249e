#pragma once
// The phase map: the fitted wavefront over the model's pupil (nothing outside it), in waves or nm,
// with a colour map of the user's choice (viridis, a diverging map centred on zero, or the cyclic map
// when wrapped to one wave).
#include "ImageView.h"

#include <QWidget>

class QCheckBox;
class QComboBox;

namespace wfs::ui {

class PhasePanel : public QWidget {
    Q_OBJECT

public:
    explicit PhasePanel(QWidget* parent = nullptr);
    void setPhase(const Image& radians, double wavelengthMetres); // NaN outside the pupil
    void clear(const QString& message);
    ImageView* view() const { return m_view; }
    bool nanometres() const;
    bool wrapped() const;

private:
    void show();

    QComboBox *m_unit, *m_colorMap;
    QCheckBox* m_wrap;
    ImageView* m_view;
    Image m_radians;
    double m_wavelength = 0.0;
};

} // namespace wfs::ui
