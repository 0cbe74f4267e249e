#include "FasthPanel.h"

#include "FasthMatrixView.h"

#include <qcustomplot.h>

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFile>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
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
#include <QSplitter>
#include <QStandardItemModel>
#include <QTabWidget>
#include <QTextBrowser>
#include <QTimer>
#include <QVBoxLayout>
#include <QtConcurrent>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <set>
#include <thread>

namespace wfs::ui {

namespace {

using fasth::BenchMethod;
using fasth::Pass;

// Heatmaps of d x d matrices beyond this are more pixels than the screen has and slow to draw.
constexpr int kMaxPictureDimension = 512;
// The live views refresh at most this often: fast jobs (a training step can take well under a
// millisecond) must never turn into one signal and one replot per step.
constexpr int kPollIntervalMs = 50;

QColor methodColor(BenchMethod method)
{
    switch (method) {
    case BenchMethod::Sequential: return {203, 24, 29};
    case BenchMethod::SequentialFused: return {252, 141, 89};
    case BenchMethod::FastH: return {33, 113, 181};
    case BenchMethod::CompactWY: return {35, 139, 69};
    case BenchMethod::TreeMerge: return {117, 107, 177};
    case BenchMethod::Library: return {140, 81, 10};
    case BenchMethod::Dense: return {80, 80, 80};
    default: return {0, 0, 0};
    }
}

QString methodLabel(BenchMethod method)
{
    switch (method) {
    case BenchMethod::Sequential: return FasthPanel::tr("sequential");
    case BenchMethod::SequentialFused: return FasthPanel::tr("sequential, one fused kernel (GPU)");
    case BenchMethod::FastH: return FasthPanel::tr("FastH");
    case BenchMethod::CompactWY: return FasthPanel::tr("UT (compact WY)");
    case BenchMethod::TreeMerge: return FasthPanel::tr("tree merge");
    case BenchMethod::Library: return FasthPanel::tr("library (Eigen / cuSOLVER)");
    case BenchMethod::Dense: return FasthPanel::tr("dense GEMM, Q formed");
    default: return QString::fromLatin1(fasth::methodName(method));
    }
}

QString passLabel(Pass pass)
{
    switch (pass) {
    case Pass::Forward: return FasthPanel::tr("forward");
    case Pass::Backward: return FasthPanel::tr("backward");
    case Pass::Both: return FasthPanel::tr("forward + backward");
    }
    return {};
}

void setLogAxis(QCPAxis* axis, double base)
{
    QSharedPointer<QCPAxisTickerLog> ticker(new QCPAxisTickerLog);
    ticker->setLogBase(base);
    axis->setScaleType(QCPAxis::stLogarithmic);
    axis->setTicker(ticker);
    axis->setNumberFormat(QStringLiteral("g"));
}

void styleLegend(QCustomPlot* plot, Qt::Alignment alignment)
{
    plot->legend->setVisible(true);
    QFont font = plot->legend->font();
    font.setPointSizeF(font.pointSizeF() * 0.85);
    plot->legend->setFont(font);
    plot->legend->setBrush(QColor(255, 255, 255, 210));
    plot->axisRect()->insetLayout()->setInsetAlignment(0, alignment);
}

// The legend in a row of its own under the axes: the timing plots have curves everywhere, and a legend
// inside would hide some of them.
void legendBelow(QCustomPlot* plot, int columns)
{
    styleLegend(plot, Qt::AlignTop | Qt::AlignLeft);
    plot->axisRect()->insetLayout()->take(plot->legend);
    plot->plotLayout()->addElement(1, 0, plot->legend);
    plot->plotLayout()->setRowStretchFactor(1, 0.001);
    plot->legend->setFillOrder(QCPLegend::foColumnsFirst);
    plot->legend->setWrap(columns);
    plot->legend->setBorderPen(Qt::NoPen);
}

QCustomPlot* makePlot(QWidget* parent, const QString& xLabel, const QString& yLabel)
{
    auto* plot = new QCustomPlot(parent);
    plot->xAxis->setLabel(xLabel);
    plot->yAxis->setLabel(yLabel);
    plot->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
    plot->setMinimumSize(300, 200);
    return plot;
}

// Pads a logarithmic axis range by a factor on both sides, so that end points are not on the frame.
void padLog(QCPAxis* axis, double factor)
{
    const QCPRange range = axis->range();
    if (range.lower > 0 && range.upper > 0)
        axis->setRange(range.lower / factor, range.upper * factor);
}

QString seconds(double ms)
{
    if (ms < 1.0)
        return QStringLiteral("%1 µs").arg(ms * 1000.0, 0, 'g', 3);
    return QStringLiteral("%1 ms").arg(ms, 0, 'g', 3);
}

std::vector<int> parseDimensions(const QString& text)
{
    std::set<int> values;
    for (const QString& part : text.split(QLatin1Char(','), Qt::SkipEmptyParts)) {
        bool ok = false;
        const int value = part.trimmed().toInt(&ok);
        if (!ok || value < 1)
            return {};
        values.insert(value);
    }
    return {values.begin(), values.end()};
}

} // namespace

const char* fasthPlotName(FasthPlot plot)
{
    switch (plot) {
    case FasthPlot::Timing: return "timing";
    case FasthPlot::SpeedUp: return "speedup";
    case FasthPlot::BlockSize: return "blocks";
    case FasthPlot::Pictures: return "pictures";
    case FasthPlot::SingularValues: return "sigma";
    case FasthPlot::Loss: return "loss";
    case FasthPlot::TrainedSingularValues: return "trained-sigma";
    }
    return "plot";
}

FasthPanel::FasthPanel(QWidget* parent)
    : QWidget(parent)
    , m_sweepWatcher(new QFutureWatcher<FasthSweepResults>(this))
    , m_trainingWatcher(new QFutureWatcher<FasthTrainingResult>(this))
    , m_pictureWatcher(new QFutureWatcher<FasthPictures>(this))
    , m_pollTimer(new QTimer(this))
    , m_pictureTimer(new QTimer(this))
{
    // What the tab is about, for a wavefront user, before any control: two plain sentences.
    auto* outer = new QVBoxLayout(this);
    auto* intro = new QLabel(tr("This tab teaches the second paper behind the program: FastH, which multiplies many "
                                "Householder reflections (H = I − 2vvᵀ/‖v‖²) in a few large blocks instead of one small "
                                "step at a time, the operation inside SVD-parameterised network layers (W = U Σ Vᵀ with U "
                                "and V built from reflections). The pictures show the reflections, the matrices they build "
                                "and their blocks; the timing tab measures the methods on this machine; the SVD-layer tab "
                                "trains one such layer."),
                             this);
    intro->setObjectName(QStringLiteral("fasthIntro"));
    intro->setWordWrap(true);
    intro->setContentsMargins(4, 2, 4, 6);
    outer->addWidget(intro);
    auto* layout = new QHBoxLayout;
    outer->addLayout(layout, 1);
    // The controls scroll vertically on their own (the tab itself never scrolls, so no scroll bars nest).
    auto* scroll = new QScrollArea(this);
    scroll->setObjectName(QStringLiteral("fasthControlsScroll"));
    scroll->setWidget(buildControls());
    scroll->setWidgetResizable(true);
    scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    scroll->setMinimumWidth(300);
    scroll->setMaximumWidth(380);
    layout->addWidget(scroll);

    m_tabs = new QTabWidget(this);
    m_tabs->addTab(buildPicturesPage(), tr("Pictures"));
    m_tabs->addTab(buildTimingPage(), tr("Timing"));
    m_tabs->addTab(buildTrainingPage(), tr("SVD layer"));
    m_explanation = new QTextBrowser(m_tabs);
    m_explanation->setObjectName(QStringLiteral("fasthExplanation"));
    m_explanation->setOpenExternalLinks(false);
    m_tabs->addTab(m_explanation, tr("What is compared"));
    layout->addWidget(m_tabs, 1);

    m_pollTimer->setInterval(kPollIntervalMs);
    connect(m_pollTimer, &QTimer::timeout, this, &FasthPanel::poll);
    m_pictureTimer->setSingleShot(true);
    m_pictureTimer->setInterval(250);
    connect(m_pictureTimer, &QTimer::timeout, this, [this] { updatePictures(pictureSettings()); });
    connect(m_sweepWatcher, &QFutureWatcherBase::finished, this, [this] { onSweepDone(m_sweepWatcher->result()); });
    connect(m_trainingWatcher, &QFutureWatcherBase::finished, this,
            [this] { onTrainingDone(m_trainingWatcher->result()); });
    connect(m_pictureWatcher, &QFutureWatcherBase::finished, this, [this] { showPictures(m_pictureWatcher->result()); });

    populateBackends();
    updateExplanation();
    updateControlState();
    schedulePictures(); // first pictures once the event loop runs, not inside the constructor
}

FasthPanel::~FasthPanel()
{
    m_pollTimer->stop();
    if (m_sweepState)
        m_sweepState->cancelRequested = true;
    if (m_trainingState)
        m_trainingState->cancelRequested = true;
    // The workers only hold shared state, never the panel; waiting here keeps them from outliving it.
    m_sweepWatcher->future().waitForFinished();
    m_trainingWatcher->future().waitForFinished();
    m_pictureWatcher->future().waitForFinished();
}

// ---- Building ----

QWidget* FasthPanel::buildControls()
{
    auto* controls = new QWidget(this);
    auto* column = new QVBoxLayout(controls);
    const int hardware = int(std::max(1u, std::thread::hardware_concurrency()));

    auto* problem = new QGroupBox(tr("Problem"), controls);
    auto* problemForm = new QFormLayout(problem);
    m_dimension = new QSpinBox(problem);
    m_dimension->setRange(2, 4096);
    m_dimension->setValue(64);
    m_dimension->setToolTip(tr("Dimension d: W and the factors are d x d. Pictures are drawn up to d = %1.")
                                .arg(kMaxPictureDimension));
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
    column->addWidget(problem);

    auto* sweep = new QGroupBox(tr("Timing sweep"), controls);
    auto* sweepLayout = new QVBoxLayout(sweep);
    auto* sweepForm = new QFormLayout;
    m_sweepDimensions = new QLineEdit(QStringLiteral("32,64,128,256"), sweep);
    m_sweepDimensions->setValidator(
        new QRegularExpressionValidator(QRegularExpression(QStringLiteral("[0-9, ]*")), m_sweepDimensions));
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
    const std::vector<BenchMethod> methodOrder = {BenchMethod::Sequential, BenchMethod::FastH,
                                                  BenchMethod::CompactWY,  BenchMethod::TreeMerge,
                                                  BenchMethod::Library,    BenchMethod::Dense,
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
    m_runSweep = new QPushButton(tr("Run timing sweep"), sweep);
    m_runSweep->setObjectName(QStringLiteral("fasthRunSweep"));
    sweepLayout->addWidget(m_runSweep);
    column->addWidget(sweep);

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
    m_train = new QPushButton(tr("Train layer"), training);
    m_train->setObjectName(QStringLiteral("fasthTrain"));
    trainingForm->addRow(m_train);
    column->addWidget(training);

    m_progress = new QProgressBar(controls);
    m_progress->setRange(0, 1);
    m_progress->setValue(0);
    m_cancel = new QPushButton(tr("Cancel"), controls);
    m_cancel->setObjectName(QStringLiteral("fasthCancel"));
    auto* progressRow = new QHBoxLayout;
    progressRow->addWidget(m_progress, 1);
    progressRow->addWidget(m_cancel);
    column->addLayout(progressRow);
    m_status = new QLabel(controls);
    m_status->setWordWrap(true);
    m_status->setObjectName(QStringLiteral("fasthStatus"));
    column->addWidget(m_status);

    auto* exports = new QHBoxLayout;
    m_saveCsv = new QPushButton(tr("Save CSV…"), controls);
    m_saveCsv->setToolTip(tr("The sweep rows as measured by the engine."));
    m_savePng = new QPushButton(tr("Save plots (PNG)…"), controls);
    exports->addWidget(m_saveCsv);
    exports->addWidget(m_savePng);
    column->addLayout(exports);
    column->addStretch();

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
    return controls;
}

QWidget* FasthPanel::buildPicturesPage()
{
    m_picturesPage = new QWidget(this);
    auto* grid = new QGridLayout(m_picturesPage);
    m_reflectorView = new FasthMatrixView(m_picturesPage);
    m_uView = new FasthMatrixView(m_picturesPage);
    m_vView = new FasthMatrixView(m_picturesPage);
    m_wView = new FasthMatrixView(m_picturesPage);
    m_sigmaPlot = makePlot(m_picturesPage, tr("index i"), tr("sigma_i"));
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
    grid->addWidget(m_pictureInfo, 1, 2);
    for (int column = 0; column < 3; ++column)
        grid->setColumnStretch(column, 1);
    for (int row = 0; row < 2; ++row)
        grid->setRowStretch(row, 1);
    for (FasthMatrixView* view : {m_reflectorView, m_uView, m_vView, m_wView})
        view->clear(tr("computing…"));
    return m_picturesPage;
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
    m_speedUpPlot = makePlot(page, tr("dimension d"), tr("speed-up over sequential (x)"));
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
    rebuildTimingPlots();
    return page;
}

QWidget* FasthPanel::buildTrainingPage()
{
    auto* page = new QWidget(this);
    auto* layout = new QVBoxLayout(page);
    auto* plots = new QHBoxLayout;
    m_lossPlot = makePlot(page, tr("Adam step"), tr("loss ||W X - T X||^2 / (2m)"));
    setLogAxis(m_lossPlot->yAxis, 10);
    QCPGraph* loss = m_lossPlot->addGraph();
    loss->setName(tr("loss"));
    loss->setPen(QPen(QColor(33, 113, 181), 2));
    m_trainedSigmaPlot = makePlot(page, tr("index (sorted)"), tr("singular value"));
    QCPGraph* target = m_trainedSigmaPlot->addGraph();
    target->setName(tr("target's singular values"));
    target->setPen(QPen(QColor(80, 80, 80), 1.5, Qt::DashLine));
    QCPGraph* learnt = m_trainedSigmaPlot->addGraph();
    learnt->setName(tr("learnt |sigma|, sorted"));
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
    return page;
}

void FasthPanel::populateBackends()
{
    // Through the factory's status, asked at run time: only a backend that can run is selectable, and
    // the GPU entry's tooltip says why not when it cannot.
    for (const BackendStatus& status : backendStatuses()) {
        const QString label = status.kind == BackendKind::Cpu ? tr("CPU (Eigen)") : tr("GPU (CUDA, cuBLAS)");
        m_backend->addItem(status.available ? QStringLiteral("%1 — %2").arg(label, QString::fromStdString(status.device))
                                            : label,
                           int(status.kind));
        const int row = m_backend->count() - 1;
        if (!status.available) {
            m_backend->setItemData(row, QString::fromStdString(status.reason), Qt::ToolTipRole);
            if (auto* model = qobject_cast<QStandardItemModel*>(m_backend->model()))
                if (QStandardItem* item = model->item(row))
                    item->setEnabled(false);
        } else {
            m_backend->setItemData(row, QString::fromStdString(status.device), Qt::ToolTipRole);
        }
    }
    m_backend->setCurrentIndex(0);
}

// ---- Settings ----

FasthSweepSettings FasthPanel::sweepSettings() const
{
    FasthSweepSettings s;
    s.dimensions = parseDimensions(m_sweepDimensions->text());
    s.methods.clear();
    const bool gpu = BackendKind(m_backend->currentData().toInt()) == BackendKind::Gpu;
    for (const auto& [method, check] : m_methodChecks)
        if (check->isChecked() && (method != BenchMethod::SequentialFused || gpu))
            s.methods.push_back(method);
    s.passes.clear();
    for (const auto& [pass, check] : m_passChecks)
        if (check->isChecked())
            s.passes.push_back(pass);
    s.batch = m_batch->value();
    s.blockSize = m_blockSize->value();
    s.blockSweep = m_blockSweep->isChecked();
    s.blockSweepDimension = m_dimension->value();
    s.blockSweepReflectors = m_reflectors->value();
    s.precision = Precision(m_precision->currentData().toInt());
    s.backend = BackendKind(m_backend->currentData().toInt());
    s.threads = m_threads->value();
    s.repeat = m_repeat->value();
    s.warmup = m_warmup->value();
    s.lapackLayout = m_layout->currentIndex() == 0;
    return s;
}

FasthPictureSettings FasthPanel::pictureSettings() const
{
    FasthPictureSettings s;
    s.d = m_dimension->value();
    s.k = std::min(m_reflectors->value(), s.d);
    s.blockSize = m_blockSize->value();
    s.precision = Precision(m_precision->currentData().toInt());
    s.threads = m_threads->value();
    return s;
}

FasthTrainingSettings FasthPanel::trainingSettings() const
{
    FasthTrainingSettings s;
    s.d = m_dimension->value();
    s.k = std::min(m_reflectors->value(), s.d);
    s.samples = m_samples->value();
    s.steps = m_steps->value();
    s.learningRate = m_learningRate->value();
    s.blockSize = m_blockSize->value();
    s.precision = Precision(m_precision->currentData().toInt());
    s.threads = m_threads->value();
    return s;
}

// ---- Jobs ----

bool FasthPanel::runTimingSweep(const FasthSweepSettings& settings)
{
    if (isRunning()) {
        fail(tr("A sweep or a training already runs; cancel it or wait for it."));
        return false;
    }
    QString error;
    if (!settings.isValid(&error)) {
        fail(tr("Timing sweep: %1.").arg(error));
        return false;
    }
    if (settings.backend == BackendKind::Gpu) {
        const BackendStatus gpu = backendStatus(BackendKind::Gpu);
        if (!gpu.available) {
            fail(tr("Timing sweep: %1").arg(QString::fromStdString(gpu.reason)));
            return false;
        }
    }
    m_rows.clear();
    m_lastSweep.reset();
    m_lastError.clear();
    rebuildTimingPlots();
    m_sweepState = std::make_shared<FasthSweepState>();
    m_lastDone = m_lastTotal = -1;
    m_progress->setRange(0, 0); // busy until the worker knows the grid
    // A picture job still under way would share the cores with the first measurements (and Eigen's
    // thread setting, which the runner sets): the worker lets it finish before timing anything.
    m_sweepWatcher->setFuture(QtConcurrent::run([settings, state = m_sweepState, pictures = m_pictureWatcher->future()] {
        QFuture<FasthPictures>(pictures).waitForFinished();
        return runFasthSweep(settings, *state);
    }));
    m_pollTimer->start();
    m_tabs->setCurrentIndex(1);
    setStatus(tr("Timing sweep running…"));
    updateControlState();
    emit runningChanged(true);
    emit sweepStarted();
    return true;
}

bool FasthPanel::startTraining(const FasthTrainingSettings& settings)
{
    if (isRunning()) {
        fail(tr("A sweep or a training already runs; cancel it or wait for it."));
        return false;
    }
    QString error;
    if (!settings.isValid(&error)) {
        fail(tr("Training: %1.").arg(error));
        return false;
    }
    m_lastTraining.reset();
    m_lastError.clear();
    m_lossIterations.clear();
    m_losses.clear();
    m_liveSigma.resize(0);
    m_targetSigma.resize(0);
    m_trainingSteps = settings.steps;
    rebuildTrainingPlots();
    m_useCaseLabel->setText(tr("Training…"));
    m_trainingState = std::make_shared<FasthTrainingState>();
    m_progress->setRange(0, settings.steps);
    m_progress->setValue(0);
    m_trainingWatcher->setFuture(
        QtConcurrent::run([settings, state = m_trainingState] { return runFasthTraining(settings, *state); }));
    m_pollTimer->start();
    m_tabs->setCurrentIndex(2);
    setStatus(tr("Training the SVD layer…"));
    updateControlState();
    emit runningChanged(true);
    emit trainingStarted();
    return true;
}

void FasthPanel::cancel()
{
    bool asked = false;
    if (m_sweepState) {
        m_sweepState->cancelRequested = true;
        asked = true;
    }
    if (m_trainingState) {
        m_trainingState->cancelRequested = true;
        asked = true;
    }
    if (asked)
        setStatus(tr("Cancelling…"));
}

void FasthPanel::schedulePictures()
{
    m_pictureTimer->start();
}

void FasthPanel::updatePictures(const FasthPictureSettings& settings)
{
    if (settings.d > kMaxPictureDimension) {
        for (FasthMatrixView* view : {m_reflectorView, m_uView, m_vView, m_wView})
            view->clear(tr("pictures up to d = %1").arg(kMaxPictureDimension));
        m_pictureInfo->setText(tr("Pictures are drawn up to d = %1; the sweeps and the training take larger d.")
                                   .arg(kMaxPictureDimension));
        return;
    }
    // Not while a sweep times: a second job on the same cores would distort its numbers.
    if (isSweepRunning() || m_pictureWatcher->isRunning()) {
        m_pendingPictures = settings;
        return;
    }
    startPictures(settings);
}

void FasthPanel::startPictures(const FasthPictureSettings& settings)
{
    m_pendingPictures.reset();
    m_pictureWatcher->setFuture(QtConcurrent::run([settings] { return computeFasthPictures(settings); }));
}

void FasthPanel::showPictures(FasthPictures pictures)
{
    if (m_pendingPictures && !isSweepRunning())
        startPictures(*m_pendingPictures); // a newer request arrived meanwhile; this one is already stale
    if (!pictures.error.isEmpty()) {
        m_pictureInfo->setText(tr("The pictures could not be computed: %1").arg(pictures.error.toHtmlEscaped()));
        m_lastError = pictures.error;
        return;
    }
    const FasthPictureSettings& s = pictures.settings;
    m_reflectorView->setMatrix(pictures.vReflectors, tr("reflectors of V (d x k)"));
    m_reflectorView->setColumnBlocks(pictures.blocks);
    m_uView->setMatrix(pictures.uFactor, tr("U = H1 ... Hk"));
    m_vView->setMatrix(pictures.vFactor, tr("V"));
    m_wView->setMatrix(pictures.w, tr("W = U diag(sigma) V^T"));
    QVector<double> index(int(pictures.sigma.size())), sigma(int(pictures.sigma.size()));
    for (int i = 0; i < sigma.size(); ++i) {
        index[i] = i;
        sigma[i] = pictures.sigma(i);
    }
    m_sigmaPlot->graph(0)->setData(index, sigma, true);
    m_sigmaPlot->rescaleAxes();
    m_sigmaPlot->yAxis->scaleRange(1.15); // keep the tallest impulses off the frame
    m_sigmaPlot->xAxis->setRange(-1, sigma.size());
    m_sigmaPlot->replot(QCustomPlot::rpQueuedReplot);

    const int blocks = int(pictures.blocks.size());
    const int innerSteps = std::min(s.blockSize, s.k);
    const QString precision = s.precision == Precision::Double ? tr("float64") : tr("float32");
    m_pictureInfo->setText(
        tr("<p><b>d = %1, k = %2, b = %3: %4 blocks</b> (P1, P2, … over the reflectors).</p>"
           "<p>FastH builds each block's WY form P<sub>j</sub> = I − 2 W<sub>j</sub> Y<sub>j</sub><sup>T</sup> "
           "on its own (step 1: the blocks do not depend on each other, so a GPU builds them all at once), then "
           "applies the %4 blocks one after another (step 2): %4 + %5 = %6 sequential matrix operations "
           "instead of %2 reflector steps.</p>"
           "<p>Orthogonality in %7, ‖Q<sup>T</sup>Q − I‖<sub>F</sub>/√d:<br>U: %8<br>V: %9</p>"
           "<p>σ is drawn from ±[0.5, 2]; a negative σ<sub>i</sub> is a reflection the layer is free to "
           "learn.</p>")
            .arg(s.d)
            .arg(s.k)
            .arg(s.blockSize)
            .arg(blocks)
            .arg(innerSteps)
            .arg(blocks + innerSteps)
            .arg(precision)
            .arg(pictures.uOrthogonalityError, 0, 'e', 2)
            .arg(pictures.vOrthogonalityError, 0, 'e', 2));
    m_pictures = std::move(pictures);
    emit picturesUpdated();
}

void FasthPanel::poll()
{
    if (m_sweepState) {
        std::vector<FasthTimingRow> fresh;
        int done = 0, total = 0;
        {
            std::lock_guard lock(m_sweepState->mutex);
            if (m_sweepState->rows.size() > m_rows.size())
                fresh.assign(m_sweepState->rows.begin() + long(m_rows.size()), m_sweepState->rows.end());
            done = m_sweepState->done;
            total = m_sweepState->total;
        }
        if (!fresh.empty()) {
            m_rows.insert(m_rows.end(), fresh.begin(), fresh.end());
            rebuildTimingPlots();
        }
        if (total > 0) {
            m_progress->setRange(0, total);
            m_progress->setValue(done);
        }
        if (done != m_lastDone || total != m_lastTotal) {
            m_lastDone = done;
            m_lastTotal = total;
            if (total > 0)
                setStatus(tr("Timing sweep: %1 of %2 measurements").arg(done).arg(total));
            emit sweepProgress(done, total);
        }
    }
    if (m_trainingState) {
        std::vector<double> iterations, losses;
        Eigen::VectorXd sigma;
        {
            std::lock_guard lock(m_trainingState->mutex);
            const size_t shown = m_losses.size();
            if (m_trainingState->losses.size() > shown) {
                iterations.assign(m_trainingState->iterations.begin() + long(shown), m_trainingState->iterations.end());
                losses.assign(m_trainingState->losses.begin() + long(shown), m_trainingState->losses.end());
            }
            sigma = m_trainingState->sigma;
            if (m_targetSigma.size() == 0)
                m_targetSigma = m_trainingState->targetSingularValues;
        }
        if (!losses.empty() || (sigma.size() > 0 && m_liveSigma.size() == 0)) {
            m_lossIterations.insert(m_lossIterations.end(), iterations.begin(), iterations.end());
            m_losses.insert(m_losses.end(), losses.begin(), losses.end());
            m_liveSigma = sigma;
            rebuildTrainingPlots();
            if (!m_losses.empty()) {
                const int iteration = int(m_lossIterations.back());
                m_progress->setValue(std::min(iteration, m_trainingSteps));
                setStatus(tr("Training: step %1 of %2, loss %3").arg(iteration).arg(m_trainingSteps).arg(m_losses.back(), 0, 'g', 4));
                emit trainingProgress(iteration, m_losses.back());
            }
        }
    }
}

void FasthPanel::onSweepDone(FasthSweepResults results)
{
    m_sweepState.reset();
    if (!isRunning())
        m_pollTimer->stop();
    // The final rows are the worker's own list: the same engine rows the live view was fed.
    m_rows = results.rows;
    const int measured = int(results.rows.size());
    const int visited = measured + int(results.skipped.size());
    if (results.total > 0) {
        m_progress->setRange(0, results.total);
        m_progress->setValue(visited);
    } else {
        m_progress->setRange(0, 1);
        m_progress->setValue(0);
    }
    m_lastSweep = std::move(results);
    const FasthSweepResults& r = *m_lastSweep;
    rebuildTimingPlots();
    updateExplanation();
    updateControlState();
    emit runningChanged(isRunning());
    if (m_pendingPictures && !m_pictureWatcher->isRunning())
        startPictures(*m_pendingPictures);

    if (!r.error.isEmpty()) {
        fail(tr("The timing sweep stopped: %1").arg(r.error));
        emit sweepFailed(r.error);
    } else if (r.cancelled) {
        setStatus(tr("Timing sweep cancelled after %1 of %2 measurements; the rows measured are kept.")
                      .arg(visited)
                      .arg(r.total));
        emit sweepCancelled();
    } else {
        QString text = tr("Timing sweep done: %1 measurements on %2 (%3 threads).").arg(measured).arg(r.device).arg(r.threads);
        if (!r.skipped.isEmpty())
            text += QLatin1Char(' ') + tr("Skipped: %1").arg(r.skipped.join(QStringLiteral("; ")));
        setStatus(text);
        emit sweepFinished();
    }
}

void FasthPanel::onTrainingDone(FasthTrainingResult result)
{
    m_trainingState.reset();
    if (!isRunning())
        m_pollTimer->stop();
    // The final curve is the worker's complete record, whatever the live view managed to pull.
    m_lossIterations = result.iterations;
    m_losses = result.losses;
    m_liveSigma = result.sigma;
    m_targetSigma = result.targetSingularValues;
    m_lastTraining = std::move(result);
    const FasthTrainingResult& r = *m_lastTraining;
    rebuildTrainingPlots();
    showUseCases();
    updateControlState();
    emit runningChanged(isRunning());

    if (!r.error.isEmpty()) {
        fail(tr("The training could not run: %1").arg(r.error));
        emit trainingFailed(r.error);
    } else if (r.cancelled) {
        m_progress->setValue(std::min(r.summary.iterations, m_trainingSteps));
        setStatus(tr("Training cancelled after %1 steps; loss %2 -> %3.")
                      .arg(r.summary.iterations)
                      .arg(r.summary.initialLoss, 0, 'g', 4)
                      .arg(r.summary.finalLoss, 0, 'g', 4));
        emit trainingCancelled();
    } else {
        m_progress->setValue(m_trainingSteps);
        setStatus(tr("Training %1 after %2 steps: loss %3 -> %4.")
                      .arg(QString::fromLatin1(fasth::terminationName(r.summary.termination)))
                      .arg(r.summary.iterations)
                      .arg(r.summary.initialLoss, 0, 'g', 4)
                      .arg(r.summary.finalLoss, 0, 'g', 4));
        emit trainingFinished();
    }
}

// ---- Views ----

std::vector<FasthSpeedUp> FasthPanel::speedUps(Pass pass) const
{
    std::map<int, double> sequential;
    for (const FasthTimingRow& t : m_rows)
        if (t.sweep == FasthSweepKind::Dimension && t.row.pass == pass && t.row.method == BenchMethod::Sequential)
            sequential[t.row.d] = t.row.ms;
    std::vector<FasthSpeedUp> result;
    for (const FasthTimingRow& t : m_rows) {
        if (t.sweep != FasthSweepKind::Dimension || t.row.pass != pass || t.row.method == BenchMethod::Sequential)
            continue;
        const auto it = sequential.find(t.row.d);
        if (it == sequential.end() || !(t.row.ms > 0.0))
            continue;
        result.push_back({t.row.d, t.row.method, pass, it->second / t.row.ms});
    }
    return result;
}

void FasthPanel::rebuildTimingPlots()
{
    const Pass pass = Pass(m_shownPass->currentData().toInt());

    // Time against d: one graph per method, quartiles as error bars.
    m_timingPlot->clearPlottables();
    std::map<BenchMethod, std::vector<const fasth::SweepRow*>> byMethod;
    for (const FasthTimingRow& t : m_rows)
        if (t.sweep == FasthSweepKind::Dimension && t.row.pass == pass)
            byMethod[t.row.method].push_back(&t.row);
    for (auto& [method, rows] : byMethod) {
        std::sort(rows.begin(), rows.end(), [](auto* a, auto* b) { return a->d < b->d; });
        QVector<double> x, y, below, above;
        for (const fasth::SweepRow* r : rows) {
            x << r->d;
            y << r->ms;
            below << r->ms - r->msQ1;
            above << r->msQ3 - r->ms;
        }
        QCPGraph* graph = m_timingPlot->addGraph();
        graph->setName(methodLabel(method));
        const QColor color = methodColor(method);
        graph->setPen(QPen(color, method == BenchMethod::FastH || method == BenchMethod::Sequential ? 2.5 : 1.5));
        graph->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, color, 6));
        graph->setData(x, y, true);
        auto* bars = new QCPErrorBars(m_timingPlot->xAxis, m_timingPlot->yAxis);
        bars->removeFromLegend();
        bars->setDataPlottable(graph);
        bars->setData(below, above);
        bars->setPen(QPen(color, 1));
    }
    m_timingPlot->rescaleAxes();
    padLog(m_timingPlot->xAxis, 1.25);
    padLog(m_timingPlot->yAxis, 1.5);
    m_timingPlot->replot(QCustomPlot::rpQueuedReplot);

