// The FastH panel on the offscreen platform: pictures (factors orthogonal, W = U diag(sigma) V^T, the engine's
// blocks outlined), the GPU choice without a device, a small sweep to completion whose CSV holds exactly the
// engine's numbers, PNG exports, a sweep cancelled mid-way, training that lowers the loss with inverse and
// determinant matching LU, a cancelled training, and a panel destroyed while it works. No timed assertions.
#include "IsolatedSettings.h"
#include "TestSupport.h"

#include "FasthMatrixView.h"
#include "FasthPanel.h"
#include "ImageView.h"

#include <qcustomplot.h>

#include "engine/BackendFactory.h"
#include "fasth/Householder.h"

#include <QComboBox>
#include <QFile>
#include <QImage>
#include <QLabel>
#include <QSignalSpy>
#include <QStandardItemModel>
#include <QTabWidget>
#include <QTemporaryDir>

#include <memory>

using namespace wfs;
using namespace wfs::ui;

namespace {

// One CSV line into fields, with RFC 4180 quotes.
QStringList splitCsv(const QString& line)
{
    QStringList fields;
    QString field;
    bool quoted = false;
    for (int i = 0; i < line.size(); ++i) {
        const QChar c = line[i];
        if (quoted) {
            if (c == QLatin1Char('"') && i + 1 < line.size() && line[i + 1] == QLatin1Char('"')) {
                field += c;
                ++i;
            } else if (c == QLatin1Char('"')) {
                quoted = false;
            } else {
                field += c;
            }
        } else if (c == QLatin1Char('"')) {
            quoted = true;
        } else if (c == QLatin1Char(',')) {
            fields << field;
            field.clear();
        } else {
            field += c;
        }
    }
    fields << field;
    return fields;
}

FasthSweepSettings smallSweep()
{
    FasthSweepSettings s;
    s.dimensions = {16, 32};
    s.batch = 4;
    s.blockSize = 8;
    s.blockSweepDimension = 32;
    s.blockSweepReflectors = 32;
    s.threads = 1;
    s.repeat = 2;
    s.warmup = 0;
    return s;
}

bool waitFor(QSignalSpy& spy, int timeoutMs = 120000)
{
    return spy.count() > 0 || spy.wait(timeoutMs);
}

} // namespace

class TestFasthPanel : public QObject {
    Q_OBJECT

private:
    wfs::test::IsolatedSettings m_settings; // declared first: outlives the panel
    std::unique_ptr<FasthPanel> m_panel;    // one panel; the sweep tests build on each other's results
    QTemporaryDir m_dir;

private slots:
    void initTestCase()
    {
        // Nothing of the user's settings is read or written (a temporary settings path).
        QVERIFY2(m_settings.isolate(QStringLiteral("tst_fasthpanel")), qPrintable(QSettings().fileName()));
        QVERIFY(m_dir.isValid());
        m_panel = std::make_unique<FasthPanel>();
        m_panel->resize(1500, 900);
        m_panel->show();
        // The defaults a class starts from stay small enough to finish in seconds.
        const FasthSweepSettings defaults = m_panel->sweepSettings();
        QString error;
        QVERIFY2(defaults.isValid(&error), qPrintable(error));
        QVERIFY(*std::max_element(defaults.dimensions.begin(), defaults.dimensions.end()) <= 256);
        QVERIFY(defaults.repeat <= 5);
        QCOMPARE(defaults.methods.size(), size_t(6));
        QVERIFY(!m_panel->isRunning());
    }

