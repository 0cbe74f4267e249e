// Every picture readable (issue 23), on the offscreen platform, from the rendered pixels: the image
// panels (planes, PSF, phase, a row of FastH matrices) built directly from synthetic images at the sizes
// they get in 1366 x 768 and 1920 x 1080 windows. Every colour bar's colours run along its length and
// are constant across it, also after the bar moved between the side and the bottom; compared images
// (data / model, diffraction-limited / fitted PSF, the MTF pair) show at one scale; every image is
// titled; an empty view draws its message and no axes; axes are in physical units where core gave the
// scale; the colour bar's labels spread along a log-stretched bar; combo boxes show their text whole.
#include "ReadabilityChecks.h"
#include "TestSupport.h"

#include "FasthMatrixView.h"
#include "ImageToolDialogs.h"
#include "ImageView.h"
#include "PhasePanel.h"
#include "PictureMenu.h"
#include "PlanesPanel.h"
#include "PsfPanel.h"

#include <qcustomplot.h>

#include <QWheelEvent>
#include <QApplication>
#include <QClipboard>
#include <QTemporaryDir>
#include <QMenu>
#include <QFile>
#include <QImage>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QPushButton>
#include <QGridLayout>
#include <QLabel>
#include <QtTest>

#include <cmath>
#include <memory>

using namespace wfs;
using namespace wfs::ui;

using wfs::test::colourDistance;
using wfs::test::settle;

namespace {

// Empty when the view's colour bar, as drawn, changes colour along its long side (the ends far apart,
// the colour moving the same way) and stays the same across its short side; otherwise what is wrong.
QString colourBarProblem(ImageView* view)
{
    const QString name = view->objectName().isEmpty() ? view->title() : view->objectName();
    const QRect bar = view->colourBarRect();
    if (bar.width() < 6 || bar.height() < 6)
        return QStringLiteral("%1: no colour bar drawn (rect %2 x %3)").arg(name).arg(bar.width()).arg(bar.height());
    const QImage picture = view->plot()->toPixmap().toImage();
    // WFS_PICTURES_DUMP=folder keeps each picture checked, to look at.
    if (const QString dump = qEnvironmentVariable("WFS_PICTURES_DUMP"); !dump.isEmpty())
        picture.save(QStringLiteral("%1/%2-%3x%4.png").arg(dump, name).arg(view->width()).arg(view->height()));
    const bool vertical = bar.height() > bar.width();
    const int length = vertical ? bar.height() : bar.width();
    const int thickness = vertical ? bar.width() : bar.height();
    // Along the centre line, 3 px in from the ends; across at a quarter, half and three quarters.
    auto at = [&](int along, int across) {
        return vertical ? picture.pixel(bar.left() + across, bar.bottom() - along) : picture.pixel(bar.left() + along, bar.top() + across);
    };
    const int mid = thickness / 2;
    const int endsApart = colourDistance(at(3, mid), at(length - 4, mid));
    if (endsApart < 80)
        return QStringLiteral("%1: the colours do not change along the bar (ends %2 apart)").arg(name).arg(endsApart);
    int steps = 0;
    for (int i = 3; i + 8 < length - 3; i += 8)
        steps += colourDistance(at(i, mid), at(i + 8, mid)) > 0 ? 1 : 0;
    if (steps < (length - 6) / 8 / 2)
        return QStringLiteral("%1: the colour changes in only %2 of the steps along the bar").arg(name).arg(steps);
    for (double fraction : {0.25, 0.5, 0.75}) {
        const int along = int(fraction * length);
        const QRgb reference = at(along, mid);
        for (int across = 2; across < thickness - 2; ++across) {
            if (const int d = colourDistance(at(along, across), reference); d > 12)
                return QStringLiteral("%1: the colour changes across the bar (by %2 at %3 of its length)").arg(name).arg(d).arg(fraction);
        }
    }
    return QString();
}

// Empty when both show the same number of screen pixels per image pixel within 1 %.
QString scaleProblem(ImageView* a, ImageView* b)
{
    const double sa = a->screenPixelsPerImagePixel(), sb = b->screenPixelsPerImagePixel();
    if (!(sa > 0) || !(sb > 0) || std::abs(sa - sb) > 0.01 * std::max(sa, sb))
        return QStringLiteral("%1 at %2 screen px per image px, %3 at %4").arg(a->title()).arg(sa).arg(b->title()).arg(sb);
    return QString();
}

bool titled(ImageView* view)
{
    const auto* label = view->findChild<QLabel*>(QStringLiteral("imageTitle"));
    return !view->title().isEmpty() && label && label->isVisible() && label->text() == view->title() && label->height() > 5;
}

Image gaussian(int width, int height, double sigma, double peak, double background, double cx, double cy)
{
    Image image(width, height);
    for (int r = 0; r < height; ++r)
        for (int c = 0; c < width; ++c)
            image.at(r, c) = background + peak * std::exp(-((c - cx) * (c - cx) + (r - cy) * (r - cy)) / (2 * sigma * sigma));
    return image;
}

// A disc of radius `size / 2` pixels, NaN outside, filled by f(x, y) in pupil coordinates.
template <typename F>
Image disc(int size, F f)
{
    Image image(size, size, std::nan(""));
    const double spacing = 2.0 / size, first = -1.0 + 0.5 * spacing;
    for (int r = 0; r < size; ++r)
        for (int c = 0; c < size; ++c) {
            const double x = first + c * spacing, y = first + r * spacing;
            if (x * x + y * y <= 1.0)
                image.at(r, c) = f(x, y);
        }
    return image;
}

// An analysis as core would give it, for pictures only: Gaussian PSFs (fitted broader), cone-shaped MTFs.
std::shared_ptr<const PsfAnalysis> syntheticAnalysis()
{
    auto a = std::make_shared<PsfAnalysis>();
    a->lambdaOverDPerPixel = 0.25;
    a->cutoffCyclesPerPixel = 0.25;
    a->diffractionPsf = gaussian(121, 121, 2.0, 1.0, 1e-5, 60, 60);
    a->fittedPsf = gaussian(121, 121, 2.6, 0.6, 1e-5, 60, 60);
    a->strehl = 0.6;
    a->fwhmDiffractionPixels = 4.7;
    a->fwhmFittedPixels = 6.1;
    for (int i = 0; i < 64; ++i) {
        a->radius.push_back(i);
        a->encircledDiffraction.push_back(1.0 - std::exp(-i * i / 8.0));
        a->encircledFitted.push_back(1.0 - std::exp(-i * i / 13.5));
    }
    a->planeNames = {"in focus", "defocus +1 wave"};
    for (int k = 0; k < 2; ++k) {
        std::vector<double> profile;
        for (int i = 0; i < 64; ++i)
            profile.push_back(1000.0 * std::exp(-i * i / (8.0 * (k + 1))) + 1.0);
        a->dataProfiles.push_back(profile);
        a->modelProfiles.push_back(profile);
    }
    const int bins = 16;
    for (int b = 0; b <= bins; ++b) {
        a->frequency.push_back(b / 64.0);
        a->mtfDiffraction.push_back(std::max(0.0, 1.0 - b / double(bins)));
        a->mtfFitted.push_back(std::max(0.0, 1.0 - b / double(bins)) * 0.8);
    }
    a->mtfDiffraction2d = Image(2 * bins + 1, 2 * bins + 1);
    a->mtfFitted2d = Image(2 * bins + 1, 2 * bins + 1);
    for (int r = 0; r <= 2 * bins; ++r)
        for (int c = 0; c <= 2 * bins; ++c) {
            const double f = std::hypot(r - bins, c - bins) / bins;
            a->mtfDiffraction2d.at(r, c) = std::max(0.0, 1.0 - f);
            a->mtfFitted2d.at(r, c) = 0.8 * std::max(0.0, 1.0 - f) * (1.0 - 0.2 * std::cos(3 * std::atan2(r - bins, c - bins)));
        }
    return a;
}

QStringList menuEntries(QMenu* menu)
{
    QStringList entries;
    for (QAction* action : menu->actions())
        if (!action->isSeparator())
            entries << action->text();
    return entries;
}

// Triggers `entry` of the view's right-click menu; the window it opened.
template <typename Window>
Window* openFromMenu(ImageView* view, const QString& entry)
{
    std::unique_ptr<QMenu> menu(pictureMenu(view->plot(), nullptr));
    for (QAction* action : menu->actions())
        if (action->text() == entry && action->isEnabled())
            action->trigger();
    return view->findChild<Window*>();
}

// Where the range dialog's two lines stand on the histogram's value axis.
std::vector<double> rangeLineKeys(DisplayRangeDialog* dialog)
{
    std::vector<double> keys;
    for (int i = 0; i < dialog->histogramPlot()->itemCount(); ++i)
        if (auto* line = qobject_cast<QCPItemStraightLine*>(dialog->histogramPlot()->item(i)))
            keys.push_back(line->point1->key());
    return keys;
}

// The screen point of the plot at axis coordinates `at`.
QPoint toScreen(QCustomPlot* plot, const QPointF& at)
{
    return QPoint(int(std::lround(plot->xAxis->coordToPixel(at.x()))), int(std::lround(plot->yAxis->coordToPixel(at.y()))));
}

// A press at `from`, a drag through the middle to `to` and a release there (axis coordinates).
void dragLine(QCustomPlot* plot, const QPointF& from, const QPointF& to)
{
    QTest::mousePress(plot, Qt::LeftButton, Qt::NoModifier, toScreen(plot, from));
    QTest::mouseMove(plot, toScreen(plot, 0.5 * (from + to)));
    QTest::mouseMove(plot, toScreen(plot, to));
    QTest::mouseRelease(plot, Qt::LeftButton, Qt::NoModifier, toScreen(plot, to));
}

std::vector<double> tickPositions(ImageView* view)
{
    std::vector<double> positions;
    QCPColorScale* scale = view->colorScale();
    if (!scale)
        return positions;
    const auto ticker = scale->axis()->ticker().dynamicCast<QCPAxisTickerText>();
    if (ticker)
        for (auto it = ticker->ticks().cbegin(); it != ticker->ticks().cend(); ++it)
            positions.push_back(it.key());
    return positions;
}

// What the panels get of a 1366 x 768 and a 1920 x 1080 window (the central tab beside the docks).
const QSize kSmall(880, 560), kLarge(1380, 860);

} // namespace

