#include "engine/DeviceReference.h"

#include <optional>
#include <stdexcept>

namespace wfs {

namespace {
// A function-local static, so that a registration from another translation unit's static initialiser
// never meets an unconstructed registry.
std::optional<DeviceReferenceWriters>& registered()
{
    static std::optional<DeviceReferenceWriters> writers;
    return writers;
}
} // namespace

bool registerDeviceReferenceWriters(DeviceReferenceWriters writers)
{
    registered() = std::move(writers);
    return true;
}

const DeviceReferenceWriters& deviceReferenceWriters()
{
    if (!registered())
        throw std::runtime_error("this program was built without the device check's reference writers (gpu/model/DeviceReference.cpp)");
    return *registered();
}

} // namespace wfs
