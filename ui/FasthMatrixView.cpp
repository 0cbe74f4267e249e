#include "FasthMatrixView.h"

#include "ImageView.h"

#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

namespace wfs::ui {

namespace {
// Above this many blocks the labels would overlap; the shading alone still shows the split.
constexpr int kMaxBlockLabels = 16;
} // namespace

FasthMatrixView::FasthMatrixView(QWidget* parent)
    : QWidget(parent)
    , m_view(new ImageView(this))
{
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_view);
    m_view->setColorMap(ColorMap::Diverging);
    m_view->setRowZeroAtTop(true);
    m_view->setAxisLabels(tr("column j"), tr("row i"));
}

void FasthMatrixView::setMatrix(const Eigen::MatrixXd& matrix, const QString& title)
{
    m_rows = int(matrix.rows());
    m_columns = int(matrix.cols());
    if (matrix.size() == 0) {
        clear(tr("empty"));
        return;
    }
    // Image row r holds matrix row r; with the reversed y axis row 0 is drawn at the top.
    Image image(m_columns, m_rows);
    for (int row = 0; row < m_rows; ++row)
        for (int col = 0; col < m_columns; ++col)
            image.at(row, col) = matrix(row, col);
    double largest = matrix.cwiseAbs().maxCoeff();
    if (!(largest > 0.0) || !std::isfinite(largest))
        largest = 1.0;
    // No label under the bar: the title names the matrix, and the line it would take is the picture's.
    m_view->setImage(image, title, QString(), DisplayRange{-largest, largest});
}

void FasthMatrixView::clear(const QString& message)
{
    m_blockCount = 0;
    m_rows = m_columns = 0;
    m_view->clear(message);
}

void FasthMatrixView::setColumnBlocks(const std::vector<std::pair<int, int>>& blocks)
{
    std::vector<ImageOverlay> overlays;
    if (m_rows > 0) {
        // Cells sit at integer coordinates, so a block of columns [begin, begin + width) spans
        // begin - 0.5 .. begin + width - 0.5 (row 0 at the top: the top edge is -0.5). Alternate
        // shading, so that neighbouring blocks read apart even where the matrix is pale.
        for (size_t j = 0; j < blocks.size(); ++j) {
            const auto [begin, width] = blocks[j];
            ImageOverlay overlay;
            overlay.rect = QRectF(QPointF(begin - 0.5, -0.5), QPointF(begin + width - 0.5, m_rows - 0.5));
            overlay.shaded = j % 2 == 0;
            if (blocks.size() <= size_t(kMaxBlockLabels))
                overlay.label = QStringLiteral("P%1").arg(j + 1);
            overlays.push_back(overlay);
        }
    }
    m_view->setOverlays(overlays);
    m_blockCount = m_rows > 0 ? int(blocks.size()) : 0;
}

} // namespace wfs::ui
