#include "PhasePanel.h"

#include <QCheckBox>
#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QVBoxLayout>

#include <cmath>

namespace wfs::ui {

PhasePanel::PhasePanel(QWidget* parent)
    : QWidget(parent)
    , m_unit(new QComboBox(this))
    , m_colorMap(new QComboBox(this))
    , m_wrap(new QCheckBox(tr("wrap to one wave"), this))
    , m_view(new ImageView(this))
{
    auto* layout = new QVBoxLayout(this);
    auto* bar = new QHBoxLayout;
    m_unit->addItems({tr("waves"), tr("nm")});
    m_colorMap->addItems({tr("viridis"), tr("diverging (0 at the centre)")});
    m_colorMap->setToolTip(tr("Wrapped phase always uses the cyclic map"));
    bar->addWidget(new QLabel(tr("unit:"), this));
    bar->addWidget(m_unit);
    bar->addWidget(new QLabel(tr("colour map:"), this));
    bar->addWidget(m_colorMap);
    bar->addWidget(m_wrap);
    bar->addStretch();
    layout->addLayout(bar);
    m_view->setObjectName(QStringLiteral("phaseView"));
    layout->addWidget(m_view, 1);
    connect(m_unit, &QComboBox::currentIndexChanged, this, &PhasePanel::show);
    connect(m_colorMap, &QComboBox::currentIndexChanged, this, &PhasePanel::show);
    connect(m_wrap, &QCheckBox::toggled, this, [this](bool wrapped) {
        m_colorMap->setEnabled(!wrapped);
        show();
    });
    clear(tr("no phase map yet"));
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
    m_view->clear(message);
}

void PhasePanel::setPhase(const Image& radians, double wavelengthMetres)
{
    m_radians = radians;
    m_wavelength = wavelengthMetres;
    show();
}

void PhasePanel::show()
{
    if (m_radians.isEmpty()) {
        m_view->clear(tr("no phase map yet"));
        return;
    }
    // Unit conversion only: the phase itself (NaN outside the pupil) is core's.
    const double toUnit = (nanometres() ? m_wavelength * 1e9 : 1.0) / (2.0 * M_PI);
    const double wave = nanometres() ? m_wavelength * 1e9 : 1.0;
    Image shown = m_radians;
    double largest = 0.0;
    for (double& v : shown.pixels) {
        if (!std::isfinite(v))
            continue;
        v *= toUnit;
        if (wrapped())
            v -= wave * std::floor(v / wave + 0.5); // to [-1/2, 1/2) wave
        largest = std::max(largest, std::abs(v));
    }
    const QString unit = nanometres() ? tr("nm") : tr("waves");
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
    m_view->setImage(shown, tr("phase"), unit, range);
}

} // namespace wfs::ui
