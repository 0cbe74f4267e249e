#pragma once
// A right-click on any chart or image of the window (every QCustomPlot): copy the picture, or save it as PNG (as it is
// shown: title, axes, ticks and colour bar), SVG or PDF (vector, for papers and slides: QCustomPlot's own drawing, an
// image's cells embedded as a picture). One event filter on the application serves every plot, those made later
// included.
#include <QString>

class QCustomPlot;
class QMenu;
class QObject;
class QWidget;

namespace wfs::ui {

// The picture a plot belongs to: the image view around it (its title above the plot included), or the plot.
QWidget* pictureOf(QCustomPlot* plot);

// Saves the picture of `plot` by the suffix of `path`: .png (the picture as shown, at the screen's resolution), .svg or
// .pdf (vector). False with the reason in `error`.
bool savePicture(QCustomPlot* plot, const QString& path, QString* error);

// The menu a right-click on `plot` shows (owned by `parent`): Copy picture, Save as PNG…, Save as SVG (vector)…, Save
// as PDF (vector)…; on an
// image view also Display range… and Line profile… (ImageToolDialogs.h).
QMenu* pictureMenu(QCustomPlot* plot, QWidget* parent);

// Installs the right-click menu on every plot shown by the application; `owner` owns the filter.
void installPictureMenus(QObject* owner);

} // namespace wfs::ui
