#include "SetupPanel.h"
#include "SetupPanelFields.h"

#include "ImageView.h"
#include "fit/PsfAnalysis.h"
#include "io/Assumptions.h"
#include "settings/ModelSettings.h"
#include "settings/SettingsTable.h"
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
// The settings whose field is not their value as it is: the grid and crop boxes round to an even size, the backend
// list offers only the backends this machine has.
bool isHandWritten(const std::string& name)
{
    return name == "grid" || name == "crop" || name == "backend";
}

// A word setting's session words in the order its list shows them (listedWords: the command line's).
std::vector<std::string> shownWords(const SettingAccess& access)
{
    std::vector<std::string> words;
    for (const auto& [option, word] : listedWords(access))
        words.push_back(word);
    return words;
}

// The row of a list box of `count` rows that shows the first word: 0, or 1 after an "automatic" row where the setting
// may be unset; -1 when the box is not the setting's list.
int firstWordRow(const SettingAccess& access, int count)
{
    const int words = int(shownWords(access).size());
    return count == words ? 0 : access.canBeUnset && count == words + 1 ? 1 : -1;
}

} // namespace

std::vector<std::pair<QWidget*, const SettingAccess*>> SetupPanel::tableFields(SettingPart part) const
{
    std::vector<std::pair<QWidget*, const SettingAccess*>> fields;
    for (const auto& [name, field] : m_fields) {
        const SettingDescription* setting = findSetting(name);
        if (!setting || isHandWritten(name))
            continue;
        const SettingAccess& access = setting->sessionKeys[0].access;
        if (access && access.part == part)
            fields.emplace_back(field.widget, &access);
    }
    return fields;
}

void SetupPanel::showTableFields(const SettingsBundle& settings, SettingPart part)
{
    for (const auto& [widget, accessor] : tableFields(part)) {
        const SettingAccess& access = *accessor;
        const SettingValue value = access.get(settings);
        if (auto* box = qobject_cast<QCheckBox*>(widget); box && access.type == SettingType::Boolean) {
            box->setCheckState(!std::holds_alternative<bool>(value) ? Qt::PartiallyChecked
                               : std::get<bool>(value)              ? Qt::Checked
                                                                    : Qt::Unchecked);
        } else if (auto* spin = qobject_cast<QSpinBox*>(widget); spin && access.type == SettingType::Integer) {
            spin->setValue(std::get<int>(value));
        } else if (auto* real = qobject_cast<QDoubleSpinBox*>(widget); real && access.type == SettingType::Number && !access.canBeUnset) {
            real->setValue(std::get<double>(value));
        } else if (auto* list = qobject_cast<QComboBox*>(widget); list && access.type == SettingType::Word) {
            const int first = firstWordRow(access, list->count());
            const std::vector<std::string> words = shownWords(access);
            if (first < 0)
                continue;
            if (!std::holds_alternative<std::string>(value))
                list->setCurrentIndex(0);
            else if (const auto it = std::find(words.begin(), words.end(), std::get<std::string>(value)); it != words.end())
                list->setCurrentIndex(first + int(it - words.begin()));
        }
    }
}

void SetupPanel::readTableFields(SettingsBundle& settings, SettingPart part) const
{
    for (const auto& [widget, accessor] : tableFields(part)) {
        const SettingAccess& access = *accessor;
        if (auto* box = qobject_cast<QCheckBox*>(widget); box && access.type == SettingType::Boolean) {
            access.set(settings, access.canBeUnset && box->checkState() == Qt::PartiallyChecked
                                     ? SettingValue{}
                                     : SettingValue{box->checkState() == Qt::Checked});
        } else if (auto* spin = qobject_cast<QSpinBox*>(widget); spin && access.type == SettingType::Integer) {
            access.set(settings, spin->value());
        } else if (auto* real = qobject_cast<QDoubleSpinBox*>(widget); real && access.type == SettingType::Number && !access.canBeUnset) {
            access.set(settings, real->value());
        } else if (auto* list = qobject_cast<QComboBox*>(widget); list && access.type == SettingType::Word) {
            const int first = firstWordRow(access, list->count()), row = list->currentIndex();
            const std::vector<std::string> words = shownWords(access);
            if (first >= 0 && row >= 0 && row < first + int(words.size()))
                access.set(settings, row < first ? SettingValue{} : SettingValue{words[size_t(row - first)]});
        }
    }
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
    SettingsBundle settings;
    settings.preprocess = m_shownPreprocess;
    readTableFields(settings, SettingPart::Preprocess);
    PreprocessOptions o = settings.preprocess;
    o.cropSize = m_crop->value() - m_crop->value() % 2;
    return o;
}

