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
            description += QStringLiteral(" (default %1)").arg(o.defaultValues().join(QLatin1Char(','))) + (stop ? QStringLiteral(".") : QString());
            o.setDescription(description);
        }
        parser.addOption(o);
    }
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
        const QString line = QStringLiteral("Usage: wavefront-cli ")
                             + (usage.isEmpty() ? command + (options >= 0 ? first.mid(options) : QString()) : usage);
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
        return QStringLiteral("out of memory: the data or the model need more memory than this process may use; "
                              "use a smaller --crop or --grid, fewer planes, or raise the memory limit (ulimit -v)");
    return QString::fromStdString(e.what());
}

int parseInt(const QString& text, const QString& option)
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
        throw UsageError(QStringLiteral("--%1: %2 is out of range (at most %3)").arg(option, text.trimmed()).arg(std::numeric_limits<int>::max()).toStdString());
    throw UsageError(QStringLiteral("--%1: '%2' is not an integer").arg(option, text).toStdString());
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

double parseLength(const QString& text, const QString& option)
{
    // Core's one parser (io/Units.h): a bare number is metres.
    const auto v = valueFromText(text.toStdString());
    if (!v)
        throw UsageError(QStringLiteral("--%1: '%2' is not a length (e.g. 633nm, 5.5um, 2.4m)").arg(option, text).toStdString());
    if (v->kind != ValueWithUnit::Kind::Length && v->kind != ValueWithUnit::Kind::Bare)
        throw UsageError(QStringLiteral("--%1: '%2' is not a length; use nm, um, mm, cm or m").arg(option, text).toStdString());
    return v->value;
}

double parsePlausible(const QString& text, const QString& option, Setting setting)
{
    const bool isLength = setting == Setting::Wavelength || setting == Setting::PixelPitch || setting == Setting::Aperture
                          || setting == Setting::DefocusLength || setting == Setting::ZStep || setting == Setting::ObjectDiameter || setting == Setting::Bandwidth;
    const double v = isLength ? parseLength(text, option) : parseNumber(text, option);
    const std::string error = plausibilityError(setting, v);
    if (!error.empty())
        throw UsageError("--" + option.toStdString() + ": " + error);
    return v;
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
                throw UsageError("--" + onStdout->option + " and --" + o.option + " both name standard output ('-'); give one of them a file name");
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
    auto note = [](const QString& text) { return text.isEmpty() ? QString() : QStringLiteral("; ") + text; };
    // The stated defaults are the settings' own (io/Session.h), so help and behaviour cannot part.
    addOptions(parser, {
        {QStringLiteral("backend"), QStringLiteral("cpu or gpu (default %1).").arg(QLatin1String(backendName(d.backend))), QStringLiteral("name")},
        {QStringLiteral("gradient"), QStringLiteral("adjoint (exact) or fd (forward differences) (default %1).").arg(QLatin1String(gradientName(d.gradient))),
         QStringLiteral("kind")},
        {QStringLiteral("optimizer"), QStringLiteral("bfgs or lbfgs (default %1).").arg(QLatin1String(optimizerName(d.optimizer))), QStringLiteral("name")},
        {QStringLiteral("precision"), QStringLiteral("double or float (default %1).").arg(QLatin1String(precisionName(d.precision))), QStringLiteral("p")},
        {QStringLiteral("threads"), QStringLiteral("CPU threads for FFTs and pointwise work (default %1).").arg(d.threads), QStringLiteral("T")},
        {QStringLiteral("max-iterations"), QStringLiteral("Iteration limit (default %1).").arg(d.maxIterations), QStringLiteral("K")},
        {QStringLiteral("gtol"), QStringLiteral("Stop when the gradient's max-norm is at most X (default %1%2).").arg(d.gradientTolerance, 0, 'g', 6).arg(note(gtolNote)),
         QStringLiteral("X")},
        {QStringLiteral("ftol"), QStringLiteral("Stop when the relative cost change is below X (default %1%2).").arg(d.functionTolerance, 0, 'g', 6).arg(note(ftolNote)),
         QStringLiteral("X")},
    });
}

void applySolverFlags(const QCommandLineParser& parser, SolverSettings& s)
{
    auto has = [&](const char* name) { return parser.isSet(QLatin1String(name)); };
    auto value = [&](const char* name) { return parser.value(QLatin1String(name)); };
    auto word = [&](const char* name, const QStringList& allowed) { return parseWordList(value(name), QLatin1String(name), allowed).front(); };
    if (has("backend"))
        s.backend = word("backend", {QStringLiteral("cpu"), QStringLiteral("gpu")}) == QLatin1String("gpu") ? BackendKind::Gpu : BackendKind::Cpu;
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
