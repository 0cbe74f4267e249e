// The CUDA FastH backend: every method agrees with the CPU implementation (the tolerances of the FastH benchmark, Mathiasen et al. 2020),
// with and without CUDA graphs, when a device is present; without one, the failure names the CUDA call,
// the file and the line, and the backend factory says "no GPU".
#include "gpu/GpuDevice.h"
#include "engine/BackendFactory.h"
#include "gpu/DeviceResources.h"
#include "gpu/fasth/GpuHouseholderRunner.h"
#include "fasth/HouseholderRunner.h"

#include <QtTest>

using namespace wfs;
using namespace wfs::fasth;

class TestFasthGpu : public QObject {
    Q_OBJECT
private slots:
    void failuresNameTheCall();
    void factorySaysNoGpu();
    void methodsMatchCpu_data();
    void methodsMatchCpu();

private:
    static bool haveDevice() { return wfs::gpu::probeDevices().status == wfs::gpu::DeviceProbe::Status::Ok; }
};

void TestFasthGpu::failuresNameTheCall()
{
    if (haveDevice())
        QSKIP("a CUDA device is present: the failure path cannot be provoked here");
    try {
        wfs::gpu::DeviceBuffer<float> buffer(16);
        QFAIL("cudaMalloc without a device did not throw");
    } catch (const wfs::gpu::CudaError& error) {
        const QString what = QString::fromLatin1(error.what());
        QVERIFY2(what.contains(QLatin1String("cudaMalloc")) && what.contains(QLatin1String("DeviceResources.h:")), qPrintable(what));
    }
    try {
        wfs::gpu::makeGpuHouseholderRunner(0, "none");
        QFAIL("a GPU runner without a device did not throw");
    } catch (const std::runtime_error& error) {
        const QString what = QString::fromLatin1(error.what());
        QVERIFY2(what.contains(QLatin1String("cudaSetDevice")) && what.contains(QLatin1String("FasthDevice.cu:")), qPrintable(what));
    }
}

void TestFasthGpu::factorySaysNoGpu()
{
    if (haveDevice()) {
        auto runner = wfs::makeFasthRunner(wfs::BackendKind::Gpu);
        QCOMPARE(QString::fromStdString(runner->backend()), QStringLiteral("gpu"));
        return;
    }
    try {
        wfs::makeFasthRunner(wfs::BackendKind::Gpu);
        QFAIL("the factory made a GPU runner without a device");
    } catch (const wfs::BackendUnavailable& error) {
        QVERIFY2(QString::fromLatin1(error.what()).startsWith(QLatin1String("no GPU")), error.what());
    }
    QCOMPARE(QString::fromStdString(wfs::makeFasthRunner(wfs::BackendKind::Cpu)->backend()), QStringLiteral("cpu"));
}

void TestFasthGpu::methodsMatchCpu_data()
{
    QTest::addColumn<int>("d");
    QTest::addColumn<int>("k");
    QTest::addColumn<int>("m");
    QTest::addColumn<int>("block");
    QTest::addColumn<Precision>("precision");
    QTest::addColumn<bool>("graph");
    QTest::newRow("double d=100 k=97 m=5 b=16") << 100 << 97 << 5 << 16 << Precision::Double << false;
    QTest::newRow("double d=64 k=64 m=1 b=12") << 64 << 64 << 1 << 12 << Precision::Double << false;
    QTest::newRow("double d=512 k=512 m=8 b=48") << 512 << 512 << 8 << 48 << Precision::Double << false;
    QTest::newRow("float d=100 k=100 m=5 b=16") << 100 << 100 << 5 << 16 << Precision::Float << false;
    QTest::newRow("double graph d=100 k=97 m=5") << 100 << 97 << 5 << 16 << Precision::Double << true;
}

void TestFasthGpu::methodsMatchCpu()
{
    if (!haveDevice())
        QSKIP("no CUDA device");
    QFETCH(int, d);
    QFETCH(int, k);
    QFETCH(int, m);
    QFETCH(int, block);
    QFETCH(Precision, precision);
    QFETCH(bool, graph);
    const auto data = BenchData::generate(d, k, m, 3, true);
    BenchConfig config;
    config.precision = precision;
    config.blockSize = block;
    config.treeLevels = 2;
    config.threads = 2;
    config.cudaGraph = graph;
    auto cpu = makeCpuRunner();
    cpu->setProblem(data, config);
    auto gpu = wfs::makeFasthRunner(wfs::BackendKind::Gpu);
    gpu->setProblem(data, config);
    const double tolerance = precision == Precision::Double ? 1e-11 : 1e-4;
    for (BenchMethod method : allMethods()) {
        for (Pass pass : {Pass::Forward, Pass::Backward, Pass::Both}) {
            std::string why;
            if (!gpu->supports(method, pass, &why))
                continue;
            gpu->prepare(method, pass);
            QVERIFY(gpu->run(method, pass) >= 0.0);
            const BenchResult result = gpu->result();
            // The CPU sequential algorithm (or SVD-layer reference) in the same precision.
            const BenchMethod cpuMethod = method == BenchMethod::SequentialFused ? BenchMethod::Sequential : method;
            const BenchResult reference = cpu->reference(cpuMethod, pass);
            const QString what = QStringLiteral("%1 %2").arg(QLatin1String(methodName(method)), QLatin1String(passName(pass)));
            QVERIFY2(result.output.rows() == reference.output.rows() && result.output.cols() == reference.output.cols(),
                     qPrintable(what + QStringLiteral(": shape")));
            const double scale = std::max(1.0, reference.output.cwiseAbs().maxCoeff());
            const double error = (result.output - reference.output).cwiseAbs().maxCoeff() / scale;
            QVERIFY2(error < tolerance, qPrintable(what + QStringLiteral(": error %1").arg(error)));
            if (result.gradV.size() > 0) {
                const double gradScale = std::max(1.0, reference.gradV.cwiseAbs().maxCoeff());
                const double gradError = (result.gradV - reference.gradV).cwiseAbs().maxCoeff() / gradScale;
                QVERIFY2(gradError < tolerance, qPrintable(what + QStringLiteral(": dL/dV error %1").arg(gradError)));
            }
        }
    }
}

QTEST_APPLESS_MAIN(TestFasthGpu)
#include "tst_fasthgpu.moc"
