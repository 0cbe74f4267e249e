// wavefront-cli fasth-train: the SVD-layer training job of the desktop program's FastH panel, headless.
// Trains W = U diag(sigma) V^T (U, V products of Householder reflections, applied by FastH) with Adam
// towards a target of known singular values, then compares inverse and log-determinant with LU. The job
// is core's (engine/FasthJobs.h); this file parses, prints progress on stderr and one JSON object.
#include "CliCommon.h"
#include "Commands.h"

#include "engine/FasthJobs.h"

#include <QCommandLineParser>
#include <QJsonArray>
#include <QJsonObject>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <functional>
#include <future>

namespace wfs::cli {

namespace {

FasthTrainingState* g_state = nullptr;

// Ctrl-C cancels the training (the job keeps what it learnt and still reports), a second one kills.
extern "C" void cancelTraining(int)
{
    if (g_state)
        g_state->cancelRequested.store(true);
    std::signal(SIGINT, SIG_DFL);
}

QJsonArray array(const Eigen::VectorXd& values)
{
    QJsonArray out;
    for (Eigen::Index i = 0; i < values.size(); ++i)
        out.append(values(i));
    return out;
}

QJsonObject resultJson(const FasthTrainingResult& r)
{
    const FasthTrainingSettings& s = r.settings;
    double sigmaError = 0.0; // learnt against target singular values, both sorted descending
    Eigen::VectorXd learnt = r.sigma.cwiseAbs();
    std::sort(learnt.data(), learnt.data() + learnt.size(), std::greater<>());
    for (Eigen::Index i = 0; i < std::min(learnt.size(), r.targetSingularValues.size()); ++i)
        sigmaError = std::max(sigmaError, std::abs(learnt(i) - r.targetSingularValues(i)));
    QJsonObject o{
        {QStringLiteral("d"), s.d},
        {QStringLiteral("k"), s.k},
        {QStringLiteral("samples"), s.samples},
        {QStringLiteral("block"), s.blockSize},
        {QStringLiteral("precision"), s.precision == Precision::Double ? QStringLiteral("double") : QStringLiteral("float")},
        {QStringLiteral("threads"), s.threads},
        {QStringLiteral("learning_rate"), s.learningRate},
        {QStringLiteral("seed"), double(s.seed)},
        {QStringLiteral("steps"), int(r.iterations.empty() ? 0 : r.iterations.back())},
        {QStringLiteral("initial_loss"), r.losses.empty() ? std::nan("") : r.losses.front()},
        {QStringLiteral("final_loss"), r.losses.empty() ? std::nan("") : r.losses.back()},
        {QStringLiteral("termination"), QString::fromLatin1(fasth::terminationName(r.summary.termination))},
        {QStringLiteral("max_sigma_error"), sigmaError},
        {QStringLiteral("sigma"), array(r.sigma)},
        {QStringLiteral("target_sigma"), array(r.targetSingularValues)},
    };
    if (!r.cancelled) {
        const FasthUseCaseComparison& c = r.useCases;
        o.insert(QStringLiteral("inverse_svd_ms"), c.svdInverseMs);
        o.insert(QStringLiteral("inverse_lu_ms"), c.luSolveMs);
        o.insert(QStringLiteral("inverse_relative_difference"), c.inverseRelativeDifference);
        o.insert(QStringLiteral("inverse_residual"), c.inverseResidual);
        o.insert(QStringLiteral("logdet_svd_ms"), c.svdLogDetMs);
        o.insert(QStringLiteral("logdet_lu_ms"), c.luLogDetMs);
        o.insert(QStringLiteral("log_abs_det_svd"), c.svdLogAbsDet);
        o.insert(QStringLiteral("log_abs_det_lu"), c.luLogAbsDet);
        o.insert(QStringLiteral("det_sign_svd"), c.svdDetSign);
        o.insert(QStringLiteral("det_sign_lu"), c.luDetSign);
    }
    return o;
}

void addTrainingOptions(QCommandLineParser& parser, const FasthTrainingSettings& defaults)
{
    addOptions(parser,
               {
                   {QStringLiteral("d"), QStringLiteral("Layer size d (default %1).").arg(defaults.d), QStringLiteral("d"),
                    QString::number(defaults.d)},
                   {QStringLiteral("k"), QStringLiteral("Reflectors per factor, 1..d (default %1).").arg(defaults.k), QStringLiteral("k"),
                    QString::number(defaults.k)},
                   {QStringLiteral("samples"), QStringLiteral("Training inputs (columns of X; default %1).").arg(defaults.samples),
                    QStringLiteral("m"), QString::number(defaults.samples)},
                   {QStringLiteral("steps"), QStringLiteral("Adam steps (default %1).").arg(defaults.steps), QStringLiteral("n"),
                    QString::number(defaults.steps)},
                   {QStringLiteral("learning-rate"), QStringLiteral("Adam learning rate (default %1).").arg(defaults.learningRate),
                    QStringLiteral("rate"), QString::number(defaults.learningRate)},
                   {QStringLiteral("block"), QStringLiteral("FastH block size (default %1).").arg(defaults.blockSize), QStringLiteral("b"),
                    QString::number(defaults.blockSize)},
                   {QStringLiteral("precision"), QStringLiteral("double or float (default double)."), QStringLiteral("p"),
                    QStringLiteral("double")},
                   {QStringLiteral("threads"), QStringLiteral("CPU threads (default %1).").arg(defaults.threads), QStringLiteral("T"),
                    QString::number(defaults.threads)},
                   {QStringLiteral("repeat"),
                    QStringLiteral("Repetitions of each inverse/determinant timing, median (default %1).").arg(defaults.timingRepeat),
                    QStringLiteral("R"), QString::number(defaults.timingRepeat)},
                   {QStringLiteral("seed"), QStringLiteral("Random seed of the layer, target and data (default %1).").arg(defaults.seed),
                    QStringLiteral("S"), QString::number(defaults.seed)},
                   {QStringLiteral("quiet"), QStringLiteral("No progress lines on stderr.")},
               });
}

// The settings from the parsed options; throws UsageError for a value out of range.
FasthTrainingSettings trainingSettings(const QCommandLineParser& parser)
{
    FasthTrainingSettings settings;
    settings.d = parseInt(parser.value(QStringLiteral("d")), QStringLiteral("d"));
    settings.k = parseInt(parser.value(QStringLiteral("k")), QStringLiteral("k"));
    settings.samples = parseInt(parser.value(QStringLiteral("samples")), QStringLiteral("samples"));
    settings.steps = parseInt(parser.value(QStringLiteral("steps")), QStringLiteral("steps"));
    settings.learningRate = parseNumber(parser.value(QStringLiteral("learning-rate")), QStringLiteral("learning-rate"));
    settings.blockSize = parseInt(parser.value(QStringLiteral("block")), QStringLiteral("block"));
    settings.precision = parseWordList(parser.value(QStringLiteral("precision")), QStringLiteral("precision"),
                                       {QStringLiteral("double"), QStringLiteral("float")})
                                     .front()
                                 == QLatin1String("float")
                             ? Precision::Float
                             : Precision::Double;
    settings.threads = parseInt(parser.value(QStringLiteral("threads")), QStringLiteral("threads"));
    settings.timingRepeat = parseInt(parser.value(QStringLiteral("repeat")), QStringLiteral("repeat"));
    settings.seed = std::uint64_t(parseInt(parser.value(QStringLiteral("seed")), QStringLiteral("seed")));
    if (settings.d > 4096)
        throw UsageError("--d: at most 4096 (the dense comparison forms d x d matrices)");
    QString invalid;
    if (!settings.isValid(&invalid))
        throw UsageError(invalid.toStdString());
    return settings;
}

// Runs the job on a thread of its own, printing progress on stderr twice a second unless quiet.
FasthTrainingResult trainWithProgress(const FasthTrainingSettings& settings, bool quiet)
{
    FasthTrainingState state;
    g_state = &state;
    std::signal(SIGINT, cancelTraining);
    auto job = std::async(std::launch::async, [&] { return runFasthTraining(settings, state); });
    size_t shown = 0;
    while (job.wait_for(std::chrono::milliseconds(500)) != std::future_status::ready) {
        std::lock_guard lock(state.mutex);
        if (quiet || state.losses.size() == shown || state.losses.empty())
            continue;
        shown = state.losses.size();
        std::fprintf(stderr, "  step %5d / %d  loss %.6g\n", int(state.iterations.back()), state.steps, state.losses.back());
    }
    FasthTrainingResult result = job.get();
    std::signal(SIGINT, SIG_DFL);
    g_state = nullptr;
    return result;
}

} // namespace

int runFasthTrain(const QStringList& args)
{
    const QString program = args.value(0);
    const FasthTrainingSettings defaults;
    QCommandLineParser parser;
    parser.setApplicationDescription(
        QStringLiteral("Trains an SVD layer W = U diag(sigma) V^T, U and V products of k Householder reflections applied by FastH,\n"
                       "with Adam towards a target of known singular values (log-spaced from 3 to 0.09), then times W^-1 Y and\n"
                       "log|det W| by the layer's SVD against LU of the formed W. Progress on stderr; one JSON object on stdout.\n"
                       "Ctrl-C stops the training and still reports what was learnt."));
    addTrainingOptions(parser, defaults);
    if (auto status = parseOrExit(parser, args))
        return *status;

    FasthTrainingSettings settings;
    try {
        settings = trainingSettings(parser);
    } catch (const UsageError& e) {
        return usageFailure(program, QString::fromStdString(e.what()));
    }

    const FasthTrainingResult result = trainWithProgress(settings, parser.isSet(QStringLiteral("quiet")));
    if (!result.error.isEmpty())
        return runFailure(program, result.error);
    printJsonLine(resultJson(result));
    return 0;
}

} // namespace wfs::cli
