#pragma once
// A fit's result in words, formatted once for every front end (after Ceres' BriefReport / FullReport):
// the CLI prints the full report, the desktop program shows the brief one in its status bar and the
// summary lines above its coefficient table.
#include "fit/Results.h"
#include "io/DatasetPlanes.h"
#include "io/ResultJson.h"

#include <string>
#include <vector>

namespace wfs {

// One line: termination, iterations, evaluations, time, RMS in waves and nm (the terms removed), Strehl, and the
// verdict when the model does not describe the data.
std::string briefReport(const FitResult& result);
// The headline: RMS, PV and Strehl with the terms removed named, and with defocus beside them when it is removed.
std::string wavefrontLine(const FitResult& result);

// The summary without the coefficient table, one entry per line (no indentation, no newlines):
// backend and solver, termination, costs and per-plane chi-square, wavefront error and Strehl, the
// coefficient conventions. Warnings of the result are not included (see fullReport).
std::vector<std::string> summaryLines(const FitResult& result);
// The pupil-function model, the detector and the defocus parameters with their uncertainties (part of summaryLines).
std::vector<std::string> pupilFunctionLines(const FitResult& result);

// Where each metadata value of a run came from, a line per value: "wavelength 633 nm (d.fits: keyword WAVELENG)".
// The sources are those core records (DatasetMetadata::origin): a file's header keyword, a sidecar, an acquisition
// log, the command line, a session, the user; "default" for a value no source set. Then the defocus of each plane
// that takes part, its own or from the z step.
std::vector<std::string> metadataSourceLines(const Dataset& dataset);

// A line of this report (or a warning) as a window writes it: ± for "+/-" and χ² for "chi2". The command line keeps
// the ASCII, for terminals and for scripts that search its output.
std::string withSymbols(std::string line);

// The whole report as printed by `wavefront-cli reconstruct`: a title, `notes` (each as "note: ..."), with `data`
// the metadata's sources (each as "metadata: ...", metadataSourceLines),
// the summary lines and the coefficient table (with a truth column when `truth` is given, converted to
// the result's normalisation). Ends with a newline. Warnings, the result's included, are not part of it:
// each front end shows them once where warnings belong (the CLI on standard error).
std::string fullReport(const FitResult& result, const std::vector<std::string>& notes = {}, const Truth* truth = nullptr,
                       const Dataset* data = nullptr);

} // namespace wfs
