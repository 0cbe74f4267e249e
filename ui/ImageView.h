#pragma once
// An image under its title with a colour bar: zoom (wheel), pan (drag), double-click to refit,
// stretches, percentile clipping, a shared display range, and a cursor readout of x, y and value. Rows
// are drawn bottom-up (row 0 at the bottom), as the program holds every image. Pixels stay square at
// every size: the axis ranges are set after each layout pass from the axis rectangle the plot actually
// has. The axes count image pixels unless an AxisScale puts them in physical units. Without an image
// the view shows only its message (what to do), no axes and no colour bar.
#include "ColorMaps.h"

#include "base/Image.h"

#include <QFont>
#include <QImage>
#include <QRectF>
#include <QWidget>

#include <optional>

class QCustomPlot;
class QCPAbstractItem;
class QCPColorMap;
class QCPColorScale;
class QCPMarginGroup;
class QLabel;

namespace wfs::ui {

enum class Stretch { Linear, Sqrt, Log, Asinh };
QStringList stretchNames(); // in enum order

// A small grey picture of an image (asinh stretch between its minimum and maximum), for lists.
// `region` (image pixels, inclusive-exclusive) selects the part shown; empty = the whole image. Each
// thumbnail pixel shows the largest value under it, so a compact PSF is not lost between samples.
QImage thumbnail(const Image& image, int size, const QRect& region = QRect());

struct DisplayRange {
    double low = 0.0;
    double high = 1.0;
};

// A rectangle drawn over an image, in image pixel coordinates (pixel (c, r) covers c - 0.5 .. c + 0.5),
// outlined, optionally shaded, with an optional label at its top edge: e.g. FastH's blocks of reflectors.
struct ImageOverlay {
    QRectF rect;
    QString label;
    bool shaded = false;
};

// Tick values at round numbers (1, 2 or 5 times a power of ten) inside [low, high].
std::vector<double> roundTicks(double low, double high, int count);

// Where a stretch starts: the range's low end, or zero when the range spans it. Background-subtracted data
// have noise below zero; the stretch starts at the background, not at the deepest noise (which washed the
// background out to 40 % grey under log).
double stretchOrigin(const DisplayRange& range);

// Where `value` lies along a colour bar (0 at `range.low`, 1 at `range.high`) under a stretch. Sqrt and log
// map values below the origin to the bottom; asinh is odd about the origin (negative noise a little darker).
double stretchPosition(double value, const DisplayRange& range, Stretch stretch);

// The values a colour bar of `lengthPixels` labels: round numbers (for the log and asinh stretches
// also 1, 2 and 5 times powers of ten above the origin, which the stretch spreads along the bar),
// no two closer along the bar than `labelPixels` (a label's extent along the bar plus a gap).
// Ascending.
std::vector<double> colorBarTicks(const DisplayRange& range, Stretch stretch, double lengthPixels, double labelPixels);

// Physical axes for an image: pixel (column c, row r) has its centre at (x0 + c * step, y0 + r * step),
// e.g. pupil radii for a phase map or lambda / D for a PSF. Square pixels: one step for both axes.
struct AxisScale {
    double x0 = 0.0, y0 = 0.0;
    double step = 1.0;
    QString xLabel, yLabel; // the axis titles, unit included, e.g. "x (pupil radius)"
    QString unit;           // for the cursor readout, e.g. "λ/D"; empty = none
};

class ImageView : public QWidget {
    Q_OBJECT

public:
    explicit ImageView(QWidget* parent = nullptr);

    // Shows an image under `title`; `unit` labels the colour bar (e.g. "counts", "waves"). Keeps the
    // zoom when the size is unchanged (live updates).
    void setImage(const Image& image, const QString& title, const QString& unit);
    // The same with a new fixed display range (std::nullopt = automatic), drawn once.
    void setImage(const Image& image, const QString& title, const QString& unit, std::optional<DisplayRange> range);
    // No image: `message` (what to do, or why there is nothing) centred where the image was, under the
    // title if one is set; no axes, no colour bar.
    void clear(const QString& message);
    void setTitle(const QString& title); // the line above the image; empty hides it
    QString title() const { return m_title; }
    QString message() const; // what an empty view says
    const Image& image() const { return m_image; }
    bool hasImage() const { return !m_image.isEmpty(); }

