// wavefront-cli field: every bead of one wide-field z-stack found, fitted with one session's settings, and the
// aberrations described as smooth functions of field position (core/engine/FieldRun.h).
#include "CliCommon.h"
#include "Commands.h"

#include "engine/Batch.h"
#include "engine/FieldRun.h"
#include "engine/FieldSimulation.h"
#include "FieldMap.h"
#include "io/ImageReaders.h"
#include "io/OutputTransaction.h"

#include <QDir>
#include <QJsonArray>
#include <QJsonDocument>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <cstdio>
#include <mutex>

namespace wfs::cli {

namespace {

void addFieldOptions(QCommandLineParser& parser)
{
    parser.setApplicationDescription(
        QStringLiteral("Find every bead of a wide-field z-stack (FITS, TIFF), fit each with one set of settings, and describe each "
                       "aberration term as a smooth function of field position (double Zernike). Writes DIR/beads.csv and "
                       "DIR/field.json."));
    const BeadDetectionOptions detection;
    addOptions(parser, {
                           {QStringLiteral("settings"),
                            QStringLiteral("A saved session or settings file whose model, solver, preparation and metadata every bead "
                                           "is fitted with (its inputs are not read)."),
                            QStringLiteral("FILE.json")},
                           {QStringLiteral("crop"), QStringLiteral("Side of the square each bead is fitted in, pixels (even)."),
                            QStringLiteral("N"), QString::number(detection.crop)},
                           {QStringLiteral("threshold"),
                            QStringLiteral("Detection significance of a bead's peak in the smoothed mean projection, in robust sigmas."),
                            QStringLiteral("k"), QString::number(detection.threshold)},
                           {QStringLiteral("field-order"),
                            QStringLiteral("Radial order of the field Zernikes of every term, or auto: per term the lowest BIC over orders "
                                           "0..4 (default auto)."),
                            QStringLiteral("n|auto")},
                           {QStringLiteral("maps"),
                            QStringLiteral("Terms drawn as DIR/field-map-<ordering>-<index>.png (the model under the beads' own values), "
                                           "a list, or none (default: every term whose field order is 1 or more)."),
                            QStringLiteral("i,...|none")},
                           {QStringLiteral("part"),
                            QStringLiteral("Fit only part K of N of the beads (0-based; bead index modulo N) and write "
                                           "DIR/part-K-of-N.json, e.g. one part per Slurm array task; then --combine."),
                            QStringLiteral("K/N")},
                           {QStringLiteral("combine"),
                            QStringLiteral("Read DIR/part-*-of-N.json (the same stack and settings), describe the field and write "
                                           "the outputs as one run would.")},
                           {QStringLiteral("no-joint-fit"),
                            QStringLiteral("Keep the two-step field model: no joint fit of every bead through it.")},
                           {QStringLiteral("jobs"), QStringLiteral("Beads fitted at once (default: hardware threads / threads per fit)."),
                            QStringLiteral("N")},
                           {QStringLiteral("out"), QStringLiteral("Output folder (created if missing)."), QStringLiteral("DIR")},
                           {QStringLiteral("force"), QStringLiteral("Overwrite existing outputs.")},
                       });
    addCoreOptions(parser, metadataOptionHelp());
    addCoreOptions(parser, modelOptionHelp());
    addCoreOptions(parser, solverOptionHelp());
    parser.addPositionalArgument(QStringLiteral("stack"), QStringLiteral("The wide-field z-stack."), QStringLiteral("STACK"));
}

FieldRunOptions fieldOptionsFrom(const QCommandLineParser& parser)
{
    FieldRunOptions options;
    options.detection.crop = parseInt(value(parser, "crop"), QStringLiteral("crop"));
    if (options.detection.crop < 8 || options.detection.crop % 2 != 0)
        throw UsageError("--crop: " + value(parser, "crop").toStdString() + " is not an even number of pixels of at least 8");
    options.detection.threshold = parseNumber(value(parser, "threshold"), QStringLiteral("threshold"));
    if (!(options.detection.threshold > 0.0))
        throw UsageError("--threshold: must be positive");
    if (has(parser, "field-order") && value(parser, "field-order") != QLatin1String("auto")) {
        options.model.order = parseInt(value(parser, "field-order"), QStringLiteral("field-order"));
        if (options.model.order < 0 || options.model.order > zernike::kMaxOrder)
            throw UsageError("--field-order: must be auto or between 0 and " + std::to_string(zernike::kMaxOrder));
    }
    options.jointFit = !has(parser, "no-joint-fit");
    if (has(parser, "jobs")) {
        options.jobs = parseInt(value(parser, "jobs"), QStringLiteral("jobs"));
        if (options.jobs < 1)
            throw UsageError("--jobs: must be at least 1");
    }
    return options;
}

// The stack loaded over the settings (a settings file's, else the defaults) and the flags applied.
Session fieldSession(const QCommandLineParser& parser, const std::string& stack)
{
    Session session;
    const bool fromSettings = has(parser, "settings");
    if (fromSettings)
        session = loadBatchSettings(value(parser, "settings").toStdString());
    for (const DatasetMessage& m : addFiles(session.dataset, {stack}))
        if (m.level != MessageLevel::Info)
            std::fprintf(stderr, "%s\n", m.text.c_str());
    if (session.dataset.planes.empty())
        throw DatasetError(stack + ": no plane could be read");
    applyRunOptions(ParserOptions(parser), session, fromSettings);
    return session;
}

// The terms to draw: --maps' list (each one the model has), none, or those the model lets vary across the field.
std::vector<size_t> mappedTerms(const QCommandLineParser& parser, const FieldRun& run)
{
    std::vector<size_t> terms;
    if (!run.model || value(parser, "maps") == QLatin1String("none"))
        return terms;
    if (has(parser, "maps")) {
        for (int index : parseIntList(value(parser, "maps"), QStringLiteral("maps"))) {
            const auto it = std::find(run.modelTerms.begin(), run.modelTerms.end(), index);
            if (it == run.modelTerms.end())
                throw UsageError("--maps: term " + std::to_string(index) + " is not among the field model's terms");
            terms.push_back(size_t(it - run.modelTerms.begin()));
        }
        return terms;
    }
    for (size_t t = 0; t < run.model->terms.size(); ++t)
        if (run.model->terms[t].order >= 1)
            terms.push_back(t);
    return terms;
}

// A term's map: its model over the field, each bead's own value on it (grey crosses for beads without one).
QByteArray fieldMapPng(const FieldRun& run, size_t term)
{
    const int index = run.modelTerms[term];
    const std::string name = std::string(zernike::orderingName(run.ordering)) + " " + std::to_string(index);
    std::vector<FieldMapPoint> points;
    for (const FieldBead& bead : run.beads) {
        double value = std::numeric_limits<double>::quiet_NaN();
        if (bead.status == "ok")
            for (const CoefficientResult& c : bead.coefficients)
                if (c.index == index)
                    value = c.waves;
        points.push_back({bead.detection.x, bead.detection.y, value, {}});
    }
    const FieldTermGrid grid = fieldTermGrid(run, term, 96);
    FieldMapOptions options;
    options.title = name + " (" + zernike::name(zernike::modeFromIndex(index, run.ordering)) + ") across the field: model and beads";
    options.valueLabel = name + " [waves]";
    options.axisUnit = "pixels";
    options.surface = FieldMapSurface{grid.values, grid.x0, grid.y0, grid.step};
    return fieldMapPngBytes(points, options);
}

int writeField(const QCommandLineParser& parser, const FieldRun& run, const QString& dir)
{
    OutputTransaction transaction(has(parser, "force"));
    const std::string base = dir.toStdString() + "/";
    for (auto& [name, bytes] : fieldRunFiles(run))
        transaction.add(base + name, std::move(bytes));
    const std::vector<size_t> maps = mappedTerms(parser, run);
    for (size_t t : maps)
        transaction.add(base + "field-map-" + zernike::orderingName(run.ordering) + "-" + std::to_string(run.modelTerms[t]) + ".png",
                        fieldMapPng(run, t));
    transaction.commit();
    // What the beads' fits assumed (the first bead's preparation: focus plane, planes, centring...), as reconstruct says it.
    for (const DatasetMessage& m : run.messages)
        std::fprintf(stderr, "%s: %s\n", messageLevelName(m.level), m.text.c_str());
    std::fputs(fieldSummary(run).c_str(), stdout);
    std::printf("wrote %s/beads.csv, field.json%s and %zu field maps (PNG)\n", qPrintable(dir), run.model ? ", field-maps.fits" : "",
                maps.size());
    return run.model ? 0 : 1;
}

} // namespace

namespace {

// --part K/N as the pair; throws UsageError.
std::pair<int, int> partOf(const QString& text)
{
    const QStringList kn = text.split(QLatin1Char('/'));
    const int k = kn.size() == 2 ? parseInt(kn[0], QStringLiteral("part")) : -1,
              n = kn.size() == 2 ? parseInt(kn[1], QStringLiteral("part")) : 0;
    if (n < 1 || k < 0 || k >= n)
        throw UsageError("--part: expected K/N with 0 <= K < N, e.g. 3/16 (got " + text.toStdString() + ")");
    return {k, n};
}

QString partPath(const QString& dir, int k, int n)
{
    return dir + QStringLiteral("/part-%1-of-%2.json").arg(k).arg(n);
}

// --part: this part's beads fitted and written with the detection they belong to.
int writePart(const Session& session, FieldRunOptions options, const QString& dir, const QString& partText, bool force)
{
    const auto [k, n] = partOf(partText);
    options.fitOnly = [k = k, n = n](size_t index) { return int(index % size_t(n)) == k; };
    FieldRun run = detectField(session, options.detection);
    fitField(session, options, run);
    QJsonArray beads;
    for (size_t i = 0; i < run.beads.size(); ++i)
        if (options.fitOnly(i)
            && (run.beads[i].detection.status == BeadStatus::Accepted || run.beads[i].detection.status == BeadStatus::FitFailed))
            beads.append(fieldBeadJson(run, i));
    OutputTransaction transaction(force);
    transaction.add(partPath(dir, k, n).toStdString(), QJsonDocument(QJsonObject{{"format", "wavefront-studio-field-part"},
                                                                                 {"part", k},
                                                                                 {"parts", n},
                                                                                 {"beads_found", int(run.beads.size())},
                                                                                 {"beads", beads}})
                                                           .toJson());
    transaction.commit();
    std::printf("part %d of %d: fitted %lld of the %zu beads found; wrote %s\n", k, n, (long long)beads.size(), run.beads.size(),
                qPrintable(partPath(dir, k, n)));
    return 0;
}

// --combine: the detection again (deterministic), every part's beads applied, then the model and the joint fit.
FieldRun combineParts(const Session& session, const FieldRunOptions& options, const QString& dir)
{
    const auto start = std::chrono::steady_clock::now();
    FieldRun run = detectField(session, options.detection);
    const QStringList parts = QDir(dir).entryList({QStringLiteral("part-*-of-*.json")}, QDir::Files, QDir::Name);
    if (parts.isEmpty())
        throw std::runtime_error(dir.toStdString() + ": no part-K-of-N.json to combine (run --part K/N first)");
    for (const QString& name : parts) {
        const std::string path = (dir + QLatin1Char('/') + name).toStdString();
        const QJsonObject part =
            QJsonDocument::fromJson(QByteArray::fromStdString(readRegularFile(path, 1 << 30, "a field part (JSON)"))).object();
        if (part[QStringLiteral("format")].toString() != QLatin1String("wavefront-studio-field-part"))
            throw std::runtime_error(path + ": not a part of a field run");
        for (const QJsonValue bead : part[QStringLiteral("beads")].toArray())
            applyFieldBeadJson(run, bead.toObject(), path);
    }
    std::vector<size_t> missing;
    for (size_t i = 0; i < run.beads.size(); ++i)
        if (run.beads[i].status == "not-run")
            missing.push_back(i);
    if (!missing.empty())
        throw std::runtime_error(dir.toStdString() + ": " + std::to_string(missing.size()) + " beads have no fit in the parts (bead "
                                 + std::to_string(missing.front()) + " first): run every part K/N before --combine");
    describeField(session, run, options);
    run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); // the combining step's
    return run;
}

} // namespace

