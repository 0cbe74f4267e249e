#pragma once
// Point sources (beads, stars) found in a wide-field stack, and the ones that cannot be fitted alone set aside with a
// reason: the first step of a whole field's fit (engine/FieldRun.h), before each bead is cropped and fitted.
//
// Positions: x is the column and y the row of the program's images (row 0 at the bottom), in pixels, with the centre of
// the bottom-left pixel at (0, 0).
//
// Detection works on the stack's mean projection smoothed by a Gaussian: a bead is a local maximum (over
// `peakRadius`) that stands `threshold` robust sigmas (1.4826 x the median absolute deviation of the smoothed
// projection) above its median. Averaging the planes and smoothing wash out the rings of a defocused or in-focus PSF,
// which would otherwise be found as beads of their own.
#include "base/Image.h"

#include <optional>
#include <string>
#include <vector>

namespace wfs {

struct BeadDetectionOptions {
    int crop = 32;                  // the side (pixels) of the square each bead is fitted in, even
    double threshold = 5.0;         // significance of a bead's peak in the smoothed projection, in robust sigmas
    double smoothing = 1.5;         // Gaussian sigma (pixels) of the projection's smoothing
    int peakRadius = 4;             // a bead's peak is the largest value within this radius (pixels)
    double neighbourDistance = 0.0; // another bead closer than this (pixels) sets both aside; 0: 0.75 x crop
    // Pixels of any plane at or above this value inside a bead's crop set it aside; unset: not checked.
    std::optional<double> saturationLevel;
    // A bead whose brightness (log) or width is further than this many robust sigmas above the accepted beads'
    // median is a doublet or an aggregate.
    double outlierSigma = 5.0;
    // A peak within `haloDistance` (0: 2 x crop) of a bead this many times more significant is the brighter bead's
    // halo (the wings of a bright or saturated PSF rise above the noise far from its core), not a bead.
    double haloRatio = 50.0;
    double haloDistance = 0.0;
};

enum class BeadStatus {
    Accepted,
    Edge,      // its crop does not fit in the image
    Neighbour, // another bead within neighbourDistance: its light would be fitted as this bead's
    Saturated, // a pixel of its crop at the saturation level
    Aggregate, // brighter or wider than the others: a doublet or an aggregate
    FitFailed, // set by the field run when the bead's fit fails
};
const char* beadStatusName(BeadStatus status); // "accepted", "edge", "neighbour", "saturated", "aggregate", "fit-failed"

struct DetectedBead {
    double x = 0.0, y = 0.0;   // centroid (pixels, see above)
    int column = 0, row = 0;   // the peak's pixel; the crop is centred on it
    double significance = 0.0; // the peak over the median, in robust sigmas of the smoothed projection
    double brightness = 0.0;   // background-free sum of the mean projection over the bead's crop (data units)
    double width = 0.0;        // RMS radius (pixels) in its sharpest plane, background-free, within 4 pixels
    int sharpestPlane = 0;     // the plane with the highest peak at the bead
    BeadStatus status = BeadStatus::Accepted;
    std::string reason; // why it is set aside, empty when accepted
};

struct BeadDetection {
    Image projection;                // the mean projection
    double background = 0.0;         // median of the smoothed projection
    double noise = 0.0;              // its robust sigma
    double threshold = 0.0;          // the absolute level a peak had to pass (smoothed projection, data units)
    std::vector<DetectedBead> beads; // brightest first
    int haloPeaks = 0;               // peaks taken as a brighter bead's halo (BeadDetectionOptions::haloRatio)
};

// Throws std::invalid_argument for no plane, planes of different sizes, an odd or non-positive crop, a
// non-positive threshold or smoothing. NaN pixels count as the median (masked).
BeadDetection detectBeads(const std::vector<Image>& planes, const BeadDetectionOptions& options);
// The same on planes held elsewhere (a loaded data set's), without copying a wide stack.
BeadDetection detectBeads(const std::vector<const Image*>& planes, const BeadDetectionOptions& options);

// The crop x crop square of `plane` centred on a bead's peak pixel (its centre is the pixel at crop/2, as the
// program centres images); the bead must be Accepted or at least not Edge.
Image cropAround(const Image& plane, const DetectedBead& bead, int crop);

} // namespace wfs
