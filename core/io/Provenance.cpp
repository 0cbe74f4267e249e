#include "io/Provenance.h"

#include <cerrno>
#include <cstdlib>
#include <ctime>

#ifndef WFS_VERSION
#error "WFS_VERSION is set by core/CMakeLists.txt from the project version"
#endif

namespace wfs {

const char* softwareName()
{
    return "Wavefront Studio";
}

const char* softwareVersion()
{
    return WFS_VERSION;
}

std::string softwareText()
{
    return std::string(softwareName()) + " " + softwareVersion();
}

std::string creationDateUtc()
{
    std::time_t now = std::time(nullptr);
    if (const char* epoch = std::getenv("SOURCE_DATE_EPOCH"); epoch && *epoch) {
        char* end = nullptr;
        errno = 0;
        const long long seconds = std::strtoll(epoch, &end, 10);
        if (errno == 0 && *end == '\0' && seconds >= 0)
            now = std::time_t(seconds);
    }
    std::tm utc{};
    gmtime_r(&now, &utc);
    char text[32];
    std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%S", &utc);
    return text;
}

} // namespace wfs
