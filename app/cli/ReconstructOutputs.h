#pragma once
// The outputs of `wavefront-cli reconstruct` (the command-line contract): every file a fit can write, made as bytes by
// core's exporters and the rendering library, then written all together or none; and the fitted system's
// PSF stack (--psf-stack-out with --psf-z, --psf-pixel, --psf-crop).
#include "CliCommon.h"

#include "fit/PsfStack.h"
#include "fit/Results.h"
#include "io/Exports.h"
#include "io/Session.h"

#include <QCommandLineParser>

#include <optional>
#include <vector>

namespace wfs::cli {

// What the outputs are made from: the fit, its context and settings, the units asked for, and the PSF stack
// when --psf-stack-out asked for one.
struct OutputSources {
    const FitResult& result;
    const ExportContext& context;
    Session* session = nullptr;
    PhaseUnit fitsUnit = PhaseUnit::Radians;
    PhaseUnit pngUnit = PhaseUnit::Waves;
    const PsfStack* stack = nullptr;
};

// The outputs given on the command line, in a fixed order.
std::vector<OutputSpec> requestedOutputs(const QCommandLineParser& parser);
// The output options of `reconstruct` (files, units, --force, --quiet), for its help.
void addReconstructOutputOptions(QCommandLineParser& parser);
// --psf-z as core parses it, its companions only with --psf-stack-out and their syntax (--psf-pixel a plausible
// length, --psf-crop a positive even size); throws UsageError. Checked before any input is read; std::nullopt
// without --psf-z.
std::optional<DefocusRange> psfStackRange(const QCommandLineParser& parser);
// Whether an export that is made from the 3-D PSF is asked for (io/ExportKinds.h exportNeedsPsfStack).
bool needsPsfStack(const QCommandLineParser& parser);
// The fitted system's PSF stack at --psf-z (default: 21 planes over the fitted planes' range), --psf-pixel and
// --psf-crop. Throws UsageError.
// Refuses (UsageError) before the fit a --psf-stack-out that could not be held (fit/PsfStack.h psfStackBytes).
void requirePsfStackMemoryFor(const QCommandLineParser& parser, const ProblemSpec& spec, const std::optional<Session>& session);
PsfStack psfStackFor(const QCommandLineParser& parser, const ProblemSpec& spec, const FitResult& result,
                     const std::optional<Session>& session);
// Every requested output made as bytes, then written all together or none (io/OutputTransaction.h).
void writeOutputs(const QCommandLineParser& parser, const std::vector<OutputSpec>& outputs, const OutputSources& in);

} // namespace wfs::cli
