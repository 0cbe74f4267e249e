#include "simd/SimdLevel.h"

#include <atomic>
#include <cstdlib>
#include <cstring>

namespace wfs::simd {

namespace {

Level detect()
{
#if defined(WFS_SIMD_AVX2_TU) && (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        return Level::Avx2Fma;
#endif
    return Level::Baseline;
}

Level environmentDefault()
{
    const Level best = supported();
    const char* env = std::getenv("WFS_SIMD");
    if (env && std::strcmp(env, "baseline") == 0)
        return Level::Baseline;
    return best;
}

// -1: no override; otherwise the forced Level.
std::atomic<int> g_forced{-1};

} // namespace

Level supported()
{
    static const Level level = detect();
    return level;
}

Level active()
{
    static const Level fromEnvironment = environmentDefault();
    const int forced = g_forced.load(std::memory_order_relaxed);
    if (forced < 0)
        return fromEnvironment;
    const Level want = Level(forced);
    return want == Level::Avx2Fma && supported() != Level::Avx2Fma ? Level::Baseline : want;
}

void forceLevel(std::optional<Level> level)
{
    g_forced.store(level ? int(*level) : -1, std::memory_order_relaxed);
}

const char* name(Level level)
{
    return level == Level::Avx2Fma ? "avx2-fma" : "baseline";
}

} // namespace wfs::simd