int runField(const QStringList& args)
{
    QCommandLineParser parser;
    addFieldOptions(parser);
    if (auto status = parseOrExit(parser, args, QStringLiteral("field STACK [options] --out DIR")))
        return *status;
    const QString program = args.value(0);
    try {
        if (parser.positionalArguments().size() != 1)
            throw UsageError("give one wide-field stack (STACK)");
        if (!has(parser, "out"))
            throw UsageError("--out DIR is required");
        FieldRunOptions options = fieldOptionsFrom(parser);
        const QString dir = value(parser, "out");
        const std::string stack = parser.positionalArguments().front().toStdString();
        if (!QDir().mkpath(dir))
            return runFailure(program, dir + QStringLiteral(": cannot create the output folder"));
        if (has(parser, "part") && has(parser, "combine"))
            throw UsageError("give --part or --combine, not both");
        if (!has(parser, "part"))
            checkOutputs({{"out", true, (dir + QStringLiteral("/beads.csv")).toStdString()},
                          {"out", true, (dir + QStringLiteral("/field.json")).toStdString()},
                          {"out", false, (dir + QStringLiteral("/field-maps.fits")).toStdString()}},
                         {stack}, has(parser, "force"));
        const Session session = fieldSession(parser, stack);
        if (has(parser, "part"))
            return writePart(session, options, dir, value(parser, "part"), has(parser, "force"));
        if (has(parser, "combine"))
            return writeField(parser, combineParts(session, options, dir), dir);
        std::mutex printing;
        options.progress = [&](int done, int total) {
            if (done == total || done % std::max(1, total / 10) == 0) {
                std::lock_guard lock(printing);
                std::fprintf(stderr, "fitted %d of %d beads\n", done, total);
            }
        };
        return writeField(parser, wfs::runField(session, options), dir);
    } catch (const UsageError& e) {
        return usageFailure(program, QString::fromStdString(e.what()));
    } catch (const std::exception& e) {
        return runFailure(program, describe(e));
    }
}

