// wavefront-cli reconstruct: fit Zernike coefficients to a preset's data, to the user's FITS, TIFF or PNG
// planes, or to a saved session; all file input goes through the data layer of core/io/Dataset.h.
#include "CliCommon.h"
#include "Commands.h"
#include "ReconstructOutputs.h"

#include "engine/Presets.h"
#include "engine/Report.h"
#include "engine/Workflow.h"
#include "io/Dataset.h"
#include "fit/PsfAnalysis.h"
#include "io/Exports.h"
#include "PhaseImage.h"
#include "io/OutputTransaction.h"
#include "io/Fits.h"
#include "io/Session.h"

#include <QFileInfo>
#include <QJsonDocument>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <thread>

namespace wfs::cli {

namespace {

// Messages of the data layer: errors stop the run (exit 1), the rest become the run's notes (information and
// warnings, typed until they are printed).
void takeMessages(const std::vector<DatasetMessage>& messages, std::vector<DatasetMessage>& notes)
{
    std::string errors;
    for (const DatasetMessage& m : messages) {
        if (m.level == MessageLevel::Error)
            errors += (errors.empty() ? "" : "; ") + m.text;
        else
            notes.push_back(m);
    }
    if (!errors.empty())
        throw std::runtime_error(errors);
}

} // namespace

// The metadata, preparation and model options a preset's run takes over its own settings (`withPreset`), or those it
// does not (io/SettingOptions.h, OptionHelp::withPreset): they describe files, whose data, optics and preparation a
// preset brings itself.
QStringList presetOptions(bool withPreset)
{
    QStringList names;
    for (const auto& group : {metadataOptionHelp(), preprocessOptionHelp(), modelOptionHelp()})
        for (const OptionHelp& o : group)
            if (o.withPreset == withPreset)
                names << o.name;
    return names;
}

void addReconstructOptions(QCommandLineParser& parser)
{
    // Defaults stated from core's own: the settings' structs and the presets' (engine/Presets.h).
    const PresetDefaults demo = presetDefaults("demo"), oof = presetDefaults("oof");
    parser.setApplicationDescription(
        QStringLiteral("Reconstruct the wavefront (Zernike coefficients) from PSF images by BFGS on a Fourier-optics model.\n"
                       "Input: --preset demo|oof|pupil|vectorial|air, or --input FILE [...] (FITS images, cubes and HDUs; TIFF pages;\n"
                       "PNG) with metadata, or --session FILE.json (a saved session; options given here override it).\n"
                       "Numbers take unit suffixes; a bare number is in SI base units.\n"
                       "With --preset: %1, --seed, --photons\n"
                       "and the solver options override the preset's settings; the other data, optics and model options describe\n"
                       "files and are named as ignored.\n"
                       "What you do not give (a stack's focus plane and planes, centring, hot pixels, the defocus model) is assumed\n"
                       "and printed as \"assumed: ...\" with its reason.\n"
                       "Exit status: 0 the model describes the data; 3 the fit finished and its outputs are written, but the model\n"
                       "does not describe the data (the verdict is among the warnings); 1 the run failed; 2 a usage error.")
            .arg(QStringLiteral("--") + presetOptions(true).join(QStringLiteral(", --"))));
    addOptions(
        parser,
        {
            {QStringLiteral("preset"),
             QStringLiteral("Built-in problem: demo, oof, pupil (a non-Zernike pupil fitted with zonal terms) or vectorial (an NA 1.4 "
                            "oil objective onto water, the vectorial model) (no default: give one "
                            "of --preset, --input, --session)."),
             QStringLiteral("name")},
            {QStringLiteral("input"),
             QStringLiteral("FITS, TIFF or PNG file(s) with the PSF planes (repeat the option for several files)."),
             QStringLiteral("FILE")},
            {QStringLiteral("session"), QStringLiteral("A saved session (JSON): inputs, metadata, preparation, model and solver settings."),
             QStringLiteral("FILE.json")},
        });
    // The options of file and session input are core's (io/SettingOptions.h), shared with the Python module.
    addCoreOptions(parser, metadataOptionHelp());
    addCoreOptions(parser, preprocessOptionHelp());
    std::vector<OptionHelp> model = modelOptionHelp(QStringLiteral("--preset demo %1, oof %2").arg(demo.grid).arg(oof.grid),
                                                    QStringLiteral("--preset demo %1, oof %2").arg(demo.order).arg(oof.order));
    // The presets' noise (seed and photons), listed after the stages.
    const auto stages = std::find_if(model.begin(), model.end(), [](const OptionHelp& o) { return o.name == QLatin1String("stages"); });
    model.insert(
        stages + 1,
        {{QStringLiteral("seed"), QStringLiteral("Noise seed of a preset."), QStringLiteral("S"), QString::number(PresetOptions{}.seed)},
         {QStringLiteral("photons"),
          QStringLiteral("Photons per plane of a preset's Poisson noise (default: the preset's, demo and pupil 1e6, vectorial "
                         "2e5, air 1e6; oof has none)."),
          QStringLiteral("N"), QString()}});
    addCoreOptions(parser, model);
    addReconstructOutputOptions(parser);
    parser.addPositionalArgument(QStringLiteral("files"), QStringLiteral("Input files (same as --input)."), QStringLiteral("[FILE...]"));
    addSolverOptions(
        parser, SolverSettings{},
        QStringLiteral("--preset demo %1, oof %2").arg(demo.gradientTolerance, 0, 'g', 6).arg(oof.gradientTolerance, 0, 'g', 6),
        QStringLiteral("--preset demo %1, oof %2").arg(demo.functionTolerance, 0, 'g', 6).arg(oof.functionTolerance, 0, 'g', 6));
}

// The flags a preset's run takes over its simulated data and stopping rules (a preset named on the command line, or
// a session that holds one); the others are named as ignored. Throws UsageError.
void applyPresetFlags(const QCommandLineParser& parser, Session& session, std::vector<DatasetMessage>& notes)
{
    if (has(parser, "ordering") || has(parser, "normalization"))
        throw UsageError("--ordering and --normalization apply to file input; the presets fix their conventions");
    SimulatedSource& source = *session.simulated;
    if (has(parser, "grid")) {
        source.options.grid = parseInt(value(parser, "grid"), QStringLiteral("grid"));
        if (source.options.grid < 1) // 0 would stand for the preset's own grid: leaving the option out says that
            throw UsageError("--grid: " + std::to_string(source.options.grid)
                             + " is not a grid size (an even number of samples); leave --grid out for the preset's own");
    }
    if (has(parser, "order"))
        source.options.order = parseInt(value(parser, "order"), QStringLiteral("order"));
    if (has(parser, "seed"))
        source.options.seed = std::uint64_t(parseNumber(value(parser, "seed"), QStringLiteral("seed")));
    if (has(parser, "photons"))
        source.options.photons = parsePhotons(value(parser, "photons"));
    if (has(parser, "objective") || has(parser, "read-noise")) {
        ModelSettings m;
        applyModelOptions(ParserOptions(parser), m);
        if (has(parser, "objective"))
            source.objective = m.objective;
        if (has(parser, "read-noise"))
            source.readNoise = m.readNoise;
    }
    // The same solver flags as file input, over the preset's (or the session's) stopping rules.
    applyReconstructSolverOptions(ParserOptions(parser), session.solver);
    // Given ones are named, not silently dropped.
    std::string ignored;
    for (const QString& option : presetOptions(false))
        if (option != QLatin1String("ordering") && option != QLatin1String("normalization") && parser.isSet(option))
            ignored += (ignored.empty() ? "--" : ", --") + option.toStdString();
    if (!ignored.empty())
        notes.push_back({MessageLevel::Warning,
                         {},
                         "the preset " + source.preset + " ignores " + ignored
                             + " (they apply to file input; the preset fixes its own data and optics)"});
}

// --preset NAME: the preset's run as a session (core's simulatedSession) with the flags over it. Throws UsageError.
Session presetRunSession(const QCommandLineParser& parser, std::vector<DatasetMessage>& notes)
{
    QStringList presets;
    for (const std::string& preset : presetNames())
        presets << QString::fromStdString(preset);
    const QString name = parseWordList(value(parser, "preset"), QStringLiteral("preset"), presets).front();
    Session session = simulatedSession(name.toStdString());
    applyPresetFlags(parser, session, notes);
    return session;
}

// Runs on the engine's worker thread, printing the latest snapshot about twice a second on stderr.
void runWithProgress(ReconstructionEngine& engine, const ReconstructionRequest& request, bool quiet)
{
    engine.start(request);
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
        std::fprintf(stderr, "  stage %d/%d (order %d)  iteration %4d  cost %.8g  max|g| %.3g  %.1f s\n", snap->stage + 1, snap->stageCount,
                     snap->order, snap->iteration.iteration, snap->iteration.cost, snap->iteration.gradientMaxNorm,
                     snap->iteration.elapsedSeconds);
    }
    engine.wait();
}

