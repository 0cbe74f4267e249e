#pragma once
// How the measured planes are prepared before the fit (io/Preparation.cpp applies it): masks, background,
// centring, crop, normalisation.
#include "settings/SettingsError.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace wfs {

enum class CentreMethod {
    Auto,     // decided by core (effectiveCentre, io/Preparation.h): peak for a z-stack, none otherwise
    None,     // keep the image where it is (a crop is then centred on the image centre)
    Peak,     // brightest pixel (after a 3 x 3 box smoothing, so one hot pixel does not win)
    Centroid, // intensity-weighted centre of the background-subtracted image, iterated in a window
};

// Each step is optional; the defaults subtract the border background and mask saturated pixels only.
// Applied in this order: bad-pixel and saturation masks (on raw values), background, centre, crop,
// normalisation.
struct PreprocessOptions {
    bool subtractBackground = true; // sigma-clipped median of a border frame, per plane
    int borderWidth = 0;            // pixels; 0 = max(2, min(width, height) / 16)
    double clipSigma = 3.0;         // clipping threshold in robust standard deviations
    CentreMethod centre = CentreMethod::Auto;
    // false: one centre for the whole stack (found on the sum of the planes that take part), which
    // keeps the relative positions of through-focus planes; true: every plane centred on its own.
    bool centreEachPlane = false;
    int cropSize = 0;          // 0 = no crop; else an even size: cropSize x cropSize around the centre
    bool maskSaturated = true; // pixels at or above the saturation level (DatasetMetadata::saturationLevel)
    // Isolated hot pixels: more than hotPixelSigma noise deviations (of the border) above the brightest
    // of their 8 neighbours and more than 3 times as bright (above the background), which a PSF
    // sampled at Q >= 2 never is (at Q = 1.5 a diffraction-limited core pixel is 3.4 times its neighbours). Unset: core
    // decides (effectiveHotPixelMask, io/Preparation.h): masked when the metadata give Q >= 2.
    std::optional<bool> maskHotPixels;
    double hotPixelSigma = 8.0;
    double hotPixelRatio = 3.0;                 // "3 times as bright" above: raise it for PSFs sampled between Q = 1.5 and 2
    std::vector<std::pair<int, int>> badPixels; // (column, row) in raw-image coordinates, masked in every plane
    bool normalise = false;                     // scale each plane to a sum of 1 after background subtraction
    bool operator==(const PreprocessOptions&) const = default;

    // The first value out of range, named as the command line spells it ("border", "clip-sigma", "crop",
    // "hot-pixels"): a negative border, a clipping threshold or hot-pixel threshold that is not positive, a crop
    // that is neither 0 nor an even size of at least 2, a hot-pixel ratio outside the settings table's range.
    std::optional<SettingsError> firstError() const;
    bool isValid(std::string* why) const { return detail::validFrom(firstError(), why); }
};

} // namespace wfs