namespace {

void addBenchFieldOptions(QCommandLineParser& parser)
{
    parser.setApplicationDescription(
        QStringLiteral("Time the field pipeline on the simulated field (simulate --preset field): bead detection, every bead's fit "
                       "and the field model, one JSON object per (beads, jobs)."));
    addOptions(
        parser,
        {
            {QStringLiteral("beads"), QStringLiteral("Single beads in the field, a list (e.g. 25,50,100)."), QStringLiteral("N,..."),
             QStringLiteral("100")},
            {QStringLiteral("jobs"), QStringLiteral("Beads fitted at once, a list (default: hardware threads / threads per fit)."),
             QStringLiteral("N,...")},
            {QStringLiteral("planes"), QStringLiteral("Planes of the stack."), QStringLiteral("N"), QStringLiteral("9")},
            {QStringLiteral("crop"), QStringLiteral("Side of each bead's square, pixels."), QStringLiteral("N"), QStringLiteral("32")},
            {QStringLiteral("order"), QStringLiteral("Zernike radial order of each bead's fit."), QStringLiteral("n"), QStringLiteral("6")},
            {QStringLiteral("seed"), QStringLiteral("Random seed of the field."), QStringLiteral("S"),
             QString::number(FieldSimulationOptions{}.seed)},
        });
    parser.addPositionalArgument(QStringLiteral("field"), QStringLiteral("The word field."), QStringLiteral("field"));
}

QJsonObject benchFieldRow(const FieldRun& run, int beads, int planes, int crop, int order)
{
    int fitted = 0, ok = 0;
    double fitSeconds = 0.0;
    for (const FieldBead& bead : run.beads) {
        fitted += bead.coefficients.empty() ? 0 : 1;
        ok += bead.status == "ok" ? 1 : 0;
        fitSeconds += bead.seconds;
    }
    return {{"benchmark", "field"},
            {"beads_simulated", beads},
            {"planes", planes},
            {"crop", crop},
            {"order", order},
            {"jobs", run.jobs},
            {"beads_found", int(run.beads.size())},
            {"beads_fitted", fitted},
            {"beads_ok", ok},
            {"fit_seconds_mean_bead", fitted ? fitSeconds / fitted : 0.0},
            {"seconds", run.seconds},
            {"beads_per_second", run.seconds > 0.0 ? fitted / run.seconds : 0.0},
            {"field_model_terms", run.model ? int(run.model->terms.size()) : 0},
            {"joint_beads", run.joint ? run.joint->beads : 0},
            {"joint_iterations", run.joint ? run.joint->iterations : 0},
            {"joint_seconds", run.joint ? run.joint->seconds : 0.0},
            {"joint_cost_start", run.joint ? run.joint->startCost : 0.0},
            {"joint_cost_final", run.joint ? run.joint->finalCost : 0.0},
            {"joint_adopted", run.joint && run.joint->adopted}};
}

} // namespace

