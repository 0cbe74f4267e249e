#include "PictureMenu.h"

#include "ImageToolDialogs.h"
#include "ImageView.h"

#include <qcustomplot.h>

#include <QApplication>
#include <QBuffer>
#include <QClipboard>
#include <QContextMenuEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QMenu>
#include <QMessageBox>
#include <QSaveFile>
#include <QSvgGenerator>

namespace wfs::ui {

QWidget* pictureOf(QCustomPlot* plot)
{
    if (auto* view = qobject_cast<ImageView*>(plot->parentWidget()))
        return view;
    return plot;
}

namespace {
// What the picture shows: an image view's title, else the plot's name.
QString suggestedTitle(QCustomPlot* plot)
{
    if (auto* view = qobject_cast<ImageView*>(plot->parentWidget()); view && !view->title().isEmpty())
        return view->title();
    return plot->objectName();
}

// The plot as QCustomPlot draws it (axes, ticks, legend, colour bar as vectors; an image's cells as an embedded
// picture), written whole or not at all.
bool saveSvg(QCustomPlot* plot, const QString& path)
{
    QBuffer buffer;
    buffer.open(QIODevice::WriteOnly);
    QSvgGenerator generator;
    generator.setOutputDevice(&buffer);
    generator.setSize(plot->size());
    generator.setViewBox(QRect(QPoint(0, 0), plot->size()));
    generator.setTitle(suggestedTitle(plot));
    QCPPainter painter;
    if (!painter.begin(&generator))
        return false;
    plot->toPainter(&painter, plot->width(), plot->height());
    painter.end();
    QSaveFile file(path);
    return file.open(QIODevice::WriteOnly) && file.write(buffer.data()) == buffer.data().size() && file.commit();
}
} // namespace

bool savePicture(QCustomPlot* plot, const QString& path, QString* error)
{
    const QString suffix = QFileInfo(path).suffix().toLower();
    bool saved = false;
    if (suffix == QLatin1String("png"))
        saved = pictureOf(plot)->grab().save(path, "PNG");
    else if (suffix == QLatin1String("pdf"))
        saved = plot->savePdf(path);
    else if (suffix == QLatin1String("svg"))
        saved = saveSvg(plot, path);
    else if (error)
        *error = QObject::tr("%1: a picture is saved as .png, .svg or .pdf").arg(path);
    if (!saved && error && error->isEmpty())
        *error = QObject::tr("%1 could not be written (check the folder and the free space)").arg(path);
    return saved;
}

namespace {
// A file name from what the picture shows, e.g. "Data − model" -> "data-model".
QString suggestedName(QCustomPlot* plot)
{
    QString title;
    if (auto* view = qobject_cast<ImageView*>(plot->parentWidget()))
        title = view->title();
    if (title.isEmpty())
        title = plot->objectName().isEmpty() ? QStringLiteral("chart") : plot->objectName();
    QString name;
    for (const QChar c : title.toLower())
        name += c.isLetterOrNumber() ? c : QLatin1Char('-');
    while (name.contains(QLatin1String("--")))
        name.replace(QLatin1String("--"), QLatin1String("-"));
    while (name.startsWith(QLatin1Char('-')))
        name.remove(0, 1);
    while (name.endsWith(QLatin1Char('-')))
        name.chop(1);
    return name.isEmpty() ? QStringLiteral("chart") : name;
}

void saveWithDialog(QCustomPlot* plot, const QString& suffix, const QString& filter)
{
    QWidget* window = plot->window();
    const QString path =
        QFileDialog::getSaveFileName(window, QObject::tr("Save picture"), suggestedName(plot) + QLatin1Char('.') + suffix, filter);
    if (path.isEmpty())
        return;
    QString error;
    if (!savePicture(plot, path, &error))
        QMessageBox::warning(window, QObject::tr("Save picture"), error);
}

class PictureMenus : public QObject {
public:
    using QObject::QObject;

    bool eventFilter(QObject* watched, QEvent* event) override
    {
        if (event->type() != QEvent::ContextMenu)
            return false;
        auto* plot = qobject_cast<QCustomPlot*>(watched);
        if (!plot)
            return false;
        QMenu* menu = pictureMenu(plot, plot);
        menu->setAttribute(Qt::WA_DeleteOnClose);
        menu->popup(static_cast<QContextMenuEvent*>(event)->globalPos());
        return true;
    }
};
} // namespace

QMenu* pictureMenu(QCustomPlot* plot, QWidget* parent)
{
    auto* menu = new QMenu(parent);
    menu->setObjectName(QStringLiteral("pictureMenu"));
    QObject::connect(menu->addAction(QObject::tr("Copy picture")), &QAction::triggered, plot,
                     [plot] { QApplication::clipboard()->setPixmap(pictureOf(plot)->grab()); });
    QObject::connect(menu->addAction(QObject::tr("Save as PNG…")), &QAction::triggered, plot,
                     [plot] { saveWithDialog(plot, QStringLiteral("png"), QObject::tr("PNG image (*.png)")); });
    QObject::connect(menu->addAction(QObject::tr("Save as SVG (vector)…")), &QAction::triggered, plot,
                     [plot] { saveWithDialog(plot, QStringLiteral("svg"), QObject::tr("SVG image (*.svg)")); });
    QObject::connect(menu->addAction(QObject::tr("Save as PDF (vector)…")), &QAction::triggered, plot,
                     [plot] { saveWithDialog(plot, QStringLiteral("pdf"), QObject::tr("PDF document (*.pdf)")); });
    // An image's own tools (issue 42): its display range by hand over a histogram, and the values along a line.
    if (auto* view = qobject_cast<ImageView*>(pictureOf(plot))) {
        menu->addSeparator();
        QAction* range = menu->addAction(QObject::tr("Display range…"));
        range->setEnabled(view->hasImage());
        QObject::connect(range, &QAction::triggered, view, [view] { showDisplayRangeDialog(view); });
        QAction* profile = menu->addAction(QObject::tr("Line profile…"));
        profile->setEnabled(view->hasImage());
        QObject::connect(profile, &QAction::triggered, view, [view] { startLineProfile(view); });
    }
    return menu;
}

void installPictureMenus(QObject* owner)
{
    qApp->installEventFilter(new PictureMenus(owner));
}

} // namespace wfs::ui
