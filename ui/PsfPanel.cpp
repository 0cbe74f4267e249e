#include "PsfPanel.h"

#include "ImageView.h"

#include <qcustomplot.h>

#include <QComboBox>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QStackedWidget>
#include <QTabWidget>
#include <QVBoxLayout>

#include <cmath>

namespace wfs::ui {

namespace {
const QColor kFitted(33, 113, 181), kIdeal(120, 120, 120), kData(217, 95, 2);

QCustomPlot* makePlot(QWidget* parent, const QString& x, const QString& y, bool logY)
{
    auto* plot = new QCustomPlot(parent);
    plot->xAxis->setLabel(x);
    plot->yAxis->setLabel(y);
    if (logY) {
        plot->yAxis->setScaleType(QCPAxis::stLogarithmic);
        plot->yAxis->setTicker(QSharedPointer<QCPAxisTickerLog>(new QCPAxisTickerLog));
        plot->yAxis->setNumberFormat(QStringLiteral("eb"));
        plot->yAxis->setNumberPrecision(0);
    }
    // The legend in a row above the axes, never over a curve.
    plot->plotLayout()->insertRow(0);
    plot->plotLayout()->addElement(0, 0, plot->legend);
    plot->plotLayout()->setRowStretchFactor(0, 0.001);
    plot->legend->setFillOrder(QCPLegend::foColumnsFirst);
    plot->legend->setBorderPen(Qt::NoPen);
    plot->legend->setVisible(true);
    plot->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
    for (QCPAxis* axis : {plot->xAxis, plot->yAxis}) {
        axis->setLabelPadding(2); // tighter than the defaults: the curves keep the width
        axis->setTickLabelPadding(3);
    }
    plot->setMinimumSize(220, 190);
    return plot;
}

QCPGraph* addCurve(QCustomPlot* plot, const QString& name, const QColor& color, Qt::PenStyle style = Qt::SolidLine)
{
    QCPGraph* graph = plot->addGraph();
    graph->setName(name);
    graph->setPen(QPen(color, 2, style));
    return graph;
}

} // namespace

PsfPanel::PsfPanel(QWidget* parent)
    : QWidget(parent)
    , m_pages(new QStackedWidget(this))
    , m_summary(new QLabel(this))
    , m_empty(new QLabel(this))
    , m_plane(new QComboBox(this))
{
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addWidget(m_pages);
    buildEmptyPage();

    auto* page = new QWidget(m_pages);
    auto* pageLayout = new QVBoxLayout(page);
    pageLayout->setContentsMargins(0, 0, 0, 0);
    m_summary->setObjectName(QStringLiteral("psfSummary"));
    m_summary->setWordWrap(true);
    m_summary->setTextInteractionFlags(Qt::TextSelectableByMouse);
    pageLayout->addWidget(m_summary);
    auto* tabs = new QTabWidget(page);
    tabs->setDocumentMode(true); // no frame: the room goes to the plots
    pageLayout->addWidget(tabs, 1);
    tabs->addTab(buildPicturesTab(tabs), tr("PSFs and MTF maps"));
    tabs->addTab(buildCurvesTab(tabs), tr("Profiles, encircled energy, MTF"));
    m_pages->addWidget(page);
    connect(m_plane, &QComboBox::currentIndexChanged, this, &PsfPanel::showProfiles);
    setAnalysis(nullptr);
}

// The page shown until there is an analysis: what the panel needs and what it will show.
void PsfPanel::buildEmptyPage()
{
    m_empty->setText(tr("<p style='font-size:large'>No PSF analysis yet.</p><p>The analysis needs a fitted wavefront: load data "
                        "(or the demo) and start a fit. It then shows the PSF of the fitted wavefront beside the "
                        "diffraction-limited PSF of the same pupil, radial profiles of data and model, encircled energy, "
                        "the MTF, Strehl and FWHM.</p>"));
    m_empty->setObjectName(QStringLiteral("psfEmpty"));
    m_empty->setWordWrap(true);
    m_empty->setAlignment(Qt::AlignCenter);
    m_empty->setMargin(24);
    m_pages->addWidget(m_empty);
}

// The PSFs (log stretch) and the 2-D MTFs, diffraction-limited on the left, fitted on the right.
QWidget* PsfPanel::buildPicturesTab(QWidget* parent)
{
    auto* images = new QWidget(parent);
    auto* grid = new QGridLayout(images);
    grid->setContentsMargins(2, 2, 2, 2); // the pictures take the height (1280 x 800 included)
    grid->setSpacing(4);
    m_fitted = new ImageView(images);
    m_ideal = new ImageView(images);
    m_mtfFitted = new ImageView(images);
    m_mtfIdeal = new ImageView(images);
    m_ideal->setObjectName(QStringLiteral("diffractionPsfView"));
    m_fitted->setObjectName(QStringLiteral("fittedPsfView"));
    m_mtfIdeal->setObjectName(QStringLiteral("diffractionMtfView"));
    m_mtfFitted->setObjectName(QStringLiteral("fittedMtfView"));
    for (ImageView* view : {m_fitted, m_ideal}) {
        view->setStretch(Stretch::Log);
        view->setColorMap(ColorMap::Magma);
    }
    m_ideal->setToolTip(tr("The same pupil without aberration, log stretch"));
    m_fitted->setToolTip(tr("The PSF of the fitted wavefront, log stretch"));
    for (ImageView* view : {m_mtfFitted, m_mtfIdeal}) {
        view->setStretch(Stretch::Linear);
        view->setColorMap(ColorMap::Viridis);
    }
    // Each view of a pair has its own bar of the same range: both have one geometry, so the pair shows
    // at one scale.
    const QString empty = tr("No PSF analysis yet");
    m_ideal->setTitle(tr("Diffraction-limited PSF"));
    m_fitted->setTitle(tr("Fitted PSF"));
    m_mtfIdeal->setTitle(tr("Diffraction-limited MTF"));
    m_mtfFitted->setTitle(tr("MTF of the fitted system"));
    for (ImageView* view : {m_ideal, m_fitted, m_mtfIdeal, m_mtfFitted})
        view->clear(empty);
    linkZoom({m_ideal, m_fitted});
    linkZoom({m_mtfIdeal, m_mtfFitted});
    grid->addWidget(m_ideal, 0, 0);
    grid->addWidget(m_fitted, 0, 1);
    grid->addWidget(m_mtfIdeal, 1, 0);
    grid->addWidget(m_mtfFitted, 1, 1);
    for (int i = 0; i < 2; ++i) {
        grid->setColumnStretch(i, 1);
        grid->setRowStretch(i, 1);
    }
    return images;
}

// The plane chooser over the radial profiles (data and model of that plane), encircled energy and the
// radial MTF.
QWidget* PsfPanel::buildCurvesTab(QWidget* parent)
{
    auto* curves = new QWidget(parent);
    auto* curvesLayout = new QGridLayout(curves);
    curvesLayout->setContentsMargins(2, 2, 2, 2); // two plots side by side keep their width at 1280 x 800
    curvesLayout->setSpacing(4);
    auto* planeRow = new QHBoxLayout;
    planeRow->addWidget(new QLabel(tr("plane:"), curves));
    planeRow->addWidget(m_plane);
    planeRow->addStretch();
    curvesLayout->addLayout(planeRow, 0, 0, 1, 2);
    m_profiles = makePlot(curves, tr("radius (λ/D)"), tr("azimuthal mean (counts)"), true);
    m_encircled = makePlot(curves, tr("radius (λ/D)"), tr("encircled energy (fraction)"), false);
    m_mtf = makePlot(curves, tr("spatial frequency (fraction of the diffraction cutoff)"), tr("MTF"), false);
    m_profiles->setObjectName(QStringLiteral("profilePlot"));
    m_encircled->setObjectName(QStringLiteral("encircledEnergyPlot"));
    m_mtf->setObjectName(QStringLiteral("mtfPlot"));
    addCurve(m_profiles, tr("data"), kData)->setLineStyle(QCPGraph::lsNone);
    m_profiles->graph(0)->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, 5));
    addCurve(m_profiles, tr("model"), kFitted);
    addCurve(m_encircled, tr("fitted"), kFitted);
    addCurve(m_encircled, tr("diffraction-limited"), kIdeal, Qt::DashLine);
    addCurve(m_mtf, tr("fitted"), kFitted);
    addCurve(m_mtf, tr("diffraction-limited"), kIdeal, Qt::DashLine);
    curvesLayout->addWidget(m_profiles, 1, 0);
    curvesLayout->addWidget(m_encircled, 1, 1);
    curvesLayout->addWidget(m_mtf, 2, 0, 1, 2);
    return curves;
}

