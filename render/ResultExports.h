#pragma once
// Every file a finished fit can be exported as, in one table: the command line's output options
// (`wavefront-cli reconstruct --phase-out ...`) and the desktop program's Export menu are both made from
// it, and both make the bytes here, so that a file written from either is the same file.
#include "fit/PsfStack.h"
#include "fit/Results.h"
#include "io/Exports.h"

#include <QByteArray>

#include <string>
#include <vector>

namespace wfs {

struct ResultExport {
    const char* key;         // the command line's option without the dashes, e.g. "phase-out"
    const char* label;       // what the file holds, for a menu: "Phase map as FITS"
    const char* fileFilter;  // for a file dialog: "FITS image (*.fits *.fit *.fts)"
    const char* suffix;      // the suggested file name's ending, with its dot: "-phase.fits"
    bool text;               // text (may go to standard output) rather than binary
};

// Every result export, in the order the command line lists them and the Export menu shows them.
const std::vector<ResultExport>& resultExports();
// The entry with this key, or nullptr.
const ResultExport* findResultExport(const std::string& key);

// What an export is made from: the fit, its context, the units and look asked for, and the fitted
// system's 3-D PSF when "psf-stack-out" is asked for (made beforehand: it is a computation).
struct ResultExportSources {
    const FitResult& result;
    const ExportContext& context;
    PhaseUnit fitsUnit = PhaseUnit::Radians;
    PhaseUnit pngUnit = PhaseUnit::Waves;
    bool wrapped = false; // phase PNG wrapped to one wave (cyclic colour map)
    bool float32 = false; // FITS images as 32-bit floats
    const PsfStack* stack = nullptr;
};

// The bytes of the export `key` (resultExports()); `path` picks the PSF stack's format by its extension
// (.tif/.tiff: TIFF, otherwise FITS). Throws std::runtime_error when the fit has nothing to export of this
// kind (e.g. an amplitude map from a fit without a fitted amplitude), std::logic_error for an unknown key.
QByteArray resultExportBytes(const std::string& key, const std::string& path, const ResultExportSources& in);

// The default planes of an exported 3-D PSF: 21 planes evenly over the fitted planes' defocus range (and
// through focus), in the problem's defocus unit.
std::vector<double> defaultPsfStackDefocus(const ProblemSpec& spec);

} // namespace wfs
