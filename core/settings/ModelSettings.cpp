#include "settings/ModelSettings.h"

#include "settings/SettingsTable.h"

#include "base/NumberText.h"
#include "base/Units.h"
#include "optics/Vectorial.h"

#include <iterator>
#include <stdexcept>
#include <utility>

namespace wfs {

std::optional<SettingsError> ModelSettings::orderError() const
{
    if (const std::string error = zernike::orderError(order); !error.empty())
        return SettingsError("order", error);
    return std::nullopt;
}

std::optional<SettingsError> ModelSettings::geometryError() const
{
    if (grid != 0 && (grid < 16 || grid > kMaxGrid || grid % 2 != 0))
        return SettingsError("grid", "must be an even number of samples from 16 to " + std::to_string(kMaxGrid) + " (got "
                                         + std::to_string(grid) + "), or 0 for the data's size");
    const auto fraction = [](double below) { return "must be in [0, " + detail::format("%g", below) + ") of the pupil diameter (got "; };
    if (!(obscuration >= 0.0 && obscuration < kObscurationBelow))
        return SettingsError("obscuration", fraction(kObscurationBelow) + std::to_string(obscuration) + ")");
    if (spiderCount < 0 || spiderCount > kMaxSpiderCount)
        return SettingsError("spiders",
                             "must be from 0 to " + std::to_string(kMaxSpiderCount) + " (got " + std::to_string(spiderCount) + ")");
    if (!(spiderWidth >= 0.0 && spiderWidth < kSpiderWidthBelow))
        return SettingsError("spider-width", fraction(kSpiderWidthBelow) + std::to_string(spiderWidth) + ")");
    for (int index : fixedTerms) {
        try {
            zernike::modeFromIndex(index, ordering);
        } catch (const std::invalid_argument& e) {
            return SettingsError("fixed-terms", e.what());
        }
    }
    return std::nullopt;
}

std::optional<SettingsError> ModelSettings::pupilFunctionError() const
{
    const auto check = [](const char* name, Setting setting, double value) -> std::optional<SettingsError> {
        if (const std::string error = plausibilityError(setting, value); !error.empty())
            return SettingsError(name, error);
        return std::nullopt;
    };
    std::optional<SettingsError> error;
    if (regularization != 0.0) // 0 = chosen by the engine's sweep
        error = check("regularization", Setting::Regularization, regularization);
    if (!error)
        error = check("object-diameter", Setting::ObjectDiameter, objectDiameter);
    if (!error && gain != 0.0) // 0 = estimated from the data
        error = check("gain", Setting::Gain, gain);
    if (!error)
        error = check("offset", Setting::CameraOffset, offset);
    if (!error)
        error = check("bandwidth", Setting::Bandwidth, bandwidth);
    if (!error)
        error = closedRangeError("spectral-samples", spectralSamples); // the table's range (settings/SettingsTable.h)
    return error;
}

std::optional<SettingsError> ModelSettings::readNoiseError() const
{
    if (!(readNoise >= 0.0) || !plausibilityError(Setting::ReadNoise, readNoise).empty())
        return SettingsError("read-noise", plausibilityError(Setting::ReadNoise, readNoise) + "; 0 means the border noise of the data");
    return std::nullopt;
}

std::optional<SettingsError> ModelSettings::imagingModelError() const
{
    if (fitEmitterDepth && imagingModel != ImagingModel::Vectorial)
        return SettingsError("fit-emitter-depth", "the emitter's depth is a parameter of the vectorial model: choose the vectorial model");
    // 0 stands for "the immersion's" (indices) or "as built" (the design thickness).
    const std::pair<const char*, Setting> zeroMeansDefault[] = {{"sample-index", Setting::SampleIndex},
                                                                {"coverslip-index", Setting::CoverslipIndex},
                                                                {"design-coverslip-index", Setting::CoverslipIndex},
                                                                {"design-coverslip-thickness", Setting::CoverslipThickness}};
    const double values[] = {sampleIndex, coverslipIndex, designCoverslipIndex, designCoverslipThickness};
    for (size_t i = 0; i < std::size(values); ++i)
        if (values[i] != 0.0)
            if (const std::string error = plausibilityError(zeroMeansDefault[i].second, values[i]); !error.empty())
                return SettingsError(zeroMeansDefault[i].first, error);
    if (const std::string error = plausibilityError(Setting::EmitterDepth, emitterDepth); !error.empty())
        return SettingsError("emitter-depth", error);
    if (const std::string error = plausibilityError(Setting::CoverslipThickness, coverslipThickness); !error.empty())
        return SettingsError("coverslip-thickness", error);
    // The angles' ranges are the model's own (vectorialSpecError), asked of an otherwise plausible objective.
    VectorialSpec angles;
    angles.numericalAperture = 1.0;
    angles.dipole = dipole;
    if (const std::string error = vectorialSpecError(angles); !error.empty())
        return SettingsError("dipole", error);
    return std::nullopt;
}

std::optional<SettingsError> ModelSettings::firstError() const
{
    if (auto error = orderError())
        return error;
    if (auto error = geometryError())
        return error;
    if (auto error = pupilFunctionError())
        return error;
    if (auto error = imagingModelError())
        return error;
    return readNoiseError();
}

} // namespace wfs
