#pragma once
// The model a data set is fitted with: the Zernike basis, the objective and noise, the pupil geometry, and the
// pupil function, detector and camera (the block below the Zernike terms). Every default is documented at its
// field; isValid() checks what can be checked without data (the grid against the planes is the workflow's).
#include "optics/ProblemSpec.h"
#include "settings/SettingsError.h"

#include <optional>
#include <string>
#include <vector>

namespace wfs {

// The pupil geometry's limits, which geometryError() states and front ends' controls end at. The obscuration and the
// vane width are fractions of the pupil diameter, each limit itself refused: an obscuration of 1 blocks the whole
// pupil, and vanes half the diameter wide meet at the centre and leave no light along them.
inline constexpr double kObscurationBelow = 1.0; // obscuration in [0, kObscurationBelow)
inline constexpr double kSpiderWidthBelow = 0.5; // spider width in [0, kSpiderWidthBelow)
// Vanes counted, the limit accepted: no telescope has more than a few dozen, and a million is a typo that would
// still "converge".
inline constexpr int kMaxSpiderCount = 64; // spider count in [0, kMaxSpiderCount]

struct ModelSettings {
    int order = 4; // highest Zernike radial order (1..15)
    ZernikeOrdering ordering = ZernikeOrdering::Noll;
    ZernikeNormalization normalization = ZernikeNormalization::Rms;
    // Unset: chosen from the data: Poisson for dataUnit "photons" or "electrons"; least squares for
    // "relative" or normalised planes; otherwise (camera counts) weighted least squares with the
    // border noise as read noise. Poisson is fitted to the un-subtracted counts (the subtracted
    // background is added back and becomes the background start value); the others to the prepared
    // (background-subtracted) data.
    std::optional<ObjectiveKind> objective;
    // Counts RMS: the weighted objective's noise floor and every objective's chi-square. 0 = from the
    // data: the border noise (weighted least squares), or RDNOISE / the border's variance less its mean
    // (Poisson; one count per photon).
    double readNoise = 0.0;
    int grid = 0;             // model grid N (even); 0 = the prepared image size (rounded up to even)
    double obscuration = 0.0; // fractions of the pupil diameter, below kObscurationBelow
    int spiderCount = 0;      // at most kMaxSpiderCount
    double spiderWidth = 0.0; // fractions of the pupil diameter, below kSpiderWidthBelow
    double spiderAngleDeg = 0.0;
    bool fitFlux = true;         // per plane
    bool fitBackground = true;   // per plane (a residual background after subtraction)
    bool fitShift = false;       // per-plane tip/tilt, for drift between planes
    std::vector<int> fixedTerms; // Zernike indices (in `ordering`) held at zero
    // ---- The pupil function and the detector (ProblemSpec's fields of the same names) ----
    PupilPhaseModel phaseModel = PupilPhaseModel::Zernike;
    PupilAmplitudeModel amplitudeModel = PupilAmplitudeModel::Uniform;
    double regularization = 1.0;   // the zonal terms' smoothness weight (ProblemSpec::regularization); 0 = chosen (auto)
    bool pixelIntegration = false; // square detector pixels (the OTF times the pixel's sinc)
    double objectDiameter = 0.0;   // metres in the sample plane (a uniform sphere, e.g. a bead); 0 = a point
    // Electrons per data unit. 0 = estimated from the data (photon transfer, estimatePhotonTransfer);
    // the default 1 takes a count as one photon.
    double gain = 1.0;
    double offset = 0.0; // the camera's bias in data units, removed before the Poisson objective
    // Estimate the offset from the border instead (photon transfer: its mean and noise variance, var = (mean - offset)
    // / gain + read^2, with the read noise given or from the data's RDNOISE keyword). The Poisson objective only.
    bool estimateOffset = false;
    double bandwidth = 0.0;       // metres, full width of the source's (flat) band; 0 = one wavelength (SpectrumSpec)
    int spectralSamples = 1;      // wavelengths across the band
    bool fitDefocusScale = false; // NuisanceSpec
    bool fitDefocusOffsets = false;
    // The sampling (NA, so Q and a high-NA defocus) profiled by whole fits (ReconstructionRequest::fitSampling).
    bool fitSampling = false;
    // ---- The imaging model (optics/Vectorial.h; ProblemSpec::model and ::vectorial). The NA and the immersion
    // index are the metadata's; the vectorial model needs the NA (a microscope objective). ----
    ImagingModel imagingModel = ImagingModel::Scalar;
    double sampleIndex = 0.0;  // 0 = the immersion's (no mismatch)
    double emitterDepth = 0.0; // metres below the coverslip (the start value when fitted)
    bool fitEmitterDepth = false;
    double coverslipIndex = 0.0;           // 0 = the immersion's (no second interface)
    double coverslipThickness = 170e-6;    // metres
    double designCoverslipIndex = 0.0;     // 0 = coverslipIndex
    double designCoverslipThickness = 0.0; // 0 = coverslipThickness
    DipoleSpec dipole;                     // free (a bead, a rotating dipole) or fixed at (theta, phi)
    bool operator==(const ModelSettings&) const = default;

    // Whether the smoothness weight applies (a zonal or mixed phase, or a zonal amplitude).
    bool hasZonalTerms() const { return wfs::hasZonalTerms(phaseModel, amplitudeModel); }

    // The checks, each written once, naming the setting as the command line spells it.
    // The order alone (zernike::orderError); with coarse-to-fine stages the stages carry it (fittedOrders).
    std::optional<SettingsError> orderError() const;
    // The grid (0, or even within 16..kMaxGrid), the pupil's obscuration and spider vanes, and the fixed terms'
    // indices: what Problem would refuse in any data set.
    std::optional<SettingsError> geometryError() const;
    // The pupil-function, detector and camera settings in their plausible ranges (base/Units.h).
    std::optional<SettingsError> pupilFunctionError() const;
    // The read noise: plausible (0 stands for the data's border noise).
    std::optional<SettingsError> readNoiseError() const;
    // The imaging model's block in its plausible ranges (base/Units.h; 0 where 0 means "the immersion's" or "as
    // built"), the dipole's angles, and the depth fitted only by the vectorial model. What needs the metadata (the NA
    // below the immersion index) is the workflow's (DatasetProblem's applyImagingModel).
    std::optional<SettingsError> imagingModelError() const;
    // The first of the five.
    std::optional<SettingsError> firstError() const;
    bool isValid(std::string* why) const { return detail::validFrom(firstError(), why); }
};

} // namespace wfs
