// The charts and the numbers at laptop sizes, on the offscreen platform: no two tick or category labels
// of the coefficient chart (27 terms) and the Runs tab's chart (order 4) overlap at the sizes they get in
// 1280 x 800, 1366 x 768 and 1920 x 1080 windows; empty charts say what to do instead of drawing axes;
// the results dock shows its key line (RMS, PV, Strehl) whole and its table without a horizontal scroll
// bar or a cut number; the speed-up lab after a run at 1280 x 800 shows its plot without scrolling and
// its table whole. With WFS_CHARTS_PNG_DIR set, each case is also saved as a PNG to look at.
#include "IsolatedSettings.h"
#include "ReadabilityChecks.h"

#include "ConvergencePlot.h"
#include "MainWindow.h"
#include "ResultsPanel.h"
#include "RunsPanel.h"
#include "SpeedupLab.h"
#include "ZernikeChart.h"

#include "optics/Zernike.h"

#include <qcustomplot.h>

#include <QHeaderView>
#include <QLabel>
#include <QScrollArea>
#include <QScrollBar>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QStyle>
#include <QTableWidget>
#include <QTest>
#include <QTextDocument>

#include <cmath>
#include <numbers>

using wfs::test::settle;
using namespace wfs;
using namespace wfs::ui;

namespace {

// Noll terms 2 .. the last of `order`, with made-up values, as the chart gets them.
std::vector<ChartTerm> chartTerms(int order)
{
    std::vector<ChartTerm> terms;
    for (int j = 2; j <= (order + 1) * (order + 2) / 2; ++j) {
        ChartTerm t;
        t.index = j;
        t.mode = zernike::modeFromIndex(j, ZernikeOrdering::Noll);
        t.waves = 0.05 * std::sin(1.7 * j);
        t.sigmaWaves = 0.004;
        t.truthWaves = 0.05 * std::sin(1.7 * j) + 0.003;
        terms.push_back(t);
    }
    return terms;
}

// A fitted result of `order` (Noll 2 ..), with a circular phase map, as core reports one.
std::shared_ptr<FitResult> fakeResult(int order, double scale)
{
    auto r = std::make_shared<FitResult>();
    r->ordering = ZernikeOrdering::Noll;
    r->wavelength = 633e-9;
    for (int j = 2; j <= (order + 1) * (order + 2) / 2; ++j) {
        CoefficientResult c;
        c.index = j;
        c.mode = zernike::modeFromIndex(j, ZernikeOrdering::Noll);
        c.name = zernike::name(c.mode);
        c.waves = -scale * 0.08 * std::cos(1.3 * j);
        c.radians = c.waves * 2 * std::numbers::pi;
        c.nm = c.waves * r->wavelength * 1e9;
        c.uncertaintyWaves = 1.2e-4 * j;
        r->coefficients.push_back(c);
    }
    r->rmsWaves = 0.1542 * scale;
    r->pvWaves = 1.0133 * scale;
    r->strehl = 0.485;
    r->strehlMarechal = 0.391;
    r->solver.iterations = 27;
    r->solver.costEvaluations = 30;
    r->solver.gradientEvaluations = 30;
    r->solver.seconds = 0.8;
    r->solver.initialCost = 1.6376e6;
    r->solver.finalCost = 143842;
    r->solver.message = "Function tolerance reached. |cost_change|/cost: 4.955726e-12 <= 1.000000e-11";
    r->phaseMap = Image(64, 64, std::nan(""));
    for (int row = 0; row < 64; ++row)
        for (int col = 0; col < 64; ++col) {
            const double x = (col - 31.5) / 32, y = (row - 31.5) / 32;
            if (x * x + y * y <= 1)
                r->phaseMap.at(row, col) = scale * (x * x - y * y + 0.3 * x * y);
        }
    return r;
}

RunEntry runEntry(int number, int order, double scale)
{
    RunEntry e;
    e.record.name = QStringLiteral("run %1 · order %2").arg(number).arg(order).toStdString();
    e.record.time = "2025-01-01T10:00:0" + std::to_string(number) + "Z";
    e.record.model.order = order;
    e.result = fakeResult(order, scale);
    return e;
}

// The first two rectangles that intersect, in words; empty when none do.
QString overlap(const QList<QRect>& rects)
{
    for (int i = 0; i < rects.size(); ++i)
        for (int j = i + 1; j < rects.size(); ++j)
            if (rects[i].intersects(rects[j]))
                return QStringLiteral("labels at (%1,%2 %3x%4) and (%5,%6 %7x%8) overlap")
                    .arg(rects[i].x())
                    .arg(rects[i].y())
                    .arg(rects[i].width())
                    .arg(rects[i].height())
                    .arg(rects[j].x())
                    .arg(rects[j].y())
                    .arg(rects[j].width())
                    .arg(rects[j].height());
    return {};
}

bool isShown(const QWidget* widget)
{
    return widget->isVisible() && !widget->visibleRegion().isEmpty();
}

void savePicture(QWidget* widget, const QString& name)
{
    const QString dir = qEnvironmentVariable("WFS_CHARTS_PNG_DIR");
    if (!dir.isEmpty())
        widget->grab().save(dir + QLatin1Char('/') + name + QStringLiteral(".png"));
}

// A visible label over the widget whose text contains `words`.
const QLabel* shownLabel(const QWidget* widget, const QString& words)
{
    for (const QLabel* label : widget->findChildren<QLabel*>())
        if (isShown(label) && label->text().contains(words, Qt::CaseInsensitive))
            return label;
    return nullptr;
}

// Every cell and header of the table shown whole: each line of its text fits its column, with the
// item view's margins. Hidden columns are left out; `except` names a column allowed to elide.
QString cutCells(const QTableWidget* table, int except = -1)
{
    const int margin = 2 * (table->style()->pixelMetric(QStyle::PM_FocusFrameHMargin, nullptr, table) + 1);
    const QFontMetrics metrics(table->font());
    const QFontMetrics headerMetrics(table->horizontalHeader()->font());
    for (int c = 0; c < table->columnCount(); ++c) {
        if (table->isColumnHidden(c) || c == except)
            continue;
        const int width = table->columnWidth(c);
        for (int r = 0; r < table->rowCount(); ++r)
            if (const QTableWidgetItem* item = table->item(r, c))
                for (const QString& line : item->text().split(QLatin1Char('\n')))
                    if (metrics.horizontalAdvance(line) + margin > width)
                        return QStringLiteral("row %1, column %2: \"%3\" needs %4 px, has %5")
                            .arg(r)
                            .arg(c)
                            .arg(line)
                            .arg(metrics.horizontalAdvance(line) + margin)
                            .arg(width);
        const QString header = table->horizontalHeaderItem(c) ? table->horizontalHeaderItem(c)->text() : QString();
        for (const QString& line : header.split(QLatin1Char('\n')))
            if (headerMetrics.horizontalAdvance(line) + margin > width)
                return QStringLiteral("header of column %1: \"%2\" needs %3 px, has %4")
                    .arg(c)
                    .arg(line)
                    .arg(headerMetrics.horizontalAdvance(line) + margin)
                    .arg(width);
    }
    return {};
}

} // namespace

