// wavefront-cli psf: a 3-D PSF without data (the PSF Generator use case) from the microscope's settings, the scalar or
// vectorial model and optional Zernike coefficients; the work is core's (io/Dataset.h psfGeneratorSpec, fit/PsfStack.h).
#include "CliCommon.h"
#include "Commands.h"

#include "engine/FieldRun.h"
#include "engine/Presets.h"
#include "fit/PsfStack.h"
#include "io/Exports.h"
#include "io/ImageReaders.h"
#include "io/OutputTransaction.h"
#include "io/ResultJson.h"
#include "io/SettingOptions.h"

#include <QFile>
#include <QJsonDocument>

namespace wfs::cli {

namespace {

void addPsfOptions(QCommandLineParser& parser)
{
    parser.setApplicationDescription(
        QStringLiteral("Write the 3-D PSF of a microscope, without data: the scalar or vectorial model (README \"Model\"), "
                       "optionally aberrated, as a FITS cube or a float32 TIFF stack. The optical axis is at index N/2 "
                       "((N-1)/2 for odd N) on both axes of each plane as astropy and tifffile read it; light that leaves the "
                       "image leaves it (computed on a larger field). The unaberrated in-focus PSF sums to 1 over that field."));
    addOptions(parser,
               {
                   {QStringLiteral("wavelength"), QStringLiteral("Emission wavelength, e.g. 600nm."), QStringLiteral("length")},
                   {QStringLiteral("na"), QStringLiteral("Numerical aperture of the objective."), QStringLiteral("NA")},
                   {QStringLiteral("immersion"), QStringLiteral("Immersion refractive index (default 1)."), QStringLiteral("n")},
                   {QStringLiteral("pixel-scale"), QStringLiteral("Pixel size in the sample plane, e.g. 65nm."), QStringLiteral("length")},
                   {QStringLiteral("size"), QStringLiteral("Image size in pixels, odd or even (e.g. 64, 61, 65)."), QStringLiteral("N"),
                    QStringLiteral("64")},
                   {QStringLiteral("psf-z"),
                    QStringLiteral("Planes: START:STOP:STEP of the objective's focus, e.g. -2um:2um:100nm (default: one plane in focus)."),
                    QStringLiteral("range")},
                   {QStringLiteral("coefficients"),
                    QStringLiteral("Zernike coefficients to apply (JSON, a result's or a truth file's coefficients)."),
                    QStringLiteral("FILE.json")},
                   {QStringLiteral("field-model"),
                    QStringLiteral("A field run's field.json (wavefront-cli field): its model's aberrations at --at apply."),
                    QStringLiteral("FILE.json")},
                   {QStringLiteral("at"), QStringLiteral("The field position of --field-model, image pixels (x = column, y = row)."),
                    QStringLiteral("X,Y")},
                   {QStringLiteral("out"), QStringLiteral("Output file: .fits, or .tif/.tiff (float32 stack)."), QStringLiteral("FILE")},
                   {QStringLiteral("force"), QStringLiteral("Overwrite an existing file.")},
                   {QStringLiteral("float32"), QStringLiteral("FITS: 32-bit floats instead of 64-bit.")},
               });
    std::vector<OptionHelp> model;
    for (const OptionHelp& o : modelOptionHelp())
        if (o.name == QLatin1String("model") || o.name == QLatin1String("order") || o.name == QLatin1String("dipole")
            || o.name.contains(QLatin1String("index")) || o.name.contains(QLatin1String("coverslip"))
            || o.name == QLatin1String("emitter-depth"))
            model.push_back(o);
    addCoreOptions(parser, model);
}

} // namespace

namespace {

// --at X,Y with --field-model (both or neither, and not with --coefficients); throws UsageError.
std::optional<std::pair<double, double>> fieldPosition(const QCommandLineParser& parser)
{
    if (has(parser, "field-model") != has(parser, "at"))
        throw UsageError("--field-model and --at go together: the field model is evaluated at a position");
    if (!has(parser, "field-model"))
        return std::nullopt;
    if (has(parser, "coefficients"))
        throw UsageError("give --coefficients or --field-model, not both");
    const QStringList xy = value(parser, "at").split(QLatin1Char(','));
    if (xy.size() != 2)
        throw UsageError("--at: expected X,Y in pixels, e.g. 250,130");
    return std::make_pair(parseNumber(xy[0], QStringLiteral("at")), parseNumber(xy[1], QStringLiteral("at")));
}

} // namespace

int runPsf(const QStringList& args)
{
    QCommandLineParser parser;
    addPsfOptions(parser);
    if (auto status = parseOrExit(parser, args))
        return *status;
    const QString program = args.value(0);
    try {
        if (!has(parser, "out"))
            throw UsageError("--out FILE.fits or FILE.tif is required");
        const QString out = value(parser, "out");
        const bool tiff =
            out.endsWith(QLatin1String(".tif"), Qt::CaseInsensitive) || out.endsWith(QLatin1String(".tiff"), Qt::CaseInsensitive);
        if (!tiff && !out.endsWith(QLatin1String(".fits"), Qt::CaseInsensitive))
            throw UsageError("--out: give a .fits, .tif or .tiff file");
        const ParserOptions options(parser);
        Dataset data;
        applyMetadataOptions(options, data);
        ModelSettings model;
        applyModelOptions(options, model);
        const int size = parseInt(value(parser, "size"), QStringLiteral("size"));
        std::vector<double> z = {0.0};
        if (has(parser, "psf-z")) {
            std::string why;
            const auto range = defocusRangeFromText(value(parser, "psf-z").toStdString(), why);
            if (!range || range->waves)
                throw UsageError("--psf-z: '" + value(parser, "psf-z").toStdString()
                                 + "' is not START:STOP:STEP in lengths (e.g. -2um:2um:100nm, at most 1001 planes)"
                                 + (why.empty() || (range && range->waves) ? std::string() : ": " + why));
            z = range->values;
        }
        std::vector<DatasetMessage> messages;
        ProblemSpec spec;
        try {
            spec = psfGeneratorSpec(data.metadata, model, size, &messages);
        } catch (const DatasetError& e) {
            throw UsageError(e.what());
        }
        for (const DatasetMessage& m : messages)
            std::fprintf(stderr, "%s: note: %s\n", qPrintable(program), m.text.c_str());
        PsfStackRequest request;
        request.defocus = z;
        request.crop = size;
        requirePsfStackMemory(spec, request); // before the problem's grid and the planes are made
        if (has(parser, "coefficients") && samePath(value(parser, "coefficients").toStdString(), out.toStdString()))
            throw UsageError("--out " + out.toStdString() + " is the --coefficients file; writing it would replace the input");
        const Problem problem(spec);
        std::vector<double> parameters = problem.initialParameters();
        const std::optional<std::pair<double, double>> at = fieldPosition(parser);
        if (has(parser, "coefficients") || at) {
            const QString path = value(parser, has(parser, "coefficients") ? "coefficients" : "field-model");
            const std::string bytes = readRegularFile(path.toStdString(), 64 << 20, "a coefficients file (JSON)");
            QJsonParseError error;
            const QJsonDocument doc = QJsonDocument::fromJson(QByteArray::fromStdString(bytes), &error);
            if (error.error != QJsonParseError::NoError)
                return runFailure(program, path + QStringLiteral(": not valid JSON (") + error.errorString() + QLatin1Char(')'));
            parameters = parametersForTruth(problem, at ? fieldTruthFromJson(doc.object(), at->first, at->second, path.toStdString())
                                                        : truthFromJson(doc.object(), path));
        }
        const PsfStack stack = psfStack(problem, parameters, request);
        if (!stack.warning.empty())
            std::fprintf(stderr, "%s: warning: %s\n", qPrintable(program), stack.warning.c_str());
        FitResult described; // what the writers say about the model
        described.problemName = "psf";
        described.wavelength = spec.wavelength;
        described.ordering = spec.basis.ordering;
        described.normalization = spec.basis.normalization;
        described.imagingModel = spec.model;
        described.vectorial = spec.vectorial;
        described.samplingQ = stack.samplingQ;
        described.gridSize = stack.grid;
        ExportContext context;
        OutputTransaction transaction(has(parser, "force"));
        transaction.add(out.toStdString(),
                        tiff ? psfStackTiffBytes(stack, described) : psfStackFitsBytes(stack, described, context, has(parser, "float32")));
        transaction.commit();
        std::printf("wrote %s: %zu planes of %d x %d, %s model, Q %.3f\n", qPrintable(out), stack.planes.size(), size, size,
                    imagingModelName(spec.model), stack.samplingQ);
        return 0;
    } catch (const UsageError& e) {
        return usageFailure(program, QString::fromStdString(e.what()));
    } catch (const SettingsError& e) { // a flag's value that contradicts the others (--design-coverslip-index under the NA)
        return usageFailure(program, QStringLiteral("--") + QString::fromStdString(e.what()));
    } catch (const std::exception& e) {
        return runFailure(program, describe(e));
    }
}

} // namespace wfs::cli
