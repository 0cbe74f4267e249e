#include "HouseholderRunner.h"

#include <Eigen/QR>

#include <random>

namespace wfs::fasth {

namespace {
struct MethodName {
    BenchMethod method;
    const char* name;
};
constexpr MethodName kMethodNames[] = {
    {BenchMethod::Sequential, "sequential"}, {BenchMethod::SequentialFused, "sequential-fused"},
    {BenchMethod::FastH, "fasth"},           {BenchMethod::CompactWY, "ut"},
    {BenchMethod::TreeMerge, "tree"},        {BenchMethod::Library, "library"},
    {BenchMethod::Dense, "dense"},           {BenchMethod::SvdInverse, "svd-inverse"},
    {BenchMethod::LuSolve, "lu-solve"},      {BenchMethod::SvdLogDet, "svd-logdet"},
    {BenchMethod::LuLogDet, "lu-logdet"},
};
} // namespace

const char* methodName(BenchMethod method)
{
    for (const auto& entry : kMethodNames)
        if (entry.method == method)
            return entry.name;
    return "unknown";
}

std::optional<BenchMethod> methodFromName(std::string_view name)
{
    for (const auto& entry : kMethodNames)
        if (name == entry.name)
            return entry.method;
    return std::nullopt;
}

std::vector<BenchMethod> allMethods()
{
    std::vector<BenchMethod> methods;
    for (const auto& entry : kMethodNames)
        methods.push_back(entry.method);
    return methods;
}

const char* passName(Pass pass)
{
    switch (pass) {
    case Pass::Forward:
        return "forward";
    case Pass::Backward:
        return "backward";
    case Pass::Both:
        return "both";
    }
    return "unknown";
}

std::optional<Pass> passFromName(std::string_view name)
{
    for (Pass pass : {Pass::Forward, Pass::Backward, Pass::Both})
        if (name == passName(pass))
            return pass;
    return std::nullopt;
}

bool isUseCase(BenchMethod method)
{
    return method == BenchMethod::SvdInverse || method == BenchMethod::LuSolve || method == BenchMethod::SvdLogDet
           || method == BenchMethod::LuLogDet;
}

bool isBlocked(BenchMethod method)
{
    return method == BenchMethod::FastH || method == BenchMethod::CompactWY || method == BenchMethod::TreeMerge;
}

double nominalFlops(BenchMethod method, Pass pass, int d, int k, int m)
{
    const double dd = d, kk = k, mm = m;
    switch (method) {
    case BenchMethod::SvdInverse:
    case BenchMethod::LuSolve:
        return 4.0 * dd * dd * mm;
    case BenchMethod::SvdLogDet:
    case BenchMethod::LuLogDet:
        return dd;
    default:
        break;
    }
    const double apply = 4.0 * dd * kk * mm;
    switch (pass) {
    case Pass::Forward:
        return apply;
    case Pass::Backward:
        return 3.0 * apply;
    case Pass::Both:
        return 4.0 * apply;
    }
    return apply;
}

std::shared_ptr<const BenchData> BenchData::generate(int d, int k, int m, std::uint64_t seed, bool withSvdLayer, bool lapackLayout)
{
    auto data = std::make_shared<BenchData>();
    data->d = d;
    data->k = k;
    data->m = m;
    std::mt19937_64 generator(seed);
    std::normal_distribution<double> normal;
    auto gaussian = [&](Eigen::Index rows, Eigen::Index cols) {
        Eigen::MatrixXd matrix(rows, cols);
        for (Eigen::Index i = 0; i < matrix.size(); ++i)
            matrix.data()[i] = normal(generator);
        return matrix;
    };
    data->lapackLayout = lapackLayout;
    if (lapackLayout) {
        const Eigen::HouseholderQR<Eigen::MatrixXd> qr(gaussian(d, k));
        data->reflectors = qr.matrixQR().triangularView<Eigen::StrictlyLower>();
        data->reflectors.diagonal().setOnes();
    } else {
        data->reflectors = gaussian(d, k);
    }
    data->tau = (2.0 / data->reflectors.colwise().squaredNorm().array()).transpose();
    data->x = gaussian(d, m);
    data->outputGradient = gaussian(d, m);
    if (withSvdLayer) {
        data->svdU = gaussian(d, d);
        data->svdV = gaussian(d, d);
        std::uniform_real_distribution<double> magnitude(0.5, 2.0);
        std::bernoulli_distribution negative(0.5);
        data->sigma.resize(d);
        for (int i = 0; i < d; ++i)
            data->sigma(i) = negative(generator) ? -magnitude(generator) : magnitude(generator);
    }
    return data;
}

std::shared_ptr<const BenchData> BenchData::withBatch(int batch, std::uint64_t seed) const
{
    auto data = std::make_shared<BenchData>(*this);
    data->m = batch;
    // A stream of its own for each batch size, so that the batch does not depend on the sizes run before.
    std::mt19937_64 generator(seed ^ (0x9e3779b97f4a7c15ull * std::uint64_t(batch + 1)));
    std::normal_distribution<double> normal;
    data->x.resize(d, batch);
    data->outputGradient.resize(d, batch);
    for (Eigen::Index i = 0; i < data->x.size(); ++i)
        data->x.data()[i] = normal(generator);
    for (Eigen::Index i = 0; i < data->outputGradient.size(); ++i)
        data->outputGradient.data()[i] = normal(generator);
    return data;
}

} // namespace wfs::fasth