class TestCharts : public QObject {
    Q_OBJECT

    wfs::test::IsolatedSettings m_settings;

private slots:
    void initTestCase()
    {
        QVERIFY2(m_settings.isolate(QStringLiteral("tst_charts")), qPrintable(QSettings().fileName()));
        QStandardPaths::setTestModeEnabled(true);
    }

    // The coefficient dock at the size it has in a 1280 x 800 and a 1366 x 768 window (about 380 x 370
    // and 405 x 355 px), and larger: 14 and 27 terms, no label over another.
    void coefficientChartLabelsDoNotOverlap_data()
    {
        QTest::addColumn<int>("order");
        QTest::addColumn<QSize>("size");
        for (int order : {4, 6})
            for (const QSize& size : {QSize(380, 370), QSize(405, 355), QSize(530, 560)})
                QTest::addRow("order %d, %dx%d", order, size.width(), size.height()) << order << size;
    }

    void coefficientChartLabelsDoNotOverlap()
    {
        QFETCH(int, order);
        QFETCH(QSize, size);
        ZernikeChart chart;
        chart.resize(size);
        chart.show();
        chart.setTerms(chartTerms(order), 633e-9, ZernikeOrdering::Noll);
        settle(&chart);
        savePicture(&chart, QStringLiteral("zernike-order%1-%2x%3").arg(order).arg(size.width()).arg(size.height()));
        QVERIFY(isShown(chart.plot()));
        const QList<QRect> terms = tickLabelRects(chart.plot()->yAxis);
        QCOMPARE(terms.size(), int(chartTerms(order).size())); // every term named
        const QList<QRect> all = tickLabelRects(chart.plot());
        const QString problem = overlap(all);
        QVERIFY2(problem.isEmpty(), qPrintable(problem));
        // The value axis keeps some numbers.
        QVERIFY(tickLabelRects(chart.plot()->xAxis).size() >= 2);
    }

    // The Runs tab's centre at 1280 x 800, 1366 x 768 and 1920 x 1080: two order-4 runs compared.
    void runsChartLabelsDoNotOverlap_data()
    {
        QTest::addColumn<QSize>("size");
        for (const QSize& size : {QSize(555, 700), QSize(615, 655), QSize(900, 990)})
            QTest::addRow("%dx%d", size.width(), size.height()) << size;
    }

