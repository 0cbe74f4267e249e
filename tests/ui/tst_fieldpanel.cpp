// The Field tab (issue 43 item 5) on the offscreen platform: core's simulated bead slide, small, run to its end from
// the panel; every bead found marked on the projection (by its group: in the model, outlier, set aside); each term's
// map is core's fieldTermGrid of the run, finite, with a colour bar symmetric about zero over exactly its largest value
// and the beads on it; the residuals one point per model sample; a bead selected by a click on its marker (or in code)
// fills the fit table with its status, reason, reduced chi2 and coefficients; the tooltip names status and reason; a
// user's stack read from a FITS file; a run that throws keeps the stack for the next run; a cancelled run and a panel
// destroyed while it works; and the tab in the main window readable at 1280 x 800, 1366 x 768 and 1920 x 1080
// (square pixels, colour bars along their length, no labels running together, nothing cut or overlapping).
// Waits count finished runs; the only limits are hang guards.
#include "IsolatedSettings.h"
#include "ReadabilityChecks.h"
#include "TestSupport.h"

#include "FieldPanel.h"
#include "ImageView.h"
#include "MainWindow.h"

#include "engine/FieldSimulation.h"

#include <qcustomplot.h>

#include <QAbstractButton>
#include <QComboBox>
#include <QDir>
#include <QFile>
#include <QHelpEvent>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTabBar>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QToolTip>
#include <QtTest>

#include <cmath>
#include <memory>

using namespace wfs;
using namespace wfs::ui;

namespace {

constexpr int kGuardMs = 300000;
constexpr int kBeads = 24, kWidth = 320; // a small slide: seconds on two cores

// Runs the small simulated slide on `panel` to its end; the run's success.
bool runSmallSlide(FieldPanel& panel)
{
    QSignalSpy finished(&panel, &FieldPanel::runFinished);
    if (!panel.runSimulatedField(kBeads, kWidth))
        return false;
    return finished.wait(kGuardMs) && finished.front().front().toBool();
}

// The table's text in a row: its cells joined by " | ".
QString rowText(const QTableWidget* table, int row)
{
    QStringList cells;
    for (int column = 0; column < table->columnCount(); ++column)
        cells << (table->item(row, column) ? table->item(row, column)->text() : QString());
    return cells.join(QStringLiteral(" | "));
}

// The first bead with (or without) status "ok".
int firstBead(const FieldRun& run, bool ok)
{
    for (size_t i = 0; i < run.beads.size(); ++i)
        if ((run.beads[i].status == "ok") == ok)
            return int(i);
    return -1;
}

int graphPoints(QCustomPlot* plot, int skipLast)
{
    int count = 0;
    for (int g = 0; g + skipLast < plot->graphCount(); ++g)
        count += plot->graph(g)->dataCount();
    return count;
}

} // namespace

class TestFieldPanel : public QObject {
    Q_OBJECT

private:
    wfs::test::IsolatedSettings m_settings; // declared first: outlives the panels
    std::unique_ptr<FieldPanel> m_panel;    // one run, which the checks below read
    std::unique_ptr<MainWindow> m_window;   // the tab in the window, its run done once for the three sizes

