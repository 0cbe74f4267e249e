#include "LivePanel.h"

#include "PhasePanel.h"
#include "PlanesPanel.h"

#include "optics/Zernike.h"

#include <qcustomplot.h>

#include <QComboBox>
#include <QDir>
#include <QDoubleSpinBox>
#include <QFileInfo>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QJsonArray>
#include <QLabel>
#include <QResizeEvent>
#include <QPushButton>
#include <QSlider>
#include <QSpinBox>
#include <QSplitter>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTimer>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <functional>
#include <numbers>

namespace wfs::ui {

namespace {

// The trend's terms: defocus, astigmatism, coma, trefoil and spherical (Noll 4..11); the demo's sliders drive 4..8.
constexpr int kFirstTrendTerm = 4, kLastTrendTerm = 11;
constexpr int kLastSliderTerm = 8;
constexpr int kMaxTrendPoints = 5000; // older points leave the plot (the log keeps every row)

QColor termColour(int noll)
{
    // Colour-blind-safe (Okabe-Ito), one per trend term.
    static const QColor colours[] = {QColor(0, 114, 178),  QColor(230, 159, 0), QColor(0, 158, 115),   QColor(204, 121, 167),
                                     QColor(86, 180, 233), QColor(213, 94, 0),  QColor(120, 120, 120), QColor(0, 0, 0)};
    return colours[(noll - kFirstTrendTerm) % 8];
}

QString termLabel(int noll)
{
    return QStringLiteral("Noll %1 %2")
        .arg(noll)
        .arg(QString::fromStdString(zernike::name(zernike::modeFromIndex(noll, ZernikeOrdering::Noll))));
}

// Keeps a legend's columns to what the plot's width holds (at most `columns`), so a narrow plot (the docks open on a
// small screen) wraps its legend into more rows instead of cutting its entries.
class LegendColumns : public QObject {
public:
    LegendColumns(QCustomPlot* plot, int columns)
        : QObject(plot)
        , m_plot(plot)
        , m_columns(columns)
    {
        plot->installEventFilter(this);
    }

protected:
    bool eventFilter(QObject*, QEvent* event) override
    {
        if (event->type() == QEvent::Resize)
            fit();
        return false;
    }

private:
    void fit()
    {
        QCPLegend* legend = m_plot->legend;
        int widest = 1;
        for (int i = 0; i < legend->itemCount(); ++i)
            if (const QCPAbstractLegendItem* item = legend->item(i)) // a wrapped grid has empty cells
                widest = std::max(widest, item->minimumOuterSizeHint().width() + legend->columnSpacing());
        const int room = m_plot->width() - legend->margins().left() - legend->margins().right();
        const int columns = std::clamp(room / widest, 1, m_columns);
        if (columns == legend->wrap())
            return;
        legend->setWrap(columns);
        legend->setFillOrder(QCPLegend::foColumnsFirst, true); // the items already there wrap too
    }

