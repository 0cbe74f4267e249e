#pragma once
// One number printed with a printf format, for the messages of the data layer (Dataset.cpp,
// Preparation.cpp). Shared by core/io and core/settings.
#include <cstdio>
#include <string>

namespace wfs::detail {

inline std::string format(const char* fmt, double value)
{
    char text[64];
    std::snprintf(text, sizeof text, fmt, value);
    return text;
}

} // namespace wfs::detail
