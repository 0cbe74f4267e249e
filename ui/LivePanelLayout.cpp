// The live panel's construction: its buttons, reference and threshold controls, the demo camera's sliders, the
// trend plots and the latest stack's pages, and their connections (LivePanel.cpp holds what it does once built).
#include "LivePanel.h"

#include "PhasePanel.h"
#include "PlanesPanel.h"

#include "optics/Zernike.h"

#include <qcustomplot.h>

#include <QComboBox>
#include <QDoubleSpinBox>
#include <QHBoxLayout>
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

namespace wfs::ui {

namespace {

// The trend's terms: defocus, astigmatism, coma, trefoil and spherical (Noll 4..11); the demo's sliders drive 4..8.
constexpr int kFirstTrendTerm = 4, kLastTrendTerm = 11;
constexpr int kLastSliderTerm = 8;

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

QColor LivePanel::termColour(int noll)
{
    // Colour-blind-safe (Okabe-Ito), one per trend term: Z4..Z7 (solid) and Z8..Z11 (dashed) each take four colours
    // far apart (blue, orange, black, grey; green, vermillion, sky blue, pink), so that the near pairs (blue and sky
    // blue, orange and vermillion) are told apart by their dash.
    static const QColor colours[] = {QColor(0, 114, 178), QColor(230, 159, 0), QColor(0, 0, 0),      QColor(120, 120, 120),
                                     QColor(0, 158, 115), QColor(213, 94, 0),  QColor(86, 180, 233), QColor(204, 121, 167)};
    return colours[(noll - kFirstTrendTerm) % 8];
}

QPen LivePanel::termPen(int noll, bool chosen)
{
    return QPen(termColour(noll), chosen ? 3.5 : 2.0, noll - kFirstTrendTerm >= 4 ? Qt::DashLine : Qt::SolidLine);
}

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
        m_thresholds[noll] = kDefaultThresholdWaves;
    }
    m_thresholdTerm->setToolTip(tr("The term whose alignment target is set: its trend turns red beyond ± the threshold"));
    // The default is the Maréchal criterion, λ/14 RMS (Strehl 0.8), a target of its own: not the value of any demo
    // slider, so that no marker flickers on and off with the noise from stack to stack.
    m_thresholdValue->setObjectName(QStringLiteral("liveThreshold"));
    m_thresholdValue->setRange(0.001, 5.0);
    m_thresholdValue->setDecimals(3);
    m_thresholdValue->setSingleStep(0.005);
    m_thresholdValue->setSuffix(tr(" wave"));
    m_thresholdValue->setValue(kDefaultThresholdWaves);
    m_thresholdValue->setToolTip(tr("± this many waves RMS; the default, 0.071 wave, is the Maréchal criterion λ/14 (Strehl 0.8)"));
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
    m_trend->setObjectName(QStringLiteral("liveTrend"));
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
        g->setPen(termPen(noll, false));
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

} // namespace wfs::ui
