// The noise model and the camera's numbers against exact values: the pixel variance (photon noise through the
// gain plus read noise) in closed form and against simulated camera counts; the Poisson objective as the
// deviance of electrons; and --offset auto and the Poisson read noise from a border whose mean and
// neighbour-difference variance are known exactly (a deterministic checkerboard), so that the photon-transfer
// arithmetic is checked to rounding, not to noise.
#include "TestSupport.h"

#include "engine/Presets.h"
#include "io/Dataset.h"
#include "io/ImageReaders.h"
#include "optics/CpuModel.h"

#include <memory>
#include <random>

using namespace wfs;

namespace {

bool contains(const std::string& text, const std::string& part)
{
    return text.find(part) != std::string::npos;
}

// Camera counts of known statistics on every pixel: a border of `mean` +- `step` in a checkerboard (every pair of
// neighbours differs by 2 step, the border's mean is `mean` exactly) and a compact PSF inside, far from the border.
Dataset checkerboardDataset(double mean, double step)
{
    Dataset data;
    for (int k = 0; k < 3; ++k) {
        DatasetPlane plane;
        plane.raw = Image(32, 32);
        for (int r = 0; r < 32; ++r)
            for (int c = 0; c < 32; ++c) {
                const int dr = r - 16, dc = c - 16;
                const double light = std::abs(dr) <= 4 && std::abs(dc) <= 4 ? 4000.0 * std::exp(-0.25 * (dr * dr + dc * dc)) : 0.0;
                plane.raw.at(r, c) = mean + ((r + c) % 2 ? step : -step) + light;
            }
        plane.raw.source = "board[" + std::to_string(k) + "]";
        plane.defocus = {PlaneDefocus::Kind::Waves, double(k - 1)};
        data.planes.push_back(plane);
    }
    data.metadata.wavelength = 633e-9;
    data.metadata.samplingQ = 3.0;
    return data;
}

bool anyMessage(const BuiltProblem& built, const std::string& part)
{
    for (const DatasetMessage& m : built.messages)
        if (contains(m.text, part))
            return true;
    return false;
}

} // namespace

class TestNoiseModel : public QObject {
    Q_OBJECT

private slots:
    // var = max(model, 0) / gain + read^2, at least 1 unit^2 (ProblemSpec.h): exact arithmetic.
    void pixelVarianceClosedForm()
    {
        QCOMPARE(pixelVariance(400.0, 3.0, 0.5), 809.0); // 800 photon + 9 read
        QCOMPARE(pixelVariance(400.0, 3.0, 4.0), 109.0);
        QCOMPARE(pixelVariance(-5.0, 3.0, 2.0), 9.0); // no negative light
        QCOMPARE(pixelVariance(0.2, 0.5, 1.0), 1.0);  // the floor
    }

    // Simulated camera counts: electrons ~ Poisson(gain x model), counts = electrons / gain + N(0, read). Their mean
    // is the model and their variance pixelVariance's. 200 000 draws: the sample variance's relative standard error
    // is sqrt(2 / n) ~ 0.3 %; tolerance 1.5 % (five of them). A gain inverted is off by a factor gain^2.
    void pixelVarianceOfSimulatedCounts()
    {
        std::mt19937_64 rng(30);
        for (const auto& [model, gain, read] : {std::tuple{400.0, 0.5, 3.0}, std::tuple{150.0, 2.5, 1.5}}) {
            std::poisson_distribution<long long> electrons(model * gain);
            std::normal_distribution<double> readNoise(0.0, read);
            constexpr int n = 200000;
            double sum = 0.0, squares = 0.0;
            for (int i = 0; i < n; ++i) {
                const double counts = double(electrons(rng)) / gain + readNoise(rng);
                sum += counts;
                squares += counts * counts;
            }
            const double mean = sum / n, variance = (squares - n * mean * mean) / (n - 1);
            qInfo("model %.0f, gain %.1f, read %.1f: mean %.3f, variance %.2f (pixelVariance %.2f)", model, gain, read, mean, variance,
                  pixelVariance(model, read, gain));
            WFS_VERIFY_CLOSE(mean, model, 0.003, 0.0);
            WFS_VERIFY_CLOSE(variance, pixelVariance(model, read, gain), 0.015, 0.0);
        }
    }

    // The Poisson objective is the deviance of electrons: weight `gain` per pixel, and since the deviance is
    // homogeneous (dev(g d, g m) = g dev(d, m)), the cost of data d at gain g is the cost of data g d (electrons)
    // with flux and background times g at gain 1. Rounding only: 1e-12.
    void poissonDevianceCountsElectrons()
    {
        const double gain = 0.25;
        ProblemSpec s;
        s.grid = PupilGrid::centred(32, 3.0);
        s.basis.maxOrder = 3;
        s.basis.start = {0.0, 0.0, 0.0, 0.4, 0.3, -0.2};
        s.objective = ObjectiveKind::Poisson;
        s.planes.resize(1);
        s.planes[0].flux = 5e4;
        s.planes[0].background = 20.0;
        const Problem shape(s);
        std::vector<double> truth = shape.initialParameters();
        truth[2] += 0.3; // data a little away from the start, so the deviance is not 0
        std::mt19937_64 rng(4);
        s.planes[0].data = simulateImages(s, truth, 24, 24, {NoiseModel::PhotonAndRead, 2.0}, &rng).front();
        for (double& v : s.planes[0].data.pixels)
            v = std::max(v, 0.0);
        s.gain = gain;
        const auto inCounts = std::make_shared<const Problem>(s);
        for (size_t i = 0; i < inCounts->weights(0).size(); ++i)
            QVERIFY(inCounts->weights(0)[i] == 0.0 || inCounts->weights(0)[i] == gain);

        ProblemSpec electrons = s;
        electrons.gain = 1.0;
        electrons.planes[0].flux *= gain;
        electrons.planes[0].background *= gain;
        for (double& v : electrons.planes[0].data.pixels)
            v *= gain;
        const auto inElectrons = std::make_shared<const Problem>(electrons);
        EvaluatorOptions options;
        options.measurePlans = false;
        const std::vector<double> x = inCounts->initialParameters();
        const double costCounts = makeCpuEvaluator(inCounts, options)->evaluate(x.data(), nullptr);
        const double costElectrons = makeCpuEvaluator(inElectrons, options)->evaluate(x.data(), nullptr);
        qInfo("deviance: %.10g (counts at gain %.2f), %.10g (electrons)", costCounts, gain, costElectrons);
        QVERIFY(costCounts > 1.0);
        WFS_VERIFY_CLOSE(costCounts, costElectrons, 1e-12, 0.0);
    }