    // Everything shown in `panel` that a reader needs whole: widgets inside the panel and clear of their neighbours,
    // labels and buttons as large as their text, and the pictures' own checks.
    static QStringList layoutProblems(QWidget* panel)
    {
        QStringList problems;
        QList<QWidget*> leaves;
        for (QWidget* w : panel->findChildren<QWidget*>()) {
            if (!test::isShownOnScreen(w))
                continue;
            const bool leaf = qobject_cast<QAbstractButton*>(w) || qobject_cast<QAbstractSpinBox*>(w) || qobject_cast<QComboBox*>(w)
                              || qobject_cast<QLabel*>(w) || qobject_cast<ImageView*>(w) || qobject_cast<QProgressBar*>(w)
                              || qobject_cast<QTableWidget*>(w)
                              || (qobject_cast<QCustomPlot*>(w) && !qobject_cast<ImageView*>(w->parentWidget()));
            if (!leaf || qobject_cast<ImageView*>(w->parentWidget()) || qobject_cast<QTabBar*>(w->parentWidget()))
                continue; // an image view's own title and plot are checked as the view
            if (w->parentWidget() && w->parentWidget()->inherits("QAbstractScrollArea"))
                continue;
            if (w->parentWidget() && w->parentWidget()->parentWidget()
                && w->parentWidget()->parentWidget()->inherits("QAbstractScrollArea"))
                continue; // the table's own viewport and headers
            leaves << w;
        }
        for (QWidget* w : leaves) {
            const QRect r(w->mapTo(panel, QPoint()), w->size());
            if (!panel->rect().contains(r))
                problems << QStringLiteral("%1 at %2,%3 %4x%5 leaves the panel")
                                .arg(test::describe(w))
                                .arg(r.x())
                                .arg(r.y())
                                .arg(r.width())
                                .arg(r.height());
            if (auto* label = qobject_cast<QLabel*>(w); label && !label->text().isEmpty()) {
                const int needed = label->wordWrap() ? label->heightForWidth(label->width()) : label->sizeHint().height();
                if (label->height() < needed || (!label->wordWrap() && label->width() < label->sizeHint().width()))
                    problems << QStringLiteral("%1 cut: %2x%3 for '%4'")
                                    .arg(test::describe(label))
                                    .arg(label->width())
                                    .arg(label->height())
                                    .arg(label->text());
            }
            if (auto* button = qobject_cast<QAbstractButton*>(w); button && button->width() < button->minimumSizeHint().width())
                problems << QStringLiteral("%1 cut: '%2'").arg(test::describe(button), button->text());
            for (QWidget* other : leaves)
                if (other != w && !w->isAncestorOf(other) && !other->isAncestorOf(w) && w < other
                    && r.intersects(QRect(other->mapTo(panel, QPoint()), other->size())))
                    problems << QStringLiteral("%1 overlaps %2").arg(test::describe(w), test::describe(other));
        }
        for (QTableWidget* table : panel->findChildren<QTableWidget*>())
            if (test::isShownOnScreen(table))
                problems << cutCells(table);
        for (QComboBox* combo : panel->findChildren<QComboBox*>())
            if (test::isShownOnScreen(combo))
                if (const QString cut = test::cutComboText(combo); !cut.isEmpty())
                    problems << cut;
        for (QAbstractSpinBox* spin : panel->findChildren<QAbstractSpinBox*>())
            if (test::isShownOnScreen(spin))
                if (const QString cut = test::cutSpinBoxText(spin); !cut.isEmpty())
                    problems << cut;
        return problems;
    }

    // Cells whose text does not fit their column (wrapped at its width) and row, and columns wider than the table.
    static QStringList cutCells(const QTableWidget* table)
    {
        QStringList problems;
        int columns = 0;
        for (int c = 0; c < table->columnCount(); ++c)
            columns += table->columnWidth(c);
        if (columns > table->viewport()->width())
            problems
                << QStringLiteral("%1: columns of %2 px in %3").arg(test::describe(table)).arg(columns).arg(table->viewport()->width());
        const QFontMetrics metrics(table->font());
        for (int r = 0; r < table->rowCount(); ++r)
            for (int c = 0; c < table->columnCount(); ++c) {
                const QTableWidgetItem* item = table->item(r, c);
                if (!item || item->text().isEmpty())
                    continue;
                const int width = table->columnWidth(c) - 6; // the cell's margins
                const QRect needed = metrics.boundingRect(QRect(0, 0, width, 10000), Qt::TextWordWrap, item->text());
                if (needed.width() > width || needed.height() > table->rowHeight(r))
                    problems << QStringLiteral("%1: '%2' needs %3 x %4 px in a %5 x %6 cell")
                                    .arg(test::describe(table), item->text())
                                    .arg(needed.width())
                                    .arg(needed.height())
                                    .arg(width)
                                    .arg(table->rowHeight(r));
            }
        return problems;
    }

