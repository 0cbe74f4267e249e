// HouseholderRunner on a CUDA device: converts the shared double-precision problem to the device's
// precision, maps the benchmark methods onto DeviceFasth and brings results back as Eigen matrices.
#include "GpuHouseholderRunner.h"

#include "FasthDevice.h"

#include <Eigen/Core>

#include <map>
#include <stdexcept>
#include <thread>
#include <utility>

namespace wfs::gpu {

namespace {

using fasth::BenchMethod;
using fasth::Pass;

DeviceMethod deviceMethod(BenchMethod method)
{
    switch (method) {
    case BenchMethod::Sequential:
        return DeviceMethod::SequentialCublas;
    case BenchMethod::SequentialFused:
        return DeviceMethod::SequentialFused;
    case BenchMethod::FastH:
        return DeviceMethod::FastH;
    case BenchMethod::CompactWY:
        return DeviceMethod::CompactWY;
    case BenchMethod::TreeMerge:
        return DeviceMethod::TreeMerge;
    case BenchMethod::Library:
        return DeviceMethod::Library;
    case BenchMethod::Dense:
        return DeviceMethod::Dense;
    case BenchMethod::SvdInverse:
        return DeviceMethod::SvdInverse;
    case BenchMethod::LuSolve:
        return DeviceMethod::LuSolve;
    case BenchMethod::SvdLogDet:
        return DeviceMethod::SvdLogDet;
    case BenchMethod::LuLogDet:
        return DeviceMethod::LuLogDet;
    }
    throw std::logic_error("unknown FastH method");
}

DevicePass devicePass(Pass pass)
{
    return pass == Pass::Forward ? DevicePass::Forward : pass == Pass::Backward ? DevicePass::Backward : DevicePass::Both;
}

template <typename T>
std::vector<T> toVector(const Eigen::MatrixXd& matrix)
{
    std::vector<T> values(std::size_t(matrix.size()));
    for (Eigen::Index i = 0; i < matrix.size(); ++i)
        values[std::size_t(i)] = T(matrix.data()[i]);
    return values;
}

template <typename T>
Eigen::MatrixXd toMatrix(const std::vector<T>& values, Eigen::Index rows, Eigen::Index cols)
{
    if (values.size() != std::size_t(rows * cols))
        throw std::logic_error("GPU result has an unexpected size");
    Eigen::MatrixXd matrix(rows, cols);
    for (Eigen::Index i = 0; i < matrix.size(); ++i)
        matrix.data()[i] = double(values[std::size_t(i)]);
    return matrix;
}

// The device side in one precision behind a precision-free interface.
class Engine {
public:
    virtual ~Engine() = default;
    virtual void setProblem(const fasth::BenchData& data, const fasth::BenchConfig& config) = 0;
    virtual bool supports(DeviceMethod method, DevicePass pass, std::string* why) const = 0;
    virtual void prepare(DeviceMethod method, DevicePass pass, bool graph) = 0;
    virtual float run(DeviceMethod method, DevicePass pass, bool graph) = 0;
    virtual fasth::BenchResult result(DeviceMethod method, DevicePass pass, int d, int k, int m) const = 0;
};

template <typename T>
class EngineImpl final : public Engine {
public:
    explicit EngineImpl(int device)
        : m_device(device)
    {
    }

    void setProblem(const fasth::BenchData& data, const fasth::BenchConfig& config) override
    {
        DeviceProblem problem;
        problem.d = data.d;
        problem.k = data.k;
        problem.m = data.m;
        problem.blockSize = std::min(config.blockSize, data.k);
        problem.treeLevels = config.treeLevels;
        m_device.setProblem(problem, toVector<T>(data.reflectors), toVector<T>(data.tau), toVector<T>(data.x),
                            toVector<T>(data.outputGradient));
        if (data.sigma.size() == data.d)
            // The dense W of the LU baselines is formed on the device (an O(d^3) product on the host would
            // dominate the setup for large d).
            m_device.setSvdLayer(toVector<T>(data.svdU), toVector<T>(data.svdV), toVector<T>(data.sigma), {});
    }
    bool supports(DeviceMethod method, DevicePass pass, std::string* why) const override { return m_device.supports(method, pass, why); }
    void prepare(DeviceMethod method, DevicePass pass, bool graph) override { m_device.prepare(method, pass, graph); }
    float run(DeviceMethod method, DevicePass pass, bool graph) override { return m_device.run(method, pass, graph); }
    fasth::BenchResult result(DeviceMethod method, DevicePass pass, int d, int k, int m) const override
    {
        fasth::BenchResult result;
        if (method == DeviceMethod::SvdLogDet || method == DeviceMethod::LuLogDet) {
            result.output = toMatrix(m_device.output(), 1, 1);
            return result;
        }
        if (pass == DevicePass::Forward) {
            result.output = toMatrix(m_device.output(), d, m);
            return result;
        }
        result.output = toMatrix(m_device.gradientX(), d, m);
        const std::vector<T> gradV = m_device.gradientV();
        if (!gradV.empty())
            result.gradV = toMatrix(gradV, d, k);
        return result;
    }

private:
    DeviceFasth<T> m_device;
};

class GpuHouseholderRunner final : public fasth::HouseholderRunner {
public:
    GpuHouseholderRunner(int device, std::string name)
        : m_ordinal(device)
        , m_name(std::move(name))
    {
        // Creating a double engine up front surfaces a missing or broken device here, at creation time.
        m_double = std::make_unique<EngineImpl<double>>(m_ordinal);
    }