// The data's warnings before a refusal (they often say why: a truncated page, a keyword that is not a number),
// but not one the refusal itself repeats.
void printWarningsBefore(const QString& program, const std::vector<DatasetMessage>& notes, const std::string& error)
{
    std::vector<std::string> warnings;
    for (std::string& w : warningTexts(notes))
        if (error.find(w) == std::string::npos)
            warnings.push_back(std::move(w));
    printWarnings(program, warnings);
}

// The report on stdout (stderr when data go to stdout), with where each metadata value of `data` (file input)
// came from; the warnings on stderr, each once. The result carries the data's warnings too (prependWarnings).
void printReport(const QString& program, const std::vector<DatasetMessage>& notes, const FitResult& result, const Truth* truth,
                 const std::vector<OutputSpec>& outputs, const Dataset* data)
{
    bool dataOnStdout = false;
    for (const OutputSpec& o : outputs)
        dataOnStdout = dataOnStdout || o.path == "-";
    std::vector<std::string> infoNotes;
    for (const DatasetMessage& note : notes)
        if (note.level == MessageLevel::Info)
            infoNotes.push_back(note.text);
    std::fputs(fullReport(result, infoNotes, truth, data).c_str(), dataOnStdout ? stderr : stdout);
    printWarnings(program, result.warnings);
}