    void setColorMap(ColorMap map);
    void setStretch(Stretch stretch);
    void setClipPercentiles(double low, double high);      // e.g. 0.5, 99.5; 0, 100 = full range
    void setFixedRange(std::optional<DisplayRange> range); // shared scale across views
    std::optional<DisplayRange> fixedRange() const { return m_fixedRange; }
    // A range the user typed (the "Display range…" dialog; std::nullopt = back to the program's range). It wins over
    // the fixed range and the automatic one while it is set, and survives new images of the same size and unit (live
    // updates); an image of another size or unit drops it, as it was chosen for other data.
    void setUserRange(std::optional<DisplayRange> range);
    std::optional<DisplayRange> userRange() const { return m_userRange; }
    DisplayRange autoRange() const;                         // from the clip percentiles
    DisplayRange displayRange() const;                      // what is shown now: the user's, the fixed or the automatic range
    QString unit() const { return m_unit; }                 // of the values, as the colour bar says
    void setColorBarVisible(bool visible);                  // off where a neighbour's bar serves
    void setAxisLabels(const QString& x, const QString& y); // default "x (pixel)", "y (pixel)"
    // Physical axes (std::nullopt = image pixels with the labels of setAxisLabels). Fit regions and
    // overlays stay in image pixels; ticks, axis titles and the cursor readout follow the scale.
    void setAxisScale(std::optional<AxisScale> scale);
    const std::optional<AxisScale>& axisScale() const { return m_axisScale; }
    // Row 0 at the top, as matrices are written (default: at the bottom, the program's image convention).
    void setRowZeroAtTop(bool top);
    // Replaces the overlays (empty removes them); they stay until replaced or the view is cleared.
    void setOverlays(const std::vector<ImageOverlay>& overlays);
    // The part of the image a refit shows (image pixel coordinates; empty = the whole image), e.g. a
    // PSF's core. Applied at once unless the user has zoomed since the last refit.
    void setFitRegion(const QRectF& region);
    void resetZoom(); // the fit region (or the whole image), square pixels, centred
    // Shows the image around `centre` (image pixel coordinates) at `scale` image pixels per screen pixel, as a
    // user's zoom (kept until a double-click); what a linked view shows after its neighbour was zoomed or panned.
    void showAround(const QPointF& centre, double scale);

    // For tests and screenshots: screen pixels per image pixel along x divided by the same along y
    // (1 = square pixels), screen pixels per image pixel along x (compared images show the same), the
    // plot the image is drawn in, its colour bar (null when hidden) and the bar's rectangle of colour
    // in the plot's coordinates (empty when there is none).
    double pixelAspect() const;
    double screenPixelsPerImagePixel() const;
    QCustomPlot* plot() const { return m_plot; }
    QCPColorScale* colorScale() const;
    QRect colourBarRect() const;

signals:
    void cursorMoved(const QString& readout); // "x 12, y 40: 153.2 photons"; empty when outside
    // The user zoomed or panned (centre in image pixel coordinates, image pixels per screen pixel), or
    // double-clicked to fit the image again: what linked views follow.
    void zoomedByUser(QPointF centre, double scale);
    void zoomResetByUser();
    void imageChanged();        // new pixels, unit or axis scale (or none: cleared)
    void displayRangeChanged(); // after every redraw, which a new range causes

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;

private:
    void redraw();
    void placeColorBar();                            // beside or below the image, after the widget's shape
    void invalidateColorBarImage();                  // the bar's cached picture, after its orientation changed
    void placeMapCells();                            // the image's cells on the axes (after a new image or axis scale)
    QRectF toAxes(const QRectF& pixels) const;       // image pixel coordinates to axis coordinates
    void updateColorTicks();                         // round values along the colour bar, as many as fit
    void applyAspect();                              // after a layout pass: ranges for square pixels in the rectangle the plot has
    bool hugImage(const QRect& axes, double aspect); // pads the plot to the region's shape; true if changed
    double transform(double value, const DisplayRange& range) const; // to [0, 1]

    QCustomPlot* m_plot;
    QCPColorMap* m_map;
    QCPColorScale* m_scale;
    Image m_image;
    QLabel* m_titleLabel;
    QLabel* m_message;
    QString m_title, m_unit;
    std::optional<AxisScale> m_axisScale;
    ColorMap m_colorMap = ColorMap::Viridis;
    Stretch m_stretch = Stretch::Linear;
    double m_clipLow = 0.0, m_clipHigh = 100.0;
    std::optional<DisplayRange> m_fixedRange;
    std::optional<DisplayRange> m_userRange;
    QSize m_userRangeSize; // the image size and unit the user's range was chosen for
    QString m_userRangeUnit;
    mutable DisplayRange m_autoRange; // from the clip percentiles, computed on demand
    mutable bool m_autoRangeValid = false;
    QRectF m_fitRegion;
    QString m_xLabel, m_yLabel;
    bool m_autoFit = true;     // false once the user zooms or pans, until a double-click
    bool m_userMoving = false; // between a press or wheel turn and the ranges it changed
    bool m_colorBarVisible = true;
    bool m_colorBarBelow = false;
    QCPMarginGroup* m_marginGroup = nullptr;
    bool m_gradientSet = false;
    int m_tickedBarLength = 0; // the colour bar's length its ticks were chosen for
    QFont m_tickedFont;        // and the font of their labels
    std::vector<ImageOverlay> m_overlays;
    std::vector<QCPAbstractItem*> m_overlayItems;
};

// Compared images move together: zooming or panning one (or double-clicking it) does the same to the others,
// at one scale and centre in image pixels (they show images of one size).
void linkZoom(const std::vector<ImageView*>& views);

} // namespace wfs::ui