    // Issue 42: before a run the Timing and SVD-layer tabs say what to press (no empty or collapsed axes); the
    // plots come with the run.
    void emptyTabsSayWhatToPress()
    {
        const auto emptyStates = m_panel->findChildren<QLabel*>(QStringLiteral("fasthEmptyState"));
        QCOMPARE(emptyStates.size(), qsizetype(2));
        auto* tabs = m_panel->findChild<QTabWidget*>();
        QVERIFY(tabs);
        for (int page : {1, 2}) {
            tabs->setCurrentIndex(page);
            QCoreApplication::processEvents();
            int shown = 0;
            for (QLabel* hint : emptyStates)
                if (hint->isVisible()) {
                    ++shown;
                    QVERIFY2(hint->text().contains(page == 1 ? QStringLiteral("Run timing sweep") : QStringLiteral("Train layer")),
                             qPrintable(hint->text()));
                }
            QCOMPARE(shown, 1);
            for (QCustomPlot* plot : tabs->widget(page)->findChildren<QCustomPlot*>())
                QVERIFY2(!plot->isVisible(), "axes shown before a run");
        }
        tabs->setCurrentIndex(0);
    }

    void picturesShowTheLayerAndItsBlocks()
    {
        QSignalSpy updated(m_panel.get(), &FasthPanel::picturesUpdated);
        QVERIFY(waitFor(updated)); // the panel's own first pictures
        updated.clear();
        FasthPictureSettings settings;
        settings.d = 20;
        settings.k = 20;
        settings.blockSize = 6; // a ragged last block: 6, 6, 6, 2
        m_panel->updatePictures(settings);
        QVERIFY(updated.wait(60000));
        const auto& pictures = m_panel->pictures();
        QVERIFY(pictures.has_value());
        QVERIFY(pictures->error.isEmpty());
        QCOMPARE(pictures->settings.d, 20);
        const std::vector<std::pair<int, int>> blocks = {{0, 6}, {6, 6}, {12, 6}, {18, 2}};
        QCOMPARE(pictures->blocks, blocks);
        QVERIFY2(pictures->uOrthogonalityError < 1e-13, qPrintable(QString::number(pictures->uOrthogonalityError)));
        QVERIFY2(pictures->vOrthogonalityError < 1e-13, qPrintable(QString::number(pictures->vOrthogonalityError)));
        // The factors are the products of the reflectors (checked against the sequential algorithm) and W is
        // U diag(sigma) V^T.
        fasth::Options sequential;
        sequential.algorithm = fasth::Algorithm::Sequential;
        const Eigen::MatrixXd identity = Eigen::MatrixXd::Identity(20, 20);
        const Eigen::MatrixXd u = fasth::apply<double>(pictures->uReflectors, identity, sequential);
        const Eigen::MatrixXd v = fasth::apply<double>(pictures->vReflectors, identity, sequential);
        QVERIFY((u - pictures->uFactor).cwiseAbs().maxCoeff() < 1e-12);
        QVERIFY((v - pictures->vFactor).cwiseAbs().maxCoeff() < 1e-12);
        const Eigen::MatrixXd w = u * pictures->sigma.asDiagonal() * v.transpose();
        QVERIFY((w - pictures->w).cwiseAbs().maxCoeff() < 1e-12);
        // The blocks are drawn over the reflector matrix.
        const auto views = m_panel->findChildren<FasthMatrixView*>();
        QCOMPARE(views.size(), 4);
        int withBlocks = 0;
        for (const FasthMatrixView* view : views) {
            QCOMPARE(view->matrixRows(), 20);
            if (view->shownBlockCount() > 0) {
                ++withBlocks;
                QCOMPARE(view->shownBlockCount(), 4);
                QCOMPARE(view->matrixColumns(), 20);
            }
        }
        QCOMPARE(withBlocks, 1);

        // Issue 42: matrices and symbols written as symbols (σᵢ, Vᵀ, ‖·‖², ×), not as "sigma_i", "V^T" or "||.||^2".
        QStringList texts;
        for (const ImageView* view : m_panel->findChildren<ImageView*>())
            texts << view->title();
        for (const QCustomPlot* plot : m_panel->findChildren<QCustomPlot*>())
            texts << plot->xAxis->label() << plot->yAxis->label();
        QVERIFY(texts.join(QLatin1Char(' ')).contains(QStringLiteral("Vᵀ")));
        for (const QString& text : std::as_const(texts))
            for (const QString& ascii : {QStringLiteral("sigma"), QStringLiteral("^T"), QStringLiteral("^2"), QStringLiteral("||"),
                                         QStringLiteral("..."), QStringLiteral("(x)")})
                QVERIFY2(!text.contains(ascii), qPrintable(text));

        // float32: its own orthogonality level, far above float64's and still small.
        settings.precision = Precision::Float;
        m_panel->updatePictures(settings);
        QVERIFY(updated.wait(60000));
        QVERIFY(m_panel->pictures()->uOrthogonalityError < 1e-5);
        QVERIFY(m_panel->pictures()->uOrthogonalityError > 1e-12);
    }

