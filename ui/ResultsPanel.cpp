#include "ResultsPanel.h"

#include "ZernikeChart.h"

#include "engine/Report.h"

#include <QAction>
#include <QApplication>
#include <QClipboard>
#include <QHeaderView>
#include <QLabel>
#include <QScrollArea>
#include <QScrollBar>
#include <QTableWidget>
#include <QTabWidget>
#include <QVBoxLayout>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <functional>

namespace wfs::ui {

namespace {

constexpr int kFullTextRole = Qt::UserRole + 1; // a cell's whole text where it shows a short one

// Rows and columns of the selection (the whole table when nothing is selected) as tab-separated text,
// with the header, for spreadsheets.
void copyTable(const QTableWidget* table)
{
    const QList<QTableWidgetSelectionRange> ranges = table->selectedRanges();
    int top = table->rowCount(), bottom = -1, left = table->columnCount(), right = -1;
    for (const auto& range : ranges) {
        top = std::min(top, range.topRow());
        bottom = std::max(bottom, range.bottomRow());
        left = std::min(left, range.leftColumn());
        right = std::max(right, range.rightColumn());
    }
    if (ranges.isEmpty()) {
        top = 0;
        bottom = table->rowCount() - 1;
        left = 0;
        right = table->columnCount() - 1;
    }
    QStringList lines;
    QStringList header;
    for (int col = left; col <= right; ++col) {
        const QTableWidgetItem* item = table->horizontalHeaderItem(col);
        header << (item->data(kFullTextRole).isValid() ? item->data(kFullTextRole).toString() : item->text());
    }
    lines << header.join(QLatin1Char('\t'));
    for (int row = top; row <= bottom; ++row) {
        QStringList cells;
        for (int col = left; col <= right; ++col)
            if (const QTableWidgetItem* item = table->item(row, col))
                cells << (item->data(kFullTextRole).isValid() ? item->data(kFullTextRole).toString() : item->text());
            else
                cells << QString();
        lines << cells.join(QLatin1Char('\t'));
    }
    QApplication::clipboard()->setText(lines.join(QLatin1Char('\n')) + QLatin1Char('\n'));
}

void addCopyAction(QTableWidget* table, const std::function<void()>& copy)
{
    auto* action = new QAction(QObject::tr("Copy"), table);
    action->setShortcut(QKeySequence::Copy);
    action->setShortcutContext(Qt::WidgetShortcut);
    QObject::connect(action, &QAction::triggered, table, copy);
    table->addAction(action);
    table->setContextMenuPolicy(Qt::ActionsContextMenu);
}

bool isZernikeLabel(const std::string& label) // "Z4 Defocus"
{
    return label.size() > 1 && label[0] == 'Z' && std::isdigit(static_cast<unsigned char>(label[1]));
}

bool isZonalLabel(const std::string& label) // "zonal phase[12]", "zonal log-amplitude[12]"
{
    return label.rfind("zonal ", 0) == 0;
}

// A result's unit key (FitResult::parameterUnits) in words, and the factor to it: lengths in micrometres,
// as core's report shows defocus offsets.
std::pair<QString, double> shownUnit(const std::string& unit)
{
    if (unit == "m")
        return {QStringLiteral("µm"), 1e6};
    if (unit == "pupil_radii")
        return {QObject::tr("pupil radii"), 1.0};
    if (unit == "data_units")
        return {QObject::tr("data units"), 1.0};
    if (unit == "data_units_per_px")
        return {QObject::tr("data units / px"), 1.0};
    return {QString::fromStdString(unit), 1.0};
}

} // namespace

ResultsPanel::ResultsPanel(QWidget* parent)
    : QWidget(parent)
    , m_key(new QLabel(this))
    , m_summary(new QLabel(this))
    , m_zonal(new QLabel(this))
    , m_pupil(new QLabel(this))
    , m_table(new QTableWidget(this))
    , m_parameters(new QTableWidget(this))
    , m_pages(new QTabWidget(this))
    , m_summaryArea(new QScrollArea(this))
{
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    // The key line first, whole (it wraps between its figures, never inside one), never scrolled away.
    m_key->setObjectName(QStringLiteral("resultKeyLine"));
    m_key->setWordWrap(true);
    m_key->setTextFormat(Qt::RichText);
    m_key->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_key->setAlignment(Qt::AlignLeft | Qt::AlignTop);
    m_key->setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Minimum);
    layout->addWidget(m_key);
    m_pupil->setObjectName(QStringLiteral("pupilFunctionSummary"));
    m_pupil->setWordWrap(true);
    m_pupil->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_pupil->setToolTip(tr("The pupil model beyond the Zernike terms, the detector, and the defocus parameters with one "
                           "standard deviation"));
    m_pupil->setStyleSheet(QStringLiteral("QLabel { font-weight: bold; }"));
    m_pupil->setVisible(false);
    layout->addWidget(m_pupil);
    // The coefficients first (what most fits are for), every other parameter on the second page, core's
    // summary lines (backend, termination, cost) on the third: the tables keep the height.
    m_pages->setObjectName(QStringLiteral("resultPages"));
    m_pages->setDocumentMode(true);
    m_pages->addTab(m_table, tr("Zernike terms"));
    auto* other = new QWidget(m_pages);
    auto* otherLayout = new QVBoxLayout(other);
    otherLayout->setContentsMargins(0, 0, 0, 0);
    m_zonal->setObjectName(QStringLiteral("zonalSummary"));
    m_zonal->setWordWrap(true);
    m_zonal->setVisible(false);
    otherLayout->addWidget(m_parameters);
    otherLayout->addWidget(m_zonal);
    m_pages->addTab(other, tr("Other parameters"));
    m_pages->setTabToolTip(1, tr("Flux, background, tip/tilt per plane, the illumination, the defocus scale and offsets: "
                                 "the fitted values with one standard deviation"));
    m_summary->setObjectName(QStringLiteral("resultSummary"));
    m_summary->setWordWrap(true);
    m_summary->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_summary->setAlignment(Qt::AlignLeft | Qt::AlignTop);
    m_summary->setMargin(4);
    m_summaryArea->setWidget(m_summary);
    m_summaryArea->setWidgetResizable(true);
    m_summaryArea->setFrameShape(QFrame::NoFrame);
    m_summaryArea->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    m_pages->addTab(m_summaryArea, tr("Fit"));
    m_pages->setTabToolTip(2, tr("Backend, termination, evaluations, time and cost: the lines the command line prints"));
    layout->addWidget(m_pages, 1);

