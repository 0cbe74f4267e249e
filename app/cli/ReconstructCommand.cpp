// wavefront-cli reconstruct: fit Zernike coefficients to a preset's data or to the user's FITS planes.
#include "CliCommon.h"
#include "Commands.h"

#include "engine/Presets.h"
#include "io/Fits.h"
#include "optics/Sampling.h"

#include <QFileInfo>
#include <QJsonDocument>

#include <chrono>
#include <cmath>
#include <thread>

namespace wfs::cli {

namespace {

struct DefocusEntry {
    bool isLength = false;
    double value = 0.0; // waves (W020) or metres
};

std::vector<DefocusEntry> parseDefocus(const QString& text)
{
    std::vector<DefocusEntry> entries;
    for (const QString& raw : text.split(QLatin1Char(','), Qt::KeepEmptyParts)) {
        const QString part = raw.trimmed();
        DefocusEntry e;
        if (part.endsWith(QLatin1Char('w'))) {
            e.value = parseNumber(part.chopped(1), QStringLiteral("defocus"));
        } else {
            bool ok = false;
            const double bare = part.toDouble(&ok);
            if (ok && bare == 0.0) {
                e.value = 0.0; // "0" is in focus whatever the unit
            } else {
                e.isLength = true;
                e.value = parseLength(part, QStringLiteral("defocus"));
            }
        }
        entries.push_back(e);
    }
    return entries;
}

// Builds the problem from FITS files and the metadata flags (flags override header keywords).
ProblemSpec problemFromFiles(const QCommandLineParser& parser, std::vector<std::string>& notes)
{
    std::vector<Image> planes;
    FitsContent first;
    const QStringList inputs = parser.values(QStringLiteral("input")) + parser.positionalArguments();
    for (const QString& input : inputs) {
        const QString suffix = QFileInfo(input).suffix().toLower();
        if (suffix != QLatin1String("fits") && suffix != QLatin1String("fit") && suffix != QLatin1String("fts"))
            throw std::runtime_error(input.toStdString() + ": only FITS files are read by this version (TIFF and PNG are planned)");
        FitsContent content = readFits(input.toStdString());
        notes.push_back(input.toStdString() + ": " + std::to_string(content.planes.size()) + " plane(s) of "
                        + std::to_string(content.planes.front().width) + " x " + std::to_string(content.planes.front().height));
        if (planes.empty())
            first = content;
        planes.insert(planes.end(), content.planes.begin(), content.planes.end());
    }
    if (planes.empty())
        throw UsageError("no input: give --preset or --input FILE");
    if (parser.isSet(QStringLiteral("planes"))) {
        std::vector<Image> chosen;
        for (int index : parseIntList(parser.value(QStringLiteral("planes")), QStringLiteral("planes"))) {
            if (index < 0 || index >= int(planes.size()))
                throw UsageError("--planes: plane " + std::to_string(index) + " does not exist (the input has "
                                 + std::to_string(planes.size()) + " planes, numbered from 0)");
            chosen.push_back(planes[size_t(index)]);
        }
        planes = chosen;
    }

    auto header = [&](const char* key) -> std::optional<double> {
        const auto it = first.numbers.find(key);
        return it == first.numbers.end() ? std::nullopt : std::optional<double>(it->second);
    };

    ProblemSpec spec;
    spec.name = QFileInfo(inputs.front()).fileName().toStdString();
    if (parser.isSet(QStringLiteral("wavelength"))) {
        spec.wavelength = parseLength(parser.value(QStringLiteral("wavelength")), QStringLiteral("wavelength"));
        if (!(spec.wavelength > 0.0))
            throw UsageError("--wavelength: must be positive");
    } else if (auto w = header("WAVELENG")) {
        spec.wavelength = *w;
    } else {
        throw UsageError("the wavelength is unknown: give --wavelength (e.g. 633nm)");
    }

    SamplingInput sampling;
    sampling.wavelength = spec.wavelength;
    if (parser.isSet(QStringLiteral("sampling")))
        sampling.samplingQ = parseNumber(parser.value(QStringLiteral("sampling")), QStringLiteral("sampling"));
    if (parser.isSet(QStringLiteral("f-number")))
        sampling.fNumber = parseNumber(parser.value(QStringLiteral("f-number")), QStringLiteral("f-number"));
    if (parser.isSet(QStringLiteral("na")))
        sampling.numericalAperture = parseNumber(parser.value(QStringLiteral("na")), QStringLiteral("na"));
    sampling.immersionIndex = parseNumber(parser.value(QStringLiteral("immersion")), QStringLiteral("immersion"));
    if (parser.isSet(QStringLiteral("aperture")))
        sampling.aperture = parseLength(parser.value(QStringLiteral("aperture")), QStringLiteral("aperture"));
    if (parser.isSet(QStringLiteral("pixel-scale"))) {
        const QString text = parser.value(QStringLiteral("pixel-scale"));
        if (auto angle = parseAngle(text))
            sampling.pixelAngle = *angle;
        else
            sampling.pixelPitch = parseLength(text, QStringLiteral("pixel-scale"));
    }
    if (!sampling.samplingQ && !sampling.pixelPitch && !sampling.pixelAngle)
        if (auto q = header("SAMPLING"))
            sampling.samplingQ = *q;
    Sampling s;
    try {
        s = computeSampling(sampling);
    } catch (const std::invalid_argument& e) {
        throw UsageError(e.what());
    }
    notes.insert(notes.end(), s.warnings.begin(), s.warnings.end());

    int width = planes.front().width, height = planes.front().height;
    int grid = std::max(width, height);
    grid += grid % 2;
    if (parser.isSet(QStringLiteral("grid")))
        grid = parseInt(parser.value(QStringLiteral("grid")), QStringLiteral("grid"));
    spec.grid = PupilGrid::centred(grid, s.q);

    // Defocus per plane: flags, else DEFOCUSk header keywords (waves W020).
    std::vector<DefocusEntry> defocus;
    if (parser.isSet(QStringLiteral("defocus"))) {
        defocus = parseDefocus(parser.value(QStringLiteral("defocus")));
    } else if (!parser.isSet(QStringLiteral("planes"))) {
        for (size_t k = 0; k < planes.size(); ++k) {
            const std::string key = "DEFOCUS" + std::to_string(k + 1);
            auto value = header(key.c_str());
            if (!value) {
                defocus.clear();
                break;
            }
            defocus.push_back({false, *value});
        }
    }
    if (defocus.empty() && planes.size() > 1)
        throw UsageError("the defocus of each plane is unknown: give --defocus with one entry per plane (e.g. --defocus=-1w,0,1w)");
    if (defocus.empty())
        defocus.push_back({false, 0.0});
    if (defocus.size() != planes.size())
        throw UsageError("--defocus has " + std::to_string(defocus.size()) + " entries but " + std::to_string(planes.size())
                         + " planes take part");
    const QString model = parseWordList(parser.value(QStringLiteral("defocus-model")), QStringLiteral("defocus-model"),
                                        {QStringLiteral("paraxial"), QStringLiteral("high-na")}).front();
    double na = sampling.numericalAperture.value_or(0.0);
    if (na == 0.0 && sampling.fNumber)
        na = 1.0 / (2.0 * *sampling.fNumber);

    spec.pupil.obscuration = parseNumber(parser.value(QStringLiteral("obscuration")), QStringLiteral("obscuration"));
    spec.pupil.spiderCount = parseInt(parser.value(QStringLiteral("spiders")), QStringLiteral("spiders"));
    spec.pupil.spiderWidth = parseNumber(parser.value(QStringLiteral("spider-width")), QStringLiteral("spider-width"));

    for (size_t k = 0; k < planes.size(); ++k) {
        PlaneSpec plane;
        plane.data = planes[k];
        plane.fitFlux = true;
        plane.fitBackground = true;
        const DefocusEntry& d = defocus[k];
        if (d.isLength) {
            if (na <= 0.0)
                throw UsageError("a defocus given as a length needs --na (or --f-number) to convert it to phase");
            plane.diversity.kind = model == QLatin1String("high-na") ? DiversityKind::AxialHighNa : DiversityKind::AxialParaxial;
            plane.diversity.axialDistance = d.value;
            plane.diversity.numericalAperture = na;
            plane.diversity.immersionIndex = sampling.immersionIndex;
        } else if (d.value != 0.0) {
            plane.diversity.kind = DiversityKind::ZernikeDefocus;
            plane.diversity.defocusWaves = d.value;
        }
        spec.planes.push_back(plane);
    }
    const auto bunit = first.strings.find("BUNIT");
    spec.objective = (bunit != first.strings.end() && bunit->second == "relative") ? ObjectiveKind::LeastSquares : ObjectiveKind::Poisson;
    return spec;
}

void printSummary(FILE* out, const FitResult& r, const std::vector<std::string>& notes, const Truth* truth)
{
    std::fprintf(out, "Wavefront Studio reconstruction: %s\n", r.problemName.c_str());
    for (const std::string& note : notes)
        std::fprintf(out, "  note: %s\n", note.c_str());
    std::fprintf(out, "  backend %s (%s), %s, gradient %s, %zu parameters\n", r.backend.backend.c_str(), r.backend.device.c_str(),
                 precisionName(r.backend.precision), gradientName(r.gradient), r.parameterValues.size());
    std::fprintf(out, "  %s after %d iterations, %ld cost / %ld gradient evaluations, %.3f s\n", terminationName(r.solver.termination),
                 r.solver.iterations, r.solver.costEvaluations, r.solver.gradientEvaluations, r.solver.seconds);
    std::fprintf(out, "  (%s)\n", r.solver.message.c_str());
    std::fprintf(out, "  cost %.6g -> %.6g", r.solver.initialCost, r.solver.finalCost);
    for (size_t k = 0; k < r.planes.size(); ++k)
        if (std::isfinite(r.planes[k].reducedChiSquare))
            std::fprintf(out, "%s plane %zu chi2/pixel %.3f", k == 0 ? ";" : ",", k, r.planes[k].reducedChiSquare);
    std::fprintf(out, "\n  wavefront error (%s removed): %.4f waves RMS = %.1f nm RMS, %.4f waves PV; Strehl %.3f (Marechal %.3f)\n",
                 r.defocusRemoved ? "piston, tip, tilt, defocus" : "piston, tip, tilt", r.rmsWaves, r.rmsWaves * r.wavelength * 1e9,
                 r.pvWaves, r.strehl, r.strehlMarechal);
    std::fprintf(out, "  Zernike coefficients (%s ordering, %s normalisation, wavelength %.1f nm):\n",
                 zernike::orderingName(r.ordering), zernike::normalizationName(r.normalization), r.wavelength * 1e9);
    std::fprintf(out, "    %5s %3s %4s  %-32s %11s %11s %10s%s\n", "index", "n", "m", "name", "waves", "nm", "+/- waves",
                 truth ? "      truth" : "");
    for (const CoefficientResult& c : r.coefficients) {
        std::fprintf(out, "    %5d %3d %4d  %-32s %11.5f %11.2f %10.5f", c.index, c.mode.n, c.mode.m, c.name.c_str(), c.waves, c.nm,
                     c.uncertaintyWaves);
        if (truth) {
            double t = 0.0;
            for (const TruthTerm& term : truth->terms)
                if (zernike::modeFromIndex(term.index, truth->ordering) == c.mode)
                    t = term.valueWaves * zernike::normalizationFactor(c.mode, truth->normalization)
                        / zernike::normalizationFactor(c.mode, r.normalization);
            std::fprintf(out, " %10.5f", t);
        }
        std::fputc('\n', out);
    }
    for (const std::string& w : r.warnings)
        std::fprintf(out, "  warning: %s\n", w.c_str());
}

} // namespace

int runReconstruct(const QStringList& args)
{
    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral(
        "Reconstruct the wavefront (Zernike coefficients) from PSF images by BFGS on a Fourier-optics model.\n"
        "Input: --preset demo|oof, or --input FILE.fits [...] (2-D images, 3-D cubes, one plane per HDU) with metadata.\n"
        "Numbers take unit suffixes; a bare number is in SI base units."));
    parser.addOptions({
        {QStringLiteral("preset"), QStringLiteral("Built-in problem: demo or oof."), QStringLiteral("name")},
        {QStringLiteral("input"), QStringLiteral("FITS file(s) with the PSF planes (repeat the option for several files)."), QStringLiteral("FILE")},
        {QStringLiteral("wavelength"), QStringLiteral("Wavelength, e.g. 633nm."), QStringLiteral("length")},
        {QStringLiteral("pixel-scale"), QStringLiteral("Pixel pitch (with --f-number or --na) or angle (arcsec, mas, rad; with --aperture)."), QStringLiteral("value")},
        {QStringLiteral("f-number"), QStringLiteral("Focal ratio F#: Q = lambda F# / pitch."), QStringLiteral("F")},
        {QStringLiteral("na"), QStringLiteral("Numerical aperture: Q = lambda / (2 NA pitch)."), QStringLiteral("NA")},
        {QStringLiteral("immersion"), QStringLiteral("Immersion refractive index."), QStringLiteral("n"), QStringLiteral("1")},
        {QStringLiteral("aperture"), QStringLiteral("Aperture diameter, with an angular pixel scale."), QStringLiteral("length")},
        {QStringLiteral("sampling"), QStringLiteral("Sampling Q = lambda F# / pixel, given directly."), QStringLiteral("Q")},
        {QStringLiteral("defocus"), QStringLiteral("One entry per plane: waves of W020 ('1w') or an axial length ('0.9um')."), QStringLiteral("list")},
        {QStringLiteral("defocus-model"), QStringLiteral("paraxial or high-na, for defocus given as lengths."), QStringLiteral("model"), QStringLiteral("paraxial")},
        {QStringLiteral("planes"), QStringLiteral("Planes that take part (0-based, in file order)."), QStringLiteral("list")},
        {QStringLiteral("obscuration"), QStringLiteral("Central obscuration, fraction of the pupil diameter."), QStringLiteral("ratio"), QStringLiteral("0")},
        {QStringLiteral("spiders"), QStringLiteral("Number of spider vanes."), QStringLiteral("count"), QStringLiteral("0")},
        {QStringLiteral("spider-width"), QStringLiteral("Vane width, fraction of the pupil diameter."), QStringLiteral("w"), QStringLiteral("0")},
        {QStringLiteral("grid"), QStringLiteral("Model grid size N (even; default: the data size, or the preset's)."), QStringLiteral("N")},
        {QStringLiteral("order"), QStringLiteral("Highest Zernike radial order (1..15)."), QStringLiteral("n")},
        {QStringLiteral("ordering"), QStringLiteral("noll or ansi."), QStringLiteral("name")},
        {QStringLiteral("normalization"), QStringLiteral("rms (Noll) or unit (R(1) = 1)."), QStringLiteral("name")},
        {QStringLiteral("objective"), QStringLiteral("poisson, least-squares or weighted (Poisson plus read noise)."), QStringLiteral("name")},
        {QStringLiteral("read-noise"), QStringLiteral("Read noise in counts RMS, for --objective weighted."), QStringLiteral("e")},
        {QStringLiteral("stages"), QStringLiteral("Coarse-to-fine Zernike orders, e.g. 2,4,6 (the last is the fitted order)."), QStringLiteral("list")},
        {QStringLiteral("seed"), QStringLiteral("Noise seed of a preset."), QStringLiteral("S"), QStringLiteral("20180518")},
        {QStringLiteral("remove-defocus"), QStringLiteral("Report RMS and PV with defocus removed too.")},
        {QStringLiteral("no-uncertainty"), QStringLiteral("Skip the uncertainty estimate (2 P extra gradients).")},
        {QStringLiteral("json"), QStringLiteral("Write the result as JSON ('-' for stdout)."), QStringLiteral("FILE")},
        {QStringLiteral("phase-out"), QStringLiteral("Write the phase map (radians) as FITS."), QStringLiteral("FILE.fits")},
        {QStringLiteral("csv"), QStringLiteral("Write the coefficient table as CSV."), QStringLiteral("FILE")},
        {QStringLiteral("force"), QStringLiteral("Overwrite existing output files.")},
        {QStringLiteral("quiet"), QStringLiteral("No progress lines on stderr.")},
    });
    parser.addPositionalArgument(QStringLiteral("files"), QStringLiteral("FITS input files (same as --input)."), QStringLiteral("[FILE...]"));
    addSolverOptions(parser);
    if (auto status = parseOrExit(parser, args))
        return *status;
    const QString program = args.value(0);

