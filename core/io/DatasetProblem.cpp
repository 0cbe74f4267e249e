// The problem from a prepared dataset (io/Dataset.h, "The model"): sampling from the metadata, one problem
// plane per plane that takes part (data as the objective wants it, mask, flux, background, diversity), the
// noise model (read noise, camera gain), the pupil function and the detector, and the start values.
#include "io/DatasetProblem.h"
#include "base/NumberText.h"
#include "io/SettingsProblems.h"

#include "fit/ImageStatistics.h"
#include "optics/Problem.h"
#include "optics/Sampling.h"

#include <QFileInfo>

#include <algorithm>
#include <cmath>

namespace wfs {

namespace {
using detail::format;
} // namespace

// ---- The problem --------------------------------------------------------------------------------

double samplingFromMetadata(const DatasetMetadata& m, std::vector<DatasetMessage>* messages)
{
    if (!m.samplingQ && !m.wavelength)
        throw DatasetError("the wavelength is unknown: set it (e.g. 633 nm)");
    SamplingInput in;
    in.wavelength = m.wavelength.value_or(0.0);
    in.samplingQ = m.samplingQ;
    in.pixelPitch = m.pixelPitch;
    in.fNumber = m.fNumber;
    in.numericalAperture = m.numericalAperture;
    in.immersionIndex = m.immersionIndex;
    in.pixelAngle = m.pixelAngle;
    in.aperture = m.aperture;
    // A pitch with both an f-number and an NA: the NA describes a microscope's sample-plane pitch.
    if (in.pixelPitch && in.fNumber && in.numericalAperture)
        in.fNumber.reset();
    if (in.pixelAngle && !in.aperture && in.pixelPitch)
        in.pixelAngle.reset();
    Sampling s;
    try {
        s = computeSampling(in);
    } catch (const std::invalid_argument& e) {
        throw DatasetError(e.what()
                           + ignoredNote(m, {"samplingQ", "pixelPitch", "fNumber", "numericalAperture", "aperture", "pixelAngle"}));
    }
    if (messages)
        for (const std::string& w : s.warnings)
            messages->push_back({MessageLevel::Warning, {}, w});
    return s.q;
}

void validateMetadata(const DatasetMetadata& m)
{
    // The same checks that list every problem (io/SettingsProblems.h); a fit stops at the first.
    const std::vector<SettingProblem> problems = metadataProblems(m);
    if (!problems.empty())
        throw DatasetError(problems.front().message);
}

namespace {
// Names the cause when no plane takes part: planes with nothing to fit (unusablePlaneReason) say so, rather than
// suggesting the user deselected them.
std::string whyNoPlaneTakesPart(const Dataset& dataset)
{
    int empty = 0;
    std::string example;
    for (const DatasetPlane& plane : dataset.planes) {
        if (const std::string reason = unusablePlaneReason(plane.raw.pixels); !reason.empty()) {
            if (example.empty())
                example = plane.raw.source + ": " + reason;
            ++empty;
        }
    }
    if (empty == int(dataset.planes.size()))
        return "no plane holds usable data (" + example + "); there is no signal to fit";
    if (empty > 0)
        return std::to_string(empty) + " of " + std::to_string(dataset.planes.size()) + " planes hold no usable data (" + example
               + ") and the others are not selected or differ in size; select at least one plane with signal";
    return "select at least one plane";
}
} // namespace

namespace {

// The objective the user chose, or the one the data unit calls for (ModelSettings::objective).
ObjectiveKind chooseObjective(const Dataset& dataset, const ModelSettings& model)
{
    const std::string& unit = dataset.metadata.dataUnit;
    ObjectiveKind objective;
    if (model.objective)
        objective = *model.objective;
    else if (unit == "relative" || dataset.preprocess.normalise)
        objective = ObjectiveKind::LeastSquares;
    else if (unit == "photons" || unit == "electrons" || unit == "photon" || unit == "e-")
        objective = ObjectiveKind::Poisson;
    else
        objective = ObjectiveKind::WeightedLeastSquares;
    if (objective == ObjectiveKind::Poisson && dataset.preprocess.normalise)
        throw DatasetError("the Poisson objective needs counts: turn normalisation off or choose least squares");
    return objective;
}

} // namespace

void checkPlaneDefocus(const Dataset& dataset, const ModelSettings& model, int index, bool onlyPlane)
{
    const DatasetMetadata& m = dataset.metadata;
    const std::string& source = dataset.planes.at(size_t(index)).raw.source;
    const PlaneDefocus d = planeDefocus(dataset, index);
    if (d.kind == PlaneDefocus::Kind::Unknown) {
        if (!onlyPlane)
            throw DatasetError(
                source + " (plane " + std::to_string(index)
                + "): its defocus is unknown; set it for every plane (e.g. -1w, 0, 1w) or give the stack's z step and focus plane"
                + ignoredNote(m, {"defocus[" + std::to_string(index) + "]", "zStep"}));
        return;
    }
    const std::string error =
        plausibilityError(d.kind == PlaneDefocus::Kind::Waves ? Setting::DefocusWaves : Setting::DefocusLength, d.value);
    if (!error.empty())
        throw DatasetError(source + " (plane " + std::to_string(index) + "): " + error);
    const bool toPhase = d.kind == PlaneDefocus::Kind::Length && (d.value != 0.0 || model.fitDefocusOffsets);
    if (toPhase && !(m.numericalAperture.value_or(0.0) > 0.0) && !(m.fNumber.value_or(0.0) > 0.0))
        throw DatasetError(source + ": the defocus is given as a length (" + format("%.4g", d.value * 1e6)
                           + " um); converting it to phase needs the numerical aperture or the f-number");
}

double checkedSamplingQ(const DatasetMetadata& m, const ModelSettings& model, std::vector<DatasetMessage>* messages)
{
    if (!m.wavelength)
        throw DatasetError("the wavelength is unknown: set it (e.g. 633 nm)" + ignoredNote(m, {"wavelength"}));
    validateMetadata(m);
    if (const auto error = model.readNoiseError())
        throw DatasetError(error->problem());
    return samplingFromMetadata(m, messages);
}

namespace {

// One problem plane from a prepared plane: its data as the objective sees it, mask, flux, background
// and diversity. Sets anyDefocus when the plane is defocused.
PlaneSpec planeSpecFor(const Dataset& dataset, const ModelSettings& model, const PlanePreparation& p, int index, ObjectiveKind objective,
                       bool onlyPlane, bool& anyDefocus, std::vector<DatasetMessage>& messages)
{
    const DatasetMetadata& m = dataset.metadata;
    size_t used = 0;
    for (uint8_t keep : p.mask)
        used += keep;
    if (used == 0)
        throw DatasetError(p.image.source + ": every pixel is masked or NaN; it cannot take part");
    PlaneSpec ps;
    ps.data = p.image;
    ps.mask = p.mask;
    if (objective == ObjectiveKind::Poisson) {
        // Counts as measured: add the subtracted background back; it is the start value.
        // Counts as measured less the camera's bias (ModelSettings::offset), so that they count photons.
        for (size_t i = 0; i < ps.data.pixels.size(); ++i)
            if (p.mask[i])
                ps.data.pixels[i] = ps.data.pixels[i] / p.scale + p.background - model.offset;
        ps.background = std::max(p.background - model.offset, 0.0);
    } else {
        ps.background = 0.0;
    }
    bool allZero = true;
    for (size_t i = 0; i < ps.data.pixels.size() && allZero; ++i)
        allZero = !(p.mask[i] && ps.data.pixels[i] != 0.0);
    if (allZero)
        throw DatasetError(p.image.source + ": the plane is all zero after preparation (no signal to fit)");
    ps.flux = p.signal > 0.0 ? p.signal : 1.0;
    ps.fitFlux = model.fitFlux;
    ps.fitBackground = model.fitBackground;
    ps.fitShift = model.fitShift;
    checkPlaneDefocus(dataset, model, index, onlyPlane);
    const PlaneDefocus d = planeDefocus(dataset, index);
    if (d.kind == PlaneDefocus::Kind::Unknown) {
        messages.push_back({MessageLevel::Info, {}, p.image.source + ": defocus unknown; taken as in focus"});
    } else if (d.kind == PlaneDefocus::Kind::Waves) {
        // A plane at focus keeps its kind when offsets are fitted, so that it can move like the others.
        if (d.value != 0.0 || model.fitDefocusOffsets) {
            ps.diversity.kind = DiversityKind::ZernikeDefocus;
            ps.diversity.defocusWaves = d.value;
            ps.diversity.measure = DefocusMeasure::PeakToValley;
            anyDefocus = anyDefocus || d.value != 0.0;
        }
    } else if (d.value != 0.0 || model.fitDefocusOffsets) {
        const double na = m.numericalAperture.value_or(m.fNumber ? 1.0 / (2.0 * *m.fNumber) : 0.0);
        ps.diversity.kind = m.defocusModel == DefocusModel::HighNa ? DiversityKind::AxialHighNa : DiversityKind::AxialParaxial;
        ps.diversity.axialDistance = d.value;
        ps.diversity.numericalAperture = na;
        ps.diversity.immersionIndex = m.immersionIndex;
        anyDefocus = anyDefocus || d.value != 0.0;
    }
    return ps;
}

// The camera's bias in data units: the user's; else the file's (FITS BIAS, DatasetMetadata::cameraOffset), said in a
// note; or (ModelSettings::estimateOffset) from each plane's border by photon transfer, var = (mean - offset) / gain +
// read^2, so offset = mean - gain (var - read^2), the median over the planes. Mean and variance alone cannot tell the
// bias from read noise, so the read noise must be known. Only the Poisson objective uses the offset: the others
// subtract the background and measure its noise. An offset of 0 is "not given": a file's bias then stands.
double offsetFor(const Dataset& dataset, const ModelSettings& model, const Preparation& prep, const std::vector<int>& planes,
                 ObjectiveKind objective, double gain, std::vector<DatasetMessage>& messages)
{
    const std::optional<double>& stated = dataset.metadata.cameraOffset;
    if (!model.estimateOffset && model.offset == 0.0 && stated && *stated != 0.0 && objective == ObjectiveKind::Poisson) {
        const auto origin = dataset.metadata.origin.find("cameraOffset");
        messages.push_back({MessageLevel::Info,
                            {},
                            "camera offset " + format("%.6g", *stated) + " data units removed, as "
                                + (origin != dataset.metadata.origin.end() ? origin->second : std::string("the metadata"))
                                + " states (--offset gives another)"});
        return *stated;
    }
    if (!model.estimateOffset)
        return model.offset;
    if (objective != ObjectiveKind::Poisson) {
        messages.push_back({MessageLevel::Info,
                            {},
                            "the camera offset is not estimated: only the Poisson objective uses it (the "
                                + std::string(objectiveName(objective)) + " objective subtracts the background and measures its noise)"});
        return model.offset;
    }
    const double read = model.readNoise > 0.0 ? model.readNoise : dataset.metadata.readNoise.value_or(-1.0);
    if (!(read >= 0.0))
        throw DatasetError("--offset auto needs the read noise (give it, e.g. --read-noise 1.6, or an RDNOISE keyword in the data): "
                           "the border's mean and variance alone cannot tell the camera's bias from its read noise");
    std::vector<double> estimates, means, variances;
    for (int index : planes) {
        const PlanePreparation& p = prep.planes[size_t(index)];
        const double variance = p.readNoiseSquared + p.background; // the border's neighbour-difference variance
        estimates.push_back(p.background - gain * (variance - read * read));
        means.push_back(p.background);
        variances.push_back(variance);
    }
    const double offset = median(estimates);
    const std::string error = plausibilityError(Setting::CameraOffset, offset);
    if (!error.empty() || offset > median(means))
        throw DatasetError("photon transfer on the border gives an implausible camera offset (" + format("%.4g", offset)
                           + " data units for a border mean of " + format("%.4g", median(means))
                           + "): check the gain and read noise, or give the offset");
    messages.push_back({MessageLevel::Info,
                        {},
                        "camera offset " + format("%.4g", offset) + " data units from the border (mean " + format("%.4g", median(means))
                            + ", noise variance " + format("%.4g", median(variances)) + ", gain " + format("%.3g", gain)
                            + " e-/unit, read noise " + format("%.3g", read) + ")"});
    return offset;
}

// The read noise (counts RMS) behind the weighted objective's weights and every objective's
// chi-square: the user's, else
// - weighted least squares on background-subtracted data: the border noise (background shot noise and
//   read noise together are the noise floor there);
// - Poisson on counts: the data's RDNOISE keyword, else the border's excess of variance over its photon noise
//   (mean - offset) / gain (PlanePreparation::readNoiseSquared is the excess over the mean), so that chi-square is 1
//   on clean data. `counted`: the model settings with the offset in use (offsetFor).
double readNoiseFor(const Dataset& dataset, const ModelSettings& counted, double gain, const Preparation& prep,
                    const std::vector<int>& planes, ObjectiveKind objective, std::vector<DatasetMessage>& messages)
{
    if (counted.readNoise > 0.0)
        return counted.readNoise;
    if (objective == ObjectiveKind::WeightedLeastSquares) {
        std::vector<double> sigmas;
        for (int index : planes)
            sigmas.push_back(prep.planes[size_t(index)].backgroundSigma * prep.planes[size_t(index)].scale);
        const double noise = std::max(median(sigmas), 1e-12);
        messages.push_back({MessageLevel::Info,
                            {},
                            "weighted least squares with the border noise " + format("%.4g", noise) + " (data units) as read noise"});
        return noise;
    }
    if (objective != ObjectiveKind::Poisson)
        return 0.0;
    if (const auto header = dataset.metadata.readNoise)
        return *header;
    std::vector<double> excess;
    for (int index : planes) {
        const PlanePreparation& p = prep.planes[size_t(index)];
        excess.push_back(p.readNoiseSquared + p.background - (p.background - counted.offset) / gain);
    }
    if (excess.empty())
        return 0.0;
    const double noise = std::sqrt(std::max(median(excess), 0.0));
    messages.push_back({MessageLevel::Info,
                        {},
                        "read noise " + format("%.3g", noise)
                            + " counts RMS from the border (neighbour differences less the photon noise); "
                              "give the read noise to override"});
    return noise;
}

// Electrons per data unit: the user's, or (ModelSettings::gain 0) the photon-transfer estimate from the
// planes that take part (fit/ImageStatistics.h).
double gainFor(const ModelSettings& model, const Preparation& prep, const std::vector<int>& planes, double samplingQ,
               std::vector<DatasetMessage>& messages)
{
    if (model.gain > 0.0)
        return model.gain;
    std::vector<Image> images;
    std::vector<double> floors;
    for (int index : planes) {
        const PlanePreparation& p = prep.planes[size_t(index)];
        images.push_back(p.image);
        floors.push_back(std::pow(p.backgroundSigma * p.scale, 2));
    }
    const PhotonTransfer transfer = estimatePhotonTransfer(images, floors, samplingQ);
    if (!transfer.problem.empty())
        throw DatasetError("the camera gain cannot be estimated from the data: " + transfer.problem + "; give it (e.g. --gain 0.5)");
    const std::string error = plausibilityError(Setting::Gain, transfer.gain);
    if (!error.empty())
        throw DatasetError("photon transfer gives an implausible gain: " + error + "; give the gain");
    messages.push_back({MessageLevel::Info,
                        {},
                        "camera gain " + format("%.3g", transfer.gain) + " electrons per data unit from photon transfer ("
                            + std::to_string(images.size()) + " planes, power above the OTF cut-off)"});
    return transfer.gain;
}

// The object's diameter in pixels: it needs the sample-plane pixel size (a microscope's: pitch with NA).
double objectDiameterPixels(const DatasetMetadata& m, const ModelSettings& model)
{
    if (model.objectDiameter <= 0.0)
        return 0.0;
    if (!m.pixelPitch || !m.numericalAperture)
        throw DatasetError("the object diameter (" + format("%.4g", model.objectDiameter * 1e9)
                           + " nm) needs the sample-plane pixel size: give the pixel scale with the numerical aperture");
    return model.objectDiameter / *m.pixelPitch;
}

// The model's pupil-function, detector and nuisance settings, copied onto the spec (Problem checks them).
void applyPupilFunction(const DatasetMetadata& m, const ModelSettings& model, ProblemSpec& spec)
{
    spec.phaseModel = model.phaseModel;
    spec.amplitudeModel = model.amplitudeModel;
    if (model.amplitudeModel == PupilAmplitudeModel::Gaussian)
        spec.pupil.illumination.fitCentre = spec.pupil.illumination.fitSigma = true;
    spec.regularization = model.regularization > 0.0 ? model.regularization : 1.0; // auto: the engine's sweep sets it
    spec.detector.pixelIntegration = model.pixelIntegration;
    spec.detector.objectDiameterPixels = objectDiameterPixels(m, model);
    spec.spectrum.bandwidth = model.bandwidth;
    spec.spectrum.samples = model.spectralSamples;
    spec.nuisance.fitDefocusScale = model.fitDefocusScale;
    spec.nuisance.fitDefocusOffsets = model.fitDefocusOffsets;
}

// The imaging model onto the spec: the vectorial model's objective (NA and immersion from the metadata), sample,
// coverslip, depth and dipole. A vectorial model needs the NA: an f-number or a telescope's aperture has no
// immersion medium or sample for it to describe.
void applyImagingModel(const DatasetMetadata& m, const ModelSettings& model, ProblemSpec& spec, std::vector<DatasetMessage>& messages)
{
    spec.model = model.imagingModel;
    if (model.imagingModel == ImagingModel::Scalar) {
        if (model.fitEmitterDepth)
            throw DatasetError("the emitter's depth is a parameter of the vectorial model: add --model vectorial");
        return;
    }
    if (!(m.numericalAperture.value_or(0.0) > 0.0))
        throw DatasetError("the vectorial model describes a microscope objective: it needs the numerical aperture (e.g. --na 1.4) and the "
                           "immersion index (e.g. --immersion 1.515); for a telescope or an f-number system use the scalar model");
    VectorialSpec& v = spec.vectorial;
    v.numericalAperture = *m.numericalAperture;
    v.immersionIndex = m.immersionIndex;
    v.sampleIndex = model.sampleIndex > 0.0 ? model.sampleIndex : m.immersionIndex;
    v.coverslipIndex = model.coverslipIndex;
    v.coverslipThickness = model.coverslipThickness;
    v.designCoverslipIndex = model.designCoverslipIndex;
    v.designCoverslipThickness = model.designCoverslipThickness;
    v.emitterDepth = model.emitterDepth;
    v.fitEmitterDepth = model.fitEmitterDepth;
    v.dipole = model.dipole;
    // A model setting that contradicts the objective is the setting's error (each front end names it its way), not the data's.
    if (model.designCoverslipIndex != 0.0 && !(model.designCoverslipIndex > v.numericalAperture))
        throw SettingsError("design-coverslip-index",
                            "must be above the numerical aperture " + format("%g", v.numericalAperture)
                                + " (the objective is designed to carry all its rays through that coverslip), got "
                                + format("%g", model.designCoverslipIndex));
    if (const std::string error = vectorialSpecError(v); !error.empty())
        throw DatasetError("vectorial model: " + error);
    // (NA / n)^2 / 4 is the pupil's polarisation taper (tests/core/optics/tst_vectorial.cpp: 1.3e-4 of the peak at NA 0.1 in oil).
    const double taper = 0.25 * std::pow(v.numericalAperture / v.immersionIndex, 2);
    if (v.numericalAperture < 0.5 && v.sampleIndex == v.immersionIndex)
        messages.push_back({MessageLevel::Info,
                            {},
                            "at NA " + format("%.3g", v.numericalAperture) + " the vectorial model differs from the scalar one by about "
                                + format("%.1g", taper)
                                + " of the pupil's amplitude: the scalar model (--model scalar) gives the "
                                  "same answer several times faster"});
}

// The model grid: the user's, or the prepared planes' size rounded up to even.
int gridFor(const ModelSettings& model, const Image& first)
{
    int grid = model.grid;
    if (grid == 0) {
        grid = std::max(first.width, first.height);
        grid += grid % 2;
        grid = std::max(grid, 16);
    }
    if (grid < std::max(first.width, first.height))
        throw DatasetError("the model grid (" + std::to_string(grid) + ") is smaller than the prepared planes ("
                           + std::to_string(first.width) + " x " + std::to_string(first.height) + "); crop them or use a larger grid");
    return grid;
}

} // namespace

ProblemSpec psfGeneratorSpec(const DatasetMetadata& m, const ModelSettings& model, int size, std::vector<DatasetMessage>* messages)
{
    if (!m.numericalAperture || !m.pixelPitch)
        throw DatasetError(
            "a PSF of a microscope needs the numerical aperture (e.g. --na 1.4) and the sample-plane pixel size (e.g. --pixel-scale 65nm)");
    if (size < 15 || size > 4096)
        throw DatasetError("the PSF's size must be from 15 to 4096 pixels, odd or even, got " + std::to_string(size));
    std::vector<DatasetMessage> notes;
    ProblemSpec spec;
    spec.name = "psf";
    spec.wavelength = m.wavelength.value_or(0.0);
    // The model's transforms are even; an odd image (61, 65: what many deconvolution tools expect) is the crop of the
    // next even grid with the axis on its middle pixel (fit/PsfStack.h).
    spec.grid = PupilGrid::centred(size + size % 2, checkedSamplingQ(m, model, &notes));
    spec.basis.maxOrder = model.order;
    spec.basis.ordering = model.ordering;
    spec.basis.normalization = model.normalization;
    PlaneSpec plane;
    plane.diversity.kind = DiversityKind::AxialHighNa;
    plane.diversity.numericalAperture = *m.numericalAperture;
    plane.diversity.immersionIndex = m.immersionIndex;
    spec.planes.push_back(plane);
    applyImagingModel(m, model, spec, notes);
    try {
        const Problem check(spec);
    } catch (const std::invalid_argument& e) {
        throw DatasetError(e.what());
    }
    if (messages)
        messages->insert(messages->end(), notes.begin(), notes.end());
    return spec;
}

BuiltProblem buildProblem(const Dataset& dataset, const ModelSettings& model)
{
    BuiltProblem built;
    const DatasetMetadata& m = dataset.metadata;
    built.planes = usedPlanes(dataset);
    if (built.planes.empty())
        throw DatasetError(dataset.planes.empty() ? "no data: load PSF images first"
                                                  : "no plane takes part: " + whyNoPlaneTakesPart(dataset));
    built.samplingQ = checkedSamplingQ(m, model, &built.messages);

    const Preparation fresh = isPrepared(dataset) ? Preparation{} : computePreparation(dataset);
    const Preparation& prep = isPrepared(dataset) ? *dataset.preparation : fresh;
    for (const DatasetMessage& msg : prep.messages)
        built.messages.push_back(msg);

    const ObjectiveKind objective = chooseObjective(dataset, model);
    ProblemSpec& spec = built.spec;
    spec.name = dataset.files.empty() ? std::string("data")
                                      : QFileInfo(QString::fromStdString(dataset.files.front().path)).fileName().toStdString();
    spec.wavelength = *m.wavelength;
    spec.objective = objective;
    spec.basis.maxOrder = model.order;
    spec.basis.ordering = model.ordering;
    spec.basis.normalization = model.normalization;
    spec.basis.fixedTerms = model.fixedTerms;
    spec.pupil.obscuration = model.obscuration;
    spec.pupil.spiderCount = model.spiderCount;
    spec.pupil.spiderWidth = model.spiderWidth;
    spec.pupil.spiderAngleDeg = model.spiderAngleDeg;

    const Image& first = prep.planes[size_t(built.planes.front())].image;
    spec.gain = gainFor(model, prep, built.planes, built.samplingQ, built.messages);
    ModelSettings counted = model; // with the camera offset that the planes' counts lose
    counted.offset = offsetFor(dataset, model, prep, built.planes, objective, spec.gain, built.messages);
    bool anyDefocus = false;
    for (int index : built.planes) {
        const PlanePreparation& p = prep.planes[size_t(index)];
        if (p.image.width != first.width || p.image.height != first.height)
            throw DatasetError("planes of different sizes take part: " + p.image.source + " is " + std::to_string(p.image.width) + " x "
                               + std::to_string(p.image.height) + ", " + first.source + " is " + std::to_string(first.width) + " x "
                               + std::to_string(first.height) + "; crop them to one size or select planes of one size");
        spec.planes.push_back(planeSpecFor(dataset, counted, p, index, objective, built.planes.size() == 1, anyDefocus, built.messages));
    }
    if (!anyDefocus)
        built.messages.push_back({MessageLevel::Warning, {}, kNoDefocusWarning});
    spec.readNoise = readNoiseFor(dataset, counted, spec.gain, prep, built.planes, objective, built.messages);
    spec.grid = PupilGrid::centred(gridFor(model, first), built.samplingQ);
    applyPupilFunction(m, model, spec);
    applyImagingModel(m, model, spec, built.messages);
    if (spec.phaseModel != PupilPhaseModel::Zernike && !anyDefocus)
        built.messages.push_back({MessageLevel::Warning,
                                  {},
                                  "a zonal phase from one plane is ambiguous (the pupil and its conjugate twin give the same image): "
                                  "add defocused planes"});
    try {
        const Problem problem(spec);
        built.start = problem.initialParameters();
    } catch (const std::invalid_argument& e) {
        throw DatasetError(e.what());
    }
    // More parameters than measurements has no unique solution, yet BFGS would still report convergence.
    std::size_t pixels = 0;
    for (const PlaneSpec& ps : spec.planes) {
        if (ps.mask.empty())
            pixels += ps.data.pixels.size();
        for (uint8_t keep : ps.mask)
            pixels += keep;
    }
    if (pixels < built.start.size())
        throw DatasetError(std::to_string(built.start.size()) + " parameters cannot be fitted to " + std::to_string(pixels)
                           + " pixels: use larger images or crop (at least as many pixels as parameters) or a lower Zernike order");
    return built;
}

} // namespace wfs
