// The device check's reference writers (engine/DeviceReference.h): the model in the device layout
// (gpu/model/ModelTranslation.h) and FastH, in the device check's file format (gpu/model/ReferenceFormat.h),
// with the CPU backend's values. Plain C++, built with or without CUDA; linked whole into wavefront-cli
// (the top-level CMakeLists.txt, wfs::device_reference), so its registration runs before main and app/ names
// no gpu/ code.
#include "engine/BackendFactory.h"
#include "engine/DeviceReference.h"
#include "fasth/HouseholderRunner.h"
#include "gpu/model/ReferenceFormat.h"
#include "gpu/model/ModelTranslation.h"

#include <cmath>
#include <stdexcept>

namespace wfs::gpu {

namespace {

using devicecheck::ReferenceWriter;

std::vector<int> dimsRecord(const ModelDims& d)
{
    return {d.n,
            d.planes,
            d.rowBegin,
            d.bandRows,
            d.pixels,
            d.terms,
            int(d.objective),
            d.gaussian ? 1 : 0,
            d.weighted ? 1 : 0,
            d.hostPupil ? 1 : 0,
            d.defocusTerms ? 1 : 0,
            d.blur ? 1 : 0,
            d.channels,
            d.fields};
}

// One model case: the problem in the device layout, then per point the block, the CPU's cost and
// gradient, and the result block -> gradient map (linear in the result block at a fixed point: read
// off costAndGradient with unit result blocks).
void writeModelCase(const std::string& path, const std::string& about, const std::shared_ptr<const Problem>& problem,
                    const std::vector<std::vector<double>>& points)
{
    const ModelInput in = modelInput(*problem, Precision::Double);
    const ModelDims& d = in.dims;
    EvaluatorOptions options;
    options.measurePlans = false;
    auto cpu = makeEvaluator(BackendKind::Cpu, problem, options, GradientKind::Adjoint);

    ReferenceWriter w(path);
    w.putText("about", about);
    w.put("dims", dimsRecord(d));
    w.put("pupilIndex", in.pupilIndex);
    w.put("x", in.x);
    w.put("y", in.y);
    w.put("transmission", in.transmission);
    w.put("basis", in.basis);
    w.put("diversity", in.diversity);
    w.put("defocusUnit", in.defocusUnit);
    w.put("transfer", in.transfer);
    std::vector<int> channelSizes;
    std::vector<double> channelScales;
    for (int c = 0; c < d.channels; ++c) {
        channelSizes.insert(channelSizes.end(), {d.channel[c].n, d.channel[c].shift});
        channelScales.insert(channelScales.end(), {d.channel[c].phaseScale, d.channel[c].powerScale});
        w.put("channelIndex." + std::to_string(c), in.channelIndex[size_t(c)]);
    }
    w.put("channels", channelSizes);
    w.put("channelScales", channelScales);
    w.put("vectorialMatrix", in.vectorialMatrix);
    w.put("depthRate", in.depthRate);
    w.put("coverslipPhase", in.coverslipPhase);
    w.put("data", in.data);
    w.put("weights", in.weights);
    w.put("scales", problem->parameterScales());
    w.put("points", std::vector<int>{int(points.size())});
    for (size_t i = 0; i < points.size(); ++i) {
        std::string suffix(1, '.'); // (not "." + to_string: GCC 12 warns about a memcpy overlap there)
        suffix += std::to_string(i);
        const std::vector<double>& x = points[i];
        const ModelParameters p = problem->unpack(x.data());
        w.put("parameters" + suffix, x);
        w.put("block" + suffix, parameterBlock(*problem, d, p));
        std::vector<double> gradient(x.size());
        const double cost = cpu->evaluate(x.data(), gradient.data());
        if (!std::isfinite(cost))
            throw std::runtime_error("device-reference: the CPU cost of " + about + " at point " + std::to_string(i) + " is not finite");
        w.put("cost" + suffix, std::vector<double>{cost});
        w.put("gradient" + suffix, gradient);
        // The host's part that does not depend on the result block (a zonal pupil's smoothness prior), then the
        // linear map from the result block to the rest of the gradient, one unit block at a time.
        std::vector<double> unit(size_t(d.resultSize()), 0.0), g(x.size()), offset(x.size());
        const double offsetCost = costAndGradient(*problem, d, p, unit.data(), offset.data());
        w.put("offsetCost" + suffix, std::vector<double>{offsetCost});
        w.put("offsetGradient" + suffix, offset);
        std::vector<int> free, row;
        std::vector<double> coefficient;
        for (int r = 0; r < d.resultSize(); ++r) {
            unit[size_t(r)] = 1.0;
            costAndGradient(*problem, d, p, unit.data(), g.data());
            unit[size_t(r)] = 0.0;
            for (size_t f = 0; f < g.size(); ++f)
                if (g[f] != offset[f]) {
                    free.push_back(int(f));
                    row.push_back(r);
                    coefficient.push_back(g[f] - offset[f]);
                }
        }
        w.put("mapFree" + suffix, free);
        w.put("mapRow" + suffix, row);
        w.put("mapCoefficient" + suffix, coefficient);
        if (i == 0) {
            std::vector<double> images;
            for (const std::vector<double>& plane : cpu->modelImages(x.data()))
                images.insert(images.end(), plane.begin(), plane.end());
            w.put("images" + suffix, images);
        }
    }
    w.finish();
}

std::vector<double> flat(const Eigen::MatrixXd& m)
{
    return std::vector<double>(m.data(), m.data() + m.size());
}

void writeFasthCase(const std::string& path, int d, int k, int m, int block, std::uint64_t seed)
{
    const auto data = fasth::BenchData::generate(d, k, m, seed, true, true);
    fasth::BenchConfig config;
    config.precision = Precision::Double;
    config.blockSize = block;
    config.treeLevels = 2;
    config.threads = 1;
    auto cpu = fasth::makeCpuRunner();
    cpu->setProblem(data, config);
    const fasth::BenchResult forward = cpu->reference(fasth::BenchMethod::Sequential, fasth::Pass::Forward);
    const fasth::BenchResult backward = cpu->reference(fasth::BenchMethod::Sequential, fasth::Pass::Backward);
    const fasth::BenchResult inverse = cpu->reference(fasth::BenchMethod::SvdInverse, fasth::Pass::Forward);
    const fasth::BenchResult logdet = cpu->reference(fasth::BenchMethod::SvdLogDet, fasth::Pass::Forward);

    ReferenceWriter w(path);
    w.putText("about", "FastH d=" + std::to_string(d) + " k=" + std::to_string(k) + " m=" + std::to_string(m)
                           + " block=" + std::to_string(block) + " tree levels 2, BenchData seed " + std::to_string(seed)
                           + ", CPU sequential (Eigen) float64");
    w.put("dims", std::vector<int>{d, k, m, block, config.treeLevels});
    w.put("reflectors", flat(data->reflectors));
    w.put("tau", flat(data->tau));
    w.put("x", flat(data->x));
    w.put("outputGradient", flat(data->outputGradient));
    w.put("svdU", flat(data->svdU));
    w.put("svdV", flat(data->svdV));
    w.put("sigma", flat(data->sigma));
    w.put("forward", flat(forward.output));
    w.put("gradX", flat(backward.output));
    w.put("gradV", flat(backward.gradV));
    w.put("inverse", flat(inverse.output));
    w.put("logdet", flat(logdet.output));
    w.finish();
}

[[maybe_unused]] const bool kRegistered = registerDeviceReferenceWriters({writeModelCase, writeFasthCase});

} // namespace

} // namespace wfs::gpu
