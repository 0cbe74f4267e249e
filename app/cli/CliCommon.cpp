#include "CliCommon.h"

#include "io/OutputTransaction.h"

#include <QJsonDocument>
#include <QRegularExpression>

#include <algorithm>
#include <cmath>
#include <limits>
#include <new>
#include <cstdio>

namespace wfs::cli {

namespace {

// The long option names the help lists (hidden options are not suggested).
QStringList helpOptionNames(const QCommandLineParser& parser)
{
    QStringList names;
    static const QRegularExpression option(QStringLiteral("(?:^|[\\s,])--([A-Za-z0-9][A-Za-z0-9-]*)"));
    for (const QString& line : parser.helpText().split(QLatin1Char('\n'))) {
        if (!line.startsWith(QLatin1String("  -")))
            continue;
        const auto match = option.match(line);
        if (match.hasMatch() && !names.contains(match.captured(1)))
            names << match.captured(1);
    }
    return names;
}

// Optimal string alignment distance (Levenshtein plus adjacent transpositions).
int editDistance(const QString& a, const QString& b)
{
    const int n = int(a.size()), m = int(b.size());
    std::vector<std::vector<int>> d(size_t(n + 1), std::vector<int>(size_t(m + 1)));
    for (int i = 0; i <= n; ++i)
        d[size_t(i)][0] = i;
    for (int j = 0; j <= m; ++j)
        d[0][size_t(j)] = j;
    for (int i = 1; i <= n; ++i)
        for (int j = 1; j <= m; ++j) {
            const int cost = a.at(i - 1) == b.at(j - 1) ? 0 : 1;
            int v = std::min({d[size_t(i - 1)][size_t(j)] + 1, d[size_t(i)][size_t(j - 1)] + 1, d[size_t(i - 1)][size_t(j - 1)] + cost});
            if (i > 1 && j > 1 && a.at(i - 1) == b.at(j - 2) && a.at(i - 2) == b.at(j - 1))
                v = std::min(v, d[size_t(i - 2)][size_t(j - 2)] + 1);
            d[size_t(i)][size_t(j)] = v;
        }
    return d[size_t(n)][size_t(m)];
}

} // namespace

QString closestName(const QString& word, const QStringList& candidates)
{
    const QString w = word.toLower();
    int best = w.size() <= 4 ? 1 : 2; // the largest distance still called near
    QStringList nearest;
    for (const QString& c : candidates) {
        const int d = editDistance(w, c.toLower());
        if (d < best) {
            best = d;
            nearest = {c};
        } else if (d == best) {
            nearest << c;
        }
    }
    if (nearest.size() == 1)
        return nearest.front();
    if (w.size() >= 3) { // an abbreviation: --wave for --wavelength, when only one option starts so
        QStringList starting;
        for (const QString& c : candidates)
            if (c.toLower().startsWith(w))
                starting << c;
        if (starting.size() == 1)
            return starting.front();
    }
    return {};
}

void addOptions(QCommandLineParser& parser, QList<QCommandLineOption> options)
{
    for (QCommandLineOption& o : options) {
        QString description = o.description();
        if (!o.defaultValues().isEmpty() && !description.contains(QLatin1String("default"))) {
            const bool stop = description.endsWith(QLatin1Char('.'));
            if (stop)
                description.chop(1);
            description +=
                QStringLiteral(" (default %1)").arg(o.defaultValues().join(QLatin1Char(','))) + (stop ? QStringLiteral(".") : QString());
            o.setDescription(description);
        }
        parser.addOption(o);
    }
}

void addCoreOptions(QCommandLineParser& parser, const std::vector<OptionHelp>& options)
{
    QList<QCommandLineOption> list;
    for (const OptionHelp& o : options) {
        QCommandLineOption option(o.name, o.description, o.valueName, o.defaultValue);
        list << option;
    }
    addOptions(parser, list);
}

std::optional<int> parseOrExit(QCommandLineParser& parser, const QStringList& args, const QString& usage)
{
    parser.setSingleDashWordOptionMode(QCommandLineParser::ParseAsLongOptions);
    // Our own --help (Qt's adds --help-all, which offers Qt's options) and --version.
    const QCommandLineOption help({QStringLiteral("h"), QStringLiteral("help")}, QStringLiteral("Show this help and exit."));
    const QCommandLineOption version(QStringLiteral("version"), QStringLiteral("Show the program's version and exit."));
    parser.addOption(help);
    parser.addOption(version);
    const QString program = args.value(0);
    if (!parser.parse(args)) {
        const QStringList unknown = parser.unknownOptionNames();
        if (unknown.isEmpty())
            return usageFailure(program, parser.errorText());
        const QString name = unknown.front();
        QString message = QStringLiteral("unknown option '%1%2'").arg(name.size() == 1 ? QStringLiteral("-") : QStringLiteral("--"), name);
        const QString near = closestName(name, helpOptionNames(parser));
        message += near.isEmpty() ? QStringLiteral(" (see --help)") : QStringLiteral("; did you mean --%1?").arg(near);
        return usageFailure(program, message);
    }
    if (parser.isSet(help)) {
        // Qt's usage line names the executable only; ours names the command too.
        const QString command = program.section(QLatin1Char(' '), -1);
        QString text = parser.helpText();
        const qsizetype lineEnd = text.indexOf(QLatin1Char('\n'));
        const QString first = text.left(lineEnd);
        const qsizetype options = first.indexOf(QLatin1String(" [options]"));
        const QString line =
            QStringLiteral("Usage: wavefront-cli ") + (usage.isEmpty() ? command + (options >= 0 ? first.mid(options) : QString()) : usage);
        text.replace(0, lineEnd, line);
        std::fputs(qPrintable(text), stdout);
        return 0;
    }
    if (parser.isSet(version)) {
        std::printf("wavefront-cli %s\n", WFS_VERSION);
        return 0;
    }
    return std::nullopt;
}

int usageFailure(const QString& program, const QString& message)
{
    std::fprintf(stderr, "%s: %s\n", qPrintable(program), qPrintable(message));
    return 2;
}

int runFailure(const QString& program, const QString& message)
{
    std::fprintf(stderr, "%s: error: %s\n", qPrintable(program), qPrintable(message));
    return 1;
}

QString describe(const std::exception& e)
{
    if (dynamic_cast<const std::bad_alloc*>(&e))
        return QString::fromLatin1(kOutOfMemory);
    return QString::fromStdString(e.what());
}

// Core's parsers (io/SettingOptions.h), the option named as the command line spells it.
int parseInt(const QString& text, const QString& option)
{
    return parseIntOption(text, "--" + option.toStdString());
}

double parseNumber(const QString& text, const QString& option)
{
    return parseNumberOption(text, "--" + option.toStdString());
}

double parsePhotons(const QString& text)
{
    const double photons = parseNumber(text, QStringLiteral("photons"));
    if (!(photons > 0.0) || !std::isfinite(photons))
        throw UsageError("--photons: " + text.toStdString() + " is not a positive number of photons");
    return photons;
}

std::vector<int> parseIntList(const QString& text, const QString& option)
{
    return parseIntListOption(text, "--" + option.toStdString());
}

std::vector<QString> parseWordList(const QString& text, const QString& option, const QStringList& allowed)
{
    return parseWordListOption(text, "--" + option.toStdString(), allowed);
}

double parseLength(const QString& text, const QString& option)
{
    return parseLengthOption(text, "--" + option.toStdString());
}

double parsePlausible(const QString& text, const QString& option, Setting setting)
{
    return parsePlausibleOption(text, "--" + option.toStdString(), setting);
}

void checkOutputs(const std::vector<OutputSpec>& outputs, const std::vector<std::string>& inputs, bool overwrite)
{
    const OutputSpec* onStdout = nullptr;
    for (size_t i = 0; i < outputs.size(); ++i) {
        const OutputSpec& o = outputs[i];
        if (o.path.empty())
            throw UsageError("--" + o.option + ": the file name is empty");
        if (o.path == "-") {
            if (!o.text)
                throw UsageError("--" + o.option + ": '-' (standard output) is for text outputs; give a file name");
            if (onStdout)
                throw UsageError("--" + onStdout->option + " and --" + o.option
                                 + " both name standard output ('-'); give one of them a file name");
            onStdout = &o;
            continue;
        }
        for (size_t j = 0; j < i; ++j)
            if (outputs[j].path != "-" && samePath(outputs[j].path, o.path))
                throw UsageError("--" + outputs[j].option + " and --" + o.option + " name the same file (" + o.path
                                 + "); give each output its own file");
        for (const std::string& input : inputs)
            if (samePath(input, o.path))
                throw UsageError("--" + o.option + ": " + o.path + " is an input of this run; writing it would destroy the input");
    }
    for (const OutputSpec& o : outputs)
        checkOutputPath(o.path, overwrite);
}

void printWarnings(const QString& program, const std::vector<std::string>& warnings)
{
    std::vector<std::string> shown;
    for (const std::string& w : warnings) {
        if (std::find(shown.begin(), shown.end(), w) != shown.end())
            continue;
        shown.push_back(w);
        std::fprintf(stderr, "%s: warning: %s\n", qPrintable(program), w.c_str());
    }
}

void printJsonLine(const QJsonObject& object)
{
    const QByteArray line = QJsonDocument(object).toJson(QJsonDocument::Compact);
    std::fwrite(line.constData(), 1, size_t(line.size()), stdout);
    std::fputc('\n', stdout);
    std::fflush(stdout);
}

} // namespace wfs::cli

namespace wfs::cli {

void addSolverOptions(QCommandLineParser& parser, const SolverSettings& d, const QString& gtolNote, const QString& ftolNote)
{
    addCoreOptions(parser, solverOptionHelp(d, gtolNote, ftolNote));
}

void applySolverFlags(const QCommandLineParser& parser, SolverSettings& s)
{
    applySolverOptions(ParserOptions(parser), s);
}

} // namespace wfs::cli