    QCustomPlot* m_plot;
    int m_columns;
};

// A plot whose legend sits in a row of its own above the axes, never over the curves (as ConvergencePlot's), in at
// most `columns` columns (fewer where the plot is too narrow for them).
void legendAbove(QCustomPlot* plot, int columns)
{
    new LegendColumns(plot, columns);
    plot->plotLayout()->insertRow(0);
    auto* holder = new QCPLayoutGrid;
    plot->plotLayout()->addElement(0, 0, holder);
    plot->plotLayout()->setRowStretchFactor(0, 0.001);
    holder->addElement(0, 0, plot->legend);
    plot->legend->setWrap(columns);
    plot->legend->setFillOrder(QCPLegend::foColumnsFirst, true); // the items already there wrap too
    plot->legend->setBorderPen(Qt::NoPen);
    plot->legend->setMargins(QMargins(2, 0, 2, 0));
    plot->legend->setVisible(true);
}

// A label whose text changes with every stack, in a holder of a fixed height without a layout: a QLabel's new text
// asks its parent's layout for a new pass, which climbs to the main window (every word-wrapped label of every
// panel measured again, tens of ms at 1920 x 1080); a holder with no layout takes that request and ends it.
class StatusLine : public QWidget {
public:
    StatusLine(QLabel* label, int lines, QWidget* parent)
        : QWidget(parent)
        , m_label(label)
    {
        m_label->setParent(this);
        m_label->setWordWrap(true);
        m_label->setAlignment(Qt::AlignLeft | Qt::AlignVCenter);
        setFixedHeight(lines * fontMetrics().lineSpacing() + 4);
        setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
    }
    QSize sizeHint() const override { return {fontMetrics().averageCharWidth() * 40, height()}; }
    QSize minimumSizeHint() const override { return {fontMetrics().averageCharWidth() * 20, height()}; }

protected:
    void resizeEvent(QResizeEvent*) override { m_label->setGeometry(rect()); }

private:
    QLabel* m_label;
};

// A list that asks for its entries when it opens (the kept stacks change with every stack; filled per stack, the
// list would cost a pass over its items each time for nothing).
class ListFilledOnOpen : public QComboBox {
public:
    ListFilledOnOpen(std::function<void()> fill, QWidget* parent)
        : QComboBox(parent)
        , m_fill(std::move(fill))
    {
    }
    void showPopup() override
    {
        m_fill();
        QComboBox::showPopup();
    }

private:
    std::function<void()> m_fill;
};

} // namespace

LivePanel::LivePanel(QWidget* parent)
    : QWidget(parent)
    , m_status(new QLabel(this))
    , m_watchButton(new QPushButton(tr("Watch folder…"), this))
    , m_demoButton(new QPushButton(tr("Live demo"), this))
    , m_stopButton(new QPushButton(tr("Stop"), this))
    , m_holdButton(new QPushButton(tr("Hold reference"), this))
    , m_demoControls(new QWidget(this))
    , m_photons(new QSlider(Qt::Horizontal, m_demoControls))
    , m_photonsValue(new QLabel(m_demoControls))
    , m_rate(new QSpinBox(m_demoControls))
    , m_referenceChoice(new ListFilledOnOpen([this] { fillReferenceChoice(); }, this))
    , m_thresholdTerm(new QComboBox(this))
    , m_thresholdValue(new QDoubleSpinBox(this))
    , m_trend(new QCustomPlot(this))
    , m_quality(new QCustomPlot(this))
    , m_latest(new QTabWidget(this))
    , m_phase(new PhasePanel(this))
    , m_planes(new PlanesPanel(this))
    , m_refresh(new QTimer(this))
{
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    buildControls(layout);
    buildDemoRow(layout);
    buildPlots(layout);
    connectControls();
    // Display rate: the latest fit is pulled, never pushed per stack; trends and pictures take turns (refresh()).
    m_refresh->setInterval(100);
    connect(m_refresh, &QTimer::timeout, this, &LivePanel::refresh);
    cameraSettingsChanged();
    showTrendPoints();
    setStatus();
}

// The row of buttons, the reference to hold and the threshold, and the status below it.
void LivePanel::buildControls(QVBoxLayout* layout)
{
    auto* bar = new QHBoxLayout;
    m_watchButton->setToolTip(tr("Fit every stack a camera writes into a folder, with the settings on the left"));
    m_demoButton->setToolTip(tr("A simulated camera writes noisy stacks into a temporary folder, which is watched like any other"));
    m_stopButton->setEnabled(false);
    bar->addWidget(m_watchButton);
    bar->addWidget(m_demoButton);
    bar->addWidget(m_stopButton);
    m_holdButton->setCheckable(true);
    m_holdButton->setEnabled(false);
    m_holdButton->setToolTip(tr("Take the stack chosen beside (the one shown now, unless another is picked) as the reference: "
                                "the phase map and the coefficient trend then show each later stack minus it, until released"));
    bar->addWidget(m_holdButton);
    m_referenceChoice->addItem(tr("stack shown"), 0);
    // Its width fixed by a length, not by its entries: a new entry never asks for a new layout pass.
    m_referenceChoice->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    m_referenceChoice->setMinimumContentsLength(11);
    m_referenceChoice->setToolTip(tr("The stack to hold as the reference: the one shown, or any of the last %1 fitted "
                                     "(or click a point of the trend)")
                                      .arg(LiveWatchOptions{}.keptFits));
    bar->addWidget(m_referenceChoice);
    bar->addWidget(new QLabel(tr("Threshold:"), this));
    for (int noll = kFirstTrendTerm; noll <= kLastTrendTerm; ++noll) {
        m_thresholdTerm->addItem(termLabel(noll), noll);
        m_thresholds[noll] = 0.05;
    }
    m_thresholdTerm->setToolTip(tr("The term whose alignment target is set: its trend turns red beyond ± the threshold"));
    m_thresholdValue->setRange(0.001, 5.0);
    m_thresholdValue->setDecimals(3);
    m_thresholdValue->setSingleStep(0.005);
    m_thresholdValue->setSuffix(tr(" wave"));
    m_thresholdValue->setValue(0.05);
    bar->addWidget(m_thresholdTerm);
    bar->addWidget(m_thresholdValue);
    bar->addStretch(1);
    layout->addLayout(bar);
    // The status (source, stacks fitted, latency, skipped) on a row of its own: beside the controls it would be
    // squeezed to nothing, or squeeze them, when the docks leave the tab a narrow window's width.
    layout->addWidget(new StatusLine(m_status, 1, this));
}

// The demo camera's sliders (a few Zernike terms, photons) and its rate, shown while the demo runs.
void LivePanel::buildDemoRow(QVBoxLayout* layout)
{
    // The demo's camera in one row: a slider per term (waves), photons and rate.
    auto* demo = new QHBoxLayout(m_demoControls);
    demo->setContentsMargins(0, 0, 0, 0);
    for (int noll = kFirstTrendTerm; noll <= kLastSliderTerm; ++noll) {
        auto* slider = new QSlider(Qt::Horizontal, m_demoControls);
        slider->setRange(-30, 30); // hundredths of a wave
        slider->setProperty("nollIndex", noll);
        slider->setMinimumWidth(60);
        slider->setToolTip(tr("%1 of the simulated camera's wavefront (waves RMS)").arg(termLabel(noll)));
        auto* name = new QLabel(QStringLiteral("Z%1").arg(noll), m_demoControls);
        name->setToolTip(slider->toolTip());
        auto* value = new QLabel(m_demoControls);
        value->setMinimumWidth(value->fontMetrics().horizontalAdvance(QStringLiteral("-0.00 w ")));
        demo->addWidget(name);
        demo->addWidget(slider, 1);
        demo->addWidget(value);
        m_termSliders.emplace_back(noll, slider);
        m_termValues.push_back(value);
        connect(slider, &QSlider::valueChanged, this, &LivePanel::cameraSettingsChanged);
    }
    const LiveCameraSettings defaults;
    for (const TruthTerm& t : defaults.terms)
        for (auto& [noll, slider] : m_termSliders)
            if (noll == t.index)
                slider->setValue(int(std::lround(t.valueWaves * 100)));
    m_photons->setRange(30, 70); // log10 photons x 10
    m_photons->setValue(60);
    m_photons->setMinimumWidth(60);
    m_photons->setToolTip(tr("Photons per plane of the simulated stacks (10^3 to 10^7): fewer, noisier"));
    demo->addWidget(new QLabel(tr("photons"), m_demoControls));
    demo->addWidget(m_photons, 1);
    m_photonsValue->setMinimumWidth(m_photonsValue->fontMetrics().horizontalAdvance(QStringLiteral("1e+06 ")));
    demo->addWidget(m_photonsValue);
    m_rate->setRange(1, 20);
    m_rate->setValue(5);
    m_rate->setSuffix(tr(" /s"));
    m_rate->setToolTip(tr("Stacks the simulated camera writes per second"));
    m_rate->setAccessibleName(tr("stacks per second"));
    m_rate->setSizePolicy(QSizePolicy::Fixed, QSizePolicy::Fixed); // its whole text; the sliders give way
    demo->addWidget(m_rate);
    connect(m_photons, &QSlider::valueChanged, this, &LivePanel::cameraSettingsChanged);
    connect(m_rate, &QSpinBox::valueChanged, this, &LivePanel::cameraSettingsChanged);
    m_demoControls->setVisible(false);
    layout->addWidget(m_demoControls);
}

// The coefficient trend and the RMS / Strehl plot on the left, the latest stack's pages on the right.
void LivePanel::buildPlots(QVBoxLayout* layout)
{
    // Trends on the left, the latest stack on the right.
    // Solid pens of 1.5 px and more drawn as one polyline make the raster engine fill one self-crossing outline
    // per curve, a cost that grows with the points (80 ms a replot after 30 stacks at 1920 x 1080): segments instead.
    m_trend->setPlottingHint(QCP::phFastPolylines);
    m_quality->setPlottingHint(QCP::phFastPolylines);
    m_trend->xAxis->setLabel(tr("stack"));
    // Stacks are counted: whole-number ticks only (a "stack 2.5" means nothing).
    auto countTicker = [] {
        auto ticker = QSharedPointer<QCPAxisTickerFixed>::create();
        ticker->setTickStep(1.0);
        ticker->setScaleStrategy(QCPAxisTickerFixed::ssMultiples);
        return ticker;
    };
    m_trend->xAxis->setTicker(countTicker());
    m_trend->yAxis->setLabel(tr("coefficient (waves RMS)"));
    for (int noll = kFirstTrendTerm; noll <= kLastTrendTerm; ++noll) {
        QCPGraph* g = m_trend->addGraph();
        g->setName(QStringLiteral("Z%1").arg(noll));
        g->setPen(QPen(termColour(noll), 1.5));
        m_termGraphs[noll] = g;
    }
    m_over = m_trend->addGraph();
    m_over->setName(tr("beyond threshold"));
    m_over->setLineStyle(QCPGraph::lsNone);
    m_over->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, QPen(QColor(200, 0, 0), 1.5), QBrush(QColor(200, 0, 0)), 6));
    legendAbove(m_trend, 5);
    // What the trend shows, above its legend: absolute coefficients, or differences from a held reference.
    m_trend->plotLayout()->insertRow(0);
    m_trendTitle = new QCPTextElement(m_trend, QString(), QFont(font().family(), font().pointSize(), QFont::Bold));
    m_trend->plotLayout()->addElement(0, 0, m_trendTitle);
    m_trend->plotLayout()->setRowStretchFactor(0, 0.001);
    m_trend->setToolTip(tr("Zernike coefficients of each stack (Noll, RMS-normalised); dashed: the chosen term's threshold"));

    m_quality->xAxis->setLabel(tr("stack"));
    m_quality->xAxis->setTicker(countTicker());
    m_quality->yAxis->setLabel(tr("RMS wavefront error (waves)"));
    m_quality->yAxis2->setVisible(true);
    m_quality->yAxis2->setLabel(tr("Strehl ratio"));
    m_quality->yAxis2->setRange(0.0, 1.05);
    m_rms = m_quality->addGraph(m_quality->xAxis, m_quality->yAxis);
    m_rms->setName(tr("RMS (waves)"));
    m_rms->setPen(QPen(QColor(0, 114, 178), 2));
    m_strehl = m_quality->addGraph(m_quality->xAxis, m_quality->yAxis2);
    m_strehl->setName(tr("Strehl"));
    m_strehl->setPen(QPen(QColor(213, 94, 0), 2, Qt::DashLine));
    legendAbove(m_quality, 2);

    auto* plots = new QSplitter(Qt::Vertical, this);
    plots->addWidget(m_trend);
    plots->addWidget(m_quality);
    plots->setSizes({60, 40}); // proportions: the trend with its two-row legend, RMS and Strehl below
    // The latest stack's phase map and its data / model / residual as pages: each gets the whole height, which
    // the 2 x 2 planes need at 1280 x 800 (their views at least 200 x 150 px each).
    m_latest->addTab(m_phase, tr("Phase"));
    m_latest->addTab(m_planes, tr("Data / model"));
    m_latest->setTabToolTip(1, tr("The latest stack's data, model, residual and normalised residual, plane by plane"));
    auto* split = new QSplitter(Qt::Horizontal, this);
    split->addWidget(plots);
    split->addWidget(m_latest);
    // The latest stack's 2 x 2 planes want the width (their colour bars then go beside the images); proportions.
    split->setSizes({44, 56});
    layout->addWidget(split, 1);
    m_phase->clear(tr("No stack yet: watch a folder, or start the live demo"));
    m_trend->setMinimumSize(300, 180);
    m_quality->setMinimumSize(300, 140);
}

