#pragma once
// A finished fit as the Python module hands it out: core's FitResult (shared, so that arrays can be views
// of its memory), the request it ran (for the PSF stack and analysis), the export context and, for file
// input, the session (for the "session" export).
#include "Conversions.h"

#include "engine/ReconstructionEngine.h"
#include "fit/PsfStack.h"
#include "io/Exports.h"
#include "io/Session.h"

#include <optional>

namespace wfs::python {

struct PyResult {
    std::shared_ptr<FitResult> fit;
    ReconstructionRequest request; // the spec fitted, with its data
    ExportContext context;
    DatasetMetadata metadata;       // for the PSF stack's pixel size
    std::optional<Session> session; // file or session input: what "session" saves
    std::vector<std::string> notes;
    double coreSeconds = 0.0;      // options, preparation, fit and analysis: the work wavefront-cli does in its process
    Origin origin = Origin::Lower; // how the result's arrays order rows (reconstruct's origin)
};

// The fitted system's PSF stack (wfs.psf_stack).
struct PyPsfStack {
    PsfStack stack;
    std::vector<double> defocus;
    std::string unit;              // "m" or "waves"
    Origin origin = Origin::Lower; // how `planes` orders rows
};

// The analysis of a fit's PSF (kept with the fit) and how its images are handed out.
struct PyPsfAnalysis {
    std::shared_ptr<const FitResult> fit; // fit->psf is set
    Origin origin = Origin::Lower;
    const PsfAnalysis& analysis() const { return *fit->psf; }
};

PyPsfStack makePsfStack(const PyResult& result, const py::object& z, const py::object& pixel, int crop, Origin origin);
// The analysis of the fitted PSF, made once and kept with the result.
const PsfAnalysis& psfAnalysisOf(PyResult& result);

void bindResult(py::module_& m);

} // namespace wfs::python
