#include "SpeedupLab.h"

#include "io/ResultJson.h"
#include "optics/Zernike.h"

#include <qcustomplot.h>

#include <QApplication>
#include <QCheckBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QPainter>
#include <QScrollArea>
#include <QScrollBar>
#include <QSplitter>
#include <QStyle>
#include <QStackedWidget>
#include <QTabWidget>
#include <QTableWidget>
#include <QThread>
#include <QVBoxLayout>
#include <QtConcurrent>

#include <cmath>
#include <map>

namespace wfs::ui {

namespace {
const QColor kColors[] = {QColor(202, 0, 32),  QColor(5, 113, 176), QColor(0, 150, 120),  QColor(120, 80, 170),
                          QColor(230, 150, 0), QColor(40, 40, 40),  QColor(150, 150, 150)};

QString explanation()
{
    return QObject::tr("<h3>What is compared</h3>"
                       "<p>Every method runs the same BFGS fit of the OOF telescope problem (three defocused beams, Zernike "
                       "coefficients plus illumination centre and amplitude: P parameters) from the same start, and stops by the "
                       "same rule. Only the way the gradient is obtained, and the hardware, change.</p>"
                       "<p><b>Finite differences</b> (the NumPy-style baseline of Nikolic 2018) perturb each parameter in turn: one "
                       "gradient costs <b>P + 1</b> model evaluations, each three FFTs. <b>The exact adjoint gradient</b> "
                       "(reverse mode, what autograd computes) propagates the residual back through the model: one gradient costs "
                       "about <b>2</b> model evaluations (six FFTs), whatever P is. With P = 47 at order 8 that is a factor of about "
                       "24 before any hardware enters.</p>"
                       "<p>The work is FFT-bound: N x N transforms dominate, so time per evaluation grows like N² log N. More CPU "
                       "threads help the large transforms; single precision halves the memory traffic; a GPU runs the transforms and "
                       "the pointwise work in parallel at far higher memory bandwidth, which pays at large N and loses to launch "
                       "latency at small N. The table's last column checks that the methods agree: the largest difference of any "
                       "coefficient from the adjoint CPU float64 solution. Float32 runs stop at their precision limit (their gradient "
                       "cannot get below the 1e-8 rule), so they agree to a few thousandths of a wave, float64 runs far closer.</p>"
                       "<p>Times marked <i>≈</i> were estimated, not run: the reference fit's number of gradient "
                       "evaluations times this method's measured time per gradient. Use <i>Run estimated for real</i> to time "
                       "them.</p>");
}

// A method's name on one line, or on two split at the comma nearest its middle.
QString methodText(const QString& name, bool twoLines)
{
    if (!twoLines)
        return name;
    int best = -1;
    for (int at = name.indexOf(QLatin1String(", ")); at >= 0; at = name.indexOf(QLatin1String(", "), at + 1))
        if (best < 0 || std::abs(at - name.size() / 2) < std::abs(best - name.size() / 2))
            best = at;
    return best < 0 ? name : name.left(best + 1) + QLatin1Char('\n') + name.mid(best + 2);
}

// A lab plot's size floor and its legend in a row of its own under the axes: every series keyed, none covered.
void styleLabPlot(QCustomPlot* plot)
{
    plot->setMinimumSize(260, 240);
    plot->plotLayout()->addElement(1, 0, plot->legend);
    plot->plotLayout()->setRowStretchFactor(1, 0.001);
    plot->legend->setFillOrder(QCPLegend::foColumnsFirst);
    plot->legend->setWrap(2);
    plot->legend->setBorderPen(Qt::NoPen);
    plot->legend->setVisible(true);
    QFont small = plot->legend->font();
    small.setPointSizeF(small.pointSizeF() * 0.9);
    plot->legend->setFont(small);
    // Two columns where two of the longest names fit across the plot, else one: measured with the application's
    // font, which presentation mode enlarges at once (the legend's own follows at the replot), before each replot.
    QObject::connect(plot, &QCustomPlot::beforeReplot, plot, [plot] {
        const QFontMetrics metrics(QApplication::font());
        int longest = 0;
        for (int i = 0; i < plot->plottableCount(); ++i)
            longest = std::max(longest, metrics.horizontalAdvance(plot->plottable(i)->name()));
        const int twoColumns = 2 * (longest + 4 * metrics.height()) + 20; // names, icons and gaps, generously
        plot->legend->setWrap(twoColumns <= plot->width() ? 2 : 1);
        // As many value ticks as the axis has room for at this text size (a log axis over less than 1.6 decades
        // ticks linearly, 60000, 80000, ...).
        plot->yAxis->ticker()->setTickCount(std::clamp(plot->axisRect()->height() / (3 * metrics.height()), 2, 5));
    });
}

// The results table: compact headers with their meaning in tooltips.
QTableWidget* newResultsTable(QWidget* parent)
{
    // Compact headers (two lines where long; the full meaning in tooltips), every column as wide as its
    // numbers, no wrapping inside a number.
    const QStringList headers = {SpeedupLab::tr("method"),
                                 SpeedupLab::tr("grid"),
                                 SpeedupLab::tr("order"),
                                 SpeedupLab::tr("P"),
                                 SpeedupLab::tr("seconds"),
                                 SpeedupLab::tr("iterations"),
                                 SpeedupLab::tr("model\nevaluations"),
                                 SpeedupLab::tr("eval\nms"),
                                 SpeedupLab::tr("evaluations\nper s"),
                                 SpeedupLab::tr("final\ncost"),
                                 SpeedupLab::tr("max |Δc|\n(waves)")};
    const QStringList tips = {
        SpeedupLab::tr("gradient, hardware, precision and threads"),
        SpeedupLab::tr("grid size N"),
        SpeedupLab::tr("Zernike order"),
        SpeedupLab::tr("fitted parameters P"),
        SpeedupLab::tr("time to solution; ≈: estimated, not run"),
        SpeedupLab::tr("BFGS iterations"),
        SpeedupLab::tr("model (cost) evaluations, gradients included"),
        SpeedupLab::tr("milliseconds per model evaluation"),
        SpeedupLab::tr("model evaluations per second"),
        SpeedupLab::tr("the cost at the solution"),
        SpeedupLab::tr("the largest difference of any coefficient from the reference solution (adjoint, CPU float64), waves")};
    auto* table = new QTableWidget(0, int(headers.size()), parent);
    for (int c = 0; c < headers.size(); ++c) {
        auto* item = new QTableWidgetItem(headers[c]);
        item->setToolTip(tips[c]);
        table->setHorizontalHeaderItem(c, item);
    }
    table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    table->horizontalHeader()->setStretchLastSection(false);
    table->setWordWrap(false);
    table->verticalHeader()->setVisible(false);
    return table;
}

} // namespace

SpeedupLab::SpeedupLab(QWidget* parent)
    : QWidget(parent)
{
    auto* layout = new QHBoxLayout(this);
    layout->addWidget(buildControls());
    layout->addWidget(buildResults(), 1);
    connect(m_run, &QPushButton::clicked, this, [this] { run(settingsFromControls()); });
    connect(m_cancelButton, &QPushButton::clicked, this, &SpeedupLab::cancel);
    connect(m_realButton, &QPushButton::clicked, this, &SpeedupLab::runEstimatedForReal);
}

// Methods, grids, orders, run / cancel, progress, the explanation and the exports.
QWidget* SpeedupLab::buildControls()
{
    auto* controls = new QVBoxLayout;
    controls->addWidget(buildMethods());
    auto* form = new QFormLayout;
    m_grids = new QLineEdit(QStringLiteral("64,128,256"), this);
    m_grids->setToolTip(tr("Grid sizes N (even, 64..2048)"));
    m_orders = new QLineEdit(QStringLiteral("8"), this);
    m_orders->setToolTip(tr("Zernike orders (2..9)"));
    m_forReal = new QCheckBox(tr("run long baselines for real"), this);
    m_forReal->setToolTip(tr("Otherwise finite-difference fits longer than 10 s are estimated from measured evaluation times"));
    form->addRow(tr("Grids"), m_grids);
    form->addRow(tr("Orders"), m_orders);
    form->addRow(m_forReal);
    controls->addLayout(form);
    auto* buttons = new QHBoxLayout;
    m_run = new QPushButton(tr("Run"), this);
    m_cancelButton = new QPushButton(tr("Cancel"), this);
    m_cancelButton->setEnabled(false);
    m_realButton = new QPushButton(tr("Run estimated for real"), this);
    m_realButton->setEnabled(false);
    buttons->addWidget(m_run);
    buttons->addWidget(m_cancelButton);
    controls->addLayout(buttons);
    controls->addWidget(m_realButton);
    m_progress = new QProgressBar(this);
    controls->addWidget(m_progress);
    m_status = new QLabel(this);
    m_status->setWordWrap(true);
    controls->addWidget(m_status);
    auto* text = new QLabel(explanation(), this);
    text->setWordWrap(true);
    text->setTextFormat(Qt::RichText);
    controls->addWidget(text, 1);
    auto* exports = new QHBoxLayout;
    auto* csv = new QPushButton(tr("Export CSV…"), this);
    auto* png = new QPushButton(tr("Export PNG…"), this);
    exports->addWidget(csv);
    exports->addWidget(png);
    controls->addLayout(exports);
    auto* controlsWidget = new QWidget(this);
    controlsWidget->setLayout(controls);
    // The controls and the explanation scroll on their own, so that the plots and the table keep the
    // tab's height (at 1280 x 800 too); the column is as wide as the longest method name.
    auto* controlsScroll = new QScrollArea(this);
    m_controlsScroll = controlsScroll;
    controlsScroll->setWidget(controlsWidget);
    controlsScroll->setWidgetResizable(true);
    controlsScroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    controlsScroll->setFrameShape(QFrame::NoFrame);
    fitControlsWidth();
    connect(csv, &QPushButton::clicked, this, [this] {
        const QString path = QFileDialog::getSaveFileName(this, tr("Export the lab's table"), QString(), tr("CSV (*.csv)"));
        if (!path.isEmpty())
            exportCsv(path);
    });
    connect(png, &QPushButton::clicked, this, [this] {
        const QString path = QFileDialog::getSaveFileName(this, tr("Export the lab's plots"), QString(), tr("PNG (*.png)"));
        if (!path.isEmpty())
            exportPng(path);
    });
    return controlsScroll;
}

// One box per method, the reference always on, GPU methods off (with the reason) where there is no GPU.
QGroupBox* SpeedupLab::buildMethods()
{
    auto* methodsBox = new QGroupBox(tr("Methods"), this);
    auto* methodsLayout = new QVBoxLayout(methodsBox);
    const BackendStatus gpu = backendStatus(BackendKind::Gpu);
    const auto methods = labMethods();
    for (size_t i = 0; i < methods.size(); ++i) {
        auto* box = new QCheckBox(methods[i].name, methodsBox);
        box->setChecked(i <= 2);
        if (int(i) == kReferenceMethod) {
            box->setEnabled(false); // every comparison is made against it
            box->setToolTip(tr("Always run: the other methods are compared with its solution"));
        }
        if (methods[i].backend == BackendKind::Gpu && !gpu.available) {
            box->setChecked(false);
            box->setEnabled(false);
            box->setToolTip(QString::fromStdString(gpu.reason));
        }
        methodsLayout->addWidget(box);
        m_methodBoxes.push_back(box);
    }
    return methodsBox;
}

QWidget* SpeedupLab::buildResults()
{
    // Before a run a sentence says what to do; after it, the three plots as tabs (each gets the whole
    // width, so nothing is cut at 1280 x 800) above the table.
    m_pages = new QStackedWidget(this);
    auto* hint = new QLabel(tr("<p style='font-size:large'>No measurements yet.</p>"
                               "<p>Choose the methods, grid sizes and Zernike orders on the left and press <b>Run</b>: "
                               "each method fits the same OOF problem, and the plots here show the time to solution, the "
                               "speed-up over finite differences on one CPU thread, and the model evaluations per second "
                               "against the grid size.</p>"),
                            m_pages);
    hint->setWordWrap(true);
    hint->setAlignment(Qt::AlignCenter);
    hint->setMargin(24);
    m_pages->addWidget(hint);
    auto* right = new QSplitter(Qt::Vertical, m_pages);
    m_plotTabs = new QTabWidget(right);
    m_plots = m_plotTabs;
    m_timePlot = new QCustomPlot(m_plotTabs);
    m_speedupPlot = new QCustomPlot(m_plotTabs);
    m_ratePlot = new QCustomPlot(m_plotTabs);
    // The speed-up plot with its story beside it, in the window's text size (a class reads it from the back).
    auto* speedupPage = new QWidget(m_plotTabs);
    auto* speedupRow = new QHBoxLayout(speedupPage);
    speedupRow->setContentsMargins(0, 0, 0, 0);
    m_speedupStory = new QLabel(speedupPage);
    m_speedupStory->setObjectName(QStringLiteral("speedupStory"));
    m_speedupStory->setWordWrap(true);
    m_speedupStory->setTextFormat(Qt::RichText);
    m_speedupStory->setAlignment(Qt::AlignTop | Qt::AlignLeft);
    m_speedupStory->setMargin(6);
    m_speedupStory->setMinimumWidth(220);
    m_speedupStory->setMaximumWidth(340);
    speedupRow->addWidget(m_speedupPlot, 1);
    speedupRow->addWidget(m_speedupStory);
    // Finite differences may top the evaluation rate: said above the plot, before anyone reads it as the winner.
    auto* ratePage = new QWidget(m_plotTabs);
    auto* rateColumn = new QVBoxLayout(ratePage);
    rateColumn->setContentsMargins(0, 0, 0, 0);
    auto* rateNote = new QLabel(tr("Finite differences can make more model evaluations per second than the adjoint: each is a plain "
                                   "forward model, and one gradient needs P + 1 of them, while the adjoint's include a backward pass. "
                                   "What counts is the time to solution (first tab)."),
                                ratePage);
    rateNote->setObjectName(QStringLiteral("rateNote"));
    rateNote->setWordWrap(true);
    rateNote->setMargin(4);
    rateColumn->addWidget(rateNote);
    rateColumn->addWidget(m_ratePlot, 1);
    m_plotTabs->addTab(m_timePlot, tr("Time to solution"));
    m_plotTabs->addTab(speedupPage, tr("Speed-up"));
    m_plotTabs->addTab(ratePage, tr("Evaluation rate"));
    for (QCustomPlot* plot : {m_timePlot, m_speedupPlot, m_ratePlot})
        styleLabPlot(plot);
    for (QCustomPlot* plot : {m_timePlot, m_ratePlot}) {
        plot->xAxis->setScaleType(QCPAxis::stLogarithmic);
        plot->yAxis->setScaleType(QCPAxis::stLogarithmic);
        QSharedPointer<QCPAxisTickerLog> logTicker(new QCPAxisTickerLog);
        plot->yAxis->setTicker(logTicker);
        plot->xAxis->setLabel(tr("grid N (log scale)"));
    }
    m_timePlot->yAxis->setLabel(tr("time to solution (s)"));
    m_ratePlot->yAxis->setLabel(tr("model evaluations per second"));
    m_speedupPlot->yAxis->setLabel(tr("speed-up over the baseline (x)"));
    m_table = newResultsTable(right);
    m_table->viewport()->installEventFilter(this);
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    right->addWidget(m_plotTabs);
    right->addWidget(m_table);
    right->setStretchFactor(0, 3);
    right->setStretchFactor(1, 1);
    m_pages->addWidget(right);
    return m_pages;
}

SpeedupLab::~SpeedupLab()
{
    m_cancelRequested = true;
    m_future.waitForFinished();
}

LabSettings SpeedupLab::settingsFromControls() const
{
    LabSettings s;
    auto numbers = [](const QString& text) {
        std::vector<int> values;
        for (const QString& part : text.split(QLatin1Char(','), Qt::SkipEmptyParts)) {
            bool ok = false;
            const int v = part.trimmed().toInt(&ok);
            if (ok)
                values.push_back(v);
        }
        return values;
    };
    s.grids = numbers(m_grids->text());
    s.orders = numbers(m_orders->text());
    s.methods.clear();
    for (size_t i = 0; i < m_methodBoxes.size(); ++i)
        if (m_methodBoxes[i]->isChecked() || int(i) == kReferenceMethod)
            s.methods.push_back(int(i));
    s.runBaselinesForReal = m_forReal->isChecked();
    return s;
}

void SpeedupLab::run(const LabSettings& settings)
{
    for (int g : settings.grids)
        if (g < 16 || g > 4096 || g % 2) {
            emit failed(tr("Grid sizes must be even numbers between 16 and 4096; got %1.").arg(g));
            m_status->setText(tr("Grid sizes must be even numbers between 16 and 4096."));
            return;
        }
    for (int o : settings.orders)
        if (!zernike::orderError(o).empty()) { // core's one range rule
            emit failed(tr("Orders must be between 1 and %1; got %2.").arg(zernike::kMaxOrder).arg(o));
            m_status->setText(tr("Orders must be between 1 and %1.").arg(zernike::kMaxOrder));
            return;
        }
    if (settings.grids.empty() || settings.orders.empty()) {
        emit failed(tr("Choose at least one grid size and one order."));
        return;
    }
    m_rows.clear();
    m_lastSettings = settings;
    start(settings, {});
}

void SpeedupLab::runEstimatedForReal()
{
    std::vector<LabRow> redo;
    for (const LabRow& row : m_rows)
        if (row.estimated)
            redo.push_back(row);
    if (redo.empty() || isRunning())
        return;
    std::erase_if(m_rows, [](const LabRow& r) { return r.estimated; });
    start(m_lastSettings, redo);
}

void SpeedupLab::cancel()
{
    m_cancelRequested = true;
}

void SpeedupLab::start(const LabSettings& settings, const std::vector<LabRow>& redo)
{
    if (isRunning())
        return;
    m_cancelRequested = false;
    m_running = true;
    const int total = redo.empty() ? int(settings.grids.size() * settings.orders.size() * settings.methods.size()) : int(redo.size());
    m_progress->setRange(0, total);
    m_progress->setValue(0);
    m_run->setEnabled(false);
    m_realButton->setEnabled(false);
    m_cancelButton->setEnabled(true);
    m_status->setText(tr("running…"));
    refresh();

    // Reference solutions for re-runs: the worker does not touch m_rows.
    SpeedupReferences references;
    for (const LabRow& row : m_rows)
        if (row.method == kReferenceMethod)
            references[{row.grid, row.order}] = row.bench.summary.parameters;

    m_future = QtConcurrent::run([this, settings, redo, references] {
        auto post = [this](const LabRow& row) {
            QMetaObject::invokeMethod(
                this, [this, row] { addRow(row); }, Qt::QueuedConnection);
        };
        QString error;
        try {
            runSpeedupExperiment(settings, redo, references, post, m_cancelRequested);
        } catch (const std::exception& e) {
            error = QString::fromUtf8(e.what());
        }
        const bool wasCancelled = m_cancelRequested.load();
        QMetaObject::invokeMethod(
            this, [this, wasCancelled, error] { workerDone(wasCancelled, error); }, Qt::QueuedConnection);
    });
}

void SpeedupLab::addRow(const LabRow& row)
{
    m_rows.push_back(row);
    m_progress->setValue(m_progress->value() + 1);
    refresh();
    emit rowAdded(int(m_rows.size()) - 1);
}

void SpeedupLab::workerDone(bool wasCancelled, const QString& error)
{
    m_running = false;
    m_run->setEnabled(true);
    m_cancelButton->setEnabled(false);
    m_realButton->setEnabled(std::any_of(m_rows.begin(), m_rows.end(), [](const LabRow& r) { return r.estimated; }));
    if (!error.isEmpty()) {
        m_status->setText(tr("Stopped: %1").arg(error));
        emit failed(error);
    } else if (wasCancelled) {
        m_status->setText(tr("Cancelled after %1 row(s); the rows shown are complete measurements.").arg(m_rows.size()));
        emit cancelled();
    } else {
        m_status->setText(tr("Done: %1 row(s).").arg(m_rows.size()));
        emit finished();
    }
}

void SpeedupLab::refresh()
{
    refreshTable();
    for (QCustomPlot* plot : {m_timePlot, m_ratePlot, m_speedupPlot})
        plot->clearPlottables();
    std::vector<int> grids = m_lastSettings.grids;
    std::sort(grids.begin(), grids.end());
    m_pages->setCurrentIndex(m_rows.empty() ? 0 : 1);
    drawTimeAndRate(grids);
    drawSpeedups(grids);
    for (QCustomPlot* plot : {m_timePlot, m_ratePlot, m_speedupPlot})
        plot->rescaleAxes();
    // Padding: points off the frame on the log axes, bars below the top on the linear one.
    if (!grids.empty())
        for (QCustomPlot* plot : {m_timePlot, m_ratePlot}) {
            plot->xAxis->setRange(grids.front() / 1.3, grids.back() * 1.3);
            const QCPRange y = plot->yAxis->range();
            plot->yAxis->setRange(y.lower / 2.0, y.upper * 2.0);
        }
    m_speedupPlot->xAxis->setRange(-0.6, double(grids.size()) - 0.4);
    // Room above the tallest bar for its "N×" label.
    m_speedupPlot->yAxis->setRange(0.0, std::max(1.0, m_speedupPlot->yAxis->range().upper * 1.3));
    for (QCustomPlot* plot : {m_timePlot, m_ratePlot, m_speedupPlot})
        plot->replot(QCustomPlot::rpQueuedReplot);
}

namespace {
// A number at `digits` significant figures, trailing zeros kept, so that a column reads alike (5.89090e-06 under
// 5.89090e-06, not 5.8909e-06 under 5.890901e-06): plain decimals from 0.001 to a million, else scientific.
QString significant(double value, int digits)
{
    if (value == 0.0 || !std::isfinite(value))
        return QString::number(value);
    const int exponent = int(std::floor(std::log10(std::abs(value))));
    if (exponent >= -3 && exponent < 6)
        return QString::number(value, 'f', std::max(0, digits - 1 - exponent));
    return QString::number(value, 'e', digits - 1);
}
} // namespace

void SpeedupLab::refreshTable()
{
    const auto methods = labMethods();
    m_table->setRowCount(int(m_rows.size()));
    for (int i = 0; i < int(m_rows.size()); ++i) {
        const LabRow& r = m_rows[size_t(i)];
        const QStringList cells = {methodText(methods[size_t(r.method)].name, m_twoLineNames),
                                   QString::number(r.grid),
                                   QString::number(r.order),
                                   QString::number(r.bench.parameters),
                                   (r.estimated ? QStringLiteral("≈ ") : QString()) + significant(r.seconds, 3),
                                   QString::number(r.iterations),
                                   QString::number(r.costEvaluations),
                                   significant(r.bench.evalMs, 3),
                                   QString::number(std::lround(r.evaluationsPerSecond)),
                                   std::isfinite(r.finalCost) ? significant(r.finalCost, 6) : tr("—"),
                                   std::isfinite(r.maxCoefficientDifferenceWaves) ? significant(r.maxCoefficientDifferenceWaves, 2)
                                                                                  : tr("—")};
        for (int c = 0; c < cells.size(); ++c) {
            auto* item = new QTableWidgetItem(cells[c]);
            if (c > 0)
                item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
            if (c == 0) {
                item->setData(Qt::UserRole, methods[size_t(r.method)].name); // whole, for fitTable
                item->setToolTip(methods[size_t(r.method)].name);
            }
            if (c == 4 && r.estimated)
                item->setToolTip(
                    tr("estimated, not run: the reference fit's gradient evaluations times this method's measured time per gradient"));
            m_table->setItem(i, c, item);
        }
    }
    fitTable();
}

// The controls column as wide as its longest method name, up to a third of the lab: again when the font changes
// (presentation mode) or the lab is resized.
void SpeedupLab::fitControlsWidth()
{
    const int wanted = m_controlsScroll->widget()->minimumSizeHint().width();
    const int most = std::max(300, width() / 3);
    m_controlsScroll->setFixedWidth(std::min(wanted, most) + m_controlsScroll->verticalScrollBar()->sizeHint().width() + 4);
}

void SpeedupLab::changeEvent(QEvent* event)
{
    QWidget::changeEvent(event);
    if (event->type() == QEvent::FontChange && m_controlsScroll)
        fitControlsWidth();
}

void SpeedupLab::resizeEvent(QResizeEvent* event)
{
    QWidget::resizeEvent(event);
    fitControlsWidth();
}

bool SpeedupLab::eventFilter(QObject* watched, QEvent* event)
{
    if (watched == m_table->viewport() && event->type() == QEvent::Resize)
        fitTable();
    return QWidget::eventFilter(watched, event);
}

void SpeedupLab::fitTable()
{
    // One line per method name where the columns then fit the width, two otherwise (the names are the
    // long part; numbers are never wrapped).
    auto width = [this](bool twoLines) {
        const QFontMetrics metrics(m_table->font());
        const int margin = 2 * (style()->pixelMetric(QStyle::PM_FocusFrameHMargin, nullptr, m_table) + 1) + 2;
        int names = m_table->horizontalHeader()->sectionSizeHint(0);
        for (int i = 0; i < m_table->rowCount(); ++i)
            if (const QTableWidgetItem* item = m_table->item(i, 0))
                for (const QString& line : methodText(item->data(Qt::UserRole).toString(), twoLines).split(QLatin1Char('\n')))
                    names = std::max(names, metrics.horizontalAdvance(line) + margin);
        int rest = 0;
        for (int c = 1; c < m_table->columnCount(); ++c)
            rest += m_table->horizontalHeader()->sectionSize(c);
        return names + rest;
    };
    const bool twoLines = m_table->rowCount() > 0 && width(false) > m_table->viewport()->width();
    if (twoLines != m_twoLineNames) {
        m_twoLineNames = twoLines;
        for (int i = 0; i < m_table->rowCount(); ++i)
            if (QTableWidgetItem* item = m_table->item(i, 0))
                item->setText(methodText(item->data(Qt::UserRole).toString(), twoLines));
    }
    m_table->resizeRowsToContents();
}

// Time to solution and evaluation rate against N, one curve per method and order; estimated points dashed.
void SpeedupLab::drawTimeAndRate(const std::vector<int>& grids)
{
    const auto methods = labMethods();
    // The log axes tick at the grid sizes measured, nowhere else.
    QSharedPointer<QCPAxisTickerText> sizeTicker(new QCPAxisTickerText);
    for (int g : grids)
        sizeTicker->addTick(double(g), QString::number(g));
    m_timePlot->xAxis->setTicker(sizeTicker);
    m_ratePlot->xAxis->setTicker(sizeTicker);
    for (size_t m = 0; m < methods.size(); ++m) {
        for (int order : m_lastSettings.orders) {
            QVector<double> x, t, xe, te, rate;
            QVector<double> rx;
            for (const LabRow& r : m_rows) {
                if (r.method != int(m) || r.order != order)
                    continue;
                (r.estimated ? xe : x).append(r.grid);
                (r.estimated ? te : t).append(r.seconds);
                if (!r.estimated) {
                    rx.append(r.grid);
                    rate.append(r.evaluationsPerSecond);
                }
            }
            if (x.isEmpty() && xe.isEmpty())
                continue;
            const QColor color = kColors[m % std::size(kColors)];
            const QString label =
                m_lastSettings.orders.size() > 1 ? QStringLiteral("%1, n = %2").arg(methods[m].name).arg(order) : methods[m].name;
            QCPGraph* measured = m_timePlot->addGraph();
            measured->setName(label);
            measured->setPen(QPen(color, 2));
            measured->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, 6));
            measured->setData(x, t);
            if (!xe.isEmpty()) {
                QCPGraph* estimated = m_timePlot->addGraph();
                estimated->setName(label + tr(" (estimated)"));
                estimated->setPen(QPen(color, 1, Qt::DashLine));
                estimated->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, 7));
                estimated->setData(xe, te);
            }
            QCPGraph* rates = m_ratePlot->addGraph();
            rates->setName(label);
            rates->setPen(QPen(color, 2));
            rates->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, 6));
            rates->setData(rx, rate);
        }
    }
}

