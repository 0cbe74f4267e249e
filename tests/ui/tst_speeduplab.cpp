// The speed-up lab on the offscreen platform: a small sweep to completion, a cancelled one, the
// estimate for long baselines, and CSV/PNG exports whose numbers are the engine's.
#include "IsolatedSettings.h"
#include "TestSupport.h"

#include "Presentation.h"
#include "ReadabilityChecks.h"
#include "SpeedupLab.h"

#include <QFile>
#include <QImage>
#include <QLabel>
#include <qcustomplot.h>
#include <QTableWidget>
#include <QRegularExpression>
#include <QHeaderView>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTemporaryDir>

using namespace wfs;
using namespace wfs::ui;

class TestSpeedupLab : public QObject {
    Q_OBJECT

    wfs::test::IsolatedSettings m_settings;

private slots:
    void initTestCase()
    {
        // Nothing of the user's settings is read or written (a temporary settings path).
        QVERIFY2(m_settings.isolate(QStringLiteral("tst_speeduplab")), qPrintable(QSettings().fileName()));
    }

    void smallSweepCompletesAndExports()
    {
        SpeedupLab lab;
        lab.resize(1200, 700);
        lab.show();
        QSignalSpy finished(&lab, &SpeedupLab::finished);
        QSignalSpy rows(&lab, &SpeedupLab::rowAdded);
        LabSettings settings;
        settings.grids = {32, 48};
        settings.orders = {3};
        settings.methods = {kBaselineMethod, kReferenceMethod, 2};
        settings.runBaselinesForReal = true;
        settings.evalRepeat = 2;
        lab.run(settings);
        QVERIFY(finished.wait(120000));
        QCOMPARE(lab.rows().size(), size_t(6));
        QCOMPARE(rows.count(), 6);
        for (const LabRow& r : lab.rows()) {
            QVERIFY(!r.estimated);
            QVERIFY(r.seconds > 0);
            QVERIFY(std::isfinite(r.finalCost));
            // The methods agree with the reference solution: finite differences in float64 closely; float32
            // stops at its precision limit (its gradient cannot reach 1e-8), a few thousandths of a wave away.
            const double tolerance = labMethods()[size_t(r.method)].precision == Precision::Double ? 1e-3 : 2e-2;
            QVERIFY2(r.maxCoefficientDifferenceWaves < tolerance, qPrintable(QString::number(r.maxCoefficientDifferenceWaves)));
            if (r.method == kBaselineMethod) // P + 1 model evaluations per gradient
                QCOMPARE(r.costEvaluations, r.bench.summary.gradientEvaluations * (r.bench.parameters + 1));
        }

        // Issue 42: the table mixed 5.8909e-06, 5.890901e-06 and 1.241e+04. Each column is written at fixed
        // significant figures (the final cost at 6, trailing zeros kept), evaluations per second as a whole number.
        auto* table = lab.findChild<QTableWidget*>();
        QVERIFY(table);
        int costColumn = -1, rateColumn = -1;
        for (int c = 0; c < table->columnCount(); ++c) {
            const QString header = table->horizontalHeaderItem(c)->text();
            if (header.contains(QStringLiteral("cost"), Qt::CaseInsensitive))
                costColumn = c;
            if (header.contains(QStringLiteral("/s")) || header.contains(QStringLiteral("per s"), Qt::CaseInsensitive))
                rateColumn = c;
        }
        QVERIFY2(costColumn >= 0 && rateColumn >= 0, "the cost and rate columns");
        const QRegularExpression sixFigures(QStringLiteral("^(\\d\\.\\d{5}e[-+]\\d\\d|\\d{1,6}(\\.\\d+)?)$"));
        for (int i = 0; i < table->rowCount(); ++i) {
            const QString cost = table->item(i, costColumn)->text(), rate = table->item(i, rateColumn)->text();
            QVERIFY2(sixFigures.match(cost).hasMatch(), qPrintable(cost));
            QString digits = cost;
            digits.remove(QRegularExpression(QStringLiteral("e.*$|[.-]")));
            digits.remove(QRegularExpression(QStringLiteral("^0+")));
            QCOMPARE(digits.size(), 6);
            QVERIFY2(!rate.contains(QLatin1Char('e')) && !rate.contains(QLatin1Char('.')), qPrintable(rate));
            WFS_VERIFY_CLOSE(cost.toDouble(), lab.rows()[size_t(i)].finalCost, 1e-5, 0.0);
        }

        // Issue 42: the speed-up plot tells the story alone: every bar labelled with its "N×" (the engine's speed-up,
        // baseline seconds / the method's), the speed-up that counting predicts, (P + 1) / 2, as a line, and the story
        // beside the plot with both numbers.
        auto* speedupPlot = lab.findChildren<QCustomPlot*>().at(1);
        QVERIFY(speedupPlot->yAxis->label().contains(QStringLiteral("speed-up")));
        const std::vector<LabSpeedup> speedups = labSpeedups(lab.rows());
        QCOMPARE(speedups.size(), size_t(4)); // 2 methods x 2 grids
        QStringList labels;
        for (int i = 0; i < speedupPlot->itemCount(); ++i)
            if (auto* text = qobject_cast<QCPItemText*>(speedupPlot->item(i)))
                labels << text->text();
        QCOMPARE(labels.size(), 4);
        for (const LabSpeedup& s : speedups) {
            WFS_VERIFY_CLOSE(s.speedup, s.baseline->seconds / s.row->seconds, 1e-12, 0.0);
            const QString label = QString::number(s.speedup, 'f', s.speedup < 10 ? 1 : 0) + QStringLiteral("×");
            QVERIFY2(labels.contains(label), qPrintable(label + QStringLiteral(" not in ") + labels.join(QLatin1Char(' '))));
        }
        const int parameters = lab.rows().front().bench.parameters;
        const double predicted = (parameters + 1) / 2.0;
        QCOMPARE(predictedAdjointSpeedup(parameters), predicted);
        QCPGraph* line = nullptr;
        for (int i = 0; i < speedupPlot->graphCount(); ++i)
            if (speedupPlot->graph(i)->name().contains(QStringLiteral("(P + 1) / 2")))
                line = speedupPlot->graph(i);
        QVERIFY2(line, "no predicted line");
        QCOMPARE(line->data()->begin()->value, predicted);
        auto* story = lab.findChild<QLabel*>(QStringLiteral("speedupStory"));
        QVERIFY(story);
        const QString predictedText = QString::number(predicted, 'f', predicted < 10 ? 1 : 0) + QStringLiteral("×");
        QVERIFY2(story->text().contains(predictedText) && story->text().contains(QStringLiteral("Measured")), qPrintable(story->text()));

        QTemporaryDir dir;
        const QString csv = dir.filePath(QStringLiteral("lab.csv"));
        QVERIFY(lab.exportCsv(csv));
        QFile file(csv);
        QVERIFY(file.open(QIODevice::ReadOnly));
        QList<QByteArray> lines = file.readAll().trimmed().split('\n');
        QCOMPARE(lines.size(), 2 + 6); // comment, header, rows
        for (int i = 0; i < 6; ++i) {
            // Split the quoted method name off, then compare seconds and final cost with the rows.
            const QByteArray line = lines[2 + i];
            const QList<QByteArray> fields = line.mid(line.indexOf("\",") + 2).split(',');
            const LabRow& r = lab.rows()[size_t(i)];
            QCOMPARE(fields[4].toInt(), r.grid);
            QCOMPARE(fields[8].toDouble(), r.seconds);
            QCOMPARE(fields[16].toDouble(), r.finalCost);
        }
        const QString png = dir.filePath(QStringLiteral("lab.png"));
        QVERIFY(lab.exportPng(png));
        QVERIFY(!QImage(png).isNull());
    }