// The files loaded (or the session opened) with `limits`, the flags applied over what they say. Throws
// UsageError or std::runtime_error.
Session loadRunSession(const QCommandLineParser& parser, const std::vector<OutputSpec>& outputs, const ReadLimits& limits,
                       std::vector<DatasetMessage>& notes)
{
    Session session;
    const bool fromSession = has(parser, "session");
    if (fromSession) {
        OpenedSession opened = openSession(value(parser, "session").toStdString(), limits);
        session = std::move(opened.session);
        markSessionOrigins(session.dataset.metadata, value(parser, "session").toStdString(), opened.sessionValues);
        takeMessages(opened.messages, notes);
        if (session.simulated) { // a preset's run: no files, the preset's flags
            applyPresetFlags(parser, session, notes);
            return session;
        }
        std::vector<std::string> inputs;
        for (const DatasetFile& f : session.dataset.files) {
            inputs.push_back(f.path);
            for (std::string& metadata : metadataFilesBeside(f.path))
                inputs.push_back(std::move(metadata));
        }
        checkOutputs(outputs, inputs, has(parser, "force")); // the session's own inputs are known only now
    } else {
        std::vector<std::string> paths;
        for (const QString& input : parser.values(QStringLiteral("input")) + parser.positionalArguments())
            paths.push_back(input.toStdString());
        takeMessages(addFiles(session.dataset, paths, limits), notes);
        if (!has(parser, "planes"))
            requireWholeFiles(session.dataset, "--planes, e.g. --planes 0");
    }
    applyRunOptions(ParserOptions(parser), session, fromSession);
    return session;
}

// What the command line (or the session) left undetermined: a usage error for flags, the session's content otherwise.
template <typename Work>
auto settingsChecked(const QCommandLineParser& parser, Work work)
{
    try {
        return work();
    } catch (const DatasetError& e) {
        if (has(parser, "session"))
            throw std::runtime_error(value(parser, "session").toStdString() + ": " + e.what());
        throw UsageError(e.what());
    }
}

