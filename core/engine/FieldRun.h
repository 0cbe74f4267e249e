#pragma once
// A microscope's whole field (issue 43): every bead of one wide-field z-stack found (fit/BeadDetection.h), cropped and
// fitted with the settings of one session through the one workflow (prepareRun, reconstruct), in parallel on the
// machine's cores, then each aberration term described as a smooth function of field position (fit/FieldModel.h).
// `wavefront-cli field` and `bench field` call it; a bead that fails is a row with its reason, never the end of the run.
//
//   Session session;                       // the wide stack loaded (addFiles) and the user's settings applied
//   FieldRun run = runField(session, {});  // throws DatasetError / SettingsError / OperationCancelled
//   writeFileAtomically("beads.csv", fieldBeadsCsv(run), true);
#include "engine/Workflow.h"
#include "fit/BeadDetection.h"
#include "fit/FieldJointFit.h"
#include "fit/FieldModel.h"

#include <QByteArray>
#include <QJsonObject>

#include <atomic>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace wfs {

struct FieldRunOptions {
    BeadDetectionOptions detection; // its saturation level, when unset, is the data's (metadata or the stored type's)
    // The field's unit circle: centre and radius in pixels; radius 0 takes the image's centre and half its diagonal.
    FieldModelOptions model{.radius = 0.0};
    // The terms the field model describes (Noll indices of the fit's basis); empty: every fitted term from defocus
    // (Noll 4) up; piston, tip and tilt (where a bead sits) are never modelled.
    std::vector<int> modelTerms;
    // After the field model, fit every bead in the model at once with the shared terms given by it (fit/FieldJointFit.h);
    // its coefficients replace the two-step model's where it lowers the summed cost.
    bool jointFit = true;
    int jobs = 0; // fits at once; 0: engine/Batch.h's rule (batchJobs) with the session's threads per fit
    const std::atomic<bool>* cancel = nullptr;
    // The beads to fit, by index (a part of a divided run: wavefront-cli field --part); empty: every accepted bead.
    std::function<bool(size_t)> fitOnly;
    // Called after each bead's fit from the worker that fitted it (serialised): beads done, beads to fit.
    std::function<void(int, int)> progress;
};

// One bead of the field: where it is, whether it was fitted and why not, and its fit's figures.
struct FieldBead {
    DetectedBead detection;
    std::optional<double> xMicrons, yMicrons; // position x pixel pitch, when the metadata gives the pitch
    // "ok", "poor-fit" (the model does not describe its data: FitResult::verdict), or a BeadStatus name for a bead set
    // aside ("edge", "neighbour", "saturated", "aggregate", "fit-failed").
    std::string status;
    std::string reason;                          // why not "ok"; empty for "ok"
    std::vector<CoefficientResult> coefficients; // every basis term but piston, in the fit's ordering (empty unless fitted)
    double reducedChiSquare = std::numeric_limits<double>::quiet_NaN(); // mean over planes
    double rmsWaves = std::numeric_limits<double>::quiet_NaN();
    std::string termination;
    int iterations = 0;
    double seconds = 0.0;                                   // the solver's
    std::vector<double> parameters;                         // its fit's problem parameters (for the joint fit)
    double cost = std::numeric_limits<double>::quiet_NaN(); // its fit's final objective
    bool inModel = false; // its coefficients took part in the field model (an "ok" bead, not an outlier of any term)
};

// What the joint fit did: its beads and shared terms (every modelled term but defocus: each bead keeps its own focus),
// the summed cost at the two-step model's prediction, after the joint fit, and of the beads' separate fits (a floor:
// each bead free in every term), and whether its coefficients were adopted.
struct FieldJointSummary {
    std::string note; // why it did not run, or what it did, in words
    int beads = 0;
    std::vector<int> sharedTerms; // indices in the run's ordering
    double startCost = 0.0, finalCost = 0.0, separateCost = 0.0;
    int iterations = 0;
    std::string termination;
    double seconds = 0.0;
    bool adopted = false;
    // Where adopted: the shared terms' covariance is the joint fit's (its Fisher information, each bead's own parameters
    // marginalised, times the two-step fit's Birge ratio); false where it could not be computed (the two-step one stays).
    bool jointCovariance = false;
};

