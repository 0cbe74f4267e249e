#pragma once
// The fitted PSF model as one HDF5 file (libhdf5), for programs and scripts that want the whole model rather than one
// picture of it (h5py, MATLAB's h5read, Fiji's HDF5 plugins). Every dataset carries its unit as the attribute "units"
// (UCUM-like text: "m", "rad", "waves", "nm", "1" for a pure number); the layout (docs/exports.md):
//
//   /                      attributes format = "wavefront-studio-psf-model", format_version = 1, software, problem,
//                          conventions (text)
//   /optics/wavelength     m;  numerical_aperture, immersion_index (1; present when the data were given an NA);
//                          sampling_q (1); pixel_size (m, the data's pixel in the sample plane, when known);
//                          aperture_diameter (m, when known)
//   /pupil/phase           rad, the fitted pupil phase over the pupil's bounding box, NaN outside (row 0 at the bottom,
//                          attributes first_column, first_row, spacing in pupil radii, columns_along_x)
//   /pupil/aberration      rad, the same less piston, tip, tilt (and defocus when the headline removes it)
//   /pupil/amplitude       1, the field amplitude (when the illumination was fitted)
//   /pupil/zonal_remainder rad (when the phase was zonal)
//   /zernike/index, n, m   the terms (index in the ordering; attributes ordering, normalisation, wavelength)
//   /zernike/value         waves; value_nm (nm); uncertainty (waves, one sigma, NaN where not available); free (0/1)
//   /psf/stack             float64 [z][y][x], the fitted system's 3-D PSF (fit/PsfStack.h; row 0 at the bottom, axis at
//                          [height / 2][width / 2] rounded down); units "1" (fraction of the unaberrated PSF's total per
//                          pixel); attributes voxel_size [dz, dy, dx] in m and element_size_um [dz, dy, dx] (when known)
//   /psf/z                 m or waves: each plane's defocus
//
// There is no field model yet (one PSF for the whole field): the file has no /field group.
#include "fit/Results.h"
#include "io/Exports.h"

#include <QByteArray>

namespace wfs {

struct PsfStack;

// The file's bytes (made in memory). Throws std::runtime_error when libhdf5 fails.
QByteArray hdf5ModelBytes(const PsfStack& stack, const FitResult& result, const ExportContext& context);

} // namespace wfs