    void runsChartLabelsDoNotOverlap()
    {
        QFETCH(QSize, size);
        RunsPanel panel;
        panel.resize(size);
        panel.show();
        QSignalSpy shown(&panel, &RunsPanel::comparisonShown);
        panel.setRuns({runEntry(1, 4, 1.0), runEntry(2, 4, 0.6)});
        QVERIFY2(shown.count() > 0 || shown.wait(20000), qPrintable(panel.summaryText()));
        QVERIFY(panel.comparison().has_value());
        settle(&panel);
        savePicture(&panel, QStringLiteral("runs-%1x%2").arg(size.width()).arg(size.height()));
        QCustomPlot* plot = panel.coefficientPlot();
        QVERIFY(isShown(plot));
        QCOMPARE(tickLabelRects(plot->yAxis).size(), 14);
        const QString problem = overlap(tickLabelRects(plot));
        QVERIFY2(problem.isEmpty(), qPrintable(problem));
    }

    // Issue 42: two identical runs drew a difference map whose colour bar read "0.0000000": the view says it in words.
    void identicalRunsSayTheirPhasesAreTheSame()
    {
        RunsPanel panel;
        panel.resize(900, 700);
        panel.show();
        QSignalSpy shown(&panel, &RunsPanel::comparisonShown);
        panel.setRuns({runEntry(1, 4, 1.0), runEntry(2, 4, 0.6)});
        QVERIFY2(shown.count() > 0 || shown.wait(20000), qPrintable(panel.summaryText()));
        QVERIFY(panel.differenceView()->hasImage()); // different runs: a map
        shown.clear();
        panel.setRuns({runEntry(1, 4, 1.0), runEntry(2, 4, 1.0)});
        QVERIFY2(shown.count() > 0 || shown.wait(20000), qPrintable(panel.summaryText()));
        settle(&panel);
        QVERIFY(!panel.differenceView()->hasImage());
        QVERIFY2(panel.differenceView()->message().contains(QStringLiteral("the same")), qPrintable(panel.differenceView()->message()));
    }

    // Empty charts say what to do, centred, and draw no axes.
    void emptyConvergencePlotSaysWhatToDo()
    {
        ConvergencePlot convergence;
        convergence.resize(380, 280);
        convergence.show();
        settle(&convergence);
        savePicture(&convergence, QStringLiteral("empty-convergence"));
        QVERIFY2(!isShown(convergence.plot()) || tickLabelRects(convergence.plot()).isEmpty(), "the empty convergence plot draws axes");
        QVERIFY2(shownLabel(&convergence, QStringLiteral("Ctrl+R")), "the empty convergence plot says nothing");
    }

    void emptyCoefficientChartSaysWhatToDo()
    {
        ZernikeChart chart;
        chart.resize(380, 370);
        chart.show();
        settle(&chart);
        savePicture(&chart, QStringLiteral("empty-zernike"));
        QVERIFY2(!isShown(chart.plot()) || tickLabelRects(chart.plot()).isEmpty(), "the empty coefficient chart draws axes");
        QVERIFY2(shownLabel(&chart, QStringLiteral("Ctrl+R")), "the empty coefficient chart says nothing");
        // And again after a fit's terms were cleared.
        chart.setTerms(chartTerms(4), 633e-9, ZernikeOrdering::Noll);
        settle(&chart);
        QVERIFY(isShown(chart.plot()));
        QVERIFY(!shownLabel(&chart, QStringLiteral("Ctrl+R")));
        chart.clear();
        settle(&chart);
        QVERIFY(!isShown(chart.plot()) || tickLabelRects(chart.plot()).isEmpty());
    }

    void oneRunSaysWhatToDo()
    {
        RunsPanel panel;
        panel.resize(615, 655);
        panel.show();
        panel.setRuns({runEntry(1, 4, 1.0)});
        settle(&panel);
        savePicture(&panel, QStringLiteral("empty-runs"));
        QVERIFY2(!isShown(panel.coefficientPlot()) || tickLabelRects(panel.coefficientPlot()).isEmpty(),
                 "one run: the comparison chart draws axes");
        QVERIFY2(shownLabel(&panel, QStringLiteral("fit again")), "one run: nothing says to fit again");
    }

    // The results dock at 1280 x 800 (about 380 x 375 px) and 1366 x 768 (about 405 x 360 px): the key
    // line whole, no word of it cut, and the order-4 table without a horizontal scroll bar or a cut cell.
    void resultsShowTheKeyLineAndTableWhole_data()
    {
        QTest::addColumn<QSize>("size");
        for (const QSize& size : {QSize(380, 375), QSize(405, 360), QSize(520, 560)})
            QTest::addRow("%dx%d", size.width(), size.height()) << size;
    }