    static QStringList pictureProblems(FieldPanel* panel)
    {
        QStringList problems;
        for (ImageView* view : {panel->projectionView(), panel->mapView()}) {
            if (!view->hasImage() || !test::isShownOnScreen(view->plot())) {
                problems << QStringLiteral("%1 not shown").arg(test::describe(view));
                continue;
            }
            if (std::abs(view->pixelAspect() - 1.0) > 0.02)
                problems << QStringLiteral("%1: pixel aspect %2").arg(test::describe(view)).arg(view->pixelAspect());
            if (view->title().isEmpty())
                problems << QStringLiteral("%1: no title").arg(test::describe(view));
        }
        for (QCustomPlot* plot : panel->findChildren<QCustomPlot*>()) {
            if (!test::isShownOnScreen(plot))
                continue;
            problems << test::colourBarProblems(plot) << test::overlappingLabels(plot);
            if (const QString cut = test::cutLegend(plot); !cut.isEmpty())
                problems << cut;
            const QRect axes = plot->axisRect()->rect();
            if (axes.width() < 200 || axes.height() < 150)
                problems << QStringLiteral("%1: axis rectangle %2 x %3").arg(test::describe(plot)).arg(axes.width()).arg(axes.height());
            if (plot->legend && plot->legend->visible() && plot->legend->itemCount() > 0 && plot->legend->outerRect().intersects(axes))
                problems << QStringLiteral("%1: the legend covers the axes").arg(test::describe(plot));
        }
        return problems;
    }

private slots:
    void initTestCase()
    {
        QVERIFY2(m_settings.isolate(QStringLiteral("tst_fieldpanel")), qPrintable(QSettings().fileName()));
        m_panel = std::make_unique<FieldPanel>();
        m_panel->resize(1280, 760);
        m_panel->show();
        QVERIFY(m_panel->fieldRun() == nullptr);
        QVERIFY2(runSmallSlide(*m_panel), qPrintable(m_panel->statusText()));
        test::settle(m_panel.get());
    }

    // The layout check finds what it is for: widgets that overlap, a label cut short, a cell too narrow.
    void layoutCheckCanFail()
    {
        QWidget top;
        top.resize(300, 200);
        auto* a = new QPushButton(QStringLiteral("Simulated bead slide"), &top);
        auto* b = new QPushButton(QStringLiteral("Load"), &top);
        a->setGeometry(10, 10, 60, 30); // narrower than its text, and under b
        b->setGeometry(40, 20, 80, 30);
        auto* label = new QLabel(QStringLiteral("a label far longer than the room it is given"), &top);
        label->setGeometry(10, 100, 50, 20);
        auto* table = new QTableWidget(1, 1, &top);
        table->setGeometry(10, 130, 120, 60);
        table->setItem(0, 0, new QTableWidgetItem(QStringLiteral("Noll 13 Oblique secondary astigmatism")));
        top.show();
        QVERIFY(QTest::qWaitForWindowExposed(&top));
        const QString found = layoutProblems(&top).join(QLatin1Char('\n'));
        QVERIFY2(found.contains(QStringLiteral("overlaps")), qPrintable(found));
        QVERIFY2(found.contains(QStringLiteral("'Simulated bead slide'")), qPrintable(found));
        QVERIFY2(found.contains(QStringLiteral("cut: 50x20")), qPrintable(found));
        QVERIFY2(found.contains(QStringLiteral("Oblique secondary")), qPrintable(found));
    }

    // Every bead found has one marker on the projection, in the group its status and the model give it.
    void everyBeadIsMarked()
    {
        const std::shared_ptr<const FieldRun> run = m_panel->fieldRun();
        QVERIFY(run && run->model);
        QVERIFY(run->beads.size() >= size_t(kBeads));
        QCOMPARE(m_panel->markerCount(), int(run->beads.size()));
        int inModel = 0, setAside = 0;
        for (const FieldBead& bead : run->beads) {
            inModel += bead.inModel ? 1 : 0;
            setAside += bead.status == "ok" ? 0 : 1;
        }
        QVERIFY(setAside > 0); // the slide plants doublets, saturated and edge beads
        QCustomPlot* plot = m_panel->projectionView()->plot();
        QCOMPARE(plot->graph(0)->dataCount(), inModel);
        QCOMPARE(plot->graph(2)->dataCount(), setAside);
        for (int g = 0; g < 3; ++g)
            for (int i = 0; i < plot->graph(g)->dataCount(); ++i) {
                const double x = plot->graph(g)->data()->at(i)->key, y = plot->graph(g)->data()->at(i)->value;
                QVERIFY(x >= -0.5 && x <= kWidth - 0.5 && y >= -0.5 && y <= kWidth - 0.5);
            }
        QCOMPARE(m_panel->projectionView()->image().width, kWidth);
        QCOMPARE(m_panel->projectionView()->unit(), QStringLiteral("photons")); // the slide's BUNIT, not a guess
        QVERIFY(m_panel->statusText().contains(QStringLiteral("%1 beads found").arg(run->beads.size())));
        QVERIFY(m_panel->summaryText().contains(QStringLiteral("field model over")));
        auto* progress = m_panel->findChild<QProgressBar*>(QStringLiteral("fieldProgress"));
        QVERIFY(progress && progress->maximum() > 0);
        QCOMPARE(progress->value(), progress->maximum());
    }