    // Speed-up over sequential against d, with the break-even line.
    m_speedUpPlot->clearPlottables();
    std::map<BenchMethod, std::vector<std::pair<int, double>>> speedUpByMethod;
    for (const FasthSpeedUp& s : speedUps(pass))
        speedUpByMethod[s.method].emplace_back(s.d, s.speedUp);
    double lowestD = 0, highestD = 0;
    for (auto& [method, points] : speedUpByMethod) {
        std::sort(points.begin(), points.end());
        QVector<double> x, y;
        for (const auto& [d, speedUp] : points) {
            x << d;
            y << speedUp;
            lowestD = lowestD == 0 ? d : std::min<double>(lowestD, d);
            highestD = std::max<double>(highestD, d);
        }
        QCPGraph* graph = m_speedUpPlot->addGraph();
        graph->setName(method == BenchMethod::FastH ? tr("FastH over sequential") : methodLabel(method));
        const QColor color = methodColor(method);
        graph->setPen(method == BenchMethod::FastH ? QPen(color, 2.5) : QPen(color, 1, Qt::DashLine));
        graph->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, color, method == BenchMethod::FastH ? 7 : 4));
        graph->setData(x, y, true);
    }
    if (highestD > 0) {
        QCPGraph* even = m_speedUpPlot->addGraph();
        even->setName(tr("as fast as sequential"));
        even->setPen(QPen(Qt::black, 1, Qt::DotLine));
        even->setData(QVector<double>{lowestD, highestD}, QVector<double>{1.0, 1.0});
    }
    m_speedUpPlot->rescaleAxes();
    padLog(m_speedUpPlot->xAxis, 1.25);
    if (m_speedUpPlot->yAxis->range().upper > 0)
        m_speedUpPlot->yAxis->setRange(0, m_speedUpPlot->yAxis->range().upper * 1.15);
    m_speedUpPlot->replot(QCustomPlot::rpQueuedReplot);

    // The block sweep: FastH against b, sequential and dense GEMM at the same (d, k) as levels, and the
    // count of sequential matrix operations that the O(k/b + b) argument is about.
    m_blockPlot->clearPlottables();
    std::vector<const fasth::SweepRow*> fasthRows;
    const fasth::SweepRow* sequentialRow = nullptr;
    const fasth::SweepRow* denseRow = nullptr;
    for (const FasthTimingRow& t : m_rows) {
        if (t.sweep != FasthSweepKind::BlockSize || t.row.pass != pass)
            continue;
        if (t.row.method == BenchMethod::FastH)
            fasthRows.push_back(&t.row);
        else if (t.row.method == BenchMethod::Sequential)
            sequentialRow = &t.row;
        else if (t.row.method == BenchMethod::Dense)
            denseRow = &t.row;
    }
    std::sort(fasthRows.begin(), fasthRows.end(),
              [](auto* a, auto* b) { return a->requestedBlock < b->requestedBlock; });
    if (!fasthRows.empty()) {
        const int k = fasthRows.front()->k;
        QVector<double> b, ms, below, above, steps;
        for (const fasth::SweepRow* r : fasthRows) {
            b << r->block;
            ms << r->ms;
            below << r->ms - r->msQ1;
            above << r->msQ3 - r->ms;
            steps << std::ceil(double(k) / r->block) + r->block;
        }
        QCPGraph* fasthGraph = m_blockPlot->addGraph();
        fasthGraph->setName(tr("FastH, d = %1, k = %2").arg(fasthRows.front()->d).arg(k));
        fasthGraph->setPen(QPen(methodColor(BenchMethod::FastH), 2.5));
        fasthGraph->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, methodColor(BenchMethod::FastH), 6));
        fasthGraph->setData(b, ms, true);
        auto* bars = new QCPErrorBars(m_blockPlot->xAxis, m_blockPlot->yAxis);
        bars->removeFromLegend();
        bars->setDataPlottable(fasthGraph);
        bars->setData(below, above);
        for (const fasth::SweepRow* level : {sequentialRow, denseRow}) {
            if (!level)
                continue;
            QCPGraph* graph = m_blockPlot->addGraph();
            graph->setName(methodLabel(level->method));
            graph->setPen(QPen(methodColor(level->method), 1.5, Qt::DashLine));
            graph->setData(QVector<double>{b.front(), b.back()}, QVector<double>{level->ms, level->ms});
        }
        QCPGraph* count = m_blockPlot->addGraph(m_blockPlot->xAxis, m_blockPlot->yAxis2);
        count->setName(tr("ceil(k/b) + b (right axis)"));
        count->setPen(QPen(QColor(150, 150, 150), 1.5, Qt::DotLine));
        count->setData(b, steps, true);
    }
    m_blockPlot->rescaleAxes();
    padLog(m_blockPlot->xAxis, 1.25);
    padLog(m_blockPlot->yAxis, 1.5);
    if (m_blockPlot->yAxis2->range().upper > 0)
        m_blockPlot->yAxis2->setRange(0, m_blockPlot->yAxis2->range().upper * 1.15);
    m_blockPlot->replot(QCustomPlot::rpQueuedReplot);
    m_saveCsv->setEnabled(!m_rows.empty());
}

