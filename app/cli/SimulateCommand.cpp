// wavefront-cli simulate: synthetic PSF planes with known aberrations, as one FITS cube plus the truth.
#include "CliCommon.h"
#include "Commands.h"

#include "engine/FieldSimulation.h"
#include "engine/Presets.h"
#include "io/ImageReaders.h"
#include "io/OutputTransaction.h"

#include <QFile>
#include <QJsonDocument>

#include <optional>

namespace wfs::cli {

namespace {

void addSimulateOptions(QCommandLineParser& parser)
{
    parser.setApplicationDescription(
        QStringLiteral("Write synthetic PSF data with known aberrations: one FITS file, one image plane per defocus, "
                       "metadata in its header, and the truth next to it (FILE.truth.json)."));
    // Defaults stated from core's own (engine/Presets.h).
    const PresetDefaults demo = presetDefaults("demo"), oof = presetDefaults("oof"), pupil = presetDefaults("pupil"),
                         vectorial = presetDefaults("vectorial"), air = presetDefaults("air");
    addOptions(
        parser,
        {
            {QStringLiteral("preset"),
             QStringLiteral(
                 "demo, oof, pupil (a non-Zernike pupil), vectorial (NA 1.4 oil onto water, 3 um deep) or air (NA 0.85 "
                 "dry, 520 nm, 130 nm pixels, 7 planes of 128 x 128 over a 100-count camera bias; fit it at grid 256) or field (a "
                 "512 x 512 bead slide, 9 planes, aberrations that vary across the field, planted doublets, "
                 "saturated and edge beads; for `wavefront-cli field`)."),
             QStringLiteral("name"), QStringLiteral("demo")},
            {QStringLiteral("grid"),
             QStringLiteral("Grid size N (even; default: the preset's, demo %1, oof %2, pupil %3, vectorial %4, air %5; air's "
                            "images are N/2 x N/2).")
                 .arg(demo.grid)
                 .arg(oof.grid)
                 .arg(pupil.grid)
                 .arg(vectorial.grid)
                 .arg(air.grid),
             QStringLiteral("N")},
            {QStringLiteral("order"),
             QStringLiteral("Zernike radial order of the model (default: the preset's, demo %1, oof %2, pupil %3, vectorial %4, air %5).")
                 .arg(demo.order)
                 .arg(oof.order)
                 .arg(pupil.order)
                 .arg(vectorial.order)
                 .arg(air.order),
             QStringLiteral("n")},
            {QStringLiteral("truth"),
             QStringLiteral("Coefficients to inject (JSON, same schema as a result's coefficients; default: the preset's aberrations)."),
             QStringLiteral("FILE.json")},
            {QStringLiteral("seed"), QStringLiteral("Random seed of the noise."), QStringLiteral("S"),
             QString::number(PresetOptions{}.seed)},
            {QStringLiteral("noise"), QStringLiteral("none, or default: the preset's noise model (default: default)."),
             QStringLiteral("kind"), QStringLiteral("default")},
            {QStringLiteral("photons"),
             QStringLiteral("Photons per plane of the Poisson noise (default: the preset's, demo and pupil 1e6, vectorial 2e5, air "
                            "1e6; oof has none)."),
             QStringLiteral("N")},
            {QStringLiteral("beads"),
             QStringLiteral("field: single beads besides the planted doublets, saturated and edge beads (default %1).")
                 .arg(FieldSimulationOptions{}.beads),
             QStringLiteral("N")},
            {QStringLiteral("out"), QStringLiteral("Output FITS file."), QStringLiteral("FILE.fits")},
            {QStringLiteral("force"), QStringLiteral("Overwrite existing files.")},
        });
}

// --grid, --order, --seed, --photons and --noise; throws UsageError for a bad value.
PresetOptions presetOptionsFrom(const QCommandLineParser& parser)
{
    PresetOptions options;
    if (parser.isSet(QStringLiteral("grid")))
        options.grid = parseInt(parser.value(QStringLiteral("grid")), QStringLiteral("grid"));
    if (parser.isSet(QStringLiteral("order")))
        options.order = parseInt(parser.value(QStringLiteral("order")), QStringLiteral("order"));
    options.seed = std::uint64_t(parseNumber(parser.value(QStringLiteral("seed")), QStringLiteral("seed")));
    if (parser.isSet(QStringLiteral("photons")))
        options.photons = parsePhotons(parser.value(QStringLiteral("photons")));
    options.noise =
        parseWordList(parser.value(QStringLiteral("noise")), QStringLiteral("noise"), {QStringLiteral("none"), QStringLiteral("default")})
            .front()
        == QLatin1String("default");
    return options;
}

// Reads the --truth file into options.truth. A file that cannot be read or parsed is a run failure,
// not a usage error: its status (after the message) is returned.
std::optional<int> readTruthFile(const QString& program, const QString& path, PresetOptions& options)
{
    std::string bytes;
    try {
        bytes = readRegularFile(path.toStdString(), 64 << 20, "a truth file (JSON)");
    } catch (const ImageReadError& e) {
        return runFailure(program, describe(e));
    }
    QJsonParseError error;
    const QJsonDocument doc = QJsonDocument::fromJson(QByteArray::fromStdString(bytes), &error);
    if (error.error != QJsonParseError::NoError)
        return runFailure(program, path + QStringLiteral(": not valid JSON (") + error.errorString() + QLatin1Char(')'));
    options.truth = truthFromJson(doc.object(), path);
    return std::nullopt;
}

// Makes the preset's data and writes it with its truth, both or neither.
int writeSimulation(const QString& preset, const PresetOptions& options, const QString& out, const QString& truthPath, bool force)
{
    PresetCase c;
    try {
        c = makePreset(preset.toStdString(), options);
    } catch (const std::invalid_argument& e) { // every preset input is a command-line argument
        throw UsageError(e.what());
    }
    OutputTransaction transaction(force);
    transaction.add(out.toStdString(), presetFitsBytes(c, preset.toStdString(), options.seed));
    transaction.add(truthPath.toStdString(), QJsonDocument(truthToJson(c.truth, c.spec.wavelength)).toJson());
    transaction.commit();
    const Image& first = c.spec.planes.front().data;
    std::printf("wrote %s (%zu planes of %d x %d) and %s\n", qPrintable(out), c.spec.planes.size(), first.width, first.height,
                qPrintable(truthPath));
    return 0;
}

// `--preset field`: the wide-field stack and its truth (the planted beads and the field's formula), both or neither.
int writeFieldSimulation(const QCommandLineParser& parser, const PresetOptions& preset, const QString& out, const QString& truthPath,
                         bool force)
{
    for (const char* name : {"grid", "order", "truth"})
        if (has(parser, name))
            throw UsageError(std::string("--") + name + " does not apply to the field preset");
    FieldSimulationOptions options;
    options.seed = preset.seed;
    options.noise = preset.noise;
    if (preset.photons > 0.0)
        options.photons = preset.photons;
    if (has(parser, "beads")) {
        options.beads = parseInt(value(parser, "beads"), QStringLiteral("beads"));
        if (options.beads < 0)
            throw UsageError("--beads: must not be negative");
    }
    FieldSimulation field;
    try {
        field = simulateField(options);
    } catch (const std::invalid_argument& e) {
        throw UsageError(e.what());
    }
    OutputTransaction transaction(force);
    transaction.add(out.toStdString(), fieldFitsBytes(field));
    transaction.add(truthPath.toStdString(), QJsonDocument(fieldTruthJson(field)).toJson());
    transaction.commit();
    std::printf("wrote %s (%zu planes of %d x %d, %zu beads) and %s\n", qPrintable(out), field.planes.size(), field.planes.front().width,
                field.planes.front().height, field.beads.size(), qPrintable(truthPath));
    return 0;
}

} // namespace

int runSimulate(const QStringList& args)
{
    QCommandLineParser parser;
    addSimulateOptions(parser);
    if (auto status = parseOrExit(parser, args))
        return *status;
    const QString program = args.value(0);
    try {
        QStringList names;
        for (const std::string& name : presetNames())
            names << QString::fromStdString(name);
        names << QStringLiteral("field");
        const QString preset = parseWordList(parser.value(QStringLiteral("preset")), QStringLiteral("preset"), names).front();
        PresetOptions options = presetOptionsFrom(parser);
        if (!parser.isSet(QStringLiteral("out")))
            throw UsageError("--out FILE.fits is required");
        const QString out = parser.value(QStringLiteral("out"));
        if (parser.isSet(QStringLiteral("truth")))
            if (const std::optional<int> status = readTruthFile(program, parser.value(QStringLiteral("truth")), options))
                return *status;
        const bool force = parser.isSet(QStringLiteral("force"));
        const QString truthPath =
            (out.endsWith(QLatin1String(".fits"), Qt::CaseInsensitive) ? out.chopped(5) : out) + QStringLiteral(".truth.json");
        std::vector<std::string> inputs;
        if (parser.isSet(QStringLiteral("truth")))
            inputs.push_back(parser.value(QStringLiteral("truth")).toStdString());
        try {
            checkOutputs({{"out", false, out.toStdString()}, {"out (its truth file)", false, truthPath.toStdString()}}, inputs, force);
        } catch (const OutputError& e) {
            return runFailure(program, describe(e));
        }
        if (preset == QLatin1String("field"))
            return writeFieldSimulation(parser, options, out, truthPath, force);
        if (has(parser, "beads"))
            throw UsageError("--beads applies to the field preset only");
        return writeSimulation(preset, options, out, truthPath, force);
    } catch (const UsageError& e) {
        return usageFailure(program, QString::fromStdString(e.what()));
    } catch (const std::exception& e) {
        return runFailure(program, describe(e));
    }
}

} // namespace wfs::cli