int runBenchField(const QStringList& args)
{
    QCommandLineParser parser;
    addBenchFieldOptions(parser);
    if (auto status = parseOrExit(parser, args, QStringLiteral("bench field [options]")))
        return *status;
    const QString program = args.value(0);
    try {
        const std::vector<int> beadCounts = parseIntList(value(parser, "beads"), QStringLiteral("beads"));
        const std::vector<int> jobs =
            has(parser, "jobs") ? parseIntList(value(parser, "jobs"), QStringLiteral("jobs")) : std::vector<int>{0};
        FieldSimulationOptions simulation;
        simulation.planes = parseInt(value(parser, "planes"), QStringLiteral("planes"));
        simulation.crop = parseInt(value(parser, "crop"), QStringLiteral("crop"));
        simulation.seed = std::uint64_t(parseNumber(value(parser, "seed"), QStringLiteral("seed")));
        const int order = parseInt(value(parser, "order"), QStringLiteral("order"));
        for (int beads : beadCounts) {
            simulation.beads = beads;
            // The field grows with the beads (the planted doublets, saturated and edge beads included) so that their density
            // stays that of the 100-bead field in 512 x 512 pixels.
            const int placed = beads + simulation.doublets + simulation.saturated + simulation.edge;
            const double side = 512.0 * std::sqrt(placed / (100.0 + simulation.doublets + simulation.saturated + simulation.edge));
            simulation.width = simulation.height = std::max(4 * simulation.crop, int(std::ceil(side / 2.0)) * 2);
            std::max(4 * simulation.crop, int(std::ceil(512.0 * std::sqrt(std::max(beads, 1) / 100.0) / 2.0)) * 2);
            const FieldSimulation field = simulateField(simulation);
            const Session session = simulatedFieldSession(field, order);
            for (int j : jobs) {
                FieldRunOptions options;
                options.detection.crop = simulation.crop;
                options.jobs = j;
                const FieldRun run = wfs::runField(session, options);
                std::printf("%s\n", QJsonDocument(benchFieldRow(run, beads, simulation.planes, simulation.crop, order))
                                        .toJson(QJsonDocument::Compact)
                                        .constData());
                std::fflush(stdout);
            }
        }
        return 0;
    } catch (const UsageError& e) {
        return usageFailure(program, QString::fromStdString(e.what()));
    } catch (const std::invalid_argument& e) {
        return usageFailure(program, QString::fromStdString(e.what()));
    } catch (const std::exception& e) {
        return runFailure(program, describe(e));
    }
}

} // namespace wfs::cli
