#include "fit/FiniteDifference.h"

#include "base/Cancellation.h"

#include <cmath>
#include <limits>

namespace wfs {

namespace {
class FiniteDifferenceEvaluator final : public ModelEvaluator {
public:
    explicit FiniteDifferenceEvaluator(std::unique_ptr<ModelEvaluator> inner)
        : m_inner(std::move(inner))
    {
    }

    const Problem& problem() const override { return m_inner->problem(); }

    double evaluate(const double* parameters, double* gradient) override
    {
        const double cost = m_inner->evaluate(parameters, nullptr);
        if (!gradient || !std::isfinite(cost))
            return cost;
        const int count = parameterCount();
        const double eps = m_inner->info().precision == Precision::Double ? std::numeric_limits<double>::epsilon()
                                                                          : double(std::numeric_limits<float>::epsilon());
        const double root = std::sqrt(eps);
        std::vector<double> x(parameters, parameters + count);
        for (int i = 0; i < count; ++i) {
            throwIfCancelled(cancelFlag());
            const double h = root * std::max(1.0, std::abs(x[size_t(i)]));
            const double saved = x[size_t(i)];
            x[size_t(i)] = saved + h;
            const double step = x[size_t(i)] - saved; // the step actually representable
            gradient[i] = (m_inner->evaluate(x.data(), nullptr) - cost) / step;
            x[size_t(i)] = saved;
        }
        return cost;
    }

    std::vector<std::vector<double>> modelImages(const double* parameters) override { return m_inner->modelImages(parameters); }
    BackendInfo info() const override { return m_inner->info(); }
    int costEvaluationsPerGradient() const override { return parameterCount() + 1; }
    double measureFftMs(int repeats) override { return m_inner->measureFftMs(repeats); }

private:
    std::unique_ptr<ModelEvaluator> m_inner;
};
} // namespace

std::unique_ptr<ModelEvaluator> makeFiniteDifferenceEvaluator(std::unique_ptr<ModelEvaluator> inner)
{
    return std::make_unique<FiniteDifferenceEvaluator>(std::move(inner));
}

} // namespace wfs
