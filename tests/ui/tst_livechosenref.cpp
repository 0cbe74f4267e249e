// The Live tab's "Hold reference" with a CHOSEN stack (issue 25): not only the stack shown, but any stack the watch
// keeps, picked in the list beside the button or by clicking a point of the trend. Held, the stacks fitted after it
// show at once as their differences from it (compared on the watch's thread by the runs comparison), each exactly
// its coefficients minus the reference's; every new stack follows, and a hand on a slider shows in that term alone.
// Waits count rows; the only limits are hang guards.
#include "LiveTrend.h"

#include "ImageView.h"
#include "LivePanel.h"
#include "MainWindow.h"
#include "PhasePanel.h"

#include <qcustomplot.h>

#include <QComboBox>
#include <QSignalSpy>
#include <QSlider>
#include <QStandardPaths>
#include <QtTest>

#include <cmath>
#include <map>

using namespace wfs;
using namespace wfs::ui;

using wfs::test::lastTrendValue;
using wfs::test::termGraph;
using wfs::test::termSlider;

namespace {

constexpr int kGuardMs = 300000;
// A difference is the two coefficients subtracted: only rounding separates it from the trend's own values.
constexpr double kExactWaves = 1e-9;
// Two noisy fits (10^6 photons a plane, 128 x 128) differ by well under this in any one term.
constexpr double kNoiseWaves = 0.02;

using Trend = std::map<int, std::map<int, double>>; // Noll index -> stack -> waves

// The coefficient trend as drawn now, terms 4..11.
Trend readTrend(QCustomPlot* trend)
{
    Trend values;
    for (int noll = 4; noll <= 11; ++noll)
        if (QCPGraph* g = termGraph(trend, noll))
            for (auto it = g->data()->constBegin(); it != g->data()->constEnd(); ++it)
                values[noll][int(std::lround(it->key))] = it->value;
    return values;
}

} // namespace

