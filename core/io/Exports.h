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
#include "io/Fits.h"
#include "optics/Pupil.h"

#include <QByteArray>
#include <QString>

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace wfs {

// ---- Colour maps --------------------------------------------------------------------------------

enum class ColorMap {
    Viridis,  // perceptually uniform, sequential (matplotlib's viridis)
    Twilight, // perceptually uniform, cyclic: equal colours at both ends (matplotlib's twilight)
};
const char* colorMapName(ColorMap map); // "viridis", "twilight"
// The colour at t in [0, 1] (clamped; NaN gives mid grey), linearly interpolated in the table.
std::array<std::uint8_t, 3> colorMapRgb(ColorMap map, double t);

// ---- Phase map ----------------------------------------------------------------------------------

enum class PhaseUnit { Waves, Nanometres, Radians };
const char* phaseUnitName(PhaseUnit unit); // "waves", "nm", "rad"
// Radians to `unit`; nm needs the wavelength (metres; throws std::runtime_error without one).
double phaseFactor(PhaseUnit unit, double wavelength);
// "632.8 nm"
std::string wavelengthText(double wavelength);

// Extra facts for export headers that FitResult does not hold.
struct ExportContext {
    std::optional<PupilSpec> pupil;  // obscuration, spiders (written as OBSCUR, SPIDERS, SPIDERW, SPIDERA)
    double samplingQ = 0.0;          // 0 = not written
    double pupilSampleSpacing = 0.0; // pupil radii per phase-map pixel; 0 = not written
    std::vector<std::string> inputs; // source files, written as INPUTk (and into history)
};

// FITS keywords describing a fit: BUNIT, WAVELENG, ZORDERNG, ZNORM, ZORDER, RMSWAVE, PVWAVE, STREHL,
// FINLCOST, TERMINAT, ITERATNS, ROWORDER, PUPILORI, the coefficients as ZCk (waves, k = index in the
// ordering) and the context. `bunit` is the unit of the image written.
std::vector<FitsKeyword> resultKeywords(const FitResult& result, const ExportContext& context, const std::string& bunit);

struct PhaseFitsOptions {
    bool float32 = false;
    PhaseUnit unit = PhaseUnit::Radians;
    bool overwrite = false;
};
// The phase map over the pupil's bounding box, NaN outside the pupil.
QByteArray phaseFitsBytes(const FitResult& result, const ExportContext& context, const PhaseFitsOptions& options);
void writePhaseFits(const std::string& path, const FitResult& result, const ExportContext& context, const PhaseFitsOptions& options);

// Model (or residual = data - model, NaN where excluded) images of every plane, as one cube.
QByteArray planesFitsBytes(const FitResult& result, const ExportContext& context, bool float32, bool residual);
void writeModelFits(const std::string& path, const FitResult& result, const ExportContext& context, bool float32, bool overwrite);
void writeResidualFits(const std::string& path, const FitResult& result, const ExportContext& context, bool float32, bool overwrite);

// ---- Coefficients -------------------------------------------------------------------------------

// {"convention": {...}, "coefficients": [{index, n, m, name, value_waves, value_nm, value_rad,
// uncertainty_waves, uncertainty_nm, free}], "rms_waves", "pv_waves", "strehl"}.
QByteArray coefficientsJson(const FitResult& result);
// The CSV of io/ResultJson.h (coefficientsCsv) as bytes.
QByteArray coefficientsCsvBytes(const FitResult& result);

} // namespace wfs
