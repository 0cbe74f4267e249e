// The Field tab's widgets: the controls and the bead's pages on the left, the projection, the chosen term's map and
// the residuals on the right (FieldPanel.cpp holds what the panel does with them).
#include "FieldPanel.h"

#include "ImageView.h"

#include <qcustomplot.h>

#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QSpinBox>
#include <QStackedWidget>
#include <QTableWidget>
#include <QTabWidget>
#include <QVBoxLayout>

namespace wfs::ui {

namespace {

// The markers' colours (Okabe-Ito, told apart by shape as well): beads in the model, outliers, beads set aside,
// and the ring around the selected bead.
const QColor kInModel(0, 158, 115), kOutlier(230, 159, 0), kSetAside(255, 80, 80), kSelected(255, 0, 255);
constexpr int kControlsWidth = 300; // the left column: the controls and the bead's table, whose term names need it

QCPGraph* scatter(QCustomPlot* plot, const QString& name, const QColor& colour, QCPScatterStyle::ScatterShape shape, double size)
{
    QCPGraph* graph = plot->addGraph();
    graph->setName(name);
    graph->setLineStyle(QCPGraph::lsNone);
    graph->setScatterStyle(QCPScatterStyle(shape, QPen(colour, 2.0), Qt::NoBrush, size));
    graph->setSelectable(QCP::stNone);
    return graph;
}

} // namespace

FieldPanel::FieldPanel(QWidget* parent)
    : QWidget(parent)
    , m_watcher(new QFutureWatcher<FieldOutcome>(this))
{
    auto* layout = new QHBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    auto* left = new QWidget(this);
    left->setFixedWidth(kControlsWidth);
    auto* leftLayout = new QVBoxLayout(left);
    leftLayout->setContentsMargins(0, 0, 0, 0);
    leftLayout->addWidget(buildControls());
    leftLayout->addWidget(buildBeadPages(), 1);
    layout->addWidget(left);
    layout->addWidget(buildResults(), 1);
    connect(m_watcher, &QFutureWatcherBase::finished, this, [this] { finish(m_watcher->result()); });
    setRunning(false);
    fillBeadTable(); // says what it will show
}

// The stack's source, the detection and model settings, Run and Cancel, the progress and the run's status.
QWidget* FieldPanel::buildControls()
{
    auto* box = new QWidget(this);
    auto* layout = new QVBoxLayout(box);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(buildStackBox());
    layout->addWidget(buildSettingsBox());
    auto* runRow = new QHBoxLayout;
    m_runButton = new QPushButton(tr("Run"), box);
    m_runButton->setObjectName(QStringLiteral("fieldRun"));
    m_runButton->setToolTip(tr("Find and fit the beads of the stack held again, with the settings above"));
    m_cancelButton = new QPushButton(tr("Cancel"), box);
    m_cancelButton->setObjectName(QStringLiteral("fieldCancel"));
    m_saveButton = new QPushButton(tr("Save results…"), box);
    m_saveButton->setObjectName(QStringLiteral("fieldSave"));
    m_saveButton->setToolTip(tr("Writes beads.csv (every bead with its status, coefficients and their sigmas), field.json "
                                "(the field model with its convention) and field-maps.fits into a folder, as wavefront-cli "
                                "field --out does"));
    runRow->addWidget(m_runButton);
    runRow->addWidget(m_cancelButton);
    runRow->addWidget(m_saveButton);
    layout->addLayout(runRow);
    m_progress = new QProgressBar(box);
    m_progress->setObjectName(QStringLiteral("fieldProgress"));
    m_progress->setFormat(tr("%v of %m beads"));
    layout->addWidget(m_progress);
    m_status = new QLabel(tr("No stack yet."), box);
    m_status->setObjectName(QStringLiteral("fieldStatus"));
    m_status->setWordWrap(true);
    m_status->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addWidget(m_status);
    connect(m_runButton, &QPushButton::clicked, this, [this] { runAgain(); });
    connect(m_cancelButton, &QPushButton::clicked, this, &FieldPanel::cancel);
    connect(m_saveButton, &QPushButton::clicked, this, &FieldPanel::askAndSave);
    return box;
}

QWidget* FieldPanel::buildStackBox()
{
    auto* stack = new QGroupBox(tr("Stack"), this);
    auto* row = new QHBoxLayout(stack);
    m_simulate = new QPushButton(tr("Simulated bead slide"), stack);
    m_simulate->setObjectName(QStringLiteral("fieldSimulate"));
    m_simulate->setToolTip(tr("Core's simulated 512 x 512 x 9 bead slide: field curvature, astigmatism and coma growing across "
                              "the field, with doublets, saturated and edge beads planted to be set aside"));
    m_load = new QPushButton(tr("Load stack…"), stack);
    m_load->setObjectName(QStringLiteral("fieldLoad"));
    m_load->setToolTip(tr("A wide-field z-stack (FITS, TIFF), fitted with the model and solver settings of the Setup panel and the "
                          "optics you typed there; the stack's own headers give the rest"));
    row->addWidget(m_simulate);
    row->addWidget(m_load);
    connect(m_simulate, &QPushButton::clicked, this, [this] { runSimulatedField(); });
    connect(m_load, &QPushButton::clicked, this, [this] {
        const QString path = QFileDialog::getOpenFileName(this, tr("Load a wide-field stack"), QString(),
                                                          tr("Images (*.fits *.fit *.fts *.tif *.tiff);;All files (*)"));
        if (!path.isEmpty())
            loadStack(path);
    });
    return stack;
}

// Core's detection defaults (fit/BeadDetection.h) and the field order, as `wavefront-cli field` takes them.
QWidget* FieldPanel::buildSettingsBox()
{
    auto* settings = new QGroupBox(tr("Detection and field model"), this);
    auto* form = new QFormLayout(settings);
    const BeadDetectionOptions defaults;
    m_crop = new QSpinBox(settings);
    m_crop->setObjectName(QStringLiteral("fieldCrop"));
    m_crop->setRange(8, 512);
    m_crop->setSingleStep(2);
    m_crop->setValue(defaults.crop);
    m_crop->setSuffix(tr(" px"));
    m_crop->setToolTip(tr("Side of the square each bead is fitted in, pixels (even)"));
    m_threshold = new QDoubleSpinBox(settings);
    m_threshold->setObjectName(QStringLiteral("fieldThreshold"));
    m_threshold->setRange(1.0, 1000.0);
    m_threshold->setDecimals(1);
    m_threshold->setSingleStep(0.5);
    m_threshold->setValue(defaults.threshold);
    m_threshold->setSuffix(tr(" σ"));
    m_threshold->setToolTip(tr("Detection significance of a bead's peak in the smoothed mean projection, in robust sigmas"));
    m_order = new QComboBox(settings);
    m_order->setObjectName(QStringLiteral("fieldOrder"));
    m_order->addItem(tr("auto (BIC)"), -1);
    for (int order = 0; order <= 6; ++order)
        m_order->addItem(QString::number(order), order);
    m_order->setToolTip(tr("Radial order of the field Zernikes of every term; auto: per term the lowest BIC over orders 0..4"));
    form->addRow(tr("Crop:"), m_crop);
    form->addRow(tr("Threshold:"), m_threshold);
    form->addRow(tr("Field order:"), m_order);
    return settings;
}

// The clicked bead's fit (a line with where it is, its status and the reason, over its figures and coefficients), and
// the run's summary, as pages under the controls.
QWidget* FieldPanel::buildBeadPages()
{
    m_beadPages = new QTabWidget(this);
    m_beadPages->setDocumentMode(true);
    auto* bead = new QWidget(m_beadPages);
    auto* layout = new QVBoxLayout(bead);
    layout->setContentsMargins(0, 4, 0, 0);
    m_beadTitle = new QLabel(bead);
    m_beadTitle->setObjectName(QStringLiteral("fieldBeadTitle"));
    m_beadTitle->setWordWrap(true); // a reason is a sentence
    m_beadTitle->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addWidget(m_beadTitle);
    m_beadTable = new QTableWidget(0, 3, bead);
    m_beadTable->setObjectName(QStringLiteral("fieldBeadTable"));
    m_beadTable->setHorizontalHeaderLabels({tr("Term"), tr("waves"), tr("± σ")});
    m_beadTable->verticalHeader()->hide();
    m_beadTable->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_beadTable->setWordWrap(true); // a long term name takes two lines rather than a sideways scroll
    m_beadTable->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    m_beadTable->horizontalHeader()->setSectionResizeMode(0, QHeaderView::Stretch);
    for (int column : {1, 2})
        m_beadTable->horizontalHeader()->setSectionResizeMode(column, QHeaderView::ResizeToContents);
    m_beadTable->setToolTip(tr("Click a bead on the projection, the map or the residuals to see its own fit"));
    layout->addWidget(m_beadTable, 1);
    m_summary = new QPlainTextEdit(m_beadPages);
    m_summary->setObjectName(QStringLiteral("fieldSummary"));
    m_summary->setReadOnly(true);
    m_summary->setLineWrapMode(QPlainTextEdit::NoWrap); // the summary's columns line up
    m_beadPages->addTab(bead, tr("Selected bead"));
    m_beadPages->addTab(m_summary, tr("Summary"));
    return m_beadPages;
}

// The explanation until the first run; then the projection beside the chosen term's map and its residuals.
QWidget* FieldPanel::buildResults()
{
    m_pages = new QStackedWidget(this);
    auto* empty = new QLabel(tr("<p style='font-size:large'>No field yet.</p><p>Press <b>Simulated bead slide</b> for core's "
                                "simulated slide, or <b>Load stack…</b> for a wide-field z-stack of beads. Every bead is found "
                                "in the stack's mean projection, fitted in its own crop, and each aberration term is then "
                                "described as a smooth function of the field position.</p>"),
                             m_pages);
    empty->setObjectName(QStringLiteral("fieldEmpty"));
    empty->setWordWrap(true);
    empty->setAlignment(Qt::AlignCenter);
    empty->setMargin(24);
    m_pages->addWidget(empty);
    auto* page = new QWidget(m_pages);
    auto* layout = new QHBoxLayout(page);
    layout->setContentsMargins(0, 0, 0, 0);
    m_projection = new ImageView(page);
    m_projection->setObjectName(QStringLiteral("fieldProjection"));
    m_projection->setColorMap(ColorMap::Gray);
    m_projection->setStretch(Stretch::Asinh); // the faint beads beside the bright ones
    m_projection->setClipPercentiles(0.5, 99.9);
    m_projectionMarkers = addMarkers(m_projection->plot(), false);
    m_projection->plot()->installEventFilter(this);
    layout->addWidget(m_projection, 5);
    layout->addWidget(buildTermColumn(), 4);
    m_pages->addWidget(page);
    return m_pages;
}

// The term chooser over its map and the beads' residuals from it.
QWidget* FieldPanel::buildTermColumn()
{
    auto* column = new QWidget(this);
    auto* layout = new QVBoxLayout(column);
    layout->setContentsMargins(0, 0, 0, 0);
    auto* termRow = new QHBoxLayout;
    m_term = new QComboBox(column);
    m_term->setObjectName(QStringLiteral("fieldTerm"));
    m_term->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    m_term->setToolTip(tr("The aberration term whose field model and residuals are shown"));
    termRow->addWidget(new QLabel(tr("Term:"), column));
    termRow->addWidget(m_term);
    termRow->addStretch();
    layout->addLayout(termRow);
    m_mapNote = new QLabel(column);
    m_mapNote->setObjectName(QStringLiteral("fieldMapNote"));
    m_mapNote->setWordWrap(true);
    layout->addWidget(m_mapNote);
    m_map = new ImageView(column);
    m_map->setObjectName(QStringLiteral("fieldTermMap"));
    m_map->setColorMap(ColorMap::Diverging);
    m_mapMarkers = addMarkers(m_map->plot(), true);
    m_map->plot()->installEventFilter(this);
    layout->addWidget(m_map, 3); // the map is the picture; the residuals need less height
    buildResidualPlot();
    layout->addWidget(m_residuals, 2);
    connect(m_term, &QComboBox::currentIndexChanged, this, &FieldPanel::showTerm);
    return column;
}

// A picture's bead markers: on the grey projection in colours, on the diverging map in black (its white middle would
// hide a light colour); the same shapes on both.
FieldPanel::Markers FieldPanel::addMarkers(QCustomPlot* plot, bool onMap)
{
    const auto colour = [onMap](const QColor& own) { return onMap ? QColor(20, 20, 20) : own; };
    const double size = onMap ? 0.6 : 1.0; // the map is the smaller picture: its markers leave the colours seen
    Markers m;
    m.inModel = scatter(plot, tr("in the field model"), colour(kInModel), QCPScatterStyle::ssCircle, 11 * size);
    m.outlier = scatter(plot, tr("outlier"), colour(kOutlier), QCPScatterStyle::ssDiamond, 12 * size);
    m.setAside = scatter(plot, tr("set aside"), onMap ? QColor(110, 110, 110) : kSetAside, QCPScatterStyle::ssCross, 10 * size);
    m.selected = scatter(plot, tr("selected"), kSelected, QCPScatterStyle::ssCircle, 22 * size);
    m.selected->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, QPen(kSelected, 2.5), Qt::NoBrush, 22 * size));
    if (onMap)
        for (QCPGraph* graph : {m.inModel, m.outlier, m.setAside}) {
            QCPScatterStyle style = graph->scatterStyle();
            style.setPen(QPen(style.pen().color(), 1.3));
            graph->setScatterStyle(style);
        }
    return m;
}

