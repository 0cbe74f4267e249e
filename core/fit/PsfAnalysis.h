#pragma once
// PSF analysis: where a PSF's flux is (the box a view zooms to), and, for a fit, the PSF of the fitted
// wavefront beside the diffraction-limited PSF of the same pupil, radial profiles (azimuthal
// averages) of data and model per plane, encircled energy, the MTF (radial and 2-D) of the fitted
// and the diffraction-limited system, Strehl and FWHM.
#include "base/Image.h"

#include <string>
#include <vector>

namespace wfs {

// A rectangle of image pixels: columns [col, col + width), rows [row, row + height).
struct PixelBox {
    int col = 0, row = 0, width = 0, height = 0;
    bool isEmpty() const { return width <= 0 || height <= 0; }
};

// The smallest square box, centred on the flux-weighted centre, that holds `fraction` (e.g. 0.99) of
// the image's flux above its background (the median of the image's border pixels). NaN pixels are
// left out. At least 16 x 16 pixels (or the whole image when smaller); empty for an empty image or one
// without flux above the background.
PixelBox fluxBox(const Image& image, double fraction);

} // namespace wfs

namespace wfs {

class ModelEvaluator;

// The fitted system against the diffraction-limited one of the same pupil (same aperture, obscuration,
// spiders and illumination; the phase of the fit with piston, tip and tilt removed), and data against
// model per plane. Radii and frequencies are in detector pixels; a pixel is `lambdaOverDPerPixel` of
// lambda / D.
struct PsfAnalysis {
    double lambdaOverDPerPixel = 0.0;
    // PSFs on the model grid's pixels, cut to the centre, each divided by the diffraction-limited
    // peak (so the fitted PSF's peak is the Strehl ratio); row 0 at the bottom.
    Image fittedPsf, diffractionPsf;
    double strehl = 0.0;
    double fwhmFittedPixels = 0.0, fwhmDiffractionPixels = 0.0; // through the peak, mean of row and column
    // Encircled energy (fraction of all flux) within radius[i] pixels of the PSF's centre.
    std::vector<double> radius;
    std::vector<double> encircledFitted, encircledDiffraction;
    // Azimuthal averages about each plane's model centroid, at radius[i] (counts; NaN where no pixel).
    std::vector<std::string> planeNames;
    std::vector<std::vector<double>> dataProfiles, modelProfiles;
    // Modulation transfer function: radial averages at frequency[i] (cycles per pixel) up to the
    // incoherent cutoff D / (lambda F) (in cycles per pixel, cutoffCyclesPerPixel = 1 / Q).
    double cutoffCyclesPerPixel = 0.0;
    std::vector<double> frequency;
    std::vector<double> mtfFitted, mtfDiffraction;
    Image mtfFitted2d, mtfDiffraction2d; // centred on zero frequency, out to the cutoff
};

// Throws std::runtime_error if the model cannot be evaluated.
PsfAnalysis analysePsf(ModelEvaluator& evaluator, const std::vector<double>& parameters);

// The CSV of an analysis: a header row, then one row per radius / frequency index, units in the column
// names; the summary (Strehl, FWHMs, lambda/D per pixel, MTF cutoff) in the first row's first columns.
std::string psfAnalysisCsv(const PsfAnalysis& analysis);

} // namespace wfs
