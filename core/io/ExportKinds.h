#pragma once
// Every file a finished fit can be exported as, in one table: its kind, the command line's option
// (`wavefront-cli reconstruct --phase-out ...`) with its help and value name, the desktop Export menu's label and
// file-dialog filter, the suggested file name's ending and, for pictures, their title. The CLI's options, the desktop's Export
// menu and the Python module's `Result.save(what=...)` are all made from this table, and all make the bytes
// through one dispatch, so a file written from any of them is the same file.
//
// The dispatch has two halves because core cannot draw text: the data kinds (FITS, CSV, JSON, TIFF) are made
// here (dataExportBytes); the picture kinds (PNG with a colour bar, labels and the title below) are drawn by
// the rendering library beside ui/ (render/ResultExports.h: resultExportBytes), which hands every data kind
// back to dataExportBytes. Every front end calls resultExportBytes; core (batch) can call dataExportBytes.
#include "fit/Results.h"
#include "io/Exports.h"

#include <QByteArray>

#include <string>
#include <vector>

namespace wfs {

enum class ExportKind {
    ResultJson,
    CoefficientsCsv,
    CoefficientsJson,
    PhaseFits,
    PhasePng,
    ModelFits,
    ResidualFits,
    PsfAnalysisCsv,
    PsfFits,
    ResultsFits,
    PupilFits,
    AmplitudePng,
    ZonalPng,
    PsfStack,
    SplineMat,
    ModelHdf5,
};

struct ResultExport {
    ExportKind kind;
    const char* key;        // the command line's option without the dashes, e.g. "phase-out"
    const char* label;      // what the file holds, for a menu: "Phase map as FITS"
    const char* fileFilter; // for a file dialog: "FITS image (*.fits *.fit *.fts)"
    const char* suffix;     // the suggested file name's ending, with its dot: "-phase.fits"
    bool text;              // text (may go to standard output) rather than binary
    const char* title;      // pictures: the first words of the title drawn above the map (exportTitle); data: nullptr
    const char* help;       // the command line's help for the option: what it writes
    const char* valueName;  // the command line's value name: "FILE.fits"
};

// Every result export, in the order the command line lists them and the Export menu shows them.
const std::vector<ResultExport>& resultExports();
// The entry with this key (the CLI's option name; '_' may stand for '-'), or nullptr.
const ResultExport* findResultExport(const std::string& key);
const ResultExport& resultExport(ExportKind kind);
// Made from the fitted system's 3-D PSF (ResultExportSources::stack, a computation a front end makes first): the PSF
// stack, the spline calibration and the HDF5 model file.
inline bool exportNeedsPsfStack(ExportKind kind)
{
    return kind == ExportKind::PsfStack || kind == ExportKind::SplineMat || kind == ExportKind::ModelHdf5;
}
// Drawn with text by render/ (a PNG), rather than made by core.
inline bool isPictureExport(ExportKind kind)
{
    return resultExport(kind).title != nullptr;
}
// The export a file name suggests: an entry's own ending ("-phase.fits"), else by extension (.json the
// whole result, .csv the coefficients, .png the phase map, .fits/.fit/.fts all results, .mat the spline calibration,
// .h5/.hdf5 the HDF5 model file); nullptr when neither tells.
const ResultExport* resultExportForFileName(const std::string& path);

// Empty when the fit has something to export as `kind`, else why not, naming the option that would make it
// ("the fit has no pupil amplitude (fit one with --pupil-amplitude zonal or gaussian)"): the error of the
// export and the reason a menu entry is disabled. (What a PSF export needs of the data, the pixel size and z step of a
// spline, is said when its bytes are made: io/SplineCalibration.h.)
std::string exportUnavailable(ExportKind kind, const FitResult& result);

// The title of a picture export, drawn above it and written as the PNG's text "Title":
// "Wavefront NAME (noll, order 6)", "Pupil amplitude NAME (gaussian)", "Phase beyond the Zernike terms NAME".
// Empty for data kinds.
std::string exportTitle(ExportKind kind, const FitResult& result);

// What an export is made from: the fit, its context, the units and look asked for, and the fitted
// system's 3-D PSF when an export that needs it is asked for (exportNeedsPsfStack; made beforehand: it is a computation).
struct ResultExportSources {
    const FitResult& result;
    const ExportContext& context;
    PhaseUnit fitsUnit = PhaseUnit::Radians;
    PhaseUnit pngUnit = PhaseUnit::Waves;
    bool wrapped = false; // phase PNG wrapped to one wave (cyclic colour map)
    bool float32 = false; // FITS images as 32-bit floats
    const PsfStack* stack = nullptr;
};

// The bytes of a data export; `path` picks the PSF stack's format by its extension (.ome.tif/.ome.tiff: OME-TIFF,
// .tif/.tiff: ImageJ TIFF, otherwise FITS). Throws std::runtime_error with exportUnavailable's reason when the fit has nothing of this kind, std::logic_error for a picture kind (render/ResultExports.h draws those) or a PSF stack
// without `stack`.
QByteArray dataExportBytes(ExportKind kind, const std::string& path, const ResultExportSources& in);

// The default planes of an exported 3-D PSF: 21 planes evenly over the fitted planes' defocus range (and
// through focus), in the problem's defocus unit.
std::vector<double> defaultPsfStackDefocus(const ProblemSpec& spec);

} // namespace wfs