void FasthPanel::rebuildTrainingPlots()
{
    QVector<double> x, y;
    for (size_t i = 0; i < m_losses.size(); ++i)
        if (m_losses[i] > 0) { // a log axis cannot show zero
            x << m_lossIterations[i];
            y << m_losses[i];
        }
    m_lossPlot->graph(0)->setData(x, y, true);
    m_lossPlot->rescaleAxes();
    padLog(m_lossPlot->yAxis, 1.5);
    m_lossPlot->replot(QCustomPlot::rpQueuedReplot);

    std::vector<double> learnt(size_t(m_liveSigma.size()));
    for (Eigen::Index i = 0; i < m_liveSigma.size(); ++i)
        learnt[size_t(i)] = std::abs(m_liveSigma(i));
    std::sort(learnt.begin(), learnt.end(), std::greater<>());
    QVector<double> index, values, targetIndex, target;
    for (size_t i = 0; i < learnt.size(); ++i) {
        index << double(i + 1);
        values << learnt[i];
    }
    for (Eigen::Index i = 0; i < m_targetSigma.size(); ++i) {
        targetIndex << double(i + 1);
        target << m_targetSigma(i);
    }
    m_trainedSigmaPlot->graph(0)->setData(targetIndex, target, true);
    m_trainedSigmaPlot->graph(1)->setData(index, values, true);
    m_trainedSigmaPlot->rescaleAxes();
    if (m_trainedSigmaPlot->yAxis->range().upper > 0)
        m_trainedSigmaPlot->yAxis->setRange(0, m_trainedSigmaPlot->yAxis->range().upper * 1.1);
    m_trainedSigmaPlot->replot(QCustomPlot::rpQueuedReplot);
}

