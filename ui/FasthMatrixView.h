#pragma once
// A matrix as a heatmap for the FastH panel: the program's ImageView (zoom, pan, colour bar, cursor
// readout) with a diverging map centred on zero, row 0 at the top as matrices are written, and optional
// column blocks drawn over it (FastH's blocks of reflectors, alternately shaded and outlined).
#include <QWidget>

#include <Eigen/Core>

#include <utility>
#include <vector>

namespace wfs::ui {

class ImageView;

class FasthMatrixView : public QWidget {
    Q_OBJECT

public:
    explicit FasthMatrixView(QWidget* parent = nullptr);

    // Shows the matrix with the colour range +-max|entry| (white is zero).
    void setMatrix(const Eigen::MatrixXd& matrix, const QString& title);
    // Column blocks (first column, width) drawn over the matrix; empty removes them.
    void setColumnBlocks(const std::vector<std::pair<int, int>>& blocks);
    void clear(const QString& message);

    ImageView* imageView() const { return m_view; }
    int shownBlockCount() const { return m_blockCount; }
    int matrixRows() const { return m_rows; }
    int matrixColumns() const { return m_columns; }

private:
    ImageView* m_view;
    int m_blockCount = 0;
    int m_rows = 0;
    int m_columns = 0;
};

} // namespace wfs::ui
