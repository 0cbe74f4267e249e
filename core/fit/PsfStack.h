#pragma once
// The fitted system's 3-D PSF: what deconvolution and localisation software want from a fit. The pupil
// (Zernike and zonal phase, amplitude) and the detector (pixel integration, object size) of a fitted
// problem, imaged at any list of defocus values, pixel size and crop. The fitted defocus scale and offsets
// are not applied: the z values asked for are where the planes are.
//
// Light that leaves the image leaves it. The model's FFT field is periodic: light that reaches farther than the
// field's edge comes back in on the other side (a high-NA plane 1.5 um out of focus reaches about 5 um from the
// axis). So each plane is computed on a field of PsfStack::field pixels that holds the crop plus the reach of the
// planes' light (from the pupil phase's gradient, geometric optics) plus a margin for the diffraction tails,
// with the pupil resampled finer to match (the same pixel and Q), and the crop is cut from its centre. Only light
// that lands in the crop is in it: a defocused plane holds less than the in-focus one.
//
// Where the centre is. The axis (the unaberrated PSF's peak) is at row height / 2 and column width / 2, rounded
// down ((N - 1) / 2 for odd N), counted from 0, of every plane as the program holds it (row 0 at the bottom): an
// fftshift-centred reader (numpy.fft.ifftshift, deconvolution tools) finds it where it looks. A FITS file stores row 0
// first, so astropy's array has the axis there too. A TIFF page stores the top row first: a plain flip of an even
// height would put the axis at row N / 2 - 1 of the array tifffile returns. So, for an even height, a TIFF page holds
// the window one row higher (psfStackTopFirstPlane): the axis at row N / 2 from the top of the page, as tifffile and
// ImageJ count. Odd heights need nothing: the flip maps row (N - 1) / 2 onto itself.
#include "optics/Problem.h"

#include <atomic>

#include <optional>
#include <string>
#include <vector>

namespace wfs {

struct PsfStackRequest {
    std::vector<double> defocus; // per plane, in the problem's defocus unit (psfStackUnit): metres or waves of W020
    double pixelScale = 1.0;     // output pixel / data pixel; realised exactly by the grid (PsfStack::pixelScale)
    int crop = 0;                // output size in pixels, odd or even, at most PsfStack::grid; 0 = the fitted data's size
    // The fitted model's own field instead (PsfStack::field = grid, the fitted pupil samples): periodic, as the fit
    // compared it with the data, so light that leaves the grid comes back in on the other side. For checking the stack
    // against the model; exports use the default.
    bool asFitted = false;
    // Checked between the chunks of planes (base/Cancellation.h): psfStack throws OperationCancelled when it is set.
    const std::atomic<bool>* cancel = nullptr;
};

struct PsfStack {
    // Row 0 at the bottom; the axis at (height / 2, width / 2), rounded down. The unaberrated in-focus PSF sums to 1
    // over the whole field (PsfStack::field), so a crop holds the fraction of the light that falls in it.
    std::vector<Image> planes;
    // For an even height, each plane's row just above its top row (width values): what a file that stores the top row
    // first needs to keep the axis at row N / 2 of its own reading (psfStackTopFirstPlane). Empty for an odd height.
    std::vector<std::vector<double>> rowsAbove;
    std::vector<DiversitySpec> diversity; // each plane's defocus as the model has it
    double pixelScale = 1.0;              // output pixel / data pixel as realised: N / N' for the grid N' used
    double samplingQ = 0.0;               // of the output pixels
    int grid = 0;                         // N': the fitted pupil's samples on output pixels, the largest crop
    int field = 0;                        // pixels across the field the planes were computed on (>= grid)
    // Output pixels: how far from the axis the light of the farthest plane lands, all but 1 % of the pupil's area
    // (geometric optics).
    double reach = 0.0;
    // Non-empty when the field needed to hold that reach exceeds the largest one computed: says which light wraps.
    std::string warning;
};

// "m" when the problem's planes are defocused by axial lengths, "waves" (W020) otherwise.
std::string psfStackUnit(const Problem& problem);
std::string psfStackUnit(const ProblemSpec& spec);

// Throws std::invalid_argument for an empty or over-long (more than 1001 planes) list, a pixel scale or crop
// out of range, or a problem whose pupil has a custom mask (its samples would not follow the grid).
// Also throws MemoryLimitError (base/MemoryBudget.h) before any plane is made when psfStackBytes exceeds the limit.
PsfStack psfStack(const Problem& problem, const std::vector<double>& parameters, const PsfStackRequest& request);

// What a stack of the fitted `spec` takes at once, at least: its planes' doubles, a file's bytes made from them (as large again), one
// chunk of field images and the transforms' buffers on the smallest field the stack could be computed on. Checked by
// psfStack itself and, before a fit whose result is to give one (--psf-stack-out), by requirePsfStackMemory.
// Throws std::invalid_argument for the request psfStack refuses (planes, pixel scale, crop).
double psfStackBytes(const ProblemSpec& spec, const PsfStackRequest& request);
// Throws MemoryLimitError naming the stack's planes and size, the estimate and the limit, when it does not fit.
void requirePsfStackMemory(const ProblemSpec& spec, const PsfStackRequest& request);

// Plane k laid out for a file that stores its top row first (TIFF), still row 0 at the bottom as the writers take it:
// for an even height the rows 1 .. N - 1 of the plane and the row above it, so that after the writer's flip the axis is
// at row N / 2 counted from the top; for an odd height the plane itself.
Image psfStackTopFirstPlane(const PsfStack& stack, size_t plane);

// "-2um:2um:0.1um" or "-1w:1w:0.25w": start, stop (included) and step of one unit; std::nullopt when the
// text is not such a range, or when it would hold more than 1001 values.
struct DefocusRange {
    std::vector<double> values; // metres or waves
    bool waves = false;
};
std::optional<DefocusRange> defocusRangeFromText(const std::string& text);
// The same, saying in `why` what is wrong when the text is refused: not such a range, too many planes, or a start,
// stop or step beyond a defocus's plausible range (base/Units.h: at most 1 m or 1000 waves either way, as --defocus).
std::optional<DefocusRange> defocusRangeFromText(const std::string& text, std::string& why);
// Empty when the range is in the unit of the problem's planes (psfStackUnit), else what to give instead.
std::string psfStackRangeError(const Problem& problem, const DefocusRange& range);
std::string psfStackRangeError(const ProblemSpec& spec, const DefocusRange& range);

} // namespace wfs
