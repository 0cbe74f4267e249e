#include "io/SettingOptions.h"

#include "optics/Zernike.h"

#include <cmath>
#include <limits>

namespace wfs {

int parseIntOption(const QString& text, const std::string& label)
{
    bool ok = false;
    const int value = text.trimmed().toInt(&ok);
    if (ok)
        return value;
    bool wide = false;
    text.trimmed().toLongLong(&wide);
    bool real = false;
    const double approx = text.trimmed().toDouble(&real);
    // A whole number written with an exponent (1e3) is that number.
    if (real && std::isfinite(approx) && approx == std::floor(approx) && approx >= std::numeric_limits<int>::min()
        && approx <= std::numeric_limits<int>::max())
        return int(approx);
    if (wide || (real && std::isfinite(approx) && approx == std::floor(approx)))
        throw OptionError(label + ": " + text.trimmed().toStdString() + " is out of range (at most "
                          + std::to_string(std::numeric_limits<int>::max()) + ")");
    throw OptionError(label + ": '" + text.toStdString() + "' is not an integer");
}

double parseNumberOption(const QString& text, const std::string& label)
{
    bool ok = false;
    const double value = text.trimmed().toDouble(&ok);
    if (!ok || !std::isfinite(value))
        throw OptionError(label + ": '" + text.toStdString() + "' is not a number");
    return value;
}

std::vector<int> parseIntListOption(const QString& text, const std::string& label)
{
    std::vector<int> values;
    for (const QString& part : text.split(QLatin1Char(','), Qt::SkipEmptyParts))
        values.push_back(parseIntOption(part, label));
    if (values.empty())
        throw OptionError(label + ": expected a comma-separated list of integers");
    return values;
}

std::vector<QString> parseWordListOption(const QString& text, const std::string& label, const QStringList& allowed)
{
    std::vector<QString> values;
    for (const QString& part : text.split(QLatin1Char(','), Qt::SkipEmptyParts)) {
        const QString word = part.trimmed().toLower();
        if (!allowed.contains(word))
            throw OptionError(label + ": '" + word.toStdString() + "' is not one of " + allowed.join(QLatin1Char('|')).toStdString());
        values.push_back(word);
    }
    if (values.empty())
        throw OptionError(label + ": expected one of " + allowed.join(QLatin1Char('|')).toStdString());
    return values;
}

double parseLengthOption(const QString& text, const std::string& label)
{
    // Core's one parser (base/Units.h): a bare number is metres.
    const auto v = valueFromText(text.toStdString());
    if (!v)
        throw OptionError(label + ": '" + text.toStdString() + "' is not a length (e.g. 633nm, 5.5um, 2.4m)");
    if (v->kind != ValueWithUnit::Kind::Length && v->kind != ValueWithUnit::Kind::Bare)
        throw OptionError(label + ": '" + text.toStdString() + "' is not a length; use nm, um, mm, cm or m");
    return v->value;
}

double parsePlausibleOption(const QString& text, const std::string& label, Setting setting)
{
    const double v = isLengthSetting(setting) ? parseLengthOption(text, label) : parseNumberOption(text, label);
    const std::string error = plausibilityError(setting, v);
    if (!error.empty())
        throw OptionError(label + ": " + error);
    return v;
}

namespace {

// The options of one front end with the parsers above, each message naming the option as it is spelled there.
class Reader {
public:
    explicit Reader(const OptionSource& source)
        : m_source(source)
    {
    }
    bool has(const char* name) const { return m_source.has(name); }
    QString text(const char* name) const { return QString::fromStdString(m_source.value(name)); }
    std::string label(const char* name) const { return m_source.spell(name); }
    std::string origin() const { return m_source.origin(); }
    int integer(const char* name) const { return parseIntOption(text(name), label(name)); }
    double number(const char* name) const { return parseNumberOption(text(name), label(name)); }
    std::vector<int> integers(const char* name) const { return parseIntListOption(text(name), label(name)); }
    QString word(const char* name, const QStringList& allowed) const
    {
        return parseWordListOption(text(name), label(name), allowed).front();
    }
    double plausible(const char* name, Setting setting) const { return parsePlausibleOption(text(name), label(name), setting); }
    // A settings enum in the command line's words (settings/SettingsText.h).
    template <typename E>
    E choice(const char* name) const
    {
        return parseSettingOption<E>(text(name), label(name));
    }

private:
    const OptionSource& m_source;
};

// Metadata, preparation, model and solver options are applied only when given, so that they override
// what the files' headers, sidecars or a session say (the command-line contract).

PlaneDefocus parseDefocusEntry(const QString& text, const std::string& label)
{
    // Core's rule (base/Units.h): waves need "w", lengths a unit; a bare non-zero number is ambiguous.
    const auto d = defocusFromText(text.trimmed().toStdString());
    if (!d)
        throw OptionError(label + ": '" + text.toStdString()
                          + "' is neither waves of W020 (e.g. 1w) nor a length with its unit (e.g. 0.9um); "
                            "a bare number other than 0 is ambiguous");
    const std::string error =
        plausibilityError(d->kind == PlaneDefocus::Kind::Waves ? Setting::DefocusWaves : Setting::DefocusLength, d->value);
    if (!error.empty())
        throw OptionError(label + ": " + error);
    return *d;
}

// Where the planes of a stack are along z and how their defocus becomes phase.
void applyStackOptions(const Reader& r, DatasetMetadata& m)
{
    const std::string origin = r.origin();
    if (r.has("z-step")) {
        m.zStep = r.plausible("z-step", Setting::ZStep);
        m.origin["zStep"] = origin;
    }
    if (r.has("focus-plane")) {
        m.focusPlane = r.number("focus-plane");
        m.origin["focusPlane"] = origin;
    }
    if (r.has("z-direction")) {
        m.zIndexDown = r.word("z-direction", {QStringLiteral("up"), QStringLiteral("down")}) == QLatin1String("down");
        m.origin["zIndexDown"] = origin;
    }
    if (r.has("defocus-model")) {
        m.defocusModel = r.choice<DefocusModel>("defocus-model");
        m.origin["defocusModel"] = origin;
    }
}

// The pupil function, the detector and source, the camera, the defocus parameters.
void applyPupilFunctionOptions(const Reader& r, ModelSettings& m)
{
    if (r.has("pupil-phase"))
        m.phaseModel = r.choice<PupilPhaseModel>("pupil-phase");
    if (r.has("pupil-amplitude"))
        m.amplitudeModel = r.choice<PupilAmplitudeModel>("pupil-amplitude");
    if (r.has("regularization"))
        m.regularization = r.text("regularization") == QLatin1String("auto") ? 0.0 : r.plausible("regularization", Setting::Regularization);
    if (r.has("pixel-integration"))
        m.pixelIntegration = true;
    if (r.has("object-diameter"))
        m.objectDiameter = r.plausible("object-diameter", Setting::ObjectDiameter);
    if (r.has("gain"))
        m.gain = r.text("gain") == QLatin1String("auto") ? 0.0 : r.plausible("gain", Setting::Gain);
    if (r.has("offset")) {
        m.estimateOffset = r.text("offset") == QLatin1String("auto");
        if (!m.estimateOffset)
            m.offset = r.plausible("offset", Setting::CameraOffset);
    }
    if (r.has("bandwidth"))
        m.bandwidth = r.plausible("bandwidth", Setting::Bandwidth);
    if (r.has("spectral-samples")) {
        m.spectralSamples = r.integer("spectral-samples");
        if (m.spectralSamples < 1 || m.spectralSamples > kMaxSpectralSamples)
            throw OptionError(r.label("spectral-samples") + ": must be from 1 to " + std::to_string(kMaxSpectralSamples));
    }
    if (r.has("fit-defocus-scale"))
        m.fitDefocusScale = true;
    if (r.has("fit-defocus-offsets"))
        m.fitDefocusOffsets = true;
    if (r.has("fit-sampling"))
        m.fitSampling = true;
}

// The imaging model (ModelSettings' block of the same name): scalar or vectorial, the sample, coverslip, depth and dipole.
void applyImagingModelOptions(const Reader& r, ModelSettings& m)
{
    if (r.has("model"))
        m.imagingModel = r.choice<ImagingModel>("model");
    // The ranges are core's (base/Units.h), the same ModelSettings::imagingModelError and the desktop program check.
    const auto set = [&](const char* name, Setting setting, double& field) {
        if (r.has(name))
            field = r.plausible(name, setting);
    };
    set("sample-index", Setting::SampleIndex, m.sampleIndex);
    set("coverslip-index", Setting::CoverslipIndex, m.coverslipIndex);
    set("design-coverslip-index", Setting::CoverslipIndex, m.designCoverslipIndex);
    set("emitter-depth", Setting::EmitterDepth, m.emitterDepth);
    set("coverslip-thickness", Setting::CoverslipThickness, m.coverslipThickness);
    set("design-coverslip-thickness", Setting::CoverslipThickness, m.designCoverslipThickness);
    if (r.has("fit-emitter-depth"))
        m.fitEmitterDepth = true;
    if (r.has("dipole")) {
        const auto dipole = dipoleFromText(r.text("dipole").trimmed().toLower().toStdString());
        if (!dipole)
            throw OptionError(
                r.label("dipole") + ": '" + r.text("dipole").toStdString()
                + "' is not free, x, y, z or THETA,PHI in degrees (e.g. 45,30: 45 degrees from the optical axis, 30 from +x)");
        VectorialSpec check;
        check.numericalAperture = 1.0;
        check.dipole = *dipole;
        if (const std::string error = vectorialSpecError(check); !error.empty())
            throw OptionError(r.label("dipole") + ": " + error);
        m.dipole = *dipole;
    }
}

// --pixel-scale: a pitch (a length; a bare number is metres) or, with an angle unit, an angle; the other is cleared.
void applyPixelScaleOption(const Reader& r, const OptionSource& options, DatasetMetadata& m, const std::string& origin)
{
    const auto v = valueFromText(options.value("pixel-scale"));
    if (v && v->kind == ValueWithUnit::Kind::Angle) {
        const std::string error = plausibilityError(Setting::PixelAngle, v->value);
        if (!error.empty())
            throw OptionError(r.label("pixel-scale") + ": " + error);
        m.pixelAngle = v->value;
        m.pixelPitch.reset();
        m.origin["pixelAngle"] = origin;
    } else {
        m.pixelPitch = r.plausible("pixel-scale", Setting::PixelPitch);
        m.pixelAngle.reset();
        m.origin["pixelPitch"] = origin;
    }
}

// --defocus: one entry per plane taking part, in their order.
void applyDefocusOption(const Reader& r, Dataset& data, const std::string& origin)
{
    std::vector<PlaneDefocus> entries;
    for (const QString& part : r.text("defocus").split(QLatin1Char(','), Qt::KeepEmptyParts))
        entries.push_back(parseDefocusEntry(part, r.label("defocus")));
    const std::vector<int> used = usedPlanes(data);
    if (entries.size() != used.size()) {
        // Say where the planes went: a truncated file's lost pages, planes of another size or without signal.
        std::string loaded = " (" + std::to_string(data.planes.size()) + " plane(s) read from the files";
        if (data.planes.size() > used.size())
            loaded += ", " + std::to_string(data.planes.size() - used.size()) + " of them not taking part";
        for (const DatasetFile& f : data.files)
            if (!f.damage.empty())
                loaded += "; " + f.damage;
        throw OptionError(r.label("defocus") + " has " + std::to_string(entries.size()) + " entries but " + std::to_string(used.size())
                          + " planes take part" + loaded + ")");
    }
    for (size_t k = 0; k < used.size(); ++k) {
        data.planes[size_t(used[k])].defocus = entries[k];
        data.metadata.origin["defocus[" + std::to_string(used[k]) + "]"] = origin;
    }
}

} // namespace

void applyMetadataOptions(const OptionSource& options, Dataset& data)
{
    const Reader r(options);
    DatasetMetadata& m = data.metadata;
    const std::string origin = options.origin();
    // Every value through core's parser and its plausible ranges (base/Units.h): "--wavelength 633" is
    // refused with "did you mean 633nm?" rather than taken as 633 m.
    auto set = [&](const char* name, Setting setting, std::optional<double>& field, const char* key) {
        if (!r.has(name))
            return;
        field = r.plausible(name, setting);
        m.origin[key] = origin;
    };
    set("wavelength", Setting::Wavelength, m.wavelength, "wavelength");
    set("sampling", Setting::SamplingQ, m.samplingQ, "samplingQ");
    set("f-number", Setting::FNumber, m.fNumber, "fNumber");
    set("na", Setting::NumericalAperture, m.numericalAperture, "numericalAperture");
    if (r.has("immersion")) {
        m.immersionIndex = r.plausible("immersion", Setting::ImmersionIndex);
        m.origin["immersionIndex"] = origin;
    }
    set("aperture", Setting::Aperture, m.aperture, "aperture");
    if (r.has("pixel-scale"))
        applyPixelScaleOption(r, options, m, origin);
    // A sampling given here beats header quantities, and header Q yields to a pitch given here.
    if (r.has("pixel-scale") && !r.has("sampling"))
        m.samplingQ.reset();
    applyStackOptions(r, m);
    if (r.has("saturation")) {
        m.saturationLevel = r.number("saturation");
        if (!(*m.saturationLevel > 0.0))
            throw OptionError(r.label("saturation") + ": must be positive");
        m.origin["saturationLevel"] = origin;
    }
    if (r.has("data-unit")) {
        QStringList units;
        for (const std::string& unit : dataUnitNames())
            units << QString::fromStdString(unit);
        m.dataUnit = r.word("data-unit", units).toStdString();
        m.origin["dataUnit"] = origin;
    }
    if (r.has("planes")) {
        std::vector<int> planes = r.integers("planes");
        try {
            selectPlanes(data, planes);
        } catch (const DatasetError& e) {
            throw OptionError(r.label("planes") + ": " + e.what());
        }
    }
    if (r.has("defocus"))
        applyDefocusOption(r, data, origin);
}

void applyPreprocessOptions(const OptionSource& options, PreprocessOptions& o)
{
    const Reader r(options);
    if (r.has("no-background"))
        o.subtractBackground = false;
    if (r.has("border")) {
        o.borderWidth = r.integer("border");
        if (o.borderWidth < 1)
            throw OptionError(r.label("border") + ": must be at least 1 pixel");
    }
    if (r.has("clip-sigma")) {
        o.clipSigma = r.number("clip-sigma");
        if (!(o.clipSigma > 0.0))
            throw OptionError(r.label("clip-sigma") + ": must be positive");
    }
    if (r.has("centre"))
        o.centre = r.choice<CentreMethod>("centre");
    if (r.has("centre-each-plane"))
        o.centreEachPlane = true;
    if (r.has("crop")) {
        o.cropSize = r.integer("crop");
        if (o.cropSize < 2 || o.cropSize % 2 != 0)
            throw OptionError(r.label("crop") + ": must be an even number of pixels (at least 2)");
    }
    if (r.has("no-saturation-mask"))
        o.maskSaturated = false;
    if (r.has("hot-pixels") && r.text("hot-pixels").trimmed() == QLatin1String("off")) {
        o.maskHotPixels = false;
    } else if (r.has("hot-pixels") && r.text("hot-pixels").trimmed() == QLatin1String("auto")) {
        o.maskHotPixels.reset(); // core decides (effectiveHotPixelMask)
    } else if (r.has("hot-pixels")) {
        o.maskHotPixels = true;
        o.hotPixelSigma = r.number("hot-pixels");
        if (!(o.hotPixelSigma > 0.0))
            throw OptionError(r.label("hot-pixels") + ": the threshold must be positive");
    }
    if (r.has("bad-pixels")) {
        o.badPixels.clear();
        for (const QString& pair : r.text("bad-pixels").split(QLatin1Char(','), Qt::SkipEmptyParts)) {
            const QStringList xy = pair.split(QLatin1Char(':'));
            if (xy.size() != 2)
                throw OptionError(r.label("bad-pixels") + ": expected column:row pairs, e.g. 10:20,31:7");
            o.badPixels.emplace_back(parseIntOption(xy[0], r.label("bad-pixels")), parseIntOption(xy[1], r.label("bad-pixels")));
        }
    }
    if (r.has("normalise"))
        o.normalise = true;
}

void applyModelOptions(const OptionSource& options, ModelSettings& m)
{
    const Reader r(options);
    if (r.has("order"))
        m.order = r.integer("order");
    if (r.has("ordering"))
        m.ordering = r.choice<ZernikeOrdering>("ordering");
    if (r.has("normalization"))
        m.normalization = r.choice<ZernikeNormalization>("normalization");
    if (r.has("objective"))
        m.objective = r.choice<ObjectiveKind>("objective");
    if (r.has("read-noise")) // negative is refused, not silently replaced by the border noise
        m.readNoise = r.plausible("read-noise", Setting::ReadNoise);
    if (r.has("grid")) {
        m.grid = r.integer("grid");
        if (m.grid < 1) // 0 stands for the data's size in a session; an option leaves itself out to say that
            throw OptionError(
                r.label("grid") + ": " + std::to_string(m.grid)
                + " is not a grid size (an even number of samples, at least the prepared planes' size); leave it out for the data's size");
    }
    if (r.has("obscuration"))
        m.obscuration = r.number("obscuration");
    if (r.has("spiders"))
        m.spiderCount = r.integer("spiders");
    if (r.has("spider-width"))
        m.spiderWidth = r.number("spider-width");
    if (r.has("fit-shift"))
        m.fitShift = true;
    applyPupilFunctionOptions(r, m);
    applyImagingModelOptions(r, m);
}

void applySolverOptions(const OptionSource& options, SolverSettings& s)
{
    const Reader r(options);
    if (r.has("backend"))
        s.backend = r.choice<BackendKind>("backend");
    if (r.has("gradient"))
        s.gradient = r.choice<GradientKind>("gradient");
    if (r.has("optimizer"))
        s.optimizer = r.choice<OptimizerKind>("optimizer");
    if (r.has("precision"))
        s.precision = r.choice<Precision>("precision");
    if (r.has("threads"))
        s.threads = r.integer("threads");
    if (r.has("max-iterations"))
        s.maxIterations = r.integer("max-iterations");
    if (r.has("gtol"))
        s.gradientTolerance = r.number("gtol");
    if (r.has("ftol"))
        s.functionTolerance = r.number("ftol");
}

void applyReconstructSolverOptions(const OptionSource& options, SolverSettings& s)
{
    const Reader r(options);
    applySolverOptions(options, s);
    if (r.has("stages"))
        s.stages = r.integers("stages");
    if (r.has("remove-defocus"))
        s.removeDefocus = true;
    if (r.has("no-uncertainty"))
        s.computeUncertainty = false;
}

void applyRunOptions(const OptionSource& options, Session& session, bool fromSession)
{
    applyMetadataOptions(options, session.dataset);
    applyPreprocessOptions(options, session.dataset.preprocess);
    applyModelOptions(options, session.model);
    applyReconstructSolverOptions(options, session.solver);
    if (options.has("order") && !options.has("stages"))
        session.solver.stages.clear();          // a new order replaces a session's coarse-to-fine stages
    settleOrder(session.model, session.solver); // --stages 2,4,6 fits order 6, whatever --order says
    if (!session.dataset.metadata.wavelength && !fromSession)
        throw OptionError("the wavelength is unknown: give " + options.spell("wavelength") + " (e.g. 633nm)"
                          + ignoredNote(session.dataset.metadata, {"wavelength"}));
}

// ---- The options' help: the settings table's (settings/SettingsTable.h) ----------------------------

std::vector<OptionHelp> optionHelp(SettingGroup group, const SettingDefaults& defaults)
{
    std::vector<OptionHelp> list;
    for (const SettingDescription& s : settingsTable())
        if (s.isOption && s.group == group)
            list.push_back({QString::fromLatin1(s.name),
                            settingHelp(s, defaults),
                            s.valueName ? QString::fromLatin1(s.valueName) : QString(),
                            {},
                            s.withPreset});
    return list;
}

std::vector<OptionHelp> metadataOptionHelp()
{
    return optionHelp(SettingGroup::Metadata, {});
}

std::vector<OptionHelp> preprocessOptionHelp()
{
    return optionHelp(SettingGroup::Preparation, {});
}

std::vector<OptionHelp> modelOptionHelp(const QString& gridNote, const QString& orderNote)
{
    SettingDefaults defaults;
    defaults.notes = {{"grid", gridNote}, {"order", orderNote}};
    return optionHelp(SettingGroup::Model, defaults);
}

std::vector<OptionHelp> solverOptionHelp(const SolverSettings& solver, const QString& gtolNote, const QString& ftolNote)
{
    SettingDefaults defaults;
    defaults.solver = solver; // the stated defaults are the settings' own, so help and behaviour cannot part
    defaults.notes = {{"gtol", gtolNote}, {"ftol", ftolNote}};
    return optionHelp(SettingGroup::Solver, defaults);
}

} // namespace wfs
