#include "LivePanel.h"

#include "PhasePanel.h"
#include "PlanesPanel.h"

#include "optics/Zernike.h"

#include <qcustomplot.h>

#include <QComboBox>
#include <QDir>
#include <QDoubleSpinBox>
#include <QLabel>
#include <QPushButton>
#include <QSlider>
#include <QSpinBox>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTimer>

#include <algorithm>
#include <cmath>
#include <numbers>

namespace wfs::ui {

namespace {

constexpr int kMaxTrendPoints = 5000; // older points leave the plot (the log keeps every row)

} // namespace

LivePanel::~LivePanel()
{
    m_camera.reset();
    m_watch.reset(); // joins its thread (a fit in progress is cancelled)
}

bool LivePanel::isWatching() const
{
    return m_watch && m_watch->isRunning();
}

void LivePanel::watchFolder(const QString& folder, const Session& settings)
{
    LiveWatchOptions o;
    o.folder = folder.toStdString();
    o.settings = settings;
    o.settings.dataset = {};
    o.logPath = QDir(folder).filePath(QStringLiteral("live.jsonl")).toStdString();
    start(std::move(o), nullptr, nullptr);
}

void LivePanel::startDemo(const Session& settings)
{
    auto folder = std::make_unique<QTemporaryDir>();
    if (!folder->isValid()) {
        emit message(tr("Live demo: cannot create a temporary folder"), true);
        return;
    }
    LiveCameraOptions co;
    co.folder = folder->path().toStdString();
    co.grid = 128;
    co.background = true; // the desktop's event loop first (docs/live.md: the event loop while watching)
    LiveWatchOptions o;
    o.folder = co.folder;
    o.settings = settings;
    o.settings.dataset = {};
    o.logPath = folder->filePath(QStringLiteral("live.jsonl")).toStdString();
    std::unique_ptr<LiveCamera> camera;
    try {
        co.settings = m_camera ? m_camera->settings() : LiveCameraSettings{};
        camera = std::make_unique<LiveCamera>(co);
    } catch (const std::exception& e) {
        emit message(tr("Live demo: %1").arg(QString::fromStdString(e.what())), true);
        return;
    }
    start(std::move(o), std::move(camera), std::move(folder));
    cameraSettingsChanged(); // the sliders' values
}

void LivePanel::start(LiveWatchOptions options, std::unique_ptr<LiveCamera> camera, std::unique_ptr<QTemporaryDir> folder)
{
    stop();
    m_camera.reset();
    m_watch.reset();
    m_demoFolder = std::move(folder);
    m_camera = std::move(camera);
    for (auto& [noll, g] : m_termGraphs)
        g->data()->clear();
    m_over->data()->clear();
    m_rms->data()->clear();
    m_strehl->data()->clear();
    m_points.clear();
    m_differencePoints.clear();
    m_shownFit.reset();
    m_shownDifference.reset();
    m_referenceStack = 0;
    m_holdButton->setChecked(false);
    m_holdButton->setEnabled(false);
    m_holdButton->setText(tr("Hold reference"));
    while (m_referenceChoice->count() > 1)
        m_referenceChoice->removeItem(1);
    m_phase->setTitle(QString());
    showTrendPoints();
    m_rows = m_failed = m_skipped = 0;
    m_shownVersion = 0;
    m_stopReason.clear();
    m_folder = QString::fromStdString(options.folder);
    m_demoControls->setVisible(m_camera != nullptr);
    options.background = true; // the event loop first: fits and the camera yield a contended core to it
    m_watch = std::make_unique<LiveWatch>(std::move(options));
    LiveCamera* cameraToStart = m_camera.get();
    connect(m_watch.get(), &LiveWatch::watching, this, [cameraToStart] {
        if (cameraToStart)
            cameraToStart->start(); // once the watch is set up, so that each rename counts at once
    });
    connect(m_watch.get(), &LiveWatch::stackLogged, this, &LivePanel::addRecord);
    connect(m_watch.get(), &LiveWatch::differenceComputed, this, &LivePanel::addDifference);
    connect(m_watch.get(), &LiveWatch::message, this, [this](const QString& text) { emit message(tr("Live: %1").arg(text), false); });
    connect(m_watch.get(), &LiveWatch::finished, this, [this](bool failed, const QString& reason) {
        if (m_camera)
            m_camera->stop();
        m_stopReason = reason;
        if (failed)
            emit message(tr("Live: the watch stopped: %1").arg(reason), true);
        m_stopButton->setEnabled(false);
        // The last fit drawn now and the timer stopped: once stopped, what is shown is final.
        m_refresh->stop();
        if (m_replot)
            replotTrends();
        showLatest();
        setStatus();
        emit stopped();
    });
    m_stopButton->setEnabled(true);
    m_watch->start();
    m_refresh->start();
    setStatus();
}

void LivePanel::stop()
{
    if (m_camera)
        m_camera->stop();
    if (m_watch)
        m_watch->stop();
}

void LivePanel::cameraSettingsChanged()
{
    LiveCameraSettings s;
    s.terms.clear();
    for (size_t i = 0; i < m_termSliders.size(); ++i) {
        const double waves = m_termSliders[i].second->value() / 100.0;
        m_termValues[i]->setText(tr("%1 w").arg(waves, 0, 'f', 2));
        if (waves != 0.0)
            s.terms.push_back({m_termSliders[i].first, waves});
    }
    s.photons = std::pow(10.0, m_photons->value() / 10.0);
    m_photonsValue->setText(QString::number(s.photons, 'g', 2));
    s.rate = m_rate->value();
    if (m_camera)
        m_camera->setSettings(s); // in range by the controls' own ranges
}

void LivePanel::setThreshold(int noll, double waves)
{
    m_thresholds[noll] = waves;
    if (m_thresholdTerm->currentData().toInt() == noll && m_thresholdValue->value() != waves) {
        const QSignalBlocker block(m_thresholdValue);
        m_thresholdValue->setValue(waves);
    }
    redrawThresholds();
}

void LivePanel::redrawThresholds()
{
    // The chosen term's threshold as dashed lines at +-t in its colour; every term's crossings as red points.
    m_trend->clearItems();
    const int chosen = m_thresholdTerm->currentData().toInt();
    for (double sign : {-1.0, 1.0}) {
        auto* line = new QCPItemStraightLine(m_trend);
        line->point1->setCoords(0, sign * m_thresholds[chosen]);
        line->point2->setCoords(1, sign * m_thresholds[chosen]);
        line->setPen(QPen(termColour(chosen), 1.5, Qt::DashLine));
    }
    for (auto& [noll, g] : m_termGraphs)
        g->setPen(termPen(noll, noll == chosen));
    m_over->data()->clear();
    for (const auto& [noll, points] : shownPoints())
        for (const auto& [stack, waves] : points)
            if (std::abs(waves) > m_thresholds[noll])
                m_over->addData(stack, waves);
    replotTrends(); // a person's change: shown at once
}

void LivePanel::addRecord(const LiveRecord& record)
{
    m_skipped += record.skipped;
    if (record.status == LiveStatus::Failed || !record.result) {
        ++m_failed;
        emit message(tr("Live: %1: %2").arg(QString::fromStdString(record.stack), QString::fromStdString(record.error)), true);
        setStatus();
        return;
    }
    // A poor fit is drawn (its verdict is in the stack's summary): the trend shows what was fitted.
    const FitResult& r = *record.result;
    const double stack = record.sequence + 1;
    ++m_rows;
    m_lastLatency = record.latencySeconds;
    // The trend shows Noll terms whatever the settings' ordering: each term by its (n, m).
    for (const CoefficientResult& c : r.coefficients)
        addTrendPoint(m_points, zernike::indexFromMode(c.mode, ZernikeOrdering::Noll), stack, c.waves);
    m_rms->addData(stack, r.rmsWaves);
    m_strehl->addData(stack, r.strehl);
    if (m_rms->dataCount() > kMaxTrendPoints) {
        const double first = m_rms->data()->at(m_rms->dataCount() - kMaxTrendPoints)->key;
        m_rms->data()->removeBefore(first);
        m_strehl->data()->removeBefore(first);
        m_over->data()->removeBefore(first);
    }
    m_replot = true;
    setStatus();
    emit rowAdded(m_rows);
}

void LivePanel::addTrendPoint(TrendPoints& points, int noll, double stack, double waves)
{
    const auto g = m_termGraphs.find(noll);
    if (g == m_termGraphs.end())
        return;
    auto& term = points[noll];
    term.emplace_back(stack, waves);
    if (int(term.size()) > kMaxTrendPoints)
        term.erase(term.begin());
    if (&points != &shownPoints())
        return; // kept for when it is shown again
    g->second->addData(stack, waves);
    g->second->data()->removeBefore(term.front().first);
    if (std::abs(waves) > m_thresholds[noll])
        m_over->addData(stack, waves);
}

void LivePanel::addDifference(const LiveDifference& difference)
{
    if (m_referenceStack == 0 || difference.referenceSequence + 1 != m_referenceStack || !difference.comparison)
        return; // against a reference released since
    // The comparison's terms are matched by (n, m): the trend's Noll indices whatever the settings' ordering.
    for (const ComparedTerm& t : difference.comparison->terms)
        addTrendPoint(m_differencePoints, zernike::indexFromMode(t.mode, ZernikeOrdering::Noll), difference.sequence + 1,
                      t.differenceWaves);
    m_replot = true;
}

void LivePanel::showTrendPoints()
{
    const bool held = m_referenceStack > 0;
    m_trendTitle->setText(held ? tr("Difference from stack %1 (each stack − stack %1)").arg(m_referenceStack)
                               : tr("Coefficients of each stack"));
    m_trend->yAxis->setLabel(held ? tr("difference (waves RMS)") : tr("coefficient (waves RMS)"));
    TrendPoints& points = shownPoints();
    for (auto& [noll, g] : m_termGraphs) {
        g->data()->clear();
        for (const auto& [stack, waves] : points[noll])
            g->addData(stack, waves);
    }
    redrawThresholds(); // the crossings of the values shown; replots
}

bool LivePanel::holdReference(int stack)
{
    if (!m_watch)
        return false;
    const int shown = m_shownFit ? m_shownFit->record.sequence + 1 : 0;
    if (stack <= 0)
        stack = shown;
    if (stack <= 0)
        return false;
    // By its number, so that the watch also compares the stacks it fitted after it (the display lags a little);
    // the stack shown itself is held even when the watch has stopped.
    if (!m_watch->holdReference(stack - 1)) {
        if (stack != shown)
            return false;
        m_watch->holdReference(m_shownFit);
    }
    m_referenceStack = stack;
    chooseReference(stack);
    m_differencePoints.clear();
    m_shownDifference.reset();
    m_holdButton->setChecked(true);
    m_holdButton->setText(tr("Release stack %1").arg(m_referenceStack));
    m_phase->clear(tr("Stack %1 is the reference: each new stack shows as its difference from it").arg(m_referenceStack));
    showTrendPoints();
    setStatus();
    return true;
}

void LivePanel::releaseReference()
{
    if (m_watch)
        m_watch->releaseReference();
    m_referenceStack = 0;
    m_differencePoints.clear();
    m_shownDifference.reset();
    m_holdButton->setChecked(false);
    m_holdButton->setText(tr("Hold reference"));
    m_referenceChoice->setCurrentIndex(0); // the stack shown, unless another is picked again
    m_phase->setTitle(QString());
    showTrendPoints();
    setStatus();
    m_shownVersion = 0; // the latest stack again, absolute
    showLatest();
}

void LivePanel::chooseReference(int stack)
{
    int index = m_referenceChoice->findData(stack);
    if (index < 0) {
        m_referenceChoice->addItem(tr("stack %1").arg(stack), stack);
        index = m_referenceChoice->count() - 1;
    }
    m_referenceChoice->setCurrentIndex(index);
}

void LivePanel::fillReferenceChoice()
{
    const int chosen = m_referenceChoice->currentData().toInt();
    const QSignalBlocker block(m_referenceChoice);
    m_referenceChoice->clear();
    m_referenceChoice->addItem(tr("stack shown"), 0);
    if (m_watch) {
        const std::vector<int> kept = m_watch->keptSequences();
        for (auto it = kept.rbegin(); it != kept.rend(); ++it)
            m_referenceChoice->addItem(tr("stack %1").arg(*it + 1), *it + 1);
    }
    m_referenceChoice->setCurrentIndex(std::max(0, m_referenceChoice->findData(chosen)));
}

QString LivePanel::trendTitle() const
{
    return m_trendTitle->text();
}

void LivePanel::replotTrends()
{
    m_replot = false;
    m_trend->rescaleAxes();
    const QCPRange y = m_trend->yAxis->range();
    const double t = m_thresholds[m_thresholdTerm->currentData().toInt()];
    m_trend->yAxis->setRange(std::min(y.lower, -t) - 0.02, std::max(y.upper, t) + 0.02); // the threshold lines in view
    m_trend->xAxis->setRange(m_trend->xAxis->range().lower - 0.5, m_trend->xAxis->range().upper + 0.5);
    m_rms->rescaleAxes();
    m_quality->yAxis->setRangeLower(0.0);
    m_quality->yAxis->setRangeUpper(std::max(0.05, m_quality->yAxis->range().upper * 1.1));
    m_quality->xAxis->setRange(m_trend->xAxis->range());
    m_trend->replot(QCustomPlot::rpQueuedReplot);
    m_quality->replot(QCustomPlot::rpQueuedReplot);
}

void LivePanel::refresh()
{
    // The trends and the pictures on alternate ticks: each tick's replots and paint are then one batch on the event
    // loop, never the two together (at 1920 x 1080 on a loaded machine the pair held it up past 50 ms).
    const bool trendsTurn = m_trendsTurn;
    m_trendsTurn = !m_trendsTurn;
    if (trendsTurn && m_replot) {
        replotTrends();
        return;
    }
    showLatest();
}

void LivePanel::showLatest()
{
    if (!m_watch)
        return;
    unsigned long version = 0;
    const std::shared_ptr<const LiveFit> fit = m_watch->latest(&version);
    if (!fit || version == m_shownVersion)
        return;
    m_shownVersion = version;
    m_shownFit = fit;
    m_holdButton->setEnabled(true);
    m_phaseStale = m_planesStale = true;
    drawPage(m_latest->currentIndex());
}

void LivePanel::drawPage(int page)
{
    // Only the page in view is drawn; the other catches up with the fit shown when it is turned to.
    if (!m_shownFit || page < 0)
        return;
    const FitResult& r = *m_shownFit->record.result;
    if (page == 0 && m_phaseStale) {
        m_phaseStale = false;
        const LiveDifference& d = m_shownFit->difference;
        if (m_referenceStack == 0) {
            m_phase->setTitle(QString());
            m_phase->setPupilGeometry(r.phaseMapGeometry);
            m_phase->setPhase(r.phaseMap, r.wavelength);
        } else if (d.comparison && d.referenceSequence + 1 == m_referenceStack) {
            // Core's difference map, in waves; the panel takes radians (and shows waves or nm).
            m_shownDifference = d.comparison;
            const RunComparison& c = *d.comparison;
            Image radians = c.phaseDifferenceWaves;
            for (double& v : radians.pixels)
                v *= 2.0 * std::numbers::pi;
            m_phase->setTitle(tr("Phase difference: stack %1 − stack %2").arg(d.sequence + 1).arg(m_referenceStack));
            m_phase->setPupilGeometry(c.phaseDifferenceGeometry);
            m_phase->setPhase(radians, c.wavelength);
        }
    } else if (page == 1 && m_planesStale) {
        m_planesStale = false;
        std::vector<PlaneEntry> planes;
        std::vector<Image> models;
        std::vector<PlaneResiduals> residuals;
        const QString stack = QString::fromStdString(m_shownFit->record.stack);
        for (const PlaneResult& p : r.planes) {
            const QString diversity = QString::fromStdString(p.diversity);
            planes.push_back({diversity, stack + QStringLiteral(": ") + diversity, p.data});
            models.push_back(p.model);
            residuals.push_back({p.residual, p.normalizedResidual});
        }
        m_planes->setPlanes(planes);
        m_planes->setModels(std::move(models), std::move(residuals));
    }
}

void LivePanel::setStatus()
{
    if (!m_watch) {
        m_status->setText(tr("Not watching. Watch a folder a camera writes into, or start the live demo."));
        return;
    }
    QString text = (m_camera ? tr("Live demo (simulated camera)") : tr("Watching %1").arg(QDir::toNativeSeparators(m_folder)))
                   + tr(" · %1 fitted").arg(m_rows);
    if (m_skipped > 0)
        text += tr(" · %1 skipped (newer stacks came first)").arg(m_skipped);
    if (m_failed > 0)
        text += tr(" · %1 failed").arg(m_failed);
    if (m_rows > 0)
        text += tr(" · latency %1 s").arg(m_lastLatency, 0, 'f', 2);
    if (m_referenceStack > 0)
        text += tr(" · differences from stack %1").arg(m_referenceStack);
    if (!m_stopReason.isEmpty())
        text += tr(" · stopped: %1").arg(m_stopReason);
    m_status->setText(text);
    m_status->setToolTip(text); // whole, where one line cuts it (a long folder path)
}

} // namespace wfs::ui
