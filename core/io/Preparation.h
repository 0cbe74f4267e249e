#pragma once
// The preparation of a data set's planes (the options: settings/PreparationSettings.h): masks, background, centre,
// crop and normalisation, and what it found per plane. Deterministic: the same planes and options give the same
// result (sessions rely on it).
#include "base/Image.h"
#include "io/DatasetMessage.h"
#include "settings/PreparationSettings.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace wfs {

struct Dataset; // io/DatasetPlanes.h

struct PlanePreparation {
    Image image;               // prepared pixels (background subtracted, cropped, scaled); NaN where masked
    std::vector<uint8_t> mask; // per prepared pixel: 1 = used, 0 = excluded (saturated, bad, NaN)
    int cropColumn = 0;        // raw-image column and row of the prepared image's pixel (0, 0)
    int cropRow = 0;
    double centreX = 0.0; // raw-image coordinates (pixels, x = column, y = row) of the found centre
    double centreY = 0.0;
    double background = 0.0;       // subtracted per pixel (raw units)
    double backgroundSigma = 0.0;  // robust standard deviation of the border (raw units): the noise floor
    double readNoiseSquared = 0.0; // from the border's neighbour differences, for photon counts (raw units^2)
    double scale = 1.0;            // factor applied after background subtraction (normalisation)
    double signal = 0.0;           // sum of the prepared, unmasked pixels
    int saturatedPixels = 0;
    int badPixels = 0;    // listed, hot, or NaN in the raw image
    bool clipped = false; // the PSF's light reaches the crop (or image) edge
};

struct Preparation {
    PreprocessOptions options; // the options that produced it
    // What the options' auto settings resolved to for the data then (effectiveCentre, effectiveHotPixelMask): a change
    // of the metadata that changes them (a z step, the sampling) makes the preparation stale.
    CentreMethod centre = CentreMethod::None;
    bool hotPixelMask = false;
    std::optional<double> saturationLevel; // DatasetMetadata::saturationLevel when it was made
    std::vector<PlanePreparation> planes;  // one per dataset plane, also the unused ones
    std::vector<DatasetMessage> messages;  // warnings (saturation, clipped PSF, empty plane, ...)
};

// Applies dataset.preprocess to every plane, stores the result in dataset.preparation and returns its
// messages. Deterministic: the same planes and options give the same result (sessions rely on it).
std::vector<DatasetMessage> prepare(Dataset& dataset);
// The same without storing it.
Preparation computePreparation(const Dataset& dataset);
// Whether the preparation masks isolated hot pixels: the options' choice, or when unset, whether the metadata give a
// sampling of at least kHotPixelSafeSampling (a PSF sampled that finely has no pixel 3 times its brightest neighbour).
constexpr double kHotPixelSafeSampling = 2.0;
bool effectiveHotPixelMask(const Dataset& dataset);
// The centring the preparation applies: the options' method, or for CentreMethod::Auto the peak for a z-stack
// (isZStack, io/DatasetPlanes.h) and none otherwise.
CentreMethod effectiveCentre(const Dataset& dataset);
// Whether dataset.preparation exists and matches the current planes and options.
bool isPrepared(const Dataset& dataset);

} // namespace wfs
