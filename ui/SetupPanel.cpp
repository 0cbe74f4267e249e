#include "SetupPanel.h"

#include "ImageView.h"

#include "fit/PsfAnalysis.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFileInfo>
#include <QFormLayout>
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

#include <cmath>

namespace wfs::ui {

namespace {
// A spin box whose minimum (0) reads "unknown", for metadata that may be missing.
QDoubleSpinBox* optionalBox(QWidget* parent, double max, int decimals, const QString& suffix)
{
    auto* box = new QDoubleSpinBox(parent);
    box->setRange(0.0, max);
    box->setDecimals(decimals);
    box->setSpecialValueText(QObject::tr("unknown"));
    box->setSuffix(suffix);
    box->setKeyboardTracking(false);
    return box;
}

void setOptional(QDoubleSpinBox* box, const std::optional<double>& value, double scale)
{
    const QSignalBlocker block(box);
    box->setValue(value ? *value / scale : 0.0);
}

std::optional<double> optionalValue(const QDoubleSpinBox* box, double scale)
{
    return box->value() > 0.0 ? std::optional<double>(box->value() * scale) : std::nullopt;
}

QString defocusText(const PlaneDefocus& d)
{
    switch (d.kind) {
    case PlaneDefocus::Kind::Waves:
        return QStringLiteral("%1w").arg(d.value);
    case PlaneDefocus::Kind::Length:
        return QStringLiteral("%1um").arg(d.value * 1e6);
    case PlaneDefocus::Kind::Unknown:
        break;
    }
    return {};
}

// The PSF's core, not the whole frame: a compact PSF would be one dot in a 40-pixel picture.
QImage planeThumbnail(const Image& image)
{
    const PixelBox box = fluxBox(image, 0.99);
    return thumbnail(image, 40, box.isEmpty() ? QRect() : QRect(box.col, box.row, box.width, box.height));
}

double parseTolerance(const QLineEdit* edit, double fallback)
{
    bool ok = false;
    const double v = edit->text().toDouble(&ok);
    return ok && v >= 0.0 ? v : fallback;
}
} // namespace

SetupPanel::SetupPanel(QWidget* parent)
    : QWidget(parent)
{
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(buildData());
    m_metadataBox = buildMetadata();
    layout->addWidget(m_metadataBox);
    m_preparationBox = buildPreparation();
    layout->addWidget(m_preparationBox);
    layout->addWidget(buildModel());
    layout->addWidget(buildSolver());
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
    row->addWidget(open);
    row->addWidget(demo);
    layout->addLayout(row);
    connect(open, &QPushButton::clicked, this, &SetupPanel::openRequested);
    connect(demo, &QPushButton::clicked, this, &SetupPanel::demoRequested);
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
    m_wavelength = optionalBox(box, 100000.0, 2, tr(" nm"));
    m_pixelPitch = optionalBox(box, 100000.0, 4, tr(" µm"));
    m_fNumber = optionalBox(box, 10000.0, 3, QString());
    m_na = optionalBox(box, 1.7, 3, QString());
    m_immersion = new QDoubleSpinBox(box);
    m_immersion->setRange(1.0, 2.0);
    m_immersion->setDecimals(3);
    m_samplingQ = optionalBox(box, 100.0, 3, QString());
    m_zStep = optionalBox(box, 1e6, 4, tr(" µm"));
    m_defocusModel = new QComboBox(box);
    m_defocusModel->addItems({tr("paraxial"), tr("high NA")});
    form->addRow(tr("Wavelength"), m_wavelength);
    form->addRow(tr("Pixel pitch"), m_pixelPitch);
    form->addRow(tr("f-number"), m_fNumber);
    form->addRow(tr("NA"), m_na);
    form->addRow(tr("Immersion n"), m_immersion);
    form->addRow(tr("Sampling Q (override)"), m_samplingQ);
    form->addRow(tr("z step"), m_zStep);
    form->addRow(tr("Defocus model"), m_defocusModel);
    m_samplingInfo = new QLabel(box);
    m_samplingInfo->setWordWrap(true);
    form->addRow(m_samplingInfo);
    for (QDoubleSpinBox* b : {m_wavelength, m_pixelPitch, m_fNumber, m_na, m_immersion, m_samplingQ, m_zStep})
        connect(b, &QDoubleSpinBox::valueChanged, this, &SetupPanel::metadataChanged);
    connect(m_defocusModel, &QComboBox::currentIndexChanged, this, &SetupPanel::metadataChanged);
    return box;
}

QWidget* SetupPanel::buildPreparation()
{
    auto* box = new QGroupBox(tr("Preparation"), this);
    auto* form = new QFormLayout(box);
    form->setRowWrapPolicy(QFormLayout::WrapLongRows); // labels above their fields where the dock is narrow
    m_subtractBackground = new QCheckBox(tr("subtract background (border, σ-clipped)"), box);
    m_subtractBackground->setChecked(true);
    m_centre = new QComboBox(box);
    m_centre->addItems({tr("none"), tr("peak"), tr("centroid")});
    m_crop = new QSpinBox(box);
    m_crop->setRange(0, 8192);
    m_crop->setSingleStep(2);
    m_crop->setSpecialValueText(tr("no crop"));
    m_maskSaturated = new QCheckBox(tr("mask saturated pixels"), box);
    m_maskSaturated->setChecked(true);
    m_maskHot = new QCheckBox(tr("mask hot pixels"), box);
    m_normalise = new QCheckBox(tr("normalise each plane"), box);
    form->addRow(m_subtractBackground);
    form->addRow(tr("Centre"), m_centre);
    form->addRow(tr("Crop"), m_crop);
    form->addRow(m_maskSaturated);
    form->addRow(m_maskHot);
    form->addRow(m_normalise);
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
    m_readNoise->setRange(0.0, 1e4);
    m_readNoise->setSuffix(tr(" counts RMS"));
    m_grid = new QSpinBox(box);
    m_grid->setRange(0, 8192);
    m_grid->setSingleStep(2);
    m_grid->setSpecialValueText(tr("data size"));
    m_obscuration = new QDoubleSpinBox(box);
    m_obscuration->setRange(0.0, 0.95);
    m_obscuration->setSingleStep(0.05);
    m_spiders = new QSpinBox(box);
    m_spiders->setRange(0, 16);
    m_spiderWidth = new QDoubleSpinBox(box);
    m_spiderWidth->setRange(0.0, 0.45);
    m_spiderWidth->setDecimals(3);
    m_spiderWidth->setSingleStep(0.005);
    m_fitShift = new QCheckBox(tr("fit per-plane tip/tilt (drift)"), box);
    m_fitFlux = new QCheckBox(tr("fit flux per plane"), box);
    m_fitFlux->setChecked(true);
    m_fitBackground = new QCheckBox(tr("fit background per plane"), box);
    m_fitBackground->setChecked(true);
    m_fixedTerms = new QLineEdit(box);
    m_fixedTerms->setPlaceholderText(tr("e.g. 2,3 (indices held at zero)"));
    m_fixedTerms->setToolTip(tr("Zernike terms not fitted, by index in the chosen ordering; piston is always fixed"));
    form->addRow(tr("Zernike order"), m_order);
    form->addRow(tr("Ordering"), m_ordering);
    form->addRow(tr("Normalisation"), m_normalization);
    form->addRow(tr("Objective"), m_objective);
    form->addRow(tr("Read noise"), m_readNoise);
    form->addRow(tr("Grid N"), m_grid);
    form->addRow(tr("Obscuration (of D)"), m_obscuration);
    form->addRow(tr("Spider vanes"), m_spiders);
    form->addRow(tr("Vane width (of D)"), m_spiderWidth);
    form->addRow(tr("Fixed terms"), m_fixedTerms);
    form->addRow(m_fitFlux);
    form->addRow(m_fitBackground);
    form->addRow(m_fitShift);
    return box;
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
    m_gtol = new QLineEdit(QStringLiteral("1e-6"), box);
    m_gtol->setToolTip(tr("Stop when the largest gradient component (in scaled parameters) is at most this"));
    m_ftol = new QLineEdit(QStringLiteral("1e-11"), box);
    m_ftol->setToolTip(tr("Stop when the relative change of the cost in one iteration is below this"));
    m_stages = new QLineEdit(box);
    m_stages->setPlaceholderText(tr("e.g. 2,4 (then the order above)"));
    m_stages->setToolTip(tr("Coarse-to-fine: Zernike orders fitted first, each seeding the next"));
    form->addRow(tr("Backend"), m_backend);
    form->addRow(tr("Gradient"), m_gradient);
    form->addRow(tr("Optimizer"), m_optimizer);
    form->addRow(tr("Precision"), m_precision);
    form->addRow(tr("Threads"), m_threads);
    form->addRow(tr("Max iterations"), m_maxIterations);
    form->addRow(tr("Gradient tolerance"), m_gtol);
    form->addRow(tr("Cost tolerance"), m_ftol);
    form->addRow(tr("Coarse stages"), m_stages);
    return box;
}

void SetupPanel::showPlanes(const Dataset& dataset)
{
    m_planes->setRowCount(int(dataset.planes.size()));
    for (int i = 0; i < int(dataset.planes.size()); ++i) {
        const DatasetPlane& plane = dataset.planes[size_t(i)];
        auto* use = new QTableWidgetItem;
        use->setCheckState(plane.use ? Qt::Checked : Qt::Unchecked);
        m_planes->setItem(i, 0, use);
        const QString source = QString::fromStdString(plane.raw.source); // "path[k]"
        auto* name = new QTableWidgetItem(QIcon(QPixmap::fromImage(planeThumbnail(plane.raw))), QFileInfo(source).fileName());
        name->setFlags(name->flags() & ~Qt::ItemIsEditable);
        name->setToolTip(QStringLiteral("%1\n%2 x %3 pixels").arg(source).arg(plane.raw.width).arg(plane.raw.height));
        m_planes->setItem(i, 1, name);
        m_planes->setItem(i, 2, new QTableWidgetItem(defocusText(plane.defocus)));
        m_planes->setRowHeight(i, 44);
    }
}

void SetupPanel::showPresetPlanes(const std::vector<Image>& images, const std::vector<std::string>& diversity)
{
    m_planes->setRowCount(int(images.size()));
    for (int i = 0; i < int(images.size()); ++i) {
        auto* use = new QTableWidgetItem;
        use->setCheckState(Qt::Checked);
        use->setFlags(use->flags() & ~Qt::ItemIsUserCheckable);
        m_planes->setItem(i, 0, use);
        auto* name = new QTableWidgetItem(QIcon(QPixmap::fromImage(planeThumbnail(images[size_t(i)]))), tr("demo plane %1").arg(i));
        name->setFlags(name->flags() & ~Qt::ItemIsEditable);
        m_planes->setItem(i, 1, name);
        auto* div = new QTableWidgetItem(QString::fromStdString(diversity[size_t(i)]));
        div->setFlags(div->flags() & ~Qt::ItemIsEditable);
        m_planes->setItem(i, 2, div);
        m_planes->setRowHeight(i, 44);
    }
}

QStringList SetupPanel::applyPlaneEdits(Dataset& dataset) const
{
    QStringList problems;
    for (int i = 0; i < m_planes->rowCount() && i < int(dataset.planes.size()); ++i) {
        DatasetPlane& plane = dataset.planes[size_t(i)];
        plane.use = m_planes->item(i, 0)->checkState() == Qt::Checked;
        const QString text = m_planes->item(i, 2) ? m_planes->item(i, 2)->text().trimmed() : QString();
        if (text.isEmpty()) {
            plane.defocus = {};
        } else if (auto d = defocusFromText(text.toStdString())) {
            plane.defocus = *d;
        } else {
            problems << tr("%1: defocus '%2' is neither waves ('1w') nor a length ('0.3um')").arg(QString::fromStdString(plane.raw.source), text);
        }
    }
    return problems;
}

void SetupPanel::showMetadata(const DatasetMetadata& m)
{
    setOptional(m_wavelength, m.wavelength, 1e-9);
    setOptional(m_pixelPitch, m.pixelPitch, 1e-6);
    setOptional(m_fNumber, m.fNumber, 1.0);
    setOptional(m_na, m.numericalAperture, 1.0);
    setOptional(m_samplingQ, m.samplingQ, 1.0);
    setOptional(m_zStep, m.zStep, 1e-6);
    const QSignalBlocker b1(m_immersion), b2(m_defocusModel);
    m_immersion->setValue(m.immersionIndex);
    m_defocusModel->setCurrentIndex(m.defocusModel == DefocusModel::HighNa ? 1 : 0);
}

void SetupPanel::applyMetadata(DatasetMetadata& m) const
{
    m.wavelength = optionalValue(m_wavelength, 1e-9);
    m.pixelPitch = optionalValue(m_pixelPitch, 1e-6);
    m.fNumber = optionalValue(m_fNumber, 1.0);
    m.numericalAperture = optionalValue(m_na, 1.0);
    m.samplingQ = optionalValue(m_samplingQ, 1.0);
    m.zStep = optionalValue(m_zStep, 1e-6);
    m.immersionIndex = m_immersion->value();
    m.defocusModel = m_defocusModel->currentIndex() == 1 ? DefocusModel::HighNa : DefocusModel::Paraxial;
}

void SetupPanel::setSamplingInfo(const QString& text, bool warning)
{
    m_samplingInfo->setText(text);
    m_samplingInfo->setStyleSheet(warning ? QStringLiteral("color: #b35806") : QString());
}

PreprocessOptions SetupPanel::preprocessOptions() const
{
    PreprocessOptions o;
    o.subtractBackground = m_subtractBackground->isChecked();
    o.centre = CentreMethod(m_centre->currentIndex());
    o.cropSize = m_crop->value() - m_crop->value() % 2;
    o.maskSaturated = m_maskSaturated->isChecked();
    o.maskHotPixels = m_maskHot->isChecked();
    o.normalise = m_normalise->isChecked();
    return o;
}

void SetupPanel::setPreprocessOptions(const PreprocessOptions& o)
{
    m_subtractBackground->setChecked(o.subtractBackground);
    m_centre->setCurrentIndex(int(o.centre));
    m_crop->setValue(o.cropSize);
    m_maskSaturated->setChecked(o.maskSaturated);
    m_maskHot->setChecked(o.maskHotPixels);
    m_normalise->setChecked(o.normalise);
}

ModelSettings SetupPanel::modelSettings() const
{
    ModelSettings s;
    s.order = m_order->value();
    s.ordering = m_ordering->currentIndex() == 1 ? ZernikeOrdering::Ansi : ZernikeOrdering::Noll;
    s.normalization = m_normalization->currentIndex() == 1 ? ZernikeNormalization::Unit : ZernikeNormalization::Rms;
    switch (m_objective->currentIndex()) {
    case 1:
        s.objective = ObjectiveKind::Poisson;
        break;
    case 2:
        s.objective = ObjectiveKind::LeastSquares;
        break;
    case 3:
        s.objective = ObjectiveKind::WeightedLeastSquares;
        break;
    default:
        break;
    }
    s.readNoise = m_readNoise->value();
    s.grid = m_grid->value() - m_grid->value() % 2;
    s.obscuration = m_obscuration->value();
    s.spiderCount = m_spiders->value();
    s.spiderWidth = m_spiderWidth->value();
    s.fitShift = m_fitShift->isChecked();
    s.fitFlux = m_fitFlux->isChecked();
    s.fitBackground = m_fitBackground->isChecked();
    for (const QString& part : m_fixedTerms->text().split(QLatin1Char(','), Qt::SkipEmptyParts)) {
        bool ok = false;
        const int index = part.trimmed().toInt(&ok);
        if (ok)
            s.fixedTerms.push_back(index); // the problem checks the index and names a bad one
    }
    return s;
}

void SetupPanel::setModelSettings(const ModelSettings& s)
{
    m_order->setValue(s.order);
    m_ordering->setCurrentIndex(s.ordering == ZernikeOrdering::Ansi ? 1 : 0);
    m_normalization->setCurrentIndex(s.normalization == ZernikeNormalization::Unit ? 1 : 0);
    int objective = 0;
    if (s.objective)
        objective = *s.objective == ObjectiveKind::Poisson ? 1 : *s.objective == ObjectiveKind::LeastSquares ? 2 : 3;
    m_objective->setCurrentIndex(objective);
    m_readNoise->setValue(s.readNoise);
    m_grid->setValue(s.grid);
    m_obscuration->setValue(s.obscuration);
    m_spiders->setValue(s.spiderCount);
    m_spiderWidth->setValue(s.spiderWidth);
    m_fitShift->setChecked(s.fitShift);
    m_fitFlux->setChecked(s.fitFlux);
    m_fitBackground->setChecked(s.fitBackground);
    QStringList fixed;
    for (int index : s.fixedTerms)
        fixed << QString::number(index);
    m_fixedTerms->setText(fixed.join(QLatin1Char(',')));
}

SolverSettings SetupPanel::solverSettings() const
{
    SolverSettings s;
    s.backend = BackendKind(m_backend->currentData().toInt());
    s.gradient = m_gradient->currentIndex() == 1 ? GradientKind::FiniteDifference : GradientKind::Adjoint;
    s.optimizer = m_optimizer->currentIndex() == 1 ? OptimizerKind::Lbfgs : OptimizerKind::Bfgs;
    s.precision = m_precision->currentIndex() == 1 ? Precision::Float : Precision::Double;
    s.threads = m_threads->value();
    s.maxIterations = m_maxIterations->value();
    s.gradientTolerance = parseTolerance(m_gtol, 1e-6);
    s.functionTolerance = parseTolerance(m_ftol, 1e-11);
    for (const QString& part : m_stages->text().split(QLatin1Char(','), Qt::SkipEmptyParts)) {
        bool ok = false;
        const int order = part.trimmed().toInt(&ok);
        if (ok && order >= 1 && order < m_order->value())
            s.stages.push_back(order);
    }
    if (!s.stages.empty())
        s.stages.push_back(m_order->value());
    return s;
}

void SetupPanel::setSolverSettings(const SolverSettings& s)
{
    const int backend = m_backend->findData(int(s.backend));
    if (backend >= 0 && m_backend->model()->flags(m_backend->model()->index(backend, 0)) & Qt::ItemIsEnabled)
        m_backend->setCurrentIndex(backend);
    m_gradient->setCurrentIndex(s.gradient == GradientKind::FiniteDifference ? 1 : 0);
    m_optimizer->setCurrentIndex(s.optimizer == OptimizerKind::Lbfgs ? 1 : 0);
    m_precision->setCurrentIndex(s.precision == Precision::Float ? 1 : 0);
    m_threads->setValue(s.threads);
    m_maxIterations->setValue(s.maxIterations);
    m_gtol->setText(QString::number(s.gradientTolerance, 'g', 4));
    m_ftol->setText(QString::number(s.functionTolerance, 'g', 4));
    QStringList stages;
    for (size_t i = 0; i + 1 < s.stages.size(); ++i) // the last stage is the model order itself
        stages << QString::number(s.stages[i]);
    m_stages->setText(stages.join(QLatin1Char(',')));
}

void SetupPanel::setBackends(const std::vector<BackendStatus>& backends)
{
    m_backend->clear();
    for (const BackendStatus& b : backends) {
        const QString label = b.kind == BackendKind::Cpu ? tr("CPU (FFTW)") : tr("GPU (CUDA)");
        m_backend->addItem(b.available ? QStringLiteral("%1 — %2").arg(label, QString::fromStdString(b.device)) : label, int(b.kind));
        const int row = m_backend->count() - 1;
        if (!b.available) {
            // Only available backends are selectable; the tooltip says why this one is not.
            m_backend->setItemData(row, QString::fromStdString(b.reason), Qt::ToolTipRole);
            if (auto* item = qobject_cast<QStandardItemModel*>(m_backend->model())->item(row))
                item->setEnabled(false);
        } else {
            m_backend->setItemData(row, QString::fromStdString(b.device), Qt::ToolTipRole);
        }
    }
    m_backend->setCurrentIndex(0);
}

void SetupPanel::setRunning(bool running)
{
    m_start->setEnabled(!running);
    m_cancel->setEnabled(running);
}

bool SetupPanel::metadataEditable() const
{
    return m_metadataBox->isEnabled();
}

void SetupPanel::setDataMode(bool files)
{
    m_metadataBox->setEnabled(files);
    m_preparationBox->setEnabled(files);
}

} // namespace wfs::ui
