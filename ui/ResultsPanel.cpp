#include "ResultsPanel.h"

#include "engine/Report.h"

#include <QAction>
#include <QApplication>
#include <QClipboard>
#include <QHeaderView>
#include <QLabel>
#include <QTableWidget>
#include <QVBoxLayout>

#include <cmath>

namespace wfs::ui {

ResultsPanel::ResultsPanel(QWidget* parent)
    : QWidget(parent)
    , m_summary(new QLabel(this))
    , m_table(new QTableWidget(this))
{
    auto* layout = new QVBoxLayout(this);
    m_summary->setWordWrap(true);
    m_summary->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addWidget(m_summary);
    layout->addWidget(m_table);
    m_table->setColumnCount(8);
    m_table->setHorizontalHeaderLabels({tr("index"), tr("n"), tr("m"), tr("name"), tr("waves"), tr("nm"), tr("± waves (1σ)"), tr("truth (waves)")});
    m_table->horizontalHeader()->setSectionResizeMode(3, QHeaderView::Stretch);
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->verticalHeader()->setVisible(false);
    m_table->verticalHeader()->setDefaultSectionSize(fontMetrics().height() + 6); // an order-4 fit fits without scrolling
    m_table->setSelectionMode(QAbstractItemView::ExtendedSelection);
    auto* copy = new QAction(tr("Copy"), m_table);
    copy->setShortcut(QKeySequence::Copy);
    copy->setShortcutContext(Qt::WidgetShortcut);
    connect(copy, &QAction::triggered, this, &ResultsPanel::copySelection);
    m_table->addAction(copy);
    m_table->setContextMenuPolicy(Qt::ActionsContextMenu);
    clear(tr("No result yet: load data (or the demo) and press Start."));
}

void ResultsPanel::clear(const QString& message)
{
    m_summary->setText(message);
    m_table->setRowCount(0);
}

QString ResultsPanel::summaryText() const
{
    return m_summary->text();
}

void ResultsPanel::showResult(const FitResult& r, const std::optional<Truth>& truth)
{
    // The summary is core's (engine/Report.h), the same lines the command line prints.
    QStringList lines;
    for (const std::string& line : summaryLines(r))
        lines << QString::fromStdString(line).toHtmlEscaped();
    QString text = lines.join(QStringLiteral("<br>"));
    for (const std::string& w : r.warnings)
        text += QStringLiteral("<br><span style='color:#b35806'>%1</span>").arg(QString::fromStdString(w).toHtmlEscaped());
    m_summary->setText(text);

    m_table->setRowCount(int(r.coefficients.size()));
    for (int row = 0; row < int(r.coefficients.size()); ++row) {
        const CoefficientResult& c = r.coefficients[size_t(row)];
        QString truthText;
        if (truth)
            for (const TruthTerm& t : truth->terms)
                if (zernike::modeFromIndex(t.index, truth->ordering) == c.mode)
                    truthText = QString::number(t.valueWaves, 'f', 5);
        const QStringList cells = {QString::number(c.index),
                                   QString::number(c.mode.n),
                                   QString::number(c.mode.m),
                                   QString::fromStdString(c.name),
                                   QString::number(c.waves, 'f', 5),
                                   QString::number(c.nm, 'f', 2),
                                   c.free ? (std::isfinite(c.uncertaintyWaves) ? QString::number(c.uncertaintyWaves, 'f', 5) : tr("n/a")) : tr("fixed"),
                                   truthText};
        for (int col = 0; col < cells.size(); ++col) {
            auto* item = new QTableWidgetItem(cells[col]);
            if (col != 3)
                item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
            m_table->setItem(row, col, item);
        }
    }
}

void ResultsPanel::copySelection() const
{
    // Rows and columns of the selection as tab-separated text, with the header, for spreadsheets.
    const QList<QTableWidgetSelectionRange> ranges = m_table->selectedRanges();
    int top = m_table->rowCount(), bottom = -1, left = m_table->columnCount(), right = -1;
    for (const auto& range : ranges) {
        top = std::min(top, range.topRow());
        bottom = std::max(bottom, range.bottomRow());
        left = std::min(left, range.leftColumn());
        right = std::max(right, range.rightColumn());
    }
    if (ranges.isEmpty()) {
        top = 0;
        bottom = m_table->rowCount() - 1;
        left = 0;
        right = m_table->columnCount() - 1;
    }
    QStringList lines;
    QStringList header;
    for (int col = left; col <= right; ++col)
        header << m_table->horizontalHeaderItem(col)->text();
    lines << header.join(QLatin1Char('\t'));
    for (int row = top; row <= bottom; ++row) {
        QStringList cells;
        for (int col = left; col <= right; ++col)
            cells << (m_table->item(row, col) ? m_table->item(row, col)->text() : QString());
        lines << cells.join(QLatin1Char('\t'));
    }
    QApplication::clipboard()->setText(lines.join(QLatin1Char('\n')) + QLatin1Char('\n'));
}

} // namespace wfs::ui