QString PsfPanel::summaryText() const
{
    if (m_analysis && !m_drawn)
        const_cast<PsfPanel*>(this)->draw(); // asked before the panel was shown
    return m_analysis ? m_summary->text() : m_empty->text();
}

void PsfPanel::setAnalysis(std::shared_ptr<const PsfAnalysis> analysis)
{
    m_analysis = std::move(analysis);
    m_pages->setCurrentIndex(m_analysis ? 1 : 0);
    m_drawn = !m_analysis;
    if (m_analysis && isVisible())
        draw();
}

void PsfPanel::showEvent(QShowEvent* event)
{
    QWidget::showEvent(event);
    if (!m_drawn)
        draw();
}

void PsfPanel::setPixelPitch(double metres)
{
    const double pitch = metres > 0 && std::isfinite(metres) ? metres : 0.0;
    if (pitch == m_pixelPitch)
        return;
    m_pixelPitch = pitch;
    if (!m_analysis)
        return;
    m_drawn = false; // drawn again now if shown, else when next shown
    if (isVisible())
        draw();
}

PsfPanel::RadiusUnit PsfPanel::radiusUnit() const
{
    if (m_pixelPitch > 0)
        return {m_pixelPitch * 1e6, tr("µm")};
    if (m_analysis && m_analysis->lambdaOverDPerPixel > 0 && std::isfinite(m_analysis->lambdaOverDPerPixel))
        return {m_analysis->lambdaOverDPerPixel, tr("λ/D")};
    return {1.0, tr("pixel")};
}

