#include "SetupPanel.h"
#include "SetupPanelFields.h"

#include "ImageView.h"
#include "fit/PsfAnalysis.h"
#include "io/Assumptions.h"
#include "settings/ModelSettings.h"
#include "settings/SettingsText.h"
#include "base/Units.h"
#include <map>
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

namespace {

// A settings enum from a combo box listing its values in the settings' order (settings/SettingsText.h).
template <typename E>
E listedSetting(const QComboBox* combo)
{
    return SettingEnum<E>::values[size_t(std::clamp(combo->currentIndex(), 0, int(std::size(SettingEnum<E>::values)) - 1))];
}

} // namespace

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
    // The ticks are the user's (the Load tab's proposal is core's rule, shown and accepted there): no run proposes again.
    dataset.planesChosen = dataset.planesChosen || m_planes->rowCount() > 0;
    for (int i = 0; i < m_planes->rowCount() && i < int(dataset.planes.size()); ++i) {
        DatasetPlane& plane = dataset.planes[size_t(i)];
        plane.use = m_planes->item(i, 0)->checkState() == Qt::Checked;
        const QString text = m_planes->item(i, 2) ? m_planes->item(i, 2)->text().trimmed() : QString();
        if (text.isEmpty()) {
            plane.defocus = {};
        } else if (auto d = defocusFromText(text.toStdString())) {
            plane.defocus = *d;
        } else {
            problems << tr("%1: defocus '%2' is neither waves ('1w') nor a length ('0.3um')")
                            .arg(QString::fromStdString(plane.raw.source), text);
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
    {
        const QSignalBlocker block(m_focusPlane);
        m_focusPlane->setValue(m.focusPlane ? *m.focusPlane : -1.0);
    }
    m_editedMetadata.clear();
    // Values core assumed (the Load tab's focus plane) keep saying so until the user sets them.
    m_assumedOrigins.clear();
    for (const auto& [key, origin] : m.origin)
        if (isAssumedOrigin(origin))
            m_assumedOrigins[key] = origin;
    const QSignalBlocker b1(m_immersion), b2(m_defocusModel), b3(m_zDirection);
    m_immersion->setValue(m.immersionIndex);
    m_zDirection->setCurrentIndex(m.zIndexDown ? 1 : 0);
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
    m.zIndexDown = m_zDirection->currentIndex() == 1;
    m.focusPlane = m_focusPlane->value() >= 0.0 ? std::optional<double>(m_focusPlane->value()) : std::nullopt;
    // What the user set is the user's, whatever the files said; and it settles their disagreement.
    for (const auto& [key, origin] : m_assumedOrigins)
        m.origin[key] = origin;
    for (const std::string& key : m_editedMetadata)
        m.origin[key] = "user";
    std::erase_if(m.conflicts, [this](const DatasetMetadata::Conflict& c) { return m_editedMetadata.count(c.key) > 0; });
}

void SetupPanel::showAssumedDefocusModel(const DatasetMetadata& metadata)
{
    if (m_editedMetadata.count("defocusModel"))
        return;
    const auto origin = metadata.origin.find("defocusModel");
    if (origin != metadata.origin.end() && isAssumedOrigin(origin->second))
        m_assumedOrigins["defocusModel"] = origin->second;
    else
        m_assumedOrigins.erase("defocusModel");
    const QSignalBlocker block(m_defocusModel);
    m_defocusModel->setCurrentIndex(metadata.defocusModel == DefocusModel::HighNa ? 1 : 0);
}

void SetupPanel::showMetadataKeepingEdits(const DatasetMetadata& metadata)
{
    const std::set<std::string> edited = m_editedMetadata;
    std::map<std::string, double> typed;
    for (const auto& [box, key] : metadataBoxes())
        if (edited.count(key))
            typed[key] = box->value();
    const int defocusModel = m_defocusModel->currentIndex(), zDirection = m_zDirection->currentIndex();
    showMetadata(metadata);
    const QSignalBlocker b1(m_defocusModel), b2(m_zDirection);
    for (const auto& [box, key] : metadataBoxes())
        if (const auto value = typed.find(key); value != typed.end()) {
            const QSignalBlocker block(box);
            box->setValue(value->second);
        }
    if (edited.count("defocusModel"))
        m_defocusModel->setCurrentIndex(defocusModel);
    if (edited.count("zIndexDown"))
        m_zDirection->setCurrentIndex(zDirection);
    m_editedMetadata = edited;
}

void SetupPanel::editMetadata(const DatasetMetadata& metadata, const std::string& key)
{
    std::set<std::string> edited = m_editedMetadata;
    showMetadata(metadata);
    edited.insert(key);
    m_editedMetadata = std::move(edited);
    emit metadataChanged();
    emit settingsEdited();
}

void SetupPanel::setPlanesInUse(const std::vector<int>& planes)
{
    {
        const QSignalBlocker block(m_planes);
        for (int row = 0; row < m_planes->rowCount(); ++row)
            if (QTableWidgetItem* use = m_planes->item(row, 0))
                use->setCheckState(std::find(planes.begin(), planes.end(), row) != planes.end() ? Qt::Checked : Qt::Unchecked);
    }
    emit settingsEdited();
}

std::vector<int> SetupPanel::planesInUse() const
{
    std::vector<int> planes;
    for (int row = 0; row < m_planes->rowCount(); ++row)
        if (QTableWidgetItem* use = m_planes->item(row, 0); use && use->checkState() == Qt::Checked)
            planes.push_back(row);
    return planes;
}

Session SetupPanel::sessionFor(const Dataset& dataset) const
{
    // The checks need the planes' sizes, sources and defocus, not their pixels.
    Session session;
    Dataset& d = session.dataset;
    d.files = dataset.files;
    d.metadata = dataset.metadata;
    for (const DatasetPlane& plane : dataset.planes) {
        DatasetPlane p;
        p.raw.width = plane.raw.width;
        p.raw.height = plane.raw.height;
        p.raw.source = plane.raw.source;
        p.file = plane.file;
        p.indexInFile = plane.indexInFile;
        p.use = plane.use;
        p.defocus = plane.defocus;
        p.formatMaximum = plane.formatMaximum;
        d.planes.push_back(std::move(p));
    }
    applyPlaneEdits(d);
    applyMetadata(d.metadata);
    d.preprocess = preprocessOptions();
    session.model = modelSettings();
    session.solver = solverSettings();
    return session;
}

std::vector<SettingProblem> SetupPanel::checkSettings(const Dataset& dataset)
{
    std::vector<SettingProblem> problems;
    // Text that holds no value: named with the field, before core's checks (which would see NaN).
    Dataset scratch;
    for (const DatasetPlane& plane : dataset.planes) {
        DatasetPlane p;
        p.raw.source = plane.raw.source;
        scratch.planes.push_back(std::move(p));
    }
    const QStringList planeProblems = applyPlaneEdits(scratch);
    for (const QString& text : planeProblems)
        problems.push_back({"defocus", -1, {}, MessageLevel::Error, text.toStdString()});
    for (SettingProblem& p : modelTextSettingProblems())
        problems.push_back(std::move(p));
    if (problems.empty())
        problems = settingsProblems(sessionFor(dataset));
    showProblems(problems);
    return problems;
}

void SetupPanel::showProblems(const std::vector<SettingProblem>& problems)
{
    // Beside the field a short note (the message up to its advice), in its tooltip the whole message.
    auto shortText = [](const std::string& message) {
        const size_t colon = message.find(": ");
        return QString::fromStdString(colon != std::string::npos && colon > 10 ? message.substr(0, colon) : message);
    };
    std::map<std::string, QStringList> notes, tips;
    std::map<std::string, bool> errors;
    for (const SettingProblem& p : problems) {
        const QString text = QString::fromStdString(p.message);
        const bool error = p.level == MessageLevel::Error;
        notes[p.setting] << (error ? shortText(p.message) : tr("check: %1").arg(shortText(p.message)));
        tips[p.setting] << text;
        errors[p.setting] = errors[p.setting] || error;
        if (error)
            for (const std::string& other : p.alternatives)
                if (other != "sampling") { // the override is optional: its field stays unmarked
                    notes[other] << tr("or set this instead");
                    tips[other] << tr("or: %1").arg(text);
                    errors[other] = true;
                }
    }
    for (auto& [setting, field] : m_fields) {
        const auto it = notes.find(setting);
        const bool marked = it != notes.end();
        field.note->setText(marked ? it->second.join(QLatin1Char('\n')) : QString());
        field.note->setToolTip(marked ? tips[setting].join(QLatin1Char('\n')) : QString());
        field.note->setStyleSheet(marked && !errors[setting] ? QStringLiteral("color: #b35806") : QStringLiteral("color: #b2182b"));
        if (auto* form = qobject_cast<QFormLayout*>(field.note->parentWidget()->layout()))
            form->setRowVisible(field.note, marked);
        field.widget->setToolTip(marked ? field.tooltip + QStringLiteral("\n\n") + tips[setting].join(QLatin1Char('\n')) : field.tooltip);
        field.widget->setProperty("problem", marked && errors[setting]);
        // A tinted field (its palette, so that spin-box arrows and check marks keep the style's look).
        if (marked) {
            QPalette palette = field.widget->palette();
            palette.setColor(QPalette::Base, errors[setting] ? QColor(0xfd, 0xdb, 0xc7) : QColor(0xfe, 0xe0, 0xb6));
            field.widget->setPalette(palette);
        } else {
            field.widget->setPalette(QPalette()); // inherits again
        }
    }
    m_blocked = hasErrors(problems);
    m_start->setEnabled(!m_running && !m_blocked);
    m_start->setToolTip(m_blocked ? tr("Settings are missing or invalid: see the fields marked in red") : QString());
}

QString SetupPanel::fieldToolTip(const std::string& setting) const
{
    const auto it = m_fields.find(setting);
    return it == m_fields.end() ? QString() : it->second.tooltip;
}

QString SetupPanel::problemText(const std::string& setting) const
{
    const auto it = m_fields.find(setting);
    return it == m_fields.end() ? QString() : it->second.note->text();
}

void SetupPanel::setSamplingInfo(const QString& text, bool warning)
{
    m_samplingInfo->setText(text);
    m_samplingInfo->setStyleSheet(warning ? QStringLiteral("color: #b35806") : QString());
}

PreprocessOptions SetupPanel::preprocessOptions() const
{
    PreprocessOptions o = m_shownPreprocess;
    o.subtractBackground = m_subtractBackground->isChecked();
    o.centre = CentreMethod(m_centre->currentData().toInt());
    o.cropSize = m_crop->value() - m_crop->value() % 2;
    o.maskSaturated = m_maskSaturated->isChecked();
    o.maskHotPixels.reset(); // partly checked: core decides
    if (m_maskHot->checkState() != Qt::PartiallyChecked)
        o.maskHotPixels = m_maskHot->checkState() == Qt::Checked;
    o.normalise = m_normalise->isChecked();
    return o;
}

void SetupPanel::setPreprocessOptions(const PreprocessOptions& o)
{
    m_shownPreprocess = o;
    m_subtractBackground->setChecked(o.subtractBackground);
    m_centre->setCurrentIndex(m_centre->findData(int(o.centre)));
    m_crop->setValue(o.cropSize);
    m_maskSaturated->setChecked(o.maskSaturated);
    m_maskHot->setCheckState(!o.maskHotPixels ? Qt::PartiallyChecked : *o.maskHotPixels ? Qt::Checked : Qt::Unchecked);
    m_normalise->setChecked(o.normalise);
}

ModelSettings SetupPanel::modelSettings() const
{
    ModelSettings s = m_shownModel;
    s.order = m_order->value();
    s.ordering = listedSetting<ZernikeOrdering>(m_ordering);
    s.normalization = listedSetting<ZernikeNormalization>(m_normalization);
    // "automatic" (core decides), then the command line's list.
    const std::vector<ObjectiveKind> objectives = optionValues<ObjectiveKind>();
    s.objective.reset();
    if (const int row = m_objective->currentIndex(); row >= 1 && row <= int(objectives.size()))
        s.objective = objectives[size_t(row - 1)];
    s.readNoise = m_readNoise->value();
    s.grid = m_grid->value() - m_grid->value() % 2;
    s.obscuration = m_obscuration->value();
    s.spiderCount = m_spiders->value();
    s.spiderWidth = m_spiderWidth->value();
    s.fitShift = m_fitShift->isChecked();
    s.fitFlux = m_fitFlux->isChecked();
    s.fitBackground = m_fitBackground->isChecked();
    s.fixedTerms.clear();
    for (const QString& part : m_fixedTerms->text().split(QLatin1Char(','), Qt::SkipEmptyParts)) {
        bool ok = false;
        const int index = part.trimmed().toInt(&ok);
        if (ok)
            s.fixedTerms.push_back(index); // the problem checks the index and names a bad one
    }
    s.phaseModel = listedSetting<PupilPhaseModel>(m_phaseModel);
    s.amplitudeModel = listedSetting<PupilAmplitudeModel>(m_amplitudeModel);
    s.regularization = regularizationFromText(m_regularization);
    s.pixelIntegration = m_pixelIntegration->isChecked();
    s.objectDiameter = diameterFromText(m_objectDiameter);
    s.gain = gainFromText(m_gain);
    s.estimateOffset = isAuto(m_offset);
    s.offset = s.estimateOffset ? ModelSettings{}.offset : numberFromText(m_offset, 0.0);
    s.fitDefocusScale = m_fitDefocusScale->isChecked();
    s.fitDefocusOffsets = m_fitDefocusOffsets->isChecked();
    s.fitSampling = m_fitSampling->isChecked();
    s.imagingModel = listedSetting<ImagingModel>(m_imagingModel);
    s.sampleIndex = m_sampleIndex->value();
    s.emitterDepth = lengthOrDefault(m_emitterDepth, 0.0);
    s.fitEmitterDepth = m_fitEmitterDepth->isChecked();
    s.dipole = dipoleFromText(m_dipole->currentText().trimmed().toLower().toStdString()).value_or(DipoleSpec{});
    s.coverslipIndex = m_coverslipIndex->value();
    s.coverslipThickness = lengthOrDefault(m_coverslipThickness, ModelSettings{}.coverslipThickness);
    s.designCoverslipIndex = m_designCoverslipIndex->value();
    s.designCoverslipThickness = lengthOrDefault(m_designCoverslipThickness, 0.0);
    return s;
}

QStringList SetupPanel::modelTextProblems() const
{
    QStringList problems;
    for (const SettingProblem& p : modelTextSettingProblems())
        problems << QString::fromStdString(p.message);
    return problems;
}

std::vector<SettingProblem> SetupPanel::modelTextSettingProblems() const
{
    // Ranges are core's to check (the workflow refuses them by name); here only text that holds no value, and a
    // length without its unit, which core questions rather than reads as metres.
    std::vector<SettingProblem> problems;
    const auto add = [&](const char* setting, const QString& message) {
        problems.push_back({setting, -1, {}, MessageLevel::Error, message.toStdString()});
    };
    const auto text = [](const QLineEdit* edit) { return edit->text().trimmed(); };
    const double weight = regularizationFromText(m_regularization);
    if (std::isnan(weight))
        add("regularization", tr("Smoothness weight '%1' is neither a number (e.g. 1 or 1e-3) nor 'auto'").arg(text(m_regularization)));
    else if (weight <= 0.0 && text(m_regularization).compare(QLatin1String("auto"), Qt::CaseInsensitive) != 0)
        add("regularization", tr("Smoothness weight '%1' must be positive (or 'auto')").arg(text(m_regularization)));
    if (std::isnan(gainFromText(m_gain)))
        add("gain", tr("Gain '%1' is neither a number (electrons per data unit) nor 'auto'").arg(text(m_gain)));
    if (!isAuto(m_offset) && std::isnan(numberFromText(m_offset, 0.0)))
        add("offset", tr("Offset '%1' is neither a number (data units) nor 'auto'").arg(text(m_offset)));
    struct LengthField {
        const QLineEdit* edit;
        QString name;
        const char* setting;
        Setting range;
        QString example;
    };
    const LengthField lengths[] = {
        {m_objectDiameter, tr("Object diameter"), "object-diameter", Setting::ObjectDiameter, QStringLiteral("100nm or 0.2um")},
        {m_emitterDepth, tr("Emitter depth"), "emitter-depth", Setting::EmitterDepth, QStringLiteral("2um")},
        {m_coverslipThickness, tr("Coverslip thickness"), "coverslip-thickness", Setting::CoverslipThickness, QStringLiteral("170um")},
        {m_designCoverslipThickness, tr("Design thickness"), "design-coverslip-thickness", Setting::CoverslipThickness,
         QStringLiteral("170um")},
    };
    for (const LengthField& f : lengths) {
        if (std::isnan(lengthOrDefault(f.edit, 0.0)))
            add(f.setting, tr("%1 '%2' is not a length (e.g. %3)").arg(f.name, text(f.edit), f.example));
        else if (const TypedValue typed = typedValue(f.range, text(f.edit).toStdString()); typed.verdict == TypedValue::Verdict::Questioned)
            add(f.setting, QString::fromStdString(typed.message)); // "the emitter depth '2' has no unit ...; did you mean 2um?"
    }
    if (!dipoleFromText(m_dipole->currentText().trimmed().toLower().toStdString()))
        add("dipole", tr("Dipole '%1' is not free, x, y, z or THETA,PHI in degrees (e.g. 45,30)").arg(m_dipole->currentText().trimmed()));
    for (const QString& part : m_stages->text().split(QLatin1Char(','), Qt::SkipEmptyParts)) {
        bool ok = false;
        part.trimmed().toInt(&ok);
        if (!ok) {
            add("stages", tr("Coarse stages '%1' are not Zernike orders (e.g. 2,4 before order 6)").arg(text(m_stages)));
            break;
        }
    }
    return problems;
}

void SetupPanel::setModelSettings(const ModelSettings& s)
{
    m_shownModel = s;
    m_order->setValue(s.order);
    m_ordering->setCurrentIndex(settingIndex(s.ordering));
    m_normalization->setCurrentIndex(settingIndex(s.normalization));
    const std::vector<ObjectiveKind> objectives = optionValues<ObjectiveKind>();
    m_objective->setCurrentIndex(s.objective ? 1 + int(std::find(objectives.begin(), objectives.end(), *s.objective) - objectives.begin())
                                             : 0);
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
    m_phaseModel->setCurrentIndex(settingIndex(s.phaseModel));
    m_amplitudeModel->setCurrentIndex(settingIndex(s.amplitudeModel));
    m_regularization->setText(s.regularization == 0.0 ? QStringLiteral("auto") : numberText(s.regularization));
    m_pixelIntegration->setChecked(s.pixelIntegration);
    m_objectDiameter->setText(lengthText(s.objectDiameter));
    m_gain->setText(s.gain == 0.0 ? QStringLiteral("auto") : numberText(s.gain));
    m_offset->setText(s.estimateOffset ? QStringLiteral("auto") : numberText(s.offset));
    m_fitDefocusScale->setChecked(s.fitDefocusScale);
    m_fitDefocusOffsets->setChecked(s.fitDefocusOffsets);
    m_fitSampling->setChecked(s.fitSampling);
    m_imagingModel->setCurrentIndex(settingIndex(s.imagingModel));
    m_sampleIndex->setValue(s.sampleIndex);
    m_emitterDepth->setText(s.emitterDepth == 0.0 ? QStringLiteral("0") : lengthText(s.emitterDepth));
    m_fitEmitterDepth->setChecked(s.fitEmitterDepth);
    m_dipole->setCurrentText(dipoleOptionText(s.dipole));
    m_coverslipIndex->setValue(s.coverslipIndex);
    m_coverslipThickness->setText(s.coverslipThickness == 0.0 ? QStringLiteral("0") : lengthText(s.coverslipThickness));
    m_designCoverslipIndex->setValue(s.designCoverslipIndex);
    m_designCoverslipThickness->setText(lengthText(s.designCoverslipThickness));
}

SolverSettings SetupPanel::solverSettings() const
{
    SolverSettings s = m_shownSolver;
    s.backend = BackendKind(m_backend->currentData().toInt());
    s.gradient = listedSetting<GradientKind>(m_gradient);
    s.optimizer = listedSetting<OptimizerKind>(m_optimizer);
    s.precision = listedSetting<Precision>(m_precision);
    s.threads = m_threads->value();
    s.maxIterations = m_maxIterations->value();
    s.gradientTolerance = parseTolerance(m_gtol, SolverSettings{}.gradientTolerance);
    s.functionTolerance = parseTolerance(m_ftol, SolverSettings{}.functionTolerance);
    // Every stage typed, the bad ones too: core refuses them by name (SolverSettings::stagesError), as it does the
    // command line's, instead of this panel dropping them unseen. Text that is no number is modelTextProblems'.
    s.stages.clear();
    for (const QString& part : m_stages->text().split(QLatin1Char(','), Qt::SkipEmptyParts)) {
        bool ok = false;
        const int order = part.trimmed().toInt(&ok);
        if (ok)
            s.stages.push_back(order);
    }
    if (!s.stages.empty())
        s.stages.push_back(m_order->value());
    s.removeDefocus.reset(); // partly checked: core decides
    if (m_removeDefocus->checkState() != Qt::PartiallyChecked)
        s.removeDefocus = m_removeDefocus->checkState() == Qt::Checked;
    return s;
}

void SetupPanel::setSolverSettings(const SolverSettings& s)
{
    m_shownSolver = s;
    const int backend = m_backend->findData(int(s.backend));
    if (backend >= 0 && m_backend->model()->flags(m_backend->model()->index(backend, 0)) & Qt::ItemIsEnabled)
        m_backend->setCurrentIndex(backend);
    m_gradient->setCurrentIndex(settingIndex(s.gradient));
    m_optimizer->setCurrentIndex(settingIndex(s.optimizer));
    m_precision->setCurrentIndex(settingIndex(s.precision));
    m_threads->setValue(s.threads);
    m_maxIterations->setValue(s.maxIterations);
    m_gtol->setText(QString::number(s.gradientTolerance, 'g', 4));
    m_ftol->setText(QString::number(s.functionTolerance, 'g', 4));
    QStringList stages;
    for (size_t i = 0; i + 1 < s.stages.size(); ++i) // the last stage is the model order itself
        stages << QString::number(s.stages[i]);
    m_stages->setText(stages.join(QLatin1Char(',')));
    m_removeDefocus->setCheckState(!s.removeDefocus ? Qt::PartiallyChecked : *s.removeDefocus ? Qt::Checked : Qt::Unchecked);
}

void SetupPanel::setBackends(const std::vector<BackendStatus>& backends)
{
    m_backend->clear();
    for (const BackendStatus& b : backends) {
        const QString label = b.kind == BackendKind::Cpu ? tr("CPU (FFTW)") : tr("GPU (CUDA)");
        // The device's name is the tooltip: a processor's name can be of any length, and would cut the text.
        m_backend->addItem(label, int(b.kind));
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
    m_running = running;
    m_start->setEnabled(!running && !m_blocked);
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