    void gpuChoiceSaysWhyWithoutADevice()
    {
        const BackendStatus gpu = backendStatus(BackendKind::Gpu);
        if (gpu.available)
            QSKIP("a GPU is available here; the no-GPU path cannot be exercised");
        auto* combo = m_panel->findChild<QComboBox*>(QStringLiteral("fasthBackend"));
        QVERIFY(combo);
        QCOMPARE(combo->count(), 2);
        auto* model = qobject_cast<QStandardItemModel*>(combo->model());
        QVERIFY(model);
        QVERIFY(model->item(0)->isEnabled());
        QVERIFY(!model->item(1)->isEnabled());
        QCOMPARE(combo->itemData(1, Qt::ToolTipRole).toString(), QString::fromStdString(gpu.reason));
        // The processor's name, of any length, is the CPU entry's tooltip: the item's text fits whatever the host.
        QCOMPARE(combo->itemText(0), QStringLiteral("CPU (Eigen)"));
        QCOMPARE(combo->itemData(0, Qt::ToolTipRole).toString(), QString::fromStdString(backendStatus(BackendKind::Cpu).device));
        QVERIFY(!gpu.reason.empty());
        // Asked for anyway (as a caller might), the sweep refuses with the reason.
        FasthSweepSettings settings = smallSweep();
        settings.backend = BackendKind::Gpu;
        QVERIFY(!m_panel->runTimingSweep(settings));
        QVERIFY(m_panel->lastError().contains(QString::fromStdString(gpu.reason)));
        QVERIFY(!m_panel->isRunning());
    }

