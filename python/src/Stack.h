#pragma once
// The module's Stack (planes with their metadata) and how a function's `stack` argument becomes a data set, shared by
// reconstruct (Module.cpp) and the whole field (Field.cpp).
#include "Conversions.h"

#include "io/Dataset.h"
#include "io/Session.h"

#include <string>
#include <vector>

namespace wfs::python {

// Planes with their metadata, as read from files (wfs.read), simulated (wfs.simulate, wfs.simulate_field) or opened with a
// session.
struct PyStack {
    Dataset dataset;
    std::vector<std::string> notes;
    py::object truth = py::none(); // simulate(): the injected aberrations, as the CLI's truth file has them
    Origin origin = Origin::Lower; // how `data` hands out the planes' rows (core holds them row 0 at the bottom)
};

// The data of a fit: an array (planes from the array, its rows as `origin` says; metadata from the options), or a Stack
// (held the program's way already). `notes` receives what loading said.
Dataset datasetFrom(const py::object& stack, std::vector<std::string>& notes, Origin origin);

// FITS / TIFF / PNG files with their metadata, as wavefront-cli --input reads them (FileNotFoundError, OSError).
PyStack readStack(const std::vector<std::string>& paths, Origin origin);

// bad_pixels typed in the arrays' orientation become core's rows (from the bottom) for origin="upper".
void flipBadPixelRows(Session& session, const OptionSource& options, Origin origin);

} // namespace wfs::python