void PsfPanel::draw()
{
    m_drawn = true;
    const PsfAnalysis& a = *m_analysis;
    // A width in nm where the pitch is known (what a microscopist compares), in pixels and λ/D beside it.
    const auto width = [&](double pixels) {
        const QString own = tr("%1 px, %2 λ/D").arg(pixels, 0, 'f', 2).arg(pixels * a.lambdaOverDPerPixel, 0, 'f', 3);
        return m_pixelPitch > 0 ? tr("%1 nm (%2)").arg(pixels * m_pixelPitch * 1e9, 0, 'f', 0).arg(own) : own;
    };
    m_summary->setText(tr("Strehl ratio <b>%1</b> · FWHM <b>%2</b> fitted, %3 diffraction-limited · "
                          "one pixel = %4 λ/D · MTF cutoff %5 cycles/pixel · PSFs divided by the diffraction-limited peak")
                           .arg(a.strehl, 0, 'f', 3)
                           .arg(width(a.fwhmFittedPixels), width(a.fwhmDiffractionPixels))
                           .arg(a.lambdaOverDPerPixel, 0, 'g', 4)
                           .arg(a.cutoffCyclesPerPixel, 0, 'g', 4));
    if (m_pixelPitch > 0)
        m_summary->setText(m_summary->text() + tr(" · one pixel = %1 µm (the data's pixel pitch)").arg(m_pixelPitch * 1e6, 0, 'g', 4));
    // Physical axes: the PSFs in lambda / D about their centre pixel, the MTF maps in fractions of
    // the cutoff frequency about zero (core's scales; pixels when they are unknown).
    const auto centred = [](const Image& image, double step, const QString& x, const QString& y, const QString& unit) {
        std::optional<AxisScale> scale;
        if (step > 0 && std::isfinite(step))
            scale = AxisScale{-0.5 * (image.width - 1) * step, -0.5 * (image.height - 1) * step, step, x, y, unit};
        return scale;
    };
    const RadiusUnit unit = radiusUnit();
    const double mtfStep = a.frequency.size() > 1 && a.cutoffCyclesPerPixel > 0 ? a.frequency[1] / a.cutoffCyclesPerPixel : 0.0;
    for (ImageView* view : {m_ideal, m_fitted})
        view->setAxisScale(centred(a.diffractionPsf, unit.perPixel, tr("x (%1)").arg(unit.name), tr("y (%1)").arg(unit.name), unit.name));
    for (ImageView* view : {m_mtfIdeal, m_mtfFitted})
        view->setAxisScale(centred(a.mtfDiffraction2d, mtfStep, tr("fx (fraction of the cutoff)"), tr("fy (fraction of the cutoff)"),
                                   tr("of the cutoff")));
    // One display range for both PSFs: the diffraction-limited peak is 1.
    const DisplayRange psfRange{0.0, 1.0};
    const QString psfUnit = tr("PSF / diffraction-limited peak");
    m_ideal->setImage(a.diffractionPsf, tr("Diffraction-limited PSF"), psfUnit, psfRange);
    m_fitted->setImage(a.fittedPsf, tr("Fitted PSF"), psfUnit, psfRange);
    m_mtfIdeal->setImage(a.mtfDiffraction2d, tr("Diffraction-limited MTF"), tr("MTF"), DisplayRange{0.0, 1.0});
    m_mtfFitted->setImage(a.mtfFitted2d, tr("MTF of the fitted system"), tr("MTF"), DisplayRange{0.0, 1.0});
    // Both PSFs open on one box (one scale): the square around the fitted PSF's core holding 99 % of
    // its light, which also holds the diffraction-limited core.
    QRectF core;
    if (const PixelBox box = fluxBox(a.fittedPsf, 0.99); !box.isEmpty())
        core = QRectF(box.col - 0.5, box.row - 0.5, box.width, box.height);
    for (ImageView* view : {m_ideal, m_fitted})
        view->setFitRegion(core);

    QVector<double> r;
    for (double v : a.radius)
        r.append(v * unit.perPixel);
    for (QCustomPlot* plot : {m_profiles, m_encircled})
        plot->xAxis->setLabel(tr("radius (%1)").arg(unit.name));
    m_encircled->graph(0)->setData(r, QVector<double>(a.encircledFitted.begin(), a.encircledFitted.end()), true);
    m_encircled->graph(1)->setData(r, QVector<double>(a.encircledDiffraction.begin(), a.encircledDiffraction.end()), true);
    // Out to where both PSFs hold 98 % of their light, and a little beyond: the rest is a flat line.
    double reach = a.radius.empty() ? 1.0 : a.radius.back();
    for (size_t i = 0; i < a.radius.size(); ++i)
        if (a.encircledDiffraction[i] >= 0.98 && a.encircledFitted[i] >= 0.98) {
            reach = std::max(a.lambdaOverDPerPixel > 0 ? 3.0 / a.lambdaOverDPerPixel : 3.0, 1.3 * a.radius[i]); // at least 3 λ/D
            break;
        }
    m_encircled->xAxis->setRange(0.0, reach * unit.perPixel);
    m_encircled->yAxis->setRange(0.0, 1.02);
    QVector<double> f;
    for (double v : a.frequency)
        f.append(v / a.cutoffCyclesPerPixel);
    m_mtf->graph(0)->setData(f, QVector<double>(a.mtfFitted.begin(), a.mtfFitted.end()), true);
    m_mtf->graph(1)->setData(f, QVector<double>(a.mtfDiffraction.begin(), a.mtfDiffraction.end()), true);
    // The cutoff named by its value, not by a telescope's D/λF (a microscope's is 2 NA/λ): in cycles/µm where the
    // pitch is known.
    m_mtf->xAxis->setLabel(
        m_pixelPitch > 0 && a.cutoffCyclesPerPixel > 0
            ? tr("spatial frequency (fraction of the cutoff, %1 cycles/µm)").arg(a.cutoffCyclesPerPixel / (m_pixelPitch * 1e6), 0, 'g', 3)
            : tr("spatial frequency (fraction of the cutoff, %1 cycles/pixel)").arg(a.cutoffCyclesPerPixel, 0, 'g', 3));
    m_mtf->xAxis->setRange(0.0, 1.0);
    m_mtf->yAxis->setRange(0.0, 1.02);
    m_encircled->replot(QCustomPlot::rpQueuedReplot);
    m_mtf->replot(QCustomPlot::rpQueuedReplot);
    {
        const QSignalBlocker block(m_plane);
        const int previous = m_plane->currentIndex();
        m_plane->clear();
        for (const std::string& name : a.planeNames)
            m_plane->addItem(QString::fromStdString(name));
        m_plane->setCurrentIndex(std::clamp(previous, 0, std::max(0, m_plane->count() - 1)));
    }
    showProfiles();
}

