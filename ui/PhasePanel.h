#pragma once
// The phase map: the fitted wavefront over the model's pupil (nothing outside it), in waves or nm,
// with a colour map of the user's choice (viridis, a diverging map centred on zero, or the cyclic map
// when wrapped to one wave). Beside it, when the fit has them, the pupil's field amplitude and the
// zonal phase that the Zernike terms do not describe (absent otherwise, not empty placeholders).
#include "ImageView.h"

#include "fit/Results.h"

#include <QWidget>

class QCheckBox;
class QComboBox;
class QGridLayout;

namespace wfs::ui {

// Axes in pupil radii for a map of the pupil (nullopt when its geometry is unknown): the phase, the pupil
// maps, and the phase difference of two runs.
std::optional<AxisScale> pupilAxisScale(const PupilMapGeometry& geometry);

class PhasePanel : public QWidget {
    Q_OBJECT

public:
    explicit PhasePanel(QWidget* parent = nullptr);
    void setPhase(const Image& radians, double wavelengthMetres); // NaN outside the pupil
    // The phase the headline figures describe (FitResult::aberrationMap: `removed` named, e.g. "piston, tip, tilt,
    // defocus"), shown instead of the phase while "remove tip, tilt (defocus)" is ticked (the default). An empty image
    // hides the switch. Set after setPhase; setPhase alone clears it.
    void setAberration(const Image& radians, const QString& removed);
    // The fit's pupil amplitude (relative) and zonal remainder (radians), NaN outside the pupil; an
    // empty image hides its view.
    void setPupilMaps(const Image& amplitude, const Image& remainderRadians);
    // Where the maps' pixels lie in the pupil (core's phaseMapGeometry): the axes then run in
    // normalised pupil coordinates (-1 .. 1); spacing 0 = unknown, the axes count pupil pixels. Kept
    // until set again or cleared.
    void setPupilGeometry(const PupilMapGeometry& geometry);
    void clear(const QString& message); // shows `message` where the map will be; hides the pupil maps
    // The map's title ("Phase" unless set; e.g. live mode's "Phase difference: stack 9 − stack 4").
    void setTitle(const QString& title);
    ImageView* view() const { return m_view; }
    ImageView* amplitudeView() const { return m_amplitudeView; }
    ImageView* remainderView() const { return m_remainderView; }
    bool nanometres() const;
    bool wrapped() const;

protected:
    void resizeEvent(QResizeEvent* event) override;

private:
    void show();
    void arrange(); // the views shown, as large as the room allows

    QComboBox *m_unit, *m_colorMap;
    QCheckBox *m_wrap, *m_flatten;
    ImageView *m_view, *m_amplitudeView, *m_remainderView;
    QGridLayout* m_grid;
    QString m_arrangement; // the grid as laid out last ("" = not yet)
    QString m_emptyMessage;
    QString m_title;
    PupilMapGeometry m_geometry;
    Image m_radians, m_aberration, m_amplitude, m_remainder;
    QString m_removed;
    double m_wavelength = 0.0;
};

} // namespace wfs::ui
