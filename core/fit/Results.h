#pragma once
// What a fit means: coefficients in rad, waves and nm with their uncertainties, wavefront RMS and PV
// (piston, tip and tilt removed; defocus optionally), Strehl ratio, per-plane statistics, maps.
#include "base/Assumption.h"
#include "fit/Solver.h"
#include "fit/PsfAnalysis.h"
#include "fit/Uncertainty.h"
#include "base/Image.h"

#include <Eigen/Dense>

#include <limits>
#include <optional>

#include <string>
#include <vector>

namespace wfs {

struct CoefficientResult {
    int index = 0; // in the problem's ordering
    ZernikeMode mode;
    std::string name;
    double radians = 0.0;
    double waves = 0.0;
    double nm = 0.0;
    double uncertaintyWaves = 0.0; // one standard deviation; NaN when not available; 0 for fixed terms
    bool free = true;
};

struct PlaneResult {
    std::string diversity;         // described in words
    DiversitySpec diversitySpec;   // the same as the model has it (exports give the defocus as a number)
    double cost = 0.0;             // this plane's share of the objective
    double reducedChiSquare = 0.0; // sum (D - M)^2 / (max(M, 0) + readNoise^2) per used pixel; NaN for least squares
    int usedPixels = 0;
    Image data;               // the data as fitted, in the data's layout, NaN where not used
    Image model;              // in the data's layout
    Image residual;           // data - model, NaN where not used
    Image normalizedResidual; // (data - model) / sigma of the objective's noise model, NaN where not used
};

// Residuals of one plane against a model image in the data layout: data - model, and the same over
// the noise the objective assumes (Poisson and weighted least squares: sigma^2 = max(model, 0) +
// readNoise^2, at least 1 count^2; least squares: one sigma, the residuals' RMS). NaN where a pixel is
// not part of the objective.
struct PlaneResiduals {
    Image residual;
    Image normalized;
};
PlaneResiduals planeResiduals(const Problem& problem, int plane, const Image& model);

struct AnalysisOptions {
    // The headline RMS, PV and Strehl without defocus (the figures with it beside them, FitResult::withDefocus): for
    // defocus-diverse data, where the fitted defocus says where focus sits in the stack, not how good the optics are.
    bool removeDefocus = false;
    // What the run assumed (io/Assumptions.h), handed on to FitResult::assumptions.
    std::vector<Assumption> assumptions;
    // Why the noise model cannot judge the fit, when the data show it (a noise-free border and no read noise): the
    // verdict's cause when the fit is poor. Empty otherwise.
    std::string degenerateNoise;
    bool computeUncertainty = true; // P + 1 extra model evaluations (fit/Uncertainty.h)
    bool psfAnalysis = false;       // FitResult::psf: fitted and diffraction-limited PSFs, profiles, MTF
};

// Where the phase map's pixels lie in the pupil: pupil coordinates (radius 1 at the edge) of the centre
// of pixel (column 0, row 0) and the step per pixel. On the OOF preset's grid rows run along x, so the
// map's columns are y (columnsAlongX false).
struct PupilMapGeometry {
    double firstColumn = 0.0;
    double firstRow = 0.0;
    double spacing = 0.0; // pupil radii per pixel; 0 = unknown
    bool columnsAlongX = true;
};

// The sampling fit (ReconstructionRequest::fitSampling): the final cost profiled over the aperture scale
// (withApertureScale), each point a full fit, and its minimum.
struct SamplingFit {
    double scale = 1.0; // NA relative to the metadata's (or 1 / Q's scale without an axial defocus)
    double scaleSigma = std::numeric_limits<double>::quiet_NaN(); // 1 sigma, from the profile's curvature
    double numericalAperture = 0.0;                               // the fitted NA of the planes' axial defocus; 0 when there is none
    double numericalApertureSigma = std::numeric_limits<double>::quiet_NaN();
    double samplingQSigma = std::numeric_limits<double>::quiet_NaN();
    bool atLimit = false; // the least cost lies at the searched range's end
    // The profile ran on the Zernike model and the zonal terms were fitted once, at the chosen scale (a zonal pupil).
    bool zernikeProfile = false;
    std::vector<double> scales, costs; // the profile, in the order fitted
};

// Whether the model describes its data. A fit can converge and still not: a wrong focus plane, one extreme pixel, a
// sampling far off. Judged on each plane's chi-square per pixel against what the noise model allows (1 for a model
// that describes the data; a few for real data with a model's small imperfections). Least squares has no noise model
// to judge by: `judged` is then false.
constexpr double kPoorFitReducedChiSquare = 10.0;
struct FitVerdict {
    bool judged = false;       // a finished fit (converged or stalled) with a noise model (Poisson, weighted least squares)
    bool describesData = true; // every plane's chi2/pixel at most kPoorFitReducedChiSquare
    int worstPlane = -1;       // index into FitResult::planes
    double worstReducedChiSquare = std::numeric_limits<double>::quiet_NaN();
    // The likely cause when the program can tell, a phrase: "one pixel (column 3, row 0) holds 99 % of plane 0's
    // misfit: a hot pixel or cosmic ray? mask it (--bad-pixels 3:0)"; empty otherwise.
    std::string cause;
    // One sentence when the model does not describe the data: "the model does not fit plane 0: chi2/pixel 20 (a model
    // that describes its data gives about 1); <cause>"; empty otherwise.
    std::string text;
};

// The headline figures with defocus kept, shown beside the headline when it has defocus removed.
struct WavefrontFigures {
    double rmsWaves = 0.0; // piston, tip, tilt removed
    double pvWaves = 0.0;
    double strehl = 0.0;
};

struct FitResult {
    std::string problemName;
    ZernikeOrdering ordering = ZernikeOrdering::Noll;
    ZernikeNormalization normalization = ZernikeNormalization::Rms;
    double wavelength = 0.0;                     // metres
    std::vector<CoefficientResult> coefficients; // every basis term except piston
    std::vector<std::string> parameterLabels;
    std::vector<double> parameterValues;
    std::vector<double> parameterUncertainties; // NaN where not available
    // Each parameter's unit as a key suffix: "rad" (Zernike terms, per-plane tip/tilt), "pupil_radii"
    // (Gaussian centre and width), "data_units" (flux), "data_units_per_px" (background), "" (amplitude).
    std::vector<std::string> parameterUnits;
    ObjectiveKind objective = ObjectiveKind::LeastSquares;
    int gridSize = 0;       // model grid N
    double samplingQ = 0.0; // Q = lambda F# / pixel: N * (pupil radii per sample) / 2
    double rmsWaves = 0.0;  // piston, tip, tilt removed (and defocus with defocusRemoved)
    double pvWaves = 0.0;
    bool defocusRemoved = false;
    double strehl = 0.0;                         // peak of the aberrated PSF / peak of the unaberrated PSF (of the same phase as rmsWaves)
    double strehlMarechal = 0.0;                 // exp(-(2 pi rms)^2)
    std::optional<WavefrontFigures> withDefocus; // set when defocusRemoved: the same figures with defocus kept
    FitVerdict verdict;
    std::vector<Assumption> assumptions; // what the run assumed (AnalysisOptions::assumptions)
    std::vector<PlaneResult> planes;
    Image phaseMap; // radians over the pupil's bounding box, NaN outside the pupil
    // The phase the headline figures describe: phaseMap less piston, tip, tilt (and defocus when defocusRemoved), the
    // same box.
    Image aberrationMap;
    PupilMapGeometry phaseMapGeometry;
    // The field amplitude over the same box (NaN outside the pupil) when the illumination (amplitude,
    // Gaussian centre or width) was fitted; empty otherwise.
    Image pupilAmplitude;
    SolverSummary solver;
    BackendInfo backend;
    GradientKind gradient = GradientKind::Adjoint;
    std::vector<std::string> warnings;
    std::optional<PsfAnalysis> psf; // with AnalysisOptions::psfAnalysis
    // With a zonal phase: the RMS (waves) and map (radians) of what the Zernike terms up to the fitted order
    // do not describe; NaN / empty otherwise.
    double zonalRemainderRmsWaves = std::numeric_limits<double>::quiet_NaN();
    Image zonalRemainderMap;
    // The model the fit used beyond the Zernike basis (ProblemSpec's fields of the same names).
    PupilPhaseModel phaseModel = PupilPhaseModel::Zernike;
    PupilAmplitudeModel amplitudeModel = PupilAmplitudeModel::Uniform;
    double regularization = 0.0;
    DetectorSpec detector;
    double gain = 1.0;                       // electrons per data unit
    std::vector<double> spectrumWavelengths; // metres, the wavelengths summed (Problem::spectrum); empty for one
    std::string regularizationChoice;        // how an automatic smoothness weight was chosen; empty when it was given
    struct SweepPoint {
        double weight = 0.0;
        double reducedChiSquare = 0.0; // over every plane
    };
    // The smoothness weights fitted, in order: the automatic choice's search, or the continuation that reached a weak
    // given weight (the last point); empty when the fit went straight to its weight.
    std::vector<SweepPoint> regularizationSweep;
    std::optional<SamplingFit> samplingFit; // with --fit-sampling; samplingQ is then the fitted Q
    // The imaging model (ProblemSpec::model); the vectorial model's settings at their start values (a fitted depth is
    // the parameter "emitter depth").
    ImagingModel imagingModel = ImagingModel::Scalar;
    VectorialSpec vectorial;
};

// A pupil phase (radians per pupil pixel) as Zernike coefficients of the problem's basis (least squares
// over the pupil pixels) and what they leave.
struct ZernikeProjection {
    Eigen::VectorXd coefficients; // by basis position, radians
    Eigen::VectorXd remainder;    // per pupil pixel, radians
    double remainderRms = 0.0;    // radians, piston removed
};
ZernikeProjection projectOntoZernikes(const Problem& problem, const Eigen::VectorXd& phase);
// Values per pupil pixel as an image over the pupil's bounding box (as phaseMap), NaN outside.
Image pupilMap(const Problem& problem, const double* values, const std::string& name);

// Aberration phase on the pupil pixels minus its least-squares fit of piston, tip, tilt (and defocus).
Eigen::VectorXd flattenedPhase(const Problem& problem, const ModelParameters& p, bool removeDefocus);

// The verdict on a result's planes (FitResult::verdict): their chi-square per pixel, and the likely cause of a poor fit
// that the planes show (one pixel holding most of a plane's misfit). `focusAssumed`: the focus plane was assumed, a
// likely cause of a poor fit of a z-stack.
// `degenerateNoise`: AnalysisOptions' note, the cause when no single pixel is.
FitVerdict judgeFit(const std::vector<PlaneResult>& planes, ObjectiveKind objective, bool focusAssumed,
                    const std::string& degenerateNoise = {});

// Builds the result of a finished (or cancelled) fit. Throws std::runtime_error if the backend fails.
FitResult analyseFit(ModelEvaluator& evaluator, const SolverSummary& summary, GradientKind gradient, const AnalysisOptions& options = {});

// The spec a result was fitted with: `spec` at the result's fitted aperture scale (FitResult::samplingFit), else as is.
ProblemSpec fittedSpec(const ProblemSpec& spec, const FitResult& result);
// Model intensities at `parameters`, each cut to its plane's data size (the data layout).
std::vector<Image> modelImagesInDataLayout(ModelEvaluator& evaluator, const std::vector<double>& parameters);

// |FFT(pupil field)|^2 of the in-focus PSF for a pupil phase (on pupil pixels) and the illumination of `p`,
// on the N x N grid, unshifted (zero frequency at (0, 0)).
std::vector<double> inFocusIntensity(const Problem& problem, const ModelParameters& p, const Eigen::VectorXd& phase);
// The aberration phase (radians) over the pupil's bounding box, NaN outside.
Image phaseMap(const Problem& problem, const ModelParameters& parameters);
// Where phaseMap's pixels lie in the pupil.
PupilMapGeometry phaseMapGeometry(const Problem& problem);
// The field amplitude (illumination times transmission) over the same box, NaN outside the pupil.
Image pupilAmplitudeMap(const Problem& problem, const ModelParameters& parameters);

} // namespace wfs