void PsfPanel::showProfiles()
{
    const int k = m_plane->currentIndex();
    if (!m_analysis || k < 0 || k >= int(m_analysis->dataProfiles.size()))
        return;
    const std::vector<double>& data = m_analysis->dataProfiles[size_t(k)];
    const std::vector<double>& model = m_analysis->modelProfiles[size_t(k)];
    // Radii in the panel's unit (profile index i is i pixels).
    const double scale = radiusUnit().perPixel;
    QVector<double> rd, d, rm, m;
    double high = 0.0;
    for (size_t i = 0; i < data.size(); ++i) {
        if (std::isfinite(data[i]) && data[i] > 0) { // a log axis shows only positive means
            rd.append(double(i) * scale);
            d.append(data[i]);
        }
        if (i < model.size() && std::isfinite(model[i]) && model[i] > 0) {
            rm.append(double(i) * scale);
            m.append(model[i]);
            high = std::max(high, model[i]);
        }
    }
    // Out to where the model falls for good below 1e-3 of its peak (past the last ring that bright).
    double reach = 0.0;
    for (size_t i = 0; i < model.size(); ++i)
        if (std::isfinite(model[i]) && model[i] > 1e-3 * high)
            reach = double(i);
    m_profiles->graph(0)->setData(rd, d, true);
    m_profiles->graph(1)->setData(rm, m, true);
    m_profiles->xAxis->setRange(0.0, std::max(8.0, 1.3 * reach) * scale);
    m_profiles->yAxis->setRange(std::max(1e-3, 1e-4 * high), std::max(1.0, 2.0 * high));
    m_profiles->replot(QCustomPlot::rpQueuedReplot);
}

} // namespace wfs::ui