void FasthPanel::showUseCases()
{
    if (!m_lastTraining || !m_lastTraining->error.isEmpty()) {
        m_useCaseLabel->setText(tr("No trained layer."));
        return;
    }
    const FasthTrainingResult& r = *m_lastTraining;
    if (r.cancelled || r.summary.termination == fasth::TrainingTermination::Diverged) {
        m_useCaseLabel->setText(tr("Inverse and determinant are compared with LU after a training that ran to its end."));
        return;
    }
    const FasthUseCaseComparison& c = r.useCases;
    const QString precision = r.settings.precision == Precision::Double ? tr("float64") : tr("float32");
    m_useCaseLabel->setText(
        tr("<p><b>The trained layer (d = %1, %2) against LU of the formed W</b> (median of %3 runs; forming W for LU "
           "is not counted, the factorisation is, since W changes at every step):</p>"
           "<table cellspacing='0' cellpadding='3' border='1'>"
           "<tr><th></th><th>SVD layer (FastH)</th><th>LU (Eigen PartialPivLU)</th><th>agreement</th></tr>"
           "<tr><td>W<sup>−1</sup>Y, %4 columns</td><td>%5</td><td>%6</td>"
           "<td>max relative difference %7; residual ‖W X − Y‖ / ‖Y‖ (max norms) %8</td></tr>"
           "<tr><td>log |det W|</td><td>%9 (%10)</td><td>%11 (%12)</td><td>difference %13</td></tr>"
           "<tr><td>sign of det W</td><td>%14</td><td>%15</td><td>%16</td></tr>"
           "</table>")
            .arg(r.settings.d)
            .arg(precision)
            .arg(r.settings.timingRepeat)
            .arg(c.rightHandSides)
            .arg(seconds(c.svdInverseMs), seconds(c.luSolveMs))
            .arg(c.inverseRelativeDifference, 0, 'e', 2)
            .arg(c.inverseResidual, 0, 'e', 2)
            .arg(c.svdLogAbsDet, 0, 'g', 10)
            .arg(seconds(c.svdLogDetMs))
            .arg(c.luLogAbsDet, 0, 'g', 10)
            .arg(seconds(c.luLogDetMs))
            .arg(std::abs(c.svdLogAbsDet - c.luLogAbsDet), 0, 'e', 2)
            .arg(c.svdDetSign > 0 ? QStringLiteral("+") : QStringLiteral("−"))
            .arg(c.luDetSign > 0 ? QStringLiteral("+") : QStringLiteral("−"))
            .arg(c.svdDetSign == c.luDetSign ? tr("same") : tr("different")));
}