struct FieldRun {
    BeadDetection detection;      // the projection, the detection's levels
    std::vector<FieldBead> beads; // brightest first, as detected
    ZernikeOrdering ordering = ZernikeOrdering::Noll;
    std::vector<int> modelTerms;            // the field model's terms (indices in `ordering`), one per FieldModel::terms
    std::optional<FieldModel> model;        // unset when no bead was fitted
    std::optional<FieldJointSummary> joint; // with FieldRunOptions::jointFit and a model
    std::string modelError;                 // why there is no model
    std::optional<double> pixelPitch;       // metres (metadata), for the micrometre positions
    std::string dataUnit = "counts";        // the data's unit (metadata, BUNIT; counts when none is declared)
    int width = 0, height = 0;              // the field's pixels
    int jobs = 1;
    double seconds = 0.0;                 // wall-clock time of the whole run
    std::vector<DatasetMessage> messages; // the first bead's preparation notes and the run's own warnings
};

// `session` holds the wide stack (its planes of one size) and the settings every bead is fitted with; each bead's
// planes are its crops of the planes that take part, with the session's defocus, metadata and model. Throws
// DatasetError (no plane, planes of different sizes), SettingsError, std::invalid_argument (bad options) or
// OperationCancelled; a bead whose fit throws is a "fit-failed" row.
FieldRun runField(const Session& session, const FieldRunOptions& options);

// runField's three steps, for front ends that run the beads' fits elsewhere (Dask, a Slurm array): each bead's fit
// depends only on the session, the crop and its detection, so fitting the beads of detectField's run one by one (in any
// order, in any process) and then describeField gives runField's result.
// The beads found, none fitted ("not-run"); throws as runField.
FieldRun detectField(const Session& session, const BeadDetectionOptions& options);
// The session a bead is fitted with: every plane replaced by its crop around the bead (unused planes too, so that plane
// indices and sizes stay the data's), the bad pixels inside the crop moved into its coordinates, nothing prepared, no
// result kept.
Session fieldBeadSession(const Session& session, const DetectedBead& bead, int crop);
// Fits one bead ("not-run") in its crop: its status becomes "ok", "poor-fit" or "fit-failed" with the reason. Returns
// the run's preparation messages (empty when it failed). Throws OperationCancelled only.
std::vector<DatasetMessage> fitFieldBead(const Session& session, int crop, FieldBead& bead, const std::atomic<bool>* cancel = nullptr);
// The accepted beads of `run` (those FieldRunOptions::fitOnly lets through) fitted by `jobs` workers at once
// (FieldRunOptions::jobs, engine/Batch.h's rule), each with fitFieldBead; run.jobs says how many. Throws
// OperationCancelled.
void fitField(const Session& session, const FieldRunOptions& options, FieldRun& run);
// The field model of the beads fitted "ok" (FieldRunOptions::model and modelTerms), then, with FieldRunOptions::jointFit,
// the joint fit (jointFitField); without any bead fitted, run.modelError says why. Throws OperationCancelled.
void describeField(const Session& session, FieldRun& run, const FieldRunOptions& options);
// What the joint fit works on: each bead in the model whose run is a single plain fit, its problem rebuilt through the
// one workflow with its own fit's parameters; the shared terms (indices into run.model->terms: all but defocus); the
// beads' separate costs summed. Empty without a model.
struct JointFieldSetup {
    std::vector<JointFieldBead> beads;
    std::vector<int> terms;
    double separateCost = 0.0;
};
JointFieldSetup jointFieldSetup(const Session& session, const FieldRun& run, const FieldRunOptions& options);
// The joint fit of the beads in the model (FieldRunOptions::jointFit), run.joint saying what it did; adopts its
// coefficients into run.model where it lowers the cost. Throws OperationCancelled.
void jointFitField(const Session& session, FieldRun& run, const FieldRunOptions& options);