    // Issue 42: projected at 1280 x 800 in presentation mode the speed-up plots read: no tick labels over each other,
    // no legend cut, no two "N×" labels over each other or above the plot, the story beside the plot in view.
    // (WFS_LAB_PNG_DIR=DIR saves each plot's page, to look at.)
    void presentationModeReadsAt1280()
    {
        SpeedupLab lab;
        lab.resize(1280, 680); // the tab's room in a 1280 x 800 window
        lab.show();
        QSignalSpy finished(&lab, &SpeedupLab::finished);
        LabSettings settings;
        settings.grids = {32, 48, 64};
        settings.orders = {3};
        settings.methods = {kBaselineMethod, kReferenceMethod, 2, 3, 4};
        settings.runBaselinesForReal = true;
        settings.evalRepeat = 1;
        lab.run(settings);
        QVERIFY(finished.wait(300000));
        setPresentationMode(true);
        auto* tabs = lab.findChild<QTabWidget*>();
        QVERIFY(tabs && tabs->count() == 3);
        QStringList problems;
        for (int page = 0; page < tabs->count(); ++page) {
            tabs->setCurrentIndex(page);
            test::settle(&lab);
            if (const QString dir = qEnvironmentVariable("WFS_LAB_PNG_DIR"); !dir.isEmpty())
                lab.grab().save(QStringLiteral("%1/lab-present-%2.png").arg(dir).arg(page));
            for (QCustomPlot* plot : tabs->widget(page)->findChildren<QCustomPlot*>()) {
                if (!plot->isVisible())
                    continue;
                problems << test::overlappingLabels(plot);
                if (const QString cut = test::cutLegend(plot); !cut.isEmpty())
                    problems << cut;
                std::vector<QRectF> labels;
                for (int i = 0; i < plot->itemCount(); ++i)
                    if (auto* text = qobject_cast<QCPItemText*>(plot->item(i))) {
                        QPolygonF corners;
                        for (QCPItemAnchor* a : {text->topLeft, text->topRight, text->bottomRight, text->bottomLeft})
                            corners << a->pixelPosition();
                        const QRectF box = corners.boundingRect();
                        if (box.top() < plot->axisRect()->rect().top() - 1)
                            problems << QStringLiteral("'%1' above the plot").arg(text->text());
                        for (const QRectF& other : labels)
                            if (box.adjusted(1, 1, -1, -1).intersects(other))
                                problems << QStringLiteral("'%1' over another label").arg(text->text());
                        labels.push_back(box);
                    }
            }
        }
        auto* story = lab.findChild<QLabel*>(QStringLiteral("speedupStory"));
        tabs->setCurrentIndex(1);
        test::settle(&lab);
        if (!story || !story->isVisible() || story->visibleRegion().boundingRect().height() < story->heightForWidth(story->width()))
            problems << QStringLiteral("the story is not whole in view");
        setPresentationMode(false);
        QVERIFY2(problems.isEmpty(), qPrintable(problems.join(QLatin1Char('\n'))));
    }

