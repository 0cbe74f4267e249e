#include "io/Session.h"

#include "io/SettingsProblems.h"

#include "io/ImageReaders.h"
#include "io/SessionJson.h"

#include "io/OutputTransaction.h"
#include "settings/SettingsTable.h"
#include "settings/SettingsText.h"

#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>

#include <algorithm>
#include <cmath>
#include <map>

namespace wfs {

namespace {

const QString kFormat = QStringLiteral("wavefront-studio-session");

QJsonValue optionalNumber(const std::optional<double>& v)
{
    return v && std::isfinite(*v) ? QJsonValue(*v) : QJsonValue(QJsonValue::Null);
}

// A settings enum's text (settings/SettingsText.h) as a JSON string.
template <typename E>
QJsonValue settingJson(E value)
{
    return QString::fromLatin1(settingText(value));
}

QJsonObject defocusJson(const PlaneDefocus& d)
{
    if (d.kind == PlaneDefocus::Kind::Unknown)
        return {{QStringLiteral("kind"), settingJson(d.kind)}};
    return {{QStringLiteral("kind"), settingJson(d.kind)}, {QStringLiteral("value"), d.value}};
}

// The pupil-function, detector and camera settings (issue 13), inside "model".
void insertPupilFunctionJson(const ModelSettings& md, QJsonObject& model)
{
    model.insert(QStringLiteral("pupil_phase"), settingJson(md.phaseModel));
    model.insert(QStringLiteral("pupil_amplitude"), settingJson(md.amplitudeModel));
    model.insert(QStringLiteral("regularization"), md.regularization);
    model.insert(QStringLiteral("pixel_integration"), md.pixelIntegration);
    model.insert(QStringLiteral("object_diameter_m"), md.objectDiameter);
    model.insert(QStringLiteral("gain"), md.gain); // electrons per data unit; 0 = photon transfer
    model.insert(QStringLiteral("offset"), md.offset);
    model.insert(QStringLiteral("bandwidth_m"), md.bandwidth);
    model.insert(QStringLiteral("spectral_samples"), md.spectralSamples);
    model.insert(QStringLiteral("fit_defocus_scale"), md.fitDefocusScale);
    model.insert(QStringLiteral("fit_defocus_offsets"), md.fitDefocusOffsets);
    model.insert(QStringLiteral("fit_sampling"), md.fitSampling);
    model.insert(QStringLiteral("estimate_offset"), md.estimateOffset);
    model.insert(QStringLiteral("imaging_model"), QString::fromLatin1(imagingModelName(md.imagingModel)));
    model.insert(QStringLiteral("sample_index"), md.sampleIndex);
    model.insert(QStringLiteral("emitter_depth_m"), md.emitterDepth);
    model.insert(QStringLiteral("fit_emitter_depth"), md.fitEmitterDepth);
    model.insert(QStringLiteral("coverslip_index"), md.coverslipIndex);
    model.insert(QStringLiteral("coverslip_thickness_m"), md.coverslipThickness);
    model.insert(QStringLiteral("design_coverslip_index"), md.designCoverslipIndex);
    model.insert(QStringLiteral("design_coverslip_thickness_m"), md.designCoverslipThickness);
    model.insert(QStringLiteral("dipole_free"), md.dipole.free);
    model.insert(QStringLiteral("dipole_theta_rad"), md.dipole.theta);
    model.insert(QStringLiteral("dipole_phi_rad"), md.dipole.phi);
}

void readPupilFunctionSettings(const SessionReader& r, const QJsonObject& model, const QString& mo, ModelSettings& ms)
{
    ms.phaseModel = r.setting(model, QStringLiteral("pupil_phase"), mo, PupilPhaseModel::Zernike);
    ms.amplitudeModel = r.setting(model, QStringLiteral("pupil_amplitude"), mo, PupilAmplitudeModel::Uniform);
    ms.regularization = r.number(model, QStringLiteral("regularization"), mo, ms.regularization);
    ms.pixelIntegration = r.boolean(model, QStringLiteral("pixel_integration"), mo, ms.pixelIntegration);
    ms.objectDiameter = r.number(model, QStringLiteral("object_diameter_m"), mo, ms.objectDiameter);
    ms.gain = r.number(model, QStringLiteral("gain"), mo, ms.gain);
    ms.offset = r.number(model, QStringLiteral("offset"), mo, ms.offset);
    ms.bandwidth = r.number(model, QStringLiteral("bandwidth_m"), mo, ms.bandwidth);
    ms.spectralSamples = r.integer(model, QStringLiteral("spectral_samples"), mo, ms.spectralSamples);
    ms.fitDefocusScale = r.boolean(model, QStringLiteral("fit_defocus_scale"), mo, ms.fitDefocusScale);
    ms.fitDefocusOffsets = r.boolean(model, QStringLiteral("fit_defocus_offsets"), mo, ms.fitDefocusOffsets);
    ms.fitSampling = r.boolean(model, QStringLiteral("fit_sampling"), mo, ms.fitSampling);
    ms.estimateOffset = r.boolean(model, QStringLiteral("estimate_offset"), mo, ms.estimateOffset);
    ms.imagingModel = r.setting(model, QStringLiteral("imaging_model"), mo, ImagingModel::Scalar);
    ms.sampleIndex = r.number(model, QStringLiteral("sample_index"), mo, ms.sampleIndex);
    ms.emitterDepth = r.number(model, QStringLiteral("emitter_depth_m"), mo, ms.emitterDepth);
    ms.fitEmitterDepth = r.boolean(model, QStringLiteral("fit_emitter_depth"), mo, ms.fitEmitterDepth);
    ms.coverslipIndex = r.number(model, QStringLiteral("coverslip_index"), mo, ms.coverslipIndex);
    ms.coverslipThickness = r.number(model, QStringLiteral("coverslip_thickness_m"), mo, ms.coverslipThickness);
    ms.designCoverslipIndex = r.number(model, QStringLiteral("design_coverslip_index"), mo, ms.designCoverslipIndex);
    ms.designCoverslipThickness = r.number(model, QStringLiteral("design_coverslip_thickness_m"), mo, ms.designCoverslipThickness);
    ms.dipole.free = r.boolean(model, QStringLiteral("dipole_free"), mo, ms.dipole.free);
    ms.dipole.theta = r.number(model, QStringLiteral("dipole_theta_rad"), mo, ms.dipole.theta);
    ms.dipole.phi = r.number(model, QStringLiteral("dipole_phi_rad"), mo, ms.dipole.phi);
}

QJsonObject modelJson(const ModelSettings& md)
{
    QJsonArray fixed;
    for (int t : md.fixedTerms)
        fixed.append(t);
    QJsonObject model{
        {QStringLiteral("order"), md.order},
        {QStringLiteral("ordering"), settingJson(md.ordering)},
        {QStringLiteral("normalization"), settingJson(md.normalization)},
        {QStringLiteral("objective"), md.objective ? settingJson(*md.objective) : QJsonValue(QJsonValue::Null)},
        {QStringLiteral("read_noise"), md.readNoise},
        {QStringLiteral("grid"), md.grid},
        {QStringLiteral("obscuration"), md.obscuration},
        {QStringLiteral("spiders"), md.spiderCount},
        {QStringLiteral("spider_width"), md.spiderWidth},
        {QStringLiteral("spider_angle_deg"), md.spiderAngleDeg},
        {QStringLiteral("fit_flux"), md.fitFlux},
        {QStringLiteral("fit_background"), md.fitBackground},
        {QStringLiteral("fit_shift"), md.fitShift},
        {QStringLiteral("fixed_terms"), fixed},
    };
    insertPupilFunctionJson(md, model);
    return model;
}

QJsonObject solverJson(const SolverSettings& sv)
{
    QJsonArray stages;
    for (int st : sv.stages)
        stages.append(st);
    return QJsonObject{
        {QStringLiteral("backend"), settingJson(sv.backend)},
        {QStringLiteral("gradient"), settingJson(sv.gradient)},
        {QStringLiteral("optimizer"), settingJson(sv.optimizer)},
        {QStringLiteral("precision"), settingJson(sv.precision)},
        {QStringLiteral("threads"), sv.threads},
        {QStringLiteral("max_iterations"), sv.maxIterations},
        {QStringLiteral("gtol"), sv.gradientTolerance},
        {QStringLiteral("ftol"), sv.functionTolerance},
        {QStringLiteral("stages"), stages},
        {QStringLiteral("remove_defocus"), sv.removeDefocus ? QJsonValue(*sv.removeDefocus) : QJsonValue(QStringLiteral("auto"))},
        {QStringLiteral("uncertainty"), sv.computeUncertainty},
    };
}

// The model and solver settings of `root` (a session or one of its runs; `prefix` names it in messages),
// checked as the command line checks them.
void readSettings(const SessionReader& r, const QJsonObject& root, const QString& prefix, ModelSettings& ms, SolverSettings& sv)
{
    const QJsonObject model = r.object(root, QStringLiteral("model"), prefix, false);
    const QString mo = prefix + QStringLiteral("model.");
    ms.order = r.integer(model, QStringLiteral("order"), mo, ms.order); // checked with the stages below
    ms.ordering = r.setting(model, QStringLiteral("ordering"), mo, ZernikeOrdering::Noll);
    ms.normalization = r.setting(model, QStringLiteral("normalization"), mo, ZernikeNormalization::Rms);
    ms.objective = r.optionalSetting<ObjectiveKind>(model, QStringLiteral("objective"), mo);
    ms.readNoise = r.number(model, QStringLiteral("read_noise"), mo, ms.readNoise);
    ms.grid = r.integer(model, QStringLiteral("grid"), mo, ms.grid);
    ms.obscuration = r.number(model, QStringLiteral("obscuration"), mo, ms.obscuration);
    ms.spiderCount = r.integer(model, QStringLiteral("spiders"), mo, ms.spiderCount);
    ms.spiderWidth = r.number(model, QStringLiteral("spider_width"), mo, ms.spiderWidth);
    ms.spiderAngleDeg = r.number(model, QStringLiteral("spider_angle_deg"), mo, ms.spiderAngleDeg);
    ms.fitFlux = r.boolean(model, QStringLiteral("fit_flux"), mo, ms.fitFlux);
    ms.fitBackground = r.boolean(model, QStringLiteral("fit_background"), mo, ms.fitBackground);
    ms.fitShift = r.boolean(model, QStringLiteral("fit_shift"), mo, ms.fitShift);
    ms.fixedTerms = r.integers(model, QStringLiteral("fixed_terms"), mo);
    readPupilFunctionSettings(r, model, mo, ms);

    const QJsonObject solver = r.object(root, QStringLiteral("solver"), prefix, false);
    const QString so = prefix + QStringLiteral("solver.");
    sv.backend = r.setting(solver, QStringLiteral("backend"), so, BackendKind::Cpu);
    sv.gradient = r.setting(solver, QStringLiteral("gradient"), so, GradientKind::Adjoint);
    sv.optimizer = r.setting(solver, QStringLiteral("optimizer"), so, OptimizerKind::Bfgs);
    sv.precision = r.setting(solver, QStringLiteral("precision"), so, Precision::Double);
    sv.threads = r.integer(solver, QStringLiteral("threads"), so, sv.threads);
    sv.maxIterations = r.integer(solver, QStringLiteral("max_iterations"), so, sv.maxIterations);
    sv.gradientTolerance = r.number(solver, QStringLiteral("gtol"), so, sv.gradientTolerance);
    sv.functionTolerance = r.number(solver, QStringLiteral("ftol"), so, sv.functionTolerance);
    sv.stages = r.integers(solver, QStringLiteral("stages"), so);
    if (solver.value(QStringLiteral("remove_defocus")) == QJsonValue(QStringLiteral("auto")))
        sv.removeDefocus.reset(); // core decides for the data (prepareRun)
    else if (solver.contains(QStringLiteral("remove_defocus")))
        sv.removeDefocus = r.boolean(solver, QStringLiteral("remove_defocus"), so, false);
    sv.computeUncertainty = r.boolean(solver, QStringLiteral("uncertainty"), so, sv.computeUncertainty);
    try {
        checkSettings(ms, sv); // the same checks as the command line's and the desktop's
        for (const auto& error : {ms.geometryError(), ms.readNoiseError()})
            if (error)
                throw *error;
    } catch (const SettingsError& e) {
        r.fail(prefix + QString::fromStdString(settingSessionKey(e.setting())), e.problem()); // settings/SettingsTable.h
    }
}

// --- Writing: one helper per top-level key of the session object, so sessionToJson reads as its layout.

// Each input is stored both absolute and relative to the session's folder, so that a session moved
// together with its data still finds it (openSession tries the relative path second).
QJsonArray inputsJson(const std::vector<DatasetFile>& files, const QDir& sessionFolder)
{
    QJsonArray inputs;
    for (const DatasetFile& f : files) {
        const QString absolute = QFileInfo(QString::fromStdString(f.path)).absoluteFilePath();
        inputs.append(QJsonObject{
            {QStringLiteral("path"), absolute},
            {QStringLiteral("relative_path"), sessionFolder.relativeFilePath(absolute)},
            {QStringLiteral("sha256"), QString::fromStdString(f.sha256)},
            {QStringLiteral("bytes"), double(f.bytes)},
            {QStringLiteral("format"), QString::fromLatin1(imageFormatName(f.format))},
            {QStringLiteral("planes"), f.planeCount},
        });
    }
    return inputs;
}

QJsonArray planesJson(const std::vector<DatasetPlane>& planes)
{
    QJsonArray array;
    for (const DatasetPlane& p : planes)
        array.append(QJsonObject{
            {QStringLiteral("file"), p.file},
            {QStringLiteral("index"), p.indexInFile},
            {QStringLiteral("use"), p.use},
            {QStringLiteral("defocus"), defocusJson(p.defocus)},
        });
    return array;
}

QJsonObject metadataJson(const DatasetMetadata& m)
{
    QJsonObject origin;
    for (const auto& [key, value] : m.origin)
        origin.insert(QString::fromStdString(key), QString::fromStdString(value));
    return QJsonObject{
        {QStringLiteral("wavelength_m"), optionalNumber(m.wavelength)},
        {QStringLiteral("pixel_pitch_m"), optionalNumber(m.pixelPitch)},
        {QStringLiteral("pixel_angle_rad"), optionalNumber(m.pixelAngle)},
        {QStringLiteral("f_number"), optionalNumber(m.fNumber)},
        {QStringLiteral("na"), optionalNumber(m.numericalAperture)},
        {QStringLiteral("immersion"), m.immersionIndex},
        {QStringLiteral("aperture_m"), optionalNumber(m.aperture)},
        {QStringLiteral("sampling"), optionalNumber(m.samplingQ)},
        {QStringLiteral("z_step_m"), optionalNumber(m.zStep)},
        {QStringLiteral("focus_plane"), optionalNumber(m.focusPlane)},
        {QStringLiteral("defocus_model"), settingJson(m.defocusModel)},
        {QStringLiteral("z_direction"), m.zIndexDown ? QStringLiteral("down") : QStringLiteral("up")},
        {QStringLiteral("data_unit"), QString::fromStdString(m.dataUnit)},
        {QStringLiteral("saturation"), optionalNumber(m.saturationLevel)},
        {QStringLiteral("origin"), origin},
    };
}

QJsonObject preprocessJson(const PreprocessOptions& o)
{
    QJsonArray bad;
    for (const auto& [col, row] : o.badPixels)
        bad.append(QJsonArray{col, row});
    return QJsonObject{
        {QStringLiteral("subtract_background"), o.subtractBackground},
        {QStringLiteral("border_width"), o.borderWidth},
        {QStringLiteral("clip_sigma"), o.clipSigma},
        {QStringLiteral("centre"), settingJson(o.centre)},
        {QStringLiteral("centre_each_plane"), o.centreEachPlane},
        {QStringLiteral("crop_size"), o.cropSize},
        {QStringLiteral("mask_saturated"), o.maskSaturated},
        {QStringLiteral("mask_hot_pixels"), o.maskHotPixels ? QJsonValue(*o.maskHotPixels) : QJsonValue(QStringLiteral("auto"))},
        {QStringLiteral("hot_pixel_sigma"), o.hotPixelSigma},
        {QStringLiteral("bad_pixels"), bad},
        {QStringLiteral("normalise"), o.normalise},
    };
}

QJsonArray numbersJson(const std::vector<double>& values)
{
    QJsonArray array;
    for (double v : values)
        array.append(v);
    return array;
}

QJsonArray runsJson(const std::vector<SessionRun>& runs)
{
    QJsonArray array;
    for (const SessionRun& run : runs)
        array.append(QJsonObject{
            {QStringLiteral("name"), QString::fromStdString(run.name)},
            {QStringLiteral("time"), QString::fromStdString(run.time)},
            {QStringLiteral("model"), modelJson(run.model)},
            {QStringLiteral("solver"), solverJson(run.solver)},
            {QStringLiteral("result"), run.result},
            {QStringLiteral("result_parameters"), numbersJson(run.parameters)},
        });
    return array;
}

// --- Reading: the same keys, in the same order as before, so the first problem reported is unchanged.

// Refuses files that are not sessions, or sessions written by a newer program, before reading anything else.
void checkSessionFormat(const SessionReader& r, const QJsonObject& root, const std::string& source)
{
    const QString format = r.text(root, QStringLiteral("format"), {}, {});
    if (format != kFormat)
        throw SessionError(source + ": not a Wavefront Studio session (\"format\" is '" + format.toStdString() + "', expected '"
                           + kFormat.toStdString() + "')");
    const int version = r.integer(root, QStringLiteral("format_version"), {}, -1);
    if (version < 1)
        throw SessionError(source + ": \"format_version\" is missing or not a positive integer");
    if (version > kSessionFormatVersion)
        throw SessionError(source + ": session format version " + std::to_string(version) + " is newer than this program reads (up to "
                           + std::to_string(kSessionFormatVersion) + "); open it with a newer Wavefront Studio");
}

ImageFormat imageFormatFromName(const QString& name)
{
    return name == QLatin1String("FITS")   ? ImageFormat::Fits
           : name == QLatin1String("TIFF") ? ImageFormat::Tiff
           : name == QLatin1String("PNG")  ? ImageFormat::Png
                                           : ImageFormat::Unknown;
}

void readInputs(const SessionReader& r, const QJsonObject& root, std::vector<DatasetFile>& files)
{
    const QJsonArray inputs = r.array(root, QStringLiteral("inputs"), {});
    for (int i = 0; i < inputs.size(); ++i) {
        const QString path = QStringLiteral("inputs[%1].").arg(i);
        if (!inputs.at(i).isObject())
            r.fail(QStringLiteral("inputs[%1]").arg(i), "must be an object");
        const QJsonObject o = inputs.at(i).toObject();
        DatasetFile f;
        f.path = r.text(o, QStringLiteral("path"), path, {}).toStdString();
        if (f.path.empty())
            r.fail(path + QStringLiteral("path"), "must be a non-empty string");
        r.text(o, QStringLiteral("relative_path"), path, {}); // type check; openSession uses it
        f.sha256 = r.text(o, QStringLiteral("sha256"), path, {}).toStdString();
        f.bytes = (long long)r.number(o, QStringLiteral("bytes"), path, 0.0);
        f.planeCount = r.integer(o, QStringLiteral("planes"), path, 0);
        f.format = imageFormatFromName(r.text(o, QStringLiteral("format"), path, {}));
        files.push_back(std::move(f));
    }
}

// Needs the inputs read first: each plane must name one of them.
void readPlanes(const SessionReader& r, const QJsonObject& root, Dataset& d)
{
    const QJsonArray planes = r.array(root, QStringLiteral("planes"), {}, false);
    d.planesChosen = !planes.isEmpty(); // a session's planes are what was fitted: never proposed again
    for (int i = 0; i < planes.size(); ++i) {
        const QString path = QStringLiteral("planes[%1].").arg(i);
        if (!planes.at(i).isObject())
            r.fail(QStringLiteral("planes[%1]").arg(i), "must be an object");
        const QJsonObject o = planes.at(i).toObject();
        DatasetPlane p;
        p.file = r.integer(o, QStringLiteral("file"), path, -1);
        if (p.file < 0 || p.file >= int(d.files.size()))
            r.fail(path + QStringLiteral("file"), "must name one of the inputs (0.." + std::to_string(int(d.files.size()) - 1) + ")");
        p.indexInFile = r.integer(o, QStringLiteral("index"), path, -1);
        if (p.indexInFile < 0)
            r.fail(path + QStringLiteral("index"), "must be a plane index (0 or more)");
        p.use = r.boolean(o, QStringLiteral("use"), path, true);
        p.defocus = r.defocus(o.value(QStringLiteral("defocus")), path + QStringLiteral("defocus"));
        d.planes.push_back(std::move(p));
    }
}

void readMetadata(const SessionReader& r, const QJsonObject& root, DatasetMetadata& md)
{
    const QJsonObject m = r.object(root, QStringLiteral("metadata"), {}, false);
    const QString mp = QStringLiteral("metadata.");
    md.wavelength = r.optional(m, QStringLiteral("wavelength_m"), mp);
    md.pixelPitch = r.optional(m, QStringLiteral("pixel_pitch_m"), mp);
    md.pixelAngle = r.optional(m, QStringLiteral("pixel_angle_rad"), mp);
    md.fNumber = r.optional(m, QStringLiteral("f_number"), mp);
    md.numericalAperture = r.optional(m, QStringLiteral("na"), mp);
    md.immersionIndex = r.number(m, QStringLiteral("immersion"), mp, 1.0);
    md.aperture = r.optional(m, QStringLiteral("aperture_m"), mp);
    md.samplingQ = r.optional(m, QStringLiteral("sampling"), mp);
    md.zStep = r.optional(m, QStringLiteral("z_step_m"), mp);
    md.focusPlane = r.optional(m, QStringLiteral("focus_plane"), mp);
    md.defocusModel = r.setting(m, QStringLiteral("defocus_model"), mp, DefocusModel::Paraxial);
    md.zIndexDown = r.choice(m, QStringLiteral("z_direction"), mp, {QStringLiteral("up"), QStringLiteral("down")}, 0) == 1;
    md.dataUnit = r.text(m, QStringLiteral("data_unit"), mp, {}).toStdString();
    md.saturationLevel = r.optional(m, QStringLiteral("saturation"), mp);
    const QJsonObject origin = r.object(m, QStringLiteral("origin"), mp, false);
    for (auto it = origin.begin(); it != origin.end(); ++it)
        md.origin[it.key().toStdString()] = it.value().toString().toStdString();
}

void readBadPixels(const SessionReader& r, const QJsonObject& pre, const QString& pp, std::vector<std::pair<int, int>>& badPixels)
{
    const QJsonArray bad = r.array(pre, QStringLiteral("bad_pixels"), pp, false);
    for (int i = 0; i < bad.size(); ++i) {
        const QJsonArray xy = bad.at(i).toArray();
        if (!bad.at(i).isArray() || xy.size() != 2 || !xy.at(0).isDouble() || !xy.at(1).isDouble())
            r.fail(pp + QStringLiteral("bad_pixels"), "must hold [column, row] pairs");
        // QJsonValue::toInt() turns 1e18 or 2.5 into 0, which would mask pixel (0, 0) instead.
        const double column = xy.at(0).toDouble(), row = xy.at(1).toDouble();
        if (column != std::floor(column) || row != std::floor(row) || column < 0 || row < 0 || column > 65535 || row > 65535)
            r.fail(pp + QStringLiteral("bad_pixels"), "must hold whole pixel coordinates from 0 to 65535");
        badPixels.emplace_back(int(column), int(row));
    }
}

void readPreprocess(const SessionReader& r, const QJsonObject& root, PreprocessOptions& o)
{
    const QJsonObject pre = r.object(root, QStringLiteral("preprocess"), {}, false);
    const QString pp = QStringLiteral("preprocess.");
    o.subtractBackground = r.boolean(pre, QStringLiteral("subtract_background"), pp, o.subtractBackground);
    o.borderWidth = r.integer(pre, QStringLiteral("border_width"), pp, o.borderWidth);
    o.clipSigma = r.number(pre, QStringLiteral("clip_sigma"), pp, o.clipSigma);
    o.centre = r.setting(pre, QStringLiteral("centre"), pp, PreprocessOptions{}.centre);
    o.centreEachPlane = r.boolean(pre, QStringLiteral("centre_each_plane"), pp, o.centreEachPlane);
    o.cropSize = r.integer(pre, QStringLiteral("crop_size"), pp, o.cropSize);
    o.maskSaturated = r.boolean(pre, QStringLiteral("mask_saturated"), pp, o.maskSaturated);
    if (pre.value(QStringLiteral("mask_hot_pixels")) == QJsonValue(QStringLiteral("auto")))
        o.maskHotPixels.reset(); // core decides (effectiveHotPixelMask)
    else if (pre.contains(QStringLiteral("mask_hot_pixels")))
        o.maskHotPixels = r.boolean(pre, QStringLiteral("mask_hot_pixels"), pp, false);
    o.hotPixelSigma = r.number(pre, QStringLiteral("hot_pixel_sigma"), pp, o.hotPixelSigma);
    o.normalise = r.boolean(pre, QStringLiteral("normalise"), pp, o.normalise);
    readBadPixels(r, pre, pp, o.badPixels);
    if (o.cropSize < 0 || o.cropSize > 65536 || o.borderWidth < 0 || o.borderWidth > 65536)
        r.fail(pp + QStringLiteral("crop_size"), "and border_width must be between 0 and 65536");
    if (const auto error = o.firstError()) // the ranges --clip-sigma, --crop, ... are held to
        r.fail(QString::fromStdString(settingSessionKey(error->setting())), error->problem());
}

// `key` is an array of numbers (result parameters); `path` names its owner in messages.
std::vector<double> readNumbers(const SessionReader& r, const QJsonObject& o, const QString& key, const QString& path, bool required)
{
    std::vector<double> values;
    for (const QJsonValue& v : r.array(o, key, path, required)) {
        if (!v.isDouble())
            r.fail(path + key, "must hold numbers");
        values.push_back(v.toDouble());
    }
    return values;
}

void readRuns(const SessionReader& r, const QJsonObject& root, std::vector<SessionRun>& runs)
{
    const QJsonArray array = r.array(root, QStringLiteral("runs"), {}, false);
    for (int i = 0; i < array.size(); ++i) {
        const QString path = QStringLiteral("runs[%1].").arg(i);
        if (!array.at(i).isObject())
            r.fail(QStringLiteral("runs[%1]").arg(i), "must be an object");
        const QJsonObject o = array.at(i).toObject();
        SessionRun run;
        run.name = r.text(o, QStringLiteral("name"), path, QStringLiteral("run %1").arg(i + 1)).toStdString();
        run.time = r.text(o, QStringLiteral("time"), path, {}).toStdString();
        readSettings(r, o, path, run.model, run.solver);
        run.result = r.object(o, QStringLiteral("result"), path);
        run.parameters = readNumbers(r, o, QStringLiteral("result_parameters"), path, true);
        runs.push_back(std::move(run));
    }
}

// A session from before runs were kept: its result is its one run.
SessionRun legacyResultRun(const SessionReader& r, const QJsonObject& root, const Session& s)
{
    SessionRun run;
    run.name = "saved result";
    run.time = r.text(root, QStringLiteral("saved"), {}, {}).toStdString();
    run.model = s.model;
    run.solver = s.solver;
    run.result = s.result;
    run.parameters = s.resultParameters;
    return run;
}
} // namespace

QJsonObject sessionToJson(const Session& s, const std::string& sessionPath)
{
    const QDir folder = QFileInfo(QString::fromStdString(sessionPath)).absoluteDir();
    QJsonObject root{
        {QStringLiteral("format"), kFormat},
        {QStringLiteral("format_version"), kSessionFormatVersion},
        {QStringLiteral("saved"), QDateTime::currentDateTimeUtc().toString(Qt::ISODate)},
        {QStringLiteral("inputs"), inputsJson(s.dataset.files, folder)},
        {QStringLiteral("planes"), planesJson(s.dataset.planes)},
        {QStringLiteral("metadata"), metadataJson(s.dataset.metadata)},
        {QStringLiteral("preprocess"), preprocessJson(s.dataset.preprocess)},
        {QStringLiteral("model"), modelJson(s.model)},
        {QStringLiteral("solver"), solverJson(s.solver)},
    };
    if (!s.result.isEmpty()) {
        root.insert(QStringLiteral("result"), s.result);
        root.insert(QStringLiteral("result_parameters"), numbersJson(s.resultParameters));
    }
    if (!s.runs.empty())
        root.insert(QStringLiteral("runs"), runsJson(s.runs));
    if (s.simulated)
        root.insert(QStringLiteral("simulated"), simulatedSourceJson(*s.simulated));
    return root;
}

Session sessionFromJson(const QJsonObject& root, const std::string& source)
{
    const SessionReader r(source);
    checkSessionFormat(r, root, source);

    Session s;
    readInputs(r, root, s.dataset.files);
    readPlanes(r, root, s.dataset);
    readMetadata(r, root, s.dataset.metadata);
    readPreprocess(r, root, s.dataset.preprocess);
    readSettings(r, root, QString(), s.model, s.solver);

    s.result = r.object(root, QStringLiteral("result"), {}, false);
    s.resultParameters = readNumbers(r, root, QStringLiteral("result_parameters"), {}, false);
    readRuns(r, root, s.runs);
    if (root.contains(QStringLiteral("simulated")))
        s.simulated = readSimulatedSource(r, r.object(root, QStringLiteral("simulated"), {}), QStringLiteral("simulated."));
    if (s.simulated && !s.dataset.files.empty())
        r.fail(QStringLiteral("simulated"), "and \"inputs\" both give the data: a session has one source");
    if (s.runs.empty() && !s.result.isEmpty() && !s.resultParameters.empty())
        s.runs.push_back(legacyResultRun(r, root, s));
    return s;
}

QByteArray sessionBytes(const std::string& path, const Session& session)
{
    return QJsonDocument(sessionToJson(session, path)).toJson();
}

void saveSession(const std::string& path, const Session& session, bool overwrite)
{
    try {
        writeFileAtomically(path, sessionBytes(path, session), overwrite);
    } catch (const OutputError& e) {
        throw SessionError(e.what());
    }
}

namespace {

// The session file as JSON. The readability check comes first because a FIFO would block the open forever.
QJsonDocument readSessionDocument(const std::string& path)
{
    std::string bytes;
    try {
        bytes = readRegularFile(path, 64 << 20, "a session file (JSON)");
    } catch (const ImageReadError& e) {
        throw SessionError(e.what());
    }
    QJsonParseError error;
    const QJsonDocument doc = QJsonDocument::fromJson(QByteArray::fromStdString(bytes), &error);
    if (error.error != QJsonParseError::NoError)
        throw SessionError(path + ": not valid JSON (" + error.errorString().toStdString() + " at byte " + std::to_string(error.offset)
                           + ")");
    if (!doc.isObject())
        throw SessionError(path + ": not a session (the JSON is not an object)");
    return doc;
}

// The stored absolute path if it still exists, else the path relative to the session's folder (the data
// moved together with the session); empty if neither exists.
std::string resolveInputPath(const DatasetFile& stored, const std::string& relativePath, const QDir& sessionFolder)
{
    std::string resolved = stored.path;
    if (!QFileInfo::exists(QString::fromStdString(resolved)) && !relativePath.empty()) {
        const QString relative = sessionFolder.filePath(QString::fromStdString(relativePath));
        if (QFileInfo::exists(relative))
            resolved = relative.toStdString();
    }
    return QFileInfo::exists(QString::fromStdString(resolved)) ? resolved : std::string();
}

// Warnings for a file that loaded but no longer matches what the session recorded.
void checkLoadedAgainstStored(const DatasetFile& stored, const DatasetFile& loaded, const std::string& resolved,
                              std::vector<DatasetMessage>& messages)
{
    if (!stored.sha256.empty() && !loaded.sha256.empty() && loaded.sha256 != stored.sha256)
        messages.push_back({MessageLevel::Warning, resolved,
                            resolved + ": the file has changed since the session was saved (SHA-256 differs); results may not match"});
    if (stored.planeCount > 0 && loaded.planeCount != stored.planeCount)
        messages.push_back({MessageLevel::Warning, resolved,
                            resolved + ": has " + std::to_string(loaded.planeCount) + " planes, the session expected "
                                + std::to_string(stored.planeCount)});
}

// Loads the session's inputs into opened.session.dataset; returns stored input index -> loaded file index
// for the inputs that loaded (a missing or unreadable input is reported, not fatal, so the rest still opens).
std::map<int, int> loadSessionInputs(const Session& stored, const QJsonArray& inputs, const QDir& sessionFolder, const ReadLimits& limits,
                                     OpenedSession& opened)
{
    Dataset& d = opened.session.dataset;
    std::map<int, int> fileMap;
    for (int i = 0; i < int(stored.dataset.files.size()); ++i) {
        const DatasetFile& f = stored.dataset.files[size_t(i)];
        const std::string relativePath = inputs.at(i).toObject().value(QStringLiteral("relative_path")).toString().toStdString();
        const std::string resolved = resolveInputPath(f, relativePath, sessionFolder);
        if (resolved.empty()) {
            opened.messages.push_back({MessageLevel::Error, f.path,
                                       f.path + ": input of the session not found (also not as " + relativePath
                                           + " beside the session); its planes are missing"});
            continue;
        }
        const size_t before = d.files.size();
        for (DatasetMessage& msg : addFiles(d, {resolved}, limits))
            opened.messages.push_back(std::move(msg));
        if (d.files.size() == before)
            continue; // unreadable: addFiles said why
        fileMap[i] = int(before);
        checkLoadedAgainstStored(f, d.files.back(), resolved, opened.messages);
    }
    return fileMap;
}

// Plane settings of the session replace what loading chose (headers, size checks).
void applyStoredPlanes(const Session& stored, const std::map<int, int>& fileMap, OpenedSession& opened)
{
    Dataset& d = opened.session.dataset;
    if (!stored.dataset.planes.empty())
        for (DatasetPlane& p : d.planes)
            p.use = false;
    d.planesChosen = stored.dataset.planesChosen;
    for (const DatasetPlane& sp : stored.dataset.planes) {
        const auto it = fileMap.find(sp.file);
        if (it == fileMap.end())
            continue;
        const DatasetFile& loaded = d.files[size_t(it->second)];
        if (sp.indexInFile >= loaded.planeCount) {
            opened.messages.push_back(
                {MessageLevel::Warning, loaded.path,
                 loaded.path + ": plane " + std::to_string(sp.indexInFile) + " of the session is missing from the file"});
            continue;
        }
        DatasetPlane& p = d.planes[size_t(loaded.firstPlane + sp.indexInFile)];
        p.use = sp.use;
        p.defocus = sp.defocus;
    }
}

// A value the session says came from an input's header, where that same header now says another: the value was
// edited in the session file (or the file changed since). It is the session's, not the header's, and no conflict
// between the header and itself.
void attributeEditedValues(const std::string& sessionPath, DatasetMetadata& m)
{
    const std::string session = "session " + QFileInfo(QString::fromStdString(sessionPath)).fileName().toStdString();
    for (auto c = m.conflicts.begin(); c != m.conflicts.end();) {
        const auto origin = m.origin.find(c->key);
        if (origin == m.origin.end() || c->keptOrigin != origin->second || c->otherOrigin != origin->second) {
            ++c;
            continue;
        }
        origin->second = session + " (edited: " + c->otherOrigin + " says " + metadataValueText(c->key, c->other) + ")";
        c = m.conflicts.erase(c);
    }
}

} // namespace

OpenedSession openSession(const std::string& path, const ReadLimits& limits)
{
    const QJsonDocument doc = readSessionDocument(path);
    const Session stored = sessionFromJson(doc.object(), path);

    OpenedSession opened;
    opened.session.model = stored.model;
    opened.session.solver = stored.solver;
    opened.session.result = stored.result;
    opened.session.resultParameters = stored.resultParameters;
    opened.session.runs = stored.runs;
    opened.session.simulated = stored.simulated;
    Dataset& d = opened.session.dataset;
    d.metadata = stored.dataset.metadata; // set first: headers only fill what the session left unset
    for (const auto& [key, origin] : d.metadata.origin)
        opened.sessionValues.push_back(key);
    for (const auto& [key, value] : metadataNumbers(d.metadata))
        if (value && !d.metadata.origin.count(key))
            opened.sessionValues.push_back(key);
    d.preprocess = stored.dataset.preprocess;
    const QDir folder = QFileInfo(QString::fromStdString(path)).absoluteDir();
    const QJsonArray inputs = doc.object().value(QStringLiteral("inputs")).toArray();
    const std::map<int, int> fileMap = loadSessionInputs(stored, inputs, folder, limits, opened);
    attributeEditedValues(path, d.metadata);
    applyStoredPlanes(stored, fileMap, opened);
    if (!limits.headersOnly) // no pixels to prepare
        for (DatasetMessage& msg : prepare(d))
            opened.messages.push_back(std::move(msg));
    return opened;
}

void markSessionOrigins(DatasetMetadata& m, const std::string& sessionPath, const std::vector<std::string>& fields)
{
    const std::string session = "session " + QFileInfo(QString::fromStdString(sessionPath)).fileName().toStdString();
    for (const std::string& key : fields) {
        auto it = m.origin.find(key);
        if (it == m.origin.end())
            m.origin[key] = session;
        else if (it->second.rfind("session ", 0) != 0)
            it->second = session + " (" + it->second + ")";
    }
}

} // namespace wfs
