#include "optics/Threads.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

namespace wfs::threads {

namespace {

std::atomic<int> s_allowedForTesting{-1};

std::thread startThread(std::function<void()> body, int index)
{
    const int allowed = s_allowedForTesting.load();
    if (allowed >= 0 && index >= allowed)
        throw std::system_error(std::make_error_code(std::errc::resource_unavailable_try_again), "thread creation refused (test)");
    return std::thread(std::move(body));
}

// One call's jobs: whoever takes the next index runs it, the caller included, so the call finishes even
// when every worker is busy with another caller's jobs or none could be started.
struct Jobs {
    const std::function<void(int)>* job = nullptr;
    int count = 0;
    std::atomic<int> next{0};
    std::atomic<int> done{0};
    std::mutex mutex;
    std::condition_variable finished;

    void drain()
    {
        for (int i = next.fetch_add(1); i < count; i = next.fetch_add(1)) {
            (*job)(i);
            if (done.fetch_add(1) + 1 == count) {
                std::lock_guard lock(mutex);
                finished.notify_all();
            }
        }
    }
};

// How long a thread polls before it sleeps: a worker for the next call, the caller for its helpers. A model
// evaluation makes a few dozen calls a few hundred microseconds apart, and waking a sleeping thread costs tens
// of microseconds (more on a virtual machine, whose idle CPU is halted), which at grid 512 ate what the second
// thread saved. A short poll catches the next call awake; then the thread sleeps, so on a machine whose cores
// are shared it gives its core back within this time (OpenMP's much longer spinning made a second thread
// there ten times slower).
constexpr auto kPollTime = std::chrono::microseconds(200);

// Polls `ready` until it holds or kPollTime has passed; whether it holds.
template <class Ready>
bool pollFor(Ready&& ready)
{
    const auto until = std::chrono::steady_clock::now() + kPollTime;
    for (int spins = 0;; ++spins) {
        if (ready())
            return true;
        if ((spins & 63) == 63 && std::chrono::steady_clock::now() > until)
            return false;
        std::this_thread::yield();
    }
}

class Pool {
public:
    ~Pool()
    {
        {
            std::lock_guard lock(m_mutex);
            m_stopping = true;
        }
        m_wake.notify_all();
        for (std::thread& t : m_workers)
            t.join();
    }

    // Starts workers until there are `wanted`; returns how many there are, and the reason of the first
    // refusal, if any.
    int grow(int wanted, std::string* refusal)
    {
        std::lock_guard lock(m_mutex);
        while (int(m_workers.size()) < wanted) {
            try {
                m_workers.push_back(startThread([this] { work(); }, int(m_workers.size())));
            } catch (const std::system_error& e) {
                if (refusal)
                    *refusal = e.what();
                break;
            }
        }
        return int(m_workers.size());
    }

    void run(int count, const std::function<void(int)>& job)
    {
        auto jobs = std::make_shared<Jobs>();
        jobs->job = &job;
        jobs->count = count;
        const int helpers = std::min(grow(count - 1, nullptr), count - 1);
        {
            std::lock_guard lock(m_mutex);
            for (int i = 0; i < helpers; ++i)
                m_queue.push_back(jobs);
        }
        m_queued.fetch_add(helpers);
        m_wake.notify_all();
        jobs->drain();
        if (pollFor([&] { return jobs->done.load() == count; }))
            return;
        std::unique_lock lock(jobs->mutex);
        jobs->finished.wait(lock, [&] { return jobs->done.load() == count; });
        // A worker that takes this call's entry later finds no index left; `job` is not touched again.
    }

private:
    void work()
    {
        for (;;) {
            std::shared_ptr<Jobs> jobs;
            pollFor([&] { return m_queued.load() > 0 || m_stopping.load(); });
            {
                std::unique_lock lock(m_mutex);
                m_wake.wait(lock, [&] { return m_stopping || !m_queue.empty(); });
                if (m_queue.empty())
                    return;
                jobs = std::move(m_queue.front());
                m_queue.pop_front();
                m_queued.fetch_sub(1);
            }
            jobs->drain();
        }
    }

    std::mutex m_mutex;
    std::condition_variable m_wake;
    std::deque<std::shared_ptr<Jobs>> m_queue;
    std::atomic<int> m_queued{0}; // m_queue's length, read without the lock while polling
    std::vector<std::thread> m_workers;
    std::atomic<bool> m_stopping{false};
};

Pool& pool()
{
    static Pool p;
    return p;
}

} // namespace

void parallelFor(int count, const std::function<void(int)>& job)
{
    if (count <= 1) {
        if (count == 1)
            job(0);
        return;
    }
    pool().run(count, job);
}

namespace {
[[noreturn]] void refuse(int count, int started, const std::string& reason)
{
    throw std::runtime_error("cannot start " + std::to_string(count) + " threads: the system refused a new thread after "
                             + std::to_string(started) + " (" + reason
                             + "); ask for fewer threads, or raise the process or memory limit (ulimit -u, ulimit -v)");
}
} // namespace

void requireThreads(int count)
{
    if (count <= 1)
        return;
    std::string reason;
    if (const int workers = pool().grow(count - 1, &reason); workers < count - 1)
        refuse(count, workers, reason);
}

void requireOpenMpTeam(int count)
{
    requireThreads(count);
    if (count <= 1)
        return;
    // The team: all alive at once, as OpenMP's are, each with what OpenMP's threads also take beside
    // their stack: a malloc arena (an address-space reservation of its own, what `ulimit -v` counts).
    // Then gone; the C library keeps stacks and arenas for the team to reuse.
    std::string reason;
    std::mutex mutex;
    std::condition_variable release;
    bool done = false;
    std::vector<std::thread> team;
    for (int i = 0; i < count - 1; ++i) {
        try {
            team.push_back(startThread(
                [&] {
                    const std::unique_ptr<char[]> touch(new char[64]);
                    std::unique_lock lock(mutex);
                    release.wait(lock, [&] { return done; });
                },
                i));
        } catch (const std::system_error& e) {
            reason = e.what();
            break;
        }
    }
    {
        std::lock_guard lock(mutex);
        done = true;
    }
    release.notify_all();
    const int started = int(team.size());
    for (std::thread& t : team)
        t.join();
    if (!reason.empty())
        refuse(count, count - 1 + started, reason);
}

void setThreadLimitForTesting(int allowed)
{
    s_allowedForTesting = allowed;
}

} // namespace wfs::threads
