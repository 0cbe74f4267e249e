#include "FasthMatrixView.h"

#include "ImageView.h"

#include <qcustomplot.h>

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
    // ImageView draws images bottom-up (FITS orientation) and offers no overlays; its plot is its only
    // QCustomPlot child, so the matrix orientation and the block overlays are set on that plot here
    // rather than widening ImageView's interface for one panel.
    m_plot = m_view->findChild<QCustomPlot*>();
    if (m_plot) {
        m_plot->yAxis->setRangeReversed(true);
        m_view->setAxisLabels(tr("column j"), tr("row i"));
    }
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
    m_view->setImage(image, title, QString(), DisplayRange{-largest, largest});
}

void FasthMatrixView::clear(const QString& message)
{
    removeBlockItems();
    m_rows = m_columns = 0;
    m_view->clear(message);
}

void FasthMatrixView::removeBlockItems()
{
    if (m_plot)
        for (QCPAbstractItem* item : m_blockItems)
            m_plot->removeItem(item);
    m_blockItems.clear();
    m_blockCount = 0;
}

void FasthMatrixView::setColumnBlocks(const std::vector<std::pair<int, int>>& blocks)
{
    removeBlockItems();
    if (!m_plot || blocks.empty() || m_rows == 0) {
        if (m_plot)
            m_plot->replot(QCustomPlot::rpQueuedReplot);
        return;
    }
    // Cells sit at integer coordinates, so a block of columns [begin, begin + width) spans
    // begin - 0.5 .. begin + width - 0.5.
    const double top = -0.5, bottom = m_rows - 0.5;
    for (size_t j = 0; j < blocks.size(); ++j) {
        const auto [begin, width] = blocks[j];
        auto* rect = new QCPItemRect(m_plot);
        rect->topLeft->setCoords(begin - 0.5, top);
        rect->bottomRight->setCoords(begin + width - 0.5, bottom);
        rect->setPen(QPen(QColor(40, 40, 40), 1.5));
        // Alternate shading so that neighbouring blocks read apart even where the matrix is pale.
        rect->setBrush(j % 2 == 0 ? QBrush(QColor(0, 0, 0, 40)) : QBrush(Qt::NoBrush));
        rect->setSelectable(false);
        m_blockItems.push_back(rect);
        if (blocks.size() <= size_t(kMaxBlockLabels)) {
            auto* label = new QCPItemText(m_plot);
            label->position->setCoords(begin + 0.5 * width - 0.5, top);
            label->setPositionAlignment(Qt::AlignHCenter | Qt::AlignTop);
            label->setText(QStringLiteral("P%1").arg(j + 1));
            label->setColor(QColor(20, 20, 20));
            label->setBrush(QBrush(QColor(255, 255, 255, 200)));
            label->setPadding(QMargins(2, 1, 2, 1));
            label->setSelectable(false);
            m_blockItems.push_back(label);
        }
    }
    m_blockCount = int(blocks.size());
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

} // namespace wfs::ui
