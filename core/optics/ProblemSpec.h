#pragma once
// The description of a reconstruction problem: grid, pupil, Zernike basis, planes with their data and
// diversity, the objective. A value object: front ends fill it, Problem compiles and validates it.
#include "base/Image.h"
#include "optics/Diversity.h"
#include "optics/Pupil.h"
#include "optics/Vectorial.h"
#include "optics/Zernike.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

namespace wfs {

enum class ObjectiveKind {
    LeastSquares,         // sum (D - M)^2 (the OOF preset)
    Poisson,              // sum (M - D ln M): negative log-likelihood of photon counts
    WeightedLeastSquares, // sum (D - M)^2 / (max(D, 0) + readNoise^2): Poisson plus read noise
};

const char* objectiveName(ObjectiveKind kind); // "least-squares", "poisson", "weighted-least-squares"

// Half the Poisson deviance of data d under model m > 0: m - d + d ln(d / m). It has the gradient of
// the negative log-likelihood and is about chi^2 / 2 at a good fit, which keeps tolerances meaningful.
inline double poissonDeviance(double d, double m)
{
    return d > 0.0 ? m - d + d * (std::log(d) - std::log(m)) : m - d;
}

// The variance (data units^2) of a pixel whose expected value is `model` data units: photon noise
// through the camera's gain (electrons per data unit) plus read noise, at least one unit^2 so that
// empty pixels do not dominate. Weights, chi-square and normalised residuals all use this one rule.
inline double pixelVariance(double model, double readNoise, double gain)
{
    return std::max(std::max(model, 0.0) / gain + readNoise * readNoise, 1.0);
}

constexpr int kMaxGrid = 8192; // the largest model grid: 8192^2 complex doubles are 1 GiB per buffer, beyond is a typo

struct BasisSpec {
    int maxOrder = 4; // highest radial order n, at most zernike::kMaxOrder
    ZernikeOrdering ordering = ZernikeOrdering::Noll;
    ZernikeNormalization normalization = ZernikeNormalization::Rms;
    // Terms held fixed at their start value, by index in `ordering`. Piston is always fixed.
    std::vector<int> fixedTerms;
    // Start values in radians, by position in the ordering (0 = piston); missing entries are 0.
    std::vector<double> start;
};

// How the pupil function P = A exp(i phi) is parameterised. Zernike: phi = sum c_j Z_j (as before);
// zonal: one free value per pupil pixel; both: Zernike terms plus a zonal remainder that is kept
// orthogonal to them (projected off the Zernike span), so the coefficients keep their meaning.
enum class PupilPhaseModel { Zernike, Zonal, Both };
// Uniform: A = amplitude x transmission; Gaussian: the Illumination profile; zonal: A = transmission x
// exp(a) with one free log-amplitude a per pupil pixel (positive by construction; its mean is held at
// zero, since a common factor is the planes' flux).
enum class PupilAmplitudeModel { Uniform, Gaussian, Zonal };
const char* pupilPhaseModelName(PupilPhaseModel model);         // "zernike", "zonal", "both"
const char* pupilAmplitudeModelName(PupilAmplitudeModel model); // "uniform", "gaussian", "zonal"
// Whether a pupil function has per-pixel (zonal) terms, which the smoothness weight applies to: a zonal or
// mixed phase, or a zonal amplitude. The one definition the checks, the engine, reports and the desktop use.
inline bool hasZonalTerms(PupilPhaseModel phase, PupilAmplitudeModel amplitude)
{
    return phase != PupilPhaseModel::Zernike || amplitude == PupilAmplitudeModel::Zonal;
}

// The image formation between the field's intensity and the detector's pixels: a real, even transfer
// function H(f) multiplied onto the intensity's spectrum (the OTF), i.e. a convolution of |field|^2.
struct DetectorSpec {
    // Square pixels of one grid sample: H *= sinc(fx) sinc(fy), f in cycles per pixel. (Transfer-function
    // form, not oversampling: exact for a band-limited intensity at Q >= 1.)
    bool pixelIntegration = false;
    // Diameter of the imaged object in grid pixels (0 = a point): a uniform sphere, whose projection has
    // the transfer function 3 (sin u - u cos u) / u^3 with u = pi f diameter.
    double objectDiameterPixels = 0.0;
    bool isIdentity() const { return !pixelIntegration && objectDiameterPixels <= 0.0; }
};

// The most wavelengths a spectrum is sampled at (SpectrumSpec::samples; the settings and options check it too).
constexpr int kMaxSpectralSamples = 15;

// A spectrum instead of one wavelength (an emission filter's band): the model image is the weighted sum of
// monochromatic images. Each wavelength is imaged on its own FFT size N' = N lambda' / lambda (even), which keeps
// the detector's pixel and the pupil's samples exactly; so the wavelengths used are lambda N' / N, the `samples`
// midpoints of equal sub-bands of a flat band snapped to that lattice (2 / N apart; duplicates merge, their
// weights add). The pupil phase is an optical path: it scales with lambda / lambda'.
struct SpectrumSpec {
    double bandwidth = 0.0; // metres, full width of a flat band centred on ProblemSpec::wavelength; 0 = one wavelength
    int samples = 1;        // 1..kMaxSpectralSamples
    bool isMonochromatic() const { return !(bandwidth > 0.0) || samples <= 1; }
};

// Optional parameters for what the metadata only roughly know. The defocus of plane k becomes
// scale * amount_k + offset_k, in the plane diversity's own unit (metres, or waves of W020).
struct NuisanceSpec {
    bool fitDefocusScale = false; // a z-step (or defocus) calibration error, shared by the planes
    // Per-plane defocus offsets (positioning errors). The plane nearest focus is the reference and held at
    // 0 (a common offset is the Zernike defocus); with fitDefocusScale the two outermost planes are held too
    // (the scale carries the stack's stretch).
    bool fitDefocusOffsets = false;
    double defocusScale = 1.0;          // start values
    std::vector<double> defocusOffsets; // per plane (empty = 0)
};

struct PlaneSpec {
    DiversitySpec diversity;
    Image data;                // observed PSF; smaller than the grid = compared with the grid's centre
    std::vector<uint8_t> mask; // per data pixel, 0 = excluded (saturated, bad); empty = all used
    double flux = 1.0;         // photons in the plane for an unaberrated PSF (see ProblemSpec::intensityScale)
    bool fitFlux = false;
    double background = 0.0; // per pixel
    bool fitBackground = false;
    bool fitShift = false; // per-plane tip/tilt (radians at the pupil edge), for image drift
    double shiftX = 0.0;   // start values of that tip/tilt
    double shiftY = 0.0;
};

struct ProblemSpec {
    std::string name;
    PupilGrid grid;
    PupilSpec pupil;
    BasisSpec basis;
    std::vector<PlaneSpec> planes;
    ObjectiveKind objective = ObjectiveKind::LeastSquares;
    double readNoise = 0.0; // data units RMS: WeightedLeastSquares weights, and every objective's chi-square
    double gain = 1.0;      // electrons (photons) per data unit: the photon noise of a pixel (pixelVariance)
    PupilPhaseModel phaseModel = PupilPhaseModel::Zernike;
    PupilAmplitudeModel amplitudeModel = PupilAmplitudeModel::Uniform; // Gaussian also sets pupil.illumination.gaussian
    // Zonal terms: the smoothness prior (weight / 2) sum over neighbouring pupil pixels (v_i - v_j)^2, which
    // approximates (weight / 2) x the integral of |grad v|^2 over the pupil (radii^2), whatever the sampling.
    // In the objective's units (about chi^2 / 2 for the noise-weighted objectives) per rad^2.
    double regularization = 1.0;
    std::vector<double> zonalPhaseStart;     // per pupil pixel (Problem::pupilIndex order), radians; empty = 0
    std::vector<double> zonalAmplitudeStart; // per pupil pixel, log-amplitude; empty = 0
    DetectorSpec detector;
    SpectrumSpec spectrum;
    NuisanceSpec nuisance;
    double wavelength = 633e-9; // metres
    // Model intensity = flux * intensityScale * |field|^2 + background, with the field's inverse DFT
    // including the 1/N^2 factor. 0 = choose the scale so that flux is the total of an unaberrated
    // plane over the whole grid (the OOF preset sets 1 with flux fixed at 1).
    double intensityScale = 0.0;
    // The imaging model (optics/Vectorial.h). Vectorial: the fields of a dipole or bead through a high-NA objective,
    // with index mismatch and the emitter's depth; its intensityScale 0 makes flux the total of the unaberrated plane
    // at the start depth.
    ImagingModel model = ImagingModel::Scalar;
    VectorialSpec vectorial;
};

// The spec at `naScale` times the metadata's numerical aperture (the sampling fit, --fit-sampling): the pupil spans
// naScale times as many grid samples (Q = lambda / (2 NA pixel) divides by naScale), and every axial diversity's NA
// is multiplied by it, so a microscope's high-NA defocus follows. Other diversities keep their phase (then the scale
// reads as 1 / Q's error: pixel size or f-number). Zonal start values belong to the old pupil pixels and are
// dropped. The vectorial model's NA follows. Throws std::invalid_argument for a scale that is not positive or takes an NA
// to the immersion index.
ProblemSpec withApertureScale(ProblemSpec spec, double naScale);

} // namespace wfs