    // Each term: the map is core's grid of the run, finite, its colour bar from -max|v| to +max|v|, the beads on it, and
    // one residual per model sample.
    void termMapsAreCoresGrids()
    {
        const std::shared_ptr<const FieldRun> run = m_panel->fieldRun();
        QComboBox* terms = m_panel->termChoice();
        QCOMPARE(terms->count(), int(run->modelTerms.size()));
        QVERIFY(terms->itemText(1).startsWith(QStringLiteral("Noll 5 ")));
        int ok = 0;
        for (const FieldBead& bead : run->beads)
            ok += bead.status == "ok" ? 1 : 0;
        for (int t = 0; t < terms->count(); ++t) {
            terms->setCurrentIndex(t);
            test::settle(m_panel.get(), 2);
            ImageView* map = m_panel->mapView();
            QVERIFY(map->hasImage());
            const Image expected = fieldTermGrid(*run, size_t(t), 64).values;
            QCOMPARE(map->image().width, expected.width);
            QCOMPARE(map->image().height, expected.height);
            double largest = 0.0;
            for (size_t i = 0; i < expected.pixels.size(); ++i) {
                QVERIFY(std::isfinite(map->image().pixels[i]));
                QCOMPARE(map->image().pixels[i], expected.pixels[i]);
                largest = std::max(largest, std::abs(expected.pixels[i]));
            }
            QVERIFY(largest > 0.0);
            const DisplayRange range = map->displayRange();
            QVERIFY2(
                test::closeTo(range.high, largest, 1e-12) && test::closeTo(range.low, -largest, 1e-12),
                qPrintable(
                    QStringLiteral("%1: bar %2..%3, data up to %4").arg(terms->currentText()).arg(range.low).arg(range.high).arg(largest)));
            QCOMPARE(map->unit(), QStringLiteral("waves"));
            QCOMPARE(graphPoints(map->plot(), 1), int(run->beads.size()));
            QCOMPARE(graphPoints(m_panel->residualPlot(), 1), ok);
        }
        terms->setCurrentIndex(1);
    }

    // A click on a marker selects its bead; its fit fills the table. A bead set aside shows its reason.
    void selectedBeadFillsTheTable()
    {
        const std::shared_ptr<const FieldRun> run = m_panel->fieldRun();
        const int ok = firstBead(*run, true);
        QVERIFY(ok >= 0);
        test::settle(m_panel.get(), 2);
        QCustomPlot* plot = m_panel->projectionView()->plot();
        const FieldBead& bead = run->beads[size_t(ok)];
        const QPoint at(int(std::lround(plot->xAxis->coordToPixel(bead.detection.x))),
                        int(std::lround(plot->yAxis->coordToPixel(bead.detection.y))));
        QTest::mouseClick(plot, Qt::LeftButton, {}, at);
        QCOMPARE(m_panel->selectedBead(), ok);
        QTableWidget* table = m_panel->beadTable();
        QCOMPARE(table->rowCount(), 3 + int(bead.coefficients.size())); // status, chi2, RMS, the coefficients
        QVERIFY(rowText(table, 0).contains(QStringLiteral("ok")));
        QVERIFY2(rowText(table, 1).contains(QString::number(bead.reducedChiSquare, 'f', 3)), qPrintable(rowText(table, 1)));
        QVERIFY(m_panel->beadTitle().contains(QStringLiteral("Bead %1</b>").arg(ok)));
        for (size_t k = 0; k < bead.coefficients.size(); ++k) {
            const CoefficientResult& c = bead.coefficients[k];
            const QString row = rowText(table, 3 + int(k));
            QVERIFY2(row.startsWith(QStringLiteral("Noll %1 ").arg(c.index)) && row.contains(QString::number(c.waves, 'f', 4))
                         && row.contains(QString::number(c.uncertaintyWaves, 'f', 4)),
                     qPrintable(row));
        }
        QCOMPARE(m_panel->projectionView()->plot()->graph(3)->dataCount(), 1); // its ring

        const int aside = firstBead(*run, false);
        m_panel->selectBead(aside);
        const FieldBead& other = run->beads[size_t(aside)];
        QVERIFY(rowText(table, 0).contains(QString::fromStdString(other.status)));
        QVERIFY2(m_panel->beadTitle().contains(QString::fromStdString(other.reason).toHtmlEscaped()), qPrintable(m_panel->beadTitle()));
        m_panel->selectBead(-1);
        QCOMPARE(table->rowCount(), 0);
        QVERIFY(m_panel->beadTitle().startsWith(QStringLiteral("Click")));
    }

