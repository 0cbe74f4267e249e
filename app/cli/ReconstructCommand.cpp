// wavefront-cli reconstruct: fit Zernike coefficients to a preset's data, to the user's FITS, TIFF or PNG
// planes, or to a saved session; all file input goes through the data layer of core/io/Dataset.h.
#include "CliCommon.h"
#include "Commands.h"
#include "ReconstructOutputs.h"

#include "engine/Presets.h"
#include "engine/Report.h"
#include "engine/Workflow.h"
#include "io/Dataset.h"
#include "fit/PsfAnalysis.h"
#include "io/Exports.h"
#include "PhaseImage.h"
#include "io/OutputTransaction.h"
#include "io/Fits.h"
#include "io/Session.h"

#include <QFileInfo>
#include <QJsonDocument>

#include <chrono>
#include <cmath>
#include <thread>

namespace wfs::cli {

namespace {

// Metadata, preparation, model and solver flags are applied only when given (has()), so that they override
// what the files' headers, sidecars or a session say (the command-line contract).

PlaneDefocus parseDefocusEntry(const QString& text)
{
    // Core's rule (io/Units.h): waves need "w", lengths a unit; a bare non-zero number is ambiguous.
    const auto d = defocusFromText(text.trimmed().toStdString());
    if (!d)
        throw UsageError(QStringLiteral("--defocus: '%1' is neither waves of W020 (e.g. 1w) nor a length with its unit (e.g. 0.9um); "
                                        "a bare number other than 0 is ambiguous").arg(text).toStdString());
    const std::string error = plausibilityError(d->kind == PlaneDefocus::Kind::Waves ? Setting::DefocusWaves : Setting::DefocusLength, d->value);
    if (!error.empty())
        throw UsageError("--defocus: " + error);
    return *d;
}

// Where the planes of a stack are along z and how their defocus becomes phase.
void applyStackFlags(const QCommandLineParser& parser, DatasetMetadata& m)
{
    const std::string origin = "command line";
    if (has(parser, "z-step")) {
        m.zStep = parsePlausible(value(parser, "z-step"), QStringLiteral("z-step"), Setting::ZStep);
        m.origin["zStep"] = origin;
    }
    if (has(parser, "focus-plane")) {
        m.focusPlane = parseNumber(value(parser, "focus-plane"), QStringLiteral("focus-plane"));
        m.origin["focusPlane"] = origin;
    }
    if (has(parser, "z-direction")) {
        m.zIndexDown = parseWordList(value(parser, "z-direction"), QStringLiteral("z-direction"), {QStringLiteral("up"), QStringLiteral("down")}).front()
                       == QLatin1String("down");
        m.origin["zIndexDown"] = origin;
    }
    if (has(parser, "defocus-model")) {
        const QString model = parseWordList(value(parser, "defocus-model"), QStringLiteral("defocus-model"), {QStringLiteral("paraxial"), QStringLiteral("high-na")}).front();
        m.defocusModel = model == QLatin1String("high-na") ? DefocusModel::HighNa : DefocusModel::Paraxial;
        m.origin["defocusModel"] = origin;
    }
}

void applyMetadataFlags(const QCommandLineParser& parser, Dataset& data)
{
    DatasetMetadata& m = data.metadata;
    const std::string origin = "command line";
    // Every value through core's parser and its plausible ranges (io/Units.h): "--wavelength 633" is
    // refused with "did you mean 633nm?" rather than taken as 633 m.
    auto set = [&](const char* name, Setting setting, std::optional<double>& field, const char* key) {
        if (!has(parser, name))
            return;
        field = parsePlausible(value(parser, name), QLatin1String(name), setting);
        m.origin[key] = origin;
    };
    set("wavelength", Setting::Wavelength, m.wavelength, "wavelength");
    set("sampling", Setting::SamplingQ, m.samplingQ, "samplingQ");
    set("f-number", Setting::FNumber, m.fNumber, "fNumber");
    set("na", Setting::NumericalAperture, m.numericalAperture, "numericalAperture");
    if (has(parser, "immersion")) {
        m.immersionIndex = parsePlausible(value(parser, "immersion"), QStringLiteral("immersion"), Setting::ImmersionIndex);
        m.origin["immersionIndex"] = origin;
    }
    set("aperture", Setting::Aperture, m.aperture, "aperture");
    if (has(parser, "pixel-scale")) {
        // A pitch (a length; a bare number is metres) or, with an angle unit, an angle.
        const QString text = value(parser, "pixel-scale");
        const auto v = valueFromText(text.toStdString());
        if (v && v->kind == ValueWithUnit::Kind::Angle) {
            const std::string error = plausibilityError(Setting::PixelAngle, v->value);
            if (!error.empty())
                throw UsageError("--pixel-scale: " + error);
            m.pixelAngle = v->value;
            m.pixelPitch.reset();
            m.origin["pixelAngle"] = origin;
        } else {
            m.pixelPitch = parsePlausible(text, QStringLiteral("pixel-scale"), Setting::PixelPitch);
            m.pixelAngle.reset();
            m.origin["pixelPitch"] = origin;
        }
    }
    // A sampling given on the command line beats header quantities, and header Q yields to a pitch given here.
    if (has(parser, "pixel-scale") && !has(parser, "sampling"))
        m.samplingQ.reset();
    applyStackFlags(parser, m);
    if (has(parser, "saturation")) {
        m.saturationLevel = parseNumber(value(parser, "saturation"), QStringLiteral("saturation"));
        if (!(*m.saturationLevel > 0.0))
            throw UsageError("--saturation: must be positive");
        m.origin["saturationLevel"] = origin;
    }
    if (has(parser, "data-unit")) {
        m.dataUnit = parseWordList(value(parser, "data-unit"), QStringLiteral("data-unit"),
                                   {QStringLiteral("photons"), QStringLiteral("electrons"), QStringLiteral("counts"), QStringLiteral("adu"), QStringLiteral("relative")})
                         .front()
                         .toStdString();
        m.origin["dataUnit"] = origin;
    }
    if (has(parser, "planes")) {
        std::vector<int> planes = parseIntList(value(parser, "planes"), QStringLiteral("planes"));
        try {
            selectPlanes(data, planes);
        } catch (const DatasetError& e) {
            throw UsageError(std::string("--planes: ") + e.what());
        }
    }
    if (has(parser, "defocus")) {
        std::vector<PlaneDefocus> entries;
        for (const QString& part : value(parser, "defocus").split(QLatin1Char(','), Qt::KeepEmptyParts))
            entries.push_back(parseDefocusEntry(part));
        const std::vector<int> used = usedPlanes(data);
        if (entries.size() != used.size())
            throw UsageError("--defocus has " + std::to_string(entries.size()) + " entries but " + std::to_string(used.size()) + " planes take part");
        for (size_t k = 0; k < used.size(); ++k) {
            data.planes[size_t(used[k])].defocus = entries[k];
            m.origin["defocus[" + std::to_string(used[k]) + "]"] = origin;
        }
    }
}

void applyPreprocessFlags(const QCommandLineParser& parser, PreprocessOptions& o)
{
    if (has(parser, "no-background"))
        o.subtractBackground = false;
    if (has(parser, "border")) {
        o.borderWidth = parseInt(value(parser, "border"), QStringLiteral("border"));
        if (o.borderWidth < 1)
            throw UsageError("--border: must be at least 1 pixel");
    }
    if (has(parser, "clip-sigma")) {
        o.clipSigma = parseNumber(value(parser, "clip-sigma"), QStringLiteral("clip-sigma"));
        if (!(o.clipSigma > 0.0))
            throw UsageError("--clip-sigma: must be positive");
    }
    if (has(parser, "centre")) {
        const QString c = parseWordList(value(parser, "centre"), QStringLiteral("centre"), {QStringLiteral("none"), QStringLiteral("peak"), QStringLiteral("centroid")}).front();
        o.centre = c == QLatin1String("peak") ? CentreMethod::Peak : c == QLatin1String("centroid") ? CentreMethod::Centroid : CentreMethod::None;
    }
    if (has(parser, "centre-each-plane"))
        o.centreEachPlane = true;
    if (has(parser, "crop")) {
        o.cropSize = parseInt(value(parser, "crop"), QStringLiteral("crop"));
        if (o.cropSize < 2 || o.cropSize % 2 != 0)
            throw UsageError("--crop: must be an even number of pixels (at least 2)");
    }
    if (has(parser, "no-saturation-mask"))
        o.maskSaturated = false;
    if (has(parser, "hot-pixels")) {
        o.maskHotPixels = true;
        o.hotPixelSigma = parseNumber(value(parser, "hot-pixels"), QStringLiteral("hot-pixels"));
        if (!(o.hotPixelSigma > 0.0))
            throw UsageError("--hot-pixels: the threshold must be positive");
    }
    if (has(parser, "bad-pixels")) {
        o.badPixels.clear();
        for (const QString& pair : value(parser, "bad-pixels").split(QLatin1Char(','), Qt::SkipEmptyParts)) {
            const QStringList xy = pair.split(QLatin1Char(':'));
            if (xy.size() != 2)
                throw UsageError("--bad-pixels: expected column:row pairs, e.g. 10:20,31:7");
            o.badPixels.emplace_back(parseInt(xy[0], QStringLiteral("bad-pixels")), parseInt(xy[1], QStringLiteral("bad-pixels")));
        }
    }
    if (has(parser, "normalise"))
        o.normalise = true;
}

// Issue 13's flags: the pupil function, the detector and source, the camera, the defocus parameters.
void applyPupilFunctionFlags(const QCommandLineParser& parser, ModelSettings& m)
{
    if (has(parser, "pupil-phase")) {
        const QString v = parseWordList(value(parser, "pupil-phase"), QStringLiteral("pupil-phase"),
                                        {QStringLiteral("zernike"), QStringLiteral("zonal"), QStringLiteral("both")}).front();
        m.phaseModel = v == QLatin1String("zonal") ? PupilPhaseModel::Zonal : v == QLatin1String("both") ? PupilPhaseModel::Both : PupilPhaseModel::Zernike;
    }
    if (has(parser, "pupil-amplitude")) {
        const QString v = parseWordList(value(parser, "pupil-amplitude"), QStringLiteral("pupil-amplitude"),
                                        {QStringLiteral("uniform"), QStringLiteral("gaussian"), QStringLiteral("zonal")}).front();
        m.amplitudeModel = v == QLatin1String("zonal") ? PupilAmplitudeModel::Zonal
                           : v == QLatin1String("gaussian") ? PupilAmplitudeModel::Gaussian : PupilAmplitudeModel::Uniform;
    }
    if (has(parser, "regularization"))
        m.regularization = value(parser, "regularization") == QLatin1String("auto")
                               ? 0.0 : parsePlausible(value(parser, "regularization"), QStringLiteral("regularization"), Setting::Regularization);
    if (has(parser, "pixel-integration"))
        m.pixelIntegration = true;
    if (has(parser, "object-diameter"))
        m.objectDiameter = parsePlausible(value(parser, "object-diameter"), QStringLiteral("object-diameter"), Setting::ObjectDiameter);
    if (has(parser, "gain"))
        m.gain = value(parser, "gain") == QLatin1String("auto") ? 0.0 : parsePlausible(value(parser, "gain"), QStringLiteral("gain"), Setting::Gain);
    if (has(parser, "offset")) {
        m.estimateOffset = value(parser, "offset") == QLatin1String("auto");
        if (!m.estimateOffset)
            m.offset = parsePlausible(value(parser, "offset"), QStringLiteral("offset"), Setting::CameraOffset);
    }
    if (has(parser, "bandwidth"))
        m.bandwidth = parsePlausible(value(parser, "bandwidth"), QStringLiteral("bandwidth"), Setting::Bandwidth);
    if (has(parser, "spectral-samples")) {
        m.spectralSamples = parseInt(value(parser, "spectral-samples"), QStringLiteral("spectral-samples"));
        if (m.spectralSamples < 1 || m.spectralSamples > 15)
            throw UsageError("--spectral-samples: must be from 1 to 15");
    }
    if (has(parser, "fit-defocus-scale"))
        m.fitDefocusScale = true;
    if (has(parser, "fit-defocus-offsets"))
        m.fitDefocusOffsets = true;
    if (has(parser, "fit-sampling"))
        m.fitSampling = true;
}

void applyModelFlags(const QCommandLineParser& parser, ModelSettings& m)
{
    if (has(parser, "order"))
        m.order = parseInt(value(parser, "order"), QStringLiteral("order"));
    if (has(parser, "ordering"))
        m.ordering = parseWordList(value(parser, "ordering"), QStringLiteral("ordering"), {QStringLiteral("noll"), QStringLiteral("ansi")}).front() == QLatin1String("ansi")
                         ? ZernikeOrdering::Ansi : ZernikeOrdering::Noll;
    if (has(parser, "normalization"))
        m.normalization = parseWordList(value(parser, "normalization"), QStringLiteral("normalization"), {QStringLiteral("rms"), QStringLiteral("unit")}).front()
                                  == QLatin1String("unit")
                              ? ZernikeNormalization::Unit : ZernikeNormalization::Rms;
    if (has(parser, "objective")) {
        const QString o = parseWordList(value(parser, "objective"), QStringLiteral("objective"),
                                        {QStringLiteral("poisson"), QStringLiteral("least-squares"), QStringLiteral("weighted")}).front();
        m.objective = o == QLatin1String("poisson") ? ObjectiveKind::Poisson : o == QLatin1String("weighted") ? ObjectiveKind::WeightedLeastSquares : ObjectiveKind::LeastSquares;
    }
    if (has(parser, "read-noise")) // negative is refused, not silently replaced by the border noise
        m.readNoise = parsePlausible(value(parser, "read-noise"), QStringLiteral("read-noise"), Setting::ReadNoise);
    if (has(parser, "grid"))
        m.grid = parseInt(value(parser, "grid"), QStringLiteral("grid"));
    if (has(parser, "obscuration"))
        m.obscuration = parseNumber(value(parser, "obscuration"), QStringLiteral("obscuration"));
    if (has(parser, "spiders"))
        m.spiderCount = parseInt(value(parser, "spiders"), QStringLiteral("spiders"));
    if (has(parser, "spider-width"))
        m.spiderWidth = parseNumber(value(parser, "spider-width"), QStringLiteral("spider-width"));
    if (has(parser, "fit-shift"))
        m.fitShift = true;
    applyPupilFunctionFlags(parser, m);
}

// The solver flags only `reconstruct` has (coarse-to-fine stages and what the analysis reports).
void applyReconstructSolverFlags(const QCommandLineParser& parser, SolverSettings& s)
{
    applySolverFlags(parser, s);
    if (has(parser, "stages"))
        s.stages = parseIntList(value(parser, "stages"), QStringLiteral("stages"));
    if (has(parser, "remove-defocus"))
        s.removeDefocus = true;
    if (has(parser, "no-uncertainty"))
        s.computeUncertainty = false;
}

// Messages of the data layer: errors stop the run (exit 1), the rest become notes.
void takeMessages(const std::vector<DatasetMessage>& messages, std::vector<std::string>& notes)
{
    std::string errors;
    for (const DatasetMessage& m : messages) {
        if (m.level == MessageLevel::Error)
            errors += (errors.empty() ? "" : "; ") + m.text;
        else
            notes.push_back(m.level == MessageLevel::Warning ? "warning: " + m.text : m.text);
    }
    if (!errors.empty())
        throw std::runtime_error(errors);
}

} // namespace

// The options of `reconstruct` (the command-line contract), with their defaults in the help.
namespace {

// The metadata options of `reconstruct` (and their defaults).
void addMetadataOptions(QCommandLineParser& parser, const DatasetMetadata& metadata)
{
    const QString fromHeaders = QStringLiteral(" (default: from the files' headers or sidecars)");
    addOptions(parser, {
        {QStringLiteral("wavelength"), QStringLiteral("Wavelength, e.g. 633nm") + fromHeaders, QStringLiteral("length")},
        {QStringLiteral("pixel-scale"), QStringLiteral("Pixel pitch (with --f-number or --na) or angle (arcsec, mas, rad; with --aperture)") + fromHeaders, QStringLiteral("value")},
        {QStringLiteral("f-number"), QStringLiteral("Focal ratio F#: Q = lambda F# / pitch") + fromHeaders, QStringLiteral("F")},
        {QStringLiteral("na"), QStringLiteral("Numerical aperture: Q = lambda / (2 NA pitch)") + fromHeaders, QStringLiteral("NA")},
        {QStringLiteral("immersion"), QStringLiteral("Immersion refractive index (default: the headers', else %1).").arg(metadata.immersionIndex), QStringLiteral("n")},
        {QStringLiteral("aperture"), QStringLiteral("Aperture diameter, with an angular pixel scale") + fromHeaders, QStringLiteral("length")},
        {QStringLiteral("sampling"), QStringLiteral("Sampling Q = lambda F# / pixel, given directly (default: the headers', else from the pixel scale and the optics)."), QStringLiteral("Q")},
        {QStringLiteral("defocus"), QStringLiteral("One entry per plane that takes part: waves of W020 ('1w') or an axial length ('0.9um') (default: the headers', "
                                                       "sidecars' or --z-step's)."), QStringLiteral("list")},
        {QStringLiteral("defocus-model"), QStringLiteral("paraxial or high-na, for defocus given as lengths (default: the headers', else %1).")
                                                .arg(metadata.defocusModel == DefocusModel::HighNa ? QStringLiteral("high-na") : QStringLiteral("paraxial")),
         QStringLiteral("model")},
        {QStringLiteral("planes"), QStringLiteral("Planes that take part (0-based, in file order; default: all)."), QStringLiteral("list")},
        {QStringLiteral("z-step"), QStringLiteral("Stacks: axial step between planes (e.g. 0.3um); plane i is at (i - focus plane) * step") + fromHeaders, QStringLiteral("length")},
        {QStringLiteral("focus-plane"), QStringLiteral("Stacks: the plane (0-based, may be fractional) at focus, for --z-step") + fromHeaders, QStringLiteral("index")},
        {QStringLiteral("data-unit"), QStringLiteral("photons, electrons, counts, adu or relative; chooses the objective (default: the FITS BUNIT, else counts)."), QStringLiteral("unit")},
    });
}

// The preparation options (background, centring, crop, masks).
void addPreprocessOptions(QCommandLineParser& parser, const PreprocessOptions& preprocess)
{
    addOptions(parser, {
        {QStringLiteral("saturation"), QStringLiteral("Saturation level in data units (default: the format's maximum)."), QStringLiteral("level")},
        {QStringLiteral("no-saturation-mask"), QStringLiteral("Keep saturated pixels in the fit.")},
        {QStringLiteral("no-background"), QStringLiteral("Do not subtract the border background.")},
        {QStringLiteral("border"), QStringLiteral("Border width for the background, pixels (default: the image size / 16, at least 2)."), QStringLiteral("pixels")},
        {QStringLiteral("clip-sigma"), QStringLiteral("Sigma clipping of the border statistics (default %1).").arg(preprocess.clipSigma), QStringLiteral("k")},
        {QStringLiteral("centre"), QStringLiteral("Centre the PSF: none, peak or centroid (default %1).")
                                                     .arg(preprocess.centre == CentreMethod::Peak ? QStringLiteral("peak")
                                                          : preprocess.centre == CentreMethod::Centroid ? QStringLiteral("centroid") : QStringLiteral("none")), QStringLiteral("method")},
        {QStringLiteral("centre-each-plane"), QStringLiteral("Centre every plane on its own (default: one centre for the stack).")},
        {QStringLiteral("crop"), QStringLiteral("Crop to N x N pixels around the centre (even N; default: no crop)."), QStringLiteral("N")},
        {QStringLiteral("hot-pixels"), QStringLiteral("Mask isolated hot pixels more than k noise deviations above their neighbours (default: off; k = %1 in the desktop program).").arg(preprocess.hotPixelSigma), QStringLiteral("k")},
        {QStringLiteral("bad-pixels"), QStringLiteral("Mask these pixels in every plane: column:row,... (raw image coordinates; default: none)."), QStringLiteral("list")},
        {QStringLiteral("normalise"), QStringLiteral("Scale every plane to unit sum (least-squares objective).")},
    });
}

// The model options: pupil geometry, grid, Zernike basis, objective, the pupil function, detector and camera.
void addModelOptions(QCommandLineParser& parser, const ModelSettings& model, const PresetDefaults& demo, const PresetDefaults& oof)
{
    addOptions(parser, {
        {QStringLiteral("obscuration"), QStringLiteral("Central obscuration, fraction of the pupil diameter (default %1).").arg(model.obscuration), QStringLiteral("ratio")},
        {QStringLiteral("spiders"), QStringLiteral("Number of spider vanes (default %1).").arg(model.spiderCount), QStringLiteral("count")},
        {QStringLiteral("spider-width"), QStringLiteral("Vane width, fraction of the pupil diameter (default %1).").arg(model.spiderWidth), QStringLiteral("w")},
        {QStringLiteral("grid"), QStringLiteral("Model grid size N (even; default: the data size; --preset demo %1, oof %2).").arg(demo.grid).arg(oof.grid), QStringLiteral("N")},
        {QStringLiteral("order"), QStringLiteral("Highest Zernike radial order, 1..%1 (default %2; --preset demo %3, oof %4).").arg(zernike::kMaxOrder).arg(model.order).arg(demo.order).arg(oof.order), QStringLiteral("n")},
        {QStringLiteral("ordering"), QStringLiteral("noll or ansi (default %1).").arg(QLatin1String(zernike::orderingName(model.ordering))), QStringLiteral("name")},
        {QStringLiteral("normalization"), QStringLiteral("rms (Noll) or unit (R(1) = 1) (default %1).").arg(QLatin1String(zernike::normalizationName(model.normalization))), QStringLiteral("name")},
        {QStringLiteral("objective"), QStringLiteral("poisson, least-squares or weighted (Poisson plus read noise) (default: from the data unit: poisson for photons "
                                                      "or electrons, least-squares for relative or normalised data, weighted for counts; a preset's own)."), QStringLiteral("name")},
        {QStringLiteral("read-noise"), QStringLiteral("Read noise in counts RMS, for --objective weighted (default: the noise of the image border)."), QStringLiteral("e")},
        {QStringLiteral("fit-shift"), QStringLiteral("Fit a tip/tilt per plane (drift between planes).")},
        {QStringLiteral("pupil-phase"), QStringLiteral("zernike, zonal (one value per pupil pixel) or both (Zernike terms plus a zonal remainder "
                                                        "orthogonal to them) (default %1).").arg(QLatin1String(pupilPhaseModelName(model.phaseModel))), QStringLiteral("model")},
        {QStringLiteral("pupil-amplitude"), QStringLiteral("uniform, gaussian (fitted centre and width) or zonal (exp of one value per pupil pixel) "
                                                            "(default %1).").arg(QLatin1String(pupilAmplitudeModelName(model.amplitudeModel))), QStringLiteral("model")},
        {QStringLiteral("regularization"), QStringLiteral("Smoothness weight W of the zonal terms: (W/2) x the sum of squared neighbour differences, "
                                                           "in units of the objective (about chi^2/2) per rad^2, or auto (a sweep from 1000 to 0.1: the discrepancy principle) (default %1).").arg(model.regularization), QStringLiteral("W|auto")},
        {QStringLiteral("pixel-integration"), QStringLiteral("Model square detector pixels: the OTF times the pixel's sinc.")},
        {QStringLiteral("object-diameter"), QStringLiteral("Diameter of the imaged object (a uniform sphere, e.g. a bead), e.g. 100nm; needs the "
                                                            "sample-plane pixel size (default: a point)."), QStringLiteral("length")},
        {QStringLiteral("gain"), QStringLiteral("Camera gain in electrons per data unit, or auto (photon transfer: the noise power above the OTF "
                                                 "cut-off against the signal, plane by plane) (default %1: a count is a photon).").arg(model.gain), QStringLiteral("e/unit")},
        {QStringLiteral("offset"), QStringLiteral("Camera offset (bias) in data units, removed before the Poisson objective (default %1). auto: from each plane's border by "
                                                   "photon transfer, mean - gain (variance - read noise^2); needs the read noise (--read-noise or RDNOISE).").arg(model.offset), QStringLiteral("units|auto")},
        {QStringLiteral("bandwidth"), QStringLiteral("Full width of the source's band (flat), e.g. 30nm: the image is the sum over wavelengths, each "
                                                      "on its own FFT size, so they fall 2/N of the wavelength apart (default: one wavelength)."), QStringLiteral("length")},
        {QStringLiteral("spectral-samples"), QStringLiteral("Wavelengths across --bandwidth, 1..15 (default %1; those closer than the grid's "
                                                             "2/N merge).").arg(model.spectralSamples), QStringLiteral("n")},
        {QStringLiteral("fit-defocus-scale"), QStringLiteral("Fit a scale of every plane's defocus (a z-step calibration error).")},
        {QStringLiteral("fit-defocus-offsets"), QStringLiteral("Fit a defocus offset per plane (the plane nearest focus is held; with --fit-defocus-scale "
                                                                "the two outermost too).")},
        {QStringLiteral("fit-sampling"), QStringLiteral("Fit the sampling Q as an NA error (with an axial defocus the defocus follows the NA; "
                                                         "otherwise a pixel-size error): the cost profiled over the NA by whole fits in 4 % steps, "
                                                         "then the parabola's vertex; reported with a 1-sigma error.")},
        {QStringLiteral("z-direction"), QStringLiteral("Stacks: up (plane index increases along +z) or down (default up)."), QStringLiteral("up|down")},
        {QStringLiteral("stages"), QStringLiteral("Coarse-to-fine Zernike orders, e.g. 2,4,6 (the last is the fitted order; default: one stage at --order)."), QStringLiteral("list")},
        {QStringLiteral("seed"), QStringLiteral("Noise seed of a preset."), QStringLiteral("S"), QString::number(PresetOptions{}.seed)},
        {QStringLiteral("remove-defocus"), QStringLiteral("Report RMS and PV with defocus removed too.")},
        {QStringLiteral("no-uncertainty"), QStringLiteral("Skip the uncertainty estimate (2 P extra gradients).")},
    });
}

} // namespace

void addReconstructOptions(QCommandLineParser& parser)
{
    // Defaults stated from core's own: the settings' structs and the presets' (engine/Presets.h).
    const DatasetMetadata metadata;
    const PreprocessOptions preprocess;
    const ModelSettings model;
    const PresetDefaults demo = presetDefaults("demo"), oof = presetDefaults("oof");
    parser.setApplicationDescription(QStringLiteral(
        "Reconstruct the wavefront (Zernike coefficients) from PSF images by BFGS on a Fourier-optics model.\n"
        "Input: --preset demo|oof|pupil, or --input FILE [...] (FITS images, cubes and HDUs; TIFF pages; PNG) with metadata,\n"
        "or --session FILE.json (a saved session; options given here override it).\n"
        "Numbers take unit suffixes; a bare number is in SI base units."));
    addOptions(parser, {
        {QStringLiteral("preset"), QStringLiteral("Built-in problem: demo, oof or pupil (a non-Zernike pupil fitted with zonal terms) (no default: give one "
                                                   "of --preset, --input, --session)."), QStringLiteral("name")},
        {QStringLiteral("input"), QStringLiteral("FITS, TIFF or PNG file(s) with the PSF planes (repeat the option for several files)."), QStringLiteral("FILE")},
        {QStringLiteral("session"), QStringLiteral("A saved session (JSON): inputs, metadata, preparation, model and solver settings."), QStringLiteral("FILE.json")},
    });
    addMetadataOptions(parser, metadata);
    addPreprocessOptions(parser, preprocess);
    addModelOptions(parser, model, demo, oof);
    addReconstructOutputOptions(parser);
    parser.addPositionalArgument(QStringLiteral("files"), QStringLiteral("Input files (same as --input)."), QStringLiteral("[FILE...]"));
    addSolverOptions(parser, SolverSettings{}, QStringLiteral("--preset demo %1, oof %2").arg(demo.gradientTolerance, 0, 'g', 6).arg(oof.gradientTolerance, 0, 'g', 6),
                     QStringLiteral("--preset demo %1, oof %2").arg(demo.functionTolerance, 0, 'g', 6).arg(oof.functionTolerance, 0, 'g', 6));
}

// A preset's problem with the flags that apply to it. Throws UsageError or SettingsError.
void preparePresetRun(const QCommandLineParser& parser, ReconstructionRequest& request, std::optional<Truth>& truth,
                      ExportContext& context, std::vector<std::string>& notes)
{
    if (has(parser, "save-session"))
        throw UsageError("--save-session applies to file input; the presets are rebuilt from their names");
    PresetOptions options;
    if (has(parser, "grid"))
        options.grid = parseInt(value(parser, "grid"), QStringLiteral("grid"));
    if (has(parser, "order"))
        options.order = parseInt(value(parser, "order"), QStringLiteral("order"));
    options.seed = std::uint64_t(parseNumber(value(parser, "seed"), QStringLiteral("seed")));
    QStringList presets;
    for (const std::string& preset : presetNames())
        presets << QString::fromStdString(preset);
    const QString name = parseWordList(value(parser, "preset"), QStringLiteral("preset"), presets).front();
    PresetCase c;
    try {
        c = makePreset(name.toStdString(), options);
    } catch (const std::invalid_argument& e) { // every preset input is a command-line argument
        throw UsageError(e.what());
    }
    request.spec = c.spec;
    request.start = c.start;
    request.solver = c.solver;
    truth = c.truth;
    context = presetExportContext(c, name.toStdString());
    notes.push_back("simulated data: " + c.noiseDescription);
    // The data and optics options describe files: a preset brings its own, so given ones are named, not silently dropped.
    std::string ignored;
    for (const char* option : {"wavelength", "pixel-scale", "f-number", "na", "immersion", "aperture", "sampling", "defocus", "defocus-model",
                               "planes", "z-step", "focus-plane", "data-unit", "saturation", "no-saturation-mask", "no-background", "border",
                               "clip-sigma", "centre", "centre-each-plane", "crop", "hot-pixels", "bad-pixels", "normalise", "obscuration",
                               "spiders", "spider-width", "fit-shift", "pupil-phase", "pupil-amplitude", "regularization",
                               "pixel-integration", "object-diameter", "gain", "offset", "bandwidth", "spectral-samples", "fit-defocus-scale", "fit-defocus-offsets",
                               "fit-sampling", "z-direction"})
        if (has(parser, option))
            ignored += (ignored.empty() ? "--" : ", --") + std::string(option);
    if (!ignored.empty())
        notes.push_back("warning: the preset " + name.toStdString() + " ignores " + ignored + " (they apply to file input; the preset fixes its own data and optics)");
    if (has(parser, "ordering") || has(parser, "normalization"))
        throw UsageError("--ordering and --normalization apply to file input; the presets fix their conventions");
    if (has(parser, "objective")) {
        ModelSettings m;
        applyModelFlags(parser, m);
        request.spec.objective = *m.objective;
    }
    if (has(parser, "read-noise"))
        request.spec.readNoise = parsePlausible(value(parser, "read-noise"), QStringLiteral("read-noise"), Setting::ReadNoise);
    // The preset's stopping rules, overridden by the same solver flags as file input.
    SolverSettings solver;
    solver.maxIterations = c.solver.maxIterations;
    solver.gradientTolerance = c.solver.gradientTolerance;
    solver.functionTolerance = c.solver.functionTolerance;
    applyReconstructSolverFlags(parser, solver);
    ModelSettings model;
    model.order = request.spec.basis.maxOrder;
    checkSettings(model, solver);
    request.spec.basis.maxOrder = fittedOrders(model, solver).back();
    if (!solver.stages.empty())
        request.start.clear(); // start values belong to the full-order problem
    applySolverSettings(solver, request);
}

// Runs on the engine's worker thread, printing the latest snapshot about twice a second on stderr.
void runWithProgress(ReconstructionEngine& engine, const ReconstructionRequest& request, bool quiet)
{
    engine.start(request);
    unsigned long shown = 0;
    auto lastPrint = std::chrono::steady_clock::now();
    while (engine.isRunning()) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        unsigned long version = 0;
        const auto snap = engine.latest(&version);
        if (quiet || !snap || version == shown || std::chrono::steady_clock::now() - lastPrint < std::chrono::milliseconds(500))
            continue;
        shown = version;
        lastPrint = std::chrono::steady_clock::now();
        std::fprintf(stderr, "  stage %d/%d (order %d)  iteration %4d  cost %.8g  max|g| %.3g  %.1f s\n", snap->stage + 1,
                     snap->stageCount, snap->order, snap->iteration.iteration, snap->iteration.cost, snap->iteration.gradientMaxNorm,
                     snap->iteration.elapsedSeconds);
    }
    engine.wait();
}