void LivePanel::connectControls()
{
    connect(m_watchButton, &QPushButton::clicked, this, &LivePanel::watchFolderRequested);
    connect(m_demoButton, &QPushButton::clicked, this, &LivePanel::demoRequested);
    connect(m_stopButton, &QPushButton::clicked, this, &LivePanel::stop);
    connect(m_holdButton, &QPushButton::clicked, this, [this](bool hold) {
        if (!hold)
            releaseReference();
        else if (!holdReference(m_referenceChoice->currentData().toInt()))
            m_holdButton->setChecked(false);
    });
    connect(m_referenceChoice, &QComboBox::activated, this, [this](int index) {
        const int stack = m_referenceChoice->itemData(index).toInt();
        if (m_referenceStack > 0 && stack != m_referenceStack && !holdReference(stack))
            emit message(
                tr("Live: stack %1 can no longer be held (only the last %2 fitted are kept)").arg(stack).arg(LiveWatchOptions{}.keptFits),
                true);
    });
    // A click on a point of the coefficient trend picks its stack (held at once if a reference is held).
    connect(m_trend, &QCustomPlot::plottableClick, this, [this](QCPAbstractPlottable*, int, QMouseEvent* event) {
        // The stack under the pointer (curves of other terms may pass closer than the point aimed at).
        const int stack = int(std::lround(m_trend->xAxis->pixelToCoord(event->position().x())));
        if (stack < 1 || stack > m_rows + m_failed + m_skipped)
            return;
        chooseReference(stack);
        if (m_referenceStack > 0 && stack != m_referenceStack)
            holdReference(stack);
    });
    connect(m_thresholdTerm, &QComboBox::currentIndexChanged, this, [this] {
        const QSignalBlocker block(m_thresholdValue);
        m_thresholdValue->setValue(m_thresholds[m_thresholdTerm->currentData().toInt()]);
        redrawThresholds();
    });
    connect(m_thresholdValue, &QDoubleSpinBox::valueChanged, this,
            [this](double v) { setThreshold(m_thresholdTerm->currentData().toInt(), v); });
    connect(m_latest, &QTabWidget::currentChanged, this, &LivePanel::drawPage);
}

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
    connect(m_watch.get(), &LiveWatch::rowWritten, this, &LivePanel::addRow);
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
        g->setPen(QPen(termColour(noll), noll == chosen ? 2.5 : 1.2));
    m_over->data()->clear();
    for (const auto& [noll, points] : shownPoints())
        for (const auto& [stack, waves] : points)
            if (std::abs(waves) > m_thresholds[noll])
                m_over->addData(stack, waves);
    replotTrends(); // a person's change: shown at once
}

