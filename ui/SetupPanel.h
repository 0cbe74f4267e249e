#pragma once
// The left-hand panel: data planes, metadata, preparation, model and solver settings, Start/Cancel.
// It holds no data of its own beyond the widgets; MainWindow reads and fills it.
#include "engine/BackendFactory.h"
#include "fit/Solver.h"
#include "io/Dataset.h"
#include "io/Session.h"

#include <QWidget>

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
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

    // Planes: one row per dataset plane (thumbnail, source, use, defocus as text).
    void showPlanes(const Dataset& dataset);
    void showPresetPlanes(const std::vector<Image>& images, const std::vector<std::string>& diversity);
    // Writes the plane table's "use" and defocus edits back; returns messages for defocus text that
    // does not parse.
    QStringList applyPlaneEdits(Dataset& dataset) const;

    void showMetadata(const DatasetMetadata& metadata);
    void applyMetadata(DatasetMetadata& metadata) const; // writes the fields the user set
    void setSamplingInfo(const QString& text, bool warning);

    PreprocessOptions preprocessOptions() const;
    void setPreprocessOptions(const PreprocessOptions& options);
    // Text fields that hold no number (NaN in modelSettings(), which the workflow refuses) appear here
    // as messages that name the field and the text: smoothness weight, object diameter, gain, offset.
    ModelSettings modelSettings() const;
    void setModelSettings(const ModelSettings& settings);
    QStringList modelTextProblems() const;
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

private:
    QWidget* buildData();
    QWidget* buildMetadata();
    QWidget* buildPreparation();
    QWidget* buildModel();
    QWidget* buildPupilFunction();
    void updatePupilFunctionControls(); // the smoothness weight only where a zonal term uses it
    QWidget* buildSolver();

    QTableWidget* m_planes;
    QDoubleSpinBox *m_wavelength, *m_pixelPitch, *m_fNumber, *m_na, *m_immersion, *m_samplingQ, *m_zStep;
    QComboBox *m_defocusModel, *m_zDirection;
    QLabel* m_samplingInfo;
    QWidget *m_metadataBox, *m_preparationBox;
    QCheckBox *m_subtractBackground, *m_maskSaturated, *m_maskHot, *m_normalise, *m_fitShift, *m_fitFlux, *m_fitBackground;
    QComboBox* m_centre;
    QSpinBox *m_crop, *m_order, *m_grid, *m_spiders, *m_threads, *m_maxIterations;
    QComboBox *m_ordering, *m_normalization, *m_objective, *m_backend, *m_gradient, *m_optimizer, *m_precision;
    QDoubleSpinBox *m_readNoise, *m_obscuration, *m_spiderWidth;
    QLineEdit *m_gtol, *m_ftol, *m_stages, *m_fixedTerms;
    // The pupil function and the detector (ModelSettings' fields of the same names).
    QComboBox *m_phaseModel, *m_amplitudeModel;
    QLineEdit *m_regularization, *m_objectDiameter, *m_gain, *m_offset;
    QCheckBox *m_pixelIntegration, *m_fitDefocusScale, *m_fitDefocusOffsets, *m_fitSampling;
    QPushButton *m_start, *m_cancel;
};

} // namespace wfs::ui