    setUpCoefficientTable();
    setUpParameterTable();
    clear(tr("No result yet: load data (or the demo) and press Start (Ctrl+R)."));
}

// The Zernike terms' table: compact headers with the unit once (the rest in tooltips), numbers as wide as they are.
void ResultsPanel::setUpCoefficientTable()
{
    m_table->setObjectName(QStringLiteral("coefficientTable"));
    m_table->setColumnCount(8);
    // Compact headers, the unit once (waves; the nm column the same in nanometres); the rest in tooltips.
    const QStringList headers = {tr("#"), tr("n"), tr("m"), tr("term"), tr("waves"), tr("nm"), tr("± 1σ"), tr("truth")};
    const QStringList tips = {tr("index in the ordering"),
                              tr("radial order n"),
                              tr("azimuthal frequency m"),
                              tr("the term (full name in its tooltip)"),
                              tr("fitted coefficient, waves"),
                              tr("fitted coefficient, nanometres"),
                              tr("one standard deviation, waves (fixed: not fitted)"),
                              tr("the true coefficient, waves")};
    const QStringList copied = {tr("index"), tr("n"), tr("m"), tr("name"), tr("waves"), tr("nm"), tr("± waves (1σ)"), tr("truth (waves)")};
    for (int col = 0; col < headers.size(); ++col) {
        auto* item = new QTableWidgetItem(headers[col]);
        item->setToolTip(tips[col]);
        item->setData(kFullTextRole, copied[col]); // the copied table says its units in every column
        m_table->setHorizontalHeaderItem(col, item);
    }
    // Numbers as wide as they are; the term's name takes the rest and is the one to shorten. Where the
    // dock is too narrow for all, n and m go first (the name and its tooltip say them): no sideways scrolling.
    QHeaderView* header = m_table->horizontalHeader();
    header->setSectionResizeMode(QHeaderView::ResizeToContents);
    header->setSectionResizeMode(3, QHeaderView::Stretch);
    header->setStretchLastSection(false);
    header->setMinimumSectionSize(fontMetrics().horizontalAdvance(QStringLiteral("00")) + 8);
    m_table->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    m_table->setWordWrap(false);
    m_table->setTextElideMode(Qt::ElideRight);
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->verticalHeader()->setVisible(false);
    m_table->verticalHeader()->setDefaultSectionSize(fontMetrics().height() + 4); // an order-4 fit fits without scrolling
    m_table->setSelectionMode(QAbstractItemView::ExtendedSelection);
    m_table->viewport()->installEventFilter(this);
    addCopyAction(m_table, [this] { copySelection(); });
}