class TestPictures : public QObject {
    Q_OBJECT

private slots:
    // The mechanism: a bar drawn beside the image, then moved below it (and back), runs along its length.
    void colourBarFollowsItsOrientation()
    {
        ImageView view;
        view.setObjectName(QStringLiteral("view"));
        view.setImage(gaussian(64, 64, 8, 100, 10, 30, 34), QStringLiteral("Test"), QStringLiteral("counts"));
        for (const QSize size : {QSize(700, 360), QSize(360, 700), QSize(700, 360), QSize(500, 500)}) {
            view.resize(size);
            view.show();
            settle(&view);
            const QString problem = colourBarProblem(&view);
            QVERIFY2(problem.isEmpty(), qPrintable(QStringLiteral("at %1 x %2: %3").arg(size.width()).arg(size.height()).arg(problem)));
        }
    }

    void planesPanel()
    {
        PlanesPanel panel;
        const Image data = gaussian(96, 96, 4, 5000, 100, 47, 49);
        Image model = gaussian(96, 96, 4.3, 4800, 100, 47.5, 49);
        PlaneResiduals residuals;
        residuals.residual = Image(96, 96);
        residuals.normalized = Image(96, 96);
        for (size_t i = 0; i < data.pixels.size(); ++i) {
            residuals.residual.pixels[i] = data.pixels[i] - model.pixels[i];
            residuals.normalized.pixels[i] = residuals.residual.pixels[i] / std::sqrt(std::max(1.0, model.pixels[i]));
        }
        const QString longName = QStringLiteral("bead_zstack_03_defocus.tif[0]");
        panel.setPlanes({PlaneEntry{longName, QStringLiteral("/data/") + longName, data},
                         PlaneEntry{QStringLiteral("bead_zstack_03_defocus.tif[1]"), QStringLiteral("x"), data}});
        panel.setModels({model, model}, {residuals, residuals});
        ImageView* views[] = {panel.dataView(), panel.modelView(), panel.residualView(), panel.normalizedView()};
        for (const QSize size : {kSmall, kLarge, kSmall}) {
            panel.resize(size);
            static_cast<QWidget&>(panel).show(); // the panel hides show() with its own
            settle(&panel);
            const QString at = QStringLiteral("%1 x %2: ").arg(size.width()).arg(size.height());
            for (ImageView* view : views) {
                const QString problem = colourBarProblem(view);
                QVERIFY2(problem.isEmpty(), qPrintable(at + problem));
                QVERIFY2(titled(view), qPrintable(at + view->objectName() + QStringLiteral(" has no visible title")));
                QVERIFY2(std::abs(view->pixelAspect() - 1.0) < 0.01, qPrintable(at + view->objectName()));
            }
            const QString scale = scaleProblem(panel.dataView(), panel.modelView());
            QVERIFY2(scale.isEmpty(), qPrintable(at + scale));
            // Combo boxes show their text whole: the plane's name, the zoom's entries.
            for (QComboBox* box : panel.findChildren<QComboBox*>()) {
                const QFontMetrics metrics(box->font());
                int widest = 0;
                for (int i = 0; i < box->count(); ++i)
                    widest = std::max(widest, metrics.horizontalAdvance(box->itemText(i)));
                QVERIFY2(box->width() >= widest + 20, qPrintable(at
                                                                 + QStringLiteral("combo box '%1' is %2 px for a text of %3 px")
                                                                       .arg(box->currentText())
                                                                       .arg(box->width())
                                                                       .arg(widest)));
            }
        }
        QCOMPARE(panel.dataView()->title(), QStringLiteral("Data"));
        QCOMPARE(panel.modelView()->title(), QStringLiteral("Model"));

        // Issue 42: zoom and pan acted on one view and data and model no longer lined up. A wheel turn over the
        // data and a drag on the residual move all four views to the same pixels at the same scale; a
        // double-click fits them all again.
        const auto centreOf = [](ImageView* view) {
            return QPointF(view->plot()->xAxis->range().center(), view->plot()->yAxis->range().center());
        };
        const auto linked = [&](const QString& after) {
            for (ImageView* view : views) {
                const QPointF a = centreOf(panel.dataView()), b = centreOf(view);
                QVERIFY2(std::abs(a.x() - b.x()) < 0.05 && std::abs(a.y() - b.y()) < 0.05,
                         qPrintable(after
                                    + QStringLiteral(": %1 centred at %2, %3; the data at %4, %5")
                                          .arg(view->objectName())
                                          .arg(b.x())
                                          .arg(b.y())
                                          .arg(a.x())
                                          .arg(a.y())));
                QVERIFY2(std::abs(view->screenPixelsPerImagePixel() / panel.dataView()->screenPixelsPerImagePixel() - 1.0) < 0.01,
                         qPrintable(after + QStringLiteral(": ") + view->objectName() + QStringLiteral(" at another scale")));
            }
        };
        const double fitted = panel.dataView()->screenPixelsPerImagePixel();
        QCustomPlot* plot = panel.dataView()->plot();
        const QPointF over(plot->axisRect()->rect().center() + QPoint(40, -30));
        QWheelEvent wheel(over, plot->mapToGlobal(over), QPoint(), QPoint(0, 240), Qt::NoButton, Qt::NoModifier, Qt::NoScrollPhase, false);
        QApplication::sendEvent(plot, &wheel);
        settle(&panel);
        QVERIFY2(panel.dataView()->screenPixelsPerImagePixel() > 1.3 * fitted, "the wheel did not zoom the data");
        linked(QStringLiteral("zoomed on the data"));
        QCustomPlot* residualPlot = panel.residualView()->plot();
        const QPoint from = residualPlot->axisRect()->rect().center();
        QTest::mousePress(residualPlot, Qt::LeftButton, Qt::NoModifier, from);
        QTest::mouseMove(residualPlot, from + QPoint(30, 20));
        QTest::mouseRelease(residualPlot, Qt::LeftButton, Qt::NoModifier, from + QPoint(30, 20));
        settle(&panel);
        linked(QStringLiteral("dragged on the residual"));
        QTest::mouseDClick(panel.modelView()->plot(), Qt::LeftButton, Qt::NoModifier, from);
        settle(&panel);
        linked(QStringLiteral("double-clicked on the model"));
        QVERIFY(std::abs(panel.dataView()->screenPixelsPerImagePixel() / fitted - 1.0) < 0.01);

        // Issue 42: the views were in pixels although the pitch was known. With a pitch, every view's axes are in µm
        // from the window's centre pixel (48 of 96), square pixels kept; without one, pixels again.
        std::vector<QCPRange> inPixels;
        for (ImageView* view : views)
            inPixels.push_back(view->plot()->xAxis->range());
        panel.setPixelPitch(65e-9);
        settle(&panel);
        for (size_t i = 0; i < std::size(views); ++i) {
            ImageView* view = views[i];
            QCOMPARE(view->plot()->xAxis->label(), QStringLiteral("x (µm)"));
            QVERIFY2(std::abs(view->pixelAspect() - 1.0) < 0.01, qPrintable(view->objectName()));
            const QCPRange x = view->plot()->xAxis->range();
            WFS_VERIFY_CLOSE(x.size(), inPixels[i].size() * 0.065, 0.01, 0.0);
            WFS_VERIFY_CLOSE(x.center(), (inPixels[i].center() - 48.0) * 0.065, 0.0, 0.01);
        }
        panel.setPixelPitch(0.0);
        settle(&panel);
        QCOMPARE(panel.dataView()->plot()->xAxis->label(), QStringLiteral("x (pixel)"));

        // Without a model the model views say what to do and draw no axes.
        panel.clearModels();
        settle(&panel);
        for (ImageView* view : {panel.modelView(), panel.residualView(), panel.normalizedView()}) {
            QVERIFY(!view->plot()->isVisible());
            QVERIFY(!view->message().isEmpty());
        }
    }

