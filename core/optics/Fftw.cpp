#include "optics/Fftw.h"

#include <cstdlib>
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
    static void importWisdom(const std::string& path) { fftw_import_wisdom_from_filename(path.c_str()); }
    static void exportWisdom(const std::string& path) { fftw_export_wisdom_to_filename(path.c_str()); }
    static constexpr const char* wisdomName = "fftw-wisdom-double";
    static fftw_plan many(int rank, const int* n, int howmany, fftw_complex* in, int istride, int idist, int sign, unsigned flags)
    {
        return fftw_plan_many_dft(rank, n, howmany, in, nullptr, istride, idist, in, nullptr, istride, idist, sign, flags);
    }
};

template <>
struct Api<float> {
    static void planWithThreads(int t) { fftwf_plan_with_nthreads(t); }
    static void setTimeLimit(double seconds) { fftwf_set_timelimit(seconds); }
    static void importWisdom(const std::string& path) { fftwf_import_wisdom_from_filename(path.c_str()); }
    static void exportWisdom(const std::string& path) { fftwf_export_wisdom_to_filename(path.c_str()); }
    static constexpr const char* wisdomName = "fftw-wisdom-float";
    static fftwf_plan many(int rank, const int* n, int howmany, fftwf_complex* in, int istride, int idist, int sign, unsigned flags)
    {
        return fftwf_plan_many_dft(rank, n, howmany, in, nullptr, istride, idist, in, nullptr, istride, idist, sign, flags);
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
} // namespace

bool initThreads()
{
    static const bool ok = fftw_init_threads() != 0 && fftwf_init_threads() != 0;
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

    initThreads();
    static const std::string wisdom = wisdomFile<Real>();
    static const bool imported = [] {
        if (!wisdom.empty())
            Api<Real>::importWisdom(wisdom); // a missing or unreadable file just means no wisdom yet
        return true;
    }();
    (void)imported;
    Api<Real>::planWithThreads(std::max(1, key.threads));
    // FFTW_MEASURE at 2048^2 would otherwise spend tens of seconds per plan for a few percent.
    Api<Real>::setTimeLimit(kPlanningSecondsPerPlan);
    const size_t n = size_t(key.n);
    // Plan on a scratch array: FFTW_MEASURE overwrites the array it plans on.
    ComplexBuffer<Real> scratch(n * n);
    auto* base = scratch.raw();
    const unsigned flags = key.measure ? FFTW_MEASURE : FFTW_ESTIMATE;
    const int sign = int(key.direction);
    Plan p = nullptr;
    switch (key.pass) {
    case Pass::Full2d: {
        const int dims[2] = {key.n, key.n};
        p = Api<Real>::many(2, dims, 1, base, 1, 0, sign, flags);
        break;
    }
    case Pass::Rows:
        p = Api<Real>::many(1, &key.n, key.count, base + size_t(key.firstRow) * n, 1, key.n, sign, flags);
        break;
    case Pass::Columns:
        p = Api<Real>::many(1, &key.n, key.n, base, key.n, 1, sign, flags);
        break;
    }
    if (!p)
        throw std::runtime_error("FFTW could not create a plan for a " + std::to_string(key.n) + " x " + std::to_string(key.n) + " transform");
    cache.emplace(key, p);
    if (key.measure && !wisdom.empty()) {
        std::error_code ec;
        std::filesystem::create_directories(std::filesystem::path(wisdom).parent_path(), ec);
        Api<Real>::exportWisdom(wisdom); // failure (read-only home) only costs the measuring next time
    }
    return p;
}

template class ComplexBuffer<double>;
template class ComplexBuffer<float>;
template fftw_plan plan<double>(const PlanKey&);
template fftwf_plan plan<float>(const PlanKey&);

} // namespace wfs::fftw
