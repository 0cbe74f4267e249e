#pragma once
// The fit's figures: the key line (RMS and PV wavefront error, Strehl) always in view and whole, with
// any warnings; the pupil model, detector and defocus parameters (core's pupil-function lines, kept in
// view); then as pages the coefficient table, every other fitted parameter (flux, background, shifts,
// illumination, defocus scale and offsets) with its uncertainty, and core's summary lines (backend,
// termination, cost). Both tables copyable as tab-separated text with Ctrl+C. Zonal pupil values are
// counted, not listed: the phase tab shows them as maps.
#include "fit/Results.h"
#include "io/ResultJson.h"

#include <QWidget>

#include <optional>

class QLabel;
class QScrollArea;
class QTableWidget;
class QTabWidget;

namespace wfs::ui {

class ResultsPanel : public QWidget {
    Q_OBJECT

public:
    explicit ResultsPanel(QWidget* parent = nullptr);
    void showResult(const FitResult& result, const std::optional<Truth>& truth);
    void clear(const QString& message);
    QString summaryText() const; // core's summary lines but the pupil-function ones
    QString keyText() const;     // the key line: RMS, PV, Strehl (and warnings), or the message when there is no result
    QString pupilText() const;   // core's pupilFunctionLines (empty for a plain Zernike fit)
    QTableWidget* table() const { return m_table; }
    // The parameters that are neither Zernike terms nor zonal pupil values: label, value, 1-sigma, unit.
    QTableWidget* parameterTable() const { return m_parameters; }
    QString zonalText() const;  // how many zonal values the fit has (empty without)
    void copySelection() const; // of the coefficient table

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    void setUpCoefficientTable();
    void showKeyLine(const FitResult& r, const std::optional<Truth>& truth);
    void showCoefficients(const FitResult& r, const std::optional<Truth>& truth);
    void showOtherParameters(const FitResult& r);
    void setUpParameterTable();
    void fitColumns(); // the coefficient table's columns to the width it has

    QLabel *m_key, *m_summary, *m_zonal, *m_pupil;
    QTableWidget *m_table, *m_parameters;
    QTabWidget* m_pages;
    QScrollArea* m_summaryArea;
};

} // namespace wfs::ui
