// wfs-device-check: the GPU backend's device check without the engine (no Qt, FFTW, Eigen or core):
//   wfs-device-check check --reference DIR [--quick]
//       reads and validates the reference files (`wavefront-cli device-reference`, CPU backend), then,
//       with a device, holds the CUDA model and FastH against them: model against the CPU's costs,
//       gradients and images; FastH against the CPU's products and gradients; CUDA graphs against
//       stream launches; float32 against float64; out of memory, then recovery. Without a device the
//       device cases are reported "SKIP ... no device" and counted as skipped. Closing line:
//       "N passed, N failed, N skipped (...)"; exit status 0 when nothing failed.
//   wfs-device-check bench-oof [--grid LIST] [--order N] [--precision LIST] [--launch LIST] [--eval-repeat E]
//                              [--budget SECONDS]
//   wfs-device-check bench-fasth [--d LIST] [--batch LIST] [--block LIST] [--precision LIST] [--repeat R]
//                                [--budget SECONDS]
//       timings, one JSON object per line; rows that do not fit the budget are left out and counted in a
//       closing {"kind": "trimmed", ...} row.
#include "DeviceResources.h"
#include "GpuDevice.h"
#include "OofProblem.h"
#include "ReferenceFormat.h"
#include "fasth/FasthDevice.h"
#include "model/ModelDevice.h"
#include "model/ModelLayout.h"
#include "model/ModelMath.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace dc = wfs::devicecheck;
namespace gpu = wfs::gpu;