    void psfPanel()
    {
        PsfPanel panel;
        panel.setAnalysis(syntheticAnalysis());
        auto* ideal = panel.findChild<ImageView*>(QStringLiteral("diffractionPsfView"));
        auto* fitted = panel.findChild<ImageView*>(QStringLiteral("fittedPsfView"));
        auto* mtfIdeal = panel.findChild<ImageView*>(QStringLiteral("diffractionMtfView"));
        auto* mtfFitted = panel.findChild<ImageView*>(QStringLiteral("fittedMtfView"));
        QVERIFY(ideal && fitted && mtfIdeal && mtfFitted);
        for (const QSize size : {kSmall, kLarge, kSmall}) {
            panel.resize(size);
            static_cast<QWidget&>(panel).show(); // the panel hides show() with its own
            settle(&panel);
            const QString at = QStringLiteral("%1 x %2: ").arg(size.width()).arg(size.height());
            for (ImageView* view : {ideal, fitted, mtfIdeal, mtfFitted}) {
                const QString problem = colourBarProblem(view);
                QVERIFY2(problem.isEmpty(), qPrintable(at + problem));
                QVERIFY2(titled(view), qPrintable(at + view->objectName() + QStringLiteral(" has no visible title")));
            }
            for (auto [a, b] : {std::pair{ideal, fitted}, std::pair{mtfIdeal, mtfFitted}}) {
                const QString scale = scaleProblem(a, b);
                QVERIFY2(scale.isEmpty(), qPrintable(at + scale));
            }
            // The log bar's labels spread along it: no stretch of more than 40 % of the bar unlabelled.
            std::vector<double> ticks = tickPositions(fitted);
            QVERIFY2(ticks.size() >= 4, qPrintable(at + QStringLiteral("%1 ticks on the log bar").arg(ticks.size())));
            ticks.insert(ticks.begin(), 0.0);
            ticks.push_back(1.0);
            for (size_t i = 1; i < ticks.size(); ++i)
                QVERIFY2(ticks[i] - ticks[i - 1] <= 0.4,
                         qPrintable(at + QStringLiteral("no label between %1 and %2 of the log bar").arg(ticks[i - 1]).arg(ticks[i])));
        }
        // Physical axes: PSFs in lambda / D about the centre (121 px at 0.25 lambda / D: +-15), MTFs in
        // fractions of the cutoff (+-1).
        QVERIFY(fitted->plot()->xAxis->label().contains(QStringLiteral("λ/D")));
        QVERIFY(mtfFitted->plot()->xAxis->label().contains(QStringLiteral("cutoff")));
        // Issue 42: the MTF curve names the cutoff by its value, never a telescope's "D/λF" on a microscope's stack.
        auto* mtfCurve = panel.findChild<QCustomPlot*>(QStringLiteral("mtfPlot"));
        QVERIFY(mtfCurve);
        QVERIFY2(!mtfCurve->xAxis->label().contains(QStringLiteral("D/λ")) && mtfCurve->xAxis->label().contains(QStringLiteral("cycles/")),
                 qPrintable(mtfCurve->xAxis->label()));
        QVERIFY(std::abs(fitted->screenPixelsPerImagePixel()
                         - std::abs(fitted->plot()->xAxis->coordToPixel(0.25) - fitted->plot()->xAxis->coordToPixel(0.0)))
                < 1e-6);
        QVERIFY(std::abs(mtfFitted->plot()->xAxis->coordToPixel(1.0) - mtfFitted->plot()->xAxis->coordToPixel(-1.0))
                    - 32 * mtfFitted->screenPixelsPerImagePixel()
                < 1e-6 + 0.001 * mtfFitted->screenPixelsPerImagePixel());
        // With the data's pixel pitch known (0.1 um), the PSFs and radii are in micrometres: one pixel, 0.1 um.
        panel.setPixelPitch(0.1e-6);
        settle(&panel);
        QVERIFY2(fitted->plot()->xAxis->label().contains(QStringLiteral("µm")), qPrintable(fitted->plot()->xAxis->label()));
        QVERIFY(std::abs(fitted->screenPixelsPerImagePixel()
                         - std::abs(fitted->plot()->xAxis->coordToPixel(0.1) - fitted->plot()->xAxis->coordToPixel(0.0)))
                < 1e-6);
        for (const char* name : {"encircledEnergyPlot", "profilePlot"}) {
            auto* plot = panel.findChild<QCustomPlot*>(QLatin1String(name));
            QVERIFY2(plot && plot->xAxis->label() == QStringLiteral("radius (µm)"), name);
        }
        QVERIFY2(panel.summaryText().contains(QStringLiteral("0.1 µm")), qPrintable(panel.summaryText()));
        QCOMPARE(ideal->screenPixelsPerImagePixel(), fitted->screenPixelsPerImagePixel());
    }

