#include "engine/SpeedupExperiment.h"

#include "base/CsvText.h"
#include "optics/Zernike.h"

#include <QObject>
#include <QThread>

#include <algorithm>
#include <cmath>

namespace wfs {

namespace {

double maxCoefficientDifference(const std::vector<double>& a, const std::vector<double>& b, int order)
{
    const int zernikeParameters = zernike::termCount(order) - 1; // the OOF layout: c_1..c_{J-1} first
    if (a.size() < size_t(zernikeParameters) || b.size() < size_t(zernikeParameters))
        return std::nan("");
    double largest = 0.0;
    for (int i = 0; i < zernikeParameters; ++i)
        largest = std::max(largest, std::abs(a[size_t(i)] - b[size_t(i)]));
    return largest / (2.0 * M_PI); // radians to waves
}

LabRow measuredRow(int method, int grid, int order, const OofBenchmarkRow& bench, const std::vector<double>* reference)
{
    LabRow row;
    row.method = method;
    row.grid = grid;
    row.order = order;
    row.bench = bench;
    row.seconds = bench.seconds;
    row.iterations = bench.summary.iterations;
    row.costEvaluations = bench.summary.costEvaluations;
    row.evaluationsPerSecond = bench.seconds > 0 ? double(bench.summary.costEvaluations) / bench.seconds : 0.0;
    row.finalCost = bench.summary.finalCost;
    row.maxCoefficientDifferenceWaves = reference ? maxCoefficientDifference(bench.summary.parameters, *reference, order) : 0.0;
    return row;
}

OofBenchmarkSettings benchSettings(const LabMethod& m, int grid, int order, int evalRepeat, const std::atomic<bool>* cancel)
{
    OofBenchmarkSettings s;
    s.grid = grid;
    s.order = order;
    s.backend = m.backend;
    s.gradient = m.gradient;
    s.evaluator.precision = m.precision;
    s.evaluator.threads = m.threads;
    s.evalRepeat = evalRepeat;
    s.cancel = cancel;
    return s;
}

} // namespace

std::vector<LabMethod> labMethods()
{
    const int all = std::max(1, QThread::idealThreadCount());
    return {
        {QObject::tr("finite differences, CPU float64, 1 thread (baseline)"), BackendKind::Cpu, GradientKind::FiniteDifference,
         Precision::Double, 1},
        {QObject::tr("adjoint, CPU float64, 1 thread (reference)"), BackendKind::Cpu, GradientKind::Adjoint, Precision::Double, 1},
        {QObject::tr("adjoint, CPU float32, 1 thread"), BackendKind::Cpu, GradientKind::Adjoint, Precision::Float, 1},
        {QObject::tr("adjoint, CPU float64, %1 threads").arg(all), BackendKind::Cpu, GradientKind::Adjoint, Precision::Double, all},
        {QObject::tr("adjoint, CPU float32, %1 threads").arg(all), BackendKind::Cpu, GradientKind::Adjoint, Precision::Float, all},
        {QObject::tr("adjoint, GPU float64"), BackendKind::Gpu, GradientKind::Adjoint, Precision::Double, 1},
        {QObject::tr("adjoint, GPU float32"), BackendKind::Gpu, GradientKind::Adjoint, Precision::Float, 1},
    };
}

std::string labCsv(const std::vector<LabRow>& rows)
{
    const auto methods = labMethods();
    QString csv = QStringLiteral("# Wavefront Studio speed-up lab: OOF benchmark (Nikolic 2018), BFGS; seconds = time to solution; "
                                 "estimated rows were not run (reference gradient evaluations x measured time per gradient)\n");
    csv +=
        QStringLiteral("method,backend,gradient,precision,threads,grid,order,params,estimated,seconds,iterations,cost_evaluations,"
                       "gradient_evaluations,eval_ms,cost_ms,fft_ms,evaluations_per_second,final_cost,max_coefficient_difference_waves\n");
    for (const LabRow& r : rows) {
        const LabMethod& m = methods[size_t(r.method)];
        csv += QStringLiteral("%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19\n")
                   .arg(QString::fromStdString(csvQuoted(m.name.toStdString())), QString::fromLatin1(backendName(m.backend)),
                        QString::fromLatin1(gradientName(m.gradient)), QString::fromLatin1(precisionName(m.precision)))
                   .arg(m.threads)
                   .arg(r.grid)
                   .arg(r.order)
                   .arg(r.bench.parameters)
                   .arg(r.estimated ? QStringLiteral("yes") : QStringLiteral("no"))
                   .arg(r.seconds, 0, 'g', 17)
                   .arg(r.iterations)
                   .arg(r.costEvaluations)
                   .arg(r.estimated ? 0 : r.bench.summary.gradientEvaluations)
                   .arg(r.bench.evalMs, 0, 'g', 17)
                   .arg(r.bench.costMs, 0, 'g', 17)
                   .arg(r.bench.fftMs, 0, 'g', 17)
                   .arg(r.evaluationsPerSecond, 0, 'g', 17)
                   .arg(std::isfinite(r.finalCost) ? QString::number(r.finalCost, 'g', 17) : QString())
                   .arg(std::isfinite(r.maxCoefficientDifferenceWaves) ? QString::number(r.maxCoefficientDifferenceWaves, 'g', 17)
                                                                       : QString());
    }
    return csv.toStdString();
}

double predictedAdjointSpeedup(int parameters)
{
    return (parameters + 1) / 2.0;
}

std::vector<LabSpeedup> labSpeedups(const std::vector<LabRow>& rows)
{
    std::map<std::pair<int, int>, const LabRow*> baselines; // (grid, order)
    for (const LabRow& r : rows)
        if (r.method == kBaselineMethod && r.seconds > 0)
            baselines[{r.grid, r.order}] = &r;
    std::vector<LabSpeedup> speedups;
    for (const LabRow& r : rows) {
        const auto base = baselines.find({r.grid, r.order});
        if (r.method != kBaselineMethod && r.seconds > 0 && base != baselines.end())
            speedups.push_back({&r, base->second, base->second->seconds / r.seconds});
    }
    return speedups;
}

void runSpeedupExperiment(const LabSettings& settings, const std::vector<LabRow>& redo, const SpeedupReferences& references,
                          const std::function<void(const LabRow&)>& post, const std::atomic<bool>& cancel)
{
    const auto methods = labMethods();
    if (!redo.empty()) {
        for (const LabRow& old : redo) {
            if (cancel)
                break;
            const auto reference = references.find({old.grid, old.order});
            const OofBenchmarkRow bench = runOofBenchmark(benchSettings(methods[size_t(old.method)], old.grid, old.order, 1, &cancel));
            if (bench.summary.termination != Termination::Cancelled)
                post(measuredRow(old.method, old.grid, old.order, bench, reference == references.end() ? nullptr : &reference->second));
        }
    } else {
        for (int order : settings.orders) {
            for (int grid : settings.grids) {
                if (cancel)
                    break;
                const OofBenchmarkRow ref =
                    runOofBenchmark(benchSettings(methods[kReferenceMethod], grid, order, settings.evalRepeat, &cancel));
                if (ref.summary.termination == Termination::Cancelled)
                    break;
                post(measuredRow(kReferenceMethod, grid, order, ref, nullptr));
                for (int m : settings.methods) {
                    if (m == kReferenceMethod || cancel)
                        continue;
                    const LabMethod& method = methods[size_t(m)];
                    if (method.gradient == GradientKind::FiniteDifference && !settings.runBaselinesForReal) {
                        // Time one finite-difference gradient, then decide whether to fit for real.
                        OofBenchmarkSettings timing = benchSettings(method, grid, order, 1, &cancel);
                        timing.solve = false;
                        const OofBenchmarkRow measured = runOofBenchmark(timing);
                        const double estimate = double(ref.summary.gradientEvaluations) * measured.evalMs * 1e-3;
                        if (estimate > settings.estimateAboveSeconds) {
                            LabRow row;
                            row.method = m;
                            row.grid = grid;
                            row.order = order;
                            row.estimated = true;
                            row.bench = measured;
                            row.seconds = estimate;
                            row.iterations = ref.summary.iterations;
                            row.costEvaluations = ref.summary.gradientEvaluations * (measured.parameters + 1);
                            row.evaluationsPerSecond = double(row.costEvaluations) / estimate;
                            row.finalCost = std::nan("");
                            row.maxCoefficientDifferenceWaves = std::nan("");
                            post(row);
                            continue;
                        }
                    }
                    const OofBenchmarkRow bench = runOofBenchmark(benchSettings(method, grid, order, settings.evalRepeat, &cancel));
                    if (bench.summary.termination == Termination::Cancelled)
                        break;
                    post(measuredRow(m, grid, order, bench, &ref.summary.parameters));
                }
            }
        }
    }
}

} // namespace wfs
