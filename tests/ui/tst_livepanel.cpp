// The Live tab during a live demo (issue 25), on the offscreen platform at 1280 x 800 and 1920 x 1080: the
// simulated camera's stacks reach the trend through the watched folder; the trend shows the camera's terms with
// the crossings of a threshold marked; the pictures are readable (square image pixels, data and model at one
// scale and titled, colour bars along their length, no tick labels running into each other, axis rectangles of
// at least 200 x 150 px, legends off the axes, combo boxes whole); and moving a slider moves the fitted term.
// Waits count rows; the only limits are hang guards.
#include "LiveTrend.h"
#include "ReadabilityChecks.h"

#include "ImageView.h"
#include "LivePanel.h"
#include "MainWindow.h"
#include "PlanesPanel.h"

#include "engine/Presets.h"

#include <qcustomplot.h>

#include <QComboBox>
#include <QDateTime>
#include <QDoubleSpinBox>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QSignalSpy>
#include <QSlider>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QtTest>

#include <cmath>

using namespace wfs;
using namespace wfs::ui;

using wfs::test::lastTrendValue;

namespace {

constexpr int kGuardMs = 300000;

} // namespace

class TestLivePanel : public QObject {
    Q_OBJECT

    // What a reader needs of the Live tab as shown now (the phase page or the data / model page).
    static void checkPictures(MainWindow& window, const QSize& size, QStringList& problems)
    {
        LivePanel* live = window.livePanel();
        const QString page = live->latestPages()->tabText(live->latestPages()->currentIndex());
        const int before = int(problems.size());
        int images = 0;
        for (ImageView* view : live->findChildren<ImageView*>()) {
            if (!test::isShownOnScreen(view->plot()) || !view->hasImage())
                continue;
            ++images;
            if (std::abs(view->pixelAspect() - 1.0) > 0.02)
                problems << QStringLiteral("%1: pixel aspect %2").arg(test::describe(view)).arg(view->pixelAspect());
            if (view->title().isEmpty())
                problems << QStringLiteral("%1: no title").arg(test::describe(view));
        }
        if (images < 1)
            problems << QStringLiteral("no image view shown");
        ImageView* data = live->planesPanel()->dataView();
        ImageView* model = live->planesPanel()->modelView();
        if (test::isShownOnScreen(data->plot())
            && std::abs(data->screenPixelsPerImagePixel() - model->screenPixelsPerImagePixel()) > 0.01 * data->screenPixelsPerImagePixel())
            problems << QStringLiteral("data at %1 px per pixel, model at %2")
                            .arg(data->screenPixelsPerImagePixel())
                            .arg(model->screenPixelsPerImagePixel());
        for (QCustomPlot* plot : live->findChildren<QCustomPlot*>()) {
            if (!test::isShownOnScreen(plot))
                continue;
            auto* view = qobject_cast<ImageView*>(plot->parentWidget());
            if (!view || view->hasImage())
                problems << test::colourBarProblems(plot);
            problems << test::overlappingLabels(plot);
            const QRect axes = plot->axisRect()->rect();
            if (axes.width() < 200 || axes.height() < 150)
                problems << QStringLiteral("%1: axis rectangle %2 x %3").arg(test::describe(plot)).arg(axes.width()).arg(axes.height());
            if (plot->legend && plot->legend->visible() && plot->legend->itemCount() > 0 && plot->legend->outerRect().intersects(axes))
                problems << QStringLiteral("%1: the legend covers the axes").arg(test::describe(plot));
            // Stacks are counted: the stack axis is ticked at whole numbers only.
            if (plot->xAxis->label() == QLatin1String("stack"))
                for (double tick : plot->xAxis->tickVector())
                    if (tick != std::round(tick))
                        problems << QStringLiteral("%1: a tick at stack %2").arg(test::describe(plot)).arg(tick);
        }
        for (QComboBox* combo : live->findChildren<QComboBox*>())
            if (test::isShownOnScreen(combo) && combo->objectName() != QLatin1String("planeChoice"))
                if (const QString cut = test::cutComboText(combo); !cut.isEmpty())
                    problems << cut;
        if (const QString shot = qEnvironmentVariable("WFS_LIVE_SCREENSHOT_DIR"); !shot.isEmpty())
            window.grab().save(QStringLiteral("%1/live-%2-%3x%4.png")
                                   .arg(shot, page.section(QLatin1Char(' '), 0, 0))
                                   .arg(size.width())
                                   .arg(size.height()));
        for (int i = before; i < problems.size(); ++i)
            problems[i] = page + QStringLiteral(": ") + problems[i];
    }