void SetupPanel::setPreprocessOptions(const PreprocessOptions& o)
{
    m_shownPreprocess = o;
    SettingsBundle settings;
    settings.preprocess = o;
    showTableFields(settings, SettingPart::Preprocess);
    m_crop->setValue(o.cropSize);
}

ModelSettings SetupPanel::modelSettings() const
{
    SettingsBundle settings;
    settings.model = m_shownModel;
    readTableFields(settings, SettingPart::Model);
    ModelSettings s = settings.model;
    s.grid = m_grid->value() - m_grid->value() % 2;
    s.fixedTerms.clear();
    for (const QString& part : m_fixedTerms->text().split(QLatin1Char(','), Qt::SkipEmptyParts)) {
        bool ok = false;
        const int index = part.trimmed().toInt(&ok);
        if (ok)
            s.fixedTerms.push_back(index); // the problem checks the index and names a bad one
    }
    s.regularization = regularizationFromText(m_regularization);
    s.objectDiameter = diameterFromText(m_objectDiameter);
    s.gain = gainFromText(m_gain);
    s.estimateOffset = isAuto(m_offset);
    s.offset = s.estimateOffset ? ModelSettings{}.offset : numberFromText(m_offset, 0.0);
    s.emitterDepth = lengthOrDefault(m_emitterDepth, 0.0);
    s.dipole = dipoleFromText(m_dipole->currentText().trimmed().toLower().toStdString()).value_or(DipoleSpec{});
    s.coverslipThickness = lengthOrDefault(m_coverslipThickness, ModelSettings{}.coverslipThickness);
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
    SettingsBundle settings;
    settings.model = s;
    showTableFields(settings, SettingPart::Model);
    m_grid->setValue(s.grid);
    QStringList fixed;
    for (int index : s.fixedTerms)
        fixed << QString::number(index);
    m_fixedTerms->setText(fixed.join(QLatin1Char(',')));
    m_regularization->setText(s.regularization == 0.0 ? QStringLiteral("auto") : numberText(s.regularization));
    m_objectDiameter->setText(lengthText(s.objectDiameter));
    m_gain->setText(s.gain == 0.0 ? QStringLiteral("auto") : numberText(s.gain));
    m_offset->setText(s.estimateOffset ? QStringLiteral("auto") : numberText(s.offset));
    m_emitterDepth->setText(s.emitterDepth == 0.0 ? QStringLiteral("0") : lengthText(s.emitterDepth));
    m_dipole->setCurrentText(dipoleOptionText(s.dipole));
    m_coverslipThickness->setText(s.coverslipThickness == 0.0 ? QStringLiteral("0") : lengthText(s.coverslipThickness));
    m_designCoverslipThickness->setText(lengthText(s.designCoverslipThickness));
}

SolverSettings SetupPanel::solverSettings() const
{
    SettingsBundle settings;
    settings.solver = m_shownSolver;
    readTableFields(settings, SettingPart::Solver);
    SolverSettings s = settings.solver;
    s.backend = BackendKind(m_backend->currentData().toInt());
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
    return s;
}

void SetupPanel::setSolverSettings(const SolverSettings& s)
{
    m_shownSolver = s;
    const int backend = m_backend->findData(int(s.backend));
    if (backend >= 0 && m_backend->model()->flags(m_backend->model()->index(backend, 0)) & Qt::ItemIsEnabled)
        m_backend->setCurrentIndex(backend);
    SettingsBundle settings;
    settings.solver = s;
    showTableFields(settings, SettingPart::Solver);
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