void FieldPanel::buildResidualPlot()
{
    m_residuals = new QCustomPlot(this);
    m_residuals->setObjectName(QStringLiteral("fieldResiduals"));
    m_residuals->xAxis->setLabel(tr("bead (as found, brightest first)"));
    m_residuals->yAxis->setLabel(tr("residual / σ"));
    for (QCPAxis* axis : {m_residuals->xAxis, m_residuals->yAxis}) {
        axis->setLabelPadding(2);
        axis->setTickLabelPadding(3);
    }
    // The legend in a row above the axes, never over a point.
    m_residuals->plotLayout()->insertRow(0);
    m_residuals->plotLayout()->addElement(0, 0, m_residuals->legend);
    m_residuals->plotLayout()->setRowStretchFactor(0, 0.001);
    m_residuals->legend->setFillOrder(QCPLegend::foColumnsFirst);
    m_residuals->legend->setBorderPen(Qt::NoPen);
    m_residuals->legend->setVisible(true);
    auto* zero = new QCPItemStraightLine(m_residuals);
    zero->point1->setCoords(0.0, 0.0);
    zero->point2->setCoords(1.0, 0.0);
    zero->setPen(QPen(QColor(120, 120, 120), 1, Qt::DashLine));
    m_residualIn = scatter(m_residuals, tr("in the model"), QColor(0, 114, 178), QCPScatterStyle::ssCircle, 7);
    m_residualOut = scatter(m_residuals, tr("outlier of this term"), kOutlier, QCPScatterStyle::ssDiamond, 9);
    m_residualSelected = scatter(m_residuals, tr("selected"), kSelected, QCPScatterStyle::ssCircle, 16);
    m_residualSelected->removeFromLegend();
    m_residuals->setMinimumSize(260, 200);
    m_residuals->installEventFilter(this);
}

void FieldPanel::setRunning(bool running)
{
    m_simulate->setEnabled(!running);
    m_load->setEnabled(!running);
    m_runButton->setEnabled(!running && m_stack != nullptr);
    m_cancelButton->setEnabled(running);
    m_saveButton->setEnabled(!running && m_run != nullptr);
    for (QWidget* control : std::initializer_list<QWidget*>{m_crop, m_threshold, m_order})
        control->setEnabled(!running);
    if (running) {
        m_progress->setRange(0, 0); // busy until the beads are counted
        m_progress->setValue(0);
    }
}

} // namespace wfs::ui
