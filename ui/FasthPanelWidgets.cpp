// FasthPanel's widgets: the controls (problem, timing sweep, training, progress, exports), their
// connections, and the three pages of views. Kept apart from FasthPanel.cpp, which runs the jobs and
// shows their results.
#include "FasthMatrixView.h"
#include "FasthPanel.h"
#include "FasthPlots.h"

#include <qcustomplot.h>

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QGridLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QRegularExpressionValidator>
#include <QScrollArea>
#include <QSpinBox>
#include <QScrollBar>
#include <QStackedWidget>
#include <QTabWidget>
#include <QTimer>
#include <QVBoxLayout>

#include <algorithm>
#include <thread>

namespace wfs::ui {

using fasth::BenchMethod;
using fasth::Pass;

// The settings scroll on their own; the buttons that start and stop the jobs, the progress, the status and the exports
// stay below them, in view at every window size (a lecturer at 1280 x 800 must not scroll to find "Run").
QWidget* FasthPanel::buildControls()
{
    auto* settings = new QWidget(this);
    auto* settingsColumn = new QVBoxLayout(settings);
    settingsColumn->addWidget(buildProblemGroup(settings));
    settingsColumn->addWidget(buildSweepGroup(settings));
    settingsColumn->addWidget(buildTrainingGroup(settings));
    settingsColumn->addStretch();
    auto* scroll = new QScrollArea(this);
    scroll->setObjectName(QStringLiteral("fasthControlsScroll"));
    scroll->setWidget(settings);
    scroll->setWidgetResizable(true);
    scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);

    auto* controls = new QWidget(this);
    m_controls = controls;
    auto* column = new QVBoxLayout(controls);
    column->setContentsMargins(0, 0, 0, 0);
    column->addWidget(scroll, 1);
    column->addWidget(buildActions(controls));
    fitControlsWidth();
    connectControls();
    return controls;
}

// 300 to 380 px at the window's usual text size; with larger text (presentation mode) as wide as the settings need,
// up to 45 % of the tab.
void FasthPanel::fitControlsWidth()
{
    const auto* scroll = m_controls->findChild<QScrollArea*>(QStringLiteral("fasthControlsScroll"));
    const int needed = scroll ? scroll->widget()->minimumSizeHint().width() + scroll->verticalScrollBar()->sizeHint().width() + 6 : 0;
    const int least = std::max(300, std::min(needed, int(0.45 * std::max(width(), 800))));
    m_controls->setMinimumWidth(least);
    m_controls->setMaximumWidth(std::max(least, 380));
}

void FasthPanel::changeEvent(QEvent* event)
{
    QWidget::changeEvent(event);
    if (event->type() == QEvent::FontChange && m_controls) // once every child has the new font and its hints
        QTimer::singleShot(0, this, [this] { fitControlsWidth(); });
}

// Run timing sweep and Train layer side by side, the progress with Cancel, the status and the exports.
QWidget* FasthPanel::buildActions(QWidget* controls)
{
    auto* actions = new QWidget(controls);
    actions->setObjectName(QStringLiteral("fasthActions"));
    auto* column = new QVBoxLayout(actions);
    column->setContentsMargins(4, 4, 4, 0);
    auto* runs = new QHBoxLayout;
    m_runSweep = new QPushButton(tr("Run timing sweep"), actions);
    m_runSweep->setObjectName(QStringLiteral("fasthRunSweep"));
    m_runSweep->setToolTip(tr("Time every method ticked under Timing sweep at each d (the Timing tab shows the results)."));
    m_train = new QPushButton(tr("Train layer"), actions);
    m_train->setObjectName(QStringLiteral("fasthTrain"));
    m_train->setToolTip(tr("Train an SVD layer with the settings under SVD layer training (the SVD layer tab shows it)."));
    runs->addWidget(m_runSweep);
    runs->addWidget(m_train);
    column->addLayout(runs);

    m_progress = new QProgressBar(actions);
    m_progress->setRange(0, 1);
    m_progress->setValue(0);
    m_cancel = new QPushButton(tr("Cancel"), actions);
    m_cancel->setObjectName(QStringLiteral("fasthCancel"));
    auto* progressRow = new QHBoxLayout;
    progressRow->addWidget(m_progress, 1);
    progressRow->addWidget(m_cancel);
    column->addLayout(progressRow);
    m_status = new QLabel(actions);
    m_status->setWordWrap(true);
    m_status->setObjectName(QStringLiteral("fasthStatus"));
    column->addWidget(m_status);

    auto* exports = new QHBoxLayout;
    m_saveCsv = new QPushButton(tr("Save CSV…"), actions);
    m_saveCsv->setToolTip(tr("The sweep rows as measured by the engine."));
    m_savePng = new QPushButton(tr("Save plots (PNG)…"), actions);
    exports->addWidget(m_saveCsv);
    exports->addWidget(m_savePng);
    column->addLayout(exports);
    return actions;
}

