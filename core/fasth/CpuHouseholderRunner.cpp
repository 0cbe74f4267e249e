// The CPU (Eigen) implementation of HouseholderRunner: FastH and its variants, and the baselines Eigen
// offers on the same data (HouseholderSequence, dense GEMM, PartialPivLU).
#include "HouseholderRunner.h"
#include "Householder.h"
#include "SvdLayer.h"
#include "optics/Threads.h"

#include <Eigen/Householder>
#include <Eigen/LU>

#include <chrono>
#include <cmath>
#include <fstream>
#include <map>
#include <stdexcept>
#include <thread>

namespace wfs::fasth {

namespace {

std::string cpuModel()
{
    std::ifstream cpuinfo("/proc/cpuinfo");
    std::string line;
    std::string model = "CPU";
    while (std::getline(cpuinfo, line)) {
        if (line.rfind("model name", 0) == 0) {
            const auto colon = line.find(':');
            if (colon != std::string::npos)
                model = line.substr(line.find_first_not_of(' ', colon + 1));
            break;
        }
    }
    return model + " (" + std::to_string(std::max(1u, std::thread::hardware_concurrency())) + " hardware threads)";
}

Algorithm algorithmOf(BenchMethod method)
{
    switch (method) {
    case BenchMethod::FastH:
        return Algorithm::FastH;
    case BenchMethod::CompactWY:
        return Algorithm::CompactWY;
    case BenchMethod::TreeMerge:
        return Algorithm::TreeMerge;
    default:
        return Algorithm::Sequential;
    }
}

// The runner's work in one precision.
class RunnerImplBase {
public:
    virtual ~RunnerImplBase() = default;
    virtual void prepare(BenchMethod method, Pass pass) = 0;
    virtual double run(BenchMethod method, Pass pass) = 0;
    virtual BenchResult result() const = 0;
    virtual BenchResult reference(BenchMethod method, Pass pass) = 0;
};

template <typename Scalar>
class RunnerImpl final : public RunnerImplBase {
public:
    using MatrixType = Matrix<Scalar>;
    using VectorType = Vector<Scalar>;

    RunnerImpl(std::shared_ptr<const BenchData> data, const BenchConfig& config)
        : m_data(std::move(data))
        , m_config(config)
        , m_v(m_data->reflectors.cast<Scalar>())
        , m_tau(m_data->tau.cast<Scalar>())
        , m_x(m_data->x.cast<Scalar>())
        , m_g(m_data->outputGradient.cast<Scalar>())
    {
        // Every backward pass starts from the same H X, computed once by the sequential algorithm.
        m_forwardOutput = m_x;
        HouseholderProduct<Scalar> sequential(options(Algorithm::Sequential));
        sequential.prepare(m_v);
        sequential.apply(m_forwardOutput);
    }

    void prepare(BenchMethod method, Pass) override
    {
        m_output.resize(m_data->d, m_data->m);
        m_state.resize(m_data->d, m_data->m);
        m_gradient.resize(m_data->d, m_data->m);
        if (method == BenchMethod::Dense && m_q.size() == 0) {
            m_q = MatrixType::Identity(m_data->d, m_data->d);
            HouseholderProduct<Scalar> product(options(Algorithm::FastH));
            product.prepare(m_v);
            product.apply(m_q);
            m_denseGrad.resize(m_data->d, m_data->d);
        }
        if (method == BenchMethod::Library)
            m_stacked.resize(m_data->d, 2 * m_data->m);
        if (isUseCase(method) && !m_layer) {
            if (m_data->sigma.size() != m_data->d)
                throw std::logic_error("fasth bench: use-case methods need BenchData with the SVD layer");
            m_layer = std::make_unique<SvdLayer<Scalar>>(m_data->svdU.cast<Scalar>(), m_data->svdV.cast<Scalar>(),
                                                         m_data->sigma.cast<Scalar>(), options(Algorithm::FastH));
        }
        if ((method == BenchMethod::LuSolve || method == BenchMethod::LuLogDet) && m_w.size() == 0)
            m_w = m_layer->dense();
    }

    double run(BenchMethod method, Pass pass) override
    {
        // m_gradV keeps its storage between runs, as a training loop's gradient buffer would: a fresh
        // d x k allocation inside the timing would time the operating system's page faults instead.
        m_hasGradV = false;
        m_scalarResult.reset();
        const auto start = std::chrono::steady_clock::now();
        execute(method, pass);
        const auto stop = std::chrono::steady_clock::now();
        m_lastMethod = method;
        m_lastPass = pass;
        return std::chrono::duration<double, std::milli>(stop - start).count();
    }

    BenchResult result() const override
    {
        BenchResult result;
        if (m_scalarResult) {
            result.output = Eigen::MatrixXd::Constant(1, 1, *m_scalarResult);
            return result;
        }
        result.output = (m_lastPass == Pass::Forward ? m_output : m_gradient).template cast<double>();
        if (m_hasGradV)
            result.gradV = m_gradV.template cast<double>();
        return result;
    }

