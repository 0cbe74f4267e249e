#include "FasthPanel.h"

#include "FasthExplanation.h"
#include "FasthMatrixView.h"
#include "FasthPlots.h"

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

// The live views refresh at most this often: fast jobs (a training step can take well under a
// millisecond) must never turn into one signal and one replot per step.
constexpr int kPollIntervalMs = 50;

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
    case FasthPlot::Timing:
        return "timing";
    case FasthPlot::SpeedUp:
        return "speedup";
    case FasthPlot::BlockSize:
        return "blocks";
    case FasthPlot::Pictures:
        return "pictures";
    case FasthPlot::SingularValues:
        return "sigma";
    case FasthPlot::Loss:
        return "loss";
    case FasthPlot::TrainedSingularValues:
        return "trained-sigma";
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
    layout->addWidget(buildControls());

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
    connect(m_trainingWatcher, &QFutureWatcherBase::finished, this, [this] { onTrainingDone(m_trainingWatcher->result()); });
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

void FasthPanel::populateBackends()
{
    // Through the factory's status, asked at run time: only a backend that can run is selectable, and
    // the GPU entry's tooltip says why not when it cannot. The device's name is the tooltip, not the item's text:
    // a processor's name can be of any length ("Intel(R) Xeon(R) Processor" left the text cut at 1280 x 800).
    for (const BackendStatus& status : backendStatuses()) {
        const QString label = status.kind == BackendKind::Cpu ? tr("CPU (Eigen)") : tr("GPU (CUDA, cuBLAS)");
        m_backend->addItem(label, int(status.kind));
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
    m_timingPages->setCurrentIndex(1);
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
    m_trainingWatcher->setFuture(QtConcurrent::run([settings, state = m_trainingState] { return runFasthTraining(settings, *state); }));
    m_pollTimer->start();
    m_trainingPages->setCurrentIndex(1);
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
        m_pictureInfo->setText(tr("Pictures are drawn up to d = %1; the sweeps and the training take larger d.").arg(kMaxPictureDimension));
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
    m_reflectorView->setMatrix(pictures.vReflectors, tr("reflectors of V (d × k)"));
    m_reflectorView->setColumnBlocks(pictures.blocks);
    m_uView->setMatrix(pictures.uFactor, tr("U = H₁ ⋯ Hₖ"));
    m_vView->setMatrix(pictures.vFactor, tr("V"));
    m_wView->setMatrix(pictures.w, tr("W = U diag(σ) Vᵀ"));
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
    m_pictureInfo->setText(tr("<p><b>d = %1, k = %2, b = %3: %4 blocks</b> (P1, P2, … over the reflectors).</p>"
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
        setStatus(tr("Timing sweep cancelled after %1 of %2 measurements; the rows measured are kept.").arg(visited).arg(r.total));
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
    std::vector<fasth::SweepRow> rows;
    for (const FasthTimingRow& t : m_rows)
        if (t.sweep == FasthSweepKind::Dimension)
            rows.push_back(t.row);
    return fasth::speedUps(rows, pass);
}

void FasthPanel::rebuildTimingPlots()
{
    const Pass pass = Pass(m_shownPass->currentData().toInt());
    drawTimingPlot(m_timingPlot, m_rows, pass);
    drawSpeedUpPlot(m_speedUpPlot, speedUps(pass));
    drawBlockPlot(m_blockPlot, m_rows, pass);
    m_timingPages->setCurrentIndex(m_rows.empty() && !m_sweepState ? 0 : 1);
    m_saveCsv->setEnabled(!m_rows.empty());
}

void FasthPanel::rebuildTrainingPlots()
{
    drawLossPlot(m_lossPlot, m_lossIterations, m_losses);
    drawTrainedSigmaPlot(m_trainedSigmaPlot, m_liveSigma, m_targetSigma);
    m_trainingPages->setCurrentIndex(m_losses.empty() && !m_trainingState && !m_lastTraining ? 0 : 1);
}

void FasthPanel::showUseCases()
{
    m_useCaseLabel->setText(fasthUseCaseHtml(m_lastTraining));
}

QString FasthPanel::explanationHtml() const
{
    return m_explanation->toHtml();
}

void FasthPanel::updateExplanation()
{
    m_explanation->setHtml(fasthExplanationHtml(m_lastSweep, m_rows, Pass(m_shownPass->currentData().toInt())));
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
    case FasthPlot::Timing:
        return m_timingPlot;
    case FasthPlot::SpeedUp:
        return m_speedUpPlot;
    case FasthPlot::BlockSize:
        return m_blockPlot;
    case FasthPlot::SingularValues:
        return m_sigmaPlot;
    case FasthPlot::Loss:
        return m_lossPlot;
    case FasthPlot::TrainedSingularValues:
        return m_trainedSigmaPlot;
    case FasthPlot::Pictures:
        return nullptr;
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
    const QString path = QFileDialog::getSaveFileName(this, tr("Save plots as PNG (one file per plot)"), QStringLiteral("fasth.png"),
                                                      tr("PNG images (*.png)"));
    if (path.isEmpty())
        return;
    const QFileInfo info(path);
    QStringList written;
    for (FasthPlot plot : {FasthPlot::Timing, FasthPlot::SpeedUp, FasthPlot::BlockSize, FasthPlot::Pictures, FasthPlot::SingularValues,
                           FasthPlot::Loss, FasthPlot::TrainedSingularValues}) {
        const QString file =
            info.dir().filePath(QStringLiteral("%1-%2.png").arg(info.completeBaseName(), QString::fromLatin1(fasthPlotName(plot))));
        if (!exportPng(file, plot))
            return; // exportPng has said what failed
        written << QFileInfo(file).fileName();
    }
    setStatus(tr("Saved %1 in %2").arg(written.join(QStringLiteral(", ")), QDir::toNativeSeparators(info.path())));
}

} // namespace wfs::ui