// A session (files, a saved session or a preset's) through core's workflow (prepareRun): the run's request, export
// context and, for simulated data, the truth. Returns the settings as --save-session keeps them.
Session prepareSessionRun(const QCommandLineParser& parser, Session session, ReconstructionRequest& request, std::optional<Truth>& truth,
                          ExportContext& context, std::vector<DatasetMessage>& notes)
{
    // The run gets the data (moved, not copied: a large image is held once) and a copy of the settings.
    Dataset data = std::move(session.dataset);
    session.dataset = {};
    Session settings = session;
    session.dataset = std::move(data);
    PreparedRun run = settingsChecked(parser, [&] {
        try {
            return prepareRun(std::move(session));
        } catch (const std::invalid_argument& e) { // a simulated session's preset, grid or order
            if (!settings.simulated)
                throw;
            if (has(parser, "session"))
                throw std::runtime_error(value(parser, "session").toStdString() + ": " + e.what());
            throw UsageError(e.what()); // every preset input is a command-line argument
        }
    });
    takeMessages(run.messages, notes);
    if (run.truth) {
        truth = std::move(run.truth);
        notes.push_back({MessageLevel::Info, {}, "simulated data: " + run.noiseDescription});
    }
    settings.dataset = std::move(run.dataset);
    request = std::move(run.request);
    context = std::move(run.context);
    settings.model.order = request.spec.basis.maxOrder; // the stages' last, as a saved session says
    return settings;
}

// File or session input: loaded, the flags applied over what the files or the session say, then
// through core's workflow. The settings are checked on the files' headers before any pixel is read
// (issue 28 item 9): a missing wavelength or z step is said at once, not after reading a large stack.
// A session holding a preset's run has no files: it is run as --preset is. Throws UsageError for what the flags
// leave undetermined.
Session prepareFileRun(const QCommandLineParser& parser, const std::vector<OutputSpec>& outputs, ReconstructionRequest& request,
                       std::optional<Truth>& truth, ExportContext& context, std::vector<DatasetMessage>& notes)
{
    {
        ReadLimits headers;
        headers.headersOnly = true;
        std::optional<Session> described;
        try {
            described = loadRunSession(parser, outputs, headers, notes);
        } catch (const UsageError&) {
            // --defocus counts the planes that take part, and a plane without signal stops taking part only once its
            // pixels are read: the full read below decides (and repeats any other refusal of the flags).
            if (!has(parser, "defocus"))
                throw;
        }
        if (described && described->simulated)
            return prepareSessionRun(parser, std::move(*described), request, truth, context, notes);
        if (described)
            settingsChecked(parser, [&] { checkSettingsBeforePixels(*described); });
        notes.clear(); // said again by the full read (kept until here: a refusal shows the warnings behind it)
    }
    Session session = loadRunSession(parser, outputs, {}, notes);
    for (const char* presetOnly : {"seed", "photons"})
        if (has(parser, presetOnly))
            notes.push_back({MessageLevel::Warning,
                             {},
                             std::string("--") + presetOnly + " applies to the presets' simulated noise; file input ignores it"});
    return prepareSessionRun(parser, std::move(session), request, truth, context, notes);
}

// Every output is checked before any input is read or any fitting done (issue 12, items 7, 8). The images'
// sidecars and acquisition logs are inputs too: no output may overwrite them. Returns the failure's exit status.
std::optional<int> checkOutputsFirst(const QString& program, const QCommandLineParser& parser, const std::vector<OutputSpec>& outputs)
{
    try {
        std::vector<std::string> inputs;
        for (const QString& input :
             parser.values(QStringLiteral("input")) + parser.positionalArguments() + parser.values(QStringLiteral("session"))) {
            inputs.push_back(input.toStdString());
            for (std::string& metadata : metadataFilesBeside(input.toStdString()))
                inputs.push_back(std::move(metadata));
        }
        checkOutputs(outputs, inputs, has(parser, "force"));
        psfStackRange(parser); // its flags' syntax, before any fitting
    } catch (const UsageError& e) {
        return usageFailure(program, QString::fromStdString(e.what()));
    } catch (const std::exception& e) {
        return runFailure(program, describe(e));
    }
    return std::nullopt;
}

