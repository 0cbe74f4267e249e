#pragma once
// PSF analysis of the fit shown, as core computed it (FitResult::psf): the fitted and the
// diffraction-limited PSF side by side, their 2-D MTFs, the radial profiles of data and model per
// plane, encircled energy and the radial MTF, with Strehl and FWHM.
#include "fit/PsfAnalysis.h"

#include <QWidget>

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
    void setAnalysis(const std::optional<PsfAnalysis>& analysis); // nullopt: says a fit is needed
    bool hasAnalysis() const { return m_analysis.has_value(); }
    QString summaryText() const;

private:
    void showProfiles();

    QStackedWidget* m_pages;
    QLabel *m_summary, *m_empty;
    QComboBox* m_plane;
    ImageView *m_fitted, *m_ideal, *m_mtfFitted, *m_mtfIdeal;
    QCustomPlot *m_profiles, *m_encircled, *m_mtf;
    std::optional<PsfAnalysis> m_analysis;
};

} // namespace wfs::ui
