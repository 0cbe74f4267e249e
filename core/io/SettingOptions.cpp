#include "io/SettingOptions.h"

#include "optics/Zernike.h"

#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <stdexcept>
#include <string_view>

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

void noteOrigin(const Reader& r, SettingsBundle& settings, const char* field)
{
    settings.metadata.origin[field] = r.origin();
}

// --pixel-scale: a pitch (a length; a bare number is metres) or, with an angle unit, an angle; the other is cleared.
void applyPixelScale(const Reader& r, SettingsBundle& settings)
{
    DatasetMetadata& m = settings.metadata;
    const auto v = valueFromText(r.text("pixel-scale").toStdString());
    if (v && v->kind == ValueWithUnit::Kind::Angle) {
        const std::string error = plausibilityError(Setting::PixelAngle, v->value);
        if (!error.empty())
            throw OptionError(r.label("pixel-scale") + ": " + error);
        m.pixelAngle = v->value;
        m.pixelPitch.reset();
        noteOrigin(r, settings, "pixelAngle");
    } else {
        m.pixelPitch = r.plausible("pixel-scale", Setting::PixelPitch);
        m.pixelAngle.reset();
        noteOrigin(r, settings, "pixelPitch");
    }
}

void applySaturation(const Reader& r, SettingsBundle& settings)
{
    settings.metadata.saturationLevel = r.number("saturation");
    if (!(*settings.metadata.saturationLevel > 0.0))
        throw OptionError(r.label("saturation") + ": must be positive");
    noteOrigin(r, settings, "saturationLevel");
}

void applyDataUnit(const Reader& r, SettingsBundle& settings)
{
    QStringList units;
    for (const std::string& unit : dataUnitNames())
        units << QString::fromStdString(unit);
    settings.metadata.dataUnit = r.word("data-unit", units).toStdString();
    noteOrigin(r, settings, "dataUnit");
}

void applyBorder(const Reader& r, SettingsBundle& settings)
{
    settings.preprocess.borderWidth = r.integer("border");
    if (settings.preprocess.borderWidth < 1)
        throw OptionError(r.label("border") + ": must be at least 1 pixel");
}

void applyClipSigma(const Reader& r, SettingsBundle& settings)
{
    settings.preprocess.clipSigma = r.number("clip-sigma");
    if (!(settings.preprocess.clipSigma > 0.0))
        throw OptionError(r.label("clip-sigma") + ": must be positive");
}

void applyCrop(const Reader& r, SettingsBundle& settings)
{
    settings.preprocess.cropSize = r.integer("crop");
    if (settings.preprocess.cropSize < 2 || settings.preprocess.cropSize % 2 != 0)
        throw OptionError(r.label("crop") + ": must be an even number of pixels (at least 2)");
}

// --hot-pixels off, auto (core decides: effectiveHotPixelMask) or a threshold in noise deviations.
void applyHotPixels(const Reader& r, SettingsBundle& settings)
{
    PreprocessOptions& o = settings.preprocess;
    const QString text = r.text("hot-pixels").trimmed();
    if (text == QLatin1String("off")) {
        o.maskHotPixels = false;
    } else if (text == QLatin1String("auto")) {
        o.maskHotPixels.reset();
    } else {
        o.maskHotPixels = true;
        o.hotPixelSigma = r.number("hot-pixels");
        if (!(o.hotPixelSigma > 0.0))
            throw OptionError(r.label("hot-pixels") + ": the threshold must be positive");
    }
}

void applyRegularization(const Reader& r, SettingsBundle& settings)
{
    settings.model.regularization =
        r.text("regularization") == QLatin1String("auto") ? 0.0 : r.plausible("regularization", Setting::Regularization);
}

void applyGain(const Reader& r, SettingsBundle& settings)
{
    settings.model.gain = r.text("gain") == QLatin1String("auto") ? 0.0 : r.plausible("gain", Setting::Gain);
}

void applyOffset(const Reader& r, SettingsBundle& settings)
{
    settings.model.estimateOffset = r.text("offset") == QLatin1String("auto");
    if (!settings.model.estimateOffset)
        settings.model.offset = r.plausible("offset", Setting::CameraOffset);
}

void applyGrid(const Reader& r, SettingsBundle& settings)
{
    settings.model.grid = r.integer("grid");
    if (settings.model.grid < 1) // 0 stands for the data's size in a session; an option leaves itself out to say that
        throw OptionError(
            r.label("grid") + ": " + std::to_string(settings.model.grid)
            + " is not a grid size (an even number of samples, at least the prepared planes' size); leave it out for the data's size");
}

void applyDipole(const Reader& r, SettingsBundle& settings)
{
    const auto dipole = dipoleFromText(r.text("dipole").trimmed().toLower().toStdString());
    if (!dipole)
        throw OptionError(r.label("dipole") + ": '" + r.text("dipole").toStdString()
                          + "' is not free, x, y, z or THETA,PHI in degrees (e.g. 45,30: 45 degrees from the optical axis, 30 from +x)");
    VectorialSpec check;
    check.numericalAperture = 1.0;
    check.dipole = *dipole;
    if (const std::string error = vectorialSpecError(check); !error.empty())
        throw OptionError(r.label("dipole") + ": " + error);
    settings.model.dipole = *dipole;
}

