#include "FasthCases.h"

#include "gpu/DeviceResources.h"

#include <algorithm>
#include <cmath>

namespace wfs::devicecheck {

namespace dc = ::wfs::devicecheck;

FasthCase loadFasthCase(const ReferenceFile& f, const std::string& name)
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
    case gpu::DeviceMethod::SequentialCublas:
        return "sequential";
    case gpu::DeviceMethod::SequentialFused:
        return "sequential-fused";
    case gpu::DeviceMethod::FastH:
        return "fasth";
    case gpu::DeviceMethod::CompactWY:
        return "ut";
    case gpu::DeviceMethod::TreeMerge:
        return "tree";
    case gpu::DeviceMethod::Library:
        return "library";
    case gpu::DeviceMethod::Dense:
        return "dense";
    case gpu::DeviceMethod::SvdInverse:
        return "svd-inverse";
    case gpu::DeviceMethod::LuSolve:
        return "lu-solve";
    case gpu::DeviceMethod::SvdLogDet:
        return "svd-logdet";
    case gpu::DeviceMethod::LuLogDet:
        return "lu-logdet";
    }
    return "?";
}

const std::vector<gpu::DeviceMethod>& allMethods()
{
    static const std::vector<gpu::DeviceMethod> methods = {
        gpu::DeviceMethod::SequentialCublas, gpu::DeviceMethod::SequentialFused, gpu::DeviceMethod::FastH,   gpu::DeviceMethod::CompactWY,
        gpu::DeviceMethod::TreeMerge,        gpu::DeviceMethod::Library,         gpu::DeviceMethod::Dense,   gpu::DeviceMethod::SvdInverse,
        gpu::DeviceMethod::LuSolve,          gpu::DeviceMethod::SvdLogDet,       gpu::DeviceMethod::LuLogDet};
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

namespace {

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
std::string compareFasth(const FasthCase& c, gpu::DeviceMethod method, gpu::DevicePass pass, const FasthOutcome& o, double tolerance,
                         double* worst)
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
    for (const auto& [x, y, what] :
         {std::tuple<const std::vector<double>*, const std::vector<double>*, const char*>{&a.output, &b.output, "output"},
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

} // namespace

void checkFasthFile(Tally& tally, const FasthCase& c)
{
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

void checkFasthOnDevice(Tally& tally, const FasthCase& c, bool quick, const std::string& noDevice)
{
    auto skipAll = [&](const std::string& name) { tally.skip(name, "no device (" + noDevice + ")"); };
    if (!noDevice.empty()) {
        skipAll("fasth/" + c.name + "/double");
        skipAll("fasth/" + c.name + "/float");
        return;
    }
    runFasthDevice<double>(tally, c, quick);
    if (!quick)
        runFasthDevice<float>(tally, c, quick);
}

} // namespace wfs::devicecheck