QString FasthPanel::explanationHtml() const
{
    return m_explanation->toHtml();
}

void FasthPanel::updateExplanation()
{
    QString html = tr(
        "<h3>What is compared</h3>"
        "<p>Every method computes the same product of k Householder reflections, H<sub>1</sub>H<sub>2</sub>…H<sub>k</sub> X, "
        "for a batch X of m columns (H<sub>i</sub> = I − 2 v<sub>i</sub>v<sub>i</sub><sup>T</sup>/‖v<sub>i</sub>‖²). "
        "Each result is checked against the sequential one (max_abs_error in the CSV).</p>"
        "<ul>"
        "<li><b>Sequential</b>: k dependent steps X ← X − (2/‖v‖²) v (v<sup>T</sup>X). Each step is small and waits "
        "for the one before.</li>"
        "<li><b>FastH</b>: the reflectors are cut into blocks of b (shaded on the Pictures tab). Each block's WY form "
        "P<sub>j</sub> = I − 2 W<sub>j</sub>Y<sub>j</sub><sup>T</sup> is built on its own, so all blocks can be built in "
        "parallel; then the ⌈k/b⌉ blocks are applied in turn, two matrix products each. That is O(k/b + b) sequential "
        "matrix operations instead of O(k) vector operations.</li>"
        "<li><b>UT</b> (compact WY) and <b>tree merge</b> build the block products in other ways; the <b>library</b> "
        "baseline is Eigen's blocked HouseholderSequence (cuSOLVER ormqr on a GPU); <b>dense GEMM</b> multiplies by an "
        "already formed Q, the floor for applying any orthogonal matrix.</li>"
        "</ul>"
        "<h3>Why the speed-up depends on the machine</h3>"
        "<p>The paper measured about 27× over the sequential algorithm on a GPU: there one reflector step keeps only a "
        "sliver of thousands of cores busy and costs a kernel launch, so turning k small steps into k/b + b large ones "
        "pays. On a CPU with a few cores, one step on a 32-column batch already runs close to the speed of a matrix "
        "product, so the sequential algorithm is near GEMM speed and FastH has little to win; it can even lose, since "
        "building W is extra work. The plots show what this machine does; nothing on them is estimated.</p>"
        "<h3>The block size</h3>"
        "<p>Small b: many blocks, applied one after another as thin products. Large b: few blocks, but each block's WY "
        "recursion takes b steps and the work grows as d²(b + m). The count ⌈k/b⌉ + b (right axis of the block plot) "
        "is smallest near b = √k; how closely the measured time follows it depends on how much parallel hardware "
        "there is to keep busy.</p>"
        "<h3>The SVD layer</h3>"
        "<p>W = U diag(σ) V<sup>T</sup> with U and V products of reflectors has orthogonal factors whatever the "
        "parameters (‖Q<sup>T</sup>Q − I‖ on the Pictures tab). With the SVD at hand, W<sup>−1</sup>Y = "
        "V diag(1/σ) U<sup>T</sup>Y costs two applies and log|det W| = Σ log|σ<sub>i</sub>| costs d logarithms, "
        "where LU needs an O(d³) factorisation. The SVD layer tab trains such a layer with Adam and checks both "
        "against LU.</p>");

    // What this machine did, from the last sweep's own numbers.
    const Pass pass = Pass(m_shownPass->currentData().toInt());
    int largest = 0;
    std::map<BenchMethod, double> atLargest;
    for (const FasthTimingRow& t : m_rows)
        if (t.sweep == FasthSweepKind::Dimension && t.row.pass == pass)
            largest = std::max(largest, t.row.d);
    for (const FasthTimingRow& t : m_rows)
        if (t.sweep == FasthSweepKind::Dimension && t.row.pass == pass && t.row.d == largest)
            atLargest[t.row.method] = t.row.ms;
    if (m_lastSweep && largest > 0) {
        const FasthSweepResults& r = *m_lastSweep;
        QStringList parts;
        for (const auto& [method, ms] : atLargest)
            parts << QStringLiteral("%1 %2").arg(methodLabel(method), seconds(ms));
        html += tr("<h3>On this machine</h3><p>%1, %2 threads, %3, batch %4, %5: at d = %6, %7.</p>")
                    .arg(r.device.toHtmlEscaped())
                    .arg(r.threads)
                    .arg(QString::fromLatin1(precisionName(r.settings.precision)))
                    .arg(r.settings.batch)
                    .arg(passLabel(pass))
                    .arg(largest)
                    .arg(parts.join(QStringLiteral(", ")));
        const auto sequential = atLargest.find(BenchMethod::Sequential);
        const auto fasthTime = atLargest.find(BenchMethod::FastH);
        if (sequential != atLargest.end() && fasthTime != atLargest.end() && fasthTime->second > 0) {
            const double speedUp = sequential->second / fasthTime->second;
            html += speedUp >= 1.0 ? tr("<p>FastH is %1× faster than the sequential algorithm here.</p>").arg(speedUp, 0, 'f', 2)
                                   : tr("<p>FastH is slower than the sequential algorithm here (%1×): this machine's "
                                        "sequential steps are already efficient.</p>")
                                         .arg(speedUp, 0, 'f', 2);
        }
        const fasth::SweepRow* best = nullptr;
        for (const FasthTimingRow& t : m_rows)
            if (t.sweep == FasthSweepKind::BlockSize && t.row.pass == pass && t.row.method == BenchMethod::FastH
                && (!best || t.row.ms < best->ms))
                best = &t.row;
        if (best)
            html += tr("<p>Fastest FastH block at d = %1, k = %2: b = %3 (%4).</p>")
                        .arg(best->d)
                        .arg(best->k)
                        .arg(best->block)
                        .arg(seconds(best->ms));
        if (r.cancelled)
            html += tr("<p>(The sweep was cancelled; these are the points measured before.)</p>");
    }
    m_explanation->setHtml(html);
}