// The other parameters' table: name, value, one standard deviation, unit.
void ResultsPanel::setUpParameterTable()
{
    m_parameters->setObjectName(QStringLiteral("parameterTable"));
    m_parameters->setColumnCount(4);
    m_parameters->setHorizontalHeaderLabels({tr("parameter"), tr("value"), tr("± 1σ"), tr("unit")});
    m_parameters->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_parameters->horizontalHeader()->setSectionResizeMode(0, QHeaderView::Stretch);
    m_parameters->setWordWrap(false);
    m_parameters->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_parameters->verticalHeader()->setVisible(false);
    m_parameters->verticalHeader()->setDefaultSectionSize(fontMetrics().height() + 4);
    m_parameters->setSelectionMode(QAbstractItemView::ExtendedSelection);
    addCopyAction(m_parameters, [this] { copyTable(m_parameters); });
}

void ResultsPanel::clear(const QString& message)
{
    m_key->setText(message.toHtmlEscaped());
    m_summary->setText(message);
    m_pupil->clear();
    m_pupil->setVisible(false);
    m_table->setRowCount(0);
    m_parameters->setRowCount(0);
    m_zonal->clear();
    m_zonal->setVisible(false);
    m_pages->setTabText(1, tr("Other parameters"));
    fitColumns();
}

bool ResultsPanel::eventFilter(QObject* watched, QEvent* event)
{
    if (watched == m_table->viewport() && event->type() == QEvent::Resize)
        fitColumns();
    return QWidget::eventFilter(watched, event);
}

void ResultsPanel::fitColumns()
{
    // Each column's width as ResizeToContents gives it (cells and header).
    auto needs = [this](int col) {
        return std::max(static_cast<const QAbstractItemView*>(m_table)->sizeHintForColumn(col),
                        m_table->horizontalHeader()->sectionSizeHint(col));
    };
    const int n = 1, m = 2;
    int total = 0;
    for (int col = 0; col < m_table->columnCount(); ++col)
        if (col != n && col != m && !m_table->isColumnHidden(col))
            total += needs(col);
    const bool roomForNm = total + needs(n) + needs(m) <= m_table->viewport()->width();
    m_table->setColumnHidden(n, !roomForNm);
    m_table->setColumnHidden(m, !roomForNm);
}

QString ResultsPanel::pupilText() const
{
    return m_pupil->text();
}

QString ResultsPanel::zonalText() const
{
    return m_zonal->text();
}

QString ResultsPanel::summaryText() const
{
    return m_summary->text();
}

QString ResultsPanel::keyText() const
{
    return m_key->text();
}

void ResultsPanel::showResult(const FitResult& r, const std::optional<Truth>& truth)
{
    // The summary is core's (engine/Report.h), the same lines the command line prints, in the Fit tab. Above the
    // tables, never scrolled away, stands only the pupil model's first line (what the model was beyond the Zernike
    // terms), all its lines in the tooltip: the header leaves the coefficient table its rows at 1280 x 800.
    const std::vector<std::string> pupil = pupilFunctionLines(r);
    QStringList pupilLines;
    for (const std::string& line : pupil)
        pupilLines << QString::fromStdString(withSymbols(line));
    m_pupil->setText(pupilLines.isEmpty() ? QString() : pupilLines.front().toHtmlEscaped());
    m_pupil->setToolTip(pupilLines.join(QLatin1Char('\n')));
    m_pupil->setVisible(!pupilLines.isEmpty());
    QStringList lines;
    for (const std::string& line : summaryLines(r))
        lines << QString::fromStdString(withSymbols(line)).toHtmlEscaped();
    if (truth && !truth->note.empty()) // why the truth column (and the chart's markers) may differ from the fit
        lines << QString::fromStdString(truth->note).toHtmlEscaped();
    m_summary->setText(lines.join(QStringLiteral("<br>")));
    showKeyLine(r, truth);
    showCoefficients(r, truth);
    showOtherParameters(r);
    fitColumns();
}

