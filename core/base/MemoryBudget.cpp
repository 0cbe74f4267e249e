#include "base/MemoryBudget.h"

#include <cmath>
#include <cstdio>
#include <sys/resource.h>
#include <unistd.h>

namespace wfs {

MemoryLimit memoryLimit()
{
    MemoryLimit limit;
    const long pages = sysconf(_SC_PHYS_PAGES), pageSize = sysconf(_SC_PAGESIZE);
    limit.bytes = pages > 0 && pageSize > 0 ? double(pages) * double(pageSize) : HUGE_VAL;
    limit.source = "of memory this machine has";
    const std::pair<int, const char*> limits[] = {{RLIMIT_AS, "the address-space limit (ulimit -v) allows"},
                                                  {RLIMIT_DATA, "the data-segment limit (ulimit -d) allows"}};
    for (const auto& [resource, source] : limits) {
        rlimit value{};
        if (getrlimit(resource, &value) == 0 && value.rlim_cur != RLIM_INFINITY && double(value.rlim_cur) < limit.bytes) {
            limit.bytes = double(value.rlim_cur);
            limit.source = source;
        }
    }
    return limit;
}

std::string byteSizeText(double bytes)
{
    if (!std::isfinite(bytes))
        return "an unbounded amount";
    const char* units[] = {"bytes", "KB", "MB", "GB", "TB", "PB", "EB"};
    int unit = 0;
    double value = bytes;
    while (value >= 1000.0 && unit < 6) {
        value /= 1000.0;
        ++unit;
    }
    char text[64];
    if (unit == 0)
        std::snprintf(text, sizeof text, "%.0f bytes", value);
    else
        std::snprintf(text, sizeof text, value < 10.0 ? "%.1f %s" : "%.0f %s", value, units[unit]);
    return text;
}

void requireMemory(double bytes, const std::string& what)
{
    requireMemory(bytes, what, memoryLimit());
}

void requireMemory(double bytes, const std::string& what, const MemoryLimit& limit)
{
    if (bytes <= limit.bytes)
        return;
    throw MemoryLimitError(what + " needs about " + byteSizeText(bytes) + " of memory, more than the " + byteSizeText(limit.bytes) + " "
                           + limit.source);
}

} // namespace wfs