// The per-bead table: one row per bead found: index, x_px, y_px, x_um, y_um, status, significance_sigma,
// brightness_<data unit>, width_px,
// reduced_chi_square, rms_waves, iterations, seconds, in_model, then `<ordering>_<index>_waves` and its `_sigma` for
// every coefficient, reason last. Empty cells where a value does not apply.
QByteArray fieldBeadsCsv(const FieldRun& run);
// The names a bead's detection figures take in the table, the JSON and Python, with their units: "significance_sigma"
// (robust sigmas of the smoothed projection) and "brightness_" + the data's unit ("brightness_photons").
constexpr const char* kFieldSignificanceKey = "significance_sigma";
std::string fieldBrightnessKey(const FieldRun& run);
// The run as JSON: "convention" (positions, ordering, units, the field basis), "detection", "beads" (as the CSV), and
// "field_model" (per term: its index, field order, the field Zernike coefficients and covariance, reduced chi2, the
// covariance scale and the outlier beads) or "field_model_error".
QJsonObject fieldRunJson(const FieldRun& run);
// The aberrations the field model of a field JSON (fieldRunJson) gives at (x, y) pixels: every modelled term's value
// (waves, RMS-normalised, the file's ordering), for a PSF at any field position (`wavefront-cli psf --field-model`).
// Throws std::runtime_error naming `source` for a file without a field model or with a malformed one.
Truth fieldTruthFromJson(const QJsonObject& field, double x, double y, const std::string& source);

// A modelled term sampled on a regular grid over the field: sample (row r, column c) of `values` and `sigmas` (the
// model's 1-sigma; row 0 at the bottom) lies at pixel (x0 + c step, y0 + r step). The grid spans the image from its
// first pixel's centre to its last, `samples` samples along its longer side.
struct FieldTermGrid {
    Image values, sigmas;
    double x0 = 0.0, y0 = 0.0, step = 1.0;
};
// Throws std::invalid_argument without a model or for a term outside it.
FieldTermGrid fieldTermGrid(const FieldRun& run, size_t term, int samples = 64);
// Every modelled term's grid as one FITS file: the primary HDU a cube of values (one plane per term, keyword TERMk the
// k-th plane's index, ZORDERNG the ordering, BUNIT waves), an extension SIGMA of the same shape with the 1-sigmas; both
// with a linear mapping to image pixels (CTYPEi 'PIXEL', CRPIXi, CRVALi, CDELTi) and, when the pitch is known, to
// micrometres (alternate axes 'A': CTYPEiA 'POSITION', CUNITiA 'um'). Throws std::invalid_argument without a model.
QByteArray fieldMapsFits(const FieldRun& run, int samples = 64);
// The files a field run is saved as, by name within one folder: beads.csv, field.json and, with a model,
// field-maps.fits. The command line's `field --out` writes them (and its PNG maps), the Field tab's Save results too.
std::vector<std::pair<std::string, QByteArray>> fieldRunFiles(const FieldRun& run);

// One bead as field.json's "beads" hold it (its fit's parameters and cost included, for the joint fit), and back:
// applyFieldBeadJson sets the fit of the bead of `run` (detectField's, of the same stack and settings) with the object's
// index. For runs divided into parts (wavefront-cli field --part, a Slurm array, Dask). Throws std::runtime_error
// naming `source` for an index outside the run or a position not that bead's.
QJsonObject fieldBeadJson(const FieldRun& run, size_t index);
void applyFieldBeadJson(FieldRun& run, const QJsonObject& bead, const std::string& source);

// A few lines for a person: beads found, fitted and set aside (by reason), each modelled term's field order, reduced
// chi2 and outliers, the time and beads per second.
std::string fieldSummary(const FieldRun& run);

} // namespace wfs