    void phasePanel()
    {
        PhasePanel panel;
        // Empty: the message alone, no axes, no tick labels, no colour bar.
        panel.resize(kSmall);
        static_cast<QWidget&>(panel).show();
        settle(&panel);
        ImageView* phase = panel.view();
        QVERIFY(!phase->plot()->isVisible());
        QVERIFY(!phase->colorScale());
        QVERIFY(!phase->message().isEmpty());
        {
            // Nothing drawn outside the title and the message: the rest of the view is background.
            const QImage picture = phase->grab().toImage();
            const QColor background = phase->palette().color(QPalette::Window);
            QRegion text;
            for (QLabel* label : phase->findChildren<QLabel*>())
                if (label->isVisible())
                    text += label->geometry();
            int drawn = 0;
            for (int y = 0; y < picture.height(); y += 2)
                for (int x = 0; x < picture.width(); x += 2)
                    if (!text.contains(QPoint(x, y)) && colourDistance(picture.pixel(x, y), background.rgb()) > 30)
                        ++drawn;
            QCOMPARE(drawn, 0);
        }
        // The pupil preset's three maps in pupil coordinates.
        const int n = 64;
        panel.setPhase(disc(n, [](double x, double y) { return 3.0 * (2 * (x * x + y * y) - 1) + 2.0 * x; }), 633e-9);
        panel.setPupilMaps(disc(n, [](double x, double y) { return std::exp(-(x * x + y * y)); }),
                           disc(n, [](double x, double y) { return x > 0.3 ? 0.5 : -0.1 * y; }));
        PupilMapGeometry geometry;
        geometry.spacing = 2.0 / n;
        geometry.firstColumn = geometry.firstRow = -1.0 + 0.5 * geometry.spacing;
        panel.setPupilGeometry(geometry);
        for (const QSize size : {kSmall, kLarge, QSize(700, 700), kSmall}) {
            panel.resize(size);
            settle(&panel);
            const QString at = QStringLiteral("%1 x %2: ").arg(size.width()).arg(size.height());
            for (ImageView* view : {panel.view(), panel.amplitudeView(), panel.remainderView()}) {
                const QString problem = colourBarProblem(view);
                QVERIFY2(problem.isEmpty(), qPrintable(at + problem));
                QVERIFY2(titled(view), qPrintable(at + view->objectName() + QStringLiteral(" has no visible title")));
                QVERIFY2(std::abs(view->pixelAspect() - 1.0) < 0.01, qPrintable(at + view->objectName()));
            }
        }
        // Normalised pupil radius: the map's edge pixels are at about +-1, the axis says so.
        QVERIFY(phase->plot()->xAxis->label().contains(QStringLiteral("pupil radius")));
        const QCPRange x = phase->plot()->xAxis->range();
        QVERIFY2(x.lower < -0.95 && x.upper > 0.95 && x.lower > -4 && x.upper < 4,
                 qPrintable(QStringLiteral("%1 .. %2").arg(x.lower).arg(x.upper)));
    }

