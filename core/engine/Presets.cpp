#include "engine/Presets.h"

#include "base/Cancellation.h"
#include "base/MemoryBudget.h"

#include "io/Fits.h"
#include "io/OutputTransaction.h"
#include "io/Provenance.h"
#include "optics/CpuModel.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <memory>
#include <stdexcept>

namespace wfs {

const std::vector<std::string>& presetNames()
{
    static const std::vector<std::string> names = {"demo", "oof", "pupil", "vectorial", "air"};
    return names;
}

PresetDefaults presetDefaults(const std::string& name)
{
    if (name == "oof")
        return {128, 8, kReferenceGradientTolerance, kReferenceFunctionTolerance}; // the reference's stopping rule (Nikolic 2018)
    if (name == "demo")
        return {256, 4, kDefaultGradientTolerance, kDefaultFunctionTolerance};
    if (name == "pupil")
        return {64, 4, 1e-5, 1e-10};
    if (name == "vectorial")
        return {192, 4, kDefaultGradientTolerance, kDefaultFunctionTolerance};
    if (name == "air")
        return {256, 6, 1e-5, 1e-10};
    throw std::invalid_argument("unknown preset '" + name + "' (demo, oof, pupil, vectorial or air)");
}

std::vector<double> parametersForTruth(const Problem& problem, const Truth& truth)
{
    ProblemSpec spec = problem.spec();
    spec.basis.start.assign(problem.modes().size(), 0.0);
    for (const TruthTerm& term : truth.terms) {
        const ZernikeMode mode = zernike::modeFromIndex(term.index, truth.ordering);
        const auto it = std::find(problem.modes().begin(), problem.modes().end(), mode);
        if (it == problem.modes().end())
            throw std::invalid_argument("truth term " + std::to_string(term.index) + " (n=" + std::to_string(mode.n)
                                        + ") is above the basis order " + std::to_string(spec.basis.maxOrder));
        // Same physical wavefront in the spec's normalisation: c_spec N_spec = c_truth N_truth.
        const double factor =
            zernike::normalizationFactor(mode, truth.normalization) / zernike::normalizationFactor(mode, spec.basis.normalization);
        spec.basis.start[size_t(it - problem.modes().begin())] = 2.0 * M_PI * term.valueWaves * factor;
    }
    ProblemSpec noData = spec;
    for (PlaneSpec& plane : noData.planes)
        plane.data = Image();
    return Problem(noData).initialParameters();
}

std::vector<Image> simulateImages(const ProblemSpec& specIn, const std::vector<double>& parameters, int width, int height,
                                  const NoiseSettings& noise, std::mt19937_64* rng)
{
    ProblemSpec spec = specIn;
    for (PlaneSpec& plane : spec.planes)
        plane.data = Image();
    auto problem = std::make_shared<const Problem>(spec);
    EvaluatorOptions options;
    options.measurePlans = false;
    throwIfCancelled(noise.cancel);
    auto model = makeCpuEvaluator(problem, options);
    throwIfCancelled(noise.cancel);
    const auto grids = model->modelImages(parameters.data());
    throwIfCancelled(noise.cancel);
    const int n = spec.grid.size;
    std::vector<Image> images;
    for (size_t k = 0; k < grids.size(); ++k)
        images.push_back(gridCentre(grids[k], n, width, height));
    // The OOF benchmark's noise: max P is one number for the whole stack, the largest value over all planes
    // (as the seed's code does), so the out-of-focus planes get the in-focus plane's additive noise.
    double stackPeak = 0.0;
    for (const Image& image : images)
        if (!image.pixels.empty())
            stackPeak = std::max(stackPeak, *std::max_element(image.pixels.begin(), image.pixels.end()));
    for (size_t k = 0; k < images.size(); ++k) {
        throwIfCancelled(noise.cancel);
        Image& image = images[k];
        if (rng && noise.model == NoiseModel::Oof) {
            // D = P (1 + N(0, 0.01)) + N(0, 0.024 max P), per pixel, max P over the stack.
            std::normal_distribution<double> multiplicative(0.0, 0.01), additive(0.0, 0.024 * stackPeak);
            for (double& v : image.pixels)
                v = v * (1.0 + multiplicative(*rng)) + additive(*rng);
        } else if (rng && noise.model == NoiseModel::PhotonAndRead) {
            std::normal_distribution<double> read(0.0, noise.readNoise);
            for (double& v : image.pixels) {
                std::poisson_distribution<long long> photons(std::max(v, 0.0));
                v = double(photons(*rng)) + (noise.readNoise > 0.0 ? read(*rng) : 0.0);
            }
        }
        image.source = "simulated plane " + std::to_string(k);
    }
    return images;
}

void estimateFluxAndBackground(ProblemSpec& spec)
{
    for (PlaneSpec& plane : spec.planes) {
        const Image& img = plane.data;
        if (img.isEmpty())
            continue;
        std::vector<double> border;
        const int margin = std::max(1, std::min(img.width, img.height) / 16);
        for (int r = 0; r < img.height; ++r)
            for (int c = 0; c < img.width; ++c)
                if ((r < margin || r >= img.height - margin || c < margin || c >= img.width - margin) && std::isfinite(img.at(r, c)))
                    border.push_back(img.at(r, c));
        double background = 0.0;
        if (!border.empty()) {
            std::nth_element(border.begin(), border.begin() + long(border.size() / 2), border.end());
            background = border[border.size() / 2];
        }
        double sum = 0.0;
        for (double v : img.pixels)
            if (std::isfinite(v))
                sum += v - background;
        if (plane.fitBackground)
            plane.background = background;
        if (plane.fitFlux)
            plane.flux = sum > 0.0 ? sum : 1.0;
    }
}

namespace {

// The grid and Zernike order a preset runs with: the options', else the preset's defaults; the order checked.
std::pair<int, int> gridAndOrder(const PresetDefaults& defaults, const PresetOptions& options)
{
    const int grid = options.grid ? options.grid : defaults.grid;
    const int order = options.order ? options.order : defaults.order;
    if (const std::string error = zernike::orderError(order); !error.empty())
        throw std::invalid_argument("order " + error);
    return {grid, order};
}

// The preset's data from its Zernike truth (photon and read noise unless options.noise is off) and the fit's start.
// The truth may hold terms above the fitted order: it is simulated with a basis that has them all.
void simulateTruth(PresetCase& c, const PresetOptions& options, int grid, double readNoise)
{
    ProblemSpec& s = c.spec;
    ProblemSpec truthSpec = s;
    for (const TruthTerm& t : c.truth.terms)
        truthSpec.basis.maxOrder = std::max(truthSpec.basis.maxOrder, zernike::modeFromIndex(t.index, c.truth.ordering).n);
    const Problem truthProblem(truthSpec);
    const std::vector<double> truthForSimulation = parametersForTruth(truthProblem, c.truth);
    std::mt19937_64 rng(options.seed);
    const auto images = simulateImages(truthSpec, truthForSimulation, grid, grid,
                                       {options.noise ? NoiseModel::PhotonAndRead : NoiseModel::None, readNoise, options.cancel}, &rng);
    for (size_t k = 0; k < images.size(); ++k)
        s.planes[k].data = images[k];
    if (truthSpec.basis.maxOrder == s.basis.maxOrder)
        c.truthParameters = truthForSimulation;
    throwIfCancelled(options.cancel);
    estimateFluxAndBackground(s); // a fit starts from the data, not from the truth
    throwIfCancelled(options.cancel);
    c.start = Problem(s).initialParameters();
}

PresetCase oofPreset(const PresetOptions& options)
{
    const PresetDefaults defaults = presetDefaults("oof");
    const auto [grid, order] = gridAndOrder(defaults, options);
    if (options.photons != 0.0)
        throw std::invalid_argument("the oof preset has no photon count (its noise is the seed paper's, relative to the peak)");
    PresetCase c;
    ProblemSpec& s = c.spec;
    s.name = "oof";
    s.grid = PupilGrid::oofSquare(grid);
    s.pupil.illumination.gaussian = true;
    s.pupil.illumination.sigma = 0.72;
    s.pupil.illumination.fitCentre = true;
    s.pupil.illumination.fitAmplitude = true;
    s.basis.maxOrder = order;
    s.basis.ordering = ZernikeOrdering::Ansi;
    s.basis.normalization = ZernikeNormalization::Unit;
    s.objective = ObjectiveKind::LeastSquares;
    s.wavelength = 1.1e-3;
    s.intensityScale = 1.0;
    for (double dz : {0.0, -0.05, 0.05}) {
        PlaneSpec plane;
        plane.diversity.kind = DiversityKind::PrimeFocus;
        plane.diversity.axialDistance = dz;
        plane.diversity.focalLength = 14.4;
        plane.diversity.dishRadius = 2.8;
        s.planes.push_back(plane);
    }
    c.truth.ordering = ZernikeOrdering::Ansi;
    c.truth.normalization = ZernikeNormalization::Unit;
    if (options.truth)
        c.truth = *options.truth;
    const Problem noData(s);
    c.truthParameters = parametersForTruth(noData, c.truth);
    std::mt19937_64 rng(options.seed);
    const auto images =
        simulateImages(s, c.truthParameters, grid, grid, {options.noise ? NoiseModel::Oof : NoiseModel::None, 0.0, options.cancel}, &rng);
    for (size_t k = 0; k < images.size(); ++k)
        s.planes[k].data = images[k];
    c.start = noData.initialParameters(); // the spec's p0 = (0, ..., 0, 0, 0, 1)
    c.solver.gradientTolerance = defaults.gradientTolerance;
    c.solver.functionTolerance = defaults.functionTolerance;
    c.noiseDescription =
        options.noise ? "D = P (1 + N(0, 0.01)) + N(0, 0.024 max P_stack), mt19937_64 seed " + std::to_string(options.seed) : "none";
    return c;
}

// Photons per plane: the options', else the preset's; refused where not positive and finite.
double photonsOr(const PresetOptions& options, double presetPhotons)
{
    if (options.photons == 0.0)
        return presetPhotons;
    if (!(options.photons > 0.0 && std::isfinite(options.photons)))
        throw std::invalid_argument("photons per plane must be positive");
    return options.photons;
}

// 1e6 as "1e6", 2e5 as "2e5", others as printf's %g.
std::string photonsText(double photons)
{
    const int exponent = int(std::floor(std::log10(photons)));
    const double mantissa = photons / std::pow(10.0, exponent);
    if (std::abs(mantissa - std::round(mantissa)) < 1e-9 * mantissa)
        return std::to_string(int(std::round(mantissa))) + "e" + std::to_string(exponent);
    char text[32];
    std::snprintf(text, sizeof text, "%g", photons);
    return text;
}

PresetCase demoPreset(const PresetOptions& options)
{
    const PresetDefaults defaults = presetDefaults("demo");
    const auto [grid, order] = gridAndOrder(defaults, options);
    constexpr double background = 10.0, readNoise = 2.0;
    const double photons = photonsOr(options, 1e6);
    PresetCase c;
    ProblemSpec& s = c.spec;
    s.name = "demo";
    s.grid = PupilGrid::centred(grid, 2.0);
    s.basis.maxOrder = order;
    s.basis.ordering = ZernikeOrdering::Noll;
    s.basis.normalization = ZernikeNormalization::Rms;
    s.objective = ObjectiveKind::Poisson;
    s.readNoise = readNoise;
    s.wavelength = 633e-9;
    for (double waves : {-1.0, 0.0, 1.0}) {
        PlaneSpec plane;
        plane.diversity.kind = DiversityKind::ZernikeDefocus;
        plane.diversity.defocusWaves = waves;
        plane.diversity.measure = DefocusMeasure::PeakToValley;
        plane.flux = photons;
        plane.background = background;
        plane.fitFlux = true;
        plane.fitBackground = true;
        s.planes.push_back(plane);
    }
    c.truth.ordering = ZernikeOrdering::Noll;
    c.truth.normalization = ZernikeNormalization::Rms;
    c.truth.terms = {{4, 0.06}, {5, -0.08}, {6, 0.05}, {7, 0.04}, {8, -0.06}, {9, 0.03}, {10, -0.02}, {11, 0.07}};
    if (options.truth)
        c.truth = *options.truth;
    simulateTruth(c, options, grid, readNoise);
    c.solver.gradientTolerance = defaults.gradientTolerance;
    c.solver.functionTolerance = defaults.functionTolerance;
    c.noiseDescription = options.noise ? "Poisson, " + photonsText(photons)
                                             + " photons per plane, background 10, read noise 2 (counts RMS), mt19937_64 seed "
                                             + std::to_string(options.seed)
                                       : "none";
    return c;
}

// Planes at these W020 defocus values (in `measure`), each with its flux and background as start values, fitted.
void addDefocusPlanes(ProblemSpec& s, std::initializer_list<double> defocusWaves, double photons, double background, DefocusMeasure measure)
{
    for (double waves : defocusWaves) {
        PlaneSpec plane;
        plane.diversity.kind = DiversityKind::ZernikeDefocus;
        plane.diversity.defocusWaves = waves;
        plane.diversity.measure = measure;
        plane.flux = photons;
        plane.background = background;
        plane.fitFlux = plane.fitBackground = true;
        s.planes.push_back(plane);
    }
}

// The simulated presets' noise in words (background 5 and read noise 1 counts RMS in each).
std::string photonNoiseText(double photons, const PresetOptions& options)
{
    return options.noise
               ? "Poisson, " + photonsText(photons) + " photons per plane, background 5, read noise 1 (counts RMS), mt19937_64 seed "
                     + std::to_string(options.seed)
               : "none";
}

// The preset's data from a truth given per pupil pixel (Problem::pupilIndex order): its Zernike terms plus
// `extraPhase` (radians), and the field `amplitude`, each a function of the pupil position (x, y), simulated with a
// zonal phase and amplitude (Zonal keeps all but piston) on `grid` and cropped to `crop` x `crop` at its centre; then
// the fit's start from the data. A `simulationGrid` other than the fit's samples the pupil more finely at the same Q
// (the same pixels), so that the fit's pupil samples are not the simulation's: a fit on the very grid that made its
// data finds the aperture's edge on the sample it was drawn at (an "inverse crime"), which no measured stack offers.
void simulatePupilTruth(PresetCase& c, const PresetOptions& options, int grid, double readNoise,
                        const std::function<double(double, double)>& extraPhase, const std::function<double(double, double)>& amplitude,
                        int crop = 0, int simulationGrid = 0)
{
    ProblemSpec& s = c.spec;
    ProblemSpec truthSpec = s;
    if (simulationGrid > 0)
        truthSpec.grid = PupilGrid::centred(simulationGrid, s.grid.spacing * s.grid.size / 2.0);
    truthSpec.phaseModel = PupilPhaseModel::Zonal;
    truthSpec.amplitudeModel = PupilAmplitudeModel::Zonal;
    for (const TruthTerm& t : c.truth.terms)
        truthSpec.basis.maxOrder = std::max(truthSpec.basis.maxOrder, zernike::modeFromIndex(t.index, c.truth.ordering).n);
    const Problem geometry(truthSpec);
    const Eigen::VectorXd zernikePart =
        geometry.basis()
        * Eigen::Map<const Eigen::VectorXd>(geometry.unpack(parametersForTruth(geometry, c.truth).data()).zernike.data(),
                                            Eigen::Index(geometry.modes().size()));
    for (int i = 0; i < geometry.pupilPixelCount(); ++i) {
        const double x = geometry.pupilX()[size_t(i)], y = geometry.pupilY()[size_t(i)];
        c.truthPhase.push_back(zernikePart[i] + extraPhase(x, y));
        c.truthAmplitude.push_back(amplitude(x, y));
    }
    truthSpec.zonalPhaseStart = c.truthPhase;
    for (double a : c.truthAmplitude)
        truthSpec.zonalAmplitudeStart.push_back(std::log(a));
    truthSpec.basis.start.clear();
    const Problem truthProblem(truthSpec);
    std::mt19937_64 rng(options.seed);
    const int size = crop > 0 ? crop : grid;
    const auto images = simulateImages(truthSpec, truthProblem.initialParameters(), size, size,
                                       {options.noise ? NoiseModel::PhotonAndRead : NoiseModel::None, readNoise, options.cancel}, &rng);
    for (size_t k = 0; k < images.size(); ++k)
        s.planes[k].data = images[k];
    throwIfCancelled(options.cancel);
    estimateFluxAndBackground(s);
    throwIfCancelled(options.cancel);
    c.start = Problem(s).initialParameters();
}

// A pupil no Zernike basis describes (issue 13's simulated truth): low-order aberrations plus a phase
// step of 0.1 wave over the third of the pupil at x > 1/3, an amplitude apodised by 20 % at the edge with a
// dust shadow, at Q 2.75 (a microscope's sampling) with five planes at W020 = -2, -1, 0, 1 and 1.5 waves and photon
// noise (at +2 the aberrated PSF reached the 64-pixel image's edge, 4.1 % of its peak: the preset warned about its own
// data). Fitted with a Zernike phase and a zonal remainder and a zonal amplitude.
PresetCase pupilPreset(const PresetOptions& options)
{
    const PresetDefaults defaults = presetDefaults("pupil");
    const auto [grid, order] = gridAndOrder(defaults, options);
    constexpr double background = 5.0, readNoise = 1.0;
    const double photons = photonsOr(options, 1e6);
    PresetCase c;
    ProblemSpec& s = c.spec;
    s.name = "pupil";
    s.grid = PupilGrid::centred(grid, 2.75);
    s.basis.maxOrder = order;
    s.objective = ObjectiveKind::Poisson;
    s.readNoise = readNoise;
    s.wavelength = 605e-9;
    s.phaseModel = PupilPhaseModel::Both;
    s.amplitudeModel = PupilAmplitudeModel::Zonal;
    addDefocusPlanes(s, {-2.0, -1.0, 0.0, 1.0, 1.5}, photons, background, PlaneSpec{}.diversity.measure);
    c.truth.terms = {{4, 0.03}, {5, -0.04}, {7, 0.02}, {11, 0.03}};
    if (options.truth)
        c.truth = *options.truth;
    c.truth.note = "the truth markers are the injected Zernike terms only; the 0.1-wave phase step (x > 1/3) projects onto tilt, "
                   "defocus, coma and more, so the fitted terms differ from them by design (the zonal remainder holds the rest)";
    simulatePupilTruth(
        c, options, grid, readNoise, [](double x, double) { return x > 1.0 / 3.0 ? 2.0 * M_PI * 0.1 : 0.0; },
        [](double x, double y) {
            const double dust = 1.0 - 0.6 * std::exp(-(std::pow(x + 0.35, 2) + std::pow(y - 0.3, 2)) / (2 * 0.08 * 0.08));
            return (1.0 - 0.2 * (x * x + y * y)) * dust;
        });
    c.solver.optimizer = OptimizerKind::Lbfgs;
    c.solver.gradientTolerance = defaults.gradientTolerance;
    c.solver.functionTolerance = defaults.functionTolerance;
    c.noiseDescription = photonNoiseText(photons, options);
    return c;
}

// A bead seen through a microscope objective of `na` in `immersion` by the vectorial model, at sampling Q on `grid`,
// fitted to Poisson photons with `readNoise` (the vectorial and air presets' common part).
ProblemSpec beadSpec(const char* name, int grid, double samplingQ, int order, double wavelength, double readNoise, double na,
                     double immersion)
{
    ProblemSpec s;
    s.name = name;
    s.grid = PupilGrid::centred(grid, samplingQ);
    s.basis.maxOrder = order;
    s.objective = ObjectiveKind::Poisson;
    s.readNoise = readNoise;
    s.wavelength = wavelength;
    s.model = ImagingModel::Vectorial;
    s.vectorial.numericalAperture = na;
    s.vectorial.immersionIndex = immersion;
    return s;
}

// A bead (a free dipole) 3 um deep in water (n 1.33) under a #1.5 coverslip, seen through an NA 1.4 oil objective
// (n 1.515) at 600 nm and Q 3 (65-70 nm pixels): the index mismatch's depth aberration, several waves of spherical,
// and the light above the water's critical angle (NA 1.33 to 1.4) lost to evanescence, on a grid of 192 (at 64 the
// depth's spherical aberration spread the -1.5-wave plane to the image's edge, 46 % of its peak). Five planes at W020 = -1.5 ..
// +1.5 waves with photon noise; fitted with the same vectorial model at the known depth.
PresetCase vectorialPreset(const PresetOptions& options)
{
    const PresetDefaults defaults = presetDefaults("vectorial");
    const auto [grid, order] = gridAndOrder(defaults, options);
    constexpr double background = 5.0, readNoise = 1.0;
    const double photons = photonsOr(options, 2e5);
    PresetCase c;
    ProblemSpec& s = c.spec;
    s = beadSpec("vectorial", grid, 3.0, order, 600e-9, readNoise, kVectorialPresetNa, kVectorialPresetImmersion);
    s.vectorial.sampleIndex = kVectorialPresetSampleIndex;
    s.vectorial.emitterDepth = kVectorialPresetDepth;
    addDefocusPlanes(s, {-1.5, -0.75, 0.0, 0.75, 1.5}, photons, background, DefocusMeasure::PeakToValley);
    c.truth.terms = {{5, 0.05}, {6, -0.03}, {7, 0.04}, {8, -0.02}, {11, 0.03}};
    if (options.truth)
        c.truth = *options.truth;
    c.truth.note = "the truth is the objective's own aberration; the 3 um depth's spherical aberration is the model's (known depth), "
                   "not a fitted term";
    simulateTruth(c, options, grid, readNoise);
    c.solver.gradientTolerance = defaults.gradientTolerance;
    c.solver.functionTolerance = defaults.functionTolerance;
    c.noiseDescription = photonNoiseText(photons, options);
    return c;
}

// Issue 44's second real stack, simulated: a bead on a coverslip's air side under a dry NA 0.85 objective at 520 nm,
// 130 nm pixels in the sample plane (Q = 520 / (2 x 0.85 x 130) = 2.35), square pixels that integrate; seven planes at
// W020 = -1.5 .. +1.5 waves (0.5-wave steps, about 0.55 um), each 128 x 128 cropped from a grid of 256 (simulated on
// one of 384, the pupil sampled 1.5 times as finely, so that its edge does not fall on the fit's samples). The objective's
// aberration: 0.22-0.28 rad each of astigmatism, coma and spherical aberration (Noll 5-8, 11), a smooth 0.3 rad bump no
// order-6 Zernike term describes, and a field amplitude apodised to 70 % at the edge. Poisson photons (1e6 per plane
// unless options say), background 5, read noise 1 and a camera bias of 100 counts in the written cube.
PresetCase airPreset(const PresetOptions& options)
{
    const PresetDefaults defaults = presetDefaults("air");
    const auto [grid, order] = gridAndOrder(defaults, options);
    constexpr double background = 5.0, readNoise = 1.0;
    const double photons = photonsOr(options, 1e6);
    PresetCase c;
    ProblemSpec& s = c.spec;
    s = beadSpec("air", grid, kAirPresetWavelength / (2.0 * kAirPresetNa * kAirPresetPixel), order, kAirPresetWavelength, readNoise,
                 kAirPresetNa, 1.0);
    s.vectorial.sampleIndex = 1.0;
    s.detector.pixelIntegration = true;
    s.phaseModel = PupilPhaseModel::Both;
    s.amplitudeModel = PupilAmplitudeModel::Zonal;
    addDefocusPlanes(s, {-1.5, -1.0, -0.5, 0.0, 0.5, 1.0, 1.5}, photons, background, DefocusMeasure::PeakToValley);
    c.truth.terms = {{5, 0.04}, {6, -0.035}, {7, 0.045}, {8, -0.035}, {11, 0.04}};
    if (options.truth)
        c.truth = *options.truth;
    c.truth.note = "the truth markers are the injected Zernike terms only; the 0.3 rad bump at (0.45, -0.35) projects onto "
                   "low orders too, so the fitted terms differ from them by the bump's share (the zonal remainder holds the rest)";
    simulatePupilTruth(
        c, options, grid, readNoise,
        [](double x, double y) { return 0.3 * std::exp(-(std::pow(x - 0.45, 2) + std::pow(y + 0.35, 2)) / (2 * 0.18 * 0.18)); },
        [](double x, double y) { return 1.0 - 0.3 * (x * x + y * y); }, grid / 2, 2 * ((3 * grid / 2 + 1) / 2));
    c.cameraBias = kAirPresetBias;
    c.solver.optimizer = OptimizerKind::Lbfgs;
    c.solver.gradientTolerance = defaults.gradientTolerance;
    c.solver.functionTolerance = defaults.functionTolerance;
    c.noiseDescription = options.noise ? photonNoiseText(photons, options) + ", camera bias 100 counts" : "none";
    return c;
}

} // namespace

namespace {
std::string presetDataUnit(const std::string& presetName)
{
    if (presetName == "air")
        return "counts"; // a camera's, over its bias
    return presetName == "oof" ? "relative" : "photons";
}

double apertureOf(const ProblemSpec& s)
{
    for (const PlaneSpec& p : s.planes)
        if (p.diversity.kind == DiversityKind::PrimeFocus && p.diversity.dishRadius > 0.0)
            return 2.0 * p.diversity.dishRadius;
    return 0.0;
}
} // namespace

ExportContext presetExportContext(const PresetCase& preset, const std::string& presetName)
{
    const ProblemSpec& s = preset.spec;
    ExportContext context;
    context.pupil = s.pupil;
    context.samplingQ = s.grid.spacing * s.grid.size / 2.0; // the pupil diameter spans N / Q samples
    context.pupilSampleSpacing = s.grid.spacing;
    context.apertureDiameter = apertureOf(s);
    context.dataUnit = presetDataUnit(presetName);
    context.preset = presetName;
    return context;
}

std::vector<FitsKeyword> presetKeywords(const PresetCase& preset, const std::string& presetName)
{
    const ProblemSpec& s = preset.spec;
    std::vector<FitsKeyword> k;
    k.push_back({"ORIGIN", std::string("Wavefront Studio"), "software"});
    k.push_back({"CREATOR", softwareText(), "software and version"});
    k.push_back({"DATE", creationDateUtc(), "UTC date and time the file was written"});
    k.push_back({"PRESET", presetName, "problem preset"});
    k.push_back({"BUNIT", presetDataUnit(presetName), "pixel unit"});
    k.push_back({"WAVELENG", s.wavelength, "[m] wavelength"});
    k.push_back({"NPLANES", (long long)s.planes.size(), "image planes (one per defocus)"});
    if (s.model == ImagingModel::Vectorial) { // the objective the vectorial model describes
        k.push_back({"NA", s.vectorial.numericalAperture, "numerical aperture"});
        k.push_back({"IMMERSN", s.vectorial.immersionIndex, "immersion refractive index"});
    }
    if (!s.grid.rowIsX)
        k.push_back({"SAMPLING", s.grid.spacing * s.grid.size / 2.0, "Q = lambda F# / pixel"});
    for (size_t p = 0; p < s.planes.size(); ++p) {
        const DiversitySpec& d = s.planes[p].diversity;
        const std::string key = "DEFOCUS" + std::to_string(p + 1);
        if (d.kind == DiversityKind::ZernikeDefocus && d.measure == DefocusMeasure::PeakToValley)
            k.push_back({key, d.defocusWaves, "[waves] W020 of plane (edge-to-centre)"});
        else
            k.push_back({"DIVERS" + std::to_string(p + 1), d.describe().substr(0, 68), "diversity of plane"});
    }
    k.push_back({"ZORDER", (long long)s.basis.maxOrder, "Zernike radial order of the preset model"});
    k.push_back({"ZORDERNG", std::string(zernike::orderingName(s.basis.ordering)), "Zernike ordering"});
    k.push_back({"ZNORM", std::string(zernike::normalizationName(s.basis.normalization)), "Zernike normalisation"});
    k.push_back({"ROWORDER", std::string("bottom-up"), "row 0 is the bottom row, x right, y up"});
    if (!s.planes.empty()) {
        std::vector<DiversitySpec> diversities;
        for (const PlaneSpec& p : s.planes)
            diversities.push_back(p.diversity);
        const Image& first = s.planes.front().data;
        const std::vector<FitsKeyword> wcs = focalPlaneWcsKeywords(
            first.width, first.height, s.grid.rowIsX ? 0.0 : s.grid.spacing * s.grid.size / 2.0, defocusAxis(diversities));
        k.insert(k.end(), wcs.begin(), wcs.end());
    }
    return k;
}

QByteArray presetFitsBytes(const PresetCase& preset, const std::string& presetName, std::uint64_t seed)
{
    std::vector<Image> planes;
    for (const PlaneSpec& plane : preset.spec.planes) {
        planes.push_back(plane.data);
        for (double& v : planes.back().pixels)
            v += preset.cameraBias;
    }
    std::vector<FitsKeyword> keywords = presetKeywords(preset, presetName);
    if (preset.cameraBias != 0.0)
        keywords.push_back({"BIAS", preset.cameraBias, "[counts] camera bias added to every pixel"});
    keywords.push_back({"NOISE", preset.noiseDescription.substr(0, 68), "noise model of the simulation"});
    keywords.push_back({"SEED", (long long)seed, "random seed"});
    if (preset.spec.readNoise > 0.0 && preset.noiseDescription != "none")
        keywords.push_back({"RDNOISE", preset.spec.readNoise, "[counts] read noise RMS"});
    std::vector<FitsHdu> hdus = {FitsHdu{"", planes, {}, keywords}};
    std::vector<DiversitySpec> diversities;
    std::vector<std::string> descriptions;
    for (const PlaneSpec& p : preset.spec.planes) {
        diversities.push_back(p.diversity);
        descriptions.push_back(p.diversity.describe());
    }
    const DefocusAxis axis = defocusAxis(diversities);
    if (planes.size() > 1 && !axis.evenlySpaced) // the defocus of uneven planes as a table beside the cube
        hdus.push_back(defocusTable(descriptions, axis));
    return QByteArray::fromStdString(fitsBytes(hdus, false));
}

void writePresetFits(const std::string& path, const PresetCase& preset, const std::string& presetName, std::uint64_t seed, bool overwrite)
{
    writeFileAtomically(path, presetFitsBytes(preset, presetName, seed), overwrite);
}

ProblemSpec richProblemSpec(ObjectiveKind objective, int grid, int maxOrder)
{
    ProblemSpec s;
    s.name = "rich";
    s.grid = PupilGrid::centred(grid, 2.5);
    s.pupil.obscuration = 0.2;
    s.pupil.spiderCount = 3;
    s.pupil.spiderWidth = 0.03;
    s.pupil.spiderAngleDeg = 10.0;
    s.pupil.illumination.gaussian = true;
    s.pupil.illumination.sigma = 0.8;
    s.pupil.illumination.x0 = 0.05;
    s.pupil.illumination.fitCentre = true;
    s.pupil.illumination.fitSigma = true;
    s.pupil.illumination.fitAmplitude = true;
    s.basis.maxOrder = maxOrder;
    s.objective = objective;
    s.readNoise = 3.0;
    s.wavelength = 600e-9;
    PlaneSpec a;
    a.diversity.kind = DiversityKind::ZernikeDefocus;
    a.diversity.defocusWaves = -0.8;
    a.diversity.extraTerms = {{5, 0.3}};
    PlaneSpec b;
    b.diversity.kind = DiversityKind::AxialHighNa;
    b.diversity.axialDistance = 0.4e-6;
    b.diversity.numericalAperture = 0.9;
    b.diversity.immersionIndex = 1.33;
    PlaneSpec c;
    c.diversity.kind = DiversityKind::AxialParaxial;
    c.diversity.axialDistance = -1.5e-6;
    c.diversity.numericalAperture = 0.5;
    for (PlaneSpec* p : {&a, &b, &c}) {
        p->flux = 5e4;
        p->background = 5.0;
        p->fitFlux = p->fitBackground = p->fitShift = true;
    }
    s.planes = {a, b, c};
    return s;
}

void applyPresetSettings(const std::string& name, ModelSettings& model, SolverSettings& solver)
{
    const PresetDefaults defaults = presetDefaults(name);
    if (name == "pupil") {
        // With the defocus scale as a nuisance parameter to show; L-BFGS for its 900 parameters.
        model.order = defaults.order;
        model.phaseModel = PupilPhaseModel::Both;
        model.amplitudeModel = PupilAmplitudeModel::Zonal;
        model.fitDefocusScale = true;
        solver.optimizer = OptimizerKind::Lbfgs;
    } else if (name == "vectorial") {
        model.order = defaults.order;
        model.imagingModel = ImagingModel::Vectorial;
        model.sampleIndex = kVectorialPresetSampleIndex;
        model.emitterDepth = kVectorialPresetDepth;
        model.dipole = DipoleSpec{};
    } else if (name == "air") {
        // Issue 44's recipe: the vectorial model in air, Poisson less the known bias, the gain from the data, the
        // pixels integrating, a Zernike phase with a zonal remainder and a zonal amplitude, the smoothness weight and
        // the NA found from the data; at a grid twice the crop.
        model.order = defaults.order;
        model.grid = defaults.grid;
        model.imagingModel = ImagingModel::Vectorial;
        model.sampleIndex = 1.0;
        model.objective = ObjectiveKind::Poisson;
        model.offset = kAirPresetBias;
        model.gain = 0.0;
        model.pixelIntegration = true;
        model.phaseModel = PupilPhaseModel::Both;
        model.amplitudeModel = PupilAmplitudeModel::Zonal;
        model.regularization = 0.0; // chosen by the discrepancy principle
        model.fitSampling = true;   // the NA profiled
        solver.optimizer = OptimizerKind::Lbfgs;
    } else {
        return;
    }
    solver.gradientTolerance = defaults.gradientTolerance;
    solver.functionTolerance = defaults.functionTolerance;
}

namespace {
// Planes per preset (the specs below make them).
int presetPlaneCount(const std::string& name)
{
    presetDefaults(name); // an unknown name is refused here, as everywhere
    if (name == "air")
        return 7;
    return name == "oof" || name == "demo" ? 3 : 5;
}
} // namespace

double presetBytes(const std::string& name, const PresetOptions& options)
{
    const PresetDefaults defaults = presetDefaults(name);
    const double grid = options.grid ? options.grid : defaults.grid;
    const double order = options.order ? options.order : defaults.order;
    const double planes = presetPlaneCount(name);
    // Per plane and grid sample: five complex buffers (pupil field, its transform, the adjoint's two, FFT scratch) and
    // the simulated, model and weight images: 104 bytes; measured, a demo preset of 3 planes on a 4096 grid peaks at
    // 5.1 GB in its fit (this estimate: 5.2 GB). The Zernike basis: every mode over the pupil's samples (at most the
    // grid's pi / 4).
    const double perPlane = (5.0 * 16.0 + 3.0 * 8.0) * grid * grid;
    const double modes = (order + 1.0) * (order + 2.0) / 2.0;
    const double basis = modes * M_PI / 4.0 * grid * grid / 4.0 * sizeof(double); // the pupil spans at least Q = 2
    return planes * perPlane + basis;
}

void requirePresetMemory(const std::string& name, const PresetOptions& options)
{
    const int grid = options.grid ? options.grid : presetDefaults(name).grid;
    requireMemory(presetBytes(name, options), "the " + name + " preset on a grid of " + std::to_string(grid) + " x " + std::to_string(grid)
                                                  + " (" + std::to_string(presetPlaneCount(name)) + " planes)");
}

PresetCase makePreset(const std::string& name, const PresetOptions& options)
{
    requirePresetMemory(name, options);
    throwIfCancelled(options.cancel);
    if (name == "oof")
        return oofPreset(options);
    if (name == "demo")
        return demoPreset(options);
    if (name == "pupil")
        return pupilPreset(options);
    if (name == "vectorial")
        return vectorialPreset(options);
    if (name == "air")
        return airPreset(options);
    throw std::invalid_argument("unknown preset '" + name + "' (demo, oof, pupil, vectorial or air)");
}

} // namespace wfs
