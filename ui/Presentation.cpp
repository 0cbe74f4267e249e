#include "Presentation.h"

#include <qcustomplot.h>

#include <QApplication>
#include <QEvent>
#include <QPointer>

#include <vector>

namespace wfs::ui {

namespace {

bool g_presentation = false;

// The application's font outside presentation mode, kept at the first switch.
QFont& normalFont()
{
    static QFont font = QApplication::font();
    return font;
}

double fontSize(const QFont& font)
{
    return font.pointSizeF() > 0 ? font.pointSizeF() : double(font.pixelSize());
}

QFont withSize(QFont font, double size)
{
    if (font.pointSizeF() > 0)
        font.setPointSizeF(size);
    else
        font.setPixelSize(std::max(1, int(std::lround(size))));
    return font;
}

// A font of a plot's element as its code meant it, relative to the application's font: kept as a ratio, so that an
// element made while the mode is on (from the enlarged font) and one made before it come out alike.
void restyleFont(QObject* owner, const char* key, const QFont& now, const std::function<void(const QFont&)>& set)
{
    const QByteArray ratioKey = QByteArray("wfsFontRatio.") + key, shownKey = QByteArray("wfsFontShown.") + key;
    const QVariant shown = owner->property(shownKey.constData());
    const double app = fontSize(QApplication::font());
    double ratio = owner->property(ratioKey.constData()).toDouble();
    if (!shown.isValid() || shown.value<QFont>() != now || ratio <= 0.0) { // first sight, or the code changed it
        ratio = app > 0 ? fontSize(now) / app : 1.0;
        owner->setProperty(ratioKey.constData(), ratio);
    }
    const QFont wanted = withSize(now, ratio * app);
    owner->setProperty(shownKey.constData(), wanted);
    if (wanted != now)
        set(wanted);
}

// A pen as its code meant it, thicker in the mode (a cosmetic 0-width pen counts as 1 px).
void restylePen(QObject* owner, const char* key, const QPen& now, const std::function<void(const QPen&)>& set)
{
    if (now.style() == Qt::NoPen)
        return;
    const QByteArray baseKey = QByteArray("wfsPenBase.") + key, shownKey = QByteArray("wfsPenShown.") + key;
    const QVariant shown = owner->property(shownKey.constData());
    QPen base = now;
    if (shown.isValid() && shown.value<QPen>() == now)
        base = owner->property(baseKey.constData()).value<QPen>();
    owner->setProperty(baseKey.constData(), base);
    QPen wanted = base;
    if (g_presentation)
        wanted.setWidthF(std::max(1.0, base.widthF()) * kPresentationLineScale);
    owner->setProperty(shownKey.constData(), wanted);
    if (wanted != now)
        set(wanted);
}

void restyleAxis(QCPAxis* axis)
{
    restyleFont(axis, "label", axis->labelFont(), [axis](const QFont& f) { axis->setLabelFont(f); });
    restyleFont(axis, "ticks", axis->tickLabelFont(), [axis](const QFont& f) { axis->setTickLabelFont(f); });
}

void restyle(QCustomPlot* plot)
{
    for (QCPAxisRect* rect : plot->axisRects())
        for (QCPAxis* axis : rect->axes())
            restyleAxis(axis);
    for (QCPLayoutElement* element : plot->plotLayout()->elements(true)) {
        if (auto* text = qobject_cast<QCPTextElement*>(element))
            restyleFont(text, "text", text->font(), [text](const QFont& f) { text->setFont(f); });
        else if (auto* scale = qobject_cast<QCPColorScale*>(element))
            restyleAxis(scale->axis());
        else if (auto* legend = qobject_cast<QCPLegend*>(element))
            restyleFont(legend, "legend", legend->font(), [legend](const QFont& f) { legend->setFont(f); });
    }
    for (int i = 0; i < plot->plottableCount(); ++i) {
        QCPAbstractPlottable* plottable = plot->plottable(i);
        restylePen(plottable, "line", plottable->pen(), [plottable](const QPen& p) { plottable->setPen(p); });
        if (auto* graph = qobject_cast<QCPGraph*>(plottable)) {
            // Markers grow with the text: a scatter style's size, kept like a pen's width.
            QCPScatterStyle style = graph->scatterStyle();
            if (!style.isNone()) {
                const QVariant shown = graph->property("wfsScatterShown");
                double base = style.size();
                if (shown.isValid() && shown.toDouble() == style.size())
                    base = graph->property("wfsScatterBase").toDouble();
                graph->setProperty("wfsScatterBase", base);
                const double wanted = g_presentation ? base * kPresentationTextScale : base;
                graph->setProperty("wfsScatterShown", wanted);
                if (wanted != style.size()) {
                    style.setSize(wanted);
                    graph->setScatterStyle(style);
                }
            }
        }
    }
    for (int i = 0; i < plot->itemCount(); ++i) {
        QCPAbstractItem* item = plot->item(i);
        if (auto* text = qobject_cast<QCPItemText*>(item))
            restyleFont(text, "text", text->font(), [text](const QFont& f) { text->setFont(f); });
        else if (auto* line = qobject_cast<QCPItemStraightLine*>(item))
            restylePen(line, "line", line->pen(), [line](const QPen& p) { line->setPen(p); });
        else if (auto* segment = qobject_cast<QCPItemLine*>(item))
            restylePen(segment, "line", segment->pen(), [segment](const QPen& p) { segment->setPen(p); });
    }
}

// Connects a plot's replot to the restyling, once.
void hook(QCustomPlot* plot)
{
    if (plot->property("wfsPresentationHooked").toBool())
        return;
    plot->setProperty("wfsPresentationHooked", true);
    QObject::connect(plot, &QCustomPlot::beforeReplot, plot, [plot] { restyle(plot); });
}

// Hooks each plot when it is first shown (the plots of the window at a switch are hooked by the switch).
class PlotFinder : public QObject {
public:
    using QObject::QObject;

protected:
    bool eventFilter(QObject* watched, QEvent* event) override
    {
        if (event->type() == QEvent::Show)
            if (auto* plot = qobject_cast<QCustomPlot*>(watched); plot && !plot->property("wfsPresentationHooked").toBool()) {
                hook(plot);
                if (g_presentation)
                    plot->replot(QCustomPlot::rpQueuedReplot);
            }
        return QObject::eventFilter(watched, event);
    }
};

} // namespace

void setPresentationMode(bool on)
{
    const QFont normal = normalFont(); // kept before the first change
    if (on == g_presentation)
        return;
    // Every plot's fonts are measured against the application's font before it changes: a plot first seen after
    // the change would otherwise take its old font for a small one.
    std::vector<QCustomPlot*> plots;
    for (QWidget* top : QApplication::topLevelWidgets())
        for (QCustomPlot* plot : top->findChildren<QCustomPlot*>()) {
            hook(plot);
            restyle(plot);
            plots.push_back(plot);
        }
    g_presentation = on;
    QApplication::setFont(on ? withSize(normal, fontSize(normal) * kPresentationTextScale) : normal);
    for (QCustomPlot* plot : plots)
        plot->replot(QCustomPlot::rpQueuedReplot);
}

bool presentationMode()
{
    return g_presentation;
}

void installPresentationStyle(QObject* owner)
{
    static QPointer<PlotFinder> finder;
    if (finder)
        return;
    finder = new PlotFinder(owner);
    qApp->installEventFilter(finder);
}

} // namespace wfs::ui
