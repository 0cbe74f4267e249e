#pragma once
// An image with a colour bar: zoom (wheel), pan (drag), stretches, percentile clipping, a shared
// display range, and a cursor readout of x, y and value. Rows are drawn bottom-up (row 0 at the
// bottom), as the program holds every image.
#include "ColorMaps.h"

#include "io/Image.h"

#include <QImage>
#include <QWidget>

#include <optional>

class QCustomPlot;
class QCPColorMap;
class QCPColorScale;

namespace wfs::ui {

enum class Stretch { Linear, Sqrt, Log, Asinh };
QStringList stretchNames(); // in enum order

// A small grey picture of an image (asinh stretch between its minimum and maximum), for lists.
QImage thumbnail(const Image& image, int size);

struct DisplayRange {
    double low = 0.0;
    double high = 1.0;
};

class ImageView : public QWidget {
    Q_OBJECT

public:
    explicit ImageView(QWidget* parent = nullptr);

    // Shows an image; keeps the zoom when the size is unchanged (live updates).
    void setImage(const Image& image, const QString& title, const QString& unit);
    // The same with a new fixed display range (std::nullopt = automatic), drawn once.
    void setImage(const Image& image, const QString& title, const QString& unit, std::optional<DisplayRange> range);
    void clear(const QString& message);
    const Image& image() const { return m_image; }
    bool hasImage() const { return !m_image.isEmpty(); }

    void setColorMap(ColorMap map);
    void setStretch(Stretch stretch);
    void setClipPercentiles(double low, double high); // e.g. 0.5, 99.5; 0, 100 = full range
    void setFixedRange(std::optional<DisplayRange> range); // shared scale across views
    DisplayRange autoRange() const;                         // from the clip percentiles
    DisplayRange displayRange() const;                      // what is shown now
    void resetZoom(); // the whole image, square pixels, centred

signals:
    void cursorMoved(const QString& readout); // "x 12, y 40: 153.2 photons"; empty when outside

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    void redraw();
    double transform(double value, const DisplayRange& range) const; // to [0, 1]

    QCustomPlot* m_plot;
    QCPColorMap* m_map;
    QCPColorScale* m_scale;
    Image m_image;
    QString m_title, m_unit;
    ColorMap m_colorMap = ColorMap::Viridis;
    Stretch m_stretch = Stretch::Linear;
    double m_clipLow = 0.0, m_clipHigh = 100.0;
    std::optional<DisplayRange> m_fixedRange;
    DisplayRange m_autoRange;
};

} // namespace wfs::ui
