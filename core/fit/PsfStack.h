#pragma once
// The fitted system's 3-D PSF: what deconvolution and localisation software want from a fit. The pupil
// (Zernike and zonal phase, amplitude) and the detector (pixel integration, object size) of a fitted
// problem, imaged at any list of defocus values, pixel size and crop. The fitted defocus scale and offsets
// are not applied: the z values asked for are where the planes are.
#include "optics/Problem.h"

#include <optional>
#include <string>
#include <vector>

namespace wfs {

struct PsfStackRequest {
    std::vector<double> defocus; // per plane, in the problem's defocus unit (psfStackUnit): metres or waves of W020
    double pixelScale = 1.0;     // output pixel / data pixel; realised exactly by the grid (PsfStack::pixelScale)
    int crop = 0;                // output size in pixels (even); 0 = the fitted data's size
};

struct PsfStack {
    std::vector<Image> planes;            // row 0 at the bottom; the unaberrated in-focus PSF sums to 1 over the grid
    std::vector<DiversitySpec> diversity; // each plane's defocus as the model has it
    double pixelScale = 1.0;              // output pixel / data pixel as realised: N / N' for the grid N' used
    double samplingQ = 0.0;               // of the output pixels
    int grid = 0;                         // N'
};

// "m" when the problem's planes are defocused by axial lengths, "waves" (W020) otherwise.
std::string psfStackUnit(const Problem& problem);

// Throws std::invalid_argument for an empty or over-long (more than 1001 planes) list, a pixel scale or crop
// out of range, or a problem whose pupil has a custom mask (its samples would not follow the grid).
PsfStack psfStack(const Problem& problem, const std::vector<double>& parameters, const PsfStackRequest& request);

// "-2um:2um:0.1um" or "-1w:1w:0.25w": start, stop (included) and step of one unit; std::nullopt when the
// text is not such a range, or when it would hold more than 1001 values.
struct DefocusRange {
    std::vector<double> values; // metres or waves
    bool waves = false;
};
std::optional<DefocusRange> defocusRangeFromText(const std::string& text);
// Empty when the range is in the unit of the problem's planes (psfStackUnit), else what to give instead.
std::string psfStackRangeError(const Problem& problem, const DefocusRange& range);

} // namespace wfs
