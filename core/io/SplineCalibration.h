#pragma once
// The fitted system's 3-D PSF as the cubic-spline calibration that SMLM localisation software loads: SMAP's
// `3dcal.mat` layout, which DECODE reads with scipy.io.loadmat(..., struct_as_record=False, squeeze_me=True)['SXY'].
// A MATLAB 5 file (libmatio, zlib-compressed) holding one variable, the struct SXY:
//
//   SXY.cspline.coeff  single, (N-1) x (N-1) x (M-1) x 64: per voxel (cell between samples) the tricubic coefficients
//                      a(p1, p2, p3) at index 1 + p1 + 4 p2 + 16 p3 (1-based; p1 the power along dimension 1, p3 along
//                      dimension 3), so that the PSF at 0-based spline coordinates (s1, s2, s3) is
//                      sum a(p1, p2, p3) t1^p1 t2^p2 t3^p3 with cell floor(s) and t = s - floor(s).
//                      Dimension 1: the image rows, top row first (as MATLAB's imread and tifffile hold a TIFF page);
//                      dimension 2: the columns, left first; dimension 3: z, increasing with the slice.
//   SXY.cspline.x0     the 1-based index of the optical axis's pixel on dimensions 1 and 2 (the planes are square):
//                      floor(N / 2) + 1, where this program's TIFF pages have the axis; DECODE uses x0 - 1 as its origin.
//   SXY.cspline.z0     the 0-based spline coordinate of focus (z = 0) on dimension 3: -z(first slice) / dz, as SMAP's
//                      fitters (z = (s3 - z0) dz) and DECODE (its ref0 z) use it.
//   SXY.cspline.dz     the z step in nanometres. The lateral pixel is SXY.wavefrontstudio.pixelsize_nm (not in SMAP's
//                      cspline; DECODE takes it from its own settings).
//   SXY.PSF            single, N x N x M: the samples the spline interpolates (same axes and normalisation).
//   SXY.Xrange, Yrange [-Inf Inf]: one calibration for the whole field; SXY.posind [1 1].
//   SXY.wavefrontstudio the facts for people: pixelsize_nm, dz_nm, wavelength_nm, NA, immersion_index, software,
//                      problem, conventions (text).
//
// The coefficients: each voxel's tricubic polynomial in the Lekien-Marsden form (64 coefficients from the values and
// derivatives at its 8 corners), the derivatives those of the tensor-product interpolating cubic spline with not-a-knot
// ends (MATLAB's spline, the interp3 'spline' of SMAP's Spline3D_interp) rather than finite differences (SMAP's
// Spline3D_v2): it passes through every sample, is C2, reproduces cubics, and between the samples of a PSF at Q = 2.75
// is 4 times closer to the model than the finite-difference (Catmull-Rom) form (docs/exports.md).
//
// Normalisation: the slice at z = 0 (the nearest) sums to 1 over the N x N ROI, so a fitted photon count is the
// photons in the ROI at z = 0.
#include "fit/Results.h"
#include "io/Exports.h"

#include <QByteArray>

#include <array>
#include <vector>

namespace wfs {

struct PsfStack;

// Tricubic coefficients of samples f (n1 x n2 x n3, column-major: f[i1 + n1 (i2 + n2 i3)], each n >= 2) as above:
// (n1 - 1) x (n2 - 1) x (n3 - 1) x 64, column-major. Throws std::invalid_argument for a size below 2 or a short f.
std::vector<float> tricubicCoefficients(const std::vector<double>& f, std::array<int, 3> n);

// The PSF a stack's spline is made from, normalised as above: N x N x M, column-major, dimension 1 the rows top
// first (psfStackTopFirstPlane). Throws std::runtime_error when the stack cannot be one (see splineMatBytes).
struct SplineVolume {
    std::vector<double> samples;
    int size = 0;          // N
    int planes = 0;        // M
    double pixel = 0.0;    // metres
    double dz = 0.0;       // metres
    double z0 = 0.0;       // 0-based slice coordinate of z = 0
    double x0 = 0.0;       // 1-based index of the axis's pixel
    size_t focusPlane = 0; // the slice nearest z = 0 (sums to 1)
};
SplineVolume splineVolume(const PsfStack& stack, const ExportContext& context);

// The 3dcal.mat file's bytes. Throws std::runtime_error naming what is missing: the pixel size (the data's pixel in the
// sample plane: --pixel-scale with --na), a z step (planes evenly spaced axial positions, --psf-z as lengths), at
// least 2 planes, square planes (--psf-crop); or when the file cannot be written.
QByteArray splineMatBytes(const PsfStack& stack, const FitResult& result, const ExportContext& context);

} // namespace wfs
