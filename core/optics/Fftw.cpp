#include "optics/Fftw.h"
#include "optics/Threads.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <filesystem>
#include <map>
#include <string>
#include <mutex>
#include <new>
#include <stdexcept>

namespace wfs::fftw {

namespace {
constexpr double kPlanningSecondsPerPlan = 2.0;

std::mutex& plannerMutex()
{
    static std::mutex mutex;
    return mutex;
}

template <class Real>
struct Api;

template <>
struct Api<double> {
    static void planWithThreads(int t) { fftw_plan_with_nthreads(t); }
    static void setTimeLimit(double seconds) { fftw_set_timelimit(seconds); }
    static void importWisdom(const std::string& text) { fftw_import_wisdom_from_string(text.c_str()); }
    static char* exportWisdom() { return fftw_export_wisdom_to_string(); }
    static constexpr const char* wisdomName = "fftw-wisdom-double";
    static fftw_plan many(int rank, const int* n, int howmany, fftw_complex* in, int istride, int idist, int sign, unsigned flags)
    {
        return fftw_plan_many_dft(rank, n, howmany, in, nullptr, istride, idist, in, nullptr, istride, idist, sign, flags);
    }
    static fftw_plan batch(int n, int howmany, fftw_complex* in, fftw_complex* out, int stride, int dist, int sign, unsigned flags)
    {
        return fftw_plan_many_dft(1, &n, howmany, in, nullptr, stride, dist, out, nullptr, stride, dist, sign, flags);
    }
};

template <>
struct Api<float> {
    static void planWithThreads(int t) { fftwf_plan_with_nthreads(t); }
    static void setTimeLimit(double seconds) { fftwf_set_timelimit(seconds); }
    static void importWisdom(const std::string& text) { fftwf_import_wisdom_from_string(text.c_str()); }
    static char* exportWisdom() { return fftwf_export_wisdom_to_string(); }
    static constexpr const char* wisdomName = "fftw-wisdom-float";
    static fftwf_plan many(int rank, const int* n, int howmany, fftwf_complex* in, int istride, int idist, int sign, unsigned flags)
    {
        return fftwf_plan_many_dft(rank, n, howmany, in, nullptr, istride, idist, in, nullptr, istride, idist, sign, flags);
    }
    static fftwf_plan batch(int n, int howmany, fftwf_complex* in, fftwf_complex* out, int stride, int dist, int sign, unsigned flags)
    {
        return fftwf_plan_many_dft(1, &n, howmany, in, nullptr, stride, dist, out, nullptr, stride, dist, sign, flags);
    }
};
// Where FFTW's wisdom (what FFTW_MEASURE learnt) is kept between runs, so that large plans are
// measured once per machine: $WFS_FFTW_WISDOM_DIR (empty = do not keep it), else
// $XDG_CACHE_HOME/wavefront-studio, else ~/.cache/wavefront-studio.
std::string wisdomDirectory()
{
    if (const char* dir = std::getenv("WFS_FFTW_WISDOM_DIR"))
        return dir;
    if (const char* cache = std::getenv("XDG_CACHE_HOME"); cache && *cache)
        return std::string(cache) + "/wavefront-studio";
    if (const char* home = std::getenv("HOME"); home && *home)
        return std::string(home) + "/.cache/wavefront-studio";
    return {};
}

template <class Real>
std::string wisdomFile()
{
    const std::string dir = wisdomDirectory();
    return dir.empty() ? std::string() : dir + "/" + Api<Real>::wisdomName;
}
// Holds an exclusive lock on the wisdom folder (flock on a lock file beside the wisdom) for the
// duration of planning, so that concurrent runs on one machine plan one after another: the first
// measures and publishes its wisdom, the others import it and rebuild the same plans from it.
class WisdomLock {
public:
    explicit WisdomLock(const std::string& wisdom)
    {
        std::error_code ec;
        std::filesystem::create_directories(std::filesystem::path(wisdom).parent_path(), ec);
        m_fd = ::open((wisdom + ".lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NONBLOCK, 0666); // never waits on a FIFO
        if (m_fd >= 0)
            while (::flock(m_fd, LOCK_EX) != 0 && errno == EINTR) { }
    }
    ~WisdomLock()
    {
        if (m_fd >= 0)
            ::close(m_fd); // releases the lock
    }
    WisdomLock(const WisdomLock&) = delete;
    WisdomLock& operator=(const WisdomLock&) = delete;

private:
    int m_fd = -1;
};

// The wisdom file's text, read only from a regular file: opened without blocking (a FIFO put at the path
// would otherwise wait for a writer for good) and refused when it is anything else or implausibly large.
// Empty when there is none: that only means no wisdom yet.
std::string readWisdom(const std::string& path)
{
    constexpr off_t kMaxWisdomBytes = off_t(64) << 20;
    const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return {};
    std::string text;
    struct stat info { };
    if (::fstat(fd, &info) == 0 && S_ISREG(info.st_mode) && info.st_size > 0 && info.st_size <= kMaxWisdomBytes) {
        text.resize(size_t(info.st_size));
        size_t done = 0;
        while (done < text.size()) {
            const ssize_t n = ::read(fd, text.data() + done, text.size() - done);
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0)
                break;
            done += size_t(n);
        }
        text.resize(done);
    }
    ::close(fd);
    return text;
}

// Writes the wisdom to a temporary beside the file and renames it over, so that a concurrent reader
// sees the old file or the new one, never half of it. Failures (a read-only home) only cost the
// measuring next time.
void writeWisdomAtomically(const std::string& path, const char* text)
{
    if (!text)
        return;
    std::string temporary = path + ".XXXXXX";
    const int fd = ::mkstemp(temporary.data());
    if (fd < 0)
        return;
    const size_t size = std::strlen(text);
    size_t written = 0;
    while (written < size) {
        const ssize_t n = ::write(fd, text + written, size - written);
        if (n <= 0)
            break;
        written += size_t(n);
    }
    const bool ok = written == size && ::fsync(fd) == 0 && ::fchmod(fd, 0644) == 0;
    if (::close(fd) != 0 || !ok || ::rename(temporary.c_str(), path.c_str()) != 0)
        ::unlink(temporary.c_str());
}

// FFTW's parallel loops on the program's pool (optics/Threads.h): FFTW's own pool waits for good for a
// worker the system refused to start.
void parallelLoop(void* (*work)(char*), char* jobData, size_t elementSize, int jobs, void*)
{
    threads::parallelFor(jobs, [&](int i) { work(jobData + size_t(i) * elementSize); });
}

// FFTW's planner ends the process (an assertion in alloc.c) when an allocation of its own fails, as under
// `ulimit -v`. So a plan is made only when the address space has room for what planning takes: the
// scratch arrays, about as much again for FFTW's buffers and twiddles, and a margin for the planner's own
// tables (made on the first plan; already there they cost nothing). The room is
// reserved without being touched (it costs nothing without a limit) and given back before planning.
void requirePlanningRoom(size_t arrayBytes)
{
    const size_t room = 2 * arrayBytes + (size_t(32) << 20);
    void* p = ::mmap(nullptr, room, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED)
        throw std::bad_alloc();
    ::munmap(p, room);
}

} // namespace

bool initThreads()
{
    static const bool ok = [] {
        if (fftw_init_threads() == 0 || fftwf_init_threads() == 0)
            return false;
        fftw_threads_set_callback(parallelLoop, nullptr);
        fftwf_threads_set_callback(parallelLoop, nullptr);
        return true;
    }();
    return ok;
}

template <class Real>
void ComplexBuffer<Real>::resize(size_t count)
{
    if (count == m_size)
        return;
    Traits<Real>::free(m_data);
    m_data = nullptr;
    m_size = 0;
    if (count == 0)
        return;
    m_data = static_cast<std::complex<Real>*>(Traits<Real>::malloc(count * sizeof(std::complex<Real>)));
    if (!m_data)
        throw std::bad_alloc();
    m_size = count;
}

template <class Real>
typename Traits<Real>::Plan plan(const PlanKey& key)
{
    using Plan = typename Traits<Real>::Plan;
    static std::map<PlanKey, Plan> cache; // guarded by plannerMutex; plans live for the process
    std::lock_guard lock(plannerMutex());
    if (auto it = cache.find(key); it != cache.end())
        return it->second;

    const size_t extent = key.axes == Axes::Batch
                              ? size_t(key.length - 1) * size_t(key.stride) + size_t(key.count - 1) * size_t(key.distance) + 1
                              : size_t(key.n) * size_t(key.n);
    requirePlanningRoom((key.axes == Axes::Batch ? 2 : 1) * extent * sizeof(std::complex<Real>));
    initThreads();
    // Reproducibility: a measured plan depends on timings, and another plan rounds differently, so two
    // runs that measured on their own could differ in the last bits. Measured plans are therefore only
    // made when wisdom is kept: under the folder's lock, after importing the current wisdom file, so
    // every run on a machine builds each size's plan from the same wisdom (the first run's measurement),
    // concurrently or not. Without a wisdom folder, plans are FFTW_ESTIMATE, which FFTW chooses without
    // timing and so the same way every time.
    static const std::string wisdom = wisdomFile<Real>();
    const bool measure = key.measure && !wisdom.empty();
    std::optional<WisdomLock> folderLock;
    if (measure) {
        folderLock.emplace(wisdom);
        if (const std::string text = readWisdom(wisdom); !text.empty())
            Api<Real>::importWisdom(text); // a missing, unreadable or foreign file just means no wisdom yet
    }
    Api<Real>::planWithThreads(std::max(1, key.threads));
    // FFTW_MEASURE at 2048^2 would otherwise spend tens of seconds per plan for a few percent.
    Api<Real>::setTimeLimit(kPlanningSecondsPerPlan);
    const size_t n = size_t(key.n);
    // Plan on scratch arrays: FFTW_MEASURE overwrites the arrays it plans on.
    ComplexBuffer<Real> scratch(extent), output(key.axes == Axes::Batch ? extent : 0);
    auto* base = scratch.raw();
    const unsigned flags = measure ? FFTW_MEASURE : FFTW_ESTIMATE;
    const int sign = int(key.direction);
    Plan p = nullptr;
    switch (key.axes) {
    case Axes::Full2d: {
        const int dims[2] = {key.n, key.n};
        p = Api<Real>::many(2, dims, 1, base, 1, 0, sign, flags);
        break;
    }
    case Axes::Rows:
        p = Api<Real>::many(1, &key.n, key.count, base + size_t(key.firstRow) * n, 1, key.n, sign, flags);
        break;
    case Axes::Columns:
        p = Api<Real>::many(1, &key.n, key.n, base, key.n, 1, sign, flags);
        break;
    case Axes::Batch:
        p = Api<Real>::batch(key.length, key.count, base, output.raw(), key.stride, key.distance, sign, flags);
        break;
    }
    if (!p && key.axes == Axes::Batch)
        throw std::runtime_error("FFTW could not create a plan for " + std::to_string(key.count) + " transforms of "
                                 + std::to_string(key.length) + " points");
    if (!p)
        throw std::runtime_error("FFTW could not create a plan for a " + std::to_string(key.n) + " x " + std::to_string(key.n)
                                 + " transform");
    cache.emplace(key, p);
    if (measure) {
        char* text = Api<Real>::exportWisdom();
        writeWisdomAtomically(wisdom, text);
        std::free(text);
    }
    return p;
}

template class ComplexBuffer<double>;
template class ComplexBuffer<float>;
template fftw_plan plan<double>(const PlanKey&);
template fftwf_plan plan<float>(const PlanKey&);

} // namespace wfs::fftw