// The speed-up over the finite-difference baseline at the first order, bars grouped by grid size.
// The speed-up over the finite-difference baseline at the first order, bars side by side per grid size, each labelled
// "N×", with the speed-up that counting predicts as a dashed line and the story beside the plot.
void SpeedupLab::drawSpeedups(const std::vector<int>& grids)
{
    m_speedupPlot->clearItems();
    const auto methods = labMethods();
    const int firstOrder = m_lastSettings.orders.empty() ? 0 : m_lastSettings.orders.front();
    std::vector<LabSpeedup> shown;
    for (const LabSpeedup& s : labSpeedups(m_rows))
        if (s.row->order == firstOrder)
            shown.push_back(s);
    std::vector<int> drawnMethods;
    for (const LabSpeedup& s : shown)
        if (std::find(drawnMethods.begin(), drawnMethods.end(), s.row->method) == drawnMethods.end())
            drawnMethods.push_back(s.row->method);
    std::sort(drawnMethods.begin(), drawnMethods.end());
    QSharedPointer<QCPAxisTickerText> gridTicker(new QCPAxisTickerText);
    for (size_t g = 0; g < grids.size(); ++g)
        gridTicker->addTick(double(g), QStringLiteral("N = %1").arg(grids[g]));
    m_speedupPlot->xAxis->setTicker(gridTicker);
    m_speedupPlot->xAxis->setLabel(tr("order %1; baseline = finite differences").arg(firstOrder));
    if (shown.empty()) {
        m_speedupStory->clear();
        return;
    }
    // Each method's bars at a fixed offset inside its grid's slot; the labels stand on the bars, turned upright
    // where the bars are narrower than a label.
    const double slot = 0.8 / double(drawnMethods.size());
    const double barPixels = slot * std::max(200, m_speedupPlot->axisRect()->width()) / std::max<double>(1.0, double(grids.size()) + 0.2);
    const bool upright = barPixels < QFontMetrics(m_speedupPlot->xAxis->tickLabelFont()).horizontalAdvance(QStringLiteral("≈888×"));
    for (size_t i = 0; i < drawnMethods.size(); ++i) {
        const int m = drawnMethods[i];
        const double offset = -0.4 + slot * (double(i) + 0.5);
        QVector<double> bx, by;
        for (const LabSpeedup& s : shown) {
            if (s.row->method != m)
                continue;
            const double x = double(std::find(grids.begin(), grids.end(), s.row->grid) - grids.begin()) + offset;
            bx.append(x);
            by.append(s.speedup);
            auto* label = new QCPItemText(m_speedupPlot);
            label->setObjectName(QStringLiteral("speedupLabel"));
            label->position->setCoords(x, s.speedup);
            const bool estimated = s.row->estimated || s.baseline->estimated;
            label->setText((estimated ? QStringLiteral("≈") : QString()) + QString::number(s.speedup, 'f', s.speedup < 10 ? 1 : 0)
                           + QStringLiteral("×"));
            label->setFont(m_speedupPlot->xAxis->tickLabelFont());
            label->setRotation(upright ? -90 : 0);
            label->setPositionAlignment(upright ? (Qt::AlignLeft | Qt::AlignVCenter) : (Qt::AlignBottom | Qt::AlignHCenter));
            label->setPadding(upright ? QMargins(4, 0, 2, 0) : QMargins(2, 0, 2, 3));
        }
        auto* bars = new QCPBars(m_speedupPlot->xAxis, m_speedupPlot->yAxis);
        bars->setName(QString(methods[size_t(m)].name).remove(QStringLiteral(" (reference)")));
        bars->setBrush(kColors[size_t(m) % std::size(kColors)]);
        bars->setPen(Qt::NoPen);
        bars->setWidth(slot * 0.9);
        bars->setData(bx, by);
    }
    // Counting alone: P + 1 evaluations per finite-difference gradient against about 2 for the adjoint.
    const int parameters = shown.front().row->bench.parameters;
    const double predicted = predictedAdjointSpeedup(parameters);
    QCPGraph* line = m_speedupPlot->addGraph();
    line->setName(tr("predicted by counting, (P + 1) / 2 = %1×").arg(predicted, 0, 'f', predicted < 10 ? 1 : 0));
    line->setPen(QPen(QColor(60, 60, 60), 1.5, Qt::DashLine));
    line->setData({-0.5, double(grids.size()) - 0.5}, {predicted, predicted});

    // The story, at the largest grid where the reference ran against the baseline.
    const LabSpeedup* told = nullptr;
    for (const LabSpeedup& s : shown)
        if (s.row->method == kReferenceMethod && (!told || s.row->grid > told->row->grid))
            told = &s;
    QString story = tr("<p><b>Counting:</b> a gradient by finite differences is P + 1 = %1 model evaluations, by the adjoint "
                       "about 2 (a forward and a backward pass): <b>%2×</b> (dashed line).</p>")
                        .arg(parameters + 1)
                        .arg(predicted, 0, 'f', predicted < 10 ? 1 : 0);
    if (told) {
        const LabRow &fd = *told->baseline, &adjoint = *told->row;
        const auto msPerIteration = [](const LabRow& r) { return r.iterations > 0 ? 1e3 * r.seconds / double(r.iterations) : 0.0; };
        story += tr("<p><b>Measured</b> at N = %1, one thread, float64: <b>%2×</b>, %3 than counting: %4 iterations at %5 ms%6 "
                    "against %7 at %8 ms.</p>")
                     .arg(adjoint.grid)
                     .arg(told->speedup, 0, 'f', told->speedup < 10 ? 1 : 0)
                     .arg(told->speedup >= predicted ? tr("more") : tr("less"))
                     .arg(fd.iterations)
                     .arg(significant(msPerIteration(fd), 3))
                     .arg(fd.estimated ? tr(" (estimated)") : QString())
                     .arg(adjoint.iterations)
                     .arg(significant(msPerIteration(adjoint), 3));
    }
    story += tr("<p>The other bars add float32, threads or a GPU.</p>");
    m_speedupStory->setText(story);
}

bool SpeedupLab::exportCsv(const QString& path)
{
    try {
        writeTextFile(path, QByteArray::fromStdString(labCsv(m_rows)), true);
    } catch (const std::exception& e) {
        m_status->setText(QString::fromUtf8(e.what()));
        emit failed(QString::fromUtf8(e.what()));
        return false;
    }
    return true;
}

bool SpeedupLab::exportPng(const QString& path)
{
    // The three plots side by side, whichever tab is shown.
    const QSize one(640, 480);
    QPixmap picture(3 * one.width(), one.height());
    picture.fill(Qt::white);
    {
        QPainter painter(&picture);
        int x = 0;
        for (QCustomPlot* plot : {m_timePlot, m_speedupPlot, m_ratePlot}) {
            painter.drawPixmap(x, 0, plot->toPixmap(one.width(), one.height()));
            x += one.width();
        }
    }
    if (!picture.save(path, "PNG")) {
        m_status->setText(tr("%1: could not write the PNG file").arg(path));
        emit failed(tr("%1: could not write the PNG file").arg(path));
        return false;
    }
    return true;
}

} // namespace wfs::ui
