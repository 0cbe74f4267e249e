#include "gpu/model/GpuModel.h"

#include "gpu/model/ModelDevice.h"

#include <stdexcept>

namespace wfs::gpu {

namespace {

class GpuModel final : public ModelEvaluator {
public:
    GpuModel(std::shared_ptr<const Problem> problem, const EvaluatorOptions& options, std::string deviceName)
        : m_problem(std::move(problem))
        , m_precision(options.precision)
        , m_deviceName(std::move(deviceName))
        , m_device(options.device, modelInput(*m_problem, options.precision), options.cudaGraphs)
    {
    }

    const Problem& problem() const override { return *m_problem; }

    BackendInfo info() const override
    {
        BackendInfo info;
        info.backend = "gpu";
        info.device = m_deviceName;
        info.precision = m_precision;
        info.threads = 1;
        info.launch = m_device.launchMode();
        info.trafficBytes = m_device.dims().trafficBytes(true);
        return info;
    }

    double evaluate(const double* parameters, double* gradient) override
    {
        const Problem& pr = *m_problem;
        if (!pr.hasData())
            throw std::logic_error("evaluate() needs a problem with data");
        const ModelParameters p = pr.unpack(parameters);
        const std::vector<double> block = parameterBlock(pr, m_device.dims(), p);
        const double* result = m_device.evaluate(block.data(), gradient != nullptr);
        return costAndGradient(pr, m_device.dims(), p, result, gradient);
    }

    std::vector<std::vector<double>> modelImages(const double* parameters) override
    {
        const Problem& pr = *m_problem;
        const ModelParameters p = pr.unpack(parameters);
        const std::vector<double> all = m_device.intensities(parameterBlock(pr, m_device.dims(), p).data());
        const size_t perPlane = size_t(pr.gridSize()) * size_t(pr.gridSize());
        std::vector<std::vector<double>> images;
        for (int k = 0; k < pr.planeCount(); ++k)
            images.emplace_back(all.begin() + long(size_t(k) * perPlane), all.begin() + long(size_t(k + 1) * perPlane));
        return images;
    }

    double measureFftMs(int repeats) override { return m_device.measureFftMs(repeats); }

private:
    std::shared_ptr<const Problem> m_problem;
    Precision m_precision;
    std::string m_deviceName;
    ModelDevice m_device;
};

} // namespace

std::unique_ptr<ModelEvaluator> makeGpuEvaluator(std::shared_ptr<const Problem> problem, const EvaluatorOptions& options,
                                                 const std::string& deviceName)
{
    if (!problem)
        throw std::invalid_argument("makeGpuEvaluator: no problem");
    return std::make_unique<GpuModel>(std::move(problem), options, deviceName);
}

} // namespace wfs::gpu