// d, k, batch, block size, precision, backend and threads: what the pictures, sweeps and training share.
QGroupBox* FasthPanel::buildProblemGroup(QWidget* controls)
{
    const int hardware = int(std::max(1u, std::thread::hardware_concurrency()));
    auto* problem = new QGroupBox(tr("Problem"), controls);
    auto* problemForm = new QFormLayout(problem);
    m_dimension = new QSpinBox(problem);
    m_dimension->setRange(2, 4096);
    m_dimension->setValue(64);
    m_dimension->setToolTip(tr("Dimension d: W and the factors are d x d. Pictures are drawn up to d = %1.").arg(kMaxPictureDimension));
    m_reflectors = new QSpinBox(problem);
    m_reflectors->setRange(1, 64);
    m_reflectors->setValue(64);
    m_reflectors->setToolTip(tr("Reflectors k per orthogonal factor (k <= d); the block sweep and the layer use it."));
    m_batch = new QSpinBox(problem);
    m_batch->setRange(1, 4096);
    m_batch->setValue(32);
    m_batch->setToolTip(tr("Batch m: columns of X in H_1 ... H_k X (the paper uses 32)."));
    m_blockSize = new QSpinBox(problem);
    m_blockSize->setRange(1, 1024);
    m_blockSize->setValue(16);
    m_blockSize->setToolTip(tr("FastH block size b (the paper: 16 for d <= 128, 32 above)."));
    m_precision = new QComboBox(problem);
    m_precision->addItem(tr("float64 (double)"), int(Precision::Double));
    m_precision->addItem(tr("float32 (float)"), int(Precision::Float));
    m_backend = new QComboBox(problem);
    m_backend->setObjectName(QStringLiteral("fasthBackend"));
    m_threads = new QSpinBox(problem);
    m_threads->setRange(1, hardware);
    m_threads->setValue(hardware);
    m_threads->setToolTip(tr("CPU threads for every method alike (the GPU backend ignores it)."));
    problemForm->addRow(tr("d"), m_dimension);
    problemForm->addRow(tr("k (reflectors)"), m_reflectors);
    problemForm->addRow(tr("batch m"), m_batch);
    problemForm->addRow(tr("block size b"), m_blockSize);
    problemForm->addRow(tr("precision"), m_precision);
    problemForm->addRow(tr("backend"), m_backend);
    problemForm->addRow(tr("threads"), m_threads);
    return problem;
}