void ResultsPanel::showKeyLine(const FitResult& r, const std::optional<Truth>& truth)
{
    // The key figures from the result, each figure with its unit kept on one line (non-breaking spaces),
    // so that the line wraps between figures; then the warnings, which must not scroll out of sight either.
    auto figure = [](const QString& text) { return text.toHtmlEscaped().replace(QLatin1Char(' '), QStringLiteral("&nbsp;")); };
    const QStringList figures = {figure(tr("RMS %1 waves").arg(r.rmsWaves, 0, 'f', 4)),
                                 figure(tr("= %1 nm").arg(r.rmsWaves * r.wavelength * 1e9, 0, 'f', 1)),
                                 figure(tr("· PV %1 waves").arg(r.pvWaves, 0, 'f', 4)), figure(tr("· Strehl %1").arg(r.strehl, 0, 'f', 3))};
    QString removed = tr("(Maréchal %1; %2 removed")
                          .arg(r.strehlMarechal, 0, 'f', 3)
                          .arg(r.defocusRemoved ? tr("piston, tip, tilt, defocus") : tr("piston, tip, tilt"));
    if (r.withDefocus) // where focus sits in the stack, beside the figures without it
        removed +=
            tr("; with defocus: RMS %1 waves, Strehl %2").arg(r.withDefocus->rmsWaves, 0, 'f', 4).arg(r.withDefocus->strehl, 0, 'f', 3);
    QString key = QStringLiteral("<b>%1</b> %2").arg(figures.join(QLatin1Char(' ')), (removed + QLatin1Char(')')).toHtmlEscaped());
    // What the run assumed: one line of settings and values, each reason in the tooltip (the CLI prints them in full).
    QStringList assumed, reasons;
    for (const Assumption& a : r.assumptions) {
        assumed << QStringLiteral("%1 %2").arg(QString::fromStdString(a.setting), QString::fromStdString(a.value));
        reasons << QString::fromStdString(assumptionText(a));
    }
    if (!assumed.isEmpty())
        key += QStringLiteral("<br><span style='color:#555555'>%1</span>")
                   .arg(tr("assumed: %1").arg(assumed.join(QStringLiteral("; "))).toHtmlEscaped());
    m_key->setToolTip(reasons.join(QLatin1Char('\n')));
    for (const std::string& w : r.warnings)
        key += QStringLiteral("<br><span style='color:#b35806'>%1</span>").arg(QString::fromStdString(withSymbols(w)).toHtmlEscaped());
    if (truth && !truth->note.empty()) // the note itself with the summary (Fit tab)
        key +=
            QStringLiteral("<br><span style='color:#555555'>%1</span>").arg(tr("the truth column differs from the fit by design: see Fit"));
    m_key->setText(key);
}

void ResultsPanel::showCoefficients(const FitResult& r, const std::optional<Truth>& truth)
{
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
                                   shortName(c.mode),
                                   QString::number(c.waves, 'f', 5),
                                   QString::number(c.nm, 'f', 2),
                                   c.free ? (std::isfinite(c.uncertaintyWaves) ? QString::number(c.uncertaintyWaves, 'f', 5) : tr("n/a"))
                                          : tr("fixed"),
                                   truthText};
        for (int col = 0; col < cells.size(); ++col) {
            auto* item = new QTableWidgetItem(cells[col]);
            if (col != 3)
                item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
            if (col == 3) { // the short name shown, the full one copied and in the tooltip
                item->setData(kFullTextRole, QString::fromStdString(c.name));
                item->setToolTip(tr("%1 (n %2, m %3)").arg(QString::fromStdString(c.name)).arg(c.mode.n).arg(c.mode.m));
            }
            m_table->setItem(row, col, item);
        }
    }
    m_table->setColumnHidden(7, !truth); // no truth, no column
}

void ResultsPanel::showOtherParameters(const FitResult& r)
{
    // Every other parameter as core labels it, with its 1-sigma; the zonal maps only counted.
    int zonalPhase = 0, zonalAmplitude = 0;
    m_parameters->setRowCount(0);
    for (size_t i = 0; i < r.parameterLabels.size() && i < r.parameterValues.size(); ++i) {
        const std::string& label = r.parameterLabels[i];
        if (isZernikeLabel(label))
            continue;
        if (isZonalLabel(label)) {
            ++(label.rfind("zonal phase", 0) == 0 ? zonalPhase : zonalAmplitude);
            continue;
        }
        const auto [unit, factor] = shownUnit(i < r.parameterUnits.size() ? r.parameterUnits[i] : std::string());
        const double sigma = i < r.parameterUncertainties.size() ? r.parameterUncertainties[i] : NAN;
        const int row = m_parameters->rowCount();
        m_parameters->insertRow(row);
        const QStringList cells = {QString::fromStdString(label), QString::number(r.parameterValues[i] * factor, 'g', 6),
                                   std::isfinite(sigma) ? QString::number(sigma * factor, 'g', 3) : tr("n/a"), unit};
        for (int col = 0; col < cells.size(); ++col) {
            auto* item = new QTableWidgetItem(cells[col]);
            if (col == 1 || col == 2)
                item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
            m_parameters->setItem(row, col, item);
        }
    }
    m_pages->setTabText(1, tr("Other parameters (%1)").arg(m_parameters->rowCount()));
    QStringList zonal;
    if (zonalPhase > 0)
        zonal << tr("%1 zonal phase").arg(zonalPhase);
    if (zonalAmplitude > 0)
        zonal << tr("%1 log-amplitude").arg(zonalAmplitude);
    m_zonal->setText(zonal.isEmpty()
                         ? QString()
                         : tr("Also fitted: %1 values, one per pupil pixel (maps in the phase tab).").arg(zonal.join(tr(" and "))));
    m_zonal->setVisible(!zonal.isEmpty());
}

void ResultsPanel::copySelection() const
{
    copyTable(m_table);
}

} // namespace wfs::ui
