#include "ReconstructOutputs.h"

#include "ResultExports.h"
#include "base/MemoryBudget.h"
#include "io/OutputTransaction.h"
#include "io/ResultJson.h"

namespace wfs::cli {

namespace {

// The bytes of one output option, made after the fit; the files are then written all together.
QByteArray outputBytes(const OutputSpec& output, const QCommandLineParser& parser, const OutputSources& in, bool float32)
{
    if (output.option == "save-session" && in.session) {
        in.session->result = resultToJson(in.result);
        in.session->resultParameters = in.result.parameterValues;
        return sessionBytes(value(parser, "save-session").toStdString(), *in.session);
    }
    const ResultExportSources sources{in.result, in.context, in.fitsUnit, in.pngUnit, has(parser, "wrapped"), float32, in.stack};
    return resultExportBytes(findResultExport(output.option)->kind, output.path, sources); // requestedOutputs' keys are the table's
}

// The table's exports made from the 3-D PSF, as options: "--psf-stack-out, --spline-mat-out or --model-h5-out".
std::string psfStackExportOptions()
{
    std::vector<std::string> keys;
    for (const ResultExport& e : resultExports())
        if (exportNeedsPsfStack(e.kind))
            keys.push_back(std::string("--") + e.key);
    std::string options;
    for (size_t i = 0; i < keys.size(); ++i)
        options += (i == 0 ? "" : i + 1 == keys.size() ? " or " : ", ") + keys[i];
    return options;
}

} // namespace

std::vector<OutputSpec> requestedOutputs(const QCommandLineParser& parser)
{
    // The result exports (core's table, io/ExportKinds.h) in their order, then the session.
    std::vector<OutputSpec> outputs;
    for (const ResultExport& e : resultExports())
        if (has(parser, e.key))
            outputs.push_back({e.key, e.text, value(parser, e.key).toStdString()});
    if (has(parser, "save-session"))
        outputs.push_back({"save-session", true, value(parser, "save-session").toStdString()});
    return outputs;
}

void addReconstructOutputOptions(QCommandLineParser& parser)
{
    // The result exports, one flag each, from core's table (io/ExportKinds.h): a new kind is a new flag.
    QList<QCommandLineOption> exports;
    for (const ResultExport& e : resultExports())
        exports.append({QString::fromLatin1(e.key), QString::fromUtf8(e.help), QString::fromLatin1(e.valueName)});
    addOptions(parser, exports);
    addOptions(
        parser,
        {
            {QStringLiteral("phase-unit"),
             QStringLiteral("Unit of --phase-out and --phase-png: rad, waves or nm (defaults rad and waves)."), QStringLiteral("unit")},
            {QStringLiteral("wrapped"), QStringLiteral("--phase-png: wrap the phase to one wave, cyclic colour map.")},
            {QStringLiteral("float32"), QStringLiteral("Write FITS images as 32-bit floats (default 64-bit).")},
            {QStringLiteral("psf-z"),
             QString::fromStdString("The 3-D PSF's planes (" + psfStackExportOptions()
                                    + "): START:STOP:STEP as lengths (-2um:2um:0.1um) or waves (-1w:1w:0.25w), the fitted "
                                      "planes' unit (default: 21 planes over the fitted planes' range)."),
             QStringLiteral("range")},
            {QStringLiteral("psf-pixel"),
             QStringLiteral("The 3-D PSF's pixel size, e.g. 50nm (default: the data's; realised to within a grid step)."),
             QStringLiteral("length")},
            {QStringLiteral("psf-crop"), QStringLiteral("The 3-D PSF's image size in pixels, odd or even (default: the data's)."),
             QStringLiteral("N")},
            {QStringLiteral("save-session"),
             QStringLiteral("Save the session (inputs, or a preset's simulated data, with the settings and result) as JSON ('-' for "
                            "stdout); --session re-runs it."),
             QStringLiteral("FILE.json")},
            {QStringLiteral("force"), QStringLiteral("Overwrite existing output files (all outputs are written together, or none).")},
            {QStringLiteral("quiet"), QStringLiteral("No progress lines on stderr.")},
        });
}

bool needsPsfStack(const QCommandLineParser& parser)
{
    for (const ResultExport& e : resultExports())
        if (exportNeedsPsfStack(e.kind) && has(parser, e.key))
            return true;
    return false;
}

// --psf-z as core parses it; without it, 21 planes over the fitted planes' defocus range. Throws UsageError.
std::optional<DefocusRange> psfStackRange(const QCommandLineParser& parser)
{
    if (!needsPsfStack(parser))
        for (const char* option : {"psf-z", "psf-pixel", "psf-crop"})
            if (has(parser, option))
                throw UsageError(std::string("--") + option + " applies to " + psfStackExportOptions() + " (the 3-D PSF's exports)");
    // Their syntax now, before any input is read: what depends on the fitted grid is checked with the stack.
    if (has(parser, "psf-pixel"))
        parsePlausible(value(parser, "psf-pixel"), QStringLiteral("psf-pixel"), Setting::PixelPitch);
    if (has(parser, "psf-crop")) {
        const int crop = parseInt(value(parser, "psf-crop"), QStringLiteral("psf-crop"));
        if (crop <= 0)
            throw UsageError("--psf-crop: the stack's image size must be a positive number of pixels, odd or even; got "
                             + std::to_string(crop));
    }
    if (!has(parser, "psf-z"))
        return std::nullopt;
    std::string why;
    const auto range = defocusRangeFromText(value(parser, "psf-z").toStdString(), why);
    if (!range)
        throw UsageError("--psf-z: " + why + ", at most 1001 planes; got '" + value(parser, "psf-z").toStdString() + "'");
    return range;
}

// The request --psf-z, --psf-pixel and --psf-crop make for the problem `spec` (the fitted one, or before the fit the
// one to be fitted: the stack's size depends only on its grid and data). Throws UsageError.
PsfStackRequest psfStackRequestFor(const QCommandLineParser& parser, const ProblemSpec& spec, const std::optional<Session>& session)
{
    PsfStackRequest request;
    if (const auto range = psfStackRange(parser)) {
        if (const std::string error = psfStackRangeError(spec, *range); !error.empty())
            throw UsageError("--psf-z: " + error);
        request.defocus = range->values;
    } else {
        request.defocus = defaultPsfStackDefocus(spec);
    }
    if (has(parser, "psf-pixel")) {
        const std::optional<double> pitch = session ? session->dataset.metadata.pixelPitch : std::nullopt;
        if (!pitch)
            throw UsageError("--psf-pixel needs the data's pixel size (--pixel-scale as a length)");
        request.pixelScale = parsePlausible(value(parser, "psf-pixel"), QStringLiteral("psf-pixel"), Setting::PixelPitch) / *pitch;
    }
    if (has(parser, "psf-crop"))
        request.crop = parseInt(value(parser, "psf-crop"), QStringLiteral("psf-crop"));
    return request;
}

void requirePsfStackMemoryFor(const QCommandLineParser& parser, const ProblemSpec& spec, const std::optional<Session>& session)
{
    const PsfStackRequest request = psfStackRequestFor(parser, spec, session);
    try {
        requirePsfStackMemory(spec, request);
    } catch (const std::invalid_argument& e) {
        throw UsageError(std::string("--psf-stack-out: ") + e.what());
    } catch (const MemoryLimitError& e) {
        throw UsageError(std::string("--psf-stack-out: ") + e.what());
    }
}

// The fitted system's PSF stack (fit/PsfStack.h) at --psf-z, --psf-pixel and --psf-crop.
PsfStack psfStackFor(const QCommandLineParser& parser, const ProblemSpec& spec, const FitResult& result,
                     const std::optional<Session>& session)
{
    const Problem problem(fittedSpec(spec, result));
    const PsfStackRequest request = psfStackRequestFor(parser, problem.spec(), session);
    try {
        return psfStack(problem, result.solver.parameters, request);
    } catch (const std::invalid_argument& e) {
        throw UsageError(std::string("the 3-D PSF: ") + e.what());
    }
}

void writeOutputs(const QCommandLineParser& parser, const std::vector<OutputSpec>& outputs, const OutputSources& in)
{
    const bool float32 = has(parser, "float32");
    OutputTransaction transaction(has(parser, "force"));
    for (const OutputSpec& o : outputs) {
        QByteArray bytes;
        try {
            bytes = outputBytes(o, parser, in, float32);
        } catch (const std::runtime_error& e) {
            throw std::runtime_error(o.path + ": " + e.what());
        }
        transaction.add(o.path, std::move(bytes));
    }
    transaction.commit(); // all outputs or none
}

} // namespace wfs::cli