QGroupBox* FasthPanel::buildSweepGroup(QWidget* controls)
{
    auto* sweep = new QGroupBox(tr("Timing sweep"), controls);
    auto* sweepLayout = new QVBoxLayout(sweep);
    auto* sweepForm = new QFormLayout;
    m_sweepDimensions = new QLineEdit(QStringLiteral("32,64,128,256"), sweep);
    m_sweepDimensions->setValidator(new QRegularExpressionValidator(QRegularExpression(QStringLiteral("[0-9, ]*")), m_sweepDimensions));
    m_sweepDimensions->setToolTip(tr("The d values of the sweep (k = d at each), comma-separated."));
    sweepForm->addRow(tr("d values"), m_sweepDimensions);
    m_repeat = new QSpinBox(sweep);
    m_repeat->setRange(1, 200);
    m_repeat->setValue(5);
    m_repeat->setToolTip(tr("Timed repetitions per point; the plots show the median and the quartiles."));
    sweepForm->addRow(tr("repetitions"), m_repeat);
    m_warmup = new QSpinBox(sweep);
    m_warmup->setRange(0, 20);
    m_warmup->setValue(1);
    sweepForm->addRow(tr("warm-up runs"), m_warmup);
    m_layout = new QComboBox(sweep);
    m_layout->addItem(tr("from a QR (library baseline runs)"));
    m_layout->addItem(tr("Gaussian, as in an SVD layer"));
    m_layout->setToolTip(tr("QR reflectors [0..0, 1, *] are what the library needs; every method then skips "
                            "the zeros. Gaussian reflectors are dense, as in a trained layer."));
    sweepForm->addRow(tr("reflectors"), m_layout);
    sweepLayout->addLayout(sweepForm);
    auto* methods = new QGridLayout;
    const std::vector<BenchMethod> methodOrder = {BenchMethod::Sequential,     BenchMethod::FastH,   BenchMethod::CompactWY,
                                                  BenchMethod::TreeMerge,      BenchMethod::Library, BenchMethod::Dense,
                                                  BenchMethod::SequentialFused};
    for (size_t i = 0; i < methodOrder.size(); ++i) {
        auto* check = new QCheckBox(methodLabel(methodOrder[i]), sweep);
        check->setChecked(methodOrder[i] != BenchMethod::SequentialFused);
        methods->addWidget(check, int(i), 0);
        m_methodChecks.emplace_back(methodOrder[i], check);
    }
    sweepLayout->addLayout(methods);
    auto* passes = new QHBoxLayout;
    for (Pass pass : {Pass::Forward, Pass::Backward, Pass::Both}) {
        auto* check = new QCheckBox(QString::fromLatin1(fasth::passName(pass)), sweep);
        check->setToolTip(passLabel(pass));
        check->setChecked(true);
        passes->addWidget(check);
        m_passChecks.emplace_back(pass, check);
    }
    sweepLayout->addLayout(passes);
    m_blockSweep = new QCheckBox(tr("also sweep the block size at d, k above"), sweep);
    m_blockSweep->setChecked(true);
    sweepLayout->addWidget(m_blockSweep);
    return sweep;
}

QGroupBox* FasthPanel::buildTrainingGroup(QWidget* controls)
{
    auto* training = new QGroupBox(tr("SVD layer training"), controls);
    auto* trainingForm = new QFormLayout(training);
    m_samples = new QSpinBox(training);
    m_samples->setRange(1, 8192);
    m_samples->setValue(128);
    m_samples->setToolTip(tr("Columns of X. Fewer than d leave W unseen on part of the space."));
    m_steps = new QSpinBox(training);
    m_steps->setRange(1, 100000);
    m_steps->setValue(300);
    m_learningRate = new QDoubleSpinBox(training);
    m_learningRate->setDecimals(4);
    m_learningRate->setRange(0.0001, 1.0);
    m_learningRate->setSingleStep(0.001);
    m_learningRate->setValue(0.01);
    trainingForm->addRow(tr("samples"), m_samples);
    trainingForm->addRow(tr("Adam steps"), m_steps);
    trainingForm->addRow(tr("learning rate"), m_learningRate);
    return training;
}

void FasthPanel::connectControls()
{
    connect(m_dimension, &QSpinBox::valueChanged, this, [this](int d) {
        // k follows d while it equals d (the usual full product), and never exceeds it.
        const bool followed = m_reflectors->value() == m_reflectors->maximum();
        m_reflectors->setMaximum(d);
        if (followed)
            m_reflectors->setValue(d);
        schedulePictures();
    });
    connect(m_reflectors, &QSpinBox::valueChanged, this, &FasthPanel::schedulePictures);
    connect(m_blockSize, &QSpinBox::valueChanged, this, &FasthPanel::schedulePictures);
    connect(m_precision, &QComboBox::currentIndexChanged, this, &FasthPanel::schedulePictures);
    connect(m_backend, &QComboBox::currentIndexChanged, this, &FasthPanel::updateControlState);
    connect(m_runSweep, &QPushButton::clicked, this, [this] { runTimingSweep(sweepSettings()); });
    connect(m_train, &QPushButton::clicked, this, [this] { startTraining(trainingSettings()); });
    connect(m_cancel, &QPushButton::clicked, this, &FasthPanel::cancel);
    connect(m_saveCsv, &QPushButton::clicked, this, &FasthPanel::exportCsvInteractive);
    connect(m_savePng, &QPushButton::clicked, this, &FasthPanel::exportPngInteractive);
}

