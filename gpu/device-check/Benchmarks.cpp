#include "Benchmarks.h"

#include "gpu/DeviceResources.h"
#include "FasthCases.h"
#include "ModelCases.h"
#include "OofProblem.h"
#include "gpu/model/ModelDevice.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <optional>
#include <random>

namespace wfs::devicecheck {

namespace dc = ::wfs::devicecheck;

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
                          + ", \"eval_p25_ms\": " + jsonNumber(quantile(gradientMs, 0.25))
                          + ", \"eval_p75_ms\": " + jsonNumber(quantile(gradientMs, 0.75)) + ", \"cost_ms\": " + jsonNumber(median(costMs))
                          + ", \"fft_ms\": " + jsonNumber(fftMs) + ", \"setup_ms\": " + jsonNumber(setupMs)
                          + ", \"hbm_bytes\": " + jsonNumber(bytes) + ", \"bound_ms\": " + jsonNumber(boundMs)
                          + ", \"bound_x\": " + jsonNumber(evalMs / boundMs) + ", \"pupil_pixels\": " + std::to_string(c.input.dims.pixels)
                          + ", \"band_rows\": " + std::to_string(c.input.dims.bandRows) + ", \"device\": " + jsonString(device) + "}";
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

namespace {

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
           + ", \"block\": " + std::to_string(std::min(r.block, r.d)) + ", \"precision\": " + jsonString(r.precision)
           + ", \"graph\": " + (r.graph ? "true" : "false") + ", \"launch\": " + jsonString(device.launchMode())
           + ", \"ms\": " + jsonNumber(ms) + ", \"iqr_ms\": " + jsonNumber(quantile(times, 0.75) - quantile(times, 0.25))
           + ", \"gflops\": " + jsonNumber(flops / (ms * 1e-3) / 1e9) + ", \"max_abs_error\": " + jsonNumber(err)
           + ", \"repeat\": " + std::to_string(repeat) + "}";
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

// The rows of a FastH sweep, in order of importance, so that a trimmed sweep keeps what the targets need:
// m = 32, b = 32 (the paper's), every method, forward and both, eager then graph; then the other blocks
// for the blocked methods, then the other batches, then float64 spot checks. A row planned twice is run once.
std::vector<FasthRow> fasthBenchRows(const std::vector<int>& ds, const std::vector<int>& batches, const std::vector<int>& blocks,
                                     const std::vector<std::string>& precisions)
{
    using M = gpu::DeviceMethod;
    using P = gpu::DevicePass;
    const std::vector<M> baselines = {M::FastH, M::SequentialFused, M::Library, M::SequentialCublas, M::CompactWY, M::TreeMerge, M::Dense};
    std::vector<FasthRow> rows;
    auto add = [&](const FasthRow& r) {
        for (const FasthRow& e : rows)
            if (e.d == r.d && e.m == r.m && e.block == r.block && e.precision == r.precision && e.method == r.method && e.pass == r.pass
                && e.graph == r.graph)
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
    return rows;
}

// What the rows of a sweep share: the problem per (d, m), drawn once, and one engine per precision,
// set up again only when d, m or the block change.
struct FasthBenchSweep {
    std::map<int, std::map<int, FasthBenchData>> data; // d -> m -> data
    FasthBenchEngine<float> floats;
    FasthBenchEngine<double> doubles;

    // The row's JSON line; nullopt when the device does not support the method and pass (no line).
    std::optional<std::string> run(const FasthRow& r, int repeat)
    {
        if (!data[r.d].count(r.m))
            data[r.d][r.m] = fasthBenchData(r.d, r.m, 3);
        if (r.precision == "double")
            return runOn(doubles, r, repeat);
        return runOn(floats, r, repeat);
    }

    template <typename T>
    std::optional<std::string> runOn(FasthBenchEngine<T>& engine, const FasthRow& r, int repeat)
    {
        engine.setUp(r.d, r.m, r.block, data[r.d][r.m]);
        std::string why;
        if (!engine.device->supports(r.method, r.pass, &why))
            return std::nullopt;
        return fasthRow(*engine.device, r, repeat, engine.refForward, engine.refGradX);
    }
};

std::string fasthErrorRow(const FasthRow& r, const char* what)
{
    return "{\"kind\": \"fasth\", \"method\": " + jsonString(methodName(r.method)) + ", \"pass\": " + jsonString(passName(r.pass))
           + ", \"d\": " + std::to_string(r.d) + ", \"batch\": " + std::to_string(r.m) + ", \"block\": " + std::to_string(r.block)
           + ", \"precision\": " + jsonString(r.precision) + ", \"graph\": " + (r.graph ? "true" : "false")
           + ", \"error\": " + jsonString(what) + "}";
}

} // namespace

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
    const std::vector<FasthRow> rows = fasthBenchRows(ds, batches, blocks, precisions);
    FasthBenchSweep sweep;
    int skipped = 0;
    for (const FasthRow& r : rows) {
        if (seconds(start) > budget) {
            ++skipped;
            continue;
        }
        std::string line;
        try {
            const std::optional<std::string> row = sweep.run(r, repeat);
            if (!row)
                continue;
            line = *row;
        } catch (const std::exception& e) {
            cudaGetLastError(); // reset CUDA's last error, so that the next row does not report it
            line = fasthErrorRow(r, e.what());
        }
        std::printf("%s\n", line.c_str());
        std::fflush(stdout);
    }
    if (skipped > 0)
        std::printf("{\"kind\": \"trimmed\", \"bench\": \"fasth\", \"rows_skipped\": %d, \"rows_total\": %zu, \"budget_s\": %s}\n", skipped,
                    rows.size(), jsonNumber(budget).c_str());
    return 0;
}

} // namespace wfs::devicecheck