    ReconstructionRequest request;
    std::vector<std::string> notes;
    std::optional<Truth> truth;
    try {
        const bool fromPreset = parser.isSet(QStringLiteral("preset"));
        const bool fromFiles = parser.isSet(QStringLiteral("input")) || !parser.positionalArguments().isEmpty();
        if (fromPreset == fromFiles)
            throw UsageError("give exactly one input: --preset demo|oof or --input FILE");
        if (fromPreset) {
            PresetOptions options;
            if (parser.isSet(QStringLiteral("grid")))
                options.grid = parseInt(parser.value(QStringLiteral("grid")), QStringLiteral("grid"));
            if (parser.isSet(QStringLiteral("order")))
                options.order = parseInt(parser.value(QStringLiteral("order")), QStringLiteral("order"));
            options.seed = std::uint64_t(parseNumber(parser.value(QStringLiteral("seed")), QStringLiteral("seed")));
            const QString name = parseWordList(parser.value(QStringLiteral("preset")), QStringLiteral("preset"), {QStringLiteral("demo"), QStringLiteral("oof")}).front();
            PresetCase c;
            try {
                c = makePreset(name.toStdString(), options);
            } catch (const std::invalid_argument& e) { // every preset input is a command-line argument
                throw UsageError(e.what());
            }
            request.spec = c.spec;
            request.start = c.start;
            request.solver = c.solver;
            truth = c.truth;
            notes.push_back("simulated data: " + c.noiseDescription);
        } else {
            request.spec = problemFromFiles(parser, notes);
            if (parser.isSet(QStringLiteral("order")))
                request.spec.basis.maxOrder = parseInt(parser.value(QStringLiteral("order")), QStringLiteral("order"));
            request.solver.gradientTolerance = 1e-6;
            request.solver.functionTolerance = 1e-11;
        }
        if (parser.isSet(QStringLiteral("ordering")) || parser.isSet(QStringLiteral("normalization"))) {
            if (fromPreset)
                throw UsageError("--ordering and --normalization apply to file input; the presets fix their conventions");
            if (parser.isSet(QStringLiteral("ordering")))
                request.spec.basis.ordering = parseWordList(parser.value(QStringLiteral("ordering")), QStringLiteral("ordering"),
                                                            {QStringLiteral("noll"), QStringLiteral("ansi")}).front() == QLatin1String("ansi")
                                                  ? ZernikeOrdering::Ansi : ZernikeOrdering::Noll;
            if (parser.isSet(QStringLiteral("normalization")))
                request.spec.basis.normalization = parseWordList(parser.value(QStringLiteral("normalization")), QStringLiteral("normalization"),
                                                                 {QStringLiteral("rms"), QStringLiteral("unit")}).front() == QLatin1String("unit")
                                                       ? ZernikeNormalization::Unit : ZernikeNormalization::Rms;
        }
        if (parser.isSet(QStringLiteral("objective"))) {
            const QString o = parseWordList(parser.value(QStringLiteral("objective")), QStringLiteral("objective"),
                                            {QStringLiteral("poisson"), QStringLiteral("least-squares"), QStringLiteral("weighted")}).front();
            request.spec.objective = o == QLatin1String("poisson") ? ObjectiveKind::Poisson
                                     : o == QLatin1String("weighted") ? ObjectiveKind::WeightedLeastSquares : ObjectiveKind::LeastSquares;
        }
        if (parser.isSet(QStringLiteral("read-noise")))
            request.spec.readNoise = parseNumber(parser.value(QStringLiteral("read-noise")), QStringLiteral("read-noise"));
        if (parser.isSet(QStringLiteral("stages"))) {
            request.stages = parseIntList(parser.value(QStringLiteral("stages")), QStringLiteral("stages"));
            request.spec.basis.maxOrder = request.stages.back();
            request.start.clear();
        }
        if (request.spec.basis.maxOrder < 1 || request.spec.basis.maxOrder > zernike::kMaxOrder)
            throw UsageError("--order: must be between 1 and " + std::to_string(zernike::kMaxOrder));
        if (!fromPreset)
            estimateFluxAndBackground(request.spec);
        applySolverOptions(parser, request);
        request.analysis.removeDefocus = parser.isSet(QStringLiteral("remove-defocus"));
        request.analysis.computeUncertainty = !parser.isSet(QStringLiteral("no-uncertainty"));
    } catch (const UsageError& e) {
        return usageFailure(program, QString::fromStdString(e.what()));
    } catch (const std::exception& e) {
        return runFailure(program, QString::fromStdString(e.what()));
    }

