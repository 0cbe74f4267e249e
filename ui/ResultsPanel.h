#pragma once
// The fit's figures: wavefront error, Strehl, termination, and the coefficient table (copyable as
// tab-separated text with Ctrl+C).
#include "fit/Results.h"
#include "io/ResultJson.h"

#include <QWidget>

#include <optional>

class QLabel;
class QTableWidget;

namespace wfs::ui {

class ResultsPanel : public QWidget {
    Q_OBJECT

public:
    explicit ResultsPanel(QWidget* parent = nullptr);
    void showResult(const FitResult& result, const std::optional<Truth>& truth);
    void clear(const QString& message);
    QString summaryText() const;
    QTableWidget* table() const { return m_table; }
    void copySelection() const;

private:
    QLabel* m_summary;
    QTableWidget* m_table;
};

} // namespace wfs::ui