// The options whose text has rules of its own (an "auto", a sign, an angle or a length, a pair of angles). Every
// other option of the settings table is read by its accessor's type (optionValue); a setting added to the table
// with a plain number, whole number, word or switch needs no line here.
using OwnRule = void (*)(const Reader&, SettingsBundle&);
const std::map<std::string_view, OwnRule>& ownRules()
{
    static const std::map<std::string_view, OwnRule> rules = {
        {"pixel-scale", applyPixelScale},
        {"saturation", applySaturation},
        {"data-unit", applyDataUnit},
        {"border", applyBorder},
        {"clip-sigma", applyClipSigma},
        {"crop", applyCrop},
        {"hot-pixels", applyHotPixels},
        {"regularization", applyRegularization},
        {"gain", applyGain},
        {"offset", applyOffset},
        {"grid", applyGrid},
        {"dipole", applyDipole},
    };
    return rules;
}

// An option's value by its accessor's type: a switch turns its field's default over (--no-background, --fit-shift),
// or sets an optional one (--remove-defocus); a word is one of the command line's words; a number goes through core's
// parser (base/Units.h), and outside a plausible range the table states it is refused here. Whole numbers and lists
// are held to their ranges by the settings' own checks (settings/*.h firstError), which every run applies.
SettingValue optionValue(const Reader& r, const SettingDescription& s, const SettingAccess& access)
{
    static const SettingsBundle defaults;
    if (!s.valueName) {
        const SettingValue d = access.get(defaults);
        return std::holds_alternative<bool>(d) ? SettingValue{!std::get<bool>(d)} : SettingValue{true};
    }
    switch (access.type) {
    case SettingType::Word: {
        const std::vector<std::pair<std::string, std::string>> words = listedWords(access);
        QStringList allowed;
        for (const auto& [option, word] : words)
            allowed << QString::fromStdString(option);
        return words[size_t(allowed.indexOf(r.word(s.name, allowed)))].second;
    }
    case SettingType::Number:
        return s.range.kind == SettingRange::Kind::Plausible ? r.plausible(s.name, s.range.plausible) : r.number(s.name);
    case SettingType::Integer:
        return r.integer(s.name);
    case SettingType::Integers:
        return r.integers(s.name);
    case SettingType::Boolean:
    case SettingType::Text:
        break;
    }
    throw std::logic_error(std::string("the option ") + s.name + " needs a rule of its own (io/SettingOptions.cpp ownRules)");
}

// The given options of the settings table whose field is in `part` (and, with `group`, listed in that group), in
// the table's order. A metadata option's origin is recorded under its field's name.
void applyTableOptions(const Reader& r, SettingsBundle& settings, SettingPart part, std::optional<SettingGroup> group = {})
{
    for (const SettingDescription& s : settingsTable()) {
        const SettingAccess& access = s.sessionKeys[0].access;
        if (!s.isOption || !access || access.part != part || (group && s.group != *group) || !r.has(s.name))
            continue;
        if (const auto own = ownRules().find(s.name); own != ownRules().end()) {
            own->second(r, settings);
            continue;
        }
        access.set(settings, optionValue(r, s, access));
        if (part == SettingPart::Metadata)
            settings.metadata.origin[std::string(s.field).substr(std::string(s.field).find("::") + 2)] = r.origin();
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
    SettingsBundle settings;
    settings.metadata = data.metadata;
    // Every value through core's parser and its plausible ranges (base/Units.h): "--wavelength 633" is
    // refused with "did you mean 633nm?" rather than taken as 633 m.
    applyTableOptions(r, settings, SettingPart::Metadata);
    data.metadata = settings.metadata;
    // A sampling given here beats header quantities, and header Q yields to a pitch given here.
    if (r.has("pixel-scale") && !r.has("sampling"))
        data.metadata.samplingQ.reset();
    if (r.has("planes")) {
        std::vector<int> planes = r.integers("planes");
        try {
            selectPlanes(data, planes);
        } catch (const DatasetError& e) {
            throw OptionError(r.label("planes") + ": " + e.what());
        }
    }
    if (r.has("defocus"))
        applyDefocusOption(r, data, options.origin());
}

void applyPreprocessOptions(const OptionSource& options, PreprocessOptions& o)
{
    const Reader r(options);
    SettingsBundle settings;
    settings.preprocess = o;
    applyTableOptions(r, settings, SettingPart::Preprocess);
    if (r.has("bad-pixels")) {
        settings.preprocess.badPixels.clear();
        for (const QString& pair : r.text("bad-pixels").split(QLatin1Char(','), Qt::SkipEmptyParts)) {
            const QStringList xy = pair.split(QLatin1Char(':'));
            if (xy.size() != 2)
                throw OptionError(r.label("bad-pixels") + ": expected column:row pairs, e.g. 10:20,31:7");
            settings.preprocess.badPixels.emplace_back(parseIntOption(xy[0], r.label("bad-pixels")),
                                                       parseIntOption(xy[1], r.label("bad-pixels")));
        }
    }
    // The preparation's own checks, so that a range the table states (--hot-pixel-ratio) is refused where it is given.
    if (const auto error = settings.preprocess.firstError())
        throw OptionError(options.spell(error->setting().c_str()) + ": " + error->problem());
    o = settings.preprocess;
}

void applyModelOptions(const OptionSource& options, ModelSettings& m)
{
    SettingsBundle settings;
    settings.model = m;
    applyTableOptions(Reader(options), settings, SettingPart::Model);
    m = settings.model;
}

void applySolverOptions(const OptionSource& options, SolverSettings& s)
{
    SettingsBundle settings;
    settings.solver = s;
    applyTableOptions(Reader(options), settings, SettingPart::Solver, SettingGroup::Solver);
    s = settings.solver;
}

void applyReconstructSolverOptions(const OptionSource& options, SolverSettings& s)
{
    SettingsBundle settings;
    settings.solver = s;
    applyTableOptions(Reader(options), settings, SettingPart::Solver); // with the stages and the reported figures
    s = settings.solver;
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
