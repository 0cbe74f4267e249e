// wavefront-cli device-reference --out DIR: the reference data of the GPU-only device check
// (gpu/device-check/), computed here by the CPU backend (FFTW, Eigen) and written in the device check's
// file format by the writers the GPU model's host-side library registers (engine/DeviceReference.h), so that
// the harness on a machine without Qt, FFTW or the engine can hold the CUDA model and FastH against them.
//
// Model cases: the OOF preset (grid 64 order 4, grid 128 order 8), the demo preset (grid 128), one "rich" problem
// per objective (every parameter kind, masked data), a spectrum, the pupil-function and the vectorial model, each in
// the device layout
// (gpu/model/ModelTranslation.h) with the parameter block, the float64 CPU cost and gradient at several
// points (the preset start and random ones), the linear map from the device's result block to the
// free-parameter gradient at each point (so the harness needs no Problem), and the CPU model images
// at the first point. FastH cases: BenchData problems (LAPACK-layout reflectors, an SVD layer) with the
// CPU's sequential products, gradients, SVD inverse and log-determinant.
#include "CliCommon.h"
#include "Commands.h"

#include "engine/DeviceReference.h"
#include "engine/Presets.h"

#include <QDir>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <random>
#include <sstream>
#include <tuple>

namespace wfs::cli {

namespace {

// The spec with noisy data simulated at random aberrations (N(0, 0.3) rad per Zernike term), of the grid less 8 pixels
// on a side; with `maskOne`, one masked pixel in plane 1.
std::shared_ptr<const Problem> withData(ProblemSpec s, std::uint64_t seed, bool maskOne)
{
    const Problem plain(s);
    std::vector<double> truth = plain.initialParameters();
    std::mt19937_64 rng(seed);
    std::normal_distribution<double> normal(0.0, 0.3);
    for (size_t i = 0; i + 1 < plain.modes().size(); ++i)
        truth[i] = normal(rng);
    const int side = s.grid.size - 8;
    const auto images = simulateImages(s, truth, side, side, {NoiseModel::PhotonAndRead, 3.0}, &rng);
    for (size_t k = 0; k < images.size(); ++k)
        s.planes[k].data = images[k];
    if (maskOne) {
        s.planes[1].mask.assign(size_t(side) * size_t(side), 1);
        s.planes[1].mask[size_t(side / 2) * size_t(side) + size_t(side / 2)] = 0;
    }
    return std::make_shared<const Problem>(s);
}

// The rich problem (engine/Presets.h: every parameter kind) at order 5 with noisy data smaller than the
// grid and one masked pixel: every branch of the device's per-sample formulas. With `pupilFunction`, the
// pupil-function model instead of the Gaussian illumination: Zernike terms plus a zonal phase remainder, a zonal
// amplitude, a defocus scale and per-plane offsets on a fourth plane, pixel integration and a bead's size (the
// device's hostPupil, defocus terms and blur).
std::shared_ptr<const Problem> richProblem(ObjectiveKind objective, int grid, std::uint64_t seed, bool pupilFunction = false,
                                           bool spectrum = false)
{
    ProblemSpec s = richProblemSpec(objective, grid, 5);
    if (spectrum) { // three wavelengths on grids N - 2, N, N + 2, with pixel integration
        s.spectrum.bandwidth = 0.1 * s.wavelength;
        s.spectrum.samples = 3;
        s.detector.pixelIntegration = true;
    }
    if (pupilFunction) {
        s.pupil.illumination = Illumination{};
        s.phaseModel = PupilPhaseModel::Both;
        s.amplitudeModel = PupilAmplitudeModel::Zonal;
        s.regularization = 3.0;
        s.nuisance.fitDefocusScale = s.nuisance.fitDefocusOffsets = true;
        s.planes.push_back(s.planes[1]);
        s.planes.back().diversity.axialDistance = 0.1e-6;
        s.detector.pixelIntegration = true;
        s.detector.objectDiameterPixels = 1.7;
    }
    return withData(s, seed, true);
}

// The rich problem under the vectorial model (optics/Vectorial.h): an oil objective of NA 1.45 above the water
// sample's index (supercritical light), an emitter 0.6 um deep with its depth fitted; a free dipole, or a fixed one
// (theta 57 deg, phi 23 deg) with pixel integration and a bead's size (the device's intensity path); with
// `spectrum`, three wavelengths 10 % apart.
std::shared_ptr<const Problem> vectorialProblem(ObjectiveKind objective, bool freeDipole, std::uint64_t seed, bool spectrum = false)
{
    ProblemSpec s = richProblemSpec(objective, 48, 5);
    s.model = ImagingModel::Vectorial;
    VectorialSpec& v = s.vectorial;
    v.numericalAperture = 1.45;
    v.immersionIndex = 1.515;
    v.sampleIndex = 1.33;
    v.emitterDepth = 0.6e-6;
    v.fitEmitterDepth = true;
    v.dipole.free = freeDipole;
    v.dipole.theta = 1.0;
    v.dipole.phi = 0.4;
    for (PlaneSpec& plane : s.planes)
        if (plane.diversity.kind == DiversityKind::AxialHighNa || plane.diversity.kind == DiversityKind::AxialParaxial) {
            plane.diversity.numericalAperture = v.numericalAperture;
            plane.diversity.immersionIndex = v.immersionIndex;
        }
    if (!freeDipole) {
        s.detector.pixelIntegration = true;
        s.detector.objectDiameterPixels = 1.7;
    }
    if (spectrum) {
        s.spectrum.bandwidth = 0.1 * s.wavelength;
        s.spectrum.samples = 3;
    }
    return withData(s, seed, false);
}

} // namespace

// Every model case: the presets, the rich problem per objective, a spectrum, the pupil-function and vectorial models. Adds each
// file to `index`.
void writeModelCases(const std::string& dir, std::vector<std::string>& index)
{
    auto preset = [](const std::string& name, int grid, int order) {
        PresetOptions options;
        options.grid = grid;
        options.order = order;
        return makePreset(name, options);
    };
    auto model = [&](const std::string& name, const std::string& about, const std::shared_ptr<const Problem>& problem,
                     std::vector<std::vector<double>> points) {
        const std::string file = "model-" + name + ".bin";
        deviceReferenceWriters().modelCase(dir + "/" + file, about, problem, points);
        index.push_back("model " + name + " " + file);
        std::fprintf(stderr, "%s: %s\n", file.c_str(), about.c_str());
    };
    for (const auto& [name, grid, order] : {std::tuple<std::string, int, int>{"oof", 64, 4}, {"oof", 128, 8}, {"demo", 128, 4}}) {
        const PresetCase c = preset(name, grid, order);
        auto problem = std::make_shared<const Problem>(c.spec);
        const std::string about = name + " preset, grid " + std::to_string(grid) + ", order " + std::to_string(order)
                                  + ", noise: " + c.noiseDescription + "; points: the preset start, two random";
        model(name + "-" + std::to_string(grid) + "-" + std::to_string(order), about, problem,
              {c.start, perturbedParameters(*problem, c.start, 1), perturbedParameters(*problem, c.start, 2)});
    }
    for (const auto& [name, objective] : {std::pair<std::string, ObjectiveKind>{"least-squares", ObjectiveKind::LeastSquares},
                                          {"poisson", ObjectiveKind::Poisson},
                                          {"weighted", ObjectiveKind::WeightedLeastSquares}}) {
        auto problem = richProblem(objective, 48, 11);
        const std::vector<double> x0 = problem->initialParameters();
        model("rich-" + name, "rich problem (every parameter kind, masked data), " + name + ", grid 48, order 5; three random points",
              problem, {perturbedParameters(*problem, x0, 1), perturbedParameters(*problem, x0, 2), perturbedParameters(*problem, x0, 3)});
    }
    {
        auto problem = richProblem(ObjectiveKind::Poisson, 48, 12, true);
        const std::vector<double> x0 = problem->initialParameters();
        auto spectrum = richProblem(ObjectiveKind::WeightedLeastSquares, 48, 13, false, true);
        const std::vector<double> s0 = spectrum->initialParameters();
        model("spectrum",
              "rich problem through three wavelengths (grids 46, 48, 50) and pixel integration, weighted, grid 48, order 5; "
              "two random points",
              spectrum, {perturbedParameters(*spectrum, s0, 1), perturbedParameters(*spectrum, s0, 2)});
        for (const auto& [name, objective, free, spectrum] :
             {std::tuple<std::string, ObjectiveKind, bool, bool>{"vectorial-free", ObjectiveKind::Poisson, true, false},
              {"vectorial-fixed", ObjectiveKind::LeastSquares, false, false},
              {"vectorial-spectrum", ObjectiveKind::WeightedLeastSquares, true, true}}) {
            auto vectorial = vectorialProblem(objective, free, 14, spectrum);
            const std::vector<double> v0 = vectorial->initialParameters();
            model(name,
                  std::string("rich problem under the vectorial model, NA 1.45 oil into water, emitter depth fitted (0.6 um), ")
                      + (free ? "free dipole (6 fields), " : "fixed dipole (2 fields), pixel integration, ")
                      + (spectrum ? "three wavelengths (grids 46, 48, 50), " : "") + objectiveName(objective)
                      + ", grid 48, order 5; two random points",
                  vectorial, {perturbedParameters(*vectorial, v0, 1), perturbedParameters(*vectorial, v0, 2)});
        }
        model("pupil-function",
              "rich problem with a zonal phase and amplitude, defocus scale and offsets, pixel integration and a 1.7-pixel "
              "sphere, poisson, grid 48, order 5; "
              "two random points",
              problem, {perturbedParameters(*problem, x0, 1), perturbedParameters(*problem, x0, 2)});
    }
}

int runDeviceReference(const QStringList& args)
{
    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral("Write the reference data of the GPU device check, computed by the CPU backend."));
    addOptions(parser, {
                           {QStringLiteral("out"), QStringLiteral("Folder to write (created; existing case files are replaced)."),
                            QStringLiteral("DIR")},
                       });
    if (auto status = parseOrExit(parser, args, QStringLiteral("device-reference --out DIR")))
        return *status;
    const QString program = args.value(0);
    try {
        if (!parser.isSet(QStringLiteral("out")) || parser.value(QStringLiteral("out")).isEmpty())
            throw UsageError("--out DIR is required");
        if (!parser.positionalArguments().isEmpty())
            throw UsageError("unexpected argument '" + parser.positionalArguments().front().toStdString() + "'");
        const QString folder = parser.value(QStringLiteral("out"));
        if (!QDir().mkpath(folder))
            throw std::runtime_error("cannot create the folder " + folder.toStdString());
        const std::string dir = folder.toStdString();
        std::vector<std::string> index;

        writeModelCases(dir, index);
        // FastH: k < d with a ragged last block, k = d with a block that does not divide d, a larger case.
        for (const auto& [d, k, m, b] : {std::tuple<int, int, int, int>{100, 97, 5, 16}, {64, 64, 1, 12}, {512, 512, 8, 48}}) {
            std::ostringstream caseName;
            caseName << "d" << d << "-k" << k << "-m" << m << "-b" << b;
            const std::string name = caseName.str();
            const std::string file = "fasth-" + name + ".bin";
            deviceReferenceWriters().fasthCase(dir + "/" + file, d, k, m, b, 3);
            index.push_back("fasth " + name + " " + file);
            std::fprintf(stderr, "%s\n", file.c_str());
        }
        std::ofstream out(dir + "/index.txt", std::ios::trunc);
        out << "# Reference data of the GPU device check, written by `wavefront-cli device-reference` (CPU backend).\n"
               "# Format: gpu/model/ReferenceFormat.h and gpu/device-check/README.md. <kind> <name> <file>\n";
        for (const std::string& line : index)
            out << line << "\n";
        out.close();
        if (!out)
            throw std::runtime_error("writing " + dir + "/index.txt failed");
        return 0;
    } catch (const UsageError& e) {
        return usageFailure(program, QString::fromStdString(e.what()));
    } catch (const std::exception& e) {
        return runFailure(program, describe(e));
    }
}

} // namespace wfs::cli
