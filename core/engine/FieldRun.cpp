#include "engine/FieldRun.h"

#include "base/Cancellation.h"
#include "base/CsvText.h"
#include "base/MemoryBudget.h"
#include "engine/Batch.h"
#include "io/Fits.h"

#include <QJsonArray>
#include <QJsonDocument>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <cmath>
#include <mutex>
#include <set>
#include <thread>

namespace wfs {

namespace {

// The planes that take part, all of one size: what the beads are found in and cropped from.
std::vector<const Image*> fieldPlanes(const Dataset& data)
{
    std::vector<const Image*> planes;
    for (int index : usedPlanes(data))
        planes.push_back(&data.planes[size_t(index)].raw);
    if (planes.empty())
        throw DatasetError("no plane takes part: load a wide-field stack and choose its planes");
    const Image& first = *planes.front();
    for (const Image* plane : planes)
        if (plane->width != first.width || plane->height != first.height)
            throw DatasetError("the stack's planes differ in size (" + plane->source + " is " + std::to_string(plane->width) + " x "
                               + std::to_string(plane->height) + ", " + first.source + " " + std::to_string(first.width) + " x "
                               + std::to_string(first.height) + "): a field is one stack of one size");
    // The projection and its smoothed copy, and their intermediates, images of the field's size besides the stack loaded.
    requireMemory(4.0 * double(first.width) * double(first.height) * sizeof(double), "the field's projections");
    return planes;
}

std::optional<double> saturationOf(const Dataset& data)
{
    if (data.metadata.saturationLevel)
        return data.metadata.saturationLevel;
    for (const DatasetPlane& plane : data.planes)
        if (plane.formatMaximum > 0.0)
            return plane.formatMaximum;
    return std::nullopt;
}

double meanReducedChiSquare(const FitResult& result)
{
    double sum = 0.0;
    for (const PlaneResult& plane : result.planes)
        sum += plane.reducedChiSquare;
    return result.planes.empty() ? std::numeric_limits<double>::quiet_NaN() : sum / double(result.planes.size());
}

void recordFit(FieldBead& bead, const FitResult& result)
{
    bead.coefficients = result.coefficients;
    bead.reducedChiSquare = meanReducedChiSquare(result);
    bead.rmsWaves = result.rmsWaves;
    bead.termination = terminationName(result.solver.termination);
    bead.iterations = result.solver.iterations;
    bead.seconds = result.solver.seconds;
    bead.parameters = result.parameterValues;
    bead.cost = result.solver.finalCost;
    bead.status = "ok";
    if (result.verdict.judged && !result.verdict.describesData) {
        bead.status = "poor-fit";
        bead.reason = result.verdict.text;
    } else if (result.solver.termination != Termination::Converged && result.solver.termination != Termination::Stalled) {
        bead.status = "poor-fit";
        bead.reason = std::string("the fit ended ") + terminationName(result.solver.termination) + ": " + result.solver.message;
    }
}

} // namespace

// Workers take the next bead in turn; the first bead's messages are kept.
void fitField(const Session& session, const FieldRunOptions& options, FieldRun& run)
{
    std::vector<size_t> todo;
    for (size_t i = 0; i < run.beads.size(); ++i)
        if (run.beads[i].detection.status == BeadStatus::Accepted && (!options.fitOnly || options.fitOnly(i)))
            todo.push_back(i);
    const unsigned hardware = std::max(1u, std::thread::hardware_concurrency());
    run.jobs = batchJobs(options.jobs, std::max(1, session.solver.threads), int(hardware), todo.size()).jobs;
    std::atomic<size_t> next{0};
    std::atomic<bool> stop{false};
    std::mutex mutex;
    int done = 0;
    std::exception_ptr failure;
    const auto work = [&] {
        for (size_t k; !stop && (k = next++) < todo.size();) {
            try {
                std::vector<DatasetMessage> messages = fitFieldBead(session, options.detection.crop, run.beads[todo[k]], options.cancel);
                std::lock_guard lock(mutex);
                if (k == 0)
                    run.messages = std::move(messages);
                if (options.progress)
                    options.progress(++done, int(todo.size()));
            } catch (...) { // cancelled: the other workers stop after their bead
                std::lock_guard lock(mutex);
                failure = std::current_exception();
                stop = true;
            }
        }
    };
    std::vector<std::thread> workers;
    for (int j = 1; j < run.jobs; ++j)
        workers.emplace_back(work);
    work();
    for (std::thread& worker : workers)
        worker.join();
    if (failure)
        std::rethrow_exception(failure);
}

namespace {

std::vector<int> defaultModelTerms(const FieldRun& run)
{
    for (const FieldBead& bead : run.beads)
        if (bead.status == "ok") {
            std::vector<int> terms;
            for (const CoefficientResult& c : bead.coefficients)
                if (c.mode.n >= 2 && c.free)
                    terms.push_back(c.index);
            return terms;
        }
    return {};
}

const CoefficientResult* coefficientOf(const FieldBead& bead, int index)
{
    for (const CoefficientResult& c : bead.coefficients)
        if (c.index == index)
            return &c;
    return nullptr;
}

void fitModel(const FieldRunOptions& options, FieldRun& run)
{
    run.model.reset();
    run.modelError.clear();
    for (FieldBead& bead : run.beads)
        bead.inModel = false;
    run.modelTerms = options.modelTerms.empty() ? defaultModelTerms(run) : options.modelTerms;
    std::vector<FieldSample> samples;
    std::vector<size_t> sampleBead;
    for (size_t i = 0; i < run.beads.size(); ++i) {
        const FieldBead& bead = run.beads[i];
        if (bead.status != "ok")
            continue;
        FieldSample sample{bead.detection.x, bead.detection.y, {}, {}};
        for (int index : run.modelTerms) {
            const CoefficientResult* c = coefficientOf(bead, index);
            if (!c)
                throw std::invalid_argument("the field model's term " + std::to_string(index) + " is not among the fitted terms");
            sample.values.push_back(c->waves);
            sample.sigmas.push_back(c->uncertaintyWaves);
        }
        samples.push_back(std::move(sample));
        sampleBead.push_back(i);
    }
    if (samples.empty() || run.modelTerms.empty()) {
        run.modelError = samples.empty() ? "no bead was fitted, so there is no field to describe" : "no term to describe";
        return;
    }
    FieldModelOptions modelOptions = options.model;
    if (!(modelOptions.radius > 0.0)) {
        modelOptions.centreX = 0.5 * (run.width - 1);
        modelOptions.centreY = 0.5 * (run.height - 1);
        modelOptions.radius = 0.5 * std::hypot(run.width, run.height);
    }
    run.model = fitFieldModel(samples, modelOptions);
    for (size_t s = 0; s < samples.size(); ++s) {
        bool outlier = false;
        for (const FieldTermFit& term : run.model->terms)
            outlier = outlier || term.outlier[s];
        run.beads[sampleBead[s]].inModel = !outlier;
    }
}

} // namespace

Session fieldBeadSession(const Session& session, const DetectedBead& bead, int crop)
{
    Session s;
    s.model = session.model;
    s.solver = session.solver;
    s.dataset.files = session.dataset.files;
    s.dataset.metadata = session.dataset.metadata;
    s.dataset.preprocess = session.dataset.preprocess;
    // Bad pixels are given in the field's coordinates: those inside the crop move with it, the rest are not in it.
    s.dataset.preprocess.badPixels.clear();
    const int column0 = bead.column - crop / 2, row0 = bead.row - crop / 2;
    for (const auto& [column, row] : session.dataset.preprocess.badPixels)
        if (column >= column0 && column < column0 + crop && row >= row0 && row < row0 + crop)
            s.dataset.preprocess.badPixels.push_back({column - column0, row - row0});
    s.dataset.planesChosen = session.dataset.planesChosen;
    s.dataset.planes.reserve(session.dataset.planes.size());
    for (const DatasetPlane& plane : session.dataset.planes) {
        DatasetPlane p = plane;
        p.raw = cropAround(plane.raw, bead, crop);
        s.dataset.planes.push_back(std::move(p));
    }
    return s;
}

std::vector<DatasetMessage> fitFieldBead(const Session& session, int crop, FieldBead& bead, const std::atomic<bool>* cancel)
{
    try {
        PreparedRun run = prepareRun(fieldBeadSession(session, bead.detection, crop));
        recordFit(bead, reconstruct(run.request, {}, cancel));
        return run.messages;
    } catch (const OperationCancelled&) {
        throw;
    } catch (const std::exception& e) {
        bead.coefficients.clear();
        bead.status = beadStatusName(BeadStatus::FitFailed);
        bead.detection.status = BeadStatus::FitFailed;
        bead.reason = e.what();
    }
    return {};
}

FieldRun detectField(const Session& session, const BeadDetectionOptions& options)
{
    const std::vector<const Image*> planes = fieldPlanes(session.dataset);
    FieldRun run;
    run.width = planes.front()->width;
    run.height = planes.front()->height;
    run.pixelPitch = session.dataset.metadata.pixelPitch;
    if (!session.dataset.metadata.dataUnit.empty())
        run.dataUnit = session.dataset.metadata.dataUnit;
    run.ordering = session.model.ordering;
    BeadDetectionOptions detection = options;
    if (!detection.saturationLevel)
        detection.saturationLevel = saturationOf(session.dataset);
    run.detection = detectBeads(planes, detection);
    for (const DetectedBead& d : run.detection.beads) {
        FieldBead bead;
        bead.detection = d;
        if (run.pixelPitch) {
            bead.xMicrons = d.x * *run.pixelPitch * 1e6;
            bead.yMicrons = d.y * *run.pixelPitch * 1e6;
        }
        bead.status = d.status == BeadStatus::Accepted ? "not-run" : beadStatusName(d.status);
        bead.reason = d.reason;
        run.beads.push_back(bead);
    }
    return run;
}

void describeField(const Session& session, FieldRun& run, const FieldRunOptions& options)
{
    try {
        fitModel(options, run);
    } catch (const std::invalid_argument& e) {
        run.model.reset();
        run.modelError = e.what();
    }
    if (options.jointFit && run.model)
        jointFitField(session, run, options);
}

FieldRun runField(const Session& session, const FieldRunOptions& options)
{
    const auto start = std::chrono::steady_clock::now();
    FieldRun run = detectField(session, options.detection);
    throwIfCancelled(options.cancel);
    fitField(session, options, run);
    describeField(session, run, options);
    run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return run;
}

namespace {

std::string cell(double v)
{
    if (!std::isfinite(v))
        return "";
    char text[32];
    std::snprintf(text, sizeof text, "%.9g", v);
    return text;
}
std::string cell(const std::optional<double>& v)
{
    return v ? cell(*v) : "";
}

// Every coefficient index any bead has, in order.
std::vector<int> coefficientColumns(const FieldRun& run)
{
    std::set<int> indices;
    for (const FieldBead& bead : run.beads)
        for (const CoefficientResult& c : bead.coefficients)
            indices.insert(c.index);
    return {indices.begin(), indices.end()};
}

} // namespace

std::string fieldBrightnessKey(const FieldRun& run)
{
    return "brightness_" + run.dataUnit;
}

QByteArray fieldBeadsCsv(const FieldRun& run)
{
    const std::vector<int> columns = coefficientColumns(run);
    const std::string ordering = zernike::orderingName(run.ordering);
    std::string text = "index,x_px,y_px,x_um,y_um,status,";
    text.append(kFieldSignificanceKey).append(",").append(fieldBrightnessKey(run));
    text += ",width_px,reduced_chi_square,rms_waves,iterations,seconds,in_model";
    for (int index : columns)
        for (const char* suffix : {"_waves", "_sigma_waves"})
            text.append(",").append(ordering).append("_").append(std::to_string(index)).append(suffix);
    text += ",reason\n";
    for (size_t i = 0; i < run.beads.size(); ++i) {
        const FieldBead& b = run.beads[i];
        const bool fitted = !b.coefficients.empty();
        for (const std::string& field :
             {std::to_string(i), cell(b.detection.x), cell(b.detection.y), cell(b.xMicrons), cell(b.yMicrons), b.status,
              cell(b.detection.significance), cell(b.detection.brightness), cell(b.detection.width), cell(b.reducedChiSquare),
              cell(b.rmsWaves), fitted ? std::to_string(b.iterations) : std::string(), fitted ? cell(b.seconds) : std::string()})
            text.append(field).append(",");
        text.append(b.inModel ? "yes" : "no");
        for (int index : columns) {
            const CoefficientResult* c = coefficientOf(b, index);
            text.append(",").append(c ? cell(c->waves) : "").append(",").append(c ? cell(c->uncertaintyWaves) : "");
        }
        text.append(",").append(csvField(b.reason)).append("\n");
    }
    return QByteArray::fromStdString(text);
}

namespace {

QJsonValue number(double v)
{
    return std::isfinite(v) ? QJsonValue(v) : QJsonValue();
}

QJsonObject beadJson(const FieldRun& run, size_t index, const FieldBead& b)
{
    QJsonObject o{{"index", int(index)},
                  {"x_px", b.detection.x},
                  {"y_px", b.detection.y},
                  {"status", QString::fromStdString(b.status)},
                  {kFieldSignificanceKey, number(b.detection.significance)},
                  {QString::fromStdString(fieldBrightnessKey(run)), b.detection.brightness},
                  {"width_px", b.detection.width},
                  {"in_model", b.inModel}};
    if (b.xMicrons) {
        o["x_um"] = *b.xMicrons;
        o["y_um"] = *b.yMicrons;
    }
    if (!b.reason.empty())
        o["reason"] = QString::fromStdString(b.reason);
    if (b.coefficients.empty())
        return o;
    QJsonArray coefficients, parameters;
    for (const CoefficientResult& c : b.coefficients) {
        QJsonObject coefficient{{"index", c.index}, {"waves", c.waves}, {"sigma_waves", number(c.uncertaintyWaves)}};
        if (!c.free)
            coefficient["free"] = false;
        coefficients.append(coefficient);
    }
    for (double p : b.parameters)
        parameters.append(p);
    o["coefficients"] = coefficients;
    o["reduced_chi_square"] = number(b.reducedChiSquare);
    o["rms_waves"] = number(b.rmsWaves);
    o["termination"] = QString::fromStdString(b.termination);
    o["iterations"] = b.iterations;
    o["seconds"] = b.seconds;
    o["cost"] = number(b.cost);
    o["parameters"] = parameters;
    return o;
}

double numberOr(const QJsonValue& v)
{
    return v.isDouble() ? v.toDouble() : std::numeric_limits<double>::quiet_NaN();
}

// The fit part of a bead object (fieldBeadJson's) into `bead`.
void readBeadFit(const QJsonObject& o, ZernikeOrdering ordering, FieldBead& bead)
{
    bead.status = o["status"].toString().toStdString();
    bead.reason = o["reason"].toString().toStdString();
    bead.coefficients.clear();
    for (const QJsonValue v : o["coefficients"].toArray()) {
        CoefficientResult c;
        c.index = v.toObject()["index"].toInt();
        c.mode = zernike::modeFromIndex(c.index, ordering);
        c.name = zernike::name(c.mode);
        c.waves = v.toObject()["waves"].toDouble();
        c.radians = 2.0 * M_PI * c.waves;
        c.uncertaintyWaves = numberOr(v.toObject()["sigma_waves"]);
        c.free = v.toObject()["free"].toBool(true);
        bead.coefficients.push_back(c);
    }
    bead.parameters.clear();
    for (const QJsonValue v : o["parameters"].toArray())
        bead.parameters.push_back(v.toDouble());
    bead.reducedChiSquare = numberOr(o["reduced_chi_square"]);
    bead.rmsWaves = numberOr(o["rms_waves"]);
    bead.termination = o["termination"].toString().toStdString();
    bead.iterations = o["iterations"].toInt();
    bead.seconds = o["seconds"].toDouble();
    bead.cost = numberOr(o["cost"]);
    if (bead.status == beadStatusName(BeadStatus::FitFailed))
        bead.detection.status = BeadStatus::FitFailed;
}

QJsonObject termJson(const FieldRun& run, size_t t)
{
    const FieldTermFit& fit = run.model->terms[t];
    QJsonArray coefficients, covariance, outliers;
    for (double c : fit.coefficients)
        coefficients.append(c);
    for (double c : fit.covariance)
        covariance.append(c);
    size_t sample = 0;
    for (size_t i = 0; i < run.beads.size(); ++i)
        if (run.beads[i].status == "ok" && sample < fit.outlier.size())
            if (fit.outlier[sample++])
                outliers.append(int(i));
    return {{"index", run.modelTerms[t]},
            {"name", QString::fromStdString(zernike::name(zernike::modeFromIndex(run.modelTerms[t], run.ordering)))},
            {"field_order", fit.order},
            {"coefficients_waves", coefficients},
            {"covariance", covariance},
            {"reduced_chi_square", fit.reducedChiSquare},
            {"covariance_scale", fit.covarianceScale},
            {"outlier_beads", outliers}};
}

} // namespace

QJsonObject fieldBeadJson(const FieldRun& run, size_t index)
{
    return beadJson(run, index, run.beads.at(index));
}

void applyFieldBeadJson(FieldRun& run, const QJsonObject& bead, const std::string& source)
{
    const int index = bead["index"].toInt(-1);
    if (index < 0 || size_t(index) >= run.beads.size())
        throw std::runtime_error(source + ": bead " + std::to_string(index) + " is not among the " + std::to_string(run.beads.size())
                                 + " beads found (was it made from another stack or other detection settings?)");
    FieldBead& target = run.beads[size_t(index)];
    if (std::abs(bead["x_px"].toDouble(NAN) - target.detection.x) > 1e-6
        || std::abs(bead["y_px"].toDouble(NAN) - target.detection.y) > 1e-6)
        throw std::runtime_error(source + ": bead " + std::to_string(index) + " is not where this stack's bead " + std::to_string(index)
                                 + " is (was it made from another stack or other detection settings?)");
    try {
        readBeadFit(bead, run.ordering, target);
    } catch (const std::invalid_argument& e) {
        throw std::runtime_error(source + ": bead " + std::to_string(index) + ": " + e.what());
    }
}

QJsonObject fieldRunJson(const FieldRun& run)
{
    QJsonArray beads;
    for (size_t i = 0; i < run.beads.size(); ++i)
        beads.append(beadJson(run, i, run.beads[i]));
    QJsonObject o{
        {"format", "wavefront-studio-field"},
        {"convention",
         QJsonObject{{"position", "x = column, y = row (row 0 at the bottom), pixel centres at integers; x_um = x_px x pixel pitch"},
                     {"coefficients", QString::fromLatin1(zernike::orderingName(run.ordering)) + " indices, waves"},
                     {"field_basis",
                      "each term = sum_k a_k F_k(u, v), F_k the Zernike polynomials in Noll order (piston first), RMS-normalised "
                      "over the unit disc, u = (x_px - centre_x_px) / radius_px, v = (y_px - centre_y_px) / radius_px; the "
                      "covariance (row-major) is (A^T W A)^-1 x covariance_scale (max(1, reduced chi2)) of the fit to the beads' "
                      "coefficients; where joint_fit.adopted, the shared terms' coefficients are the joint fit's, and where "
                      "joint_fit.joint_covariance also their covariance: the inverse of the beads' summed Fisher information "
                      "through the field basis, each bead's own parameters marginalised, x covariance_scale"}}},
        {"width_px", run.width},
        {"height_px", run.height},
        {"detection",
         QJsonObject{{"background", run.detection.background}, {"noise", run.detection.noise}, {"threshold", run.detection.threshold}}},
        {"jobs", run.jobs},
        {"seconds", run.seconds},
        {"beads", beads}};
    if (run.pixelPitch)
        o["pixel_pitch_m"] = *run.pixelPitch;
    if (!run.model) {
        o["field_model_error"] = QString::fromStdString(run.modelError);
        return o;
    }
    QJsonArray terms;
    for (size_t t = 0; t < run.model->terms.size(); ++t)
        terms.append(termJson(run, t));
    if (run.joint) {
        const FieldJointSummary& j = *run.joint;
        QJsonArray shared;
        for (int index : j.sharedTerms)
            shared.append(index);
        o["joint_fit"] = QJsonObject{{"beads", j.beads},
                                     {"shared_terms", shared},
                                     {"start_cost", j.startCost},
                                     {"final_cost", j.finalCost},
                                     {"separate_cost", j.separateCost},
                                     {"iterations", j.iterations},
                                     {"termination", QString::fromStdString(j.termination)},
                                     {"seconds", j.seconds},
                                     {"adopted", j.adopted},
                                     {"joint_covariance", j.jointCovariance},
                                     {"note", QString::fromStdString(j.note)}};
    }
    o["field_model"] = QJsonObject{{"ordering", zernike::orderingName(run.ordering)},
                                   {"centre_x_px", run.model->options.centreX},
                                   {"centre_y_px", run.model->options.centreY},
                                   {"radius_px", run.model->options.radius},
                                   {"samples", run.model->samples},
                                   {"terms", terms}};
    return o;
}

FieldTermGrid fieldTermGrid(const FieldRun& run, size_t term, int samples)
{
    if (!run.model || term >= run.model->terms.size())
        throw std::invalid_argument("no field model term " + std::to_string(term) + " to sample");
    FieldTermGrid grid;
    grid.step = double(std::max(run.width, run.height) - 1) / double(std::max(samples - 1, 1));
    const int columns = int(std::floor((run.width - 1) / grid.step + 1e-9)) + 1,
              rows = int(std::floor((run.height - 1) / grid.step + 1e-9)) + 1;
    grid.values = Image(columns, rows);
    grid.sigmas = Image(columns, rows);
    for (int r = 0; r < rows; ++r)
        for (int c = 0; c < columns; ++c) {
            const FieldValue v = evaluateFieldTerm(*run.model, int(term), grid.x0 + c * grid.step, grid.y0 + r * grid.step);
            grid.values.at(r, c) = v.value;
            grid.sigmas.at(r, c) = v.sigma;
        }
    return grid;
}

namespace {

std::vector<FitsKeyword> fieldMapKeywords(const FieldRun& run, const FieldTermGrid& grid)
{
    std::vector<FitsKeyword> k = {{"BUNIT", std::string("waves"), "field model of each term"},
                                  {"ZORDERNG", std::string(zernike::orderingName(run.ordering)), "Zernike ordering of TERMk"}};
    for (size_t t = 0; t < run.modelTerms.size(); ++t)
        k.push_back({"TERM" + std::to_string(t + 1), (long long)run.modelTerms[t], "term of plane " + std::to_string(t + 1)});
    for (int axis : {1, 2}) {
        const std::string n = std::to_string(axis);
        const double origin = axis == 1 ? grid.x0 : grid.y0;
        k.push_back({"CTYPE" + n, std::string("PIXEL"), axis == 1 ? "image column" : "image row (row 0 at the bottom)"});
        k.push_back({"CRPIX" + n, 1.0, "reference sample"});
        k.push_back({"CRVAL" + n, origin, "[pixel] position of the reference sample"});
        k.push_back({"CDELT" + n, grid.step, "[pixel] step per sample"});
        if (!run.pixelPitch)
            continue;
        k.push_back({"CTYPE" + n + "A", std::string("POSITION"), "position in the sample plane"});
        k.push_back({"CUNIT" + n + "A", std::string("um"), ""});
        k.push_back({"CRPIX" + n + "A", 1.0, "reference sample"});
        k.push_back({"CRVAL" + n + "A", origin * *run.pixelPitch * 1e6, "[um] position of the reference sample"});
        k.push_back({"CDELT" + n + "A", grid.step * *run.pixelPitch * 1e6, "[um] step per sample"});
    }
    k.push_back({"FLDCX", run.model->options.centreX, "[pixel] field model's centre x"});
    k.push_back({"FLDCY", run.model->options.centreY, "[pixel] field model's centre y"});
    k.push_back({"FLDRAD", run.model->options.radius, "[pixel] field model's radius"});
    return k;
}

} // namespace

std::vector<std::pair<std::string, QByteArray>> fieldRunFiles(const FieldRun& run)
{
    std::vector<std::pair<std::string, QByteArray>> files{{"beads.csv", fieldBeadsCsv(run)},
                                                          {"field.json", QJsonDocument(fieldRunJson(run)).toJson()}};
    if (run.model)
        files.emplace_back("field-maps.fits", fieldMapsFits(run));
    return files;
}

QByteArray fieldMapsFits(const FieldRun& run, int samples)
{
    if (!run.model)
        throw std::invalid_argument("no field model to write: " + run.modelError);
    std::vector<Image> values, sigmas;
    FieldTermGrid grid;
    for (size_t t = 0; t < run.model->terms.size(); ++t) {
        grid = fieldTermGrid(run, t, samples);
        values.push_back(grid.values);
        sigmas.push_back(grid.sigmas);
    }
    const std::vector<FitsKeyword> keywords = fieldMapKeywords(run, grid);
    return QByteArray::fromStdString(fitsBytes({FitsHdu{"", values, {}, keywords}, FitsHdu{"SIGMA", sigmas, {}, keywords}}, true));
}

namespace {

// One term of a field JSON's model as fitFieldModel gave it (order, coefficients, covariance).
FieldTermFit termFromJson(const QJsonObject& term, const std::string& source)
{
    FieldTermFit fit;
    fit.order = term["field_order"].toInt(-1);
    for (const QJsonValue v : term["coefficients_waves"].toArray())
        fit.coefficients.push_back(v.toDouble(NAN));
    for (const QJsonValue v : term["covariance"].toArray())
        fit.covariance.push_back(v.toDouble(NAN));
    const size_t n = fit.coefficients.size();
    if (fit.order < 0 || fit.order > zernike::kMaxOrder || n != size_t(zernike::termCount(fit.order)) || fit.covariance.size() != n * n)
        throw std::runtime_error(source + ": field model term " + std::to_string(term["index"].toInt()) + " is malformed");
    return fit;
}

} // namespace

Truth fieldTruthFromJson(const QJsonObject& field, double x, double y, const std::string& source)
{
    const QJsonObject m = field["field_model"].toObject();
    if (m.isEmpty())
        throw std::runtime_error(source + ": no field model (" + field["field_model_error"].toString().toStdString() + ")");
    FieldModel model;
    model.options.centreX = m["centre_x_px"].toDouble(NAN);
    model.options.centreY = m["centre_y_px"].toDouble(NAN);
    model.options.radius = m["radius_px"].toDouble(NAN);
    if (!std::isfinite(model.options.centreX) || !std::isfinite(model.options.centreY) || !(model.options.radius > 0.0))
        throw std::runtime_error(source + ": the field model's centre or radius is missing");
    Truth truth;
    truth.ordering = m["ordering"].toString() == QLatin1String("ansi") ? ZernikeOrdering::Ansi : ZernikeOrdering::Noll;
    truth.note = "the field model of " + source + " at (" + cell(x) + ", " + cell(y) + ") pixels";
    for (const QJsonValue v : m["terms"].toArray()) {
        model.terms = {termFromJson(v.toObject(), source)};
        truth.terms.push_back({v.toObject()["index"].toInt(), evaluateFieldTerm(model, 0, x, y).value});
    }
    if (truth.terms.empty())
        throw std::runtime_error(source + ": the field model has no terms");
    return truth;
}

std::string fieldSummary(const FieldRun& run)
{
    std::map<std::string, int> counts;
    int fitted = 0;
    for (const FieldBead& bead : run.beads) {
        ++counts[bead.status];
        fitted += bead.coefficients.empty() ? 0 : 1;
    }
    std::string text = std::to_string(run.beads.size()) + " beads found in " + std::to_string(run.width) + " x "
                       + std::to_string(run.height) + " pixels (threshold " + cell(run.detection.threshold) + ", background "
                       + cell(run.detection.background) + ", noise " + cell(run.detection.noise) + ")\n";
    for (const auto& [status, count] : counts)
        text += "  " + status + ": " + std::to_string(count) + "\n";
    char line[160];
    std::snprintf(line, sizeof line, "%d beads fitted with %d jobs; the whole run %.2f s (%.2f beads/s)\n", fitted, run.jobs, run.seconds,
                  run.seconds > 0.0 ? fitted / run.seconds : 0.0);
    text += line;
    if (!run.model)
        return text + "no field model: " + run.modelError + "\n";
    if (run.joint) {
        const FieldJointSummary& j = *run.joint;
        std::snprintf(
            line, sizeof line,
            "joint fit of %d beads: cost %.6g at the two-step model, %.6g after (%s, %d iterations, %.2f s; separate fits %.6g)\n", j.beads,
            j.startCost, j.finalCost, j.termination.c_str(), j.iterations, j.seconds, j.separateCost);
        text += line + j.note + "\n";
    }
    text += "field model over " + std::to_string(run.model->samples) + " beads, radius " + cell(run.model->options.radius) + " px:\n";
    for (size_t t = 0; t < run.model->terms.size(); ++t) {
        const FieldTermFit& fit = run.model->terms[t];
        const int outliers = int(std::count(fit.outlier.begin(), fit.outlier.end(), true));
        std::snprintf(line, sizeof line, "  %s %d %-22s field order %d, reduced chi2 %.3g, %d outliers\n",
                      zernike::orderingName(run.ordering), run.modelTerms[t],
                      zernike::name(zernike::modeFromIndex(run.modelTerms[t], run.ordering)).c_str(), fit.order, fit.reducedChiSquare,
                      outliers);
        text += line;
    }
    return text;
}

} // namespace wfs