    void longBaselinesAreEstimated()
    {
        SpeedupLab lab;
        QSignalSpy finished(&lab, &SpeedupLab::finished);
        LabSettings settings;
        settings.grids = {32};
        settings.orders = {3};
        settings.methods = {kBaselineMethod, kReferenceMethod};
        settings.estimateAboveSeconds = 0.0; // every baseline counts as long
        settings.evalRepeat = 2;
        lab.run(settings);
        QVERIFY(finished.wait(120000));
        QCOMPARE(lab.rows().size(), size_t(2));
        const LabRow& estimated = lab.rows()[1];
        QVERIFY(estimated.estimated);
        const LabRow& reference = lab.rows()[0];
        // The estimate: the reference's gradient evaluations times one measured finite-difference gradient.
        WFS_VERIFY_CLOSE(estimated.seconds, double(reference.bench.summary.gradientEvaluations) * estimated.bench.evalMs * 1e-3, 1e-12,
                         0.0);
        QVERIFY(std::isnan(estimated.finalCost));

        // And then for real.
        finished.clear();
        lab.runEstimatedForReal();
        QVERIFY(finished.wait(120000));
        QCOMPARE(lab.rows().size(), size_t(2));
        QVERIFY(!lab.rows()[1].estimated);
    }

    void cancelStopsTheSweep()
    {
        SpeedupLab lab;
        QSignalSpy cancelled(&lab, &SpeedupLab::cancelled);
        QSignalSpy rows(&lab, &SpeedupLab::rowAdded);
        LabSettings settings;
        settings.grids = {32, 64, 128, 256, 512};
        settings.orders = {4};
        settings.methods = {kBaselineMethod, kReferenceMethod, 2};
        settings.runBaselinesForReal = true;
        settings.evalRepeat = 2;
        lab.run(settings);
        QVERIFY(rows.wait(120000));
        lab.cancel();
        QVERIFY(cancelled.count() > 0 || cancelled.wait(120000));
        QVERIFY(lab.rows().size() < 15);
        QVERIFY(!lab.isRunning());
    }
};

QTEST_MAIN(TestSpeedupLab)
#include "tst_speeduplab.moc"