    BenchResult reference(BenchMethod method, Pass pass) override
    {
        BenchResult reference;
        if (method == BenchMethod::SvdLogDet || method == BenchMethod::LuLogDet) {
            double sum = 0.0;
            for (Eigen::Index i = 0; i < m_data->sigma.size(); ++i)
                sum += std::log(std::abs(double(Scalar(m_data->sigma(i)))));
            reference.output = Eigen::MatrixXd::Constant(1, 1, sum);
            return reference;
        }
        if (isUseCase(method)) {
            // Only the layer is needed, not the dense W that prepare(LuSolve) would form in O(d^3).
            prepare(BenchMethod::SvdInverse, pass);
            if (m_svdReference.size() == 0) {
                SvdLayer<Scalar> layer(m_layer->uReflectors(), m_layer->vReflectors(), m_layer->sigma(), options(Algorithm::Sequential));
                m_svdReference = layer.inverse(m_x).template cast<double>();
            }
            reference.output = m_svdReference;
            return reference;
        }
        const int key = pass == Pass::Forward ? 0 : 1; // backward and both compute the same gradients
        auto cached = m_references.find(key);
        if (cached == m_references.end()) {
            HouseholderProduct<Scalar> sequential(options(Algorithm::Sequential));
            sequential.prepare(m_v);
            BenchResult computed;
            if (pass == Pass::Forward) {
                computed.output = m_forwardOutput.template cast<double>();
            } else {
                MatrixType a = m_forwardOutput;
                MatrixType g = m_g;
                MatrixType gradV;
                sequential.backward(a, g, gradV);
                computed.output = g.template cast<double>();
                computed.gradV = gradV.template cast<double>();
            }
            cached = m_references.emplace(key, std::move(computed)).first;
        }
        return cached->second;
    }

private:
    Options options(Algorithm algorithm) const
    {
        Options options;
        options.algorithm = algorithm;
        options.blockSize = m_config.blockSize;
        options.treeLevels = m_config.treeLevels;
        options.threads = m_config.threads;
        return options;
    }

    void execute(BenchMethod method, Pass pass)
    {
        const Eigen::Index m = m_data->m;
        switch (method) {
        case BenchMethod::Sequential:
        case BenchMethod::FastH:
        case BenchMethod::CompactWY:
        case BenchMethod::TreeMerge: {
            const Algorithm algorithm = algorithmOf(method);
            if (m_product.options().algorithm != algorithm || m_product.options().blockSize != m_config.blockSize)
                m_product.setOptions(options(algorithm));
            // The factors depend on V only, but V changes at every training step, so they are part of
            // every pass; Both shares them between its forward and backward halves.
            m_product.prepare(m_v);
            if (pass != Pass::Backward) {
                m_output = m_x;
                m_product.apply(m_output);
            }
            if (pass != Pass::Forward) {
                m_state = pass == Pass::Both ? m_output : m_forwardOutput;
                m_gradient = m_g;
                m_product.backward(m_state, m_gradient, m_gradV);
                m_hasGradV = true;
            }
            return;
        }
        case BenchMethod::Library: {
            const auto sequence = Eigen::householderSequence(m_v, m_tau);
            if (pass != Pass::Backward) {
                m_output = m_x;
                m_output.applyOnTheLeft(sequence);
            }
            if (pass != Pass::Forward) {
                // The library has no reflector gradients; what it can do is the data FastH's step 1
                // needs: the block input (Q^T A) and dL/dX = Q^T G, in one blocked application.
                m_stacked.leftCols(m) = pass == Pass::Both ? m_output : m_forwardOutput;
                m_stacked.rightCols(m) = m_g;
                m_stacked.applyOnTheLeft(sequence.transpose());
                m_gradient = m_stacked.rightCols(m);
            }
            return;
        }
        case BenchMethod::Dense:
            if (pass != Pass::Backward)
                m_output.noalias() = m_q * m_x;
            if (pass != Pass::Forward) {
                // A dense layer's backward: dL/dX = Q^T G and dL/dQ = G X^T (X is its stored activation).
                m_gradient.noalias() = m_q.transpose() * m_g;
                m_denseGrad.noalias() = m_g * m_x.transpose();
            }
            return;
        case BenchMethod::SvdInverse:
            m_output = m_layer->inverse(m_x);
            return;
        case BenchMethod::LuSolve: {
            // Factor and solve: the weight changes at every training step, so the factorisation counts.
            const Eigen::PartialPivLU<MatrixType> lu(m_w);
            m_output = lu.solve(m_x);
            return;
        }
        case BenchMethod::SvdLogDet:
            m_scalarResult = double(m_layer->logAbsDeterminant());
            return;
        case BenchMethod::LuLogDet: {
            const Eigen::PartialPivLU<MatrixType> lu(m_w);
            // Summing logs of the pivots instead of lu.determinant() avoids overflow for large d.
            double sum = 0.0;
            for (Eigen::Index i = 0; i < m_w.rows(); ++i)
                sum += std::log(std::abs(double(lu.matrixLU()(i, i))));
            m_scalarResult = sum;
            return;
        }
        case BenchMethod::SequentialFused:
            break;
        }
        throw std::logic_error(std::string("fasth bench: the CPU backend has no method ") + methodName(method));
    }