    std::string backend() const override { return "gpu"; }
    std::string device() const override { return m_name; }

    void setProblem(std::shared_ptr<const fasth::BenchData> data, const fasth::BenchConfig& config) override
    {
        if (!data || data->k < 1 || data->k > data->d || data->m < 1 || config.blockSize < 1)
            throw std::invalid_argument("fasth bench: need 1 <= k <= d, m >= 1 and a positive block size");
        m_data = std::move(data);
        m_config = config;
        m_references.clear();
        m_cpuReference.reset();
        if (config.precision == Precision::Float && !m_float)
            m_float = std::make_unique<EngineImpl<float>>(m_ordinal);
        engine().setProblem(*m_data, config);
    }

    bool supports(BenchMethod method, Pass pass, std::string* why) const override
    {
        if (method == BenchMethod::Library && m_data && !m_data->lapackLayout) {
            if (why)
                *why = "the library baseline (ormqr) needs LAPACK-layout reflectors ([0 .. 0, 1, *])";
            return false;
        }
        if (!m_data)
            return engineFor(Precision::Double).supports(deviceMethod(method), devicePass(pass), why);
        return engineFor(m_config.precision).supports(deviceMethod(method), devicePass(pass), why);
    }

    void prepare(BenchMethod method, Pass pass) override { engine().prepare(deviceMethod(method), devicePass(pass), m_config.cudaGraph); }

    double run(BenchMethod method, Pass pass) override
    {
        m_lastMethod = method;
        m_lastPass = pass;
        return engine().run(deviceMethod(method), devicePass(pass), m_config.cudaGraph);
    }

    fasth::BenchResult result() const override
    {
        if (!m_data)
            throw std::logic_error("fasth bench: result before setProblem");
        return engineFor(m_config.precision).result(deviceMethod(m_lastMethod), devicePass(m_lastPass), m_data->d, m_data->k, m_data->m);
    }

    fasth::BenchResult reference(BenchMethod method, Pass pass) override
    {
        if (!m_data)
            throw std::logic_error("fasth bench: reference before setProblem");
        if (fasth::isUseCase(method)) {
            // The SVD-layer references (sequential inverse, sum of logs) are cheap on the host.
            if (!m_cpuReference) {
                m_cpuReference = fasth::makeCpuRunner();
                fasth::BenchConfig config = m_config;
                config.threads = int(std::max(1u, std::thread::hardware_concurrency()));
                config.cudaGraph = false;
                m_cpuReference->setProblem(m_data, config);
            }
            return m_cpuReference->reference(method, pass);
        }
        // The sequential algorithm on this device, in this precision (cuBLAS per reflector), run eagerly.
        const int key = pass == Pass::Forward ? 0 : 1;
        auto cached = m_references.find(key);
        if (cached == m_references.end()) {
            const Pass refPass = pass == Pass::Forward ? Pass::Forward : Pass::Backward;
            Engine& e = engine();
            e.prepare(DeviceMethod::SequentialCublas, devicePass(refPass), false);
            e.run(DeviceMethod::SequentialCublas, devicePass(refPass), false);
            fasth::BenchResult computed = e.result(DeviceMethod::SequentialCublas, devicePass(refPass), m_data->d, m_data->k, m_data->m);
            // This replaces the device's last result and drops a captured graph: callers take result()
            // first and prepare() again before the next timed run (as fasth-bench does).
            cached = m_references.emplace(key, std::move(computed)).first;
        }
        return cached->second;
    }

    int effectiveBlock(BenchMethod method) const override
    {
        const int k = m_data ? m_data->k : 0;
        const int b = std::min(m_config.blockSize, k);
        switch (method) {
        case BenchMethod::Sequential:
        case BenchMethod::SequentialFused:
            return 1;
        case BenchMethod::FastH:
        case BenchMethod::CompactWY:
        case BenchMethod::SvdInverse:
            return b;
        case BenchMethod::TreeMerge: {
            long long block = b;
            for (int level = 0; level < m_config.treeLevels && block < k; ++level)
                block *= 2;
            return int(std::min<long long>(block, k));
        }
        default:
            return 0; // dense GEMM, and cuSOLVER's ormqr/getrf choose their own blocking
        }
    }

private:
    Engine& engine() { return const_cast<Engine&>(engineFor(m_config.precision)); }
    const Engine& engineFor(Precision precision) const
    {
        if (precision == Precision::Float) {
            if (!m_float)
                throw std::logic_error("fasth bench: float engine used before setProblem");
            return *m_float;
        }
        return *m_double;
    }

    int m_ordinal = 0;
    std::string m_name;
    std::unique_ptr<Engine> m_double;
    std::unique_ptr<Engine> m_float;
    std::shared_ptr<const fasth::BenchData> m_data;
    fasth::BenchConfig m_config;
    std::map<int, fasth::BenchResult> m_references;
    std::unique_ptr<fasth::HouseholderRunner> m_cpuReference;
    BenchMethod m_lastMethod = BenchMethod::FastH;
    Pass m_lastPass = Pass::Forward;
};

} // namespace

std::unique_ptr<fasth::HouseholderRunner> makeGpuHouseholderRunner(int deviceOrdinal, const std::string& deviceName)
{
    return std::make_unique<GpuHouseholderRunner>(deviceOrdinal, deviceName);
}

} // namespace wfs::gpu
