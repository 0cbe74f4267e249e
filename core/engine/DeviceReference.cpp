#include "engine/DeviceReference.h"

#include <optional>
#include <random>
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

std::vector<double> perturbedParameters(const Problem& problem, std::vector<double> x, std::uint64_t seed)
{
    std::mt19937_64 rng(seed);
    std::normal_distribution<double> normal(0.0, 1.0);
    const std::vector<double> scales = problem.parameterScales();
    for (size_t i = 0; i < x.size(); ++i) {
        switch (problem.parameters()[i].kind) {
        case ParameterKind::Zernike:
        case ParameterKind::ShiftX:
        case ParameterKind::ShiftY:
            x[i] += 0.2 * normal(rng);
            break;
        case ParameterKind::CentreX:
        case ParameterKind::CentreY:
            x[i] += 0.05 * normal(rng);
            break;
        default:
            x[i] += 0.03 * normal(rng) * scales[i];
            break;
        }
    }
    return x;
}

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
