#include "io/SettingsProblems.h"
#include "io/Assumptions.h"
#include "base/NumberText.h"

#include <algorithm>
#include <cmath>

namespace wfs {

using detail::format;

namespace {

} // namespace

std::string metadataValueText(const std::string& key, double v)
{
    if (key == "wavelength")
        return format("%.4g", v * 1e9) + " nm";
    if (key == "pixelPitch" || key == "zStep")
        return format("%.4g", v * 1e6) + " um";
    if (key == "aperture")
        return format("%.4g", v) + " m";
    if (key == "pixelAngle")
        return format("%.4g", v * 180.0 / M_PI * 3600.0) + " arcsec";
    return format("%.4g", v);
}

namespace {

std::string readable(const std::string& key)
{
    static const std::pair<const char*, const char*> names[] = {
        {"wavelength", "the wavelength"},
        {"pixelPitch", "the pixel pitch"},
        {"pixelAngle", "the pixel scale"},
        {"fNumber", "the f-number"},
        {"numericalAperture", "the NA"},
        {"immersionIndex", "the immersion index"},
        {"aperture", "the aperture"},
        {"samplingQ", "the sampling Q"},
        {"zStep", "the z step"},
        {"focusPlane", "the focus plane"},
        {"saturationLevel", "the saturation level"},
        {"readNoise", "the read noise"},
    };
    for (const auto& [field, text] : names)
        if (key == field)
            return text;
    return key;
}

template <typename Check>
void collect(std::vector<SettingProblem>& problems, Check check)
{
    try {
        check();
    } catch (const SettingsError& e) {
        problems.push_back({e.setting(), -1, {}, MessageLevel::Error, e.what()});
    }
}

void samplingProblems(const DatasetMetadata& m, std::vector<SettingProblem>& problems)
{
    if (!m.wavelength)
        problems.push_back({"wavelength",
                            -1,
                            {},
                            MessageLevel::Error,
                            "the wavelength is unknown: set it (e.g. 633 nm; a fluorescence PSF's emission, e.g. 605 nm)"});
    if (m.samplingQ)
        return;
    if (m.pixelAngle || m.aperture) {
        if (!m.pixelAngle)
            problems.push_back({"pixel-scale",
                                -1,
                                {"sampling"},
                                MessageLevel::Error,
                                "the aperture needs an angular pixel scale (e.g. 0.1 arcsec), or give the sampling Q"});
        if (!m.aperture)
            problems.push_back({"aperture",
                                -1,
                                {"sampling"},
                                MessageLevel::Error,
                                "an angular pixel scale needs the aperture diameter (e.g. 2.4 m), or give the sampling Q"});
        return;
    }
    if (!m.pixelPitch)
        problems.push_back({"pixel-scale",
                            -1,
                            {"sampling"},
                            MessageLevel::Error,
                            "the pixel pitch is unknown: set it (in the sample plane with the NA, e.g. 0.1 um; on the camera with the "
                            "f-number, e.g. 6.5 um), or give the sampling Q"});
    if (!m.numericalAperture && !m.fNumber)
        problems.push_back({"na",
                            -1,
                            {"f-number", "sampling"},
                            MessageLevel::Error,
                            "neither the numerical aperture nor the f-number is known: set one (NA e.g. 1.1 for a water objective, 1.4 "
                            "for oil; f-number e.g. 20 for a telescope), or give the sampling Q"});
}

// The defocus of the planes that take part, as buildProblem needs it.
void defocusProblems(const Dataset& dataset, const std::vector<int>& used, std::vector<SettingProblem>& problems)
{
    const DatasetMetadata& m = dataset.metadata;
    std::vector<int> unknown;
    bool anyOwn = false, anyLength = false;
    for (int index : used) {
        const DatasetPlane& plane = dataset.planes[size_t(index)];
        anyOwn = anyOwn || plane.defocus.kind != PlaneDefocus::Kind::Unknown;
        const PlaneDefocus d = planeDefocus(dataset, index);
        if (d.kind == PlaneDefocus::Kind::Unknown) {
            unknown.push_back(index);
            continue;
        }
        anyLength = anyLength || d.kind == PlaneDefocus::Kind::Length;
        const std::string error =
            plausibilityError(d.kind == PlaneDefocus::Kind::Waves ? Setting::DefocusWaves : Setting::DefocusLength, d.value);
        if (!error.empty()) {
            const bool fromStep = plane.defocus.kind == PlaneDefocus::Kind::Unknown;
            problems.push_back({fromStep ? "z-step" : "defocus",
                                index,
                                {},
                                MessageLevel::Error,
                                plane.raw.source + " (plane " + std::to_string(index) + "): " + error});
        }
    }
    if (used.size() > 1 && !unknown.empty()) {
        if (!anyOwn && !m.zStep)
            problems.push_back({"z-step",
                                -1,
                                {"defocus"},
                                MessageLevel::Error,
                                "the defocus of the " + std::to_string(used.size())
                                    + " planes that take part is unknown: set the stack's z step (e.g. 0.3 um) or each plane's defocus "
                                      "(e.g. -1w, 0, 1w)"});
        else
            for (int index : unknown)
                problems.push_back({"defocus",
                                    index,
                                    {"z-step"},
                                    MessageLevel::Error,
                                    dataset.planes[size_t(index)].raw.source + " (plane " + std::to_string(index)
                                        + "): its defocus is unknown; set it (e.g. -1w, 0.3um) or give the stack's z step"});
    }
    if (!anyLength)
        return;
    if (!m.numericalAperture && !m.fNumber && m.samplingQ)
        problems.push_back(
            {"na",
             -1,
             {"f-number"},
             MessageLevel::Error,
             "the defocus is given as a length: converting it to phase needs the numerical aperture (e.g. 1.1) or the f-number"});
    const double na = m.numericalAperture.value_or(m.fNumber ? 1.0 / (2.0 * *m.fNumber) : 0.0);
    // Unset, the high-NA model is assumed above kHighNaThreshold (io/Assumptions.h); a paraxial model chosen there is questioned.
    if (m.defocusModel == DefocusModel::Paraxial && m.origin.count("defocusModel") && na / m.immersionIndex > kHighNaThreshold)
        problems.push_back({"defocus-model",
                            -1,
                            {},
                            MessageLevel::Warning,
                            "the paraxial defocus model is inaccurate at NA " + format("%.3g", na)
                                + " (NA/n = " + format("%.2f", na / m.immersionIndex) + "): choose the high-NA model"});
}

// Sizes after the preparation's crop, as buildProblem and its grid see them.
void sizeProblems(const Dataset& dataset, const ModelSettings& model, const std::vector<int>& used, std::vector<SettingProblem>& problems)
{
    const int crop = dataset.preprocess.cropSize > 0 ? dataset.preprocess.cropSize + dataset.preprocess.cropSize % 2 : 0;
    int largest = 0;
    for (const DatasetPlane& plane : dataset.planes)
        largest = std::max({largest, plane.raw.width + plane.raw.width % 2, plane.raw.height + plane.raw.height % 2});
    const bool cropping = crop > 0 && crop <= largest;
    if (crop > largest)
        problems.push_back(
            {"crop",
             -1,
             {},
             MessageLevel::Error,
             "the crop (" + std::to_string(crop) + ") is larger than the images (at most " + std::to_string(largest) + " pixels across)"});
    auto sizeOf = [&](int index) {
        const Image& raw = dataset.planes[size_t(index)].raw;
        return cropping ? std::pair(crop, crop) : std::pair(raw.width, raw.height);
    };
    const auto first = sizeOf(used.front());
    for (int index : used)
        if (sizeOf(index) != first) {
            const Image& raw = dataset.planes[size_t(index)].raw;
            problems.push_back({"planes",
                                index,
                                {"crop"},
                                MessageLevel::Error,
                                "planes of different sizes take part: " + raw.source + " is " + std::to_string(raw.width) + " x "
                                    + std::to_string(raw.height) + ", " + dataset.planes[size_t(used.front())].raw.source + " is "
                                    + std::to_string(first.first) + " x " + std::to_string(first.second)
                                    + "; crop them to one size or select planes of one size"});
            break;
        }
    if (model.grid > 0 && model.grid < std::max(first.first, first.second))
        problems.push_back({"grid",
                            -1,
                            {"crop"},
                            MessageLevel::Error,
                            "the model grid (" + std::to_string(model.grid) + ") is smaller than the prepared planes ("
                                + std::to_string(first.first) + " x " + std::to_string(first.second)
                                + "); crop them or use a larger grid"});
}

} // namespace

std::vector<SettingProblem> metadataProblems(const DatasetMetadata& m)
{
    std::vector<SettingProblem> problems;
    for (MetadataIssue& issue : m.issues())
        problems.push_back({std::move(issue.setting), -1, std::move(issue.alternatives), MessageLevel::Error, std::move(issue.message)});
    return problems;
}

std::vector<SettingProblem> settingsProblems(const Session& session)
{
    std::vector<SettingProblem> problems;
    const Dataset& dataset = session.dataset;
    const DatasetMetadata& m = dataset.metadata;
    const ModelSettings& model = session.model;

    collect(problems, [&] { fittedOrders(model, session.solver); });
    collect(problems, [&] { checkPupilFunctionSettings(model); });
    collect(problems, [&] { checkSolverSettings(session.solver); });
    if (const auto error = model.readNoiseError())
        problems.push_back({error->setting(), -1, {}, MessageLevel::Error, error->problem()});

    for (const DatasetMetadata::Conflict& c : m.conflicts)
        problems.push_back({metadataSettingName(c.key),
                            -1,
                            {},
                            MessageLevel::Error,
                            readable(c.key) + " is " + metadataValueText(c.key, c.kept) + " in " + c.keptOrigin + " but "
                                + metadataValueText(c.key, c.other) + " in " + c.otherOrigin + ": choose one"});
    const size_t beforeMetadata = problems.size();
    samplingProblems(m, problems);
    for (SettingProblem& p : metadataProblems(m))
        problems.push_back(std::move(p));
    if (problems.size() == beforeMetadata) {
        // Nothing missing or implausible: the sampling itself (e.g. an NA equal to the immersion index) and its warnings.
        std::vector<DatasetMessage> warnings;
        try {
            samplingFromMetadata(m, &warnings);
        } catch (const DatasetError& e) {
            problems.push_back({"sampling", -1, {}, MessageLevel::Error, e.what()});
        }
        for (const DatasetMessage& w : warnings)
            problems.push_back({"sampling", -1, {}, MessageLevel::Warning, w.text});
    }

    const std::vector<int> used = usedPlanes(dataset);
    if (dataset.planes.empty()) {
        problems.push_back({"planes", -1, {}, MessageLevel::Error, "no data: load PSF images first"});
    } else if (used.empty()) {
        problems.push_back({"planes", -1, {}, MessageLevel::Error, "no plane takes part: select at least one plane with signal"});
    } else {
        defocusProblems(dataset, used, problems);
        sizeProblems(dataset, model, used, problems);
    }
    if (model.objectDiameter > 0.0 && (!m.pixelPitch || !m.numericalAperture))
        problems.push_back({"object-diameter",
                            -1,
                            {"pixel-scale", "na"},
                            MessageLevel::Error,
                            "the object diameter needs the sample-plane pixel size: give the pixel pitch with the numerical aperture"});
    // The workflow's applyImagingModel refuses the same (its message); here it points at the field.
    if (model.imagingModel == ImagingModel::Vectorial && !m.numericalAperture)
        problems.push_back(
            {"na",
             -1,
             {"model"},
             MessageLevel::Error,
             "the vectorial model describes a microscope objective: it needs the numerical aperture (e.g. 1.4) and the immersion "
             "index (e.g. 1.515); for a telescope or an f-number system choose the scalar model"});
    if (dataset.preprocess.normalise && model.objective == ObjectiveKind::Poisson)
        problems.push_back({"objective",
                            -1,
                            {"normalise"},
                            MessageLevel::Error,
                            "the Poisson objective needs counts: turn normalisation off or choose least squares"});
    std::stable_partition(problems.begin(), problems.end(), [](const SettingProblem& p) { return p.level == MessageLevel::Error; });
    return problems;
}

bool hasErrors(const std::vector<SettingProblem>& problems)
{
    return std::any_of(problems.begin(), problems.end(), [](const SettingProblem& p) { return p.level == MessageLevel::Error; });
}

} // namespace wfs
