#include "ReconstructOutputs.h"

#include "PhaseImage.h"
#include "io/OutputTransaction.h"
#include "io/ResultJson.h"

#include <QFileInfo>
#include <QJsonDocument>

namespace wfs::cli {

namespace {

// --amplitude-png and --zonal-png: the fitted pupil amplitude or the zonal remainder, drawn like the phase.
QByteArray pupilMapPng(const std::string& option, const FitResult& result, PhaseUnit unit)
{
    PhaseImageOptions png;
    png.wavelength = result.wavelength;
    if (option == "amplitude-png") {
        if (result.pupilAmplitude.isEmpty())
            throw std::runtime_error("--amplitude-png: the fit has no pupil amplitude (use --pupil-amplitude zonal or gaussian)");
        png.quantity = "field amplitude [relative]";
        png.title = "Pupil amplitude " + result.problemName + " (" + pupilAmplitudeModelName(result.amplitudeModel) + ")";
        return mapPngBytes(result.pupilAmplitude, png);
    }
    if (result.zonalRemainderMap.isEmpty())
        throw std::runtime_error("--zonal-png: the fit has no zonal phase (use --pupil-phase zonal or both)");
    png.unit = unit;
    png.title = "Phase beyond the Zernike terms " + result.problemName;
    return mapPngBytes(result.zonalRemainderMap, png);
}


// --psf-stack-out: FITS cube or TIFF stack by the file's extension.
QByteArray psfStackBytes(const std::string& path, const OutputSources& in, bool float32)
{
    if (!in.stack)
        throw std::logic_error("no PSF stack was made");
    const QString suffix = QFileInfo(QString::fromStdString(path)).suffix().toLower();
    if (suffix == QLatin1String("tif") || suffix == QLatin1String("tiff"))
        return psfStackTiffBytes(*in.stack, in.result);
    return psfStackFitsBytes(*in.stack, in.result, in.context, float32);
}

// The bytes of one output option, made after the fit; the files are then written all together.
QByteArray outputBytes(const OutputSpec& output, const QCommandLineParser& parser, const OutputSources& in, bool float32)
{
    const std::string& option = output.option;
    const FitResult& result = in.result;
    const ExportContext& context = in.context;
    Session* session = in.session;
    const PhaseUnit fitsUnit = in.fitsUnit, pngUnit = in.pngUnit;
    if (option == "psf-stack-out")
        return psfStackBytes(output.path, in, float32);
    if (option == "json")
        return QJsonDocument(resultToJson(result)).toJson();
    if (option == "csv")
        return coefficientsCsvBytes(result);
    if (option == "coefficients-json")
        return coefficientsJson(result);
    if (option == "phase-out")
        return phaseFitsBytes(result, context, {float32, fitsUnit, true});
    if (option == "phase-png") {
        PhaseImageOptions png;
        png.unit = pngUnit;
        png.wrapped = has(parser, "wrapped");
        png.wavelength = result.wavelength;
        png.title = "Wavefront " + result.problemName + " (" + zernike::orderingName(result.ordering) + ", order "
                    + std::to_string(result.coefficients.empty() ? 0 : result.coefficients.back().mode.n) + ")";
        return phasePngBytes(result, png);
    }
    if (option == "model-out" || option == "residual-out")
        return planesFitsBytes(result, context, float32, option == "residual-out");
    if (option == "save-session" && session) {
        session->result = resultToJson(result);
        session->resultParameters = result.parameterValues;
        return sessionBytes(value(parser, "save-session").toStdString(), *session);
    }
    if (option == "results-fits")
        return resultsFitsBytes(result, context, float32, fitsUnit);
    if (option == "pupil-out")
        return pupilFitsBytes(result, context, float32, fitsUnit);
    if (option == "amplitude-png" || option == "zonal-png")
        return pupilMapPng(option, result, pngUnit);
    if (option == "psf-out")
        return psfFitsBytes(result, context, float32);
    if (option == "psf-analysis") {
        if (!result.psf)
            throw std::runtime_error("the fit has no PSF analysis");
        return QByteArray::fromStdString(psfAnalysisCsv(*result.psf));
    }
    throw std::logic_error("no writer for --" + option);
}

} // namespace

std::vector<OutputSpec> requestedOutputs(const QCommandLineParser& parser)
{
    // Each output option and whether it is text (text may go to '-', standard output).
    const std::pair<const char*, bool> outputOptions[] = {{"json", true},          {"csv", true},           {"coefficients-json", true},
                                                          {"save-session", true},  {"phase-out", false},    {"phase-png", false},
                                                          {"model-out", false},    {"residual-out", false}, {"psf-analysis", true},
                                                          {"psf-out", false},      {"results-fits", false}, {"pupil-out", false},
                                                          {"amplitude-png", false}, {"zonal-png", false},  {"psf-stack-out", false}};
    std::vector<OutputSpec> outputs;
    for (const auto& [option, text] : outputOptions)
        if (has(parser, option))
            outputs.push_back({option, text, value(parser, option).toStdString()});
    return outputs;
}

void addReconstructOutputOptions(QCommandLineParser& parser)
{
    addOptions(parser, {
        {QStringLiteral("json"), QStringLiteral("Write the result as JSON ('-' for stdout)."), QStringLiteral("FILE")},
        {QStringLiteral("phase-out"), QStringLiteral("Write the phase map as FITS (radians unless --phase-unit)."), QStringLiteral("FILE.fits")},
        {QStringLiteral("phase-unit"), QStringLiteral("Unit of --phase-out and --phase-png: rad, waves or nm (defaults rad and waves)."), QStringLiteral("unit")},
        {QStringLiteral("phase-png"), QStringLiteral("Write the phase map as PNG with colour bar and units."), QStringLiteral("FILE.png")},
        {QStringLiteral("wrapped"), QStringLiteral("--phase-png: wrap the phase to one wave, cyclic colour map.")},
        {QStringLiteral("float32"), QStringLiteral("Write FITS images as 32-bit floats (default 64-bit).")},
        {QStringLiteral("model-out"), QStringLiteral("Write the model images (one slice per plane) as FITS."), QStringLiteral("FILE.fits")},
        {QStringLiteral("residual-out"), QStringLiteral("Write the residual images (data - model) as FITS."), QStringLiteral("FILE.fits")},
        {QStringLiteral("csv"), QStringLiteral("Write the coefficient table as CSV ('-' for stdout)."), QStringLiteral("FILE")},
        {QStringLiteral("psf-analysis"), QStringLiteral("Write the PSF analysis as CSV (radius, radial profiles of data and model, encircled "
                                                        "energy, MTF of the fitted and diffraction-limited system, units in the column names; '-' for stdout)."),
         QStringLiteral("FILE.csv")},
        {QStringLiteral("psf-out"), QStringLiteral("Write the fitted and the diffraction-limited PSF (two planes, divided by the "
                                                   "diffraction-limited peak) as FITS."),
         QStringLiteral("FILE.fits")},
        {QStringLiteral("results-fits"), QStringLiteral("Write data, model, residual, normalised residual, phase (and the fitted pupil "
                                                        "amplitude) as one multi-extension FITS file, extensions named."),
         QStringLiteral("FILE.fits")},
        {QStringLiteral("coefficients-json"), QStringLiteral("Write the coefficient table as JSON ('-' for stdout)."), QStringLiteral("FILE")},
        {QStringLiteral("pupil-out"), QStringLiteral("Write the pupil function as FITS: PHASE, AMPLITUDE (when fitted) and ZONAL (the zonal "
                                                     "remainder) extensions with the pupil's WCS."), QStringLiteral("FILE.fits")},
        {QStringLiteral("amplitude-png"), QStringLiteral("Write the fitted pupil amplitude as PNG with colour bar."), QStringLiteral("FILE.png")},
        {QStringLiteral("psf-stack-out"), QStringLiteral("Write the fitted system's 3-D PSF (pupil and detector as fitted) as a FITS cube or, for "
                                                         ".tif, a 32-bit float TIFF stack (ImageJ reads its z spacing)."), QStringLiteral("FILE")},
        {QStringLiteral("psf-z"), QStringLiteral("The stack's planes: START:STOP:STEP as lengths (-2um:2um:0.1um) or waves (-1w:1w:0.25w), "
                                                 "the fitted planes' unit (default: 21 planes over the fitted planes' range)."), QStringLiteral("range")},
        {QStringLiteral("psf-pixel"), QStringLiteral("The stack's pixel size, e.g. 50nm (default: the data's; realised to within a grid step)."), QStringLiteral("length")},
        {QStringLiteral("psf-crop"), QStringLiteral("The stack's image size in pixels, even (default: the data's)."), QStringLiteral("N")},
        {QStringLiteral("zonal-png"), QStringLiteral("Write the zonal remainder (the phase the Zernike terms do not describe) as PNG."), QStringLiteral("FILE.png")},
        {QStringLiteral("save-session"), QStringLiteral("Save the session (inputs, settings, result) as JSON ('-' for stdout)."), QStringLiteral("FILE.json")},
        {QStringLiteral("force"), QStringLiteral("Overwrite existing output files (all outputs are written together, or none).")},
        {QStringLiteral("quiet"), QStringLiteral("No progress lines on stderr.")},
    });
}

// --psf-z as core parses it; without it, 21 planes over the fitted planes' defocus range. Throws UsageError.
std::optional<DefocusRange> psfStackRange(const QCommandLineParser& parser)
{
    for (const char* option : {"psf-z", "psf-pixel", "psf-crop"})
        if (has(parser, option) && !has(parser, "psf-stack-out"))
            throw UsageError(std::string("--") + option + " applies to --psf-stack-out");
    if (!has(parser, "psf-z"))
        return std::nullopt;
    const auto range = defocusRangeFromText(value(parser, "psf-z").toStdString());
    if (!range)
        throw UsageError("--psf-z: expected START:STOP:STEP in one unit, lengths (-2um:2um:0.1um) or waves (-1w:1w:0.25w), "
                         "STOP >= START, at most 1001 planes; got '" + value(parser, "psf-z").toStdString() + "'");
    return range;
}

// The fitted system's PSF stack (fit/PsfStack.h) at --psf-z, --psf-pixel and --psf-crop.
PsfStack psfStackFor(const QCommandLineParser& parser, const ProblemSpec& spec, const FitResult& result, const std::optional<Session>& session)
{
    const Problem problem(fittedSpec(spec, result));
    PsfStackRequest request;
    const std::string unit = psfStackUnit(problem);
    if (const auto range = psfStackRange(parser)) {
        if (range->waves != (unit == "waves"))
            throw UsageError("--psf-z: the fitted planes' defocus is in " + std::string(unit == "m" ? "lengths (e.g. um)" : "waves (w)")
                             + "; give the range in the same unit");
        request.defocus = range->values;
    } else {
        double lo = 0.0, hi = 0.0;
        for (const PlaneSpec& plane : spec.planes) {
            lo = std::min(lo, plane.diversity.amount());
            hi = std::max(hi, plane.diversity.amount());
        }
        for (int i = 0; i <= 20; ++i)
            request.defocus.push_back(lo + (hi - lo) * i / 20.0);
    }
    if (has(parser, "psf-pixel")) {
        const std::optional<double> pitch = session ? session->dataset.metadata.pixelPitch : std::nullopt;
        if (!pitch)
            throw UsageError("--psf-pixel needs the data's pixel size (--pixel-scale as a length)");
        request.pixelScale = parsePlausible(value(parser, "psf-pixel"), QStringLiteral("psf-pixel"), Setting::PixelPitch) / *pitch;
    }
    if (has(parser, "psf-crop"))
        request.crop = parseInt(value(parser, "psf-crop"), QStringLiteral("psf-crop"));
    try {
        return psfStack(problem, result.solver.parameters, request);
    } catch (const std::invalid_argument& e) {
        throw UsageError(std::string("--psf-stack-out: ") + e.what());
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
