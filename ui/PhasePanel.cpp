#include "PhasePanel.h"

#include <QCheckBox>
#include <QComboBox>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QResizeEvent>
#include <QVBoxLayout>

#include <cmath>

namespace wfs::ui {

PhasePanel::PhasePanel(QWidget* parent)
    : QWidget(parent)
    , m_unit(new QComboBox(this))
    , m_colorMap(new QComboBox(this))
    , m_wrap(new QCheckBox(tr("wrap to one wave"), this))
    , m_flatten(new QCheckBox(tr("flatten"), this))
    , m_view(new ImageView(this))
    , m_amplitudeView(new ImageView(this))
    , m_remainderView(new ImageView(this))
    , m_grid(new QGridLayout)
{
    auto* layout = new QVBoxLayout(this);
    auto* bar = new QHBoxLayout;
    m_unit->addItems({tr("waves"), tr("nm")});
    for (QComboBox* box : {m_unit, m_colorMap}) { // never cut their text
        box->setSizeAdjustPolicy(QComboBox::AdjustToContents);
        box->setSizePolicy(QSizePolicy::Minimum, QSizePolicy::Fixed);
    }
    m_unit->setToolTip(tr("Unit of the phase and of the zonal remainder, at the fit's wavelength"));
    m_colorMap->addItems({tr("viridis"), tr("diverging (0 at the centre)")});
    m_colorMap->setToolTip(tr("Wrapped phase always uses the cyclic map"));
    bar->addWidget(new QLabel(tr("unit:"), this));
    bar->addWidget(m_unit);
    bar->addWidget(new QLabel(tr("colour map:"), this));
    bar->addWidget(m_colorMap);
    bar->addWidget(m_wrap);
    bar->addWidget(m_flatten);
    bar->addStretch();
    m_flatten->setObjectName(QStringLiteral("phaseFlatten"));
    m_flatten->setChecked(true);
    m_flatten->hide();
    layout->addLayout(bar);
    m_view->setObjectName(QStringLiteral("phaseView"));
    m_amplitudeView->setObjectName(QStringLiteral("amplitudeView"));
    m_amplitudeView->setToolTip(tr("The pupil's field amplitude (relative; the planes' flux carries the scale), NaN outside the pupil"));
    m_amplitudeView->setColorMap(ColorMap::Viridis);
    m_remainderView->setObjectName(QStringLiteral("zonalRemainderView"));
    m_remainderView->setToolTip(tr("The zonal phase less its projection onto the Zernike terms up to the fitted order: "
                                   "what those terms do not describe (its RMS is in the results)"));
    m_remainderView->setColorMap(ColorMap::Diverging);
    for (ImageView* view : {m_view, m_amplitudeView, m_remainderView})
        view->setAxisLabels(tr("x (pupil pixel)"), tr("y (pupil pixel)"));
    m_view->setTitle(tr("Phase"));
    m_amplitudeView->setTitle(tr("Pupil amplitude"));
    m_remainderView->setTitle(tr("Zonal remainder"));
    m_amplitudeView->hide();
    m_remainderView->hide();
    m_grid->setContentsMargins(0, 0, 0, 0);
    layout->addLayout(m_grid, 1);
    arrange();
    connect(m_unit, &QComboBox::currentIndexChanged, this, &PhasePanel::show);
    connect(m_colorMap, &QComboBox::currentIndexChanged, this, &PhasePanel::show);
    connect(m_flatten, &QCheckBox::toggled, this, &PhasePanel::show);
    connect(m_wrap, &QCheckBox::toggled, this, [this](bool wrapped) {
        m_colorMap->setEnabled(!wrapped);
        show();
    });
    clear(tr("Open files or try the demo, then start a fit: the fitted phase appears here"));
}

std::optional<AxisScale> pupilAxisScale(const PupilMapGeometry& geometry)
{
    if (!(geometry.spacing > 0))
        return std::nullopt;
    // On a grid whose rows run along x (the OOF preset) the map's columns are y: say so on the axes.
    const QString across = geometry.columnsAlongX ? QObject::tr("x (pupil radius)") : QObject::tr("y (pupil radius)");
    const QString up = geometry.columnsAlongX ? QObject::tr("y (pupil radius)") : QObject::tr("x (pupil radius)");
    return AxisScale{geometry.firstColumn, geometry.firstRow, geometry.spacing, across, up, QObject::tr("pupil radii")};
}

void PhasePanel::setPupilGeometry(const PupilMapGeometry& geometry)
{
    m_geometry = geometry;
    const std::optional<AxisScale> scale = pupilAxisScale(geometry);
    for (ImageView* view : {m_view, m_amplitudeView, m_remainderView})
        view->setAxisScale(scale);
}

bool PhasePanel::nanometres() const
{
    return m_unit->currentIndex() == 1 && m_wavelength > 0;
}

bool PhasePanel::wrapped() const
{
    return m_wrap->isChecked();
}

void PhasePanel::clear(const QString& message)
{
    m_radians = Image();
    setAberration(Image(), QString());
    m_emptyMessage = message;
    m_view->clear(message);
    setPupilGeometry(PupilMapGeometry());
    setPupilMaps(Image(), Image());
}

void PhasePanel::setPhase(const Image& radians, double wavelengthMetres)
{
    m_radians = radians;
    m_aberration = Image();
    m_flatten->hide();
    m_wavelength = wavelengthMetres;
    show();
}

void PhasePanel::setAberration(const Image& radians, const QString& removed)
{
    m_aberration = radians;
    m_removed = removed;
    m_flatten->setToolTip(
        tr("Show the phase the headline RMS, PV and Strehl describe: %1 removed (by least squares over the pupil)").arg(removed));
    m_flatten->setVisible(!radians.isEmpty());
    show();
}

void PhasePanel::setTitle(const QString& title)
{
    if (title == m_title)
        return;
    m_title = title;
    show();
}

void PhasePanel::setPupilMaps(const Image& amplitude, const Image& remainderRadians)
{
    m_amplitude = amplitude;
    m_remainder = remainderRadians;
    if (m_amplitude.isEmpty())
        m_amplitudeView->clear(QString());
    if (m_remainder.isEmpty())
        m_remainderView->clear(QString());
    m_amplitudeView->setVisible(!m_amplitude.isEmpty());
    m_remainderView->setVisible(!m_remainder.isEmpty());
    arrange();
    show();
}

void PhasePanel::resizeEvent(QResizeEvent* event)
{
    QWidget::resizeEvent(event);
    arrange();
}

void PhasePanel::arrange()
{
    // One view fills the room. Two sit side by side where the room is wider than tall, else one above
    // the other. Three: in a row where the room is very wide, in a column where it is very narrow,
    // otherwise the phase across the top and the two pupil maps below it.
    std::vector<ImageView*> shown = {m_view};
    for (ImageView* view : {m_amplitudeView, m_remainderView})
        if (!view->isHidden())
            shown.push_back(view);
    const double w = std::max(1, width()), h = std::max(1, height() - 40); // less the control bar
    QString arrangement;
    if (shown.size() == 1)
        arrangement = QStringLiteral("1");
    else if (shown.size() == 2)
        arrangement = w >= h ? QStringLiteral("2row") : QStringLiteral("2column");
    else if (w >= 2.2 * h)
        arrangement = QStringLiteral("3row");
    else if (w < 0.55 * h)
        arrangement = QStringLiteral("3column");
    else
        arrangement = QStringLiteral("3top");
    if (arrangement == m_arrangement && m_grid->count() == int(shown.size()))
        return;
    m_arrangement = arrangement;
    for (ImageView* view : {m_view, m_amplitudeView, m_remainderView})
        m_grid->removeWidget(view);
    for (int i = 0; i < 3; ++i) {
        m_grid->setColumnStretch(i, 0);
        m_grid->setRowStretch(i, 0);
    }
    const auto place = [this](ImageView* view, int row, int column, int columnSpan = 1) {
        m_grid->addWidget(view, row, column, 1, columnSpan);
        m_grid->setRowStretch(row, 1);
        m_grid->setColumnStretch(column, 1);
    };
    if (arrangement == QLatin1String("3top")) {
        place(shown[0], 0, 0, 2);
        place(shown[1], 1, 0);
        place(shown[2], 1, 1);
    } else {
        const bool row = arrangement.endsWith(QLatin1String("row")) || arrangement == QLatin1String("1");
        for (int i = 0; i < int(shown.size()); ++i)
            place(shown[size_t(i)], row ? 0 : i, row ? i : 0);
    }
}

void PhasePanel::show()
{
    // Unit conversion only: the phase and the remainder themselves (NaN outside the pupil) are core's.
    const double toUnit = (nanometres() ? m_wavelength * 1e9 : 1.0) / (2.0 * M_PI);
    const double wave = nanometres() ? m_wavelength * 1e9 : 1.0;
    const QString unit = nanometres() ? tr("nm") : tr("waves");
    if (!m_remainder.isEmpty()) {
        Image shown = m_remainder;
        double largest = 0.0;
        for (double& v : shown.pixels)
            if (std::isfinite(v)) {
                v *= toUnit;
                largest = std::max(largest, std::abs(v));
            }
        // A flat remainder (zonal maps a stopped run never moved) gets a readable scale of +-0.001 wave, not +-1e-12.
        const double extent = std::max(largest, 1e-3 * wave);
        m_remainderView->setImage(shown, tr("Zonal remainder"), unit, DisplayRange{-extent, extent}); // zero in the middle
    }
    if (!m_amplitude.isEmpty())
        m_amplitudeView->setImage(m_amplitude, tr("Pupil amplitude"), tr("relative amplitude"), std::nullopt);
    if (m_radians.isEmpty()) {
        m_view->clear(m_emptyMessage);
        return;
    }
    const bool flattened = m_flatten->isChecked() && !m_aberration.isEmpty();
    Image shown = flattened ? m_aberration : m_radians;
    double largest = 0.0;
    for (double& v : shown.pixels) {
        if (!std::isfinite(v))
            continue;
        v *= toUnit;
        if (wrapped())
            v -= wave * std::floor(v / wave + 0.5); // to [-1/2, 1/2) wave
        largest = std::max(largest, std::abs(v));
    }
    std::optional<DisplayRange> range;
    if (wrapped()) {
        m_view->setColorMap(ColorMap::Twilight);
        range = DisplayRange{-0.5 * wave, 0.5 * wave};
    } else if (m_colorMap->currentIndex() == 1) {
        m_view->setColorMap(ColorMap::Diverging);
        range = DisplayRange{-std::max(largest, 1e-12), std::max(largest, 1e-12)}; // zero in the middle
    } else {
        m_view->setColorMap(ColorMap::Viridis);
    }
    const QString title = !m_title.isEmpty() ? m_title : flattened ? tr("Phase, %1 removed").arg(m_removed) : tr("Phase");
    m_view->setImage(shown, title, unit, range);
}

} // namespace wfs::ui