    const bool force = parser.isSet(QStringLiteral("force"));
    const QString jsonPath = parser.value(QStringLiteral("json"));
    for (const QString& option : {QStringLiteral("json"), QStringLiteral("phase-out"), QStringLiteral("csv")}) {
        const QString path = parser.value(option);
        if (!path.isEmpty() && path != QLatin1String("-") && !force && QFileInfo::exists(path))
            return runFailure(program, path + QStringLiteral(": file exists; refusing to overwrite it (use --force)"));
    }

    // Run on the engine's worker thread; print the latest snapshot about twice a second.
    ReconstructionEngine engine;
    engine.start(request);
    const bool quiet = parser.isSet(QStringLiteral("quiet"));
    unsigned long shown = 0;
    auto lastPrint = std::chrono::steady_clock::now();
    while (engine.isRunning()) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        unsigned long version = 0;
        const auto snap = engine.latest(&version);
        if (quiet || !snap || version == shown || std::chrono::steady_clock::now() - lastPrint < std::chrono::milliseconds(500))
            continue;
        shown = version;
        lastPrint = std::chrono::steady_clock::now();
        std::fprintf(stderr, "  stage %d/%d (order %d)  iteration %4d  cost %.8g  max|g| %.3g  %.1f s\n", snap->stage + 1,
                     snap->stageCount, snap->order, snap->iteration.iteration, snap->iteration.cost, snap->iteration.gradientMaxNorm,
                     snap->iteration.elapsedSeconds);
    }
    engine.wait();
    if (!engine.error().empty()) {
        return runFailure(program, QString::fromStdString(engine.error()));
    }
    const FitResult result = *engine.result();

    printSummary(jsonPath == QLatin1String("-") ? stderr : stdout, result, notes, truth ? &*truth : nullptr);
    try {
        if (!jsonPath.isEmpty()) {
            const QByteArray json = QJsonDocument(resultToJson(result)).toJson();
            if (jsonPath == QLatin1String("-"))
                std::fwrite(json.constData(), 1, size_t(json.size()), stdout);
            else
                writeTextFile(jsonPath, json, force);
        }
        if (parser.isSet(QStringLiteral("csv")))
            writeTextFile(parser.value(QStringLiteral("csv")), coefficientsCsv(result).toUtf8(), force);
        if (parser.isSet(QStringLiteral("phase-out"))) {
            std::vector<FitsKeyword> keywords = {
                {"BUNIT", std::string("rad"), "phase in radians; waves = rad / (2 pi)"},
                {"WAVELENG", result.wavelength, "[m] wavelength"},
                {"ZORDERNG", std::string(zernike::orderingName(result.ordering)), "Zernike ordering"},
                {"ZNORM", std::string(zernike::normalizationName(result.normalization)), "Zernike normalisation"},
                {"ZORDER", (long long)(result.coefficients.empty() ? 0 : result.coefficients.back().mode.n), "highest radial order"},
                {"RMSWAVE", result.rmsWaves, "[waves] RMS wavefront error, piston/tip/tilt removed"},
                {"PVWAVE", result.pvWaves, "[waves] peak-to-valley wavefront error"},
                {"STREHL", result.strehl, "Strehl ratio from the model PSF peak"},
                {"FINLCOST", result.solver.finalCost, "final objective value"},
                {"TERMINAT", std::string(terminationName(result.solver.termination)), "solver termination"},
                {"ROWORDER", std::string("bottom-up"), "row 0 is the bottom row, x right, y up"},
                {"PUPILORI", std::string("x right, y up, angle CCW from +x"), "pupil coordinates"},
            };
            writeFits(parser.value(QStringLiteral("phase-out")).toStdString(), {result.phaseMap}, keywords, false, force);
        }
    } catch (const std::exception& e) {
        return runFailure(program, QString::fromStdString(e.what()));
    }
    if (result.solver.termination == Termination::Failed)
        return runFailure(program, QString::fromStdString("the fit failed: " + result.solver.message));
    return 0;
}

} // namespace wfs::cli
