// The Live tab's "Hold reference" (issue 25) during a live demo: once a stack is held, the coefficient trend and
// the phase map show each new stack minus it (core's runs comparison, computed on the watch's thread), titled as
// a difference; a hand on a slider (Noll 6 by +0.1 wave) shows as about 0.1 wave in that term and near zero in
// the others; releasing the reference brings the absolute values back. Pictures at 1280 x 800 and 1920 x 1080
// with the reference held: the trend's title whole, axes of at least 200 x 150 px, no labels over each other,
// colour bars along their length. Waits count rows; the only limits are hang guards.
#include "LiveTrend.h"
#include "ReadabilityChecks.h"

#include "ImageView.h"
#include "LivePanel.h"
#include "MainWindow.h"
#include "PhasePanel.h"

#include <qcustomplot.h>

#include <QPushButton>
#include <QSignalSpy>
#include <QSlider>
#include <QStandardPaths>
#include <QtTest>

#include <cmath>

using namespace wfs;
using namespace wfs::ui;

using wfs::test::lastTrendValue;
using wfs::test::termGraph;
using wfs::test::termSlider;

namespace {

constexpr int kGuardMs = 300000;
// Two noisy fits (10^6 photons a plane, 128 x 128) differ by well under this in any one term.
constexpr double kToleranceWaves = 0.02;

// The trend's title element (the plot's only QCPTextElement).
QCPTextElement* trendTitleElement(QCustomPlot* trend)
{
    for (QCPLayoutElement* e : trend->plotLayout()->elements(true))
        if (auto* text = qobject_cast<QCPTextElement*>(e))
            return text;
    return nullptr;
}

} // namespace

class TestLiveReference : public QObject {
    Q_OBJECT

private slots:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        QCoreApplication::setOrganizationName(QStringLiteral("WavefrontStudioTests"));
        QCoreApplication::setApplicationName(QStringLiteral("tst_livereference"));
    }

    void holdShowsDifferences_data()
    {
        QTest::addColumn<QSize>("size");
        QTest::newRow("1280x800") << QSize(1280, 800);
        QTest::newRow("1920x1080") << QSize(1920, 1080);
    }

    void holdShowsDifferences()
    {
        QFETCH(QSize, size);
        MainWindow window;
        window.resize(size);
        window.show();
        LivePanel* live = window.livePanel();
        QSignalSpy rows(live, &LivePanel::rowAdded);
        QVERIFY(!live->holdButton()->isEnabled()); // nothing to hold before a stack is shown
        window.startLiveDemo();
        QTRY_VERIFY_WITH_TIMEOUT(rows.size() >= 3 && live->holdButton()->isEnabled(), kGuardMs);
        QVERIFY(!live->trendTitle().contains(QStringLiteral("Difference")));

        QVERIFY(live->holdReference());
        const int reference = live->referenceStack();
        QVERIFY(reference >= 1);
        QVERIFY(live->holdButton()->isChecked());
        QVERIFY(live->trendTitle().contains(QStringLiteral("Difference from stack %1").arg(reference)));
        QVERIFY(live->trendPlot()->yAxis->label().contains(QStringLiteral("difference")));
        QCOMPARE(termGraph(live->trendPlot(), 6)->dataCount(), 0); // no absolute values among the differences

        // A hand on a slider: Noll 6 by +0.1 wave. The difference in Noll 6 follows; the others stay near zero.
        QSlider* noll6 = termSlider(live, 6);
        QVERIFY(noll6);
        noll6->setValue(noll6->value() + 10);
        QTRY_VERIFY_WITH_TIMEOUT(std::abs(lastTrendValue(live->trendPlot(), 6).value_or(0.0) - 0.1) < kToleranceWaves, kGuardMs);
        for (int noll = 4; noll <= 11; ++noll)
            if (noll != 6)
                QVERIFY2(
                    std::abs(lastTrendValue(live->trendPlot(), noll).value_or(1.0)) < kToleranceWaves,
                    qPrintable(
                        QStringLiteral("Z%1 differs by %2 wave").arg(noll).arg(lastTrendValue(live->trendPlot(), noll).value_or(1.0))));
        QCPGraph* z6 = termGraph(live->trendPlot(), 6);
        QVERIFY(z6->data()->constBegin()->key > reference); // only stacks after the reference

        // The phase map shows core's difference map, titled as one: RMS about 0.1 wave (Noll 6 is RMS-normalised).
        QTRY_VERIFY_WITH_TIMEOUT(
            live->shownDifference() &&
                [&] {
                    for (const ComparedTerm& t : live->shownDifference()->terms)
                        if (t.index == 6)
                            return std::abs(t.differenceWaves - 0.1) < kToleranceWaves;
                    return false;
                }(),
            kGuardMs);
        QVERIFY(std::abs(live->shownDifference()->rmsDifferenceWaves - 0.1) < kToleranceWaves);
        ImageView* phase = live->phasePanel()->view();
        QVERIFY(phase->hasImage());
        QVERIFY2(phase->title().startsWith(QStringLiteral("Phase difference: stack"))
                     && phase->title().endsWith(QStringLiteral("− stack %1").arg(reference)),
                 qPrintable(phase->title()));

        // The pictures with the reference held.
        test::settle(&window);
        QStringList problems;
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
        }
        QCPTextElement* title = trendTitleElement(live->trendPlot());
        QVERIFY(title);
        if (QFontMetrics(title->font()).horizontalAdvance(title->text()) > title->outerRect().width())
            problems << QStringLiteral("the trend's title is cut: %1").arg(title->text());
        if (const QString shot = qEnvironmentVariable("WFS_LIVE_SCREENSHOT_DIR"); !shot.isEmpty())
            window.grab().save(QStringLiteral("%1/live-reference-%2x%3.png").arg(shot).arg(size.width()).arg(size.height()));
        QVERIFY2(problems.isEmpty(), qPrintable(problems.join(QStringLiteral("\n  "))));

        // Released: the absolute values again, in the trend and on the map.
        live->releaseReference();
        QCOMPARE(live->referenceStack(), 0);
        QVERIFY(!live->holdButton()->isChecked());
        QVERIFY(!live->shownDifference());
        QVERIFY(!live->trendTitle().contains(QStringLiteral("Difference")));
        const double noll6Now = noll6->value() / 100.0;
        QVERIFY(std::abs(lastTrendValue(live->trendPlot(), 6).value_or(1.0) - noll6Now) < 0.01);
        QVERIFY(std::abs(lastTrendValue(live->trendPlot(), 5).value_or(1.0) + 0.08) < 0.01); // the camera's -0.08 wave
        QVERIFY(termGraph(live->trendPlot(), 6)->data()->constBegin()->key <= reference);    // the stacks before it too
        QTRY_COMPARE_WITH_TIMEOUT(phase->title(), QStringLiteral("Phase"), kGuardMs);
        live->stop();
    }
};

QTEST_MAIN(TestLiveReference)
#include "tst_livereference.moc"
