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
    const bool isLength = setting == Setting::Wavelength || setting == Setting::PixelPitch || setting == Setting::Aperture
                          || setting == Setting::DefocusLength || setting == Setting::ZStep || setting == Setting::ObjectDiameter
                          || setting == Setting::Bandwidth || setting == Setting::EmitterDepth || setting == Setting::CoverslipThickness;
    const double v = isLength ? parseLengthOption(text, label) : parseNumberOption(text, label);
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
    const std::string origin = "command line";
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
        if (m.spectralSamples < 1 || m.spectralSamples > 15)
            throw OptionError(r.label("spectral-samples") + ": must be from 1 to 15");
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

} // namespace

void applyMetadataOptions(const OptionSource& options, Dataset& data)
{
    const Reader r(options);
    DatasetMetadata& m = data.metadata;
    const std::string origin = "command line";
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
    if (r.has("pixel-scale")) {
        // A pitch (a length; a bare number is metres) or, with an angle unit, an angle.
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
    if (r.has("defocus")) {
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
            m.origin["defocus[" + std::to_string(used[k]) + "]"] = origin;
        }
    }
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
    if (r.has("hot-pixels")) {
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
        session.solver.stages.clear(); // a new order replaces a session's coarse-to-fine stages
    if (!session.dataset.metadata.wavelength && !fromSession)
        throw OptionError("the wavelength is unknown: give " + options.spell("wavelength") + " (e.g. 633nm)"
                          + ignoredNote(session.dataset.metadata, {"wavelength"}));
}

// ---- The options' help ----------------------------------------------------------------------------

std::vector<OptionHelp> metadataOptionHelp()
{
    const DatasetMetadata metadata;
    const QString fromHeaders = QStringLiteral(" (default: from the files' headers or sidecars)");
    return {
        {QStringLiteral("wavelength"), QStringLiteral("Wavelength, e.g. 633nm") + fromHeaders, QStringLiteral("length"), {}},
        {QStringLiteral("pixel-scale"),
         QStringLiteral("Pixel pitch (with --f-number or --na) or angle (arcsec, mas, rad; with --aperture)") + fromHeaders,
         QStringLiteral("value"),
         {}},
        {QStringLiteral("f-number"), QStringLiteral("Focal ratio F#: Q = lambda F# / pitch") + fromHeaders, QStringLiteral("F"), {}},
        {QStringLiteral("na"), QStringLiteral("Numerical aperture: Q = lambda / (2 NA pitch)") + fromHeaders, QStringLiteral("NA"), {}},
        {QStringLiteral("immersion"),
         QStringLiteral("Immersion refractive index (default: the headers', else %1).").arg(metadata.immersionIndex),
         QStringLiteral("n"),
         {}},
        {QStringLiteral("aperture"),
         QStringLiteral("Aperture diameter, with an angular pixel scale") + fromHeaders,
         QStringLiteral("length"),
         {}},
        {QStringLiteral("sampling"),
         QStringLiteral(
             "Sampling Q = lambda F# / pixel, given directly (default: the headers', else from the pixel scale and the optics)."),
         QStringLiteral("Q"),
         {}},
        {QStringLiteral("defocus"),
         QStringLiteral("One entry per plane that takes part: waves of W020 ('1w') or an axial length ('0.9um') (default: the headers', "
                        "sidecars' or --z-step's)."),
         QStringLiteral("list"),
         {}},
        {QStringLiteral("defocus-model"),
         QStringLiteral("paraxial or high-na, for defocus given as lengths (default: the headers', else %1).")
             .arg(QLatin1String(settingText(metadata.defocusModel))),
         QStringLiteral("model"),
         {}},
        {QStringLiteral("planes"),
         QStringLiteral("Planes that take part (0-based, in file order; default: all)."),
         QStringLiteral("list"),
         {}},
        {QStringLiteral("z-step"),
         QStringLiteral("Stacks: axial step between planes (e.g. 0.3um); plane i is at (i - focus plane) * step") + fromHeaders,
         QStringLiteral("length"),
         {}},
        {QStringLiteral("focus-plane"),
         QStringLiteral("Stacks: the plane (0-based, may be fractional) at focus, for --z-step") + fromHeaders,
         QStringLiteral("index"),
         {}},
        {QStringLiteral("data-unit"),
         QStringLiteral("photons, electrons, counts, adu or relative; chooses the objective (default: the FITS BUNIT, else counts)."),
         QStringLiteral("unit"),
         {}},
    };
}

std::vector<OptionHelp> preprocessOptionHelp()
{
    const PreprocessOptions preprocess;
    return {
        {QStringLiteral("saturation"),
         QStringLiteral("Saturation level in data units (default: the format's maximum)."),
         QStringLiteral("level"),
         {}},
        {QStringLiteral("no-saturation-mask"), QStringLiteral("Keep saturated pixels in the fit."), {}, {}},
        {QStringLiteral("no-background"), QStringLiteral("Do not subtract the border background."), {}, {}},
        {QStringLiteral("border"),
         QStringLiteral("Border width for the background, pixels (default: the image size / 16, at least 2)."),
         QStringLiteral("pixels"),
         {}},
        {QStringLiteral("clip-sigma"),
         QStringLiteral("Sigma clipping of the border statistics (default %1).").arg(preprocess.clipSigma),
         QStringLiteral("k"),
         {}},
        {QStringLiteral("centre"),
         QStringLiteral("Centre the PSF: none, peak or centroid (default %1).").arg(QLatin1String(settingText(preprocess.centre))),
         QStringLiteral("method"),
         {}},
        {QStringLiteral("centre-each-plane"), QStringLiteral("Centre every plane on its own (default: one centre for the stack)."), {}, {}},
        {QStringLiteral("crop"),
         QStringLiteral("Crop to N x N pixels around the centre (even N; default: no crop)."),
         QStringLiteral("N"),
         {}},
        {QStringLiteral("hot-pixels"),
         QStringLiteral(
             "Mask isolated hot pixels more than k noise deviations above their neighbours (default: off; k = %1 in the desktop program).")
             .arg(preprocess.hotPixelSigma),
         QStringLiteral("k"),
         {}},
        {QStringLiteral("bad-pixels"),
         QStringLiteral("Mask these pixels in every plane: column:row,... (raw image coordinates; default: none)."),
         QStringLiteral("list"),
         {}},
        {QStringLiteral("normalise"), QStringLiteral("Scale every plane to unit sum (least-squares objective)."), {}, {}},
    };
}

std::vector<OptionHelp> modelOptionHelp(const QString& gridNote, const QString& orderNote)
{
    const ModelSettings model;
    auto note = [](const QString& text) { return text.isEmpty() ? QString() : QStringLiteral("; ") + text; };
    return {
        {QStringLiteral("obscuration"),
         QStringLiteral("Central obscuration, fraction of the pupil diameter (default %1).").arg(model.obscuration),
         QStringLiteral("ratio"),
         {}},
        {QStringLiteral("spiders"),
         QStringLiteral("Number of spider vanes (default %1).").arg(model.spiderCount),
         QStringLiteral("count"),
         {}},
        {QStringLiteral("spider-width"),
         QStringLiteral("Vane width, fraction of the pupil diameter (default %1).").arg(model.spiderWidth),
         QStringLiteral("w"),
         {}},
        {QStringLiteral("grid"),
         QStringLiteral("Model grid size N (even; default: the data size%1).").arg(note(gridNote)),
         QStringLiteral("N"),
         {},
         true},
        {QStringLiteral("order"),
         QStringLiteral("Highest Zernike radial order, 1..%1 (default %2%3).")
             .arg(zernike::kMaxOrder)
             .arg(model.order)
             .arg(note(orderNote)),
         QStringLiteral("n"),
         {},
         true},
        {QStringLiteral("ordering"),
         QStringLiteral("noll or ansi (default %1).").arg(QLatin1String(settingText(model.ordering))),
         QStringLiteral("name"),
         {}},
        {QStringLiteral("normalization"),
         QStringLiteral("rms (Noll) or unit (R(1) = 1) (default %1).").arg(QLatin1String(settingText(model.normalization))),
         QStringLiteral("name"),
         {}},
        {QStringLiteral("objective"),
         QStringLiteral("poisson, least-squares or weighted (Poisson plus read noise) (default: from the data unit: poisson for photons "
                        "or electrons, least-squares for relative or normalised data, weighted for counts; a preset's own)."),
         QStringLiteral("name"),
         {},
         true},
        {QStringLiteral("read-noise"),
         QStringLiteral("Read noise in counts RMS, for --objective weighted (default: the noise of the image border)."),
         QStringLiteral("e"),
         {},
         true},
        {QStringLiteral("fit-shift"), QStringLiteral("Fit a tip/tilt per plane (drift between planes)."), {}, {}},
        {QStringLiteral("pupil-phase"),
         QStringLiteral("zernike, zonal (one value per pupil pixel) or both (Zernike terms plus a zonal remainder "
                        "orthogonal to them) (default %1).")
             .arg(QLatin1String(settingText(model.phaseModel))),
         QStringLiteral("model"),
         {}},
        {QStringLiteral("pupil-amplitude"),
         QStringLiteral("uniform, gaussian (fitted centre and width) or zonal (exp of one value per pupil pixel) "
                        "(default %1).")
             .arg(QLatin1String(settingText(model.amplitudeModel))),
         QStringLiteral("model"),
         {}},
        {QStringLiteral("regularization"),
         QStringLiteral("Smoothness weight W of the zonal terms: (W/2) x the sum of squared neighbour differences, "
                        "in units of the objective (about chi^2/2) per rad^2, or auto (a sweep from 1000 to 0.1: the discrepancy "
                        "principle) (default %1).")
             .arg(model.regularization),
         QStringLiteral("W|auto"),
         {}},
        {QStringLiteral("pixel-integration"), QStringLiteral("Model square detector pixels: the OTF times the pixel's sinc."), {}, {}},
        {QStringLiteral("object-diameter"),
         QStringLiteral("Diameter of the imaged object (a uniform sphere, e.g. a bead), e.g. 100nm; needs the "
                        "sample-plane pixel size (default: a point)."),
         QStringLiteral("length"),
         {}},
        {QStringLiteral("gain"),
         QStringLiteral("Camera gain in electrons per data unit, or auto (photon transfer: the noise power above the OTF "
                        "cut-off against the signal, plane by plane) (default %1: a count is a photon).")
             .arg(model.gain),
         QStringLiteral("e/unit"),
         {}},
        {QStringLiteral("offset"),
         QStringLiteral(
             "Camera offset (bias) in data units, removed before the Poisson objective (default %1). auto: from each plane's border by "
             "photon transfer, mean - gain (variance - read noise^2); needs the read noise (--read-noise or RDNOISE).")
             .arg(model.offset),
         QStringLiteral("units|auto"),
         {}},
        {QStringLiteral("bandwidth"),
         QStringLiteral("Full width of the source's band (flat), e.g. 30nm: the image is the sum over wavelengths, each "
                        "on its own FFT size, so they fall 2/N of the wavelength apart (default: one wavelength)."),
         QStringLiteral("length"),
         {}},
        {QStringLiteral("spectral-samples"),
         QStringLiteral("Wavelengths across --bandwidth, 1..15 (default %1; those closer than the grid's "
                        "2/N merge).")
             .arg(model.spectralSamples),
         QStringLiteral("n"),
         {}},
        {QStringLiteral("fit-defocus-scale"), QStringLiteral("Fit a scale of every plane's defocus (a z-step calibration error)."), {}, {}},
        {QStringLiteral("fit-defocus-offsets"),
         QStringLiteral("Fit a defocus offset per plane (the plane nearest focus is held; with --fit-defocus-scale "
                        "the two outermost too)."),
         {},
         {}},
        {QStringLiteral("fit-sampling"),
         QStringLiteral("Fit the sampling Q as an NA error (with an axial defocus the defocus follows the NA; "
                        "otherwise a pixel-size error): the cost profiled over the NA by whole fits in 4 % steps, "
                        "then the parabola's vertex; reported with a 1-sigma error."),
         {},
         {}},
        {QStringLiteral("model"),
         QStringLiteral("scalar or vectorial: the fields of a dipole or bead through a high-NA objective (polarisation, "
                        "Fresnel transmission, aplanatic apodisation, index mismatch, the emitter's depth, supercritical light); "
                        "needs --na and --immersion (default %1).")
             .arg(QLatin1String(imagingModelName(model.imagingModel))),
         QStringLiteral("name"),
         {}},
        {QStringLiteral("sample-index"),
         QStringLiteral("Vectorial model: refractive index of the sample around the emitter, e.g. 1.33 for water "
                        "(default: the immersion's, no mismatch)."),
         QStringLiteral("n"),
         {}},
        {QStringLiteral("emitter-depth"),
         QStringLiteral("Vectorial model: the emitter's depth below the coverslip, e.g. 2um (default 0); the planes' "
                        "z is the objective's nominal focus relative to that depth."),
         QStringLiteral("length"),
         {}},
        {QStringLiteral("fit-emitter-depth"),
         QStringLiteral("Vectorial model: fit the emitter's depth (needs --sample-index other than the immersion's)."),
         {},
         {}},
        {QStringLiteral("dipole"),
         QStringLiteral("Vectorial model: free (a bead or rotating molecule: x, y, z dipoles add incoherently), x, y, z, or "
                        "THETA,PHI in degrees from the optical axis and from +x (default free)."),
         QStringLiteral("free|x|y|z|T,P"),
         {}},
        {QStringLiteral("coverslip-index"),
         QStringLiteral("Vectorial model: the coverslip's index (default: the immersion's, no second interface)."),
         QStringLiteral("n"),
         {}},
        {QStringLiteral("coverslip-thickness"),
         QStringLiteral("Vectorial model: the coverslip's thickness (default %1um).").arg(model.coverslipThickness * 1e6),
         QStringLiteral("length"),
         {}},
        {QStringLiteral("design-coverslip-index"),
         QStringLiteral("Vectorial model: the index the objective is designed for (default: --coverslip-index)."),
         QStringLiteral("n"),
         {}},
        {QStringLiteral("design-coverslip-thickness"),
         QStringLiteral("Vectorial model: the thickness the objective is designed for (default: --coverslip-thickness)."),
         QStringLiteral("length"),
         {}},
        {QStringLiteral("z-direction"),
         QStringLiteral("Stacks: up (plane index increases along +z) or down (default up)."),
         QStringLiteral("up|down"),
         {}},
        {QStringLiteral("stages"),
         QStringLiteral("Coarse-to-fine Zernike orders, e.g. 2,4,6 (the last is the fitted order; default: one stage at --order)."),
         QStringLiteral("list"),
         {},
         true},
        {QStringLiteral("remove-defocus"), QStringLiteral("Report RMS and PV with defocus removed too."), {}, {}, true},
        {QStringLiteral("no-uncertainty"), QStringLiteral("Skip the uncertainty estimate (2 P extra gradients)."), {}, {}, true},
    };
}

std::vector<OptionHelp> solverOptionHelp(const SolverSettings& d, const QString& gtolNote, const QString& ftolNote)
{
    auto note = [](const QString& text) { return text.isEmpty() ? QString() : QStringLiteral("; ") + text; };
    // The stated defaults are the settings' own (io/Session.h), so help and behaviour cannot part.
    return {
        {QStringLiteral("backend"),
         QStringLiteral("cpu or gpu (default %1).").arg(QLatin1String(settingText(d.backend))),
         QStringLiteral("name"),
         {}},
        {QStringLiteral("gradient"),
         QStringLiteral("adjoint (exact) or fd (forward differences) (default %1).").arg(QLatin1String(settingText(d.gradient))),
         QStringLiteral("kind"),
         {}},
        {QStringLiteral("optimizer"),
         QStringLiteral("bfgs or lbfgs (default %1).").arg(QLatin1String(settingText(d.optimizer))),
         QStringLiteral("name"),
         {}},
        {QStringLiteral("precision"),
         QStringLiteral("double or float (default %1).").arg(QLatin1String(settingText(d.precision))),
         QStringLiteral("p"),
         {}},
        {QStringLiteral("threads"),
         QStringLiteral("CPU threads for FFTs and pointwise work (default %1).").arg(d.threads),
         QStringLiteral("T"),
         {}},
        {QStringLiteral("max-iterations"), QStringLiteral("Iteration limit (default %1).").arg(d.maxIterations), QStringLiteral("K"), {}},
        {QStringLiteral("gtol"),
         QStringLiteral("Stop when the gradient's max-norm is at most X (default %1%2).")
             .arg(d.gradientTolerance, 0, 'g', 6)
             .arg(note(gtolNote)),
         QStringLiteral("X"),
         {}},
        {QStringLiteral("ftol"),
         QStringLiteral("Stop when the relative cost change is below X (default %1%2).")
             .arg(d.functionTolerance, 0, 'g', 6)
             .arg(note(ftolNote)),
         QStringLiteral("X"),
         {}},
    };
}

} // namespace wfs