void FasthPanel::updateControlState()
{
    const bool running = isRunning();
    m_runSweep->setEnabled(!running);
    m_train->setEnabled(!running);
    m_cancel->setEnabled(running);
    m_saveCsv->setEnabled(!m_rows.empty());
    const bool gpu = BackendKind(m_backend->currentData().toInt()) == BackendKind::Gpu;
    for (const auto& [method, check] : m_methodChecks)
        if (method == BenchMethod::SequentialFused) {
            check->setEnabled(gpu);
            check->setToolTip(gpu ? QString() : tr("A GPU kernel; on the CPU the sequential algorithm is already one loop."));
        }
    m_backend->setToolTip(gpu ? tr("The sweeps run on the GPU; the pictures and the training run on the CPU.")
                              : m_backend->currentData(Qt::ToolTipRole).toString());
}

void FasthPanel::setStatus(const QString& text)
{
    m_status->setText(text);
}

void FasthPanel::fail(const QString& message)
{
    m_lastError = message;
    setStatus(message);
}

// ---- Exports ----

QCustomPlot* FasthPanel::plotFor(FasthPlot plot) const
{
    switch (plot) {
    case FasthPlot::Timing: return m_timingPlot;
    case FasthPlot::SpeedUp: return m_speedUpPlot;
    case FasthPlot::BlockSize: return m_blockPlot;
    case FasthPlot::SingularValues: return m_sigmaPlot;
    case FasthPlot::Loss: return m_lossPlot;
    case FasthPlot::TrainedSingularValues: return m_trainedSigmaPlot;
    case FasthPlot::Pictures: return nullptr;
    }
    return nullptr;
}

