#pragma once
// The left-hand panel: data planes, metadata, preparation, model and solver settings, Start/Cancel.
// It holds no data of its own beyond the widgets; MainWindow reads and fills it.
#include "engine/BackendFactory.h"
#include "fit/Solver.h"
#include "io/Dataset.h"
#include "io/Session.h"

#include "io/SettingsProblems.h"
#include "settings/SettingAccess.h"

#include <QWidget>

#include <map>
#include <set>
#include <string>

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QFormLayout;
class QLabel;
class QLineEdit;
class QPushButton;
class QSpinBox;
class QTableWidget;

namespace wfs::ui {

class SetupPanel : public QWidget {
    Q_OBJECT

public:
    explicit SetupPanel(QWidget* parent = nullptr);

    // The panel's boxes by key, top to bottom: data, metadata, preparation, model, imaging-model, pupil-function, solver.
    static QStringList sectionKeys();
    QWidget* section(const QString& key) const; // null for another key

    // Planes: one row per dataset plane (thumbnail, source, use, defocus as text).
    void showPlanes(const Dataset& dataset);
    void showPresetPlanes(const std::vector<Image>& images, const std::vector<std::string>& diversity);
    // Writes the plane table's "use" and defocus edits back; returns messages for defocus text that
    // does not parse.
    QStringList applyPlaneEdits(Dataset& dataset) const;

    // Shows a dataset's metadata; the fields count as not edited by the user until they change.
    void showMetadata(const DatasetMetadata& metadata);
    // The same data opened again: the fields the user edited keep their values (and stay the user's); the others
    // show `metadata`.
    void showMetadataKeepingEdits(const DatasetMetadata& metadata);
    // Writes the fields into `metadata`; a field the user edited gets the origin "user" and settles its
    // conflicts (DatasetMetadata::conflicts).
    void applyMetadata(DatasetMetadata& metadata) const;
    // The user's edit from elsewhere (the loading step): shows `metadata`, marks `key` (DatasetMetadata's
    // field name) as the user's, and emits metadataChanged and settingsEdited.
    void editMetadata(const DatasetMetadata& metadata, const std::string& key);
    // What core assumes for the defocus model (io/Assumptions.h assumeDefocusModel on `metadata`), shown in its field
    // with its origin kept for the run, unless the user set it; the other fields and edits stay as they are.
    void showAssumedDefocusModel(const DatasetMetadata& metadata);
    void setSamplingInfo(const QString& text, bool warning);

    // Which planes take part, by dataset plane index (the table's "use" column); emits settingsEdited.
    void setPlanesInUse(const std::vector<int>& planes);
    std::vector<int> planesInUse() const;

    // The session these widgets describe for `dataset` (its pixels left out: only for checks), and every
    // problem in it (io/SettingsProblems.h plus text that holds no value), errors first. checkSettings also
    // marks the fields concerned (a red frame, the message beside the field and in its tooltip) and
    // disables Start while an error is listed.
    Session sessionFor(const Dataset& dataset) const;
    std::vector<SettingProblem> checkSettings(const Dataset& dataset);
    void showProblems(const std::vector<SettingProblem>& problems);
    // The message shown beside a setting's field (empty when none); for tests and the loading step.
    QString problemText(const std::string& setting) const;
    // A field's own tooltip (meaning, unit, typical value), without any problem; empty for an unknown setting.
    QString fieldToolTip(const std::string& setting) const;
    void requestStart() { emit startRequested(); }

    // The settings as the fields show them; a setting without a field keeps the value last set.
    PreprocessOptions preprocessOptions() const;
    void setPreprocessOptions(const PreprocessOptions& options);
    // Text fields that hold no number (NaN in modelSettings(), which the workflow refuses) appear here
    // as messages that name the field and the text: smoothness weight, object diameter, gain, offset, coarse stages,
    // the emitter's depth, the coverslip's thicknesses and the dipole. A length typed without its unit (object
    // diameter, emitter depth, coverslip thicknesses) is questioned here too, in core's words (base/Units.h
    // typedValue): the workflow would read it as metres, so Start waits for the unit.
    ModelSettings modelSettings() const;
    void setModelSettings(const ModelSettings& settings);
    QStringList modelTextProblems() const;
    // The same, each with the setting it concerns (the command line's spelling, as SettingProblem::setting).
    std::vector<SettingProblem> modelTextSettingProblems() const;
    SolverSettings solverSettings() const;
    void setSolverSettings(const SolverSettings& settings);
    void setBackends(const std::vector<BackendStatus>& backends);

