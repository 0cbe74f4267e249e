// wavefront-cli simulate: synthetic PSF planes with known aberrations, as one FITS cube plus the truth.
#include "CliCommon.h"
#include "Commands.h"

#include "engine/Presets.h"
#include "io/Fits.h"

#include <QFile>
#include <QJsonDocument>

namespace wfs::cli {

std::vector<FitsKeyword> problemKeywords(const PresetCase& preset, const QString& presetName);

int runSimulate(const QStringList& args)
{
    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral("Write synthetic PSF data with known aberrations: one FITS file, one image plane per defocus, "
                                                    "metadata in its header, and the truth next to it (FILE.truth.json)."));
    parser.addOptions({
        {QStringLiteral("preset"), QStringLiteral("demo or oof."), QStringLiteral("name"), QStringLiteral("demo")},
        {QStringLiteral("grid"), QStringLiteral("Grid size N (even)."), QStringLiteral("N")},
        {QStringLiteral("order"), QStringLiteral("Zernike radial order of the model."), QStringLiteral("n")},
        {QStringLiteral("truth"), QStringLiteral("Coefficients to inject (JSON, same schema as a result's coefficients)."), QStringLiteral("FILE.json")},
        {QStringLiteral("seed"), QStringLiteral("Random seed of the noise."), QStringLiteral("S"), QStringLiteral("20180518")},
        {QStringLiteral("noise"), QStringLiteral("none or default (the preset's noise model)."), QStringLiteral("kind"), QStringLiteral("default")},
        {QStringLiteral("out"), QStringLiteral("Output FITS file."), QStringLiteral("FILE.fits")},
        {QStringLiteral("force"), QStringLiteral("Overwrite existing files.")},
    });
    if (auto status = parseOrExit(parser, args))
        return *status;
    const QString program = args.value(0);
    try {
        PresetOptions options;
        const QString preset = parseWordList(parser.value(QStringLiteral("preset")), QStringLiteral("preset"), {QStringLiteral("demo"), QStringLiteral("oof")}).front();
        if (parser.isSet(QStringLiteral("grid")))
            options.grid = parseInt(parser.value(QStringLiteral("grid")), QStringLiteral("grid"));
        if (parser.isSet(QStringLiteral("order")))
            options.order = parseInt(parser.value(QStringLiteral("order")), QStringLiteral("order"));
        options.seed = std::uint64_t(parseNumber(parser.value(QStringLiteral("seed")), QStringLiteral("seed")));
        options.noise = parseWordList(parser.value(QStringLiteral("noise")), QStringLiteral("noise"), {QStringLiteral("none"), QStringLiteral("default")}).front()
                        == QLatin1String("default");
        if (!parser.isSet(QStringLiteral("out")))
            throw UsageError("--out FILE.fits is required");
        const QString out = parser.value(QStringLiteral("out"));
        if (parser.isSet(QStringLiteral("truth"))) {
            const QString path = parser.value(QStringLiteral("truth"));
            QFile file(path);
            if (!file.open(QIODevice::ReadOnly))
                return runFailure(program, path + QStringLiteral(": cannot read the truth file (") + file.errorString() + QLatin1Char(')'));
            QJsonParseError error;
            const QJsonDocument doc = QJsonDocument::fromJson(file.readAll(), &error);
            if (error.error != QJsonParseError::NoError)
                return runFailure(program, path + QStringLiteral(": not valid JSON (") + error.errorString() + QLatin1Char(')'));
            options.truth = truthFromJson(doc.object(), path);
        }
        const bool force = parser.isSet(QStringLiteral("force"));
        const QString truthPath = (out.endsWith(QLatin1String(".fits"), Qt::CaseInsensitive) ? out.chopped(5) : out) + QStringLiteral(".truth.json");
        if (!force && QFile::exists(truthPath))
            return runFailure(program, truthPath + QStringLiteral(": file exists; refusing to overwrite it (use --force)"));

        PresetCase c;
        try {
            c = makePreset(preset.toStdString(), options);
        } catch (const std::invalid_argument& e) { // every preset input is a command-line argument
            throw UsageError(e.what());
        }
        std::vector<Image> planes;
        for (const PlaneSpec& plane : c.spec.planes)
            planes.push_back(plane.data);
        std::vector<FitsKeyword> keywords = problemKeywords(c, preset);
        keywords.push_back({"NOISE", c.noiseDescription.substr(0, 68), "noise model of the simulation"});
        keywords.push_back({"SEED", (long long)options.seed, "random seed"});
        writeFits(out.toStdString(), planes, keywords, false, force);
        writeTextFile(truthPath, QJsonDocument(truthToJson(c.truth, c.spec.wavelength)).toJson(), force);
        std::printf("wrote %s (%zu planes of %d x %d) and %s\n", qPrintable(out), planes.size(), planes.front().width,
                    planes.front().height, qPrintable(truthPath));
        return 0;
    } catch (const UsageError& e) {
        return usageFailure(program, QString::fromStdString(e.what()));
    } catch (const std::exception& e) {
        return runFailure(program, QString::fromStdString(e.what()));
    }
}

// The header that lets `reconstruct --input` read the file back without flags (documented in the README).
std::vector<FitsKeyword> problemKeywords(const PresetCase& preset, const QString& presetName)
{
    const ProblemSpec& s = preset.spec;
    std::vector<FitsKeyword> k;
    k.push_back({"ORIGIN", std::string("Wavefront Studio"), "software"});
    k.push_back({"PRESET", presetName.toStdString(), "problem preset"});
    k.push_back({"BUNIT", std::string(presetName == QLatin1String("oof") ? "relative" : "photons"), "pixel unit"});
    k.push_back({"WAVELENG", s.wavelength, "[m] wavelength"});
    k.push_back({"NPLANES", (long long)s.planes.size(), "image planes (one per defocus)"});
    if (!s.grid.rowIsX)
        k.push_back({"SAMPLING", s.grid.spacing * s.grid.size / 2.0, "Q = lambda F# / pixel"});
    for (size_t p = 0; p < s.planes.size(); ++p) {
        const DiversitySpec& d = s.planes[p].diversity;
        const std::string key = "DEFOCUS" + std::to_string(p + 1);
        if (d.kind == DiversityKind::ZernikeDefocus && d.measure == DefocusMeasure::PeakToValley)
            k.push_back({key, d.defocusWaves, "[waves] W020 of plane (edge-to-centre)"});
        else
            k.push_back({"DIVERS" + std::to_string(p + 1), d.describe().substr(0, 68), "diversity of plane"});
    }
    k.push_back({"ZORDER", (long long)s.basis.maxOrder, "Zernike radial order of the preset model"});
    k.push_back({"ZORDERNG", std::string(zernike::orderingName(s.basis.ordering)), "Zernike ordering"});
    k.push_back({"ZNORM", std::string(zernike::normalizationName(s.basis.normalization)), "Zernike normalisation"});
    k.push_back({"ROWORDER", std::string("bottom-up"), "row 0 is the bottom row, x right, y up"});
    return k;
}

} // namespace wfs::cli