// The report on stdout (stderr when data go to stdout), the warnings on stderr, each once.
void printReport(const QString& program, const std::vector<std::string>& notes, const FitResult& result, const Truth* truth,
                 const std::vector<OutputSpec>& outputs)
{
    bool dataOnStdout = false;
    for (const OutputSpec& o : outputs)
        dataOnStdout = dataOnStdout || o.path == "-";
    std::vector<std::string> warnings;
    for (const std::string& note : notes)
        if (note.rfind("warning: ", 0) == 0)
            warnings.push_back(note.substr(9));
    warnings.insert(warnings.end(), result.warnings.begin(), result.warnings.end());
    std::vector<std::string> infoNotes;
    for (const std::string& note : notes)
        if (note.rfind("warning: ", 0) != 0)
            infoNotes.push_back(note);
    std::fputs(fullReport(result, infoNotes, truth).c_str(), dataOnStdout ? stderr : stdout);
    printWarnings(program, warnings);
}

// File or session input: loaded, the flags applied over what the files or the session say, then
// through core's workflow. Throws UsageError for what the flags leave undetermined.
Session prepareFileRun(const QCommandLineParser& parser, const std::vector<OutputSpec>& outputs, ReconstructionRequest& request,
                       ExportContext& context, std::vector<std::string>& notes)
{
    Session session;
    const bool fromSession = has(parser, "session");
    if (fromSession) {
        OpenedSession opened = openSession(value(parser, "session").toStdString());
        session = std::move(opened.session);
        takeMessages(opened.messages, notes);
        std::vector<std::string> inputs;
        for (const DatasetFile& f : session.dataset.files) {
            inputs.push_back(f.path);
            for (std::string& metadata : metadataFilesBeside(f.path))
                inputs.push_back(std::move(metadata));
        }
        checkOutputs(outputs, inputs, has(parser, "force")); // the session's own inputs are known only now
    } else {
        std::vector<std::string> paths;
        for (const QString& input : parser.values(QStringLiteral("input")) + parser.positionalArguments())
            paths.push_back(input.toStdString());
        takeMessages(addFiles(session.dataset, paths), notes);
    }
    if (has(parser, "seed"))
        notes.push_back("warning: --seed applies to the presets' simulated noise; file input ignores it");
    Dataset& data = session.dataset;
    applyMetadataFlags(parser, data);
    applyPreprocessFlags(parser, data.preprocess);
    applyModelFlags(parser, session.model);
    applyReconstructSolverFlags(parser, session.solver);
    if (has(parser, "order") && !has(parser, "stages"))
        session.solver.stages.clear(); // a new order replaces a session's coarse-to-fine stages
    if (!data.metadata.wavelength && !fromSession)
        throw UsageError("the wavelength is unknown: give --wavelength (e.g. 633nm)");
    PreparedRun run;
    try {
        run = prepareRun(session);
    } catch (const DatasetError& e) {
        // What the command line (or the session) left undetermined: a usage error for flags.
        if (fromSession)
            throw std::runtime_error(value(parser, "session").toStdString() + ": " + e.what());
        throw UsageError(e.what());
    }
    takeMessages(run.messages, notes);
    session.dataset = std::move(run.dataset);
    request = std::move(run.request);
    context = std::move(run.context);
    session.model.order = request.spec.basis.maxOrder; // the stages' last, as a saved session says
    return session;
}

