#pragma once
// Results leaving the program: the phase map as FITS (float32/float64, header with the conventions,
// the pupil geometry and a fit summary) and as PNG (colour bar with units; viridis, or the cyclic
// twilight map for wrapped phase), model and residual images as FITS, the coefficient table as CSV and
// JSON. Each export is first made as bytes (the *Bytes functions; a front end writing several outputs
// hands them to one io/OutputTransaction.h, all or nothing); the write* functions write one file
// through the output layer and refuse to replace an existing file unless `overwrite`; errors throw
// std::runtime_error naming the file.
//
// The phase map as a PNG with a colour bar is drawn with text, which needs Qt's GUI module: it lives in
// the rendering library beside ui/ (render/PhaseImage.h), from the colour maps and units declared here.
#include "fit/Results.h"
#include "io/ColorMap.h"
#include "io/Fits.h"
#include "optics/Pupil.h"
#include "settings/OutputSettings.h"

#include <QByteArray>
#include <QString>

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace wfs {

// ---- Phase map ----------------------------------------------------------------------------------

// PhaseUnit and PhaseFitsOptions: settings/OutputSettings.h.
// Radians to `unit`; nm needs the wavelength (metres; throws std::runtime_error without one).
double phaseFactor(PhaseUnit unit, double wavelength);
// "632.8 nm"
std::string wavelengthText(double wavelength);

// Extra facts for export headers that FitResult does not hold.
struct ExportContext {
    std::optional<PupilSpec> pupil;  // obscuration, spiders (written as OBSCUR, SPIDERS, SPIDERW, SPIDERA)
    double samplingQ = 0.0;          // 0 = not written (and focal-plane axes in pixels, not lambda/D)
    double pupilSampleSpacing = 0.0; // pupil radii per phase-map pixel; 0 = not written
    double apertureDiameter = 0.0;   // metres; known: the pupil maps get a second WCS in metres
    // A microscope's data pixel in the sample plane (metres; the pitch given with an NA); 0 = not known. The voxel size
    // of the 3-D PSF exports (TIFF resolution, OME PhysicalSizeX, the spline's and the HDF5 file's pixel size).
    double samplePixelPitch = 0.0;
    double numericalAperture = 0.0; // 0 = not known (telescopes, f-number optics)
    double immersionIndex = 1.0;
    std::string dataUnit;            // BUNIT of data, model and residual images; empty = "counts"
    std::string preset;              // a preset's name (written as PRESET); empty for file input
    std::vector<std::string> inputs; // source files, written as INPUTk (and into history)
};

// FITS keywords describing a fit: BUNIT (when `bunit` is not empty; "" = dimensionless is written as
// such by the callers), DATE, CREATOR (name and version), WAVELENG, ZORDERNG, ZNORM, ZORDER, RMSWAVE,
// PVWAVE, STREHL, FINLCOST, TERMINAT, ITERATNS, ROWORDER, PUPILORI, the coefficients as ZCk (waves,
// k = index in the ordering) and the context (SAMPLING, PUPSAMP, APERTURE, OBSCUR, SPIDERS, ...).
// Every comment fits its card.
std::vector<FitsKeyword> resultKeywords(const FitResult& result, const ExportContext& context, const std::string& bunit);

// A linear WCS for a map over the pupil: normalised pupil coordinates (radius 1 at the edge; CTYPEi
// PUPX / PUPY) and, with the aperture diameter, the same in metres as the alternate description 'A'.
std::vector<FitsKeyword> pupilWcsKeywords(const PupilMapGeometry& geometry, double apertureDiameter);

// The defocus of each plane of a cube as one number: W020 in waves (defocus given in waves; an RMS
// Zernike defocus c is W020 = 2 sqrt(3) c) or the axial displacement in metres (z of a stack, dz of
// the OOF preset); a plane without diversity is 0 in either. `quantity` is "W020" or "DEFOCUSZ"
// (unit "waves" or "m"), or empty when the planes mix the two or hold other diversities (values NaN).
struct DefocusAxis {
    std::string quantity;
    std::string unit;
    std::vector<double> values;
    bool evenlySpaced = false; // at least two planes, equal non-zero steps (to 1e-9 relative)
};
DefocusAxis defocusAxis(const std::vector<DiversitySpec>& planes);
DefocusAxis defocusAxis(const std::vector<PlaneResult>& planes);
// Axis keywords of a cube of focal-plane images (width x height, one slice per plane): axes 1 and 2
// in lambda/D from the image centre (with the sampling Q; otherwise pixels from the centre), axis 3
// the defocus when evenly spaced (CTYPE3 W020 or DEFOCUSZ, CNAME3, CRVAL3, CDELT3, and CUNIT3 'm' for
// DEFOCUSZ; waves are a count, which FITS has no unit for), else the plane
// number (CTYPE3 PLANE) with a DEFOCUS table beside it (defocusTable).
std::vector<FitsKeyword> focalPlaneWcsKeywords(int width, int height, double samplingQ, const DefocusAxis& axis);
// The binary-table extension DEFOCUS: PLANE (1-based slice), the defocus value in its unit, and the
// diversity in words (one description per plane).
FitsHdu defocusTable(const std::vector<std::string>& descriptions, const DefocusAxis& axis);

// The phase map over the pupil's bounding box, NaN outside the pupil, with its pupil WCS.
QByteArray phaseFitsBytes(const FitResult& result, const ExportContext& context, const PhaseFitsOptions& options);
void writePhaseFits(const std::string& path, const FitResult& result, const ExportContext& context, const PhaseFitsOptions& options);

// Model (or residual = data - model, NaN where excluded) images of every plane, as one cube with the
// defocus axis (and the DEFOCUS table when the planes are not evenly spaced).
QByteArray planesFitsBytes(const FitResult& result, const ExportContext& context, bool float32, bool residual);
void writeModelFits(const std::string& path, const FitResult& result, const ExportContext& context, bool float32, bool overwrite);
void writeResidualFits(const std::string& path, const FitResult& result, const ExportContext& context, bool float32, bool overwrite);

// The PSF analysis's fitted and diffraction-limited PSFs (slices 1 and 2, divided by the
// diffraction-limited peak), axes in lambda/D. Throws std::runtime_error without a PSF analysis.
QByteArray psfFitsBytes(const FitResult& result, const ExportContext& context, bool float32);

// Everything of a fit in one multi-extension file: a primary header with the fit's keywords and no
// data, then the image extensions DATA, MODEL, RESIDUAL (data - model), NRESID ((data - model) / sigma
// of the objective's noise model), PHASE (in `phaseUnit`), AMPLITUDE (when the illumination was
// fitted), and the DEFOCUS table when the planes are not evenly spaced. Every extension has EXTNAME,
// BUNIT and its WCS.
QByteArray resultsFitsBytes(const FitResult& result, const ExportContext& context, bool float32, PhaseUnit phaseUnit = PhaseUnit::Radians);
// The pupil function alone: PHASE, AMPLITUDE (when fitted) and ZONAL (the zonal remainder, when the phase was
// zonal) image extensions with the pupil's WCS, after a primary header with the result's keywords.
// The fitted system's 3-D PSF (fit/PsfStack.h) as a FITS cube (axis 3 the defocus) or a float32 TIFF stack that
// carries its voxel size: an ImageJ stack (description: slices, unit=micron, spacing = the z step; XResolution and
// YResolution: pixels per micron), or with `ome` an OME-TIFF (OME-XML Pixels PhysicalSizeX/Y/Z in µm, the emission
// wavelength, the objective's NA). The pixel size is known with the context's samplePixelPitch; the z step when the
// planes are evenly spaced axial positions. Fiji, Bio-Formats and tifffile read both.
struct PsfStack;
QByteArray psfStackFitsBytes(const PsfStack& stack, const FitResult& result, const ExportContext& context, bool float32);
QByteArray psfStackTiffBytes(const PsfStack& stack, const FitResult& result, const ExportContext& context = {}, bool ome = false);
// The stack's pixel in the sample plane (metres): the data's (ExportContext::samplePixelPitch) times the stack's
// pixel scale; 0 when the data's is not known.
double psfStackPixelPitch(const PsfStack& stack, const ExportContext& context);
QByteArray pupilFitsBytes(const FitResult& result, const ExportContext& context, bool float32, PhaseUnit phaseUnit = PhaseUnit::Radians);

// ---- Coefficients -------------------------------------------------------------------------------

// {"convention": {...}, "coefficients": [{index, n, m, name, value_waves, value_nm, value_rad,
// uncertainty_waves, uncertainty_nm, free}], "rms_waves", "pv_waves", "strehl"}.
QByteArray coefficientsJson(const FitResult& result);
// The CSV of io/ResultJson.h (coefficientsCsv) as bytes.
QByteArray coefficientsCsvBytes(const FitResult& result);

} // namespace wfs
