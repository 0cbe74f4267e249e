#include "ModelCases.h"

#include "gpu/DeviceResources.h"
#include "OofProblem.h"
#include "gpu/model/ModelLayout.h"
#include "gpu/model/ModelMath.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

namespace wfs::devicecheck {

namespace dc = ::wfs::devicecheck;

namespace {

// The case's sizes and switches (the "dims" record), checked for plausibility.
gpu::ModelDims readModelDims(const ReferenceFile& f)
{
    const std::vector<int>& dims = f.ints("dims", 14);
    gpu::ModelDims d;
    d.n = dims[0];
    d.planes = dims[1];
    d.rowBegin = dims[2];
    d.bandRows = dims[3];
    d.pixels = dims[4];
    d.terms = dims[5];
    if (dims[6] < 0 || dims[6] > 2)
        throw std::runtime_error(f.path() + ": unknown objective " + std::to_string(dims[6]));
    d.objective = gpu::DeviceObjective(dims[6]);
    d.gaussian = dims[7] != 0;
    d.weighted = dims[8] != 0;
    d.hostPupil = dims[9] != 0;
    d.defocusTerms = dims[10] != 0;
    d.blur = dims[11] != 0;
    d.channels = dims[12];
    if (d.channels < 0 || d.channels > gpu::ModelDims::kMaxChannels || (d.channels > 0 && !d.hostPupil))
        throw std::runtime_error(f.path() + ": implausible channel count " + std::to_string(d.channels));
    d.fields = dims[13];
    if (d.fields < 0 || d.fields > 6)
        throw std::runtime_error(f.path() + ": implausible vectorial field count " + std::to_string(d.fields));
    d.realBytes = 8;
    if (d.n < 2 || d.planes < 1 || d.pixels < 1 || (d.terms < 1 && !d.hostPupil) || d.rowBegin < 0 || d.bandRows < 1
        || d.rowBegin + d.bandRows > d.n)
        throw std::runtime_error(f.path() + ": implausible dims");
    return d;
}

// The wavelength channels' grids, scales and pupil indices (polychromatic cases), each checked against its grid.
void readChannels(const ReferenceFile& f, long long pixels, ModelCase& c)
{
    gpu::ModelDims& d = c.input.dims;
    const std::vector<int> channelSizes = f.ints("channels", 2LL * d.channels);
    const std::vector<double> channelScales = f.doubles("channelScales", 2LL * d.channels);
    for (int k = 0; k < d.channels; ++k) {
        gpu::ChannelDims& ch = d.channel[k];
        ch.n = channelSizes[size_t(2 * k)];
        ch.shift = channelSizes[size_t(2 * k + 1)];
        ch.phaseScale = channelScales[size_t(2 * k)];
        ch.powerScale = channelScales[size_t(2 * k + 1)];
        if (ch.n < 2 || 2 * ch.shift != ch.n - d.n)
            throw std::runtime_error(f.path() + ": implausible channel " + std::to_string(k));
        c.input.channelIndex.push_back(f.ints("channelIndex." + std::to_string(k), pixels));
        for (int i : c.input.channelIndex.back())
            if (i < 0 || i >= ch.n * ch.n)
                throw std::runtime_error(f.path() + ": a channel's pupil index is out of its grid");
    }
}

// Point i: the parameters, the cost and gradient the reference computed there, and its gradient map.
ModelPoint readModelPoint(const ReferenceFile& f, const ModelCase& c, int i)
{
    const gpu::ModelDims& d = c.input.dims;
    const std::string s = "." + std::to_string(i);
    ModelPoint p;
    p.block = f.doubles("block" + s, d.parameterBlockSize());
    p.cost = f.doubles("cost" + s, 1)[0];
    p.gradient = f.doubles("gradient" + s, (long long)c.scales.size());
    p.offsetCost = f.doubles("offsetCost" + s, 1)[0];
    p.offsetGradient = f.doubles("offsetGradient" + s, (long long)c.scales.size());
    p.mapFree = f.ints("mapFree" + s);
    p.mapRow = f.ints("mapRow" + s, (long long)p.mapFree.size());
    p.mapCoefficient = f.doubles("mapCoefficient" + s, (long long)p.mapFree.size());
    for (std::size_t j = 0; j < p.mapFree.size(); ++j)
        if (p.mapFree[j] < 0 || std::size_t(p.mapFree[j]) >= c.scales.size() || p.mapRow[j] < 0 || p.mapRow[j] >= d.resultSize())
            throw std::runtime_error(f.path() + ": gradient map entry " + std::to_string(j) + " out of range");
    if (i == 0)
        p.images = f.doubles("images" + s, (long long)d.gridElements());
    if (!std::isfinite(p.cost) || maxAbs(p.gradient) != maxAbs(p.gradient) || !std::isfinite(maxAbs(p.block)))
        throw std::runtime_error(f.path() + ": point " + std::to_string(i) + " has non-finite values");
    return p;
}

} // namespace

ModelCase loadModelCase(const ReferenceFile& f, const std::string& name)
{
    ModelCase c;
    c.name = name;
    c.about = f.text("about");
    c.input.dims = readModelDims(f);
    const gpu::ModelDims& d = c.input.dims;
    const long long pixels = d.pixels;
    c.input.pupilIndex = f.ints("pupilIndex", pixels);
    c.input.x = f.doubles("x", pixels);
    c.input.y = f.doubles("y", pixels);
    c.input.transmission = f.doubles("transmission", pixels);
    c.input.basis = f.doubles("basis", pixels * d.terms);
    c.input.diversity = f.doubles("diversity", pixels * d.planes);
    c.input.defocusUnit = f.doubles("defocusUnit", d.defocusTerms ? pixels * d.planes : 0);
    c.input.transfer = f.doubles("transfer", d.blur ? (long long)d.n * d.n : 0);
    readChannels(f, pixels, c);
    c.input.vectorialMatrix = f.doubles("vectorialMatrix", 2 * pixels * d.fields);
    c.input.depthRate = f.doubles("depthRate", d.fields > 0 ? 2 * pixels : 0);
    c.input.coverslipPhase = f.doubles("coverslipPhase", d.fields > 0 ? 2 * pixels : 0);
    c.input.data = f.doubles("data", (long long)d.gridElements());
    c.input.weights = f.doubles("weights", d.weighted ? (long long)d.gridElements() : 0);
    gpu::makeBandMap(d, c.input.pupilIndex); // throws when a pupil pixel lies outside the band
    c.scales = f.doubles("scales");
    const int count = f.ints("points", 1)[0];
    if (count < 1)
        throw std::runtime_error(f.path() + ": no points");
    for (int i = 0; i < count; ++i)
        c.points.push_back(readModelPoint(f, c, i));
    return c;
}

gpu::ModelInput withPrecision(gpu::ModelInput input, int realBytes)
{
    input.dims.realBytes = realBytes;
    return input;
}

namespace {

// The CPU's cost recomputed from the CPU's images and the data (device layout): checks the images, the
// data layout, the weights and the cost of the file against each other, without a device.
double costFromImages(const ModelCase& c)
{
    const gpu::ModelDims& d = c.input.dims;
    const std::vector<double>& images = c.points[0].images;
    double cost = 0.0;
    const std::size_t perPlane = std::size_t(d.n) * std::size_t(d.n);
    for (int k = 0; k < d.planes; ++k)
        for (int row = 0; row < d.n; ++row)
            for (int col = 0; col < d.n; ++col) {
                const std::size_t e = d.element(k, row, col);
                const double w = d.weighted ? c.input.weights[e] : 1.0;
                if (w == 0.0)
                    continue;
                const double model = images[std::size_t(k) * perPlane + std::size_t(row) * std::size_t(d.n) + std::size_t(col)];
                const double observed = c.input.data[e];
                if (d.objective == gpu::DeviceObjective::Poisson) {
                    if (model <= 0.0) {
                        if (observed > 0.0)
                            return std::numeric_limits<double>::infinity();
                        continue;
                    }
                    cost += w * gpu::math::poissonDeviance(observed, model);
                } else {
                    cost += w * (observed - model) * (observed - model);
                }
            }
    return cost;
}

// Cost and free-parameter gradient from a device result block through the file's map.
double costOf(const gpu::ModelDims& d, const double* result, bool* invalid)
{
    double cost = 0.0;
    *invalid = false;
    for (int k = 0; k < d.planes; ++k) {
        cost += result[d.cost(k)];
        *invalid = *invalid || result[d.invalidCount(k)] > 0.0;
    }
    return cost;
}

std::vector<double> gradientOf(const ModelCase& c, const ModelPoint& p, const double* result)
{
    std::vector<double> g = p.offsetGradient;
    for (std::size_t j = 0; j < p.mapFree.size(); ++j)
        g[std::size_t(p.mapFree[j])] += p.mapCoefficient[j] * result[p.mapRow[j]];
    return g;
}

// Empty when a matches b: every component |a_i - b_i| s_i <= tolerance (relative ? |b_i s_i| : 0) +
// tolerance * largest |b s| (tst_gpumodel's rule); else what differs.
std::string compareGradient(const ModelCase& c, const std::vector<double>& a, const std::vector<double>& b, double tolerance, bool relative,
                            double* worst)
{
    double largest = 0.0;
    for (std::size_t i = 0; i < b.size(); ++i)
        largest = std::max(largest, std::abs(b[i] * c.scales[i]));
    *worst = 0.0;
    std::string why;
    for (std::size_t i = 0; i < b.size(); ++i) {
        const double diff = std::abs(a[i] - b[i]) * c.scales[i];
        const double allowed = tolerance * largest + (relative ? tolerance * std::abs(b[i] * c.scales[i]) : 0.0);
        *worst = std::max(*worst, largest > 0 ? diff / largest : diff);
        if (!(diff <= allowed) && why.empty())
            why =
                "gradient[" + std::to_string(i) + "] " + sci(a[i]) + ", reference " + sci(b[i]) + " (largest scaled " + sci(largest) + ")";
    }
    return why;
}

struct Evaluation {
    double cost = 0.0;
    bool invalid = false;
    std::vector<double> gradient;
    double costOnly = 0.0;
};

struct Tolerances {
    double cost, gradient, image;
    bool relative;
};

Tolerances tolerancesFor(int realBytes)
{
    // tst_gpumodel's: float64 1e-10 (component-wise relative), images 1e-12 of the peak; float32 is held
    // against the float64 CPU: 1e-4 of the largest component, images 1e-5 of the peak.
    return realBytes == 8 ? Tolerances{1e-10, 1e-10, 1e-12, true} : Tolerances{1e-4, 1e-4, 1e-5, false};
}

// One device variant of a model case against the CPU; fills evaluations (per point) for the
// cross-variant checks.
std::string runModelVariant(const ModelCase& c, int realBytes, bool graphs, std::vector<Evaluation>* evaluations, std::string* detail)
{
    const Tolerances tol = tolerancesFor(realBytes);
    gpu::ModelDevice device(0, withPrecision(c.input, realBytes), graphs);
    const gpu::ModelDims& d = device.dims();
    if (graphs && device.launchMode() != "graph")
        return "asked for CUDA graphs, got: " + device.launchMode();
    if (!graphs && device.launchMode().rfind("stream", 0) != 0)
        return "asked for stream launches, got: " + device.launchMode();
    double worstCost = 0.0, worstGradient = 0.0, worstImage = 0.0;
    for (std::size_t i = 0; i < c.points.size(); ++i) {
        const ModelPoint& p = c.points[i];
        const std::string at = "point " + std::to_string(i) + ": ";
        Evaluation e;
        const double* result = device.evaluate(p.block.data(), true);
        e.cost = costOf(d, result, &e.invalid) + p.offsetCost;
        e.gradient = gradientOf(c, p, result);
        if (e.invalid)
            return at + "the device counts pixels where the Poisson model is not positive; the CPU cost is finite";
        const double costError = std::abs(e.cost - p.cost) / std::abs(p.cost);
        worstCost = std::max(worstCost, costError);
        if (!(costError <= tol.cost))
            return at + "cost " + sci(e.cost) + ", CPU " + sci(p.cost) + " (relative " + sci(costError) + ")";
        double g = 0.0;
        const std::string why = compareGradient(c, e.gradient, p.gradient, tol.gradient, tol.relative, &g);
        worstGradient = std::max(worstGradient, g);
        if (!why.empty())
            return at + why;
        bool invalid = false;
        e.costOnly = costOf(d, device.evaluate(p.block.data(), false), &invalid) + p.offsetCost;
        const double costOnlyError = std::abs(e.costOnly - e.cost) / std::abs(e.cost);
        if (!(costOnlyError <= (realBytes == 8 ? 1e-14 : 1e-6)))
            return at + "cost-only evaluation " + sci(e.costOnly) + " differs from the gradient evaluation's " + sci(e.cost);
        if (!p.images.empty()) {
            const std::vector<double> images = device.intensities(p.block.data());
            const std::size_t perPlane = std::size_t(d.n) * std::size_t(d.n);
            for (int k = 0; k < d.planes; ++k) {
                const std::vector<double> ref(p.images.begin() + long(std::size_t(k) * perPlane),
                                              p.images.begin() + long(std::size_t(k + 1) * perPlane));
                const std::vector<double> got(images.begin() + long(std::size_t(k) * perPlane),
                                              images.begin() + long(std::size_t(k + 1) * perPlane));
                const double peak = maxAbs(ref);
                const double err = maxError(got, ref, peak);
                worstImage = std::max(worstImage, err);
                if (!(err <= tol.image))
                    return at + "plane " + std::to_string(k) + " image differs by " + sci(err) + " of its peak";
            }
        }
        evaluations->push_back(std::move(e));
    }
    *detail = "launch " + device.launchMode() + "; worst cost " + sci(worstCost) + ", gradient " + sci(worstGradient) + ", images "
              + sci(worstImage);
    return {};
}

} // namespace

void checkModelFile(Tally& tally, const ModelCase& c)
{
    tally.run("reference/model/" + c.name + "/cost-from-images", [&]() -> std::string {
        const double cost = costFromImages(c) + c.points[0].offsetCost;
        const double err = std::abs(cost - c.points[0].cost) / std::abs(c.points[0].cost);
        tally.detail("relative " + sci(err));
        return err <= 1e-9 ? std::string() : "the CPU images and data give cost " + sci(cost) + ", the file says " + sci(c.points[0].cost);
    });
    if (c.name.rfind("oof-", 0) == 0) {
        tally.run("reference/model/" + c.name + "/oof-generator", [&]() -> std::string {
            const gpu::ModelDims& d = c.input.dims;
            int order = 0;
            while ((order + 1) * (order + 2) / 2 < d.terms)
                ++order;
            const dc::OofCase g = dc::makeOofCase(d.n, order, 8);
            const gpu::ModelDims& e = g.input.dims;
            if (e.n != d.n || e.planes != d.planes || e.rowBegin != d.rowBegin || e.bandRows != d.bandRows || e.pixels != d.pixels
                || e.terms != d.terms || e.gaussian != d.gaussian || e.weighted != d.weighted)
                return "the generator's dims differ from the engine's OOF preset";
            if (g.input.pupilIndex != c.input.pupilIndex)
                return "the generator's pupil differs from the engine's";
            double worst = 0.0;
            for (const auto& [a, b] : {std::pair<const std::vector<double>*, const std::vector<double>*>{&g.input.x, &c.input.x},
                                       {&g.input.y, &c.input.y},
                                       {&g.input.transmission, &c.input.transmission},
                                       {&g.input.basis, &c.input.basis},
                                       {&g.input.diversity, &c.input.diversity},
                                       {&g.start, &c.points[0].block}})
                worst = std::max(worst, maxError(*a, *b, std::max(1.0, maxAbs(*b))));
            tally.detail("largest difference " + sci(worst));
            return worst <= 1e-12 ? std::string() : "the generator differs from the engine's OOF preset by " + sci(worst);
        });
    }
}

void checkModelOnDevice(Tally& tally, const ModelCase& c, bool quick, const std::string& noDevice)
{
    auto skipAll = [&](const std::string& name) { tally.skip(name, "no device (" + noDevice + ")"); };
    const std::string prefix = "model/" + c.name + "/";
    struct Variant {
        int realBytes;
        bool graphs;
        const char* name;
    };
    std::vector<Variant> variants = {{8, true, "double/graph"}, {8, false, "double/stream"}, {4, true, "float/graph"}};
    if (!quick)
        variants.push_back({4, false, "float/stream"});
    std::map<std::string, std::vector<Evaluation>> results;
    for (const Variant& v : variants) {
        if (!noDevice.empty()) {
            skipAll(prefix + v.name);
            continue;
        }
        tally.run(prefix + v.name, [&]() -> std::string {
            std::vector<Evaluation> evaluations;
            std::string detail;
            const std::string failure = runModelVariant(c, v.realBytes, v.graphs, &evaluations, &detail);
            tally.detail(detail);
            if (failure.empty())
                results[v.name] = std::move(evaluations);
            return failure;
        });
    }
    // Graphs against streams: the same kernels and plans in the same order give the same numbers.
    for (const auto& [a, b, what, tolerance] :
         {std::tuple<const char*, const char*, const char*, double>{"double/graph", "double/stream", "graph-vs-stream", 1e-13},
          {"double/graph", "float/graph", "float-vs-double", 1e-4}}) {
        if (!noDevice.empty()) {
            skipAll(prefix + what);
            continue;
        }
        tally.run(prefix + what, [&, a = a, b = b, tolerance = tolerance]() -> std::string {
            if (!results.count(a) || !results.count(b))
                return std::string("needs both ") + a + " and " + b + " to pass first";
            double worst = 0.0;
            for (std::size_t i = 0; i < c.points.size(); ++i) {
                const Evaluation& x = results[a][i];
                const Evaluation& y = results[b][i];
                const double costError = std::abs(x.cost - y.cost) / std::abs(x.cost);
                if (!(costError <= tolerance))
                    return "point " + std::to_string(i) + ": cost " + sci(x.cost) + " vs " + sci(y.cost);
                double g = 0.0;
                const std::string why = compareGradient(c, y.gradient, x.gradient, tolerance, false, &g);
                worst = std::max({worst, costError, g});
                if (!why.empty())
                    return "point " + std::to_string(i) + ": " + why;
            }
            tally.detail("largest difference " + sci(worst));
            return {};
        });
    }
}

void checkOutOfMemory(Tally& tally, const std::vector<ModelCase>& models, bool quick, const std::string& noDevice)
{
    auto skipAll = [&](const std::string& name) { tally.skip(name, "no device (" + noDevice + ")"); };
    if (!noDevice.empty()) {
        skipAll("memory/out-of-memory-then-recovery");
    } else if (!quick) {
        tally.run("memory/out-of-memory-then-recovery", [&]() -> std::string {
            const dc::OofCase big = dc::makeOofCase(2048, 8, 8);
            WFS_CUDA_CHECK(cudaSetDevice(0));
            std::size_t freeBytes = 0, totalBytes = 0;
            WFS_CUDA_CHECK(cudaMemGetInfo(&freeBytes, &totalBytes));
            const std::size_t resident = big.input.dims.residentBytes();
            const std::size_t leave = resident / 4 + (std::size_t(128) << 20);
            if (freeBytes <= leave)
                return "only " + std::to_string(freeBytes >> 20) + " MiB free: cannot set up the test";
            std::string message;
            try {
                gpu::DeviceBuffer<char> hog(freeBytes - leave); // inside the try: a refused hog is a failure, not a crash
                try {
                    gpu::ModelDevice refused(0, big.input, true);
                    return "a 2048 x 2048 float64 model was made in a quarter of the memory it needs";
                } catch (const gpu::CudaError& error) {
                    message = error.what();
                }
            } catch (const gpu::CudaError& error) {
                return std::string("could not take the memory to leave too little: ") + error.what();
            }
            if (message.find("out of GPU memory") == std::string::npos || message.find("2048 x 2048") == std::string::npos)
                return "the refusal does not say out of GPU memory with the sizes: " + message;
            // Recovery: the hog is gone; the same size now fits and a reference case still agrees.
            gpu::ModelDevice fits(0, big.input, true);
            fits.evaluate(big.start.data(), true);
            if (models.empty())
                return "no model reference case to check the recovery with";
            std::vector<Evaluation> evaluations;
            std::string detail;
            const std::string failure = runModelVariant(models.front(), 8, true, &evaluations, &detail);
            tally.detail("refusal: " + message.substr(0, 120) + "...; after: " + detail);
            return failure;
        });
    }
}

} // namespace wfs::devicecheck