void LivePanel::addRow(const QJsonObject& row)
{
    m_skipped += int(row.value(QStringLiteral("skipped")).toArray().size());
    if (row.value(QStringLiteral("status")).toString() != QLatin1String("ok")) {
        ++m_failed;
        emit message(tr("Live: %1: %2").arg(row.value(QStringLiteral("stack")).toString(), row.value(QStringLiteral("error")).toString()),
                     true);
        setStatus();
        return;
    }
    const double stack = row.value(QStringLiteral("sequence")).toInt() + 1;
    ++m_rows;
    m_lastLatency = row.value(QStringLiteral("latency_seconds")).toDouble();
    // The log's coefficients are in the settings' ordering: the trend shows Noll terms, so ANSI indices are converted.
    const QJsonObject convention = row.value(QStringLiteral("convention")).toObject();
    const bool ansi = convention.value(QStringLiteral("ordering")).toString() == QLatin1String("ansi");
    for (const QJsonValue& v : row.value(QStringLiteral("coefficients")).toArray()) {
        const QJsonObject c = v.toObject();
        int index = c.value(QStringLiteral("index")).toInt();
        if (ansi)
            index = zernike::convertIndex(index, ZernikeOrdering::Ansi, ZernikeOrdering::Noll);
        addTrendPoint(m_points, index, stack, c.value(QStringLiteral("value_waves")).toDouble());
    }
    m_rms->addData(stack, row.value(QStringLiteral("rms_waves")).toDouble());
    m_strehl->addData(stack, row.value(QStringLiteral("strehl")).toDouble());
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
    const int shown = m_shownFit ? m_shownFit->row.value(QStringLiteral("sequence")).toInt() + 1 : 0;
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
    const FitResult& r = *m_shownFit->result;
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
        const QString stack = m_shownFit->row.value(QStringLiteral("stack")).toString();
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