    void fasthMatrices()
    {
        QWidget page;
        auto* grid = new QGridLayout(&page);
        std::vector<FasthMatrixView*> views;
        for (int i = 0; i < 3; ++i) {
            auto* view = new FasthMatrixView(&page);
            grid->addWidget(view, 0, i);
            Eigen::MatrixXd m(32, i == 0 ? 8 : 32);
            for (int r = 0; r < m.rows(); ++r)
                for (int c = 0; c < m.cols(); ++c)
                    m(r, c) = std::sin(0.3 * r + 0.7 * c + i);
            view->setMatrix(m, QStringLiteral("M%1").arg(i));
            views.push_back(view);
        }
        for (const QSize size : {QSize(880, 300), QSize(1380, 430), QSize(700, 600), QSize(880, 300)}) {
            page.resize(size);
            page.show();
            settle(&page);
            for (FasthMatrixView* view : views) {
                const QString problem = colourBarProblem(view->imageView());
                QVERIFY2(problem.isEmpty(), qPrintable(QStringLiteral("%1 x %2: ").arg(size.width()).arg(size.height()) + problem));
                QVERIFY(titled(view->imageView()));
            }
        }
    }

    // Issue 42: no right-click copy or export, and the phase PNG export had no axes or colour bar. A right-click on
    // any plot offers copy, PNG, SVG and PDF; the PNG is the picture as shown (title, axes, colour bar), SVG and PDF vector.
    void picturesSaveWithTheirAxesAndColourBar()
    {
        ImageView view;
        view.setImage(gaussian(64, 64, 8, 100, 10, 30, 34), QStringLiteral("Data"), QStringLiteral("counts"));
        view.resize(520, 420);
        view.show();
        settle(&view);
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        QString error;
        const QString png = dir.filePath(QStringLiteral("data.png"));
        QVERIFY2(savePicture(view.plot(), png, &error), qPrintable(error));
        const QImage picture(png);
        QCOMPARE(picture.size(), view.size()); // the whole view, the title above the plot included
        // The colour bar's two ends (viridis runs from dark violet to yellow) are in the picture, and the axes' ticks:
        // dark pixels left of and below the image, where the tick labels are.
        bool violet = false, yellow = false;
        for (int y = 0; y < picture.height(); ++y)
            for (int x = 0; x < picture.width(); ++x) {
                const QColor c = picture.pixelColor(x, y);
                violet = violet || (c.red() < 0x50 && c.green() < 0x10 && c.blue() > 0x50 && c.blue() < 0x70);
                yellow = yellow || (c.red() > 0xf0 && c.green() > 0xd8 && c.blue() < 0x40);
            }
        QVERIFY2(violet && yellow, "the colour bar's ends are not in the picture");
        const QRect image = view.plot()->axisRect()->rect().translated(view.plot()->mapTo(&view, QPoint()));
        int labelInk = 0;
        for (int y = image.bottom() + 4; y < std::min(picture.height(), image.bottom() + 30); ++y)
            for (int x = image.left(); x <= image.right(); ++x)
                labelInk += qGray(picture.pixel(x, y)) < 100;
        QVERIFY2(labelInk > 20, "no tick labels under the image");

        const QString pdf = dir.filePath(QStringLiteral("data.pdf"));
        QVERIFY2(savePicture(view.plot(), pdf, &error), qPrintable(error));
        QFile file(pdf);
        QVERIFY(file.open(QIODevice::ReadOnly));
        QVERIFY(file.read(5) == "%PDF-");
        // SVG (vector): the axes' tick labels as text, the title named, the image's cells embedded.
        const QString svg = dir.filePath(QStringLiteral("data.svg"));
        QVERIFY2(savePicture(view.plot(), svg, &error), qPrintable(error));
        QFile svgFile(svg);
        QVERIFY(svgFile.open(QIODevice::ReadOnly));
        const QByteArray svgText = svgFile.readAll();
        QVERIFY(svgText.contains("<svg"));
        QVERIFY2(svgText.contains("<title>Data</title>"), svgText.left(400).constData());
        QVERIFY(svgText.contains("<image"));
        for (const QString& tick : view.plot()->xAxis->tickVectorLabels())
            if (!tick.isEmpty())
                QVERIFY2(svgText.contains((QStringLiteral(">") + tick + QStringLiteral("<")).toUtf8()), qPrintable(tick));
        QVERIFY(!savePicture(view.plot(), dir.filePath(QStringLiteral("data.bmpx")), &error));
        QVERIFY(error.contains(QStringLiteral(".png, .svg or .pdf")));

        std::unique_ptr<QMenu> menu(pictureMenu(view.plot(), nullptr));
        QCOMPARE(menuEntries(menu.get()),
                 (QStringList{QStringLiteral("Copy picture"), QStringLiteral("Save as PNG…"), QStringLiteral("Save as SVG (vector)…"),
                              QStringLiteral("Save as PDF (vector)…"), QStringLiteral("Display range…"), QStringLiteral("Line profile…")}));
        // A chart that is not an image: no image tools.
        QCustomPlot chart;
        std::unique_ptr<QMenu> chartMenu(pictureMenu(&chart, nullptr));
        QCOMPARE(menuEntries(chartMenu.get()),
                 (QStringList{QStringLiteral("Copy picture"), QStringLiteral("Save as PNG…"), QStringLiteral("Save as SVG (vector)…"),
                              QStringLiteral("Save as PDF (vector)…")}));
    }

