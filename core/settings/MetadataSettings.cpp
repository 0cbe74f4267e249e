#include "settings/MetadataSettings.h"

#include "base/NumberText.h"
#include "base/Units.h"

namespace wfs {

using detail::format;

std::string metadataSettingName(const std::string& key)
{
    static const std::pair<const char*, const char*> names[] = {
        {"wavelength", "wavelength"}, {"pixelPitch", "pixel-scale"},   {"pixelAngle", "pixel-scale"},     {"fNumber", "f-number"},
        {"numericalAperture", "na"},  {"immersionIndex", "immersion"}, {"aperture", "aperture"},          {"samplingQ", "sampling"},
        {"zStep", "z-step"},          {"focusPlane", "focus-plane"},   {"defocusModel", "defocus-model"}, {"saturationLevel", "saturation"},
        {"readNoise", "read-noise"},  {"zIndexDown", "z-direction"},   {"dataUnit", "data-unit"},         {"cameraOffset", "offset"},
    };
    for (const auto& [field, setting] : names)
        if (key == field)
            return setting;
    return key;
}

const std::vector<std::string>& dataUnitNames()
{
    static const std::vector<std::string> names = {"photons", "electrons", "counts", "adu", "relative"};
    return names;
}

std::vector<MetadataIssue> DatasetMetadata::issues() const
{
    std::vector<MetadataIssue> found;
    auto check = [&](Setting setting, std::optional<double> value, const char* key) {
        if (!value)
            return;
        const std::string error = plausibilityError(setting, *value);
        if (error.empty())
            return;
        const auto from = origin.find(key);
        found.push_back({metadataSettingName(key), {}, error + (from != origin.end() ? " (from " + from->second + ")" : std::string())});
    };
    check(Setting::Wavelength, wavelength, "wavelength");
    check(Setting::PixelPitch, pixelPitch, "pixelPitch");
    check(Setting::PixelAngle, pixelAngle, "pixelAngle");
    check(Setting::FNumber, fNumber, "fNumber");
    check(Setting::NumericalAperture, numericalAperture, "numericalAperture");
    check(Setting::ImmersionIndex, immersionIndex, "immersionIndex");
    check(Setting::Aperture, aperture, "aperture");
    check(Setting::SamplingQ, samplingQ, "samplingQ");
    check(Setting::ZStep, zStep, "zStep");
    check(Setting::CameraOffset, cameraOffset, "cameraOffset");
    if (numericalAperture && *numericalAperture > immersionIndex)
        // An NA above 1 needs an immersion medium, and which one changes the model (water 1.333 or oil 1.518): when no
        // source gave the index, it is asked for, never defaulted.
        found.push_back({"na",
                         {"immersion"},
                         "the numerical aperture " + format("%.4g", *numericalAperture) + " exceeds the immersion index "
                             + format("%.4g", immersionIndex) + " (NA = n sin(theta) cannot exceed n): "
                             + (origin.count("immersionIndex") ? std::string("set the immersion index (e.g. 1.518 for oil)")
                                                               : std::string("the immersion medium is not given; set its index (water "
                                                                             "1.333, glycerol 1.47, silicone oil 1.406, oil 1.518)"))});
    return found;
}

bool DatasetMetadata::isValid(std::string* why) const
{
    const std::vector<MetadataIssue> found = issues();
    if (!found.empty() && why)
        *why = found.front().message;
    return found.empty();
}

} // namespace wfs
