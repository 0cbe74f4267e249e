#pragma once
// Data, model and residuals of one plane side by side (a row of four in a wide space, two by two
// otherwise), each titled, each with its own colour bar so that all four share one geometry and data
// and model show at one scale; data and model share one display range (unless the user unticks it),
// the residual (data - model) and the normalised residual ((data - model) / sigma of the objective's
// noise model) have symmetric ones.
// PSF planes open zoomed to the box holding most of their flux, with a log or asinh stretch.
#include "ImageView.h"

#include "fit/Results.h"

#include <QWidget>

#include <vector>

class QCheckBox;
class QComboBox;
class QGridLayout;
class QVBoxLayout;

namespace wfs::ui {

struct PlaneEntry {
    QString name;     // short, shown in the selector
    QString fullName; // the whole path and diversity, in the tooltip
    Image data;
};

class PlanesPanel : public QWidget {
    Q_OBJECT

public:
    explicit PlanesPanel(QWidget* parent = nullptr);

    void setPlanes(const std::vector<PlaneEntry>& planes); // drops the models
    // Models in the data layout with their residuals, as core computed them (per plane).
    void setModels(std::vector<Image> models, std::vector<PlaneResiduals> residuals);
    void clearModels();
    int currentPlane() const;
    // The data's pixel pitch (metres; 0 = unknown): the views' axes in µm from the window's centre (where the model
    // grid's centre is), else in pixels.
    void setPixelPitch(double metres);

    ImageView* dataView() const { return m_data; }
    ImageView* modelView() const { return m_model; }
    ImageView* residualView() const { return m_residual; }
    ImageView* normalizedView() const { return m_normalized; }

protected:
    void resizeEvent(QResizeEvent* event) override;
    QComboBox* planeChoice() const { return m_planeChoice; }

private:
    QVBoxLayout* buildControlBar();
    void buildViews();
    void show();
    void applyZoom();

    QComboBox *m_planeChoice, *m_stretch, *m_clip, *m_colorMap, *m_zoom;
    QCheckBox* m_sharedScale;
    ImageView *m_data, *m_model, *m_residual, *m_normalized;
    QGridLayout* m_grid;
    int m_columns = 0;
    double m_pixelPitch = 0.0; // metres; 0 = unknown
    int m_dataShown = -1;      // the plane the data view shows as set now; -1 = to be drawn again
    std::vector<PlaneEntry> m_planes;
    std::vector<Image> m_models;
    std::vector<PlaneResiduals> m_residuals;
};

} // namespace wfs::ui