    // Issue 42 item 2: "Display range…" from an image's right-click menu: a histogram of the finite values, the range's
    // ends as lines, two boxes that apply at once, "Automatic" back to the clip percentiles. The typed range survives
    // live updates (same size) and wins over a fixed (shared) range; low >= high is refused with a message.
    void manualDisplayRange()
    {
        ImageView view;
        Image image = gaussian(64, 48, 6, 1000, 10, 30, 24);
        image.at(3, 4) = std::nan("");
        image.at(5, 6) = INFINITY;
        view.setImage(image, QStringLiteral("Data"), QStringLiteral("counts"));
        view.setClipPercentiles(0.5, 99.5);
        view.resize(520, 420);
        view.show();
        settle(&view);
        QVERIFY(!view.userRange());
        DisplayRangeDialog* dialog = openFromMenu<DisplayRangeDialog>(&view, QStringLiteral("Display range…"));
        QVERIFY(dialog);
        settle(dialog);
        QVERIFY(dialog->isVisible() && !dialog->isModal());
        // The histogram: every finite value once (the NaN and the infinity left out), over the values' extent.
        size_t counted = 0;
        for (const size_t c : dialog->histogram().counts)
            counted += c;
        QCOMPARE(counted, image.pixels.size() - 2);
        QCOMPARE(dialog->histogram().nonFinite, size_t(2));
        QCOMPARE(dialog->histogramPlot()->yAxis->scaleType(), QCPAxis::stLogarithmic);
        QCOMPARE(dialog->histogramPlot()->xAxis->label(), QStringLiteral("value (counts)"));
        QCOMPARE(dialog->lowBox()->value(), view.autoRange().low);
        QCOMPARE(dialog->highBox()->value(), view.autoRange().high);

        // Typed: applied at once, the lines moved there.
        dialog->lowBox()->setValue(20.0);
        dialog->highBox()->setValue(800.0);
        QCOMPARE(view.displayRange().low, 20.0);
        QCOMPARE(view.displayRange().high, 800.0);
        QCOMPARE(rangeLineKeys(dialog), (std::vector<double>{20.0, 800.0}));
        // Typed as a user types: the text, then Enter (which must not also press a default button of the dialog).
        dialog->lowBox()->selectAll();
        QTest::keyClicks(dialog->lowBox(), QStringLiteral("35.5"));
        QCOMPARE(view.displayRange().low, 20.0); // not at each digit
        QTest::keyClick(dialog->lowBox(), Qt::Key_Return);
        QCOMPARE(view.displayRange().low, 35.5);
        QCOMPARE(view.displayRange().high, 800.0);

        // A live update (same size, same unit) keeps it; so does a fixed range the program sets (the user's wins).
        view.setImage(gaussian(64, 48, 6, 3000, 10, 31, 24), QStringLiteral("Data"), QStringLiteral("counts"));
        settle(&view);
        QCOMPARE(view.displayRange().low, 35.5);
        QCOMPARE(view.displayRange().high, 800.0);
        QVERIFY(std::abs(view.autoRange().high - 800.0) > 100.0); // the automatic range would differ
        view.setFixedRange(DisplayRange{0.0, 5000.0});
        QCOMPARE(view.displayRange().low, 35.5);
        QCOMPARE(view.displayRange().high, 800.0);
        QCOMPARE(dialog->lowBox()->value(), 35.5);

        // Low at or above high: refused with a message, nothing changed, no NaN.
        dialog->lowBox()->setValue(900.0);
        QCOMPARE(view.displayRange().low, 35.5);
        QCOMPARE(view.displayRange().high, 800.0);
        QVERIFY2(dialog->problem().contains(QStringLiteral("must be below")), qPrintable(dialog->problem()));
        QVERIFY(dialog->findChild<QLabel*>(QStringLiteral("rangeMessage"))->isVisible());
        dialog->lowBox()->setValue(800.0);
        QCOMPARE(view.displayRange().low, 35.5);
        QVERIFY(!dialog->problem().isEmpty());
        view.setUserRange(DisplayRange{5.0, std::nan("")}); // nor through the view itself
        QCOMPARE(view.displayRange().low, 35.5);
        dialog->lowBox()->setValue(100.0);
        QVERIFY(dialog->problem().isEmpty());
        QCOMPARE(view.displayRange().low, 100.0);

        // Automatic: the program's range again (here the shared one), then with none the clip percentiles.
        QVERIFY(dialog->automaticButton()->isEnabled());
        QTest::mouseClick(dialog->automaticButton(), Qt::LeftButton);
        QVERIFY(!view.userRange());
        QCOMPARE(view.displayRange().low, 0.0);
        QCOMPARE(view.displayRange().high, 5000.0);
        view.setFixedRange(std::nullopt);
        dialog->highBox()->setValue(900.0);
        QCOMPARE(view.displayRange().high, 900.0);
        QTest::mouseClick(dialog->automaticButton(), Qt::LeftButton);
        QCOMPARE(view.displayRange().low, view.autoRange().low);
        QCOMPARE(view.displayRange().high, view.autoRange().high);
        QCOMPARE(dialog->highBox()->value(), view.autoRange().high);
        QCOMPARE(rangeLineKeys(dialog), (std::vector<double>{view.autoRange().low, view.autoRange().high}));
        QVERIFY(!dialog->automaticButton()->isEnabled());

        // Readable: the dialog fits a 1280 x 800 screen, no label or box cut, the histogram's ticks apart.
        dialog->lowBox()->setValue(1e-6);
        dialog->resize(dialog->sizeHint());
        settle(dialog);
        QVERIFY(dialog->width() <= 1280 && dialog->height() <= 760);
        QVERIFY(wfs::test::overlappingLabels(dialog->histogramPlot()).isEmpty());
        for (QDoubleSpinBox* box : {dialog->lowBox(), dialog->highBox()})
            QVERIFY2(wfs::test::cutSpinBoxText(box).isEmpty(), qPrintable(wfs::test::cutSpinBoxText(box)));
        QCOMPARE(dialog->lowBox()->text(), QStringLiteral("1e-06"));
        for (QLabel* label : dialog->findChildren<QLabel*>())
            if (label->isVisible() && !label->wordWrap())
                QVERIFY2(label->width() >= label->sizeHint().width(), qPrintable(label->text()));
        if (const QString dump = qEnvironmentVariable("WFS_PICTURES_DUMP"); !dump.isEmpty())
            dialog->grab().save(dump + QStringLiteral("/display-range.png"));

        // An image of another size is other data: the typed range goes.
        view.setImage(gaussian(32, 32, 4, 100, 1, 16, 16), QStringLiteral("Data"), QStringLiteral("counts"));
        QVERIFY(!view.userRange());
        QCOMPARE(view.displayRange().high, view.autoRange().high);
    }