    void resultsShowTheKeyLineAndTableWhole()
    {
        QFETCH(QSize, size);
        ResultsPanel panel;
        panel.resize(size);
        panel.show();
        const std::shared_ptr<FitResult> r = fakeResult(4, 1.0);
        Truth truth;
        truth.ordering = ZernikeOrdering::Noll;
        for (const CoefficientResult& c : r->coefficients)
            truth.terms.push_back(TruthTerm{c.index, c.waves + 0.001});
        panel.showResult(*r, truth);
        settle(&panel);
        savePicture(&panel, QStringLiteral("results-%1x%2").arg(size.width()).arg(size.height()));

        const QString rms = QString::number(r->rmsWaves, 'f', 4), strehl = QString::number(r->strehl, 'f', 3);
        const QLabel* key = nullptr;
        for (const QLabel* label : panel.findChildren<QLabel*>())
            if (label->isVisible() && label->text().contains(rms) && label->text().contains(strehl))
                key = label;
        QVERIFY2(key, "no label shows the RMS and the Strehl ratio");
        // Whole: not scrolled, not clipped by a scroll area or the panel, as high as its wrapped text.
        QCOMPARE(key->visibleRegion().boundingRect(), key->rect());
        QVERIFY(key->height() >= key->heightForWidth(key->width()));
        // No word (number) wider than the line: the text wraps between words only.
        QTextDocument document;
        document.setDefaultFont(key->font());
        document.setDocumentMargin(0);
        document.setHtml(key->text());
        document.setTextWidth(key->contentsRect().width());
        QVERIFY2(document.idealWidth() <= key->contentsRect().width(),
                 qPrintable(QStringLiteral("a word of the key line needs %1 px, the line has %2")
                                .arg(document.idealWidth())
                                .arg(key->contentsRect().width())));

        QTableWidget* table = panel.table();
        QCOMPARE(table->rowCount(), 14);
        QVERIFY2(table->horizontalScrollBar()->maximum() == 0,
                 qPrintable(QStringLiteral("the table scrolls sideways by %1 px").arg(table->horizontalScrollBar()->maximum())));
        const int name = 3; // may elide, at the narrowest only
        const QString cut = cutCells(table, size.width() < 390 ? name : -1);
        QVERIFY2(cut.isEmpty(), qPrintable(cut));
    }

    // The speed-up lab in the window at 1280 x 800 (and 1920 x 1080) after a run: the plot (with the
    // finite-difference baseline) in view without scrolling, the method names and every number of the table whole.
    void speedupLabAfterARun_data()
    {
        QTest::addColumn<QSize>("size");
        for (const QSize& size : {QSize(1280, 800), QSize(1920, 1080)})
            QTest::addRow("%dx%d", size.width(), size.height()) << size;
    }

    void speedupLabAfterARun()
    {
        QFETCH(QSize, size);
        MainWindow window;
        window.resize(size);
        window.show();
        QVERIFY(window.showTab(QStringLiteral("speedup")));
        SpeedupLab* lab = window.speedupLab();
        QSignalSpy finished(lab, &SpeedupLab::finished);
        LabSettings settings;
        settings.grids = {32, 48};
        settings.orders = {3};
        settings.methods = {kBaselineMethod, kReferenceMethod, 2};
        settings.runBaselinesForReal = true;
        settings.evalRepeat = 2;
        lab->run(settings);
        QVERIFY(finished.wait(120000));
        settle(&window);
        savePicture(&window, QStringLiteral("speedup-%1x%2").arg(size.width()).arg(size.height()));

        QCustomPlot* time = nullptr;
        for (QCustomPlot* plot : lab->findChildren<QCustomPlot*>())
            if (isShown(plot))
                time = plot;
        QVERIFY2(time, "no plot shown after the run");
        QCOMPARE(time->visibleRegion().boundingRect(), time->rect());
        // The tab itself does not scroll: plot and table in view together, whichever way it was scrolled.
        auto* tab = qobject_cast<QScrollArea*>(lab->parentWidget() ? lab->parentWidget()->parentWidget() : nullptr);
        QVERIFY(tab);
        QVERIFY2(tab->verticalScrollBar()->maximum() == 0,
                 qPrintable(QStringLiteral("the lab needs %1 px more height than the tab has").arg(tab->verticalScrollBar()->maximum())));
        auto* table = lab->findChild<QTableWidget*>();
        QVERIFY(table && isShown(table));
        QCOMPARE(table->rowCount(), 6);
        QVERIFY2(table->horizontalScrollBar()->maximum() == 0,
                 qPrintable(QStringLiteral("the table scrolls sideways by %1 px").arg(table->horizontalScrollBar()->maximum())));
        const QString cut = cutCells(table);
        QVERIFY2(cut.isEmpty(), qPrintable(cut));
    }
};

QTEST_MAIN(TestCharts)
#include "tst_charts.moc"