    // Watches `folder` with `settings` until one row is drawn, then stops the watch; the status line after.
    static QString watchOneRow(LivePanel& live, const QString& folder, const Session& settings)
    {
        live.resize(1280, 800);
        live.show();
        QSignalSpy rows(&live, &LivePanel::rowAdded);
        live.watchFolder(folder, settings);
        if (!QTest::qWaitFor([&] { return rows.size() == 1; }, kGuardMs))
            return QStringLiteral("no row drawn");
        QSignalSpy stopped(&live, &LivePanel::stopped);
        live.stop();
        if (!stopped.wait(kGuardMs))
            return QStringLiteral("the watch did not stop");
        for (QLabel* label : live.findChildren<QLabel*>())
            if (label->text().startsWith(QLatin1String("Watching ")))
                return label->text();
        return QStringLiteral("no status line");
    }

private slots:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        QCoreApplication::setOrganizationName(QStringLiteral("WavefrontStudioTests"));
        QCoreApplication::setApplicationName(QStringLiteral("tst_livepanel"));
    }

    // Issue 42: the trend's lines are told apart from the back of a room (every line at least 2 px; two terms whose
    // colours are near differ in dash), and the default threshold is no demo slider's value: a marker that flickers
    // with the noise from stack to stack would be the default's doing. (Z4 / Z8 and Z5 / Z9 had near colours in
    // 1.2 px solid lines; the threshold equalled Z4's 0.05 wave.)
    void trendLinesAndThresholdReadFromAfar()
    {
        MainWindow window;
        LivePanel* live = window.livePanel();
        auto* trend = live->findChild<QCustomPlot*>(QStringLiteral("liveTrend"));
        QVERIFY(trend);
        std::vector<QPen> pens;
        for (int i = 0; i < trend->graphCount(); ++i)
            if (trend->graph(i)->name().startsWith(QLatin1Char('Z')))
                pens.push_back(trend->graph(i)->pen());
        QCOMPARE(pens.size(), size_t(8));
        for (size_t a = 0; a < pens.size(); ++a) {
            QVERIFY2(pens[a].widthF() >= 2.0, qPrintable(QStringLiteral("Z%1: %2 px").arg(a + 4).arg(pens[a].widthF())));
            for (size_t b = a + 1; b < pens.size(); ++b) {
                const QColor ca = pens[a].color(), cb = pens[b].color();
                const double distance = std::hypot(ca.red() - cb.red(), ca.green() - cb.green(), ca.blue() - cb.blue());
                QVERIFY2(distance >= 120.0 || pens[a].style() != pens[b].style(),
                         qPrintable(QStringLiteral("Z%1 and Z%2: colours %3 apart, same dash").arg(a + 4).arg(b + 4).arg(distance)));
            }
        }
        auto* threshold = live->findChild<QDoubleSpinBox*>(QStringLiteral("liveThreshold"));
        QVERIFY(threshold);
        for (const TruthTerm& term : LiveCameraSettings{}.terms)
            QVERIFY2(
                std::abs(std::abs(term.valueWaves) - threshold->value()) >= 0.005,
                qPrintable(
                    QStringLiteral("the threshold %1 is Z%2's value %3").arg(threshold->value()).arg(term.index).arg(term.valueWaves)));
    }

    void liveDemoReadable_data()
    {
        QTest::addColumn<QSize>("size");
        QTest::newRow("1280x800") << QSize(1280, 800);
        QTest::newRow("1920x1080") << QSize(1920, 1080);
    }

    void liveDemoReadable()
    {
        QFETCH(QSize, size);
        MainWindow window;
        window.resize(size);
        window.show();
        LivePanel* live = window.livePanel();
        QSignalSpy rows(live, &LivePanel::rowAdded);
        window.startLiveDemo();
        QVERIFY(window.tabs()->currentWidget() == live);
        QTRY_VERIFY_WITH_TIMEOUT(rows.size() >= 8, kGuardMs);
        test::settle(&window);
        QCOMPARE(window.size(), size);

        // The camera's wavefront (Noll 5 = -0.08 wave, 7 = 0.04) in the trend, through the folder and the fits.
        QVERIFY(std::abs(lastTrendValue(live->trendPlot(), 5).value_or(1.0) + 0.08) < 0.01);
        QVERIFY(std::abs(lastTrendValue(live->trendPlot(), 7).value_or(1.0) - 0.04) < 0.01);
        // Noll 5 lies beyond the default threshold of 0.05 wave: its points are marked.
        QCPGraph* over = nullptr;
        for (int i = 0; i < live->trendPlot()->graphCount(); ++i)
            if (live->trendPlot()->graph(i)->name() == QLatin1String("beyond threshold"))
                over = live->trendPlot()->graph(i);
        QVERIFY(over && over->dataCount() >= 8);
        live->setThreshold(5, 0.2);
        live->setThreshold(4, 0.2);
        live->setThreshold(7, 0.2);
        QCOMPARE(over->dataCount(), 0); // every term within its threshold now
        test::settle(&window);

        // A hand on a slider: Noll 6 to +0.15 wave; the fitted Noll 6 follows.
        QSlider* noll6 = nullptr;
        for (QSlider* s : live->findChildren<QSlider*>())
            if (s->property("nollIndex").toInt() == 6)
                noll6 = s;
        QVERIFY(noll6);
        noll6->setValue(15);
        QTRY_VERIFY_WITH_TIMEOUT(std::abs(lastTrendValue(live->trendPlot(), 6).value_or(0.0) - 0.15) < 0.01, kGuardMs);

        // The pictures, as drawn once the demo has stopped: the phase page, then the data / model page. Checked at
        // rest, so that no stack arriving mid-check (on a loaded machine) can catch a view between its new image and
        // its layout; what a reader studies is the last stack's picture.
        QSignalSpy stopped(live, &LivePanel::stopped);
        live->stop();
        QVERIFY(stopped.wait(kGuardMs));
        QVERIFY(!live->isWatching());
        test::settle(&window);
        QStringList problems;
        checkPictures(window, size, problems);
        live->latestPages()->setCurrentIndex(1);
        test::settle(&window);
        checkPictures(window, size, problems);
        QVERIFY2(problems.isEmpty(), qPrintable(problems.join(QStringLiteral("\n  "))));
    }

    // Live arbitration through the Live tab (issue 47 item 2): four complete stacks in the folder before the watch
    // starts, their modification times increasing in an order that is not their names'. The tab shows one fitted stack,
    // the newest, and the status line counts the other three as skipped; the folder's log says the same.
    void newestWinsInTheLiveTab()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        PresetOptions po;
        po.grid = 64;
        po.order = 4;
        const PresetCase demo = makePreset("demo", po);
        const QStringList byTime = {QStringLiteral("s_0003.fits"), QStringLiteral("s_0001.fits"), QStringLiteral("s_0004.fits"),
                                    QStringLiteral("s_0002.fits")};
        const qint64 base = QDateTime::fromString(QStringLiteral("2026-01-05T10:00:00Z"), Qt::ISODate).toSecsSinceEpoch();
        for (int i = 0; i < byTime.size(); ++i) {
            QFile f(dir.filePath(byTime[i]));
            QVERIFY(f.open(QIODevice::WriteOnly));
            const QByteArray bytes = presetFitsBytes(demo, "demo", std::uint64_t(i + 1));
            QCOMPARE(f.write(bytes), bytes.size());
            QVERIFY(f.setFileTime(QDateTime::fromSecsSinceEpoch(base + 60 * i), QFileDevice::FileModificationTime));
        }
        LivePanel live;
        Session settings;
        settings.model.order = 4;
        settings.solver.threads = 1;
        const QString status = watchOneRow(live, dir.path(), settings);
        QCOMPARE(live.stacksShown(), 1);
        QVERIFY2(status.contains(QStringLiteral(" · 1 fitted · 3 skipped (newer stacks came first)")), qPrintable(status));
        QVERIFY2(!status.contains(QLatin1String("failed")), qPrintable(status));
        QFile log(dir.filePath(QStringLiteral("live.jsonl")));
        QVERIFY(log.open(QIODevice::ReadOnly));
        const QList<QByteArray> lines = log.readAll().trimmed().split('\n');
        QCOMPARE(lines.size(), 1);
        const QJsonObject row = QJsonDocument::fromJson(lines.front()).object();
        QCOMPARE(row.value(QStringLiteral("stack")).toString(), byTime.back());
        QStringList skipped;
        for (const QJsonValue& v : row.value(QStringLiteral("skipped")).toArray())
            skipped << v.toString();
        QCOMPARE(skipped, byTime.mid(0, 3));
    }

    // Issue 45 item 2: the Live tab draws the watch's typed record, not its log row read back. Its trend is in Noll terms
    // whatever the settings' ordering (by each term's (n, m): under ANSI, astigmatism (2, -2) is index 3 and Noll's
    // Z5), and a stack the model describes poorly (the log's "poor-fit": the demo's coma and spherical fitted at order
    // 2) is drawn with its verdict, not counted as failed, as it was while the tab compared the row's status with "ok".
    void trendDrawsTheTypedRecord()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        PresetOptions po;
        po.grid = 64;
        po.order = 4;
        {
            QFile f(dir.filePath(QStringLiteral("s_0001.fits")));
            QVERIFY(f.open(QIODevice::WriteOnly));
            const QByteArray bytes = presetFitsBytes(makePreset("demo", po), "demo", 1);
            QCOMPARE(f.write(bytes), bytes.size());
        }
        LivePanel live;
        Session settings;
        settings.model.order = 2;
        settings.model.ordering = ZernikeOrdering::Ansi;
        settings.solver.threads = 1;
        const QString status = watchOneRow(live, dir.path(), settings);
        QVERIFY2(status.startsWith(QLatin1String("Watching ")) && !status.contains(QLatin1String("failed")), qPrintable(status));
        QFile log(dir.filePath(QStringLiteral("live.jsonl")));
        QVERIFY(log.open(QIODevice::ReadOnly));
        const QJsonObject row = QJsonDocument::fromJson(log.readAll().trimmed()).object();
        QCOMPARE(row.value(QStringLiteral("status")).toString(), QStringLiteral("poor-fit"));
        QCOMPARE(live.stacksShown(), 1);
        std::optional<double> astigmatism;
        for (const QJsonValue& v : row.value(QStringLiteral("coefficients")).toArray())
            if (v.toObject().value(QStringLiteral("index")).toInt() == 3) // ANSI 3: (2, -2)
                astigmatism = v.toObject().value(QStringLiteral("value_waves")).toDouble();
        QVERIFY(astigmatism);
        const std::optional<double> drawn = lastTrendValue(live.trendPlot(), 5); // Noll 5: (2, -2)
        QVERIFY(drawn);
        QCOMPARE(*drawn, *astigmatism);
    }
};

QTEST_MAIN(TestLivePanel)
#include "tst_livepanel.moc"
