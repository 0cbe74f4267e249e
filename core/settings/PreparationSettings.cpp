#include "settings/PreparationSettings.h"

#include "settings/SettingsTable.h"

namespace wfs {

std::optional<SettingsError> PreprocessOptions::firstError() const
{
    if (borderWidth < 0)
        return SettingsError("border", "must not be negative (0 = the image size / 16, at least 2)");
    if (!(clipSigma > 0.0))
        return SettingsError("clip-sigma", "must be positive");
    if (cropSize != 0 && (cropSize < 2 || cropSize % 2 != 0))
        return SettingsError("crop", "must be an even number of pixels (at least 2), or 0 for no crop");
    if (!(hotPixelSigma > 0.0))
        return SettingsError("hot-pixels", "the threshold must be positive");
    return closedRangeError("hot-pixel-ratio", hotPixelRatio);
}

} // namespace wfs