namespace {

// ---- small helpers ----

double maxAbs(const std::vector<double>& v)
{
    double m = 0.0;
    for (double x : v)
        m = std::max(m, std::abs(x));
    return m;
}

// Largest |a_i - b_i| / scale; NaN anywhere counts as infinitely wrong.
template <typename A>
double maxError(const std::vector<A>& a, const std::vector<double>& b, double scale)
{
    if (a.size() != b.size())
        return std::numeric_limits<double>::infinity();
    double e = 0.0;
    for (std::size_t i = 0; i < a.size(); ++i) {
        const double d = std::abs(double(a[i]) - b[i]);
        if (!(d == d))
            return std::numeric_limits<double>::infinity();
        e = std::max(e, d / scale);
    }
    return e;
}

std::string sci(double v)
{
    char text[32];
    std::snprintf(text, sizeof text, "%.2e", v);
    return text;
}

std::vector<int> intList(const std::string& text)
{
    std::vector<int> out;
    std::stringstream in(text);
    std::string item;
    while (std::getline(in, item, ','))
        out.push_back(std::stoi(item));
    return out;
}

std::vector<std::string> wordList(const std::string& text)
{
    std::vector<std::string> out;
    std::stringstream in(text);
    std::string item;
    while (std::getline(in, item, ','))
        out.push_back(item);
    return out;
}

double seconds(std::chrono::steady_clock::time_point since)
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

double median(std::vector<double> v)
{
    if (v.empty())
        return std::numeric_limits<double>::quiet_NaN();
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

double quantile(std::vector<double> v, double q)
{
    if (v.empty())
        return std::numeric_limits<double>::quiet_NaN();
    std::sort(v.begin(), v.end());
    return v[std::min(v.size() - 1, std::size_t(q * double(v.size() - 1) + 0.5))];
}

std::string jsonString(const std::string& s)
{
    std::string out = "\"";
    for (char c : s) {
        if (c == '"' || c == '\\')
            out += '\\';
        if (c == '\n') {
            out += "\\n";
            continue;
        }
        out += c;
    }
    return out + "\"";
}

std::string jsonNumber(double v)
{
    if (!std::isfinite(v))
        return "null";
    char text[40];
    std::snprintf(text, sizeof text, "%.9g", v);
    return text;
}

// ---- the tally every case reports to ----

class Tally {
public:
    void pass(const std::string& name, const std::string& detail = {}) { line("PASS", name, detail), ++m_passed; }
    void fail(const std::string& name, const std::string& why) { line("FAIL", name, why), ++m_failed; }
    void skip(const std::string& name, const std::string& why) { line("SKIP", name, why), ++m_skipped; }
    // Runs a case; an exception is a failure naming it (a CudaError names the call, file and line).
    void run(const std::string& name, const std::function<std::string()>& body)
    {
        try {
            const std::string failure = body();
            if (failure.empty())
                pass(name, m_detail);
            else
                fail(name, failure);
        } catch (const std::exception& e) {
            fail(name, std::string("exception: ") + e.what());
        }
        m_detail.clear();
    }
    void detail(const std::string& text) { m_detail = text; }
    int passed() const { return m_passed; }
    int failed() const { return m_failed; }
    int skipped() const { return m_skipped; }

private:
    static void line(const char* what, const std::string& name, const std::string& detail)
    {
        std::printf("%s %s%s%s\n", what, name.c_str(), detail.empty() ? "" : ": ", detail.c_str());
        std::fflush(stdout);
    }
    int m_passed = 0, m_failed = 0, m_skipped = 0;
    std::string m_detail;
};

// ---- model reference cases ----

struct ModelPoint {
    std::vector<double> block, gradient, mapCoefficient, images;
    std::vector<int> mapFree, mapRow;
    double cost = 0.0;
};

struct ModelCase {
    std::string name, about;
    gpu::ModelInput input; // realBytes 8 as read
    std::vector<double> scales;
    std::vector<ModelPoint> points;
};

ModelCase loadModelCase(const dc::ReferenceFile& f, const std::string& name)
{
    ModelCase c;
    c.name = name;
    c.about = f.text("about");
    const std::vector<int>& dims = f.ints("dims", 9);
    gpu::ModelDims& d = c.input.dims;
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
    d.realBytes = 8;
    if (d.n < 2 || d.planes < 1 || d.pixels < 1 || d.terms < 1 || d.rowBegin < 0 || d.bandRows < 1 || d.rowBegin + d.bandRows > d.n)
        throw std::runtime_error(f.path() + ": implausible dims");
    const long long pixels = d.pixels;
    c.input.pupilIndex = f.ints("pupilIndex", pixels);
    c.input.x = f.doubles("x", pixels);
    c.input.y = f.doubles("y", pixels);
    c.input.transmission = f.doubles("transmission", pixels);
    c.input.basis = f.doubles("basis", pixels * d.terms);
    c.input.diversity = f.doubles("diversity", pixels * d.planes);
    c.input.data = f.doubles("data", (long long)d.gridElements());
    c.input.weights = f.doubles("weights", d.weighted ? (long long)d.gridElements() : 0);
    gpu::makeBandMap(d, c.input.pupilIndex); // throws when a pupil pixel lies outside the band
    c.scales = f.doubles("scales");
    const int count = f.ints("points", 1)[0];
    if (count < 1)
        throw std::runtime_error(f.path() + ": no points");
    for (int i = 0; i < count; ++i) {
        const std::string s = "." + std::to_string(i);
        ModelPoint p;
        p.block = f.doubles("block" + s, d.parameterBlockSize());
        p.cost = f.doubles("cost" + s, 1)[0];
        p.gradient = f.doubles("gradient" + s, (long long)c.scales.size());
        p.mapFree = f.ints("mapFree" + s);
        p.mapRow = f.ints("mapRow" + s, (long long)p.mapFree.size());
        p.mapCoefficient = f.doubles("mapCoefficient" + s, (long long)p.mapFree.size());
        for (std::size_t j = 0; j < p.mapFree.size(); ++j)
            if (p.mapFree[j] < 0 || std::size_t(p.mapFree[j]) >= c.scales.size() || p.mapRow[j] < 0
                || p.mapRow[j] >= d.resultSize())
                throw std::runtime_error(f.path() + ": gradient map entry " + std::to_string(j) + " out of range");
        if (i == 0)
            p.images = f.doubles("images" + s, (long long)d.gridElements());
        if (!std::isfinite(p.cost) || maxAbs(p.gradient) != maxAbs(p.gradient) || !std::isfinite(maxAbs(p.block)))
            throw std::runtime_error(f.path() + ": point " + std::to_string(i) + " has non-finite values");
        c.points.push_back(std::move(p));
    }
    return c;
}

gpu::ModelInput withPrecision(gpu::ModelInput input, int realBytes)
{
    input.dims.realBytes = realBytes;
    return input;
}

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
    std::vector<double> g(c.scales.size(), 0.0);
    for (std::size_t j = 0; j < p.mapFree.size(); ++j)
        g[std::size_t(p.mapFree[j])] += p.mapCoefficient[j] * result[p.mapRow[j]];
    return g;
}

// Empty when a matches b: every component |a_i - b_i| s_i <= tolerance (relative ? |b_i s_i| : 0) +
// tolerance * largest |b s| (tst_gpumodel's rule); else what differs.
std::string compareGradient(const ModelCase& c, const std::vector<double>& a, const std::vector<double>& b, double tolerance,
                            bool relative, double* worst)
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
            why = "gradient[" + std::to_string(i) + "] " + sci(a[i]) + ", reference " + sci(b[i]) + " (largest scaled "
                  + sci(largest) + ")";
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
        e.cost = costOf(d, result, &e.invalid);
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
        e.costOnly = costOf(d, device.evaluate(p.block.data(), false), &invalid);
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

// ---- FastH reference cases ----

struct FasthCase {
    std::string name, about;
    int d = 0, k = 0, m = 0, block = 0, levels = 0;
    std::vector<double> reflectors, tau, x, outputGradient, svdU, svdV, sigma, forward, gradX, gradV, inverse;
    double logdet = 0.0;
};

FasthCase loadFasthCase(const dc::ReferenceFile& f, const std::string& name)
{
    FasthCase c;
    c.name = name;
    c.about = f.text("about");
    const std::vector<int>& dims = f.ints("dims", 5);
    c.d = dims[0];
    c.k = dims[1];
    c.m = dims[2];
    c.block = dims[3];
    c.levels = dims[4];
    if (c.d < 1 || c.k < 1 || c.k > c.d || c.m < 1 || c.block < 1 || c.levels < 0)
        throw std::runtime_error(f.path() + ": implausible dims");
    const long long d = c.d, k = c.k, m = c.m;
    c.reflectors = f.doubles("reflectors", d * k);
    c.tau = f.doubles("tau", k);
    c.x = f.doubles("x", d * m);
    c.outputGradient = f.doubles("outputGradient", d * m);
    c.svdU = f.doubles("svdU", d * d);
    c.svdV = f.doubles("svdV", d * d);
    c.sigma = f.doubles("sigma", d);
    c.forward = f.doubles("forward", d * m);
    c.gradX = f.doubles("gradX", d * m);
    c.gradV = f.doubles("gradV", d * k);
    c.inverse = f.doubles("inverse", d * m);
    c.logdet = f.doubles("logdet", 1)[0];
    return c;
}

// H_1 ... H_k X on the host, the sequential algorithm in float64 (O(d k m)).
std::vector<double> hostApply(const FasthCase& c)
{
    std::vector<double> x = c.x;
    const std::size_t d = std::size_t(c.d);
    for (int r = c.k - 1; r >= 0; --r) {
        const double* v = c.reflectors.data() + std::size_t(r) * d;
        double norm = 0.0;
        for (std::size_t i = 0; i < d; ++i)
            norm += v[i] * v[i];
        for (int col = 0; col < c.m; ++col) {
            double* xc = x.data() + std::size_t(col) * d;
            double dot = 0.0;
            for (std::size_t i = 0; i < d; ++i)
                dot += v[i] * xc[i];
            const double f = 2.0 * dot / norm;
            for (std::size_t i = 0; i < d; ++i)
                xc[i] -= f * v[i];
        }
    }
    return x;
}

const char* methodName(gpu::DeviceMethod m)
{
    switch (m) {
    case gpu::DeviceMethod::SequentialCublas: return "sequential";
    case gpu::DeviceMethod::SequentialFused: return "sequential-fused";
    case gpu::DeviceMethod::FastH: return "fasth";
    case gpu::DeviceMethod::CompactWY: return "ut";
    case gpu::DeviceMethod::TreeMerge: return "tree";
    case gpu::DeviceMethod::Library: return "library";
    case gpu::DeviceMethod::Dense: return "dense";
    case gpu::DeviceMethod::SvdInverse: return "svd-inverse";
    case gpu::DeviceMethod::LuSolve: return "lu-solve";
    case gpu::DeviceMethod::SvdLogDet: return "svd-logdet";
    case gpu::DeviceMethod::LuLogDet: return "lu-logdet";
    }
    return "?";
}

const std::vector<gpu::DeviceMethod>& allMethods()
{
    static const std::vector<gpu::DeviceMethod> methods = {
        gpu::DeviceMethod::SequentialCublas, gpu::DeviceMethod::SequentialFused, gpu::DeviceMethod::FastH,
        gpu::DeviceMethod::CompactWY,        gpu::DeviceMethod::TreeMerge,       gpu::DeviceMethod::Library,
        gpu::DeviceMethod::Dense,            gpu::DeviceMethod::SvdInverse,      gpu::DeviceMethod::LuSolve,
        gpu::DeviceMethod::SvdLogDet,        gpu::DeviceMethod::LuLogDet};
    return methods;
}

gpu::DeviceMethod methodFromName(const std::string& name)
{
    for (gpu::DeviceMethod m : allMethods())
        if (name == methodName(m))
            return m;
    throw std::invalid_argument("unknown FastH method '" + name + "'");
}

const char* passName(gpu::DevicePass p)
{
    return p == gpu::DevicePass::Forward ? "forward" : p == gpu::DevicePass::Backward ? "backward" : "both";
}

template <typename T>
std::vector<T> as(const std::vector<double>& v)
{
    return std::vector<T>(v.begin(), v.end());
}

// What one run of the method computed, and what the CPU says it should be.
struct FasthOutcome {
    std::vector<double> output, gradX, gradV;
};

template <typename T>
FasthOutcome outcome(gpu::DeviceFasth<T>& device, gpu::DeviceMethod method, gpu::DevicePass pass)
{
    auto toDouble = [](const std::vector<T>& v) { return std::vector<double>(v.begin(), v.end()); };
    FasthOutcome o;
    if (pass == gpu::DevicePass::Forward) {
        o.output = toDouble(device.output());
    } else {
        o.gradX = toDouble(device.gradientX());
        o.gradV = toDouble(device.gradientV());
    }
    (void)method;
    return o;
}

// Empty when the outcome matches the CPU reference; tolerance relative to max(1, largest reference).
std::string compareFasth(const FasthCase& c, gpu::DeviceMethod method, gpu::DevicePass pass, const FasthOutcome& o,
                         double tolerance, double* worst)
{
    auto check = [&](const char* what, const std::vector<double>& got, const std::vector<double>& ref) -> std::string {
        const double err = maxError(got, ref, std::max(1.0, maxAbs(ref)));
        *worst = std::max(*worst, err);
        return err <= tolerance ? std::string() : std::string(what) + " differs by " + sci(err);
    };
    *worst = 0.0;
    if (method == gpu::DeviceMethod::SvdLogDet || method == gpu::DeviceMethod::LuLogDet)
        return check("log|det W|", o.output, {c.logdet});
    if (method == gpu::DeviceMethod::SvdInverse || method == gpu::DeviceMethod::LuSolve)
        return check("W^-1 X", o.output, c.inverse);
    if (pass == gpu::DevicePass::Forward)
        return check("H X", o.output, c.forward);
    std::string why = check("dL/dX", o.gradX, c.gradX);
    if (why.empty() && !o.gradV.empty())
        why = check("dL/dV", o.gradV, c.gradV);
    return why;
}

std::string compareOutcomes(const FasthOutcome& a, const FasthOutcome& b, double tolerance)
{
    for (const auto& [x, y, what] : {std::tuple<const std::vector<double>*, const std::vector<double>*, const char*>{&a.output, &b.output, "output"},
                                     {&a.gradX, &b.gradX, "dL/dX"},
                                     {&a.gradV, &b.gradV, "dL/dV"}}) {
        const double err = maxError(*x, *y, std::max(1.0, maxAbs(*y)));
        if (!(err <= tolerance))
            return std::string(what) + " of the graph differs from the eager run's by " + sci(err);
    }
    return {};
}

template <typename T>
void runFasthDevice(Tally& tally, const FasthCase& c, bool quick)
{
    const char* precision = sizeof(T) == 8 ? "double" : "float";
    const std::string prefix = "fasth/" + c.name + "/" + precision + "/";
    // float32 against the float64 CPU reference (the spec's gate compares within one precision: 1e-4;
    // across precisions the float rounding of d k steps adds to it).
    const double tolerance = sizeof(T) == 8 ? 1e-11 : 1e-3;
    std::unique_ptr<gpu::DeviceFasth<T>> device;
    tally.run(prefix + "set-up", [&]() -> std::string {
        device = std::make_unique<gpu::DeviceFasth<T>>(0);
        gpu::DeviceProblem problem{c.d, c.k, c.m, std::min(c.block, c.k), c.levels};
        device->setProblem(problem, as<T>(c.reflectors), as<T>(c.tau), as<T>(c.x), as<T>(c.outputGradient));
        device->setSvdLayer(as<T>(c.svdU), as<T>(c.svdV), as<T>(c.sigma), {});
        return {};
    });
    if (!device)
        return;
    for (gpu::DeviceMethod method : allMethods()) {
        for (gpu::DevicePass pass : {gpu::DevicePass::Forward, gpu::DevicePass::Backward, gpu::DevicePass::Both}) {
            std::string why;
            if (!device->supports(method, pass, &why))
                continue;
            const std::string name = prefix + methodName(method) + "/" + passName(pass);
            FasthOutcome eager;
            bool eagerOk = false;
            tally.run(name + "/eager", [&]() -> std::string {
                device->prepare(method, pass, false);
                device->run(method, pass, false);
                eager = outcome(*device, method, pass);
                double worst = 0.0;
                const std::string failure = compareFasth(c, method, pass, eager, tolerance, &worst);
                tally.detail("max error " + sci(worst));
                eagerOk = failure.empty();
                return failure;
            });
            if (quick && method != gpu::DeviceMethod::FastH && method != gpu::DeviceMethod::Library)
                continue;
            tally.run(name + "/graph", [&]() -> std::string {
                device->prepare(method, pass, true);
                const std::string launch = device->launchMode();
                if (gpu::DeviceFasth<T>::capturable(method) && launch != "graph")
                    return "capture failed: " + launch;
                if (!gpu::DeviceFasth<T>::capturable(method) && launch.rfind("eager (cuSOLVER", 0) != 0)
                    return "a cuSOLVER method must run eagerly, launch: " + launch;
                device->run(method, pass, true);
                device->run(method, pass, true); // a replay must give the same again
                const FasthOutcome graph = outcome(*device, method, pass);
                tally.detail("launch " + launch);
                if (!eagerOk)
                    return "no eager result to compare with";
                return compareOutcomes(graph, eager, sizeof(T) == 8 ? 1e-13 : 1e-5);
            });
        }
    }
}

// ---- the check ----

std::string deviceProblem()
{
    const gpu::DeviceProbe probe = gpu::probeDevices();
    if (probe.status == gpu::DeviceProbe::Status::Ok)
        return {};
    return probe.message.empty() ? std::string("no device") : probe.message;
}

int runCheck(const std::string& folder, bool quick)
{
    Tally tally;
    const std::string noDevice = deviceProblem();
    if (noDevice.empty()) {
        const gpu::DeviceProbe probe = gpu::probeDevices();
        const gpu::DeviceInfo& info = probe.devices.front();
        std::printf("device: %s, sm_%d%d, %.1f GiB\n", info.name.c_str(), info.computeMajor, info.computeMinor,
                    double(info.memoryBytes) / double(1 << 30));
    } else {
        std::printf("device: none (%s): the device cases are skipped; the reference data are still read and checked\n",
                    noDevice.c_str());
    }
    std::printf("reference: %s%s\n", folder.c_str(), quick ? " (quick subset)" : "");

    std::vector<ModelCase> models;
    std::vector<FasthCase> fasths;
    std::vector<dc::IndexEntry> index;
    tally.run("reference/index", [&]() -> std::string {
        index = dc::readIndex(folder);
        return {};
    });
    for (const dc::IndexEntry& entry : index) {
        if (quick && entry.name != "oof-64-4" && entry.name != "d64-k64-m1-b12")
            continue;
        tally.run("reference/" + entry.kind + "/" + entry.name + "/read", [&]() -> std::string {
            const dc::ReferenceFile file(folder + "/" + entry.file);
            if (entry.kind == "model")
                models.push_back(loadModelCase(file, entry.name));
            else
                fasths.push_back(loadFasthCase(file, entry.name));
            return {};
        });
    }
    // Host checks of the files against each other and against the spec (no device needed).
    for (const ModelCase& c : models) {
        tally.run("reference/model/" + c.name + "/cost-from-images", [&]() -> std::string {
            const double cost = costFromImages(c);
            const double err = std::abs(cost - c.points[0].cost) / std::abs(c.points[0].cost);
            tally.detail("relative " + sci(err));
            return err <= 1e-9 ? std::string()
                               : "the CPU images and data give cost " + sci(cost) + ", the file says " + sci(c.points[0].cost);
        });
        if (c.name.rfind("oof-", 0) == 0) {
            tally.run("reference/model/" + c.name + "/oof-generator", [&]() -> std::string {
                const gpu::ModelDims& d = c.input.dims;
                int order = 0;
                while ((order + 1) * (order + 2) / 2 < d.terms)
                    ++order;
                const dc::OofCase g = dc::makeOofCase(d.n, order, 8);
                const gpu::ModelDims& e = g.input.dims;
                if (e.n != d.n || e.planes != d.planes || e.rowBegin != d.rowBegin || e.bandRows != d.bandRows
                    || e.pixels != d.pixels || e.terms != d.terms || e.gaussian != d.gaussian || e.weighted != d.weighted)
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
    for (const FasthCase& c : fasths) {
        tally.run("reference/fasth/" + c.name + "/sequential-product", [&]() -> std::string {
            const double err = maxError(hostApply(c), c.forward, std::max(1.0, maxAbs(c.forward)));
            tally.detail("relative " + sci(err));
            return err <= 1e-12 ? std::string() : "H X recomputed here differs from the file's by " + sci(err);
        });
        tally.run("reference/fasth/" + c.name + "/gradient-invariants", [&]() -> std::string {
            // v^T dL/dv = 0 for every reflector (the loss does not depend on ||v||); tau = 2 / ||v||^2.
            const std::size_t d = std::size_t(c.d);
            double worst = 0.0;
            for (int r = 0; r < c.k; ++r) {
                const double* v = c.reflectors.data() + std::size_t(r) * d;
                const double* g = c.gradV.data() + std::size_t(r) * d;
                double vg = 0, vv = 0, gg = 0;
                for (std::size_t i = 0; i < d; ++i) {
                    vg += v[i] * g[i];
                    vv += v[i] * v[i];
                    gg += g[i] * g[i];
                }
                if (std::abs(c.tau[std::size_t(r)] - 2.0 / vv) > 1e-12 * c.tau[std::size_t(r)])
                    return "tau[" + std::to_string(r) + "] is not 2 / ||v||^2";
                worst = std::max(worst, std::abs(vg) / std::max(1e-300, std::sqrt(vv * gg)));
            }
            tally.detail("largest |v.dv| / (|v| |dv|) " + sci(worst));
            return worst <= 1e-10 ? std::string() : "v^T dL/dv is not 0: " + sci(worst);
        });
    }

    // Device cases.
    auto skipAll = [&](const std::string& name) { tally.skip(name, "no device (" + noDevice + ")"); };
    for (const ModelCase& c : models) {
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
    for (const FasthCase& c : fasths) {
        if (!noDevice.empty()) {
            skipAll("fasth/" + c.name + "/double");
            skipAll("fasth/" + c.name + "/float");
            continue;
        }
        runFasthDevice<double>(tally, c, quick);
        if (!quick)
            runFasthDevice<float>(tally, c, quick);
    }

    // Out of memory, then recovery: the memory check refuses cleanly, the device still works afterwards.
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

    std::printf("%d passed, %d failed, %d skipped%s\n", tally.passed(), tally.failed(), tally.skipped(),
                noDevice.empty() ? "" : (" (no device: " + noDevice + ")").c_str());
    return tally.failed() == 0 ? 0 : 1;
}

// ---- benchmarks ----

struct Options {
    std::map<std::string, std::string> values;
    std::string get(const std::string& key, const std::string& fallback) const
    {
        const auto it = values.find(key);
        return it == values.end() ? fallback : it->second;
    }
};

std::string deviceName()
{
    const gpu::DeviceProbe probe = gpu::probeDevices();
    return probe.status == gpu::DeviceProbe::Status::Ok ? probe.devices.front().name : std::string();
}

int runBenchOof(const Options& o)
{
    const auto start = std::chrono::steady_clock::now();
    const std::string noDevice = deviceProblem();
    const std::vector<int> grids = intList(o.get("grid", "64,128,256,512,1024,2048,4096"));
    const int order = std::stoi(o.get("order", "8"));
    const std::vector<std::string> precisions = wordList(o.get("precision", "double,float"));
    const std::vector<std::string> launches = wordList(o.get("launch", "graph,stream"));
    const int repeat = std::max(1, std::stoi(o.get("eval-repeat", "50")));
    const double budget = std::stod(o.get("budget", "1e9"));
    if (!noDevice.empty()) {
        std::printf("{\"kind\": \"oof\", \"skipped\": true, \"reason\": %s}\n", jsonString("no device: " + noDevice).c_str());
        return 0;
    }
    const std::string device = deviceName();
    int skipped = 0;
    for (int grid : grids) {
        // The problem is built once per grid (seconds at 4096); only the device precision changes.
        std::unique_ptr<dc::OofCase> problem;
        for (const std::string& precision : precisions)
            for (const std::string& launch : launches) {
                if (seconds(start) > budget) {
                    ++skipped;
                    continue;
                }
                const int realBytes = precision == "float" ? 4 : 8;
                std::string row;
                try {
                    const auto setupStart = std::chrono::steady_clock::now();
                    if (!problem)
                        problem = std::make_unique<dc::OofCase>(dc::makeOofCase(grid, order, 8));
                    const dc::OofCase& c = *problem;
                    gpu::ModelDevice model(0, withPrecision(c.input, realBytes), launch == "graph");
                    const double setupMs = seconds(setupStart) * 1e3;
                    model.evaluate(c.start.data(), true); // warm-up (stream launches have had none)
                    std::vector<double> gradientMs, costMs;
                    for (int r = 0; r < repeat; ++r) {
                        const auto t = std::chrono::steady_clock::now();
                        model.evaluate(c.start.data(), true);
                        gradientMs.push_back(seconds(t) * 1e3);
                    }
                    for (int r = 0; r < std::max(1, repeat / 2); ++r) {
                        const auto t = std::chrono::steady_clock::now();
                        model.evaluate(c.start.data(), false);
                        costMs.push_back(seconds(t) * 1e3);
                    }
                    const double fftMs = model.measureFftMs(std::max(5, repeat / 2));
                    const double bytes = model.dims().trafficBytes(true);
                    const double boundMs = bytes / 4.0e12 * 1e3;
                    const double evalMs = median(gradientMs);
                    row = "{\"kind\": \"oof\", \"grid\": " + std::to_string(grid) + ", \"order\": " + std::to_string(order)
                          + ", \"precision\": " + jsonString(precision) + ", \"launch_request\": " + jsonString(launch)
                          + ", \"launch\": " + jsonString(model.launchMode()) + ", \"eval_ms\": " + jsonNumber(evalMs)
                          + ", \"eval_p25_ms\": " + jsonNumber(quantile(gradientMs, 0.25)) + ", \"eval_p75_ms\": "
                          + jsonNumber(quantile(gradientMs, 0.75)) + ", \"cost_ms\": " + jsonNumber(median(costMs))
                          + ", \"fft_ms\": " + jsonNumber(fftMs) + ", \"setup_ms\": " + jsonNumber(setupMs)
                          + ", \"hbm_bytes\": " + jsonNumber(bytes) + ", \"bound_ms\": " + jsonNumber(boundMs)
                          + ", \"bound_x\": " + jsonNumber(evalMs / boundMs) + ", \"pupil_pixels\": "
                          + std::to_string(c.input.dims.pixels) + ", \"band_rows\": " + std::to_string(c.input.dims.bandRows)
                          + ", \"device\": " + jsonString(device) + "}";
                } catch (const std::exception& e) {
                    cudaGetLastError();
                    row = "{\"kind\": \"oof\", \"grid\": " + std::to_string(grid) + ", \"precision\": " + jsonString(precision)
                          + ", \"launch_request\": " + jsonString(launch) + ", \"error\": " + jsonString(e.what()) + "}";
                }
                std::printf("%s\n", row.c_str());
                std::fflush(stdout);
            }
    }
    if (skipped > 0)
        std::printf("{\"kind\": \"trimmed\", \"bench\": \"oof\", \"rows_skipped\": %d, \"budget_s\": %s}\n", skipped,
                    jsonNumber(budget).c_str());
    return 0;
}

// A FastH benchmark problem drawn on the host (no Eigen): LAPACK-layout reflectors v_r = [0 .. 0, 1, N(0,1)
// ...] with tau = 2 / ||v||^2 (what ormqr needs and every method computes the same product with), a
// Gaussian batch and output gradient.
struct FasthBenchData {
    std::vector<double> reflectors, tau, x, g;
};

FasthBenchData fasthBenchData(int d, int m, std::uint64_t seed)
{
    std::mt19937_64 rng(seed);
    std::normal_distribution<double> normal(0.0, 1.0);
    FasthBenchData b;
    b.reflectors.assign(std::size_t(d) * std::size_t(d), 0.0);
    b.tau.resize(std::size_t(d));
    for (int r = 0; r < d; ++r) {
        double* v = b.reflectors.data() + std::size_t(r) * std::size_t(d);
        v[r] = 1.0;
        double norm = 1.0;
        for (int i = r + 1; i < d; ++i) {
            v[i] = normal(rng) / std::sqrt(double(d));
            norm += v[i] * v[i];
        }
        b.tau[std::size_t(r)] = 2.0 / norm;
    }
    b.x.resize(std::size_t(d) * std::size_t(m));
    b.g.resize(b.x.size());
    for (double& v : b.x)
        v = normal(rng);
    for (double& v : b.g)
        v = normal(rng);
    return b;
}

struct FasthRow {
    int d, m, block;
    std::string precision;
    gpu::DeviceMethod method;
    gpu::DevicePass pass;
    bool graph;
};

template <typename T>
std::string fasthRow(gpu::DeviceFasth<T>& device, const FasthRow& r, int repeat, const std::vector<double>& refForward,
                     const std::vector<double>& refGradX)
{
    device.prepare(r.method, r.pass, r.graph);
    for (int w = 0; w < 3; ++w)
        device.run(r.method, r.pass, r.graph);
    std::vector<double> times;
    for (int i = 0; i < repeat; ++i)
        times.push_back(device.run(r.method, r.pass, r.graph));
    const std::vector<T> result = r.pass == gpu::DevicePass::Forward ? device.output() : device.gradientX();
    const std::vector<double>& ref = r.pass == gpu::DevicePass::Forward ? refForward : refGradX;
    double err = 0.0;
    for (std::size_t i = 0; i < result.size() && i < ref.size(); ++i)
        err = std::max(err, std::abs(double(result[i]) - ref[i]));
    const double ms = median(times);
    const double flops = 4.0 * r.d * double(r.d) * r.m * (r.pass == gpu::DevicePass::Both ? 4.0 : 1.0);
    return "{\"kind\": \"fasth\", \"method\": " + jsonString(methodName(r.method)) + ", \"pass\": " + jsonString(passName(r.pass))
           + ", \"d\": " + std::to_string(r.d) + ", \"k\": " + std::to_string(r.d) + ", \"batch\": " + std::to_string(r.m)
           + ", \"block\": " + std::to_string(std::min(r.block, r.d)) + ", \"precision\": " + jsonString(r.precision) + ", \"graph\": "
           + (r.graph ? "true" : "false") + ", \"launch\": " + jsonString(device.launchMode()) + ", \"ms\": " + jsonNumber(ms)
           + ", \"iqr_ms\": " + jsonNumber(quantile(times, 0.75) - quantile(times, 0.25)) + ", \"gflops\": "
           + jsonNumber(flops / (ms * 1e-3) / 1e9) + ", \"max_abs_error\": " + jsonNumber(err) + ", \"repeat\": "
           + std::to_string(repeat) + "}";
}

template <typename T>
struct FasthBenchEngine {
    std::unique_ptr<gpu::DeviceFasth<T>> device;
    int d = 0, m = 0, block = 0;
    std::vector<double> refForward, refGradX;

    void setUp(int dd, int mm, int bb, const FasthBenchData& data)
    {
        if (device && d == dd && m == mm && block == bb)
            return;
        if (!device)
            device = std::make_unique<gpu::DeviceFasth<T>>(0);
        d = dd, m = mm, block = bb;
        device->setProblem({dd, dd, mm, std::min(bb, dd), 1}, as<T>(data.reflectors), as<T>(data.tau), as<T>(data.x), as<T>(data.g));
        // The reference of max_abs_error: the sequential algorithm on this device, eager, same precision.
        device->prepare(gpu::DeviceMethod::SequentialCublas, gpu::DevicePass::Forward, false);
        device->run(gpu::DeviceMethod::SequentialCublas, gpu::DevicePass::Forward, false);
        const std::vector<T> f = device->output();
        refForward.assign(f.begin(), f.end());
        device->prepare(gpu::DeviceMethod::SequentialCublas, gpu::DevicePass::Backward, false);
        device->run(gpu::DeviceMethod::SequentialCublas, gpu::DevicePass::Backward, false);
        const std::vector<T> g = device->gradientX();
        refGradX.assign(g.begin(), g.end());
    }
};

int runBenchFasth(const Options& o)
{
    const auto start = std::chrono::steady_clock::now();
    const std::string noDevice = deviceProblem();
    const std::vector<int> ds = intList(o.get("d", "64,128,256,512,768,1024,1536,2048,3072,4096"));
    const std::vector<int> batches = intList(o.get("batch", "1,32,256"));
    const std::vector<int> blocks = intList(o.get("block", "16,32,64,128"));
    const std::vector<std::string> precisions = wordList(o.get("precision", "float"));
    const int repeat = std::max(1, std::stoi(o.get("repeat", "20")));
    const double budget = std::stod(o.get("budget", "1e9"));
    if (!noDevice.empty()) {
        std::printf("{\"kind\": \"fasth\", \"skipped\": true, \"reason\": %s}\n", jsonString("no device: " + noDevice).c_str());
        return 0;
    }
    using M = gpu::DeviceMethod;
    using P = gpu::DevicePass;
    const std::vector<M> baselines = {M::FastH, M::SequentialFused, M::Library, M::SequentialCublas, M::CompactWY, M::TreeMerge, M::Dense};
    // Rows in order of importance, so that a trimmed sweep keeps what the targets need: m = 32, b = 32
    // (the paper's), every method, forward and both, eager then graph; then the other blocks for the
    // blocked methods, then the other batches, then float64 spot checks.
    std::vector<FasthRow> rows;
    auto add = [&](const FasthRow& r) {
        for (const FasthRow& e : rows)
            if (e.d == r.d && e.m == r.m && e.block == r.block && e.precision == r.precision && e.method == r.method
                && e.pass == r.pass && e.graph == r.graph)
                return;
        rows.push_back(r);
    };
    const std::string main = precisions.front();
    for (bool graph : {false, true})
        for (int d : ds)
            for (M method : baselines)
                for (P pass : {P::Forward, P::Both})
                    add({d, 32, 32, main, method, pass, graph});
    for (int b : blocks)
        for (int d : ds)
            for (M method : {M::FastH, M::CompactWY})
                for (P pass : {P::Forward, P::Both})
                    add({d, 32, b, main, method, pass, false});
    for (int m : batches)
        for (int d : ds)
            for (M method : baselines)
                for (P pass : {P::Forward, P::Both})
                    add({d, m, 32, main, method, pass, false});
    for (const std::string& precision : precisions)
        if (precision != main)
            for (int d : {512, 1024})
                for (M method : baselines)
                    for (P pass : {P::Forward, P::Both})
                        add({d, 32, 32, precision, method, pass, false});
    if (std::find(precisions.begin(), precisions.end(), "double") == precisions.end())
        for (int d : {512, 1024})
            for (M method : baselines)
                add({d, 32, 32, "double", method, P::Both, false});

    std::map<int, std::map<int, FasthBenchData>> data; // d -> m -> data
    FasthBenchEngine<float> floats;
    FasthBenchEngine<double> doubles;
    int skipped = 0;
    for (const FasthRow& r : rows) {
        if (seconds(start) > budget) {
            ++skipped;
            continue;
        }
        std::string line;
        try {
            if (!data[r.d].count(r.m))
                data[r.d][r.m] = fasthBenchData(r.d, r.m, 3);
            std::string why;
            if (r.precision == "double") {
                doubles.setUp(r.d, r.m, r.block, data[r.d][r.m]);
                if (!doubles.device->supports(r.method, r.pass, &why))
                    continue;
                line = fasthRow(*doubles.device, r, repeat, doubles.refForward, doubles.refGradX);
            } else {
                floats.setUp(r.d, r.m, r.block, data[r.d][r.m]);
                if (!floats.device->supports(r.method, r.pass, &why))
                    continue;
                line = fasthRow(*floats.device, r, repeat, floats.refForward, floats.refGradX);
            }
        } catch (const std::exception& e) {
            cudaGetLastError();
            line = "{\"kind\": \"fasth\", \"method\": " + jsonString(methodName(r.method)) + ", \"pass\": " + jsonString(passName(r.pass))
                   + ", \"d\": " + std::to_string(r.d) + ", \"batch\": " + std::to_string(r.m) + ", \"block\": " + std::to_string(r.block)
                   + ", \"precision\": " + jsonString(r.precision) + ", \"graph\": " + (r.graph ? "true" : "false")
                   + ", \"error\": " + jsonString(e.what()) + "}";
        }
        std::printf("%s\n", line.c_str());
        std::fflush(stdout);
    }
    if (skipped > 0)
        std::printf("{\"kind\": \"trimmed\", \"bench\": \"fasth\", \"rows_skipped\": %d, \"rows_total\": %zu, \"budget_s\": %s}\n",
                    skipped, rows.size(), jsonNumber(budget).c_str());
    return 0;
}

void usage(FILE* to)
{
    std::fprintf(to, "usage: wfs-device-check check --reference DIR [--quick]\n"
                     "       wfs-device-check bench-oof [--grid LIST] [--order N] [--precision double,float] [--launch graph,stream]\n"
                     "                                  [--eval-repeat E] [--budget SECONDS]\n"
                     "       wfs-device-check bench-fasth [--d LIST] [--batch LIST] [--block LIST] [--precision float,double]\n"
                     "                                    [--repeat R] [--budget SECONDS]\n");
}

} // namespace

int main(int argc, char** argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    const std::string command = argv[1];
    Options o;
    for (int i = 2; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg.rfind("--", 0) != 0) {
            std::fprintf(stderr, "wfs-device-check: unexpected argument '%s'\n", arg.c_str());
            return 2;
        }
        if (arg == "--quick") {
            o.values["quick"] = "1";
        } else if (i + 1 < argc) {
            o.values[arg.substr(2)] = argv[++i];
        } else {
            std::fprintf(stderr, "wfs-device-check: %s needs a value\n", arg.c_str());
            return 2;
        }
    }
    try {
        if (command == "check") {
            if (!o.values.count("reference")) {
                usage(stderr);
                return 2;
            }
            return runCheck(o.values["reference"], o.values.count("quick") > 0);
        }
        if (command == "bench-oof")
            return runBenchOof(o);
        if (command == "bench-fasth")
            return runBenchFasth(o);
        if (command == "--help" || command == "-h") {
            usage(stdout);
            return 0;
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "wfs-device-check: %s\n", e.what());
        return 1;
    }
    usage(stderr);
    return 2;
}