    void tooltipNamesStatusAndReason()
    {
        const std::shared_ptr<const FieldRun> run = m_panel->fieldRun();
        const int aside = firstBead(*run, false);
        QCustomPlot* plot = m_panel->projectionView()->plot();
        const FieldBead& bead = run->beads[size_t(aside)];
        const QPoint at(int(std::lround(plot->xAxis->coordToPixel(bead.detection.x))),
                        int(std::lround(plot->yAxis->coordToPixel(bead.detection.y))));
        QHelpEvent help(QEvent::ToolTip, at, plot->mapToGlobal(at));
        QCoreApplication::sendEvent(plot, &help);
        QTRY_VERIFY(QToolTip::isVisible());
        QVERIFY2(QToolTip::text().contains(QString::fromStdString(bead.status))
                     && QToolTip::text().contains(QString::fromStdString(bead.reason)),
                 qPrintable(QToolTip::text()));
        QToolTip::hideText();
    }

    // A user's stack: the slide written as FITS and read back through core's addFiles, fitted with the settings source's model.
    void userStackFromFile()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        FieldSimulationOptions o;
        o.beads = kBeads;
        o.width = o.height = kWidth;
        const QString path = dir.filePath(QStringLiteral("field.fits"));
        QFile file(path);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write(fieldFitsBytes(simulateField(o)));
        file.close();
        FieldPanel panel;
        int asked = 0;
        // The pitch the user typed stands over the file's (166.7 nm), as batch keeps a person's settings for each input.
        static constexpr double kTypedPitch = 150e-9;
        panel.setSettingsSource([&asked] {
            ++asked;
            Session s;
            s.model.order = 4;
            s.dataset.metadata.pixelPitch = kTypedPitch;
            s.dataset.metadata.origin["pixelPitch"] = "user";
            return s;
        });
        QSignalSpy finished(&panel, &FieldPanel::runFinished);
        QVERIFY(panel.loadStack(path));
        QVERIFY(finished.wait(kGuardMs));
        QVERIFY2(finished.front().front().toBool(), qPrintable(panel.statusText()));
        QCOMPARE(asked, 1);
        QVERIFY(panel.statusText().startsWith(path));
        QCOMPARE(panel.markerCount(), int(panel.fieldRun()->beads.size()));
        QVERIFY(panel.fieldRun()->model.has_value());
        QCOMPARE(panel.fieldRun()->pixelPitch.value_or(0.0), kTypedPitch);

