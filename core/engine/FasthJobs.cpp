#include "engine/FasthJobs.h"

#include "base/CsvText.h"
#include "fasth/Householder.h"

#include <Eigen/LU>

#include <QLocale>
#include <QSaveFile>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <random>
#include <thread>

namespace wfs {

namespace {

int hardwareThreads()
{
    return int(std::max(1u, std::thread::hardware_concurrency()));
}

Eigen::MatrixXd gaussian(Eigen::Index rows, Eigen::Index cols, std::mt19937_64& generator)
{
    std::normal_distribution<double> normal;
    Eigen::MatrixXd matrix(rows, cols);
    for (Eigen::Index i = 0; i < matrix.size(); ++i)
        matrix.data()[i] = normal(generator);
    return matrix;
}

// Sigma as SvdLayer::random draws it: magnitudes in [0.5, 2] with random signs (a layer may reflect).
Eigen::VectorXd randomSigma(int d, std::mt19937_64& generator)
{
    std::uniform_real_distribution<double> magnitude(0.5, 2.0);
    std::bernoulli_distribution negative(0.5);
    Eigen::VectorXd sigma(d);
    for (int i = 0; i < d; ++i)
        sigma(i) = negative(generator) ? -magnitude(generator) : magnitude(generator);
    return sigma;
}

fasth::Options fasthOptions(int blockSize, int threads)
{
    fasth::Options options;
    options.algorithm = fasth::Algorithm::FastH;
    options.blockSize = std::max(1, blockSize);
    options.threads = std::max(1, threads);
    return options;
}

// The shortest text that reads back as the same double: the file carries the engine's numbers exactly.
QString exact(double value)
{
    return QString::number(value, 'g', QLocale::FloatingPointShortest);
}

template <typename Work>
double medianMilliseconds(int repeat, Work&& work)
{
    std::vector<double> samples;
    samples.reserve(size_t(repeat));
    for (int i = 0; i < repeat; ++i) {
        const auto start = std::chrono::steady_clock::now();
        work();
        samples.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
    }
    return fasth::sampleStatistics(std::move(samples)).median;
}

} // namespace

const char* sweepKindName(FasthSweepKind kind)
{
    return kind == FasthSweepKind::Dimension ? "dimension" : "block";
}

// ---- Timing sweeps ----

bool FasthSweepSettings::isValid(QString* error) const
{
    auto fail = [error](const QString& message) {
        if (error)
            *error = message;
        return false;
    };
    if (dimensions.empty())
        return fail(QStringLiteral("give at least one dimension d"));
    if (std::any_of(dimensions.begin(), dimensions.end(), [](int d) { return d < 1; }))
        return fail(QStringLiteral("every d must be positive"));
    if (methods.empty() || passes.empty())
        return fail(QStringLiteral("choose at least one method and one pass"));
    if (batch < 1 || blockSize < 1 || repeat < 1 || warmup < 0 || threads < 0 || treeLevels < 0 || treeLevels > 30)
        return fail(QStringLiteral("batch, block size and repetitions must be positive, tree levels 0..30"));
    if (blockSweep) {
        if (blockSweepDimension < 1 || blockSweepReflectors < 0 || blockSweepReflectors > blockSweepDimension)
            return fail(QStringLiteral("the block sweep needs 1 <= k <= d"));
        if (std::any_of(blockSizes.begin(), blockSizes.end(), [](int b) { return b < 1; }))
            return fail(QStringLiteral("block sizes must be positive"));
    }
    return true;
}

std::vector<int> FasthSweepSettings::blockSweepSizes() const
{
    if (!blockSizes.empty())
        return blockSizes;
    const int k = blockSweepReflectors > 0 ? blockSweepReflectors : blockSweepDimension;
    // Powers of two span both ends of the O(k/b + b) trade-off: b = 1 is the sequential algorithm in
    // FastH's clothes, b = k one block with a k-step recursion.
    std::vector<int> sizes;
    for (int b = 1; b < k; b *= 2)
        sizes.push_back(b);
    sizes.push_back(k);
    return sizes;
}

FasthSweepResults runFasthSweep(const FasthSweepSettings& settings, FasthSweepState& state)
{
    FasthSweepResults results;
    results.settings = settings;
    QString invalid;
    if (!settings.isValid(&invalid)) {
        results.error = invalid;
        return results;
    }
    results.threads = settings.threads > 0 ? settings.threads : hardwareThreads();
    try {
        const std::unique_ptr<fasth::HouseholderRunner> runner = makeFasthRunner(settings.backend);
        results.backend = QString::fromStdString(runner->backend());
        results.device = QString::fromStdString(runner->device());

        fasth::SweepOptions byDimension;
        byDimension.dimensions = settings.dimensions;
        byDimension.batches = {settings.batch};
        byDimension.blocks = {settings.blockSize};
        byDimension.methods = settings.methods;
        byDimension.passes = settings.passes;
        byDimension.precisions = {settings.precision};
        byDimension.threads = {results.threads};
        byDimension.repeat = settings.repeat;
        byDimension.warmup = settings.warmup;
        byDimension.treeLevels = settings.treeLevels;
        byDimension.seed = settings.seed;
        byDimension.lapackLayout = settings.lapackLayout;

        // The block sweep times sequential and dense GEMM at the same (d, k) as well: the two levels
        // between which FastH's curve should lie.
        fasth::SweepOptions byBlock = byDimension;
        byBlock.dimensions = {settings.blockSweepDimension};
        byBlock.reflectors = {settings.blockSweepReflectors > 0 ? settings.blockSweepReflectors : settings.blockSweepDimension};
        byBlock.blocks = settings.blockSweepSizes();
        byBlock.methods = {fasth::BenchMethod::Sequential, fasth::BenchMethod::FastH, fasth::BenchMethod::Dense};

        const int dimensionTotal = fasth::sweepSize(byDimension);
        results.total = dimensionTotal + (settings.blockSweep ? fasth::sweepSize(byBlock) : 0);
        {
            std::lock_guard lock(state.mutex);
            state.total = results.total;
            state.done = 0;
        }
        auto sweep = [&](const fasth::SweepOptions& options, FasthSweepKind kind, int offset) {
            fasth::SweepCallbacks callbacks;
            callbacks.shouldContinue = [&state] { return !state.cancelRequested.load(); };
            callbacks.row = [&](const fasth::SweepRow& row) {
                const FasthTimingRow timing{kind, row};
                results.rows.push_back(timing);
                std::lock_guard lock(state.mutex);
                state.rows.push_back(timing);
            };
            callbacks.skip = [&](const fasth::SweepSkip& skip) {
                results.skipped << QStringLiteral("d=%1 k=%2 %3 %4: %5")
                                       .arg(skip.d)
                                       .arg(skip.k)
                                       .arg(QString::fromLatin1(fasth::methodName(skip.method)),
                                            QString::fromLatin1(fasth::passName(skip.pass)), QString::fromStdString(skip.why));
            };
            callbacks.progress = [&](int done, int) {
                std::lock_guard lock(state.mutex);
                state.done = offset + done;
            };
            return fasth::runSweep(*runner, options, callbacks);
        };
        fasth::SweepSummary summary = sweep(byDimension, FasthSweepKind::Dimension, 0);
        if (!summary.cancelled && settings.blockSweep)
            summary = sweep(byBlock, FasthSweepKind::BlockSize, dimensionTotal);
        results.cancelled = summary.cancelled;
    } catch (const std::exception& error) {
        results.error = QString::fromStdString(error.what());
    }
    return results;
}

QStringList fasthCsvHeader()
{
    return {QStringLiteral("sweep"),
            QStringLiteral("d"),
            QStringLiteral("k"),
            QStringLiteral("batch"),
            QStringLiteral("block"),
            QStringLiteral("requested_block"),
            QStringLiteral("method"),
            QStringLiteral("pass"),
            QStringLiteral("backend"),
            QStringLiteral("device"),
            QStringLiteral("precision"),
            QStringLiteral("threads"),
            QStringLiteral("ms"),
            QStringLiteral("ms_q1"),
            QStringLiteral("ms_q3"),
            QStringLiteral("gflops"),
            QStringLiteral("flops"),
            QStringLiteral("max_abs_error"),
            QStringLiteral("grad_v_checked"),
            QStringLiteral("repeat"),
            QStringLiteral("tree_levels"),
            QStringLiteral("reflector_layout")};
}

bool writeFasthCsv(const QString& path, const std::vector<FasthTimingRow>& rows, QString* error)
{
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly | QIODevice::Text)) {
        if (error)
            *error = QStringLiteral("%1: %2").arg(path, file.errorString());
        return false;
    }
    QByteArray text = fasthCsvHeader().join(QLatin1Char(',')).toUtf8() + '\n';
    for (const FasthTimingRow& timing : rows) {
        const fasth::SweepRow& r = timing.row;
        const QStringList fields = {
            QString::fromLatin1(sweepKindName(timing.sweep)),
            QString::number(r.d),
            QString::number(r.k),
            QString::number(r.batch),
            QString::number(r.block),
            QString::number(r.requestedBlock),
            QString::fromLatin1(fasth::methodName(r.method)),
            QString::fromLatin1(fasth::passName(r.pass)),
            QString::fromStdString(csvField(r.backend)),
            QString::fromStdString(csvField(r.device)),
            QString::fromLatin1(precisionName(r.precision)),
            QString::number(r.threads),
            exact(r.ms),
            exact(r.msQ1),
            exact(r.msQ3),
            exact(r.gflops),
            exact(r.flops),
            exact(r.maxAbsError),
            r.gradVChecked ? QStringLiteral("true") : QStringLiteral("false"),
            QString::number(r.repeat),
            QString::number(r.treeLevels),
            r.lapackLayout ? QStringLiteral("lapack") : QStringLiteral("gaussian"),
        };
        text += fields.join(QLatin1Char(',')).toUtf8() + '\n';
    }
    if (file.write(text) != text.size() || !file.commit()) {
        if (error)
            *error = QStringLiteral("%1: %2").arg(path, file.errorString());
        return false;
    }
    return true;
}

