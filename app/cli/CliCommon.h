#pragma once
// Shared plumbing of the wavefront-cli sub-commands: argument parsing with the exit-status contract of
// spec/cli.md (bad arguments: one line on stderr, status 2), unit-suffixed numbers, JSON lines.
#include <QCommandLineParser>
#include <QJsonObject>
#include <QString>
#include <QStringList>

#include <optional>
#include <stdexcept>
#include <vector>

namespace wfs::cli {

// Thrown for a bad command-line argument; the command turns it into one stderr line and status 2.
class UsageError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// Parses args; prints help and returns 0 for --help, returns 2 after one stderr line for unknown
// options, and returns std::nullopt when the command should go on.
std::optional<int> parseOrExit(QCommandLineParser& parser, const QStringList& args);

int usageFailure(const QString& program, const QString& message); // prints, returns 2
int runFailure(const QString& program, const QString& message);   // prints, returns 1

std::vector<int> parseIntList(const QString& text, const QString& option);
std::vector<QString> parseWordList(const QString& text, const QString& option, const QStringList& allowed);
double parseNumber(const QString& text, const QString& option);
int parseInt(const QString& text, const QString& option);

// A length with a unit suffix (nm, um, mm, m); a bare number is in metres.
double parseLength(const QString& text, const QString& option);
// An angle with a unit suffix (arcsec, mas, rad); a bare number is in radians.
std::optional<double> parseAngle(const QString& text);

// Writes a compact JSON object and a newline to stdout, flushed (bench rows are read line by line).
void printJsonLine(const QJsonObject& object);

} // namespace wfs::cli

#include "io/Session.h"

namespace wfs::cli {

// The backend and solver options shared by `reconstruct` and `bench` (spec/cli.md).
void addSolverOptions(QCommandLineParser& parser);
// Reads those given into the settings (the rest keep their values); throws UsageError for a word or
// number that does not parse. Ranges are checked by core (engine/Workflow.h: checkSolverSettings).
void applySolverFlags(const QCommandLineParser& parser, SolverSettings& settings);

} // namespace wfs::cli
