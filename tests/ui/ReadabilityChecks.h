#pragma once
// What a machine can check of a readable screen, on any widget tree: colour bars whose colours run along
// their length (sampled from the drawn pixels), tick and category labels that do not run into each other
// (from the axes' ticks, texts, font and rotation), and combo boxes that show their whole text. Each check
// returns the problems it found, one line each, empty when there are none.
#include <qcustomplot.h>

#include <QComboBox>
#include <QCoreApplication>
#include <QImage>
#include <QStyle>
#include <QStyleOptionComboBox>
#include <QStyleOptionSpinBox>
#include <QAbstractSpinBox>
#include <QStringList>
#include <QWidget>

#include <algorithm>
#include <cmath>

namespace wfs::test {

// Lets queued layouts and replots run (ImageView sets its ranges after each layout pass and asks for one
// more), drawing every visible plot at each pass, as a screen would.
inline void settle(QWidget* top, int passes = 8)
{
    for (int i = 0; i < passes; ++i) {
        QCoreApplication::processEvents();
        for (QCustomPlot* plot : top->findChildren<QCustomPlot*>())
            if (plot->isVisible())
                plot->replot(QCustomPlot::rpImmediateRefresh);
    }
    QCoreApplication::processEvents();
}

inline bool isShownOnScreen(const QWidget* widget)
{
    return widget->isVisible() && widget->width() > 0 && widget->height() > 0 && !widget->visibleRegion().isEmpty();
}

// A name for messages: the widget's class and object name, and its parent's.
inline QString describe(const QWidget* widget)
{
    QString text = QString::fromLatin1(widget->metaObject()->className());
    if (!widget->objectName().isEmpty())
        text += QLatin1Char(' ') + widget->objectName();
    if (const QWidget* parent = widget->parentWidget())
        text += QStringLiteral(" in ") + QString::fromLatin1(parent->metaObject()->className()) + QLatin1Char(' ') + parent->objectName();
    return text;
}

inline int colourDistance(QRgb a, QRgb b)
{
    return std::abs(qRed(a) - qRed(b)) + std::abs(qGreen(a) - qGreen(b)) + std::abs(qBlue(a) - qBlue(b));
}

// Every colour bar shown in `plot`: along its long side the colours change (by more than `minAlong`, the
// sum of |dR| + |dG| + |dB| between the most different samples), across its thickness they stay the same
// (at most `maxAcross` anywhere). A bar whose gradient image was made for the other orientation fails both.
inline QStringList colourBarProblems(QCustomPlot* plot, int minAlong = 120, int maxAcross = 30)
{
    QStringList problems;
    const QImage picture = plot->grab().toImage();
    for (QCPColorScale* scale : plot->findChildren<QCPColorScale*>()) {
        if (!scale->visible() || !scale->layout() || !scale->axis() || !scale->axis()->axisRect())
            continue;
        const QRect bar = scale->axis()->axisRect()->rect().adjusted(2, 2, -2, -2);
        if (bar.width() < 4 || bar.height() < 4)
            continue;
        const bool horizontal = bar.width() >= bar.height();
        auto at = [&](double along, double across) { // fractions of the bar's length and thickness
            const int x = horizontal ? bar.left() + int(along * (bar.width() - 1)) : bar.left() + int(across * (bar.width() - 1));
            const int y = horizontal ? bar.top() + int(across * (bar.height() - 1)) : bar.bottom() - int(along * (bar.height() - 1));
            return picture.pixel(std::clamp(x, 0, picture.width() - 1), std::clamp(y, 0, picture.height() - 1));
        };
        int along = 0, across = 0;
        for (int i = 0; i <= 40; ++i)
            along = std::max(along, colourDistance(at(0.0, 0.5), at(i / 40.0, 0.5)));
        for (int i = 0; i <= 10; ++i)
            for (int j = 0; j <= 8; ++j)
                across = std::max(across, colourDistance(at(i / 10.0, 0.0), at(i / 10.0, j / 8.0)));
        if (along < minAlong || across > maxAcross)
            problems << QStringLiteral("%1: colour bar %2 x %3 (%4): colours change by %5 along it and by %6 across it")
                            .arg(describe(plot))
                            .arg(bar.width())
                            .arg(bar.height())
                            .arg(scale->axis()->label())
                            .arg(along)
                            .arg(across);
    }
    return problems;
}

// The axes of `plot` that draw tick labels: every axis rectangle's and every colour bar's.
inline QList<QCPAxis*> labelledAxes(QCustomPlot* plot)
{
    QList<QCPAxis*> axes;
    for (QCPAxisRect* rect : plot->axisRects())
        for (QCPAxis* axis : rect->axes())
            axes << axis;
    for (QCPColorScale* scale : plot->findChildren<QCPColorScale*>())
        if (scale->visible() && scale->layout() && scale->axis())
            axes << scale->axis();
    QList<QCPAxis*> shown;
    for (QCPAxis* axis : axes)
        if (axis->visible() && axis->tickLabels())
            shown << axis;
    return shown;
}

// Adjacent tick (or category) labels of every axis of `plot` that would touch: from each label's text and
// font, its place on the axis and the labels' rotation. Unrotated labels need half their two extents along
// the axis; labels rotated by theta stand in parallel, so they need their height over |sin theta| (bottom
// and top axes) or |cos theta| (left and right) between anchors.
inline QStringList overlappingLabels(QCustomPlot* plot)
{
    QStringList problems;
    for (QCPAxis* axis : labelledAxes(plot)) {
        const QVector<double> ticks = axis->tickVector();
        const QVector<QString> labels = axis->tickVectorLabels();
        const QFontMetrics metrics(axis->tickLabelFont());
        const bool horizontal = axis->orientation() == Qt::Horizontal;
        const double theta = axis->tickLabelRotation() * M_PI / 180.0;
        struct Placed {
            double position;
            QSize size;
            QString text;
        };
        std::vector<Placed> placed;
        for (int i = 0; i < ticks.size() && i < labels.size(); ++i) {
            if (labels[i].trimmed().isEmpty() || !axis->range().contains(ticks[i]))
                continue;
            const QSize size = metrics.boundingRect(QRect(), Qt::AlignCenter, labels[i]).size();
            placed.push_back({axis->coordToPixel(ticks[i]), size, labels[i]});
        }
        std::sort(placed.begin(), placed.end(), [](const Placed& a, const Placed& b) { return a.position < b.position; });
        for (size_t i = 1; i < placed.size(); ++i) {
            const Placed &a = placed[i - 1], &b = placed[i];
            double needed;
            if (std::abs(theta) < 1e-6)
                needed = horizontal ? 0.5 * (a.size.width() + b.size.width()) : 0.5 * (a.size.height() + b.size.height());
            else
                needed =
                    std::max(a.size.height(), b.size.height()) / std::max(1e-6, std::abs(horizontal ? std::sin(theta) : std::cos(theta)));
            const double gap = b.position - a.position;
            if (gap + 0.5 < needed)
                problems << QStringLiteral("%1: axis '%2': labels '%3' and '%4' are %5 px apart and need %6 px")
                                .arg(describe(plot), axis->label(), QString(a.text).replace(QLatin1Char('\n'), QLatin1Char(' ')),
                                     QString(b.text).replace(QLatin1Char('\n'), QLatin1Char(' ')))
                                .arg(gap, 0, 'f', 1)
                                .arg(needed, 0, 'f', 1);
        }
    }
    return problems;
}

// A combo box that cuts its current text ("core (99 % of fl").
inline QString cutComboText(const QComboBox* combo)
{
    QStyleOptionComboBox option;
    option.initFrom(combo);
    option.editable = combo->isEditable();
    option.currentText = combo->currentText();
    option.frame = combo->hasFrame();
    const QRect field = combo->style()->subControlRect(QStyle::CC_ComboBox, &option, QStyle::SC_ComboBoxEditField, combo);
    const int needed = combo->fontMetrics().horizontalAdvance(combo->currentText());
    if (needed <= field.width())
        return {};
    return QStringLiteral("%1: '%2' needs %3 px and has %4").arg(describe(combo), combo->currentText()).arg(needed).arg(field.width());
}

// A spin box too narrow for its text ("5 stacks/s" shown as "5 sta"), or "" when the whole text fits its field.
inline QString cutSpinBoxText(const QAbstractSpinBox* spin)
{
    QStyleOptionSpinBox option;
    option.initFrom(spin);
    option.frame = spin->hasFrame();
    option.buttonSymbols = spin->buttonSymbols();
    const QRect field = spin->style()->subControlRect(QStyle::CC_SpinBox, &option, QStyle::SC_SpinBoxEditField, spin);
    const QString text = spin->text();
    const int needed = spin->fontMetrics().horizontalAdvance(text);
    if (needed <= field.width())
        return {};
    return QStringLiteral("%1: '%2' needs %3 px and has %4").arg(describe(spin), text).arg(needed).arg(field.width());
}

// A plot's legend wider than the plot (its entries cut at the right edge), or "" when it fits.
inline QString cutLegend(const QCustomPlot* plot)
{
    if (!plot->legend || !plot->legend->visible())
        return {};
    const int needed = plot->legend->minimumOuterSizeHint().width();
    if (needed <= plot->width())
        return {};
    return QStringLiteral("%1: legend needs %2 px and the plot is %3").arg(describe(plot)).arg(needed).arg(plot->width());
}

} // namespace wfs::test