QWidget* FasthPanel::buildPicturesPage()
{
    m_picturesPage = new QWidget(this);
    auto* grid = new QGridLayout(m_picturesPage);
    m_reflectorView = new FasthMatrixView(m_picturesPage);
    m_uView = new FasthMatrixView(m_picturesPage);
    m_vView = new FasthMatrixView(m_picturesPage);
    m_wView = new FasthMatrixView(m_picturesPage);
    m_sigmaPlot = makePlot(m_picturesPage, tr("index i"), tr("σᵢ"));
    QCPGraph* sigma = m_sigmaPlot->addGraph();
    sigma->setName(tr("sigma"));
    sigma->setLineStyle(QCPGraph::lsImpulse);
    sigma->setPen(QPen(QColor(33, 113, 181), 1.5));
    sigma->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, 4));
    m_pictureInfo = new QLabel(m_picturesPage);
    m_pictureInfo->setWordWrap(true);
    m_pictureInfo->setTextFormat(Qt::RichText);
    m_pictureInfo->setAlignment(Qt::AlignTop | Qt::AlignLeft);
    m_pictureInfo->setObjectName(QStringLiteral("fasthPictureInfo"));
    grid->addWidget(m_reflectorView, 0, 0);
    grid->addWidget(m_uView, 0, 1);
    grid->addWidget(m_vView, 0, 2);
    grid->addWidget(m_wView, 1, 0);
    grid->addWidget(m_sigmaPlot, 1, 1);
    // The text scrolls in its cell: at presentation sizes its height would otherwise squeeze the row of matrices above.
    auto* infoScroll = new QScrollArea(m_picturesPage);
    infoScroll->setWidget(m_pictureInfo);
    infoScroll->setWidgetResizable(true);
    infoScroll->setFrameShape(QFrame::NoFrame);
    infoScroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    grid->addWidget(infoScroll, 1, 2);
    for (int column = 0; column < 3; ++column)
        grid->setColumnStretch(column, 1);
    for (int row = 0; row < 2; ++row)
        grid->setRowStretch(row, 1);
    for (FasthMatrixView* view : {m_reflectorView, m_uView, m_vView, m_wView})
        view->clear(tr("computing…"));
    return m_picturesPage;
}

// A page that says what to press until it has something to show: no empty axes, no collapsed plots before a run.
QStackedWidget* FasthPanel::withEmptyState(QWidget* content, const QString& message)
{
    auto* pages = new QStackedWidget(this);
    auto* hint = new QLabel(message, pages);
    hint->setObjectName(QStringLiteral("fasthEmptyState"));
    hint->setWordWrap(true);
    hint->setTextFormat(Qt::RichText);
    hint->setAlignment(Qt::AlignCenter);
    hint->setMargin(24);
    pages->addWidget(hint);
    pages->addWidget(content);
    return pages;
}

