#pragma once
// PSF analysis: where a PSF's flux is (the box a view zooms to), and, for a fit, the PSF of the fitted
// wavefront beside the diffraction-limited PSF of the same pupil, radial profiles (azimuthal
// averages) of data and model per plane, encircled energy, the MTF (radial and 2-D) of the fitted
// and the diffraction-limited system, Strehl and FWHM.
#include "io/Image.h"

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
