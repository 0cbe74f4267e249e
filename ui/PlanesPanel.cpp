#include "PlanesPanel.h"

#include "fit/PsfAnalysis.h"

#include <QCheckBox>
#include <QComboBox>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QResizeEvent>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

namespace wfs::ui {

namespace {
constexpr double kZoomFractions[] = {0.99, 0.999, 0.9, 1.0}; // in the order of the zoom box's entries
}

PlanesPanel::PlanesPanel(QWidget* parent)
    : QWidget(parent)
{
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(buildControlBar());
    m_grid = new QGridLayout;
    buildViews();
    layout->addLayout(m_grid, 1);
    for (QComboBox* box : {m_planeChoice, m_stretch, m_clip, m_colorMap})
        connect(box, &QComboBox::currentIndexChanged, this, [this] {
            m_dataShown = -1;
            show();
        });
    connect(m_planeChoice, &QComboBox::currentIndexChanged, this, &PlanesPanel::applyZoom);
    connect(m_zoom, &QComboBox::currentIndexChanged, this, &PlanesPanel::applyZoom);
    connect(m_sharedScale, &QCheckBox::toggled, this, [this] {
        m_dataShown = -1;
        show();
    });
    show();
}

// The plane, view, stretch, clip, colour map and scale controls, in two rows.
QVBoxLayout* PlanesPanel::buildControlBar()
{
    auto* bar = new QVBoxLayout;
    m_planeChoice = new QComboBox(this);
    m_planeChoice->setObjectName(QStringLiteral("planeChoice"));
    // As wide as the longest plane name (setPlanes), so the names show whole.
    m_planeChoice->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    m_stretch = new QComboBox(this);
    m_stretch->addItems(stretchNames());
    m_stretch->setCurrentIndex(int(Stretch::Asinh));
    m_clip = new QComboBox(this);
    m_clip->addItems({QStringLiteral("100 %"), QStringLiteral("99.9 %"), QStringLiteral("99.5 %"), QStringLiteral("99 %")});
    m_colorMap = new QComboBox(this);
    m_colorMap->addItems(colorMapNames());
    m_colorMap->setCurrentIndex(int(ColorMap::Magma));
    m_zoom = new QComboBox(this);
    m_zoom->setObjectName(QStringLiteral("zoomChoice"));
    m_zoom->addItems({tr("core (99 % of flux)"), tr("core (99.9 %)"), tr("core (90 %)"), tr("whole image")});
    m_zoom->setToolTip(tr("The box the views open on: the smallest square around the PSF holding this share of its flux"));
    m_sharedScale = new QCheckBox(tr("one scale"), this);
    m_sharedScale->setChecked(true);
    // A combo box never cuts its text: as wide as its longest entry, never squeezed below that.
    for (QComboBox* box : {m_planeChoice, m_stretch, m_clip, m_colorMap, m_zoom}) {
        box->setSizeAdjustPolicy(QComboBox::AdjustToContents);
        box->setSizePolicy(QSizePolicy::Minimum, QSizePolicy::Fixed);
    }
    m_sharedScale->setToolTip(tr("Data and model on one colour scale (the data's), so that their colours compare"));
    // Two rows of controls, each as wide as its own content (no columns shared between the rows), so
    // the bar fits a 1280 px window beside the docks with every combo box's text whole.
    auto* first = new QHBoxLayout;
    first->addWidget(new QLabel(tr("plane:"), this));
    first->addWidget(m_planeChoice);
    first->addSpacing(8);
    first->addWidget(new QLabel(tr("view:"), this));
    first->addWidget(m_zoom);
    first->addStretch();
    auto* second = new QHBoxLayout;
    second->addWidget(new QLabel(tr("stretch:"), this));
    second->addWidget(m_stretch);
    second->addSpacing(8);
    second->addWidget(new QLabel(tr("clip:"), this));
    second->addWidget(m_clip);
    second->addSpacing(8);
    second->addWidget(new QLabel(tr("map:"), this));
    second->addWidget(m_colorMap);
    second->addSpacing(8);
    second->addWidget(m_sharedScale);
    second->addStretch();
    bar->addLayout(first);
    bar->addLayout(second);
    return bar;
}

// The four image views: data, model, residual and normalised residual (the residuals on a diverging map).
void PlanesPanel::buildViews()
{
    m_data = new ImageView(this);
    m_model = new ImageView(this);
    m_residual = new ImageView(this);
    m_normalized = new ImageView(this);
    m_data->setObjectName(QStringLiteral("dataView"));
    m_model->setObjectName(QStringLiteral("modelView"));
    m_residual->setObjectName(QStringLiteral("residualView"));
    m_normalized->setObjectName(QStringLiteral("normalizedResidualView"));
    m_normalized->setToolTip(tr("σ from the objective's noise model: √(model + read noise²) for Poisson and weighted "
                                "least squares, the residuals' RMS for least squares"));
    for (ImageView* view : {m_residual, m_normalized}) {
        view->setColorMap(ColorMap::Diverging);
        view->setStretch(Stretch::Linear);
    }
    // Every view has its own colour bar, so that data and model (same size, same fit region, same
    // bar) show at one scale, screen pixel for screen pixel; with one scale the two bars read the same.
    m_data->setTitle(tr("Data"));
    m_model->setTitle(tr("Model"));
    m_residual->setTitle(tr("Data − model"));
    m_normalized->setTitle(tr("(data − model) / σ"));
    linkZoom({m_data, m_model, m_residual, m_normalized}); // the same pixels side by side, however zoomed
}

void PlanesPanel::resizeEvent(QResizeEvent* event)
{
    QWidget::resizeEvent(event);
    // Four in a row where the space is wide, two by two otherwise: the images stay as large as they can.
    const int columns = width() >= 2.4 * height() ? 4 : 2;
    if (columns == m_columns)
        return;
    m_columns = columns;
    ImageView* const views[] = {m_data, m_model, m_residual, m_normalized};
    for (int i = 0; i < 4; ++i) {
        m_grid->removeWidget(views[i]);
        m_grid->addWidget(views[i], i / columns, i % columns);
    }
    for (int c = 0; c < 4; ++c)
        m_grid->setColumnStretch(c, c < columns ? 1 : 0);
    for (int r = 0; r < 4; ++r)
        m_grid->setRowStretch(r, r < 4 / columns ? 1 : 0);
}

int PlanesPanel::currentPlane() const
{
    return m_planeChoice->currentIndex();
}

void PlanesPanel::setPlanes(const std::vector<PlaneEntry>& planes)
{
    const int previous = m_planeChoice->currentIndex();
    m_planes = planes;
    m_dataShown = -1;
    m_models.clear();
    m_residuals.clear();
    bool sameNames = m_planeChoice->count() == int(planes.size());
    for (size_t k = 0; sameNames && k < planes.size(); ++k)
        sameNames = m_planeChoice->itemText(int(k)) == planes[k].name;
    if (sameNames) {
        // The same planes again (live mode, a stack a few times a second): only the tooltips change. The model's
        // signals are held back, as a changed item makes a combo box that adjusts to its contents ask for a new
        // layout pass of the whole window; a tooltip is read from the model when it shows.
        const QSignalBlocker block(m_planeChoice->model());
        for (size_t k = 0; k < planes.size(); ++k)
            m_planeChoice->setItemData(int(k), planes[k].fullName, Qt::ToolTipRole);
    } else {
        const QSignalBlocker block(m_planeChoice);
        m_planeChoice->clear();
        for (size_t k = 0; k < planes.size(); ++k) {
            m_planeChoice->addItem(planes[k].name);
            m_planeChoice->setItemData(int(k), planes[k].fullName, Qt::ToolTipRole);
        }
        if (previous >= 0 && previous < int(planes.size()))
            m_planeChoice->setCurrentIndex(previous);
    }
    m_planeChoice->setToolTip(m_planeChoice->currentIndex() >= 0 ? planes[size_t(m_planeChoice->currentIndex())].fullName : QString());
    show();
    applyZoom();
}

void PlanesPanel::setModels(std::vector<Image> models, std::vector<PlaneResiduals> residuals)
{
    m_models = std::move(models);
    m_residuals = std::move(residuals);
    show();
}

void PlanesPanel::clearModels()
{
    m_models.clear();
    m_residuals.clear();
    show();
}

void PlanesPanel::setPixelPitch(double metres)
{
    const double pitch = metres > 0 && std::isfinite(metres) ? metres : 0.0;
    if (pitch == m_pixelPitch)
        return;
    m_pixelPitch = pitch;
    m_dataShown = -1; // the data drawn again on the new axes
    show();
}

void PlanesPanel::applyZoom()
{
    const int k = m_planeChoice->currentIndex();
    if (k >= 0 && k < int(m_planes.size()))
        m_planeChoice->setToolTip(m_planes[size_t(k)].fullName);
    QRectF region;
    const double fraction = kZoomFractions[std::clamp(m_zoom->currentIndex(), 0, 3)];
    if (k >= 0 && k < int(m_planes.size()) && fraction < 1.0) {
        const PixelBox box = fluxBox(m_planes[size_t(k)].data, fraction);
        if (!box.isEmpty())
            region = QRectF(box.col - 0.5, box.row - 0.5, box.width, box.height);
    }
    for (ImageView* view : {m_data, m_model, m_residual, m_normalized})
        view->setFitRegion(region);
}

void PlanesPanel::show()
{
    const int k = m_planeChoice->currentIndex();
    static const double clips[] = {100.0, 99.9, 99.5, 99.0};
    const double clip = clips[std::clamp(m_clip->currentIndex(), 0, 3)];
    const auto stretch = Stretch(m_stretch->currentIndex());
    const auto map = ColorMap(m_colorMap->currentIndex());
    for (ImageView* view : {m_data, m_model}) {
        view->setStretch(stretch);
        view->setColorMap(map);
        view->setClipPercentiles(100.0 - clip, clip);
    }
    if (k < 0 || k >= int(m_planes.size())) {
        m_dataShown = -1;
        m_data->clear(tr("Open files or try the demo to see the data here"));
        m_model->clear(tr("The model appears once a fit runs"));
        m_residual->clear(tr("Data less model, once a fit runs"));
        m_normalized->clear(tr("The residual in units of the noise, once a fit runs"));
        return;
    }
    const Image& data = m_planes[size_t(k)].data;
    const bool shared = m_sharedScale->isChecked();
    // Physical axes where the pitch is known: 0 at the window's centre pixel (size / 2), the model grid's centre.
    std::optional<AxisScale> axes;
    if (m_pixelPitch > 0) {
        const double step = m_pixelPitch * 1e6;
        axes = AxisScale{-(data.width / 2) * step, -(data.height / 2) * step, step, tr("x (µm)"), tr("y (µm)"), tr("µm")};
    }
    for (ImageView* view : {m_data, m_model, m_residual, m_normalized})
        view->setAxisScale(axes);
    // The data stay as they are while live models arrive: drawn again only for another plane or look.
    if (k != m_dataShown) {
        m_data->setImage(data, tr("Data"), tr("counts"), std::nullopt);
        m_dataShown = k;
    }
    const bool haveModel = k < int(m_models.size()) && m_models[size_t(k)].width == data.width && m_models[size_t(k)].height == data.height;
    if (!haveModel) {
        m_model->clear(tr("No model yet: start a fit"));
        m_residual->clear(tr("No residual yet: start a fit"));
        m_normalized->clear(tr("No residual yet: start a fit"));
        return;
    }
    // The data's own range (its percentiles, not the fixed one it may show) serves both.
    const DisplayRange dataRange = m_data->autoRange();
    m_model->setImage(m_models[size_t(k)], tr("Model"), tr("counts"), shared ? std::optional<DisplayRange>(dataRange) : std::nullopt);
    m_data->setFixedRange(shared ? std::optional<DisplayRange>(dataRange) : std::nullopt);
    if (k >= int(m_residuals.size())) {
        m_residual->clear(tr("No residual yet: start a fit"));
        m_normalized->clear(tr("No residual yet: start a fit"));
        return;
    }
    auto symmetric = [](ImageView* view, const Image& image, const QString& title, const QString& unit) {
        double largest = 0.0;
        for (double v : image.pixels)
            if (std::isfinite(v))
                largest = std::max(largest, std::abs(v));
        const double extent = std::max(largest, 1e-12);
        view->setImage(image, title, unit, DisplayRange{-extent, extent}); // symmetric about 0
    };
    symmetric(m_residual, m_residuals[size_t(k)].residual, tr("Data − model"), tr("counts"));
    symmetric(m_normalized, m_residuals[size_t(k)].normalized, tr("(data − model) / σ"), tr("σ"));
}

} // namespace wfs::ui