// ---- Pictures ----

namespace {

template <typename Scalar>
void formFactors(FasthPictures& pictures)
{
    using MatrixType = fasth::Matrix<Scalar>;
    const FasthPictureSettings& s = pictures.settings;
    const fasth::Options options = fasthOptions(s.blockSize, s.threads);
    const MatrixType u = pictures.uReflectors.cast<Scalar>();
    const MatrixType v = pictures.vReflectors.cast<Scalar>();
    const MatrixType identity = MatrixType::Identity(s.d, s.d);

    fasth::HouseholderProduct<Scalar> product(options);
    MatrixType qu = identity;
    product.prepare(u);
    product.apply(qu);
    // The shaded blocks are the engine's own: the same split of the k reflectors that prepare() made.
    if (product.blockCount() != int(pictures.blocks.size()))
        throw std::logic_error("FastH made " + std::to_string(product.blockCount()) + " blocks, the picture shows "
                               + std::to_string(pictures.blocks.size()));
    MatrixType qv = identity;
    product.prepare(v);
    product.apply(qv);

    // In the chosen precision: float shows its own ~1e-7, double its ~1e-15.
    auto orthogonality = [&](const MatrixType& q) { return double((q.transpose() * q - identity).norm()) / std::sqrt(double(s.d)); };
    pictures.uOrthogonalityError = orthogonality(qu);
    pictures.vOrthogonalityError = orthogonality(qv);
    pictures.uFactor = qu.template cast<double>();
    pictures.vFactor = qv.template cast<double>();
    const fasth::SvdLayer<Scalar> layer(u, v, pictures.sigma.cast<Scalar>(), options);
    pictures.w = layer.dense().template cast<double>();
}

} // namespace

