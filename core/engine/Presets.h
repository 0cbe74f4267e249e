#pragma once
// Built-in problems: "oof" reproduces the OOF benchmark problem (Nikolic 2018) exactly; "demo" is a realistic lab case
// (three planes at -1, 0, +1 wave of defocus, Noll 4..11 aberrations, photon and read noise); "pupil" is a
// pupil no Zernike basis describes (a phase step, apodisation, dust), fitted with zonal terms; "vectorial" is a bead
// 3 um deep in water under an NA 1.4 oil objective (index mismatch), simulated and fitted with the vectorial model;
// "air" is a bead under an NA 0.85 dry objective as a camera records it (7 planes of 128 x 128 cropped from a grid of
// 256, coma, astigmatism and spherical aberration with a zonal bump and an apodised amplitude, a camera bias).
// Also the simulator both use, and the start-value estimate for measured data.
#include "fit/Solver.h"
#include "settings/ModelSettings.h"
#include "settings/SolverSettings.h"
#include "io/Exports.h"
#include "io/ResultJson.h"
#include "io/SimulatedSource.h"
#include "optics/Problem.h"

#include <QByteArray>

#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace wfs {

struct PresetCase {
    ProblemSpec spec;                    // with data
    std::vector<double> start;           // where the fit starts (problem parameter order)
    Truth truth;                         // injected aberrations (waves)
    std::vector<double> truthParameters; // the truth in problem parameter order
    SolverOptions solver;                // the preset's stopping rules
    std::string noiseDescription;        // e.g. "Poisson, 1e6 photons per plane, read noise 2 e-, seed 1"
    // The "pupil" and "air" presets' truth per pupil pixel of the simulation's grid (Problem::pupilIndex order; the
    // fit's for "pupil", 1.5 times finer for "air"): phase in radians (piston included) and field amplitude; empty for
    // the other presets.
    std::vector<double> truthPhase, truthAmplitude;
    // The camera's bias (data units) the written cube carries over the photons of `spec`'s planes (presetFitsBytes
    // adds it; its BIAS keyword and applyPresetSettings' offset say so). 0 for every preset but "air".
    double cameraBias = 0.0;
};

const std::vector<std::string>& presetNames(); // {"demo", "oof", "pupil", "vectorial", "air"}

// The "vectorial" preset's objective and sample (its FITS file carries the NA and immersion; the rest are model settings).
constexpr double kVectorialPresetNa = 1.4, kVectorialPresetImmersion = 1.515, kVectorialPresetSampleIndex = 1.33;
constexpr double kVectorialPresetDepth = 3e-6; // metres below the coverslip
// The "air" preset's objective (a dry NA 0.85, the bead on the coverslip's air side) and camera (counts over its bias).
constexpr double kAirPresetNa = 0.85, kAirPresetWavelength = 520e-9, kAirPresetPixel = 130e-9, kAirPresetBias = 100.0;

// The settings a front end that loads a preset's FITS file fits it with (the preset's own model): the pupil preset's
// zonal terms, defocus scale and L-BFGS; the vectorial preset's imaging model, sample and depth; the air preset's
// full recipe (vectorial, Poisson less its bias, the gain, weight and NA from the data, zonal pupil). Other presets leave
// `model` and `solver` as they are.
void applyPresetSettings(const std::string& name, ModelSettings& model, SolverSettings& solver);
// What a preset uses when PresetOptions leave it open (grid, order 0), and its stopping rule; stated in
// the command line's help. Throws std::invalid_argument for an unknown name.
struct PresetDefaults {
    int grid = 0;
    int order = 0;
    double gradientTolerance = 0.0;
    double functionTolerance = 0.0;
};
PresetDefaults presetDefaults(const std::string& name);
// What export headers say about a preset, as file input gets it from core/engine/Workflow.h: pupil
// (obscuration, spiders), sampling Q, pupil radii per phase-map pixel, the aperture (the OOF dish),
// the data unit and the preset's name.
ExportContext presetExportContext(const PresetCase& preset, const std::string& presetName);
// Throws std::invalid_argument for an unknown name or bad options.
// A problem without data that exercises every parameter kind and model feature: Gaussian illumination
// with free centre, width and amplitude, obscuration, spiders, three diversity kinds with an extra known
// term, per-plane flux, background and tip/tilt. The model tests and the GPU device check's reference
// data (wavefront-cli device-reference) share it.
ProblemSpec richProblemSpec(ObjectiveKind objective, int grid, int maxOrder);

// Also throws MemoryLimitError (base/MemoryBudget.h) before simulating when presetBytes exceeds the limit, and
// OperationCancelled when options.cancel is set.
PresetCase makePreset(const std::string& name, const PresetOptions& options);

// What a preset's simulation and its fit hold at once, at least: per plane, the model's complex fields and their
// transforms on the grid (the forward model and its adjoint) and the simulated, prepared and model images. Throws
// std::invalid_argument for an unknown name.
double presetBytes(const std::string& name, const PresetOptions& options);
// Throws MemoryLimitError naming the preset, its grid and planes, the estimate and the limit, when it does not fit.
void requirePresetMemory(const std::string& name, const PresetOptions& options);

// A preset's data as one FITS cube whose header lets the data be read back without flags (keywords
// WAVELENG, SAMPLING, DEFOCUSk, BUNIT, ... documented in the README). Throws std::runtime_error.
struct FitsKeyword;
std::vector<FitsKeyword> presetKeywords(const PresetCase& preset, const std::string& presetName);
QByteArray presetFitsBytes(const PresetCase& preset, const std::string& presetName, std::uint64_t seed);
void writePresetFits(const std::string& path, const PresetCase& preset, const std::string& presetName, std::uint64_t seed, bool overwrite);

// Model intensities of `spec` (data ignored) at `parameters`, in the data layout of `width` x `height`
// centred on the grid; `rng` adds the preset's noise when not null.
enum class NoiseModel { None, Oof, PhotonAndRead };
struct NoiseSettings {
    NoiseModel model = NoiseModel::None;
    double readNoise = 0.0;                    // PhotonAndRead: Gaussian read noise, counts RMS
    const std::atomic<bool>* cancel = nullptr; // checked per plane (base/Cancellation.h)
};
std::vector<Image> simulateImages(const ProblemSpec& spec, const std::vector<double>& parameters, int width, int height,
                                  const NoiseSettings& noise, std::mt19937_64* rng);

// Start values for measured data: background from the image border, flux from the background-free sum.
void estimateFluxAndBackground(ProblemSpec& spec);

// Problem parameters that reproduce a truth (converted to the spec's ordering and normalisation;
// nuisance parameters at their spec values). Throws std::invalid_argument for a term the basis lacks.
std::vector<double> parametersForTruth(const Problem& problem, const Truth& truth);

} // namespace wfs
