#pragma once
// Shared plumbing of the wavefront-cli sub-commands: argument parsing with the exit statuses of the
// command-line contract (bad arguments: one line on stderr, status 2), unit-suffixed numbers, JSON lines.
#include "io/SettingOptions.h"
#include "base/Units.h"

#include <QCommandLineParser>
#include <QJsonObject>
#include <QString>
#include <QStringList>

#include <optional>
#include <string>
#include <stdexcept>
#include <vector>

namespace wfs::cli {

// Thrown for a bad command-line argument; the command turns it into one stderr line and status 2. Core's
// option parsers (io/SettingOptions.h) throw it too, their messages naming the flag ("--order: ...").
using UsageError = OptionError;

// The command line's flags as core reads options: "--name" in messages.
class ParserOptions : public OptionSource {
public:
    explicit ParserOptions(const QCommandLineParser& parser)
        : m_parser(parser)
    {
    }
    bool has(const char* name) const override { return m_parser.isSet(QLatin1String(name)); }
    std::string value(const char* name) const override { return m_parser.value(QLatin1String(name)).toStdString(); }
    std::string spell(const char* name) const override { return std::string("--") + name; }

private:
    const QCommandLineParser& m_parser;
};

// Parses args (args[0] is "PROGRAM COMMAND"); adds --help and --version. Prints the help (its usage
// line "Usage: wavefront-cli COMMAND [options] ...", or "Usage: wavefront-cli " + `usage` when given)
// or the version and returns 0; returns 2 after one stderr line for an unknown option (with "did you
// mean --NAME?" for a near miss) or a missing value; returns std::nullopt when the command should go on.
std::optional<int> parseOrExit(QCommandLineParser& parser, const QStringList& args, const QString& usage = {});

// Adds options; each one with a default value states it in its help ("(default X)") unless its
// description already names its default.
void addOptions(QCommandLineParser& parser, QList<QCommandLineOption> options);
// Core's option lists (io/SettingOptions.h) as flags.
void addCoreOptions(QCommandLineParser& parser, const std::vector<OptionHelp>& options);

// The candidate nearest to `word` (edit distance with transpositions, at most 1 for short words and 2
// for longer ones, or the only candidate that starts with it); empty when none is near.
QString closestName(const QString& word, const QStringList& candidates);

int usageFailure(const QString& program, const QString& message); // prints, returns 2
int runFailure(const QString& program, const QString& message);   // prints, returns 1
// reconstruct's status when the fit finished and its outputs were written, but the model does not describe the data
// (FitResult::verdict; the reason is among the warnings on stderr and in the result JSON).
inline constexpr int kExitPoorFit = 3;
// What to do when memory runs out (std::bad_alloc's bare "std::bad_alloc" says nothing); plain text, so that it can
// be printed with no allocation.
inline constexpr const char* kOutOfMemory = "out of memory: the data or the model need more memory than this process may use; "
                                            "use a smaller --crop or --grid, fewer planes, or raise the memory limit (ulimit -v)";
// An exception's message for the user: kOutOfMemory for std::bad_alloc.
QString describe(const std::exception& e);

// Whether an option was given, and its value.
inline bool has(const QCommandLineParser& parser, const char* name)
{
    return parser.isSet(QLatin1String(name));
}
inline QString value(const QCommandLineParser& parser, const char* name)
{
    return parser.value(QLatin1String(name));
}

std::vector<int> parseIntList(const QString& text, const QString& option);
std::vector<QString> parseWordList(const QString& text, const QString& option, const QStringList& allowed);
double parseNumber(const QString& text, const QString& option);
int parseInt(const QString& text, const QString& option);
// --photons of a simulated preset: a positive number of photons per plane.
double parsePhotons(const QString& text);

// A length through core's parser (base/Units.h): a unit suffix (nm, um, mm, cm, m), a bare number is metres.
double parseLength(const QString& text, const QString& option);
// A length (for length settings) or a number, refused with the plausible range when outside it.
double parsePlausible(const QString& text, const QString& option, Setting setting);

// An output option and its path ("-" = standard output, allowed for text outputs only).
struct OutputSpec {
    std::string option; // without the dashes, e.g. "phase-out"
    bool text = true;
    std::string path;
};
// Checks outputs before any work: at most one "-", and only for text (UsageError); no file named for
// two outputs, none equal to an input (UsageError, so nothing is destroyed); then each folder exists
// and takes new files and no file is replaced without `overwrite` (io::OutputError, a failed run).
void checkOutputs(const std::vector<OutputSpec>& outputs, const std::vector<std::string>& inputs, bool overwrite);

// Prints each distinct warning once, to standard error.
void printWarnings(const QString& program, const std::vector<std::string>& warnings);

// Writes a compact JSON object and a newline to stdout, flushed (bench rows are read line by line).
void printJsonLine(const QJsonObject& object);

} // namespace wfs::cli

#include "io/Session.h"

namespace wfs::cli {

// The backend and solver options shared by `reconstruct` and `bench` (the command-line contract).
// `defaults` are the values used when an option is not given, stated in the help; `gtolNote` and
// `ftolNote`, when not empty, are added to the stopping rules' defaults (e.g. a preset's own).
void addSolverOptions(QCommandLineParser& parser, const SolverSettings& defaults = {}, const QString& gtolNote = {},
                      const QString& ftolNote = {});
// Reads those given into the settings (the rest keep their values); throws UsageError for a word or
// number that does not parse. Ranges are checked by core (engine/Workflow.h: checkSolverSettings).
void applySolverFlags(const QCommandLineParser& parser, SolverSettings& settings);

} // namespace wfs::cli
