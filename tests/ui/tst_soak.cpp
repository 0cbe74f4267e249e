// Soak (issue 12): 500 fits in one process, each on a new engine (the core facade and the GUI's
// EngineController alternately), on a small grid so that it runs in CI. Resident memory after the
// first 50 fits is the baseline; after 500 it must be within 5 % of it. Every fit must also give the
// same result to the bit (the fits are deterministic). The figures are printed for the record.
#include "TestSupport.h"

#include "EngineController.h"
#include "engine/Presets.h"

#include <QSignalSpy>

#include <unistd.h>

#include <cstdio>

using namespace wfs;
using namespace wfs::ui;

namespace {

long residentKiB()
{
    long pages = 0, resident = 0;
    if (FILE* f = std::fopen("/proc/self/statm", "r")) {
        if (std::fscanf(f, "%ld %ld", &pages, &resident) != 2)
            resident = 0;
        std::fclose(f);
    }
    return resident * (::sysconf(_SC_PAGESIZE) / 1024);
}

ReconstructionRequest smallRequest()
{
    PresetOptions options;
    options.grid = 32;
    options.order = 3;
    const PresetCase c = makePreset("demo", options);
    ReconstructionRequest request;
    request.spec = c.spec;
    request.start = c.start;
    request.solver = c.solver;
    request.solver.maxIterations = 40;
    request.evaluator.measurePlans = false;
    request.liveImageInterval = 0.0; // snapshots with model images too: the GUI's path
    return request;
}

} // namespace

class TestSoak : public QObject {
    Q_OBJECT

private slots:
    void fiveHundredFitsKeepMemoryFlat()
    {
        const ReconstructionRequest request = smallRequest();
        constexpr int kFits = 500, kWarmUp = 50;
        long baseline = 0;
        double firstCost = 0.0;
        for (int i = 0; i < kFits; ++i) {
            FitResult result;
            if (i % 2 == 0) {
                ReconstructionEngine engine; // created, run and destroyed each time
                engine.start(request);
                engine.wait();
                QVERIFY2(engine.error().empty(), engine.error().c_str());
                result = *engine.result();
            } else {
                EngineController controller;
                controller.setRefreshInterval(1);
                QSignalSpy finished(&controller, &EngineController::finished);
                QSignalSpy failed(&controller, &EngineController::failed);
                controller.start(request);
                while (finished.isEmpty() && failed.isEmpty())
                    QVERIFY(finished.wait(60000) || !failed.isEmpty());
                QVERIFY2(failed.isEmpty(), qPrintable(failed.value(0).value(0).toString()));
                result = *finished.first().first().value<std::shared_ptr<const FitResult>>();
            }
            if (i == 0)
                firstCost = result.solver.finalCost;
            QCOMPARE(result.solver.finalCost, firstCost); // bit for bit, engine after engine
            if (i + 1 == kWarmUp)
                baseline = residentKiB();
        }
        const long final = residentKiB();
        const double growth = 100.0 * double(final - baseline) / double(baseline);
        qInfo("soak: %d fits (grid 32, order 3, %zu parameters); resident memory after %d fits %ld KiB, after %d fits %ld KiB: %+.2f %%",
              kFits, smallRequest().start.size(), kWarmUp, baseline, kFits, final, growth);
        QVERIFY2(baseline > 0, "no /proc/self/statm");
        QVERIFY2(growth < 5.0, qPrintable(QStringLiteral("resident memory grew by %1 %").arg(growth)));
    }
};

QTEST_MAIN(TestSoak)
#include "tst_soak.moc"