    void setRunning(bool running);
    bool metadataEditable() const;
    void setDataMode(bool files); // files: metadata and preparation editable; demo: fixed by the preset

signals:
    void openRequested();
    void demoRequested();
    void pupilDemoRequested();
    void startRequested();
    void cancelRequested();
    void metadataChanged();
    void preparationChanged();
    void settingsEdited(); // any field or the plane table changed (by the user or editMetadata)

private:
    QWidget* buildData();
    QWidget* buildMetadata();
    void connectMetadataEdits();
    // The metadata fields that are spin boxes, with their DatasetMetadata key.
    std::vector<std::pair<QDoubleSpinBox*, std::string>> metadataBoxes() const;
    QWidget* buildPreparation();
    QWidget* buildModel();
    QWidget* buildPupilFunction();
    void updatePupilFunctionControls(); // the smoothness weight only where a zonal term uses it
    QWidget* buildImagingModel();
    void updateImagingModelControls(); // the vectorial model's rows only when it is chosen
    QWidget* buildSolver();

    // A field that can be marked: its widget, the note row beside it and its own tooltip.
    struct Field {
        QWidget* widget = nullptr;
        QLabel* note = nullptr;
        QString tooltip;
    };
    // Adds `widget` to `form` with a note row below it, registered under `setting` (command-line spelling).
    void addField(QFormLayout* form, const QString& label, QWidget* widget, const std::string& setting, const QString& tooltip);
    // The fields that show one setting's value as it is (a switch, a box of numbers, a list of the setting's words)
    // are shown and read through the settings table's accessor (settings/SettingAccess.h), for the settings whose
    // field is in `part`; the others (lengths typed with units, "auto", lists) are written by hand.
    void showTableFields(const SettingsBundle& settings, SettingPart part);
    void readTableFields(SettingsBundle& settings, SettingPart part) const;
    std::vector<std::pair<QWidget*, const SettingAccess*>> tableFields(SettingPart part) const;
    void watchEdits(); // every editor's change emits settingsEdited

    QTableWidget* m_planes;
    QDoubleSpinBox *m_wavelength, *m_pixelPitch, *m_fNumber, *m_na, *m_immersion, *m_samplingQ, *m_zStep, *m_focusPlane;
    QComboBox *m_defocusModel, *m_zDirection;
    QLabel* m_samplingInfo;
    QWidget *m_metadataBox, *m_preparationBox;
    QCheckBox *m_subtractBackground, *m_maskSaturated, *m_maskHot, *m_normalise, *m_fitShift, *m_fitFlux, *m_fitBackground;
    QComboBox* m_centre;
    QSpinBox *m_crop, *m_order, *m_grid, *m_spiders, *m_threads, *m_maxIterations;
    QComboBox *m_ordering, *m_normalization, *m_objective, *m_backend, *m_gradient, *m_optimizer, *m_precision;
    QDoubleSpinBox *m_readNoise, *m_obscuration, *m_spiderWidth;
    QLineEdit *m_gtol, *m_ftol, *m_stages, *m_fixedTerms;
    QCheckBox* m_removeDefocus = nullptr; // tristate: partly ticked leaves SolverSettings::removeDefocus unset
    // The pupil function and the detector (ModelSettings' fields of the same names).
    QComboBox *m_phaseModel, *m_amplitudeModel;
    QLineEdit *m_regularization, *m_objectDiameter, *m_gain, *m_offset;
    QCheckBox *m_pixelIntegration, *m_fitDefocusScale, *m_fitDefocusOffsets, *m_fitSampling;
    // The imaging model (ModelSettings' block of the same name; the NA and immersion are the metadata's).
    QComboBox *m_imagingModel, *m_dipole;
    QDoubleSpinBox *m_sampleIndex, *m_coverslipIndex, *m_designCoverslipIndex;
    QLineEdit *m_emitterDepth, *m_coverslipThickness, *m_designCoverslipThickness;
    QCheckBox* m_fitEmitterDepth;
    QFormLayout* m_imagingForm = nullptr;
    QPushButton *m_start, *m_cancel;
    std::map<std::string, Field> m_fields;
    // The settings last set (a session, a preset, the remembered ones): what the panel has no field for (bad pixels,
    // the bandwidth, the spider angle, ...) is read back from them, not reset to the defaults.
    PreprocessOptions m_shownPreprocess;
    ModelSettings m_shownModel;
    SolverSettings m_shownSolver;
    std::set<std::string> m_editedMetadata;              // DatasetMetadata keys the user set since showMetadata
    std::map<std::string, std::string> m_assumedOrigins; // keys showMetadata showed as assumed by core, with their origin
    bool m_running = false, m_blocked = false;
};

} // namespace wfs::ui