    // --offset auto: the border's neighbour-difference variance is 2 step^2 = 72 and its mean 120, so with gain 0.5 and
    // read noise 3 the photon transfer var = (mean - offset) / gain + read^2 gives offset = 120 - 0.5 (72 - 9) = 88.5,
    // and the background's start value is 120 - 88.5 = 31.5 counts. Rounding only: 1e-9.
    void offsetFromTheBorderIsExact()
    {
        const Dataset data = checkerboardDataset(120.0, 6.0);
        ModelSettings model;
        model.objective = ObjectiveKind::Poisson;
        model.gain = 0.5;
        model.readNoise = 3.0;
        model.estimateOffset = true;
        const BuiltProblem built = buildProblem(data, model);
        QVERIFY(anyMessage(built, "camera offset 88.5 data units"));
        for (const PlaneSpec& plane : built.spec.planes)
            WFS_VERIFY_CLOSE(plane.background, 31.5, 1e-9, 0.0);
        QCOMPARE(built.spec.readNoise, 3.0); // given, so kept
    }

    // The bias a file states (FITS BIAS; the presets write it) is removed where the user gives no offset, and said;
    // the user's offset stands over it; the other objectives subtract the background and leave it alone. Read from
    // the demo preset's cube written with a bias, then on the board: 120 - 88.5 leaves a background of 31.5 (1e-9).
    void aFilesBiasIsRemovedUnlessGiven()
    {
        PresetOptions po;
        po.grid = 32;
        PresetCase demo = makePreset("demo", po);
        demo.cameraBias = 100.0;
        const QByteArray bytes = presetFitsBytes(demo, "demo", 1);
        Dataset read;
        addImages(read, readFitsMemory(reinterpret_cast<const std::uint8_t*>(bytes.constData()), size_t(bytes.size()), "demo.fits"),
                  "demo.fits");
        QCOMPARE(read.metadata.cameraOffset.value_or(0.0), 100.0);
        QVERIFY(read.metadata.origin["cameraOffset"].find("BIAS") != std::string::npos);

        Dataset data = checkerboardDataset(120.0, 6.0);
        data.metadata.cameraOffset = 88.5;
        data.metadata.origin["cameraOffset"] = "board.fits: keyword BIAS";
        ModelSettings model;
        model.objective = ObjectiveKind::Poisson;
        model.gain = 0.5;
        model.readNoise = 3.0;
        const BuiltProblem stated = buildProblem(data, model);
        QVERIFY(anyMessage(stated, "camera offset 88.5 data units removed, as board.fits: keyword BIAS"));
        for (const PlaneSpec& plane : stated.spec.planes)
            WFS_VERIFY_CLOSE(plane.background, 31.5, 1e-9, 0.0);

        model.offset = 50.0;
        const BuiltProblem given = buildProblem(data, model);
        QVERIFY(!anyMessage(given, "camera offset"));
        for (const PlaneSpec& plane : given.spec.planes)
            WFS_VERIFY_CLOSE(plane.background, 70.0, 1e-9, 0.0);

        model.offset = 0.0;
        model.objective = ObjectiveKind::LeastSquares;
        QVERIFY(!anyMessage(buildProblem(data, model), "camera offset"));
    }

    // The Poisson read noise from the border with a known offset: the neighbour-difference variance 72 less the
    // photon noise (mean - offset) / gain = (120 - 88.5) / 0.5 = 63 leaves read^2 = 9. Rounding only: 1e-9.
    // The border's read noise itself is E[(a - b)^2 / 2] - mean = 72 - 120 for this board (PlanePreparation).
    void readNoiseFromTheBorderIsExact()
    {
        Dataset data = checkerboardDataset(120.0, 6.0);
        prepare(data);
        WFS_VERIFY_CLOSE(data.preparation->planes[0].background, 120.0, 1e-12, 0.0);
        WFS_VERIFY_CLOSE(data.preparation->planes[0].readNoiseSquared, 72.0 - 120.0, 1e-12, 0.0);
        ModelSettings model;
        model.objective = ObjectiveKind::Poisson;
        model.gain = 0.5;
        model.offset = 88.5;
        const BuiltProblem built = buildProblem(data, model);
        WFS_VERIFY_CLOSE(built.spec.readNoise, 3.0, 1e-9, 0.0);
        QVERIFY(anyMessage(built, "read noise 3 counts RMS from the border"));
        QCOMPARE(built.spec.gain, 0.5);
        for (const PlaneSpec& plane : built.spec.planes)
            WFS_VERIFY_CLOSE(plane.background, 31.5, 1e-9, 0.0);
    }
};

QTEST_GUILESS_MAIN(TestNoiseModel)
#include "tst_noisemodel.moc"
