#include "SetupPanel.h"
#include "SetupPanelFields.h"

#include "ImageView.h"
#include "fit/PsfAnalysis.h"
#include "settings/ModelSettings.h"
#include "settings/SettingsText.h"
#include "base/Units.h"
#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFileInfo>
#include <QFormLayout>
#include <QSignalBlocker>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QStandardItemModel>
#include <QTableWidget>
#include <QThread>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>

namespace wfs::ui {

using namespace setupfields;

SetupPanel::SetupPanel(QWidget* parent)
    : QWidget(parent)
{
    auto* layout = new QVBoxLayout(this);
    // The model's choices together, the scalar or vectorial imaging model right after the basis and before the pupil
    // function's details: it decides which of the settings below matter.
    const std::pair<const char*, QWidget*> sections[] = {
        {"data", buildData()},     {"metadata", m_metadataBox = buildMetadata()}, {"preparation", m_preparationBox = buildPreparation()},
        {"model", buildModel()},   {"imaging-model", buildImagingModel()},        {"pupil-function", buildPupilFunction()},
        {"solver", buildSolver()},
    };
    for (const auto& [key, box] : sections) {
        box->setProperty("setupSection", QString::fromLatin1(key));
        layout->addWidget(box);
    }
    auto* buttons = new QHBoxLayout;
    m_start = new QPushButton(tr("Start"), this);
    m_start->setObjectName(QStringLiteral("startButton"));
    m_cancel = new QPushButton(tr("Cancel"), this);
    m_cancel->setObjectName(QStringLiteral("cancelButton"));
    m_cancel->setEnabled(false);
    buttons->addWidget(m_start);
    buttons->addWidget(m_cancel);
    layout->addLayout(buttons);
    layout->addStretch();
    connect(m_start, &QPushButton::clicked, this, &SetupPanel::startRequested);
    connect(m_cancel, &QPushButton::clicked, this, &SetupPanel::cancelRequested);
    watchEdits();
}

QStringList SetupPanel::sectionKeys()
{
    return {QStringLiteral("data"),          QStringLiteral("metadata"),       QStringLiteral("preparation"), QStringLiteral("model"),
            QStringLiteral("imaging-model"), QStringLiteral("pupil-function"), QStringLiteral("solver")};
}

QWidget* SetupPanel::section(const QString& key) const
{
    for (QWidget* box : findChildren<QWidget*>(Qt::FindDirectChildrenOnly))
        if (box->property("setupSection").toString() == key)
            return box;
    return nullptr;
}

void SetupPanel::watchEdits()
{
    for (auto* box : findChildren<QAbstractSpinBox*>()) {
        if (auto* d = qobject_cast<QDoubleSpinBox*>(box))
            connect(d, &QDoubleSpinBox::valueChanged, this, &SetupPanel::settingsEdited);
        else if (auto* i = qobject_cast<QSpinBox*>(box))
            connect(i, &QSpinBox::valueChanged, this, &SetupPanel::settingsEdited);
    }
    for (auto* combo : findChildren<QComboBox*>())
        connect(combo, &QComboBox::currentIndexChanged, this, &SetupPanel::settingsEdited);
    for (auto* check : findChildren<QCheckBox*>())
        connect(check, &QCheckBox::toggled, this, &SetupPanel::settingsEdited);
    for (auto* edit : findChildren<QLineEdit*>())
        if (!qobject_cast<QAbstractSpinBox*>(edit->parentWidget()) && !qobject_cast<QComboBox*>(edit->parentWidget()))
            connect(edit, &QLineEdit::textChanged, this, &SetupPanel::settingsEdited);
    connect(m_planes, &QTableWidget::itemChanged, this, [this](QTableWidgetItem* item) {
        if (item->column() == 0 || item->column() == 2)
            emit settingsEdited();
    });
}

QWidget* SetupPanel::buildData()
{
    auto* box = new QGroupBox(tr("Data"), this);
    auto* layout = new QVBoxLayout(box);
    auto* row = new QHBoxLayout;
    auto* open = new QPushButton(tr("Open files…"), box);
    auto* demo = new QPushButton(tr("Demo"), box);
    demo->setToolTip(tr("Simulated lab data: N = 256, Q = 2, three planes at -1, 0, +1 wave of defocus, "
                        "Noll 4..11 aberrations, Poisson noise (1e6 photons per plane) and read noise"));
    auto* pupilDemo = new QPushButton(tr("Pupil demo"), box);
    pupilDemo->setObjectName(QStringLiteral("pupilDemoButton"));
    pupilDemo->setToolTip(tr("Simulated microscope data no Zernike basis describes: N = 64, Q = 2.75, five planes at "
                             "-2 .. +2 waves of defocus, a 0.1-wave phase step, 20 % apodisation and a dust shadow, "
                             "Poisson noise (1e6 photons per plane); set up for a Zernike + zonal phase, a zonal "
                             "amplitude and a fitted defocus scale"));
    row->addWidget(open);
    row->addWidget(demo);
    row->addWidget(pupilDemo);
    layout->addLayout(row);
    connect(open, &QPushButton::clicked, this, &SetupPanel::openRequested);
    connect(demo, &QPushButton::clicked, this, &SetupPanel::demoRequested);
    connect(pupilDemo, &QPushButton::clicked, this, &SetupPanel::pupilDemoRequested);
    m_planes = new QTableWidget(0, 3, box);
    m_planes->setObjectName(QStringLiteral("planeTable"));
    m_planes->setHorizontalHeaderLabels({tr("use"), tr("plane"), tr("defocus")});
    m_planes->horizontalHeader()->setSectionResizeMode(0, QHeaderView::ResizeToContents);
    m_planes->horizontalHeader()->setSectionResizeMode(1, QHeaderView::Stretch);
    m_planes->horizontalHeader()->setSectionResizeMode(2, QHeaderView::ResizeToContents);
    m_planes->verticalHeader()->setVisible(false);
    m_planes->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    m_planes->setTextElideMode(Qt::ElideMiddle); // "demo…fits[2]": the start and the plane number stay
    m_planes->setWordWrap(false);
    m_planes->setIconSize(QSize(40, 40));
    m_planes->setToolTip(tr("Defocus per plane: '1w' = one wave of W020 (edge-to-centre path difference), "
                            "'0.3um' = axial displacement, empty = from the z step"));
    m_planes->setMinimumHeight(150);
    layout->addWidget(m_planes);
    return box;
}

QWidget* SetupPanel::buildMetadata()
{
    auto* box = new QGroupBox(tr("Metadata"), this);
    auto* form = new QFormLayout(box);
    form->setRowWrapPolicy(QFormLayout::WrapLongRows); // labels above their fields where the dock is narrow
    // Lengths in a fixed unit, named in the label and the suffix (the suffix hides behind "unknown"): a number typed
    // here is that unit, never metres.
    m_wavelength = optionalBox(box, Setting::Wavelength, 1e-9, 2, tr(" nm"));
    m_wavelength->setObjectName(QStringLiteral("wavelengthSpin"));
    m_pixelPitch = optionalBox(box, Setting::PixelPitch, 1e-6, 4, tr(" µm"));
    m_pixelPitch->setObjectName(QStringLiteral("pixelPitchSpin"));
    m_fNumber = optionalBox(box, Setting::FNumber, 1.0, 3, QString());
    m_fNumber->setObjectName(QStringLiteral("fNumberSpin"));
    m_na = optionalBox(box, Setting::NumericalAperture, 1.0, 3, QString());
    m_na->setObjectName(QStringLiteral("naSpin"));
    m_immersion = new QDoubleSpinBox(box);
    m_immersion->setObjectName(QStringLiteral("immersionSpin"));
    m_immersion->setRange(plausibleRange(Setting::ImmersionIndex).lo, plausibleRange(Setting::ImmersionIndex).hi);
    m_immersion->setDecimals(3);
    m_immersion->setKeyboardTracking(false);
    m_samplingQ = optionalBox(box, Setting::SamplingQ, 1.0, 3, QString());
    m_samplingQ->setObjectName(QStringLiteral("samplingQSpin"));
    m_zStep = optionalBox(box, Setting::ZStep, 1e-6, 4, tr(" µm"));
    m_zStep->setObjectName(QStringLiteral("zStepSpin"));
    m_focusPlane = new QDoubleSpinBox(box);
    m_focusPlane->setObjectName(QStringLiteral("focusPlaneSpin"));
    m_focusPlane->setRange(-1.0, 100000.0);
    m_focusPlane->setDecimals(1);
    m_focusPlane->setSpecialValueText(tr("unknown"));
    m_focusPlane->setValue(-1.0);
    m_focusPlane->setKeyboardTracking(false);
    m_defocusModel = new QComboBox(box);
    m_defocusModel->setObjectName(QStringLiteral("defocusModelCombo"));
    m_defocusModel->addItems({tr("paraxial"), tr("high NA")});
    m_zDirection = new QComboBox(box);
    m_zDirection->setObjectName(QStringLiteral("zDirectionCombo"));
    m_zDirection->addItems({tr("up: index along +z"), tr("down: index along −z")});
    addField(form, tr("Wavelength (nm)"), m_wavelength, "wavelength",
             tr("Wavelength of the light that formed the PSF, in nm (the emission for fluorescence). Typical: 633 nm (HeNe), "
                "605 nm (red emission), 1550 nm (telecom). Sets the phase unit (waves) and, with the pixel pitch and the NA or "
                "f-number, the sampling Q."));
    addField(form, tr("Pixel pitch (µm)"), m_pixelPitch, "pixel-scale",
             tr("Size of one pixel in µm: in the sample plane with the NA (a microscope, e.g. 0.1 µm), or on the detector with "
                "the f-number (e.g. 6.5 µm for an sCMOS camera)."));
    addField(form, tr("f-number"), m_fNumber, "f-number",
             tr("Focal ratio F# = focal length / pupil diameter, for a pitch on the detector (telescopes, test benches); "
                "Q = λ F# / pitch. Typical: 8 to 30. Leave unknown when the NA is given."));
    addField(form, tr("NA"), m_na, "na",
             tr("Numerical aperture n sin θ of the objective, for a pitch in the sample plane; Q = λ / (2 NA pitch). At most "
                "the immersion index. Typical: 0.1 to 0.95 dry, 1.0 to 1.2 water, 1.4 oil."));
    addField(form, tr("Immersion n"), m_immersion, "immersion",
             tr("Refractive index of the immersion medium (no unit): 1.0 air, 1.33 water, 1.518 oil. Bounds the NA and enters "
                "the high-NA defocus."));
    addField(form, tr("Sampling Q (override)"), m_samplingQ, "sampling",
             tr("Sampling Q = λ F# / pitch = λ / (2 NA pitch), no unit; 2 is Nyquist, below 2 the PSF is aliased. Set it only "
                "to override the value from the quantities above. Typical: 2 to 4."));
    addField(form, tr("z step (µm)"), m_zStep, "z-step",
             tr("Axial distance between consecutive planes of a stack, in µm (the stage or piezo step). Planes without their "
                "own defocus sit at (i − focus plane) × z step. Typical: 0.1 to 0.5 µm for a microscope."));
    addField(form, tr("Focus plane"), m_focusPlane, "focus-plane",
             tr("Index of the plane at focus (counted from 0, may be fractional), the origin of the z positions. The loading "
                "step proposes the brightest plane. Unknown: plane 0."));
    addField(form, tr("z direction"), m_zDirection, "z-direction",
             tr("Stacks defocused by the z step: which way the plane index runs. Up puts plane i at "
                "(i − focus plane) × z step, down at −(i − focus plane) × z step (for stacks recorded "
                "the other way); e.g. plane 12 with focus plane 10 and a 0.3 µm step is at +0.6 µm (up) or −0.6 µm (down). "
                "Planes with their own defocus in the table keep it."));
    addField(form, tr("Defocus model"), m_defocusModel, "defocus-model",
             tr("How an axial displacement becomes pupil phase: paraxial, k z NA² ρ² / (2n), for low NA (below about 0.5 n); "
                "high NA, k z (n − √(n² − NA² ρ²)), for microscope objectives."));
    m_samplingInfo = new QLabel(box);
    m_samplingInfo->setWordWrap(true);
    form->addRow(m_samplingInfo);
    connectMetadataEdits();
    return box;
}

// Every metadata field the user edits is remembered (a dataset's own values are shown with signals blocked),
// and said.
std::vector<std::pair<QDoubleSpinBox*, std::string>> SetupPanel::metadataBoxes() const
{
    return {
        {m_wavelength, "wavelength"},    {m_pixelPitch, "pixelPitch"}, {m_fNumber, "fNumber"}, {m_na, "numericalAperture"},
        {m_immersion, "immersionIndex"}, {m_samplingQ, "samplingQ"},   {m_zStep, "zStep"},     {m_focusPlane, "focusPlane"},
    };
}

void SetupPanel::connectMetadataEdits()
{
    for (const auto& [b, key] : metadataBoxes())
        connect(b, &QDoubleSpinBox::valueChanged, this, [this, key = key] {
            m_editedMetadata.insert(key); // signals are blocked while a dataset's values are shown
            emit metadataChanged();
        });
    connect(m_defocusModel, &QComboBox::currentIndexChanged, this, [this] {
        m_editedMetadata.insert("defocusModel");
        emit metadataChanged();
    });
    connect(m_zDirection, &QComboBox::currentIndexChanged, this, [this] {
        m_editedMetadata.insert("zIndexDown");
        emit metadataChanged();
    });
}

void SetupPanel::addField(QFormLayout* form, const QString& label, QWidget* widget, const std::string& setting, const QString& tooltip)
{
    widget->setToolTip(tooltip);
    if (widget->objectName().isEmpty()) // the red frame's style sheet selects the field by name
        widget->setObjectName(QString::fromStdString("field_" + setting).replace(QLatin1Char('-'), QLatin1Char('_')));
    if (label.isEmpty())
        form->addRow(widget); // a check box: its own text is the label
    else
        form->addRow(label, widget);
    if (QWidget* labelWidget = form->labelForField(widget))
        labelWidget->setToolTip(tooltip);
    auto* note = new QLabel(widget->parentWidget());
    note->setObjectName(QString::fromStdString("problem:" + setting));
    note->setWordWrap(true);
    note->setStyleSheet(QStringLiteral("color: #b2182b"));
    form->addRow(note);
    form->setRowVisible(note, false);
    m_fields[setting] = {widget, note, tooltip};
}

QWidget* SetupPanel::buildPreparation()
{
    auto* box = new QGroupBox(tr("Preparation"), this);
    auto* form = new QFormLayout(box);
    form->setRowWrapPolicy(QFormLayout::WrapLongRows); // labels above their fields where the dock is narrow
    m_subtractBackground = new QCheckBox(tr("subtract background (border, σ-clipped)"), box);
    m_subtractBackground->setChecked(true);
    m_centre = new QComboBox(box);
    for (CentreMethod method : SettingEnum<CentreMethod>::values)
        m_centre->addItem(QString::fromLatin1(centreMethodName(method)), int(method));
    m_crop = new QSpinBox(box);
    m_crop->setRange(0, 8192);
    m_crop->setSingleStep(2);
    m_crop->setSpecialValueText(tr("no crop"));
    m_maskSaturated = new QCheckBox(tr("mask saturated pixels"), box);
    m_maskSaturated->setChecked(true);
    m_maskHot = new QCheckBox(tr("mask hot pixels"), box);
    m_maskHot->setTristate(true); // partly ticked: core decides (effectiveHotPixelMask)
    m_maskHot->setCheckState(Qt::PartiallyChecked);
    m_normalise = new QCheckBox(tr("normalise each plane"), box);
    addField(form, QString(), m_subtractBackground, "no-background",
             tr("Subtract each plane's background: the σ-clipped median of a border frame (1/16 of the image, at least 2 pixels). Leave on "
                "for camera data with an offset."));
    addField(form, tr("Centre"), m_centre, "centre",
             tr("Where the crop is centred: auto (the peak for a z-stack, whose planes a z step places; none otherwise), none (the image "
                "centre), the brightest pixel after 3 × 3 smoothing, or the iterated centroid. One centre for the whole stack keeps the "
                "planes' relative positions."));
    addField(form, tr("Crop"), m_crop, "crop",
             tr("Crop every plane to N × N pixels (even) around the centre; no crop keeps the whole image. Smaller is faster; keep the "
                "PSF's wings inside. Typical: 64 for a compact PSF."));
    addField(form, QString(), m_maskSaturated, "no-saturation-mask",
             tr("Leave out pixels at or above the saturation level (the data's SATURATE keyword, else the format's maximum, e.g. 65535 for "
                "16-bit)."));
    addField(form, QString(), m_maskHot, "hot-pixels",
             tr("Leave out isolated hot pixels: more than 8 noise deviations above the brightest neighbour and 3 times as bright. Partly "
                "ticked (the default): masked when the sampling is known to be Q ≥ 2, where a PSF has no isolated bright pixel."));
    addField(form, QString(), m_normalise, "normalise",
             tr("Scale each plane to a sum of 1 after background subtraction (relative data; the Poisson objective then cannot be used)."));
    for (QCheckBox* c : {m_subtractBackground, m_maskSaturated, m_maskHot, m_normalise})
        connect(c, &QCheckBox::toggled, this, &SetupPanel::preparationChanged);
    connect(m_centre, &QComboBox::currentIndexChanged, this, &SetupPanel::preparationChanged);
    connect(m_crop, &QSpinBox::valueChanged, this, &SetupPanel::preparationChanged);
    return box;
}

QWidget* SetupPanel::buildModel()
{
    auto* box = new QGroupBox(tr("Model"), this);
    auto* form = new QFormLayout(box);
    form->setRowWrapPolicy(QFormLayout::WrapLongRows); // labels above their fields where the dock is narrow
    m_order = new QSpinBox(box);
    m_order->setObjectName(QStringLiteral("orderSpin"));
    m_order->setRange(1, zernike::kMaxOrder);
    m_order->setValue(4);
    m_ordering = new QComboBox(box);
    m_ordering->addItems({tr("Noll"), tr("OSA/ANSI")});
    m_normalization = new QComboBox(box);
    m_normalization->addItems({tr("RMS (Noll)"), tr("unit, R(1) = 1")});
    m_objective = new QComboBox(box);
    m_objective->addItems({tr("automatic"), tr("Poisson"), tr("least squares"), tr("Poisson + read noise (χ²)")});
    m_readNoise = new QDoubleSpinBox(box);
    m_readNoise->setRange(plausibleRange(Setting::ReadNoise).lo, plausibleRange(Setting::ReadNoise).hi); // a session's is never clipped
    m_readNoise->setSuffix(tr(" counts RMS"));
    m_grid = new QSpinBox(box);
    m_grid->setRange(0, kMaxGrid); // 0 = the data size; the rest as ModelSettings::geometryError allows
    m_grid->setSingleStep(2);
    m_grid->setSpecialValueText(tr("data size"));
    // The pupil geometry's ranges are core's (what the command line and sessions accept).
    m_obscuration = new QDoubleSpinBox(box);
    m_obscuration->setDecimals(2);
    m_obscuration->setRange(0.0, lastShownBelow(kObscurationBelow, m_obscuration->decimals()));
    m_obscuration->setSingleStep(0.05);
    m_spiders = new QSpinBox(box);
    m_spiders->setRange(0, kMaxSpiderCount);
    m_spiderWidth = new QDoubleSpinBox(box);
    m_spiderWidth->setDecimals(3);
    m_spiderWidth->setRange(0.0, lastShownBelow(kSpiderWidthBelow, m_spiderWidth->decimals()));
    m_spiderWidth->setSingleStep(0.005);
    m_fitShift = new QCheckBox(tr("fit per-plane tip/tilt (drift)"), box);
    m_fitFlux = new QCheckBox(tr("fit flux per plane"), box);
    m_fitFlux->setChecked(true);
    m_fitBackground = new QCheckBox(tr("fit background per plane"), box);
    m_fitBackground->setChecked(true);
    m_fixedTerms = new QLineEdit(box);
    m_fixedTerms->setPlaceholderText(tr("e.g. 2,3 (indices held at zero)"));
    m_fixedTerms->setToolTip(tr("Zernike terms not fitted, by index in the chosen ordering; piston is always fixed"));
    addField(form, tr("Zernike order"), m_order, "order",
             tr("Highest Zernike radial order n fitted, 1 to %1; order 4 fits 15 terms (to spherical), 6 fits 28. Typical: 4 to 6.")
                 .arg(zernike::kMaxOrder));
    addField(form, tr("Ordering"), m_ordering, "ordering",
             tr("How the Zernike terms are numbered: Noll (1 = piston, 4 = defocus, 11 = spherical) or OSA/ANSI (0 = piston, 4 = defocus, "
                "12 = spherical)."));
    addField(form, tr("Normalisation"), m_normalization, "normalization",
             tr("RMS (Noll 1976): a coefficient is the term's RMS over the pupil; unit: R(1) = 1 (Born & Wolf), a coefficient is the edge "
                "value."));
    addField(form, tr("Objective"), m_objective, "objective",
             tr("The fit's cost: automatic (from the data unit), Poisson (photon counts), least squares (relative data), or Poisson + read "
                "noise (weighted least squares, χ²; camera counts)."));
    addField(form, tr("Read noise"), m_readNoise, "read-noise",
             tr("Camera read noise in counts RMS, the weighted objective's noise floor and the χ²'s. 0: from the data (the border's noise, "
                "or RDNOISE). Typical: 1 to 3 for sCMOS."));
    addField(form, tr("Grid N"), m_grid, "grid",
             tr("Size N of the model's FFT grid (even, pixels); the pupil spans N / Q samples. Data size: the prepared planes' size. At "
                "least the crop; larger is finer and slower. Typical: 64 to 256."));
    addField(form, tr("Obscuration (of D)"), m_obscuration, "obscuration",
             tr("Diameter of a central obstruction as a fraction of the pupil diameter (no unit), e.g. 0.3 for a Cassegrain telescope; 0 "
                "for a clear pupil."));
    addField(form, tr("Spider vanes"), m_spiders, "spiders",
             tr("Number of secondary-mirror support vanes across the pupil (0 to %1), e.g. 4.").arg(kMaxSpiderCount));
    addField(form, tr("Vane width (of D)"), m_spiderWidth, "spider-width",
             tr("Width of each spider vane as a fraction of the pupil diameter, e.g. 0.01."));
    addField(form, tr("Fixed terms"), m_fixedTerms, "fixed-terms",
             tr("Zernike terms not fitted, by index in the chosen ordering, e.g. 2,3 (tip and tilt in Noll); piston is always fixed."));
    addField(form, QString(), m_fitFlux, "fit-flux",
             tr("Fit each plane's total flux (photons or counts); off holds it at the data's sum."));
    addField(form, QString(), m_fitBackground, "fit-background",
             tr("Fit a constant background per plane (data units), what the subtraction left."));
    addField(form, QString(), m_fitShift, "fit-shift", tr("Fit a tip/tilt per plane (pixels), for drift between the planes of a stack."));
    return box;
}

QWidget* SetupPanel::buildPupilFunction()
{
    auto* box = new QGroupBox(tr("Pupil function and detector"), this);
    box->setObjectName(QStringLiteral("pupilFunctionBox"));
    auto* form = new QFormLayout(box);
    form->setRowWrapPolicy(QFormLayout::WrapLongRows); // labels above their fields where the dock is narrow
    m_phaseModel = new QComboBox(box);
    m_phaseModel->setObjectName(QStringLiteral("phaseModelCombo"));
    m_phaseModel->addItems({tr("Zernike terms"), tr("zonal (per pupil pixel)"), tr("Zernike + zonal remainder")});
    m_phaseModel->setToolTip(tr("How the pupil phase is fitted. Zernike: the terms up to the order above. Zonal: one value "
                                "(radians) per pupil pixel, smoothed by the weight below; the coefficient table shows its "
                                "projection onto the Zernike terms, the phase tab what they leave. Zernike + zonal remainder: "
                                "the terms plus a zonal part kept orthogonal to them, so the coefficients keep their meaning. "
                                "Zonal fits need defocused planes: one in-focus plane cannot tell the phase from its twin."));
    m_amplitudeModel = new QComboBox(box);
    m_amplitudeModel->setObjectName(QStringLiteral("amplitudeModelCombo"));
    m_amplitudeModel->addItems({tr("uniform"), tr("Gaussian (fitted)"), tr("zonal (per pupil pixel)")});
    m_amplitudeModel->setToolTip(tr("The pupil's field amplitude (relative). Uniform: a clear aperture. Gaussian: a fitted "
                                    "Gaussian illumination (centre and width in pupil radii). Zonal: exp(a) with one a per "
                                    "pupil pixel, positive by construction; the mean of a is held at 0 (the planes' flux "
                                    "carries a common factor)."));
    m_regularization = new QLineEdit(numberText(ModelSettings{}.regularization), box);
    m_regularization->setObjectName(QStringLiteral("regularizationEdit"));
    m_regularization->setToolTip(
        tr("Smoothness weight W of the zonal terms: (W/2) × the sum of squared differences between "
           "neighbouring pupil pixels, in the objective's units (about χ²/2) per rad². Larger is "
           "smoother; positive, 1e-12 to 1e12 (default %1), or auto: a sweep from 1000 to 0.1 keeps the strongest weight "
           "at the noise level (the discrepancy principle). Used by a zonal phase or amplitude only.")
            .arg(ModelSettings{}.regularization));
    m_pixelIntegration = new QCheckBox(tr("integrate over square pixels"), box);
    m_pixelIntegration->setToolTip(tr("Model the camera's square pixels: the OTF times the pixel's sinc (transfer-function "
                                      "form, not oversampling; exact for a band-limited PSF at Q ≥ 1)."));
    m_objectDiameter = new QLineEdit(box);
    m_objectDiameter->setObjectName(QStringLiteral("objectDiameterEdit"));
    m_objectDiameter->setPlaceholderText(tr("point (e.g. 100nm)"));
    m_objectDiameter->setToolTip(
        tr("Diameter of the imaged object in the sample plane with its unit, e.g. 100nm or 0.17um "
           "(a number without its unit is questioned, not taken): a uniform sphere such as a fluorescent bead, convolved with "
           "the PSF. Empty or 0: a point source. Needs the sample-plane pixel size (NA and pixel "
           "pitch); at most 1 mm and smaller than the field of view."));
    m_gain = new QLineEdit(numberText(ModelSettings{}.gain), box);
    m_gain->setObjectName(QStringLiteral("gainEdit"));
    m_gain->setPlaceholderText(tr("1 or auto"));
    m_gain->setToolTip(tr("Camera gain in electrons (photons) per data unit, 0.001 to 1000, or 'auto': estimated from "
                          "the data by photon transfer (the noise power above the OTF cut-off against the signal, plane "
                          "by plane). 1: one count is one photon. Sets the photon noise, and so the χ²."));
    m_offset = new QLineEdit(numberText(ModelSettings{}.offset), box);
    m_offset->setObjectName(QStringLiteral("offsetEdit"));
    m_offset->setPlaceholderText(tr("0 or auto"));
    m_offset->setToolTip(tr("Camera offset (bias) in data units, removed from the counts before the Poisson objective "
                            "(default 0), or 'auto': from each plane's border by photon transfer, mean − gain × "
                            "(variance − read noise²); needs the read noise (above, or the data's RDNOISE)."));
    m_fitDefocusScale = new QCheckBox(tr("fit defocus scale (z-step error)"), box);
    m_fitDefocusScale->setToolTip(tr("Fit one factor on every plane's defocus (a z-step or defocus calibration error), "
                                     "reported with its uncertainty (1 = as given)."));
    m_fitDefocusOffsets = new QCheckBox(tr("fit defocus offset per plane"), box);
    m_fitDefocusOffsets->setToolTip(tr("Fit a defocus offset per plane (positioning errors), in the plane's own defocus "
                                       "unit (µm, or waves of W020), reported with its uncertainty. The plane nearest "
                                       "focus is held at 0 (a common offset is the Zernike defocus); with the defocus "
                                       "scale the two outermost planes are held too."));
    m_fitSampling = new QCheckBox(tr("fit sampling (NA error)"), box);
    m_fitSampling->setObjectName(QStringLiteral("fitSamplingCheck"));
    m_fitSampling->setToolTip(tr("Fit the sampling Q as an error of the NA (with an axial defocus the defocus follows the NA; "
                                 "otherwise it reads as a pixel-size error): the cost is profiled over the NA by whole fits in "
                                 "4 % steps, then the parabola's vertex; the NA and Q are reported with a 1-σ error. Several "
                                 "fits: slower."));
    addField(form, tr("Pupil phase"), m_phaseModel, "pupil-phase", m_phaseModel->toolTip());
    addField(form, tr("Pupil amplitude"), m_amplitudeModel, "pupil-amplitude", m_amplitudeModel->toolTip());
    addField(form, tr("Smoothness weight"), m_regularization, "regularization", m_regularization->toolTip());
    addField(form, tr("Object diameter"), m_objectDiameter, "object-diameter", m_objectDiameter->toolTip());
    addField(form, tr("Gain (e⁻ / unit)"), m_gain, "gain", m_gain->toolTip());
    addField(form, tr("Offset (data units)"), m_offset, "offset", m_offset->toolTip());
    addField(form, QString(), m_pixelIntegration, "pixel-integration", m_pixelIntegration->toolTip());
    addField(form, QString(), m_fitDefocusScale, "fit-defocus-scale", m_fitDefocusScale->toolTip());
    addField(form, QString(), m_fitDefocusOffsets, "fit-defocus-offsets", m_fitDefocusOffsets->toolTip());
    addField(form, QString(), m_fitSampling, "fit-sampling", m_fitSampling->toolTip());
    for (QComboBox* c : {m_phaseModel, m_amplitudeModel})
        connect(c, &QComboBox::currentIndexChanged, this, &SetupPanel::updatePupilFunctionControls);
    updatePupilFunctionControls();
    return box;
}

void SetupPanel::updatePupilFunctionControls()
{
    m_regularization->setEnabled(
        hasZonalTerms(SettingEnum<PupilPhaseModel>::values[std::clamp(m_phaseModel->currentIndex(), 0, 2)],
                      SettingEnum<PupilAmplitudeModel>::values[std::clamp(m_amplitudeModel->currentIndex(), 0, 2)]));
}

QWidget* SetupPanel::buildImagingModel()
{
    auto* box = new QGroupBox(tr("Imaging model"), this);
    box->setObjectName(QStringLiteral("imagingModelBox"));
    auto* form = new QFormLayout(box);
    form->setRowWrapPolicy(QFormLayout::WrapLongRows);
    m_imagingForm = form;
    m_imagingModel = new QComboBox(box);
    m_imagingModel->setObjectName(QStringLiteral("imagingModelCombo"));
    for (const std::string& text : settingTexts<ImagingModel>())
        m_imagingModel->addItem(QString::fromStdString(text));
    const ModelSettings defaults;
    m_sampleIndex = indexBox(box, Setting::SampleIndex, tr("= immersion"));
    m_sampleIndex->setObjectName(QStringLiteral("sampleIndexSpin"));
    m_emitterDepth = new QLineEdit(lengthText(defaults.emitterDepth), box);
    m_emitterDepth->setObjectName(QStringLiteral("emitterDepthEdit"));
    m_emitterDepth->setPlaceholderText(tr("0 (e.g. 2um)"));
    m_fitEmitterDepth = new QCheckBox(tr("fit the emitter's depth"), box);
    m_fitEmitterDepth->setObjectName(QStringLiteral("fitEmitterDepthCheck"));
    m_dipole = new QComboBox(box);
    m_dipole->setObjectName(QStringLiteral("dipoleCombo"));
    m_dipole->setEditable(true); // THETA,PHI typed
    m_dipole->addItems({QStringLiteral("free"), QStringLiteral("x"), QStringLiteral("y"), QStringLiteral("z")});
    m_coverslipIndex = indexBox(box, Setting::CoverslipIndex, tr("= immersion"));
    m_coverslipIndex->setObjectName(QStringLiteral("coverslipIndexSpin"));
    m_coverslipThickness = new QLineEdit(lengthText(defaults.coverslipThickness), box);
    m_coverslipThickness->setObjectName(QStringLiteral("coverslipThicknessEdit"));
    m_designCoverslipIndex = indexBox(box, Setting::CoverslipIndex, tr("= coverslip"));
    m_designCoverslipIndex->setObjectName(QStringLiteral("designCoverslipIndexSpin"));
    m_designCoverslipThickness = new QLineEdit(box);
    m_designCoverslipThickness->setObjectName(QStringLiteral("designCoverslipThicknessEdit"));
    m_designCoverslipThickness->setPlaceholderText(tr("= coverslip"));
    const auto range = [](Setting setting) { return QString::fromLatin1(plausibleRange(setting).text); };
    addField(form, tr("Imaging model"), m_imagingModel, "model",
             tr("scalar: the pupil's field as one scalar (paraxial polarisation; right at low NA and for telescopes). vectorial: the "
                "x, y and z fields of a dipole or bead through a high-NA objective: polarisation, Fresnel transmission of the "
                "coverslip and sample interfaces, the aplanatic apodisation 1/√cos θ, index mismatch with the emitter's depth, "
                "supercritical-angle light (README \"Model\"). Needs the NA and the immersion index above; six fields per plane, slower."));
    addField(form, tr("Sample n"), m_sampleIndex, "sample-index",
             tr("Refractive index of the sample around the emitter (no unit), %1; '= immersion' (0): no mismatch, no depth "
                "aberration. Below the NA, light above the critical angle is evanescent (supercritical).")
                 .arg(range(Setting::SampleIndex)));
    addField(
        form, tr("Emitter depth"), m_emitterDepth, "emitter-depth",
        tr("The emitter's depth below the coverslip with its unit, e.g. 2um (a number without its unit is questioned), %1. The objective's "
           "nominal focus is at this depth in the design medium; the mismatch adds Gibson and Lanni's path difference "
           "k₀ d (n_s cos θ_s − n_i cos θ_i). The start value when the depth is fitted.")
            .arg(range(Setting::EmitterDepth)));
    addField(form, QString(), m_fitEmitterDepth, "fit-emitter-depth",
             tr("Fit the emitter's depth (metres, reported with its uncertainty) as a nuisance parameter; needs a sample index "
                "other than the immersion's."));
    addField(form, tr("Dipole"), m_dipole, "dipole",
             tr("free: a bead or a rotating molecule (the x, y and z dipoles add incoherently, six fields); x, y, z, or THETA,PHI "
                "in degrees: a fixed dipole, θ from the optical axis (0 to 180), φ from +x counter-clockwise (−360 to 360); its "
                "fields add coherently."));
    addField(
        form, tr("Coverslip n"), m_coverslipIndex, "coverslip-index",
        tr("The coverslip's refractive index (no unit), %1; '= immersion' (0): no second interface.").arg(range(Setting::CoverslipIndex)));
    addField(form, tr("Coverslip thickness"), m_coverslipThickness, "coverslip-thickness",
             tr("The coverslip's thickness with its unit, e.g. 170um, %1 (default %2).")
                 .arg(range(Setting::CoverslipThickness), lengthText(defaults.coverslipThickness)));
    addField(form, tr("Design coverslip n"), m_designCoverslipIndex, "design-coverslip-index",
             tr("The coverslip index the objective is designed for (no unit), %1; '= coverslip' (0): the actual one (no error).")
                 .arg(range(Setting::CoverslipIndex)));
    addField(form, tr("Design thickness"), m_designCoverslipThickness, "design-coverslip-thickness",
             tr("The coverslip thickness the objective is designed for, e.g. 170um, %1; empty: the actual one. A difference "
                "adds k₀ (t n_g cos θ_g − t* n_g* cos θ_g*).")
                 .arg(range(Setting::CoverslipThickness)));
    connect(m_imagingModel, &QComboBox::currentIndexChanged, this, &SetupPanel::updateImagingModelControls);
    updateImagingModelControls();
    return box;
}

void SetupPanel::updateImagingModelControls()
{
    const bool vectorial = SettingEnum<ImagingModel>::values[std::clamp(m_imagingModel->currentIndex(), 0, 1)] == ImagingModel::Vectorial;
    for (QWidget* w : std::initializer_list<QWidget*>{m_sampleIndex, m_emitterDepth, m_fitEmitterDepth, m_dipole, m_coverslipIndex,
                                                      m_coverslipThickness, m_designCoverslipIndex, m_designCoverslipThickness})
        m_imagingForm->setRowVisible(w, vectorial);
}

QWidget* SetupPanel::buildSolver()
{
    auto* box = new QGroupBox(tr("Solver"), this);
    auto* form = new QFormLayout(box);
    form->setRowWrapPolicy(QFormLayout::WrapLongRows); // labels above their fields where the dock is narrow
    m_backend = new QComboBox(box);
    m_backend->setObjectName(QStringLiteral("backendCombo"));
    m_gradient = new QComboBox(box);
    m_gradient->addItems({tr("exact adjoint"), tr("finite differences")});
    m_optimizer = new QComboBox(box);
    m_optimizer->addItems({tr("BFGS"), tr("L-BFGS")});
    m_precision = new QComboBox(box);
    m_precision->addItems({tr("double"), tr("float")});
    m_threads = new QSpinBox(box);
    m_threads->setRange(1, std::max(1, QThread::idealThreadCount()));
    m_maxIterations = new QSpinBox(box);
    m_maxIterations->setRange(1, 1000000);
    m_maxIterations->setValue(500);
    const SolverSettings defaults; // the one set of defaults (settings/SolverSettings.h), as the command line's
    m_gtol = new QLineEdit(QString::number(defaults.gradientTolerance, 'g', 4), box);
    m_gtol->setToolTip(tr("Stop when the largest gradient component (in scaled parameters) is at most this"));
    m_ftol = new QLineEdit(QString::number(defaults.functionTolerance, 'g', 4), box);
    m_ftol->setToolTip(tr("Stop when the relative change of the cost in one iteration is below this"));
    m_stages = new QLineEdit(box);
    m_stages->setObjectName(QStringLiteral("stagesEdit"));
    m_stages->setPlaceholderText(tr("e.g. 2,4 (then the order above)"));
    m_stages->setToolTip(tr("Coarse-to-fine: Zernike orders fitted first, each seeding the next"));
    addField(form, tr("Backend"), m_backend, "backend",
             tr("Where the model and its gradient are computed: the CPU (FFTW) or a CUDA GPU; unavailable ones say why."));
    addField(form, tr("Gradient"), m_gradient, "gradient",
             tr("Exact adjoint gradient (one extra model evaluation per iteration) or finite differences (one per parameter; slow, for "
                "comparison)."));
    addField(form, tr("Optimizer"), m_optimizer, "optimizer",
             tr("BFGS (dense, for up to a few hundred parameters) or L-BFGS (limited memory, for zonal pupils with thousands)."));
    addField(form, tr("Precision"), m_precision, "precision",
             tr("Floating-point precision of the model: double (reference) or float (faster on GPUs, about 1e-6 relative)."));
    addField(form, tr("Threads"), m_threads, "threads",
             tr("CPU threads for the model (1 to the cores of this machine); typical: the number of cores."));
    addField(form, tr("Max iterations"), m_maxIterations, "max-iterations",
             tr("Stop after this many solver iterations (at least 1); typical: 200 to 2000."));
    addField(form, tr("Gradient tolerance"), m_gtol, "gtol",
             m_gtol->toolTip() + tr(" (no unit, typical %1).").arg(defaults.gradientTolerance, 0, 'g', 4));
    addField(form, tr("Cost tolerance"), m_ftol, "ftol",
             m_ftol->toolTip() + tr(" (no unit, typical %1).").arg(defaults.functionTolerance, 0, 'g', 4));
    addField(form, tr("Coarse stages"), m_stages, "stages", m_stages->toolTip() + tr(", e.g. 2,4 before order 6."));
    m_removeDefocus = new QCheckBox(tr("headline without defocus"), box);
    m_removeDefocus->setTristate(true); // partly ticked: core decides (removed for planes at different defocus)
    m_removeDefocus->setCheckState(Qt::PartiallyChecked);
    addField(form, QString(), m_removeDefocus, "remove-defocus",
             tr("RMS, PV and Strehl with defocus removed, the figures with it beside them. Partly ticked (the default): removed for "
                "planes at different defocus, where the fitted defocus is where focus sits in the stack (e.g. 0.1 wave of a bead "
                "stack's 0.11), not an aberration of the optics."));
    return box;
}

} // namespace wfs::ui