class TestLiveChosenReference : public QObject {
    Q_OBJECT

private slots:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        QCoreApplication::setOrganizationName(QStringLiteral("WavefrontStudioTests"));
        QCoreApplication::setApplicationName(QStringLiteral("tst_livechosenref"));
    }

    void holdsAChosenStack()
    {
        MainWindow window;
        window.resize(1280, 800);
        window.show();
        LivePanel* live = window.livePanel();
        QSignalSpy rows(live, &LivePanel::rowAdded);
        window.startLiveDemo();
        QTRY_VERIFY_WITH_TIMEOUT(rows.size() >= 6 && live->holdButton()->isEnabled(), kGuardMs);

        // The absolute trend before the hold: each stack's own coefficients.
        const Trend absolute = readTrend(live->trendPlot());
        QVERIFY(absolute.count(5) && absolute.at(5).size() >= 6);
        const int lastBefore = absolute.at(5).rbegin()->first;

        // The list offers the kept stacks when it opens: stack 2 among them, newest first after "stack shown".
        QComboBox* choice = live->referenceChoice();
        QVERIFY(choice);
        choice->showPopup();
        choice->hidePopup();
        QVERIFY2(choice->findData(2) > 0, "stack 2 is not offered as a reference");
        QCOMPARE(choice->itemData(0).toInt(), 0);
        QVERIFY(choice->itemData(1).toInt() > choice->itemData(2).toInt());

        // Stack 2 held: not the stack shown (a later one).
        choice->setCurrentIndex(choice->findData(2));
        live->holdButton()->click();
        QCOMPARE(live->referenceStack(), 2);
        QVERIFY(live->holdButton()->isChecked());
        QCOMPARE(live->holdButton()->text(), QStringLiteral("Release stack 2"));
        QVERIFY(live->trendTitle().contains(QStringLiteral("Difference from stack 2")));

        // The stacks fitted after stack 2 before the hold come as differences at once, each its coefficients minus
        // stack 2's, term by term; stack 2 itself and the stacks before it are not in the difference trend.
        QTRY_VERIFY_WITH_TIMEOUT(readTrend(live->trendPlot())[5].count(lastBefore) == 1, kGuardMs);
        const Trend difference = readTrend(live->trendPlot());
        int compared = 0;
        for (int noll = 4; noll <= 11; ++noll) {
            QVERIFY2(difference.count(noll), qPrintable(QStringLiteral("no difference trend of Z%1").arg(noll)));
            QVERIFY(difference.at(noll).begin()->first == 3);
            for (int stack = 3; stack <= lastBefore; ++stack) {
                QVERIFY2(difference.at(noll).count(stack), qPrintable(QStringLiteral("Z%1: stack %2 missing").arg(noll).arg(stack)));
                const double expected = absolute.at(noll).at(stack) - absolute.at(noll).at(2);
                QVERIFY2(std::abs(difference.at(noll).at(stack) - expected) < kExactWaves,
                         qPrintable(QStringLiteral("Z%1 stack %2: difference %3, its coefficient minus stack 2's %4")
                                        .arg(noll)
                                        .arg(stack)
                                        .arg(difference.at(noll).at(stack))
                                        .arg(expected)));
                ++compared;
            }
        }
        QVERIFY(compared >= 8 * 4);

        // The phase map: core's difference map of a later stack against stack 2, titled so.
        ImageView* phase = live->phasePanel()->view();
        QTRY_VERIFY_WITH_TIMEOUT(phase->hasImage() && phase->title().endsWith(QStringLiteral("− stack 2")), kGuardMs);
        QVERIFY2(phase->title().startsWith(QStringLiteral("Phase difference: stack")), qPrintable(phase->title()));
        QVERIFY(live->shownDifference());

        // A hand on a slider after the hold: Noll 6 by +0.1 wave shows as about 0.1 wave in Z6, the others near 0.
        QSlider* noll6 = termSlider(live, 6);
        QVERIFY(noll6);
        noll6->setValue(noll6->value() + 10);
        QTRY_VERIFY_WITH_TIMEOUT(std::abs(lastTrendValue(live->trendPlot(), 6).value_or(0.0) - 0.1) < kNoiseWaves, kGuardMs);
        for (int noll = 4; noll <= 11; ++noll)
            if (noll != 6)
                QVERIFY2(
                    std::abs(lastTrendValue(live->trendPlot(), noll).value_or(1.0)) < kNoiseWaves,
                    qPrintable(
                        QStringLiteral("Z%1 differs by %2 wave").arg(noll).arg(lastTrendValue(live->trendPlot(), noll).value_or(1.0))));

        // Another stack chosen while one is held is held instead: stack 4, by a click on its point in the trend.
        QCustomPlot* trend = live->trendPlot();
        QCPGraph* z5 = termGraph(trend, 5);
        double valueAt4 = 0.0;
        bool found = false;
        for (auto it = z5->data()->constBegin(); it != z5->data()->constEnd(); ++it)
            if (std::lround(it->key) == 4) {
                valueAt4 = it->value;
                found = true;
            }
        QVERIFY(found);
        trend->replot(); // the axes as they are now, for the point's pixel
        const QPoint at(int(std::lround(trend->xAxis->coordToPixel(4.0))), int(std::lround(trend->yAxis->coordToPixel(valueAt4))));
        QTest::mouseClick(trend, Qt::LeftButton, Qt::NoModifier, at);
        QTRY_COMPARE_WITH_TIMEOUT(live->referenceStack(), 4, kGuardMs);
        QCOMPARE(choice->currentData().toInt(), 4);
        QVERIFY(live->trendTitle().contains(QStringLiteral("Difference from stack 4")));
        QTRY_VERIFY_WITH_TIMEOUT(readTrend(trend)[5].count(5) == 1, kGuardMs);
        QVERIFY(readTrend(trend)[5].begin()->first == 5);
        const double expected = absolute.at(5).at(5) - absolute.at(5).at(4);
        QVERIFY2(std::abs(readTrend(trend)[5][5] - expected) < kExactWaves,
                 qPrintable(QStringLiteral("Z5 stack 5 against stack 4: %1, expected %2").arg(readTrend(trend)[5][5]).arg(expected)));

        // Released: the absolute values again, and the list back on the stack shown.
        live->releaseReference();
        QCOMPARE(live->referenceStack(), 0);
        QCOMPARE(choice->currentData().toInt(), 0);
        QVERIFY(!live->trendTitle().contains(QStringLiteral("Difference")));
        QVERIFY(std::abs(readTrend(trend)[5][2] - absolute.at(5).at(2)) < kExactWaves);

        // A stack the watch never fitted cannot be held.
        QVERIFY(!live->holdReference(100000));
        QCOMPARE(live->referenceStack(), 0);
        live->stop();
    }
};

QTEST_MAIN(TestLiveChosenReference)
#include "tst_livechosenref.moc"