    // Issue 42 item 2: "Line profile…": press, drag and release on the image draw a line (the view does not pan); a
    // window shows the bilinear values along it, one sample per image pixel of length at least, against the distance
    // in the axes' unit; Esc cancels; the profile follows a live update; CSV with the units in its header.
    void lineProfile()
    {
        ImageView view;
        Image ramp(60, 40);
        for (int r = 0; r < ramp.height; ++r)
            for (int c = 0; c < ramp.width; ++c)
                ramp.at(r, c) = 2.0 * c + r + 5.0;
        view.setImage(ramp, QStringLiteral("Ramp"), QStringLiteral("counts"));
        view.resize(700, 520);
        view.show();
        settle(&view);
        QCustomPlot* plot = view.plot();
        const QCPRange xBefore = plot->xAxis->range(), yBefore = plot->yAxis->range();
        LineProfileWindow* window = openFromMenu<LineProfileWindow>(&view, QStringLiteral("Line profile…"));
        QVERIFY(window);
        QVERIFY(window->isDrawing());
        QVERIFY(!window->line());
        dragLine(plot, QPointF(10, 20), QPointF(40, 20));
        settle(&view);
        QVERIFY(!window->isDrawing());
        QVERIFY(window->line());
        QVERIFY(window->isVisible() && !window->isModal());
        // Not panned, not zoomed.
        QCOMPARE(plot->xAxis->range().lower, xBefore.lower);
        QCOMPARE(plot->yAxis->range().upper, yBefore.upper);
        const QLineF line = *window->line();
        const double pixel = 1.0 / view.screenPixelsPerImagePixel(); // a screen pixel's worth of image pixels
        QVERIFY2(std::abs(line.x1() - 10) <= pixel && std::abs(line.y1() - 20) <= pixel && std::abs(line.x2() - 40) <= pixel
                     && std::abs(line.y2() - 20) <= pixel,
                 qPrintable(QStringLiteral("(%1, %2) to (%3, %4)").arg(line.x1()).arg(line.y1()).arg(line.x2()).arg(line.y2())));
        const size_t n = window->profile().value.size();
        QCOMPARE(n, size_t(std::ceil(line.length())) + 1);
        QVERIFY(n >= 31 && n <= 32);
        for (size_t i = 0; i < n; ++i) {
            const double t = double(i) / double(n - 1);
            const double x = line.x1() + t * (line.x2() - line.x1()), y = line.y1() + t * (line.y2() - line.y1());
            WFS_VERIFY_CLOSE(window->profile().value[i], 2.0 * x + y + 5.0, 1e-12, 1e-9);
            WFS_VERIFY_CLOSE(window->distances()[i], t * line.length(), 1e-12, 1e-9);
        }
        QCOMPARE(window->profilePlot()->graph(0)->dataCount(), int(n));
        QCOMPARE(window->profilePlot()->xAxis->label(), QStringLiteral("distance along the line (pixel)"));
        QCOMPARE(window->profilePlot()->yAxis->label(), QStringLiteral("value (counts)"));
        const QStringList rows = window->csv().split(QLatin1Char('\n'), Qt::SkipEmptyParts);
        QCOMPARE(rows.size(), int(n) + 1);
        QCOMPARE(rows.front(), QStringLiteral("distance (pixel),value (counts)"));
        QCOMPARE(rows[1].split(QLatin1Char(',')).size(), 2);
        QCOMPARE(rows[1].split(QLatin1Char(',')).front().toDouble(), 0.0);
        QTest::mouseClick(window->findChild<QPushButton*>(QStringLiteral("copyProfileCsv")), Qt::LeftButton);
        QCOMPARE(QApplication::clipboard()->text(), window->csv());

        // Live: a new image of the same size, the profile follows.
        Image doubled = ramp;
        for (double& v : doubled.pixels)
            v *= 2.0;
        view.setImage(doubled, QStringLiteral("Ramp"), QStringLiteral("counts"));
        settle(&view);
        QCOMPARE(window->profile().value.size(), n);
        WFS_VERIFY_CLOSE(window->profile().value.back(), 2.0 * (2.0 * line.x2() + line.y2() + 5.0), 1e-12, 1e-9);

        // Esc cancels a line being drawn: the one before stays.
        startLineProfile(&view);
        QVERIFY(window->isDrawing());
        QTest::mousePress(plot, Qt::LeftButton, Qt::NoModifier, toScreen(plot, QPointF(5, 5)));
        QTest::mouseMove(plot, toScreen(plot, QPointF(20, 30)));
        QTest::keyClick(plot, Qt::Key_Escape);
        QVERIFY(!window->isDrawing());
        QCOMPARE(*window->line(), line);
        QTest::mouseRelease(plot, Qt::LeftButton, Qt::NoModifier, toScreen(plot, QPointF(20, 30)));
        QCOMPARE(*window->line(), line);

        // In physical units (0.1 µm per pixel): the distance too, the line drawn where the same pixels are.
        view.setAxisScale(AxisScale{-3.0, -2.0, 0.1, QStringLiteral("x (µm)"), QStringLiteral("y (µm)"), QStringLiteral("µm")});
        settle(&view);
        QCOMPARE(window->distanceUnit(), QStringLiteral("µm"));
        WFS_VERIFY_CLOSE(window->distances().back(), 0.1 * line.length(), 1e-12, 1e-12);
        startLineProfile(&view);
        dragLine(plot, QPointF(-2.0, -1.0), QPointF(-2.0, 1.5)); // pixels (10, 10) to (10, 35): 25 px, 2.5 µm
        settle(&view);
        const QLineF vertical = *window->line();
        QVERIFY2(
            std::abs(vertical.x1() - 10) < 0.2 && std::abs(vertical.y1() - 10) < 0.2 && std::abs(vertical.y2() - 35) < 0.2,
            qPrintable(QStringLiteral("(%1, %2) to (%3, %4)").arg(vertical.x1()).arg(vertical.y1()).arg(vertical.x2()).arg(vertical.y2())));
        QCOMPARE(window->profile().value.size(), size_t(std::ceil(vertical.length())) + 1);
        WFS_VERIFY_CLOSE(window->distances().back(), 0.1 * vertical.length(), 1e-12, 1e-12);
        QVERIFY(std::abs(window->distances().back() - 2.5) < 0.03);
        WFS_VERIFY_CLOSE(window->profile().value.back(), 2.0 * (2.0 * vertical.x2() + vertical.y2() + 5.0), 1e-12, 1e-9);
        QCOMPARE(window->profilePlot()->xAxis->label(), QStringLiteral("distance along the line (µm)"));
        QVERIFY(window->csv().startsWith(QStringLiteral("distance (µm),value (counts)\n")));

        // Readable in a 1280 x 800 screen.
        window->resize(window->sizeHint());
        settle(window);
        QVERIFY(window->width() <= 1280 && window->height() <= 760);
        QVERIFY(wfs::test::overlappingLabels(window->profilePlot()).isEmpty());
        if (const QString dump = qEnvironmentVariable("WFS_PICTURES_DUMP"); !dump.isEmpty()) {
            window->grab().save(dump + QStringLiteral("/line-profile.png"));
            view.grab().save(dump + QStringLiteral("/line-profile-view.png"));
        }
        // Closed: the line goes from the image.
        const int items = plot->itemCount();
        window->close();
        QCoreApplication::processEvents();
        QVERIFY(!view.findChild<LineProfileWindow*>());
        QCOMPARE(plot->itemCount(), items - 1);
    }