FasthPictures computeFasthPictures(const FasthPictureSettings& settings)
{
    FasthPictures pictures;
    pictures.settings = settings;
    const int d = settings.d, k = settings.k;
    if (d < 1 || k < 1 || k > d || settings.blockSize < 1) {
        pictures.error = QStringLiteral("the pictures need 1 <= k <= d and a positive block size");
        return pictures;
    }
    try {
        std::mt19937_64 generator(settings.seed);
        // Gaussian reflectors, as in a trained SVD layer (no structure of zeros).
        pictures.uReflectors = gaussian(d, k, generator);
        pictures.vReflectors = gaussian(d, k, generator);
        pictures.sigma = randomSigma(d, generator);
        // FastH's split: consecutive runs of b reflectors, the last one ragged.
        for (int begin = 0; begin < k; begin += settings.blockSize)
            pictures.blocks.emplace_back(begin, std::min(settings.blockSize, k - begin));
        if (settings.precision == Precision::Double)
            formFactors<double>(pictures);
        else
            formFactors<float>(pictures);
    } catch (const std::exception& error) {
        pictures.error = QString::fromStdString(error.what());
    }
    return pictures;
}

// ---- Training ----

bool FasthTrainingSettings::isValid(QString* error) const
{
    auto fail = [error](const QString& message) {
        if (error)
            *error = message;
        return false;
    };
    if (d < 1 || k < 1 || k > d)
        return fail(QStringLiteral("the layer needs 1 <= k <= d"));
    if (samples < 1 || steps < 1 || blockSize < 1 || threads < 1 || timingRepeat < 1)
        return fail(QStringLiteral("samples, steps, block size, threads and repetitions must be positive"));
    if (!(learningRate > 0.0) || !std::isfinite(learningRate))
        return fail(QStringLiteral("the learning rate must be positive"));
    return true;
}

