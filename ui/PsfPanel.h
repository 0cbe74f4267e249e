#pragma once
// PSF analysis of the fit shown, as core computed it (FitResult::psf): the fitted and the
// diffraction-limited PSF side by side, their 2-D MTFs, the radial profiles of data and model per
// plane, encircled energy and the radial MTF, with Strehl and FWHM.
#include "fit/PsfAnalysis.h"

#include <QWidget>

#include <memory>

#include <optional>

class QComboBox;
class QCustomPlot;
class QLabel;
class QStackedWidget;

namespace wfs::ui {

class ImageView;

class PsfPanel : public QWidget {
    Q_OBJECT

public:
    explicit PsfPanel(QWidget* parent = nullptr);
    // Null: says a fit is needed. Shared, not copied (the PSFs and MTF maps are large); drawn at once
    // when the panel shows, otherwise when it is next shown, so a finishing fit does not draw it unseen.
    void setAnalysis(std::shared_ptr<const PsfAnalysis> analysis);
    bool hasAnalysis() const { return m_analysis != nullptr; }
    // The data's pixel size (metres, in the plane the pixel pitch is given for); 0 = unknown. Known, the
    // PSFs and radii are in micrometres; unknown, in lambda / D (pixels when that is unknown too).
    void setPixelPitch(double metres);
    QString summaryText() const;

protected:
    void showEvent(QShowEvent* event) override;

private:
    void buildEmptyPage();
    QWidget* buildPicturesTab(QWidget* parent);
    QWidget* buildCurvesTab(QWidget* parent);
    void draw();
    void showProfiles();
    struct RadiusUnit {
        double perPixel; // one data pixel in this unit
        QString name;    // "µm", "λ/D" or "pixel"
    };
    RadiusUnit radiusUnit() const;

    QStackedWidget* m_pages;
    QLabel *m_summary, *m_empty;
    QComboBox* m_plane;
    ImageView *m_fitted, *m_ideal, *m_mtfFitted, *m_mtfIdeal;
    QCustomPlot *m_profiles, *m_encircled, *m_mtf;
    std::shared_ptr<const PsfAnalysis> m_analysis;
    double m_pixelPitch = 0.0;
    bool m_drawn = true; // false while an analysis waits to be drawn
};

} // namespace wfs::ui