bool FasthPanel::exportCsv(const QString& path)
{
    if (m_rows.empty()) {
        fail(tr("There are no sweep results to save yet."));
        return false;
    }
    QString error;
    if (!writeFasthCsv(path, m_rows, &error)) {
        fail(tr("Could not save the CSV: %1").arg(error));
        return false;
    }
    setStatus(tr("Saved %1 rows to %2").arg(m_rows.size()).arg(QDir::toNativeSeparators(path)));
    return true;
}

bool FasthPanel::exportPng(const QString& path, FasthPlot plot)
{
    // Written beside the target and renamed, so that a failed write never leaves half a file.
    const QString partial = path + QStringLiteral(".part");
    bool written = false;
    if (plot == FasthPlot::Pictures) {
        written = m_picturesPage->grab().save(partial, "PNG");
    } else {
        QCustomPlot* target = plotFor(plot);
        // A fixed size, so that a plot on a hidden tab (never laid out) is drawn as large as a shown one.
        written = target && target->savePng(partial, 900, 600);
    }
    if (!written) {
        QFile::remove(partial);
        fail(tr("Could not write %1").arg(QDir::toNativeSeparators(path)));
        return false;
    }
    QFile::remove(path);
    if (!QFile::rename(partial, path)) {
        QFile::remove(partial);
        fail(tr("Could not write %1").arg(QDir::toNativeSeparators(path)));
        return false;
    }
    return true;
}