int runReconstruct(const QStringList& args)
{
    QCommandLineParser parser;
    addReconstructOptions(parser);
    if (auto status = parseOrExit(parser, args))
        return *status;
    const QString program = args.value(0);

    ReconstructionRequest request;
    std::vector<std::string> notes;
    std::optional<Truth> truth;
    std::optional<Session> session; // file and session input
    ExportContext context;
    const bool force = has(parser, "force");
    const std::vector<OutputSpec> outputs = requestedOutputs(parser);
    try {
        // Every output is checked before any input is read or any fitting done (issue 12, items 7, 8).
        // The images' sidecars and acquisition logs are inputs too: no output may overwrite them.
        std::vector<std::string> inputs;
        for (const QString& input : parser.values(QStringLiteral("input")) + parser.positionalArguments() + parser.values(QStringLiteral("session"))) {
            inputs.push_back(input.toStdString());
            for (std::string& metadata : metadataFilesBeside(input.toStdString()))
                inputs.push_back(std::move(metadata));
        }
        checkOutputs(outputs, inputs, force);
        psfStackRange(parser); // its flags' syntax, before any fitting
    } catch (const UsageError& e) {
        return usageFailure(program, QString::fromStdString(e.what()));
    } catch (const std::exception& e) {
        return runFailure(program, describe(e));
    }
    try {
        const bool fromPreset = has(parser, "preset");
        const bool fromFiles = has(parser, "input") || !parser.positionalArguments().isEmpty();
        const bool fromSession = has(parser, "session");
        if (int(fromPreset) + int(fromFiles) + int(fromSession) != 1)
            throw UsageError("give exactly one input: --preset demo|oof|pupil, --input FILE or --session FILE.json");
        if (fromPreset) {
            preparePresetRun(parser, request, truth, context, notes);
        } else {
            session = prepareFileRun(parser, outputs, request, context, notes);
        }
    } catch (const UsageError& e) {
        return usageFailure(program, QString::fromStdString(e.what()));
    } catch (const SettingsError& e) {
        // A flag's value is a usage error (exit 2); a session's own setting is the session's content (exit 1).
        if (has(parser, e.setting().c_str()) || !has(parser, "session"))
            return usageFailure(program, QStringLiteral("--") + QString::fromStdString(e.what()));
        return runFailure(program, value(parser, "session") + QStringLiteral(": ") + QString::fromStdString(e.what()));
    } catch (const std::exception& e) {
        return runFailure(program, describe(e));
    }

    PhaseUnit fitsUnit = PhaseUnit::Radians, pngUnit = PhaseUnit::Waves;
    try {
        if (has(parser, "phase-unit")) {
            const QString unit = parseWordList(value(parser, "phase-unit"), QStringLiteral("phase-unit"), {QStringLiteral("rad"), QStringLiteral("waves"), QStringLiteral("nm")}).front();
            fitsUnit = pngUnit = unit == QLatin1String("nm") ? PhaseUnit::Nanometres : unit == QLatin1String("waves") ? PhaseUnit::Waves : PhaseUnit::Radians;
        }
    } catch (const UsageError& e) {
        return usageFailure(program, QString::fromStdString(e.what()));
    }
    request.analysis.psfAnalysis = has(parser, "psf-analysis") || has(parser, "psf-out");
    ReconstructionEngine engine;
    runWithProgress(engine, request, has(parser, "quiet"));
    if (!engine.error().empty()) {
        return runFailure(program, QString::fromStdString(engine.error()));
    }
    const FitResult result = *engine.result();

    printReport(program, notes, result, truth ? &*truth : nullptr, outputs);
    try {
        const std::optional<PsfStack> stack = has(parser, "psf-stack-out") ? std::optional(psfStackFor(parser, request.spec, result, session))
                                                                            : std::nullopt;
        writeOutputs(parser, outputs, {result, context, session ? &*session : nullptr, fitsUnit, pngUnit, stack ? &*stack : nullptr});
    } catch (const std::exception& e) {
        return runFailure(program, describe(e));
    }
    if (result.solver.termination == Termination::Failed)
        return runFailure(program, QString::fromStdString("the fit failed: " + result.solver.message));
    return 0;
}

} // namespace wfs::cli
