#include "CliCommon.h"

#include <QJsonDocument>
#include <QRegularExpression>

#include <cmath>
#include <cstdio>

namespace wfs::cli {

std::optional<int> parseOrExit(QCommandLineParser& parser, const QStringList& args)
{
    parser.setSingleDashWordOptionMode(QCommandLineParser::ParseAsLongOptions);
    const QCommandLineOption help = parser.addHelpOption();
    if (!parser.parse(args))
        return usageFailure(args.value(0), parser.errorText());
    if (parser.isSet(help)) {
        std::fputs(qPrintable(parser.helpText()), stdout);
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

int parseInt(const QString& text, const QString& option)
{
    bool ok = false;
    const int value = text.trimmed().toInt(&ok);
    if (!ok)
        throw UsageError(QStringLiteral("--%1: '%2' is not an integer").arg(option, text).toStdString());
    return value;
}

double parseNumber(const QString& text, const QString& option)
{
    bool ok = false;
    const double value = text.trimmed().toDouble(&ok);
    if (!ok || !std::isfinite(value))
        throw UsageError(QStringLiteral("--%1: '%2' is not a number").arg(option, text).toStdString());
    return value;
}

std::vector<int> parseIntList(const QString& text, const QString& option)
{
    std::vector<int> values;
    for (const QString& part : text.split(QLatin1Char(','), Qt::SkipEmptyParts))
        values.push_back(parseInt(part, option));
    if (values.empty())
        throw UsageError(QStringLiteral("--%1: expected a comma-separated list of integers").arg(option).toStdString());
    return values;
}

std::vector<QString> parseWordList(const QString& text, const QString& option, const QStringList& allowed)
{
    std::vector<QString> values;
    for (const QString& part : text.split(QLatin1Char(','), Qt::SkipEmptyParts)) {
        const QString word = part.trimmed().toLower();
        if (!allowed.contains(word))
            throw UsageError(QStringLiteral("--%1: '%2' is not one of %3")
                                 .arg(option, word, allowed.join(QLatin1Char('|')))
                                 .toStdString());
        values.push_back(word);
    }
    if (values.empty())
        throw UsageError(QStringLiteral("--%1: expected one of %2").arg(option, allowed.join(QLatin1Char('|'))).toStdString());
    return values;
}

namespace {
// Splits "633nm" into (633, "nm"); returns false when the number part is not a number.
bool splitUnit(const QString& text, double& value, QString& unit)
{
    static const QRegularExpression re(QStringLiteral("^\\s*([-+]?[0-9]*\\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\\s*([a-zA-Z]*)\\s*$"));
    const auto match = re.match(text);
    if (!match.hasMatch())
        return false;
    value = match.captured(1).toDouble();
    unit = match.captured(2).toLower();
    return true;
}
} // namespace

double parseLength(const QString& text, const QString& option)
{
    double value = 0;
    QString unit;
    if (!splitUnit(text, value, unit))
        throw UsageError(QStringLiteral("--%1: '%2' is not a length (e.g. 633nm, 5.5um, 2.4m)").arg(option, text).toStdString());
    if (unit.isEmpty() || unit == QLatin1String("m"))
        return value;
    if (unit == QLatin1String("mm"))
        return value * 1e-3;
    if (unit == QLatin1String("um"))
        return value * 1e-6;
    if (unit == QLatin1String("nm"))
        return value * 1e-9;
    throw UsageError(QStringLiteral("--%1: unknown length unit '%2' (use nm, um, mm or m)").arg(option, unit).toStdString());
}

std::optional<double> parseAngle(const QString& text)
{
    double value = 0;
    QString unit;
    if (!splitUnit(text, value, unit))
        return std::nullopt;
    constexpr double arcsec = M_PI / (180.0 * 3600.0);
    if (unit == QLatin1String("arcsec"))
        return value * arcsec;
    if (unit == QLatin1String("mas"))
        return value * arcsec * 1e-3;
    if (unit == QLatin1String("rad"))
        return value;
    return std::nullopt;
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

void addSolverOptions(QCommandLineParser& parser)
{
    parser.addOptions({
        {QStringLiteral("backend"), QStringLiteral("cpu or gpu (default cpu)."), QStringLiteral("name"), QStringLiteral("cpu")},
        {QStringLiteral("gradient"), QStringLiteral("adjoint (exact) or fd (forward differences)."), QStringLiteral("kind"), QStringLiteral("adjoint")},
        {QStringLiteral("optimizer"), QStringLiteral("bfgs or lbfgs."), QStringLiteral("name"), QStringLiteral("bfgs")},
        {QStringLiteral("precision"), QStringLiteral("double or float."), QStringLiteral("p"), QStringLiteral("double")},
        {QStringLiteral("threads"), QStringLiteral("CPU threads for FFTs and pointwise work."), QStringLiteral("T"), QStringLiteral("1")},
        {QStringLiteral("max-iterations"), QStringLiteral("Iteration limit."), QStringLiteral("K")},
        {QStringLiteral("gtol"), QStringLiteral("Stop when the gradient's max-norm is at most X."), QStringLiteral("X")},
        {QStringLiteral("ftol"), QStringLiteral("Stop when the relative cost change is below X."), QStringLiteral("X")},
    });
}

void applySolverFlags(const QCommandLineParser& parser, SolverSettings& s)
{
    auto has = [&](const char* name) { return parser.isSet(QLatin1String(name)); };
    auto value = [&](const char* name) { return parser.value(QLatin1String(name)); };
    auto word = [&](const char* name, const QStringList& allowed) { return parseWordList(value(name), QLatin1String(name), allowed).front(); };
    if (has("backend"))
        s.backend = word("backend", {QStringLiteral("cpu"), QStringLiteral("gpu")}).toStdString();
    if (has("gradient"))
        s.gradient = word("gradient", {QStringLiteral("adjoint"), QStringLiteral("fd")}) == QLatin1String("fd") ? GradientKind::FiniteDifference
                                                                                                               : GradientKind::Adjoint;
    if (has("optimizer"))
        s.optimizer = word("optimizer", {QStringLiteral("bfgs"), QStringLiteral("lbfgs")}) == QLatin1String("lbfgs") ? OptimizerKind::Lbfgs
                                                                                                                   : OptimizerKind::Bfgs;
    if (has("precision"))
        s.precision = word("precision", {QStringLiteral("double"), QStringLiteral("float")}) == QLatin1String("float") ? Precision::Float
                                                                                                                     : Precision::Double;
    if (has("threads"))
        s.threads = parseInt(value("threads"), QStringLiteral("threads"));
    if (has("max-iterations"))
        s.maxIterations = parseInt(value("max-iterations"), QStringLiteral("max-iterations"));
    if (has("gtol"))
        s.gradientTolerance = parseNumber(value("gtol"), QStringLiteral("gtol"));
    if (has("ftol"))
        s.functionTolerance = parseNumber(value("ftol"), QStringLiteral("ftol"));
}

} // namespace wfs::cli