void FasthPanel::exportCsvInteractive()
{
    const QString path = QFileDialog::getSaveFileName(this, tr("Save sweep results"), QStringLiteral("fasth-sweep.csv"),
                                                      tr("CSV files (*.csv);;All files (*)"));
    if (!path.isEmpty())
        exportCsv(path);
}

void FasthPanel::exportPngInteractive()
{
    const QString path = QFileDialog::getSaveFileName(this, tr("Save plots as PNG (one file per plot)"),
                                                      QStringLiteral("fasth.png"), tr("PNG images (*.png)"));
    if (path.isEmpty())
        return;
    const QFileInfo info(path);
    QStringList written;
    for (FasthPlot plot : {FasthPlot::Timing, FasthPlot::SpeedUp, FasthPlot::BlockSize, FasthPlot::Pictures,
                           FasthPlot::SingularValues, FasthPlot::Loss, FasthPlot::TrainedSingularValues}) {
        const QString file = info.dir().filePath(
            QStringLiteral("%1-%2.png").arg(info.completeBaseName(), QString::fromLatin1(fasthPlotName(plot))));
        if (!exportPng(file, plot))
            return; // exportPng has said what failed
        written << QFileInfo(file).fileName();
    }
    setStatus(tr("Saved %1 in %2").arg(written.join(QStringLiteral(", ")), QDir::toNativeSeparators(info.path())));
}

} // namespace wfs::ui