    // Issue 42: on background-subtracted data (noise below zero) the log stretch started at the deepest noise and
    // showed the background at 42 % of the colour map. The stretches start at zero there: the background is within
    // the bottom 6 % (asinh: 0.176 / 3.17 of the bar is the noise below zero), zero is labelled, and the decades
    // above it are spread along the bar.
    void stretchesKeepTheBackgroundDark_data()
    {
        QTest::addColumn<int>("stretch");
        QTest::addColumn<double>("backgroundAtMost");
        QTest::addColumn<double>("faintWingLift"); // what 1 % of the peak adds along the bar, at the least
        QTest::addColumn<double>("firstDecade");   // the least power of ten labelled (asinh is linear near zero)
        QTest::newRow("log") << int(Stretch::Log) << 0.0 << 0.3 << 10.0;
        QTest::newRow("sqrt") << int(Stretch::Sqrt) << 0.0 << 0.09 << 10.0;
        QTest::newRow("asinh") << int(Stretch::Asinh) << 0.06 << 0.03 << 100.0;
    }
    void stretchesKeepTheBackgroundDark()
    {
        QFETCH(int, stretch);
        QFETCH(double, backgroundAtMost);
        QFETCH(double, faintWingLift);
        QFETCH(double, firstDecade);
        const DisplayRange range{-17.6, 1000.0};
        QVERIFY2(stretchPosition(0.0, range, Stretch(stretch)) <= backgroundAtMost + 1e-12,
                 qPrintable(QString::number(stretchPosition(0.0, range, Stretch(stretch)))));
        QCOMPARE(stretchPosition(-17.6, range, Stretch(stretch)), 0.0);
        QCOMPARE(stretchPosition(1000.0, range, Stretch(stretch)), 1.0);
        double previous = -1.0;
        for (double v = -17.6; v <= 1000.0; v += 0.7) {
            const double p = stretchPosition(v, range, Stretch(stretch));
            QVERIFY2(p >= previous, qPrintable(QStringLiteral("not monotonic at %1").arg(v)));
            previous = p;
        }
        // A faint wing (10 counts) is lifted off the background.
        QVERIFY(stretchPosition(10.0, range, Stretch(stretch)) - stretchPosition(0.0, range, Stretch(stretch)) > faintWingLift);
        const std::vector<double> ticks = colorBarTicks(range, Stretch(stretch), 300.0, 18.0);
        QVERIFY(std::find(ticks.begin(), ticks.end(), 0.0) != ticks.end());
        for (double decade = firstDecade; decade <= 1000.0; decade *= 10.0)
            QVERIFY2(std::find(ticks.begin(), ticks.end(), decade) != ticks.end(), qPrintable(QString::number(decade)));
        // Positive data keep the stretch from their low end, as before.
        const DisplayRange positive{103.2, 5000.0};
        QCOMPARE(stretchPosition(103.2, positive, Stretch(stretch)), 0.0);
        QVERIFY(stretchPosition(153.2, positive, Stretch(stretch)) > 0.03);
    }

    // The colour bar's labels under a log stretch: decades and 1-2-5 steps that the stretch spreads
    // along the bar, none closer than a label's height, no long unlabelled stretch.
    void logStretchTicks_data()
    {
        QTest::addColumn<double>("low");
        QTest::addColumn<double>("high");
        QTest::addColumn<int>("stretch");
        QTest::addColumn<double>("length");
        QTest::newRow("PSF 0..1 log, 300 px") << 0.0 << 1.0 << int(Stretch::Log) << 300.0;
        QTest::newRow("PSF 0..1 log, 150 px") << 0.0 << 1.0 << int(Stretch::Log) << 150.0;
        QTest::newRow("counts 103..5000 log, 400 px") << 103.2 << 5000.0 << int(Stretch::Log) << 400.0;
        QTest::newRow("counts 103..5000 asinh, 300 px") << 103.2 << 5000.0 << int(Stretch::Asinh) << 300.0;
        QTest::newRow("-3..3 linear, 300 px") << -3.0 << 3.0 << int(Stretch::Linear) << 300.0;
        // Background-subtracted counts (issue 42: the bar read "-17.6, -17, -10, 100").
        QTest::newRow("counts -17.6..1000 log, 300 px") << -17.6 << 1000.0 << int(Stretch::Log) << 300.0;
        QTest::newRow("counts -17.6..1000 asinh, 300 px") << -17.6 << 1000.0 << int(Stretch::Asinh) << 300.0;
    }
    void logStretchTicks()
    {
        QFETCH(double, low);
        QFETCH(double, high);
        QFETCH(int, stretch);
        QFETCH(double, length);
        const double label = 18.0; // a label's height plus a gap
        const DisplayRange range{low, high};
        const std::vector<double> ticks = colorBarTicks(range, Stretch(stretch), length, label);
        QVERIFY2(ticks.size() >= 4, qPrintable(QString::number(ticks.size())));
        std::vector<double> along;
        for (double v : ticks) {
            QVERIFY(v >= low - 1e-9 && v <= high + 1e-9);
            along.push_back(stretchPosition(v, range, Stretch(stretch)) * length);
        }
        for (size_t i = 1; i < along.size(); ++i) {
            QVERIFY2(along[i] - along[i - 1] >= label,
                     qPrintable(QStringLiteral("%1 and %2 are %3 px apart").arg(ticks[i - 1]).arg(ticks[i]).arg(along[i] - along[i - 1])));
            QVERIFY2(along[i] - along[i - 1] <= 0.4 * length,
                     qPrintable(QStringLiteral("nothing between %1 and %2").arg(ticks[i - 1]).arg(ticks[i])));
        }
        QVERIFY2(along.front() <= 0.25 * length && along.back() >= 0.75 * length,
                 qPrintable(QStringLiteral("ticks only from %1 to %2 px").arg(along.front()).arg(along.back())));
        // Round values: each is a whole multiple of a power of ten no finer than 1/1000 of the range.
        for (double v : ticks) {
            const double unit = std::pow(10.0, std::floor(std::log10(high - low)) - 4);
            QVERIFY2(std::abs(v / unit - std::round(v / unit)) < 1e-6, qPrintable(QString::number(v, 'g', 12)));
        }
    }
};

QTEST_MAIN(TestPictures)
#include "tst_pictures.moc"