        // Its results saved as the command line writes them, all or none; an existing file is not replaced unasked.
        QVERIFY(panel.findChild<QPushButton*>(QStringLiteral("fieldSave"))->isEnabled());
        const QString out = dir.filePath(QStringLiteral("results"));
        QVERIFY(QDir().mkpath(out));
        QString error;
        QVERIFY2(panel.saveResults(out, false, &error), qPrintable(error));
        for (const auto& [name, bytes] : fieldRunFiles(*panel.fieldRun())) {
            QFile saved(QDir(out).filePath(QString::fromStdString(name)));
            QVERIFY2(saved.open(QIODevice::ReadOnly), qPrintable(saved.fileName()));
            QCOMPARE(saved.readAll(), bytes);
        }
        QVERIFY(!panel.saveResults(out, false, &error));
        QVERIFY2(error.contains(QStringLiteral("exists")), qPrintable(error));
        QVERIFY(panel.saveResults(out, true, &error));
    }

    // A run that throws says why and keeps the stack (and the run shown); the next run works on the same stack.
    void failureKeepsTheStack()
    {
        const std::shared_ptr<const FieldRun> before = m_panel->fieldRun();
        QSignalSpy finished(m_panel.get(), &FieldPanel::runFinished);
        QSignalSpy messages(m_panel.get(), &FieldPanel::message);
        QVERIFY(m_panel->loadStack(QStringLiteral("/nonexistent/field.fits")));
        QVERIFY(finished.wait(kGuardMs));
        QCOMPARE(finished.takeFirst().front().toBool(), false);
        QVERIFY2(m_panel->statusText().contains(QStringLiteral("/nonexistent/field.fits")), qPrintable(m_panel->statusText()));
        QVERIFY(!messages.isEmpty());
        QCOMPARE(m_panel->fieldRun(), before);

        auto* crop = m_panel->findChild<QSpinBox*>(QStringLiteral("fieldCrop"));
        QVERIFY(crop);
        crop->setValue(33); // core refuses an odd crop
        QVERIFY(m_panel->runAgain());
        QVERIFY(finished.wait(kGuardMs));
        QCOMPARE(finished.takeFirst().front().toBool(), false);
        QVERIFY2(m_panel->statusText().contains(QStringLiteral("crop")) && m_panel->statusText().contains(QStringLiteral("stays")),
                 qPrintable(m_panel->statusText()));
        QCOMPARE(m_panel->fieldRun(), before);
        crop->setValue(32);
        QVERIFY(m_panel->runAgain());
        QVERIFY(finished.wait(kGuardMs));
        QVERIFY2(finished.takeFirst().front().toBool(), qPrintable(m_panel->statusText()));
        QCOMPARE(m_panel->fieldRun()->beads.size(), before->beads.size()); // the same stack
    }

    void cancelledAndDestroyedWhileRunning()
    {
        FieldPanel panel;
        QSignalSpy finished(&panel, &FieldPanel::runFinished);
        QVERIFY(panel.runSimulatedField(100, 512));
        QVERIFY(panel.isRunning());
        QVERIFY(!panel.runSimulatedField()); // one job at a time
        panel.cancel();
        QVERIFY(finished.wait(kGuardMs));
        QCOMPARE(finished.front().front().toBool(), false);
        QVERIFY2(panel.statusText().contains(QStringLiteral("cancelled")), qPrintable(panel.statusText()));
        QVERIFY(panel.fieldRun() == nullptr);

        auto doomed = std::make_unique<FieldPanel>();
        QVERIFY(doomed->runSimulatedField(100, 512));
        doomed.reset(); // cancels and waits
    }

    // The tab in the main window, its run shown, at the three sizes.
    void readableInTheMainWindow_data()
    {
        QTest::addColumn<QSize>("size");
        for (const QSize& size : {QSize(1280, 800), QSize(1366, 768), QSize(1920, 1080)})
            QTest::addRow("%dx%d", size.width(), size.height()) << size;
    }

    void readableInTheMainWindow()
    {
        QFETCH(QSize, size);
        if (!m_window) {
            m_window = std::make_unique<MainWindow>();
            QVERIFY(m_window->showTab(QStringLiteral("field")));
            m_window->resize(size);
            m_window->show();
            QVERIFY(runSmallSlide(*m_window->fieldPanel()));
        }
        FieldPanel* panel = m_window->fieldPanel();
        // A bead set aside (its reason above the table), then a fitted one (its coefficients in the table).
        for (bool ok : {false, true}) {
            panel->selectBead(firstBead(*panel->fieldRun(), ok));
            m_window->resize(size);
            test::settle(m_window.get());
            QCOMPARE(m_window->size(), size);
            QStringList problems = layoutProblems(panel) + pictureProblems(panel);
            QTabBar* bar = m_window->tabs()->tabBar();
            if (bar->tabRect(bar->count() - 1).right() > bar->width())
                problems << QStringLiteral("the Field tab's name is behind the tab bar's arrows");
            if (const QString dir = qEnvironmentVariable("WFS_FIELD_SCREENSHOT_DIR"); !dir.isEmpty())
                m_window->grab().save(
                    QStringLiteral("%1/field-%2x%3-%4.png").arg(dir).arg(size.width()).arg(size.height()).arg(ok ? "ok" : "aside"));
            QVERIFY2(problems.isEmpty(), qPrintable(problems.join(QStringLiteral("\n  "))));
        }
    }

    void cleanupTestCase()
    {
        m_window.reset();
        m_panel.reset();
    }
};

QTEST_MAIN(TestFieldPanel)
#include "tst_fieldpanel.moc"
