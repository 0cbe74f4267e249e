#pragma once
// The tools an image view's right-click menu opens (issue 42 item 2): "Display range…", a histogram of the image's
// values with the shown range's ends and two boxes to type them, and "Line profile…", a line dragged over the image
// and the values along it. Both are small non-modal windows owned by their view; they follow its live updates. The
// numbers (histogram bins, bilinear samples) come from core (fit/ImageInspection.h); these widgets draw them.
#include "fit/ImageInspection.h"

#include <QDialog>
#include <QLineF>
#include <QPointer>

#include <optional>
#include <vector>

class QCustomPlot;
class QCPAbstractItem;
class QCPBars;
class QCPItemLine;
class QCPItemText;
class QDoubleSpinBox;
class QLabel;
class QPushButton;

namespace wfs::ui {

class ImageView;

// A histogram of the view's finite values (log count axis, x in the image's unit) with the shown range's low and high
// ends as two vertical lines; the boxes apply what is typed at once (the view's user range), "Automatic" gives the view
// back its own range. A low end at or above the high end is refused with a message; the view keeps what it showed.
class DisplayRangeDialog : public QDialog {
    Q_OBJECT

public:
    explicit DisplayRangeDialog(ImageView* view);

    QDoubleSpinBox* lowBox() const { return m_low; }
    QDoubleSpinBox* highBox() const { return m_high; }
    QPushButton* automaticButton() const { return m_automatic; }
    QCustomPlot* histogramPlot() const { return m_plot; }
    QString problem() const; // why the typed range was refused; empty when it was applied
    const Histogram& histogram() const { return m_histogram; }

    static constexpr int kBins = 100;

private:
    void apply();           // the boxes' values to the view, or the message why not
    void updateHistogram(); // after a new image
    void showRange();       // the lines, the boxes and what the range is, from the view

    ImageView* m_view;
    QCustomPlot* m_plot;
    QCPBars* m_bars;
    QCPAbstractItem* m_lowLine;
    QCPAbstractItem* m_highLine;
    QDoubleSpinBox* m_low;
    QDoubleSpinBox* m_high;
    QPushButton* m_automatic;
    QLabel* m_message;
    QLabel* m_source;
    QLabel* m_counts;
    Histogram m_histogram;
};

// Opens (or raises) the view's display range dialog.
DisplayRangeDialog* showDisplayRangeDialog(ImageView* view);

// The values along a line dragged over the view's image, against the distance along it in the axes' unit (the view's
// AxisScale: µm, λ/D, pupil radii; image pixels without one). While drawing, a press, drag and release on the image
// sets the line (Esc cancels) and the view does not pan. The line stays drawn over the image while the window is open;
// the profile follows new images (live mode).
class LineProfileWindow : public QDialog {
    Q_OBJECT

public:
    explicit LineProfileWindow(ImageView* view);
    ~LineProfileWindow() override;

    void beginDrawing(); // the next press-drag-release on the image sets the line
    bool isDrawing() const { return m_drawing; }
    void setLine(const QLineF& pixels); // in image pixel coordinates
    std::optional<QLineF> line() const { return m_line; }
    const LineProfile& profile() const { return m_profile; } // in image pixels, as core sampled it
    std::vector<double> distances() const;                   // in the axes' unit
    QString distanceUnit() const;                            // "µm", "λ/D", … or "pixel"
    QString csv() const;                                     // a header line with the units, then distance,value rows
    QCustomPlot* profilePlot() const { return m_plot; }

signals:
    void profileChanged();

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    void endDrawing();
    void refresh();                                // the profile and its plot, after a new line, image or axis scale
    void placeLine();                              // the line over the image, in the axes' coordinates
    QPointF toPixels(const QPointF& screen) const; // a point on the plot to image pixel coordinates

    ImageView* m_view;
    QPointer<QCustomPlot> m_imagePlot; // the view's plot (gone before this window when the view is destroyed)
    QCustomPlot* m_plot;
    QLabel* m_summary;
    std::optional<QLineF> m_line;
    LineProfile m_profile;
    bool m_drawing = false;
    bool m_pressed = false;
    QLineF m_dragged;
    QPointer<QCPItemLine> m_lineItem;
    QPointer<QCPItemText> m_hint;
};

// Opens (or reuses) the view's line profile window and starts drawing a line on the view.
LineProfileWindow* startLineProfile(ImageView* view);

} // namespace wfs::ui