    std::shared_ptr<const BenchData> m_data;
    BenchConfig m_config;
    MatrixType m_v;
    VectorType m_tau;
    MatrixType m_x;
    MatrixType m_g;
    MatrixType m_forwardOutput;
    MatrixType m_output, m_state, m_gradient, m_gradV, m_stacked, m_q, m_denseGrad, m_w;
    bool m_hasGradV = false; // whether the last run computed m_gradV
    std::optional<double> m_scalarResult;
    HouseholderProduct<Scalar> m_product;
    std::unique_ptr<SvdLayer<Scalar>> m_layer;
    Eigen::MatrixXd m_svdReference;
    std::map<int, BenchResult> m_references;
    BenchMethod m_lastMethod = BenchMethod::Sequential;
    Pass m_lastPass = Pass::Forward;
};

class CpuHouseholderRunner final : public HouseholderRunner {
public:
    std::string backend() const override { return "cpu"; }
    std::string device() const override
    {
        if (m_device.empty())
            m_device = cpuModel();
        return m_device;
    }

    void setProblem(std::shared_ptr<const BenchData> data, const BenchConfig& config) override
    {
        if (!data || data->k < 1 || data->k > data->d || data->m < 1)
            throw std::invalid_argument("fasth bench: need 1 <= k <= d and m >= 1");
        if (config.threads < 1 || config.blockSize < 1)
            throw std::invalid_argument("fasth bench: threads and block size must be positive");
        threads::requireOpenMpTeam(config.threads); // OpenMP's team (Householder.cpp) would end the process instead
        // Eigen's own products (the library and dense baselines, the GEMMs inside FastH when one slice
        // runs) use this many threads too, so every method gets the same thread count.
        Eigen::setNbThreads(config.threads);
        m_config = config;
        m_blockK = data->k;
        m_batch = data->m;
        m_lapackLayout = data->lapackLayout;
        if (config.precision == Precision::Double)
            m_impl = std::make_unique<RunnerImpl<double>>(std::move(data), config);
        else
            m_impl = std::make_unique<RunnerImpl<float>>(std::move(data), config);
    }

    bool supports(BenchMethod method, Pass pass, std::string* why) const override
    {
        if (method == BenchMethod::SequentialFused) {
            if (why)
                *why = "sequential-fused is a GPU kernel; on the CPU 'sequential' is already one loop";
            return false;
        }
        if (method == BenchMethod::Library && !m_lapackLayout) {
            if (why)
                *why = "the library baseline needs LAPACK-layout reflectors ([0 .. 0, 1, *])";
            return false;
        }
        if (isUseCase(method) && pass != Pass::Forward) {
            if (why)
                *why = std::string(methodName(method)) + " has only a forward pass";
            return false;
        }
        return true;
    }

    void prepare(BenchMethod method, Pass pass) override { impl().prepare(method, pass); }
    double run(BenchMethod method, Pass pass) override { return impl().run(method, pass); }
    BenchResult result() const override
    {
        if (!m_impl)
            throw std::logic_error("fasth bench: result before setProblem");
        return m_impl->result();
    }
    BenchResult reference(BenchMethod method, Pass pass) override { return impl().reference(method, pass); }

    int effectiveBlock(BenchMethod method) const override
    {
        switch (method) {
        case BenchMethod::Sequential:
        case BenchMethod::SequentialFused:
            return 1;
        case BenchMethod::FastH:
        case BenchMethod::CompactWY:
        case BenchMethod::SvdInverse:
            return std::min(m_config.blockSize, m_blockK);
        case BenchMethod::TreeMerge: {
            long long block = std::min(m_config.blockSize, m_blockK);
            for (int level = 0; level < m_config.treeLevels && block < m_blockK; ++level)
                block *= 2;
            return int(std::min<long long>(block, m_blockK));
        }
        case BenchMethod::Library:
            // Eigen's HouseholderSequence: blocks of 48 from 48 reflectors on (halves below 96), else one
            // reflector at a time; a single column is always applied unblocked.
            if (m_blockK < 48 || m_batch < 2)
                return 1;
            return m_blockK < 96 ? (m_blockK + 1) / 2 : 48;
        default:
            return 0;
        }
    }

private:
    RunnerImplBase& impl()
    {
        if (!m_impl)
            throw std::logic_error("fasth bench: run before setProblem");
        return *m_impl;
    }

    BenchConfig m_config;
    int m_blockK = 0;
    int m_batch = 0;
    bool m_lapackLayout = true;
    std::unique_ptr<RunnerImplBase> m_impl;
    mutable std::string m_device;
};

} // namespace

std::unique_ptr<HouseholderRunner> makeCpuRunner()
{
    return std::make_unique<CpuHouseholderRunner>();
}

} // namespace wfs::fasth