    void smallSweepRunsToCompletion()
    {
        QSignalSpy finished(m_panel.get(), &FasthPanel::sweepFinished);
        QSignalSpy cancelled(m_panel.get(), &FasthPanel::sweepCancelled);
        QSignalSpy failed(m_panel.get(), &FasthPanel::sweepFailed);
        const FasthSweepSettings settings = smallSweep();
        QVERIFY(m_panel->runTimingSweep(settings));
        QVERIFY(m_panel->isRunning());
        QVERIFY(!m_panel->runTimingSweep(settings)); // one at a time
        QVERIFY(!m_panel->startTraining(m_panel->trainingSettings()));
        QVERIFY(waitFor(finished));
        QCOMPARE(cancelled.count(), 0);
        QCOMPARE(failed.count(), 0);
        QVERIFY(!m_panel->isRunning());
        for (QLabel* hint : m_panel->findChildren<QLabel*>(QStringLiteral("fasthEmptyState")))
            if (hint->isVisible())
                QFAIL(qPrintable(QStringLiteral("the empty state shows after a sweep: ") + hint->text()));

        // d sweep: 2 d x 6 methods x 3 passes; block sweep at d = 32: (sequential + FastH at b = 1, 2, 4, 8, 16,
        // 32 + dense) x 3 passes.
        const auto& rows = m_panel->timingRows();
        QCOMPARE(rows.size(), size_t(2 * 6 * 3 + (1 + 6 + 1) * 3));
        QCOMPARE(m_panel->lastSweep()->total, int(rows.size()));
        QVERIFY(m_panel->lastSweep()->skipped.isEmpty());
        std::vector<int> fasthBlocks;
        for (const FasthTimingRow& t : rows) {
            const fasth::SweepRow& r = t.row;
            QVERIFY2(r.maxAbsError < 1e-12, qPrintable(QStringLiteral("%1 %2 d=%3: %4")
                                                           .arg(fasth::methodName(r.method), fasth::passName(r.pass))
                                                           .arg(r.d)
                                                           .arg(r.maxAbsError)));
            QVERIFY(r.msQ1 <= r.ms && r.ms <= r.msQ3);
            QCOMPARE(r.repeat, 2);
            QCOMPARE(r.batch, 4);
            QCOMPARE(r.backend, std::string("cpu"));
            if (t.sweep == FasthSweepKind::Dimension && fasth::isBlocked(r.method)) {
                QCOMPARE(r.requestedBlock, 8);
                // The tree merges pairs of blocks once (one level): it works with blocks of 16.
                QCOMPARE(r.block, r.method == fasth::BenchMethod::TreeMerge ? 16 : 8);
            }
            if (t.sweep == FasthSweepKind::BlockSize && r.method == fasth::BenchMethod::FastH && r.pass == fasth::Pass::Forward)
                fasthBlocks.push_back(r.block);
        }
        QCOMPARE(fasthBlocks, (std::vector<int>{1, 2, 4, 8, 16, 32}));

        // Speed-ups are ratios of the same sweep's medians.
        const auto speedUps = m_panel->speedUps(fasth::Pass::Both);
        QCOMPARE(speedUps.size(), size_t(2 * 5));
        for (const FasthSpeedUp& s : speedUps) {
            double sequential = 0, method = 0;
            for (const FasthTimingRow& t : rows)
                if (t.sweep == FasthSweepKind::Dimension && t.row.d == s.d && t.row.pass == fasth::Pass::Both) {
                    if (t.row.method == fasth::BenchMethod::Sequential)
                        sequential = t.row.ms;
                    if (t.row.method == s.method)
                        method = t.row.ms;
                }
            QCOMPARE(s.speedUp, sequential / method);
        }
        // The explanation reports this machine's numbers.
        QVERIFY(m_panel->explanationHtml().contains(QStringLiteral("On this machine")));
    }

    void csvHoldsTheEngineNumbers()
    {
        QVERIFY(!m_panel->timingRows().empty());
        const QString path = m_dir.filePath(QStringLiteral("sweep.csv"));
        QVERIFY(m_panel->exportCsv(path));
        QFile file(path);
        QVERIFY(file.open(QIODevice::ReadOnly | QIODevice::Text));
        const QStringList lines = QString::fromUtf8(file.readAll()).trimmed().split(QLatin1Char('\n'));
        const auto& rows = m_panel->timingRows();
        QCOMPARE(lines.size(), int(rows.size()) + 1);
        const QStringList header = splitCsv(lines.front());
        QCOMPARE(header, fasthCsvHeader());
        auto column = [&](const char* name) { return int(header.indexOf(QString::fromLatin1(name))); };
        for (size_t i = 0; i < rows.size(); ++i) {
            const QStringList fields = splitCsv(lines[int(i) + 1]);
            QCOMPARE(fields.size(), header.size());
            const fasth::SweepRow& r = rows[i].row;
            QCOMPARE(fields[column("sweep")], QString::fromLatin1(sweepKindName(rows[i].sweep)));
            QCOMPARE(fields[column("d")].toInt(), r.d);
            QCOMPARE(fields[column("k")].toInt(), r.k);
            QCOMPARE(fields[column("batch")].toInt(), r.batch);
            QCOMPARE(fields[column("block")].toInt(), r.block);
            QCOMPARE(fields[column("method")], QString::fromLatin1(fasth::methodName(r.method)));
            QCOMPARE(fields[column("pass")], QString::fromLatin1(fasth::passName(r.pass)));
            QCOMPARE(fields[column("device")], QString::fromStdString(r.device));
            QCOMPARE(fields[column("threads")].toInt(), r.threads);
            // Bit for bit: the file carries the engine's doubles, not rounded display values.
            QVERIFY(fields[column("ms")].toDouble() == r.ms);
            QVERIFY(fields[column("ms_q1")].toDouble() == r.msQ1);
            QVERIFY(fields[column("ms_q3")].toDouble() == r.msQ3);
            QVERIFY(fields[column("gflops")].toDouble() == r.gflops);
            QVERIFY(fields[column("flops")].toDouble() == r.flops);
            QVERIFY(fields[column("max_abs_error")].toDouble() == r.maxAbsError);
        }
        // A path that cannot be written fails cleanly and leaves no file.
        const QString bad = m_dir.filePath(QStringLiteral("no/such/dir/sweep.csv"));
        QVERIFY(!m_panel->exportCsv(bad));
        QVERIFY(!QFile::exists(bad));
        QVERIFY(!m_panel->lastError().isEmpty());
    }