QWidget* FasthPanel::buildTimingPage()
{
    auto* page = new QWidget(this);
    auto* layout = new QVBoxLayout(page);
    auto* bar = new QHBoxLayout;
    bar->addWidget(new QLabel(tr("pass shown:"), page));
    m_shownPass = new QComboBox(page);
    for (Pass pass : {Pass::Forward, Pass::Backward, Pass::Both})
        m_shownPass->addItem(passLabel(pass), int(pass));
    m_shownPass->setCurrentIndex(2); // the paper's figure times forward + backward
    bar->addWidget(m_shownPass);
    bar->addStretch();
    layout->addLayout(bar);
    connect(m_shownPass, &QComboBox::currentIndexChanged, this, [this] {
        rebuildTimingPlots();
        updateExplanation();
    });

    m_timingPlot = makePlot(page, tr("dimension d (k = d)"), tr("time per pass (ms, median; bars: quartiles)"));
    setLogAxis(m_timingPlot->xAxis, 2);
    setLogAxis(m_timingPlot->yAxis, 10);
    legendBelow(m_timingPlot, 3);
    m_speedUpPlot = makePlot(page, tr("dimension d"), tr("speed-up over sequential (×)"));
    setLogAxis(m_speedUpPlot->xAxis, 2);
    legendBelow(m_speedUpPlot, 2);
    m_blockPlot = makePlot(page, tr("block size b"), tr("time per pass (ms)"));
    setLogAxis(m_blockPlot->xAxis, 2);
    // Logarithmic time, so that FastH's curve stays readable beside levels far above or below it.
    setLogAxis(m_blockPlot->yAxis, 10);
    m_blockPlot->yAxis2->setVisible(true);
    m_blockPlot->yAxis2->setLabel(tr("sequential matrix operations ceil(k/b) + b"));
    legendBelow(m_blockPlot, 2);

    layout->addWidget(m_timingPlot, 3);
    auto* lower = new QHBoxLayout;
    lower->addWidget(m_speedUpPlot);
    lower->addWidget(m_blockPlot);
    layout->addLayout(lower, 2);
    m_timingPages = withEmptyState(page, tr("<p style='font-size:large'>No timings yet.</p>"
                                            "<p>Press <b>Run timing sweep</b> (left, under the settings): every ticked method "
                                            "multiplies the same k reflections at each d, and this tab plots the time per pass, "
                                            "the speed-up over the sequential product and the effect of the block size b.</p>"));
    rebuildTimingPlots();
    return m_timingPages;
}

QWidget* FasthPanel::buildTrainingPage()
{
    auto* page = new QWidget(this);
    auto* layout = new QVBoxLayout(page);
    auto* plots = new QHBoxLayout;
    m_lossPlot = makePlot(page, tr("Adam step"), tr("loss ‖W X − T X‖² / (2m)"));
    setLogAxis(m_lossPlot->yAxis, 10);
    QCPGraph* loss = m_lossPlot->addGraph();
    loss->setName(tr("loss"));
    loss->setPen(QPen(QColor(33, 113, 181), 2));
    m_trainedSigmaPlot = makePlot(page, tr("index (sorted)"), tr("singular value"));
    QCPGraph* target = m_trainedSigmaPlot->addGraph();
    target->setName(tr("target's singular values"));
    target->setPen(QPen(QColor(80, 80, 80), 1.5, Qt::DashLine));
    QCPGraph* learnt = m_trainedSigmaPlot->addGraph();
    learnt->setName(tr("learnt |σᵢ|, sorted"));
    learnt->setLineStyle(QCPGraph::lsNone);
    learnt->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, QColor(217, 95, 2), 5));
    styleLegend(m_trainedSigmaPlot, Qt::AlignTop | Qt::AlignRight);
    plots->addWidget(m_lossPlot);
    plots->addWidget(m_trainedSigmaPlot);
    layout->addLayout(plots, 1);
    m_useCaseLabel = new QLabel(tr("Train a layer to compare its inverse and determinant with LU."), page);
    m_useCaseLabel->setTextFormat(Qt::RichText);
    m_useCaseLabel->setWordWrap(true);
    m_useCaseLabel->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_useCaseLabel->setObjectName(QStringLiteral("fasthUseCases"));
    layout->addWidget(m_useCaseLabel);
    m_trainingPages = withEmptyState(page, tr("<p style='font-size:large'>No layer trained yet.</p>"
                                              "<p>Press <b>Train layer</b> (left, under the settings): Adam fits W = U Σ Vᵀ, "
                                              "U and V products of Householder reflections, to a random target, and this tab "
                                              "plots the loss, the learnt σᵢ against the target's, and what the factored form "
                                              "gives for free (inverse, determinant) against LU.</p>"));
    return m_trainingPages;
}

} // namespace wfs::ui