// The run's request from the one input given (a preset, files or a session). Returns the failure's exit status.
std::optional<int> prepareInput(const QString& program, const QCommandLineParser& parser, const std::vector<OutputSpec>& outputs,
                                ReconstructionRequest& request, std::optional<Truth>& truth, std::optional<Session>& session,
                                ExportContext& context, std::vector<DatasetMessage>& notes)
{
    try {
        const bool fromPreset = has(parser, "preset");
        const bool fromFiles = has(parser, "input") || !parser.positionalArguments().isEmpty();
        const bool fromSession = has(parser, "session");
        if (int(fromPreset) + int(fromFiles) + int(fromSession) != 1)
            throw UsageError("give exactly one input: --preset demo|oof|pupil|vectorial, --input FILE or --session FILE.json");
        if (fromPreset)
            session = prepareSessionRun(parser, presetRunSession(parser, notes), request, truth, context, notes);
        else
            session = prepareFileRun(parser, outputs, request, truth, context, notes);
    } catch (const UsageError& e) {
        printWarningsBefore(program, notes, e.what());
        return usageFailure(program, QString::fromStdString(e.what()));
    } catch (const SettingsError& e) {
        printWarningsBefore(program, notes, e.what());
        // A flag's value is a usage error (exit 2); a session's own setting is the session's content (exit 1).
        if (has(parser, e.setting().c_str()) || !has(parser, "session"))
            return usageFailure(program, QStringLiteral("--") + QString::fromStdString(e.what()));
        return runFailure(program, value(parser, "session") + QStringLiteral(": ") + QString::fromStdString(e.what()));
    } catch (const std::exception& e) {
        printWarningsBefore(program, notes, e.what());
        return runFailure(program, describe(e));
    }
    return std::nullopt;
}

int runReconstruct(const QStringList& args)
{
    QCommandLineParser parser;
    addReconstructOptions(parser);
    if (auto status = parseOrExit(parser, args))
        return *status;
    const QString program = args.value(0);

    ReconstructionRequest request;
    std::vector<DatasetMessage> notes;
    std::optional<Truth> truth;
    std::optional<Session> session; // the run's settings and data (a preset's: its simulated source, no files)
    ExportContext context;
    const std::vector<OutputSpec> outputs = requestedOutputs(parser);
    if (const std::optional<int> status = checkOutputsFirst(program, parser, outputs))
        return *status;
    if (const std::optional<int> status = prepareInput(program, parser, outputs, request, truth, session, context, notes))
        return *status;
    if (has(parser, "psf-stack-out")) { // a stack that cannot be held is refused before the fit, not after it
        try {
            requirePsfStackMemoryFor(parser, request.spec, session);
        } catch (const UsageError& e) {
            return usageFailure(program, QString::fromStdString(e.what()));
        }
    }

    PhaseUnit fitsUnit = PhaseUnit::Radians, pngUnit = PhaseUnit::Waves;
    try {
        if (has(parser, "phase-unit"))
            fitsUnit = pngUnit = parseSettingOption<PhaseUnit>(value(parser, "phase-unit"), "--phase-unit");
    } catch (const UsageError& e) {
        return usageFailure(program, QString::fromStdString(e.what()));
    }
    request.analysis.psfAnalysis = has(parser, "psf-analysis") || has(parser, "psf-out");
    ReconstructionEngine engine;
    runWithProgress(engine, request, has(parser, "quiet"));
    if (!engine.error().empty()) {
        printWarningsBefore(program, notes, engine.error());
        return runFailure(program, QString::fromStdString(engine.error()));
    }
    FitResult result = *engine.result();
    prependWarnings(result, warningTexts(notes)); // the result JSON's "warnings" hold the data's too

    printReport(program, notes, result, truth ? &*truth : nullptr, outputs, session && !session->simulated ? &session->dataset : nullptr);
    try {
        const std::optional<PsfStack> stack =
            needsPsfStack(parser) ? std::optional(psfStackFor(parser, request.spec, result, session)) : std::nullopt;
        writeOutputs(parser, outputs, {result, context, session ? &*session : nullptr, fitsUnit, pngUnit, stack ? &*stack : nullptr});
    } catch (const std::exception& e) {
        return runFailure(program, describe(e));
    }
    if (result.solver.termination == Termination::Failed)
        return runFailure(program, QString::fromStdString("the fit failed: " + result.solver.message));
    // Finished and written, but the model does not describe the data (the verdict is in the report's warnings and the
    // JSON): a status of its own, so that a script does not take the numbers as a success.
    if (!result.verdict.describesData)
        return kExitPoorFit;
    return 0;
}

} // namespace wfs::cli
