#pragma once
// A run's settings given as named options with text values: wavefront-cli's flags (`--pixel-scale 5.5um`)
// and the Python module's keyword arguments (`pixel_scale="5.5um"`) are both read here, so that an option
// has one name, one parser (base/Units.h), one default and one message in every front end. The names are the
// command line's without the dashes; each front end says how it spells them in messages (OptionSource::spell).
//
//   Session session;                              // files loaded, or a session opened
//   applyRunOptions(options, session, false);     // throws OptionError
//   PreparedRun run = prepareRun(session);         // engine/Workflow.h
#include "io/Session.h"
#include "base/Units.h"
#include "settings/SettingsTable.h"
#include "settings/SettingsText.h"

#include <QString>

#include <stdexcept>
#include <string>
#include <vector>

namespace wfs {

// An option whose value does not parse or is out of range, or that the others leave undetermined; what()
// starts with the option as the front end spells it ("--order: 'x' is not an integer").
class OptionError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// Where the options come from. `name` is the command line's name without the dashes ("pixel-scale").
class OptionSource {
public:
    virtual ~OptionSource() = default;
    virtual bool has(const char* name) const = 0;
    virtual std::string value(const char* name) const = 0; // as given; a switch's is empty
    // The name as this front end writes it in messages: "--pixel-scale" or "pixel_scale".
    virtual std::string spell(const char* name) const = 0;
    // Where the values come from, as DatasetMetadata::origin records it ("command line", "batch manifest").
    virtual std::string origin() const { return "command line"; }
};

// The text parsers behind every option; `label` is the option as spelled in messages. Throw OptionError.
int parseIntOption(const QString& text, const std::string& label);                  // "1e3" is a thousand
double parseNumberOption(const QString& text, const std::string& label);            // finite
std::vector<int> parseIntListOption(const QString& text, const std::string& label); // "2,4,6"
// Lower-cased words, each one of `allowed`.
std::vector<QString> parseWordListOption(const QString& text, const std::string& label, const QStringList& allowed);
// A settings enum in the command line's words (settings/SettingsText.h: the one table), e.g. "zonal".
template <typename E>
E parseSettingOption(const QString& text, const std::string& label)
{
    QStringList allowed;
    for (const std::string& option : optionTexts<E>())
        allowed << QString::fromStdString(option);
    return *optionFromText<E>(parseWordListOption(text, label, allowed).front().toStdString());
}
// A length through core's parser: a unit suffix (nm, um, mm, cm, m), a bare number is metres.
double parseLengthOption(const QString& text, const std::string& label);
// A length (for length settings) or a number, refused with the plausible range when outside it.
double parsePlausibleOption(const QString& text, const std::string& label, Setting setting);

// One option as a front end lists it: the command line's help, the Python module's docstring.
struct OptionHelp {
    QString name;            // without dashes
    QString description;     // states its default
    QString valueName;       // empty: a switch (given or not)
    QString defaultValue;    // only where the command line fills it in when not given
    bool withPreset = false; // SettingDescription::withPreset
};
// The options of a reconstruction from files or a session, by group, as the settings table
// (settings/SettingsTable.h) describes them, with `defaults`' values and notes.
std::vector<OptionHelp> optionHelp(SettingGroup group, const SettingDefaults& defaults);
// The same with core's structs' defaults.
std::vector<OptionHelp> metadataOptionHelp();
std::vector<OptionHelp> preprocessOptionHelp();
// The model options, then stages, remove-defocus and no-uncertainty. `gridNote` and `orderNote`, when
// not empty, are added to the grid's and the order's defaults (the presets' own, on the command line).
std::vector<OptionHelp> modelOptionHelp(const QString& gridNote = {}, const QString& orderNote = {});
// backend, gradient, optimizer, precision, threads, max-iterations, gtol, ftol, with `defaults`' values;
// `gtolNote` and `ftolNote`, when not empty, are added to the stopping rules' defaults.
std::vector<OptionHelp> solverOptionHelp(const SolverSettings& defaults = {}, const QString& gtolNote = {}, const QString& ftolNote = {});

// Each applies the options given over what the settings say (files' headers, sidecars, a session), and
// leaves the rest. Throw OptionError.
void applyMetadataOptions(const OptionSource& options, Dataset& data);
void applyPreprocessOptions(const OptionSource& options, PreprocessOptions& preprocess);
void applyModelOptions(const OptionSource& options, ModelSettings& model);
// The solver options of solverOptionHelp() (ranges are checked by checkSolverSettings).
void applySolverOptions(const OptionSource& options, SolverSettings& solver);
// Those and stages, remove-defocus, no-uncertainty.
void applyReconstructSolverOptions(const OptionSource& options, SolverSettings& solver);

// Every option above applied to a session's data and settings; a new order without stages replaces a
// session's coarse-to-fine stages. Unless `fromSession`, a wavelength is required (OptionError saying
// which option gives it). Settings out of range are found later, by prepareRun (SettingsError).
void applyRunOptions(const OptionSource& options, Session& session, bool fromSession);

} // namespace wfs