namespace {

// The regression problem the layer learns: inputs X and outputs T X for a fixed target T.
struct TrainingTarget {
    Eigen::VectorXd singularValues; // of T, descending
    Eigen::MatrixXd inputs;
    Eigen::MatrixXd outputs;
};

// The target T = A diag(t) B^T with A, B orthogonal (d reflectors each) and t log-spaced from 3
// down to 0.09: its singular values are known, so the learnt ones can be compared with the truth.
TrainingTarget makeTrainingTarget(const FasthTrainingSettings& s, const fasth::Options& options, std::mt19937_64& generator)
{
    TrainingTarget t;
    t.singularValues.resize(s.d);
    for (int i = 0; i < s.d; ++i)
        t.singularValues(i) = 3.0 * std::pow(0.03, s.d > 1 ? double(i) / double(s.d - 1) : 0.0);
    const fasth::SvdLayer<double> targetLayer(gaussian(s.d, s.d, generator), gaussian(s.d, s.d, generator), t.singularValues, options);
    t.inputs = gaussian(s.d, s.samples, generator);
    t.outputs = targetLayer.forward(t.inputs);
    return t;
}

// Runs Adam to the end (or until cancelled or diverged), publishing each step's loss and sigma to `state`
// for the live plot and keeping the whole history in `result`.
template <typename Scalar>
void runTrainer(fasth::SvdTrainer<Scalar>& trainer, FasthTrainingState& state, FasthTrainingResult& result)
{
    result.summary = trainer.run([&](const fasth::TrainingProgress& progress) {
        // The reported loss belongs to the parameters before this step: after iteration - 1 steps.
        const double iteration = double(progress.iteration - 1);
        result.iterations.push_back(iteration);
        result.losses.push_back(progress.loss);
        const Eigen::VectorXd sigma = trainer.layer().sigma().template cast<double>();
        {
            std::lock_guard lock(state.mutex);
            state.iterations.push_back(iteration);
            state.losses.push_back(progress.loss);
            state.sigma = sigma;
        }
        return !state.cancelRequested.load();
    });
    if (std::isfinite(result.summary.finalLoss)) {
        result.iterations.push_back(double(trainer.iteration()));
        result.losses.push_back(result.summary.finalLoss);
        std::lock_guard lock(state.mutex);
        state.iterations.push_back(double(trainer.iteration()));
        state.losses.push_back(result.summary.finalLoss);
    }
    result.sigma = trainer.layer().sigma().template cast<double>();
    result.cancelled = result.summary.termination == fasth::TrainingTermination::Cancelled;
}

// W^{-1} Y by the layer's SVD and by LU of the formed W; returns W for the determinant comparison.
template <typename Scalar>
fasth::Matrix<Scalar> compareInverse(const fasth::SvdLayer<Scalar>& layer, const fasth::Matrix<Scalar>& rhs, int repeat,
                                     FasthUseCaseComparison& c)
{
    using MatrixType = fasth::Matrix<Scalar>;
    c.rightHandSides = int(rhs.cols());
    MatrixType svdSolution, luSolution;
    c.svdInverseMs = medianMilliseconds(repeat, [&] { svdSolution = layer.inverse(rhs); });
    const MatrixType w = layer.dense();
    c.luSolveMs = medianMilliseconds(repeat, [&] {
        // Factor and solve: the weight changes at every training step, so the factorisation counts.
        const Eigen::PartialPivLU<MatrixType> lu(w);
        luSolution = lu.solve(rhs);
    });
    const double luScale = std::max(double(luSolution.cwiseAbs().maxCoeff()), 1e-300);
    c.inverseRelativeDifference = double((svdSolution - luSolution).cwiseAbs().maxCoeff()) / luScale;
    c.inverseResidual = double((w * svdSolution - rhs).cwiseAbs().maxCoeff()) / std::max(double(rhs.cwiseAbs().maxCoeff()), 1e-300);
    return w;
}

// log|det W| and its sign by the layer's SVD and by LU of the formed W.
template <typename Scalar>
void compareDeterminant(const fasth::SvdLayer<Scalar>& layer, const fasth::Matrix<Scalar>& w, int repeat, FasthUseCaseComparison& c)
{
    using MatrixType = fasth::Matrix<Scalar>;
    c.svdLogDetMs = medianMilliseconds(repeat, [&] { c.svdLogAbsDet = double(layer.logAbsDeterminant()); });
    int sign = ((layer.uReflectors().cols() + layer.vReflectors().cols()) % 2 == 0) ? 1 : -1;
    for (Eigen::Index i = 0; i < layer.sigma().size(); ++i)
        sign *= layer.sigma()(i) < Scalar(0) ? -1 : 1;
    c.svdDetSign = sign;
    c.luLogDetMs = medianMilliseconds(repeat, [&] {
        const Eigen::PartialPivLU<MatrixType> lu(w);
        // Summing logs of the pivots instead of lu.determinant() avoids overflow for large d.
        double sum = 0.0;
        int luSign = int(std::lround(double(lu.permutationP().determinant())));
        for (Eigen::Index i = 0; i < w.rows(); ++i) {
            const double pivot = double(lu.matrixLU()(i, i));
            sum += std::log(std::abs(pivot));
            luSign *= pivot < 0 ? -1 : 1;
        }
        c.luLogAbsDet = sum;
        c.luDetSign = luSign;
    });
}

template <typename Scalar>
void train(const FasthTrainingSettings& s, FasthTrainingState& state, FasthTrainingResult& result)
{
    using MatrixType = fasth::Matrix<Scalar>;
    const fasth::Options options = fasthOptions(s.blockSize, s.threads);
    // One generator for everything, drawn in a fixed order, so a seed always gives the same run.
    std::mt19937_64 generator(s.seed);
    const TrainingTarget target = makeTrainingTarget(s, options, generator);

    fasth::SvdLayer<Scalar> initial(gaussian(s.d, s.k, generator).cast<Scalar>(), gaussian(s.d, s.k, generator).cast<Scalar>(),
                                    randomSigma(s.d, generator).cast<Scalar>(), options);
    {
        std::lock_guard lock(state.mutex);
        state.targetSingularValues = target.singularValues;
        state.sigma = initial.sigma().template cast<double>();
        state.steps = s.steps;
    }
    result.targetSingularValues = target.singularValues;

    fasth::TrainingOptions training;
    training.optimizer = fasth::Optimizer::Adam;
    training.learningRate = s.learningRate;
    training.maxIterations = s.steps;
    fasth::SvdTrainer<Scalar> trainer(std::move(initial), target.inputs.cast<Scalar>(), target.outputs.cast<Scalar>(), training);
    runTrainer(trainer, state, result);
    if (result.cancelled || result.summary.termination == fasth::TrainingTermination::Diverged)
        return;

    // Inverse and determinant of the trained layer, by its SVD and by LU of the formed W.
    const MatrixType rhs = gaussian(s.d, s.samples, generator).cast<Scalar>();
    const MatrixType w = compareInverse(trainer.layer(), rhs, s.timingRepeat, result.useCases);
    compareDeterminant(trainer.layer(), w, s.timingRepeat, result.useCases);
}

} // namespace

FasthTrainingResult runFasthTraining(const FasthTrainingSettings& settings, FasthTrainingState& state)
{
    FasthTrainingResult result;
    result.settings = settings;
    QString invalid;
    if (!settings.isValid(&invalid)) {
        result.error = invalid;
        return result;
    }
    try {
        if (settings.precision == Precision::Double)
            train<double>(settings, state, result);
        else
            train<float>(settings, state, result);
    } catch (const std::exception& error) {
        result.error = QString::fromStdString(error.what());
    }
    return result;
}

} // namespace wfs
