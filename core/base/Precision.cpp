#include "base/Precision.h"

namespace wfs {

const char* precisionName(Precision precision)
{
    return precision == Precision::Double ? "double" : "float";
}

std::optional<Precision> precisionFromName(std::string_view name)
{
    if (name == "double" || name == "float64")
        return Precision::Double;
    if (name == "float" || name == "float32")
        return Precision::Float;
    return std::nullopt;
}

} // namespace wfs