    void plotsExportAsPng()
    {
        for (FasthPlot plot : {FasthPlot::Timing, FasthPlot::SpeedUp, FasthPlot::BlockSize, FasthPlot::Pictures, FasthPlot::SingularValues,
                               FasthPlot::Loss, FasthPlot::TrainedSingularValues}) {
            const QString path = m_dir.filePath(QStringLiteral("%1.png").arg(fasthPlotName(plot)));
            QVERIFY2(m_panel->exportPng(path, plot), fasthPlotName(plot));
            const QImage image(path);
            QVERIFY2(!image.isNull(), fasthPlotName(plot));
            QVERIFY(image.width() >= 300 && image.height() >= 200);
            QVERIFY(!QFile::exists(path + QStringLiteral(".part")));
        }
        QVERIFY(!m_panel->exportPng(m_dir.filePath(QStringLiteral("no/such/dir/plot.png"))));
    }

    void sweepCancelledMidway()
    {
        QSignalSpy progress(m_panel.get(), &FasthPanel::sweepProgress);
        QSignalSpy finished(m_panel.get(), &FasthPanel::sweepFinished);
        QSignalSpy cancelled(m_panel.get(), &FasthPanel::sweepCancelled);
        // Far longer than a test may take (d to 1024, 30 repetitions), so cancel lands mid-way.
        FasthSweepSettings settings = smallSweep();
        settings.dimensions = {16, 32, 64, 128, 256, 512, 1024};
        settings.batch = 32;
        settings.repeat = 30;
        QVERIFY(m_panel->runTimingSweep(settings));
        while (progress.isEmpty() || progress.last().at(0).toInt() < 1)
            QVERIFY2(progress.wait(120000), "no progress from the sweep");
        m_panel->cancel();
        QVERIFY(waitFor(cancelled));
        QCOMPARE(finished.count(), 0);
        QVERIFY(!m_panel->isRunning());
        const auto& sweep = m_panel->lastSweep();
        QVERIFY(sweep.has_value() && sweep->cancelled);
        const auto& rows = m_panel->timingRows();
        QVERIFY(!rows.empty()); // what was measured before the cancel is kept
        QVERIFY(int(rows.size()) < sweep->total);
        for (const FasthTimingRow& t : rows)
            QVERIFY(t.row.maxAbsError < 1e-10 && t.row.repeat == 30);
        // The panel takes a new job at once.
        QSignalSpy again(m_panel.get(), &FasthPanel::sweepFinished);
        QVERIFY(m_panel->runTimingSweep(smallSweep()));
        QVERIFY(waitFor(again));
    }

