// Threads the system refuses (issue 28): the pool, FFTW's threaded plans and the OpenMP team check (optics/Threads.h)
// finish the work on fewer threads or give a message with the count, the reason and what to do, never a hang in
// FFTW's pool or libgomp's exit. (Data that only look fittable, scaled to 1e-300 or negated: tst_badinput.)
#include "TestSupport.h"

#include "optics/Fftw.h"
#include "optics/Threads.h"

#include <QTest>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <set>
#include <thread>

using namespace wfs;
using namespace wfs::test;

namespace {

bool contains(const std::string& text, const char* part)
{
    return text.find(part) != std::string::npos;
}

// A 2-D transform of a fixed pattern with `threads` threads, returned whole.
std::vector<std::complex<double>> transformed(int n, int threads)
{
    fftw::PlanKey key;
    key.n = n;
    key.threads = threads;
    key.measure = false;
    fftw::ComplexBuffer<double> buffer(size_t(n) * size_t(n));
    for (size_t i = 0; i < buffer.size(); ++i)
        buffer.data()[i] = {std::sin(0.37 * double(i)), std::cos(0.11 * double(i * i % 977))};
    fftw::Traits<double>::execute(fftw::plan<double>(key), buffer.raw(), buffer.raw());
    return {buffer.data(), buffer.data() + buffer.size()};
}

} // namespace

class TestRefusedThreads : public QObject {
    Q_OBJECT

private slots:
    // Runs first, while the process has no pool worker: none may start at all.
    void noThreadAtAllStillFinishesTheWork()
    {
        threads::setThreadLimitForTesting(0);
        std::vector<int> done(8, 0);
        threads::parallelFor(8, [&](int i) { ++done[size_t(i)]; });
        QCOMPARE(done, std::vector<int>(8, 1)); // every job once, on the caller

        // FFTW's threaded plans run on the same pool: with no worker they give the one-thread answer
        // (FFTW's own pool waited for good for a worker that never started).
        const auto reference = transformed(256, 1), refused = transformed(256, 4);
        QCOMPARE(refused.size(), reference.size());
        double worst = 0.0;
        for (size_t i = 0; i < reference.size(); ++i)
            worst = std::max(worst, std::abs(refused[i] - reference[i]));
        QVERIFY2(worst <= 1e-9, qPrintable(QString::number(worst)));

        // And a run that asks for 4 threads is told, with the count, the reason and what to do.
        const std::string message = errorOf([] { threads::requireThreads(4); });
        QVERIFY2(contains(message, "cannot start 4 threads") && contains(message, "after 0") && contains(message, "ulimit -u")
                     && contains(message, "fewer threads"),
                 message.c_str());
        threads::setThreadLimitForTesting(-1);
    }

    void someThreadsAreNotEnough()
    {
        // Two workers may start; a run of 6 threads needs 5.
        threads::setThreadLimitForTesting(2);
        const std::string pool = errorOf([] { threads::requireThreads(6); });
        QVERIFY2(contains(pool, "cannot start 6 threads") && contains(pool, "after 2"), pool.c_str());
        threads::setThreadLimitForTesting(-1);
        QVERIFY(errorOf([] { threads::requireThreads(6); }).empty());
        // The OpenMP team check: the pool is there now, the team's second thread is refused.
        threads::setThreadLimitForTesting(1);
        const std::string team = errorOf([] { threads::requireOpenMpTeam(6); });
        threads::setThreadLimitForTesting(-1);
        QVERIFY2(contains(team, "cannot start 6 threads") && contains(team, "after 6"), team.c_str());
        QVERIFY(errorOf([] { threads::requireOpenMpTeam(6); }).empty());
    }

    void granted() // Once the threads exist, a call's jobs do run side by side.
    {
        QVERIFY(errorOf([] { threads::requireThreads(4); }).empty());
        std::mutex mutex;
        std::condition_variable all;
        int arrived = 0;
        bool together = true;
        std::set<std::thread::id> ids;
        threads::parallelFor(4, [&](int) {
            std::unique_lock lock(mutex);
            ids.insert(std::this_thread::get_id());
            ++arrived;
            all.notify_all();
            // Each job waits for the other three: only possible when four threads run them at once. The
            // bound only keeps a broken pool from hanging the suite.
            if (!all.wait_for(lock, std::chrono::seconds(60), [&] { return arrived == 4; }))
                together = false;
        });
        QVERIFY(together);
        QCOMPARE(int(ids.size()), 4);
    }
};

QTEST_GUILESS_MAIN(TestRefusedThreads)
#include "tst_refusedthreads.moc"