    void trainingLowersTheLossAndMatchesLu()
    {
        QSignalSpy finished(m_panel.get(), &FasthPanel::trainingFinished);
        QSignalSpy progress(m_panel.get(), &FasthPanel::trainingProgress);
        FasthTrainingSettings settings;
        settings.d = 16;
        settings.k = 16;
        settings.samples = 32;
        settings.steps = 80;
        settings.learningRate = 0.02;
        settings.blockSize = 5;
        settings.timingRepeat = 2;
        QVERIFY(m_panel->startTraining(settings));
        QVERIFY(!m_panel->runTimingSweep(smallSweep())); // one job at a time
        QVERIFY(waitFor(finished));
        QVERIFY(!m_panel->isRunning());
        const auto& result = m_panel->lastTraining();
        QVERIFY(result.has_value());
        QVERIFY2(result->error.isEmpty(), qPrintable(result->error));
        QCOMPARE(result->summary.iterations, 80);
        QCOMPARE(result->losses.size(), size_t(81)); // before each step, and after the last
        QCOMPARE(result->losses.front(), result->summary.initialLoss);
        QCOMPARE(result->losses.back(), result->summary.finalLoss);
        QVERIFY2(result->summary.finalLoss < 0.5 * result->summary.initialLoss,
                 qPrintable(QStringLiteral("%1 -> %2").arg(result->summary.initialLoss).arg(result->summary.finalLoss)));
        QCOMPARE(result->sigma.size(), Eigen::Index(16));
        QCOMPARE(result->targetSingularValues.size(), Eigen::Index(16));
        QCOMPARE(m_panel->shownLossPoints(), 81);
        // Live updates come at display rate: never more than one per step.
        QVERIFY(progress.count() <= 80);

        const FasthUseCaseComparison& c = result->useCases;
        QVERIFY2(c.inverseRelativeDifference < 1e-9, qPrintable(QString::number(c.inverseRelativeDifference)));
        QVERIFY2(c.inverseResidual < 1e-10, qPrintable(QString::number(c.inverseResidual)));
        WFS_VERIFY_CLOSE(c.svdLogAbsDet, c.luLogAbsDet, 1e-10, 1e-10);
        QCOMPARE(c.svdDetSign, c.luDetSign);
        QVERIFY(c.svdDetSign == 1 || c.svdDetSign == -1);
        QCOMPARE(c.rightHandSides, 32);
    }

    void trainingCancelledMidway()
    {
        QSignalSpy progress(m_panel.get(), &FasthPanel::trainingProgress);
        QSignalSpy cancelled(m_panel.get(), &FasthPanel::trainingCancelled);
        QSignalSpy finished(m_panel.get(), &FasthPanel::trainingFinished);
        FasthTrainingSettings settings;
        settings.d = 32;
        settings.k = 32;
        settings.samples = 64;
        settings.steps = 100000;
        QVERIFY(m_panel->startTraining(settings));
        QVERIFY(waitFor(progress));
        m_panel->cancel();
        QVERIFY(waitFor(cancelled));
        QCOMPARE(finished.count(), 0);
        const auto& result = m_panel->lastTraining();
        QVERIFY(result.has_value() && result->cancelled);
        QVERIFY(result->summary.iterations >= 1 && result->summary.iterations < 100000);
        QCOMPARE(result->losses.size(), size_t(result->summary.iterations) + 1);
        QVERIFY(!m_panel->isRunning());
    }

    void invalidRequestsAreRefused()
    {
        FasthSweepSettings sweep = smallSweep();
        sweep.dimensions.clear();
        QVERIFY(!m_panel->runTimingSweep(sweep));
        QVERIFY(!m_panel->lastError().isEmpty());
        FasthTrainingSettings training;
        training.k = training.d + 1;
        QVERIFY(!m_panel->startTraining(training));
        QVERIFY(!m_panel->isRunning());
    }

    void destroyedWhileWorking()
    {
        // The destructor cancels and waits: no worker outlives the panel, no result reaches a dead one.
        auto panel = std::make_unique<FasthPanel>();
        FasthSweepSettings settings = smallSweep();
        settings.dimensions = {256, 512, 1024};
        settings.repeat = 30;
        QVERIFY(panel->runTimingSweep(settings));
        panel.reset();
        auto training = std::make_unique<FasthPanel>();
        FasthTrainingSettings long_;
        long_.steps = 100000;
        QVERIFY(training->startTraining(long_));
        training.reset();
        QCoreApplication::processEvents();
    }

    void cleanupTestCase() { m_panel.reset(); }
};

QTEST_MAIN(TestFasthPanel)
#include "tst_fasthpanel.moc"
