// wavefront_studio's whole field (issue 43): field() runs core's field pipeline (engine/FieldRun.h) on a wide-field
// stack; field_detect(), field_fit_bead() and field_describe() are its three steps, so that the beads' fits can run as
// independent tasks (Dask, a Slurm array) from plain inputs: each task loads the stack (a path or an array, with the
// same options), re-runs the deterministic detection, fits its one bead and returns a dict; field_describe() puts those
// dicts back into the detected run and describes the field, which gives field()'s result.
#include "Stack.h"

#include "engine/FieldRun.h"
#include "engine/FieldSimulation.h"

#include <QJsonDocument>

#include <algorithm>
#include <cmath>

namespace wfs::python {

namespace {

struct PyFieldRun {
    FieldRun run;
    std::vector<std::string> notes;
};

constexpr const char* kNotRun = "not-run"; // detectField's status of a bead to fit

bool isPath(const py::handle& stack)
{
    return py::isinstance<py::str>(stack) || py::isinstance<py::bytes>(stack) || py::hasattr(stack, "__fspath__");
}

// A path, or a non-empty list or tuple of paths (the planes in file order), as read() takes them; empty when not.
std::vector<std::string> pathsOf(const py::object& stack)
{
    if (isPath(stack))
        return {pathArgument(stack)};
    std::vector<std::string> paths;
    if (!py::isinstance<py::list>(stack) && !py::isinstance<py::tuple>(stack))
        return paths;
    for (const py::handle item : stack) {
        if (!isPath(item))
            return {};
        paths.push_back(pathArgument(item));
    }
    return paths;
}

// The field's session: the stack (a path, an array or a Stack) with the options applied, as wavefront-cli field loads it.
Session fieldSession(const py::object& stack, const py::object& originValue, const py::kwargs& kwargs, const char* function,
                     std::vector<std::string>& notes)
{
    const KeywordOptions options(kwargs, function);
    Session session;
    Origin origin = Origin::Lower;
    if (const std::vector<std::string> paths = pathsOf(stack); !paths.empty()) {
        origin = originArgument(originValue);
        PyStack read = readStack(paths, origin);
        session.dataset = std::move(read.dataset);
        notes = std::move(read.notes);
    } else {
        origin = originArgument(originValue, py::isinstance<PyStack>(stack) ? stack.cast<const PyStack&>().origin : Origin::Lower);
        session.dataset = datasetFrom(stack, notes, origin);
    }
    applyRunOptions(options, session, false);
    flipBadPixelRows(session, options, origin);
    return session;
}

FieldRunOptions runOptions(int crop, double threshold, std::optional<int> fieldOrder, std::optional<int> jobs, bool jointFit = false)
{
    FieldRunOptions options; // crop and threshold are checked by core's detection
    options.jointFit = jointFit;
    options.detection.crop = crop;
    options.detection.threshold = threshold;
    // The field model takes a bad order as a reason for no model; asked here, as wavefront-cli field asks --field-order.
    if (fieldOrder && (*fieldOrder < 0 || *fieldOrder > zernike::kMaxOrder))
        throw py::value_error("field_order: must be None (chosen per term) or between 0 and " + std::to_string(zernike::kMaxOrder)
                              + " (got " + std::to_string(*fieldOrder) + ")");
    options.model.order = fieldOrder.value_or(-1);
    if (jobs && *jobs < 1)
        throw py::value_error("jobs: must be at least 1 (got " + std::to_string(*jobs) + ")");
    options.jobs = jobs.value_or(0);
    return options;
}

py::object optionalNumber(const std::optional<double>& v)
{
    return v ? py::object(py::float_(*v)) : py::object(py::none());
}

// A fit's figure; None for a bead that was not fitted.
py::object fitNumber(const FieldBead& bead, double v)
{
    return bead.coefficients.empty() ? py::object(py::none()) : py::object(py::float_(v));
}

// The fit's items of a bead's dict: its figures, None where it was not fitted.
void addFit(py::dict& bead, const FieldBead& b)
{
    py::dict coefficients;
    py::list fixed;
    for (const CoefficientResult& c : b.coefficients) {
        coefficients[py::int_(c.index)] = py::make_tuple(c.waves, c.uncertaintyWaves);
        if (!c.free)
            fixed.append(c.index);
    }
    bead["coefficients"] = coefficients;
    bead["fixed"] = fixed;
    bead["reduced_chi_square"] = fitNumber(b, b.reducedChiSquare);
    bead["rms_waves"] = fitNumber(b, b.rmsWaves);
    bead["termination"] = b.coefficients.empty() ? py::object(py::none()) : py::object(py::str(b.termination));
    bead["iterations"] = b.coefficients.empty() ? py::object(py::none()) : py::object(py::int_(b.iterations));
    bead["seconds"] = fitNumber(b, b.seconds);
    bead["cost"] = fitNumber(b, b.cost);
    bead["parameters"] = b.parameters; // the fit's problem parameters: where the joint fit starts this bead
}

py::dict beadDict(const FieldRun& run, size_t index)
{
    const FieldBead& b = run.beads[index];
    const DetectedBead& d = b.detection;
    py::dict bead;
    bead["index"] = index;
    bead["x_px"] = d.x;
    bead["y_px"] = d.y;
    bead["x_um"] = optionalNumber(b.xMicrons);
    bead["y_um"] = optionalNumber(b.yMicrons);
    bead["column"] = d.column;
    bead["row"] = d.row;
    bead["status"] = b.status;
    bead["reason"] = b.reason;
    bead[kFieldSignificanceKey] = d.significance;
    bead[py::str(fieldBrightnessKey(run))] = d.brightness;
    bead["width_px"] = d.width;
    bead["sharpest_plane"] = d.sharpestPlane;
    addFit(bead, b);
    bead["in_model"] = b.inModel;
    return bead;
}

py::list beadList(const FieldRun& run)
{
    py::list beads;
    for (size_t i = 0; i < run.beads.size(); ++i)
        beads.append(beadDict(run, i));
    return beads;
}

double numberOrNan(const py::handle& v)
{
    return v.is_none() ? std::nan("") : v.cast<double>();
}

// A fitted bead's coefficients from its dict: {index: (waves, sigma)}, the indices in `fixed` held by the fit.
std::vector<CoefficientResult> coefficientsFrom(const py::dict& bead, ZernikeOrdering ordering, std::optional<double> wavelength)
{
    std::vector<int> fixed;
    for (const py::handle index : bead["fixed"])
        fixed.push_back(index.cast<int>());
    std::vector<CoefficientResult> list;
    for (const auto& [key, value] : bead["coefficients"].cast<py::dict>()) {
        CoefficientResult c;
        c.index = py::int_(py::reinterpret_borrow<py::object>(key)).cast<int>(); // an int, or its text after a JSON round trip
        c.mode = zernike::modeFromIndex(c.index, ordering);
        c.name = zernike::name(c.mode);
        const py::sequence pair = py::reinterpret_borrow<py::sequence>(value);
        c.waves = pair[0].cast<double>();
        c.uncertaintyWaves = numberOrNan(pair[1]);
        c.radians = c.waves * 2.0 * M_PI;
        c.nm = c.waves * wavelength.value_or(std::nan("")) * 1e9;
        c.free = std::find(fixed.begin(), fixed.end(), c.index) == fixed.end();
        list.push_back(c);
    }
    std::sort(list.begin(), list.end(), [](const CoefficientResult& a, const CoefficientResult& b) { return a.index < b.index; });
    return list;
}

// The detected bead a dict names (its index), checked to be the same bead: the dicts must come from this stack and detection.
FieldBead& detectedBead(FieldRun& run, const py::dict& bead)
{
    const long index = bead["index"].cast<long>();
    if (index < 0 || size_t(index) >= run.beads.size())
        throw py::value_error("beads: bead " + std::to_string(index) + " is not among the " + std::to_string(run.beads.size())
                              + " beads this stack's detection finds");
    FieldBead& detected = run.beads[size_t(index)];
    if (bead["x_px"].cast<double>() != detected.detection.x || bead["y_px"].cast<double>() != detected.detection.y)
        throw py::value_error("beads: bead " + std::to_string(index) + " is not at (" + py::repr(bead["x_px"]).cast<std::string>() + ", "
                              + py::repr(bead["y_px"]).cast<std::string>() + ") in this stack's detection: the beads come from "
                              + "another stack or other options (crop, threshold, settings)");
    return detected;
}

// A bead's fit (field_fit_bead's dict, also after a JSON round trip) put back into the detected run.
void applyBeadDict(FieldRun& run, const py::dict& bead, std::optional<double> wavelength)
{
    FieldBead& b = detectedBead(run, bead);
    const std::string status = bead["status"].cast<std::string>();
    if (status == b.status)
        return; // as detected: set aside, or not fitted
    const std::string failed = beadStatusName(BeadStatus::FitFailed);
    if (b.status != kNotRun || (status != "ok" && status != "poor-fit" && status != failed))
        throw py::value_error("beads: bead " + py::str(bead["index"]).cast<std::string>() + " is '" + b.status
                              + "' in this stack's detection, and a fit cannot make it '" + status + "'");
    b.status = status;
    b.reason = bead["reason"].cast<std::string>();
    if (status == failed) {
        b.detection.status = BeadStatus::FitFailed;
        return;
    }
    b.coefficients = coefficientsFrom(bead, run.ordering, wavelength);
    b.reducedChiSquare = numberOrNan(bead["reduced_chi_square"]);
    b.rmsWaves = numberOrNan(bead["rms_waves"]);
    b.termination = bead["termination"].cast<std::string>();
    b.iterations = bead["iterations"].cast<int>();
    b.seconds = bead["seconds"].cast<double>();
    b.cost = numberOrNan(bead["cost"]);
    b.parameters = bead["parameters"].cast<std::vector<double>>();
}

FieldRun detectInterruptibly(const Session& session, const BeadDetectionOptions& detection)
{
    return runInterruptible([&](const std::atomic<bool>&) { return detectField(session, detection); });
}

void warnWithoutModel(const FieldRun& run)
{
    if (!run.model && PyErr_WarnEx(PyExc_RuntimeWarning, ("no field model: " + run.modelError).c_str(), 2) != 0)
        throw py::error_already_set();
}

// Beads to fit that no dict fitted (a task that failed or was left out): the model is of the others.
void warnUnfitted(const FieldRun& run)
{
    std::string unfitted;
    for (size_t i = 0; i < run.beads.size(); ++i)
        if (run.beads[i].status == kNotRun)
            unfitted += (unfitted.empty() ? "" : ", ") + std::to_string(i);
    if (!unfitted.empty()
        && PyErr_WarnEx(PyExc_UserWarning,
                        ("beads " + unfitted + " were not fitted (no dict of theirs): the field is described without them").c_str(), 2)
               != 0)
        throw py::error_already_set();
}

std::shared_ptr<PyFieldRun> field(const py::object& stack, int crop, double threshold, std::optional<int> fieldOrder,
                                  std::optional<int> jobs, bool jointFit, const py::object& origin, const py::kwargs& kwargs)
{
    auto result = std::make_shared<PyFieldRun>();
    const Session session = fieldSession(stack, origin, kwargs, "field", result->notes);
    const FieldRunOptions options = runOptions(crop, threshold, fieldOrder, jobs, jointFit);
    result->run = runInterruptible([&](const std::atomic<bool>& cancel) {
        FieldRunOptions withCancel = options;
        withCancel.cancel = &cancel;
        return runField(session, withCancel);
    });
    for (std::string& note : takeMessages(result->run.messages))
        result->notes.push_back(std::move(note));
    warnWithoutModel(result->run);
    return result;
}

py::list fieldDetect(const py::object& stack, int crop, double threshold, const py::object& origin, const py::kwargs& kwargs)
{
    std::vector<std::string> notes;
    const Session session = fieldSession(stack, origin, kwargs, "field_detect", notes);
    return beadList(detectInterruptibly(session, runOptions(crop, threshold, {}, {}).detection));
}

// One bead of the detected run fitted (a set-aside one is left as detected): its dict.
py::dict fitOneBead(const Session& session, FieldRun& run, const py::handle& bead, int crop)
{
    if (py::isinstance<py::bool_>(bead) || !py::hasattr(bead, "__index__"))
        throw py::type_error("bead: expected a bead's index (an int) or a list of them, got a "
                             + py::str(py::type::of(bead).attr("__name__")).cast<std::string>());
    const long index = py::int_(py::reinterpret_borrow<py::object>(bead)).cast<long>();
    if (index < 0 || size_t(index) >= run.beads.size())
        throw py::index_error("bead: " + std::to_string(index) + " is not a bead of this stack: its detection finds "
                              + std::to_string(run.beads.size()));
    FieldBead& b = run.beads[size_t(index)];
    if (b.status == kNotRun)
        takeMessages(runInterruptible([&](const std::atomic<bool>& cancel) { return fitFieldBead(session, crop, b, &cancel); }));
    return beadDict(run, size_t(index));
}

// A bead (an index: its dict) or several (a sequence of indices: a list of dicts, fitted one after the other).
py::object fieldFitBead(const py::object& stack, const py::object& bead, int crop, double threshold, const py::object& origin,
                        const py::kwargs& kwargs)
{
    if (py::isinstance<py::str>(bead))
        throw py::type_error("bead: expected a bead's index (an int) or a list of them, got a str");
    std::vector<std::string> notes;
    const Session session = fieldSession(stack, origin, kwargs, "field_fit_bead", notes);
    FieldRun run = detectInterruptibly(session, runOptions(crop, threshold, {}, {}).detection);
    if (!py::isinstance<py::sequence>(bead))
        return fitOneBead(session, run, bead, crop);
    py::list fitted;
    for (const py::handle index : bead)
        fitted.append(fitOneBead(session, run, index, crop));
    return fitted;
}

std::shared_ptr<PyFieldRun> fieldDescribe(const py::object& stack, const py::iterable& beads, int crop, double threshold,
                                          std::optional<int> fieldOrder, bool jointFit, const py::object& origin, const py::kwargs& kwargs)
{
    auto result = std::make_shared<PyFieldRun>();
    const Session session = fieldSession(stack, origin, kwargs, "field_describe", result->notes);
    const FieldRunOptions options = runOptions(crop, threshold, fieldOrder, {}, jointFit);
    result->run = detectInterruptibly(session, options.detection);
    for (const py::handle bead : beads) {
        if (!py::isinstance<py::dict>(bead))
            throw py::type_error("beads: expected dicts from field_fit_bead() or field_detect(), got "
                                 + py::str(py::type::of(bead).attr("__name__")).cast<std::string>());
        applyBeadDict(result->run, py::reinterpret_borrow<py::dict>(bead), session.dataset.metadata.wavelength);
    }
    warnUnfitted(result->run);
    runInterruptible([&](const std::atomic<bool>& cancel) { // runField's last steps
        FieldRunOptions withCancel = options;
        withCancel.cancel = &cancel;
        describeField(session, result->run, withCancel);
    });
    warnWithoutModel(result->run);
    return result;
}

PyStack simulatedFieldStack(const FieldSimulationOptions& options, const py::object& originValue)
{
    PyStack stack;
    stack.origin = originArgument(originValue);
    const FieldSimulation simulated = runInterruptible([&](const std::atomic<bool>& cancel) {
        FieldSimulationOptions withCancel = options;
        withCancel.cancel = &cancel;
        return simulateField(withCancel);
    });
    // The cube read back as wavefront-cli field reads the file that simulate --preset field writes.
    stack.dataset = simulatedFieldSession(simulated, kFieldSimulationOrder).dataset;
    const QByteArray truth = QJsonDocument(fieldTruthJson(simulated)).toJson(QJsonDocument::Compact);
    stack.truth = py::module_::import("json").attr("loads")(truth.toStdString());
    return stack;
}

py::object jsonObject(const QJsonObject& o)
{
    return py::module_::import("json").attr("loads")(QJsonDocument(o).toJson(QJsonDocument::Compact).toStdString());
}

// The field model as field.json has it ("field_model"), its coefficients and covariance as NumPy arrays.
py::object modelDict(const FieldRun& run)
{
    if (!run.model)
        return py::none();
    const py::dict model = jsonObject(fieldRunJson(run))["field_model"].cast<py::dict>();
    const py::module_ numpy = py::module_::import("numpy");
    for (const py::handle term : model["terms"]) {
        const py::array coefficients = numpy.attr("asarray")(term["coefficients_waves"], "float64");
        term["coefficients_waves"] = coefficients;
        term["covariance"] = numpy.attr("reshape")(numpy.attr("asarray")(term["covariance"], "float64"),
                                                   py::make_tuple(coefficients.size(), coefficients.size()));
    }
    return model;
}

// The model's term with this index (in the fit's ordering), as FieldModel::terms counts them.
int modelTerm(const FieldRun& run, int index)
{
    if (!run.model)
        throw py::value_error("no field model: " + run.modelError);
    const auto it = std::find(run.modelTerms.begin(), run.modelTerms.end(), index);
    if (it == run.modelTerms.end())
        throw py::value_error("term " + std::to_string(index) + " is not modelled; the model's terms are "
                              + py::repr(py::cast(run.modelTerms)).cast<std::string>());
    return int(it - run.modelTerms.begin());
}

// evaluateFieldTerm at (x, y): floats for numbers, arrays (broadcast) for arrays.
py::tuple fieldValue(const PyFieldRun& r, int index, const py::object& x, const py::object& y)
{
    const int term = modelTerm(r.run, index);
    const py::module_ numpy = py::module_::import("numpy");
    const py::tuple xy = numpy.attr("broadcast_arrays")(numpy.attr("asarray")(x, "float64"), numpy.attr("asarray")(y, "float64"));
    const auto xs = py::array_t<double, py::array::c_style | py::array::forcecast>::ensure(xy[0]);
    const auto ys = py::array_t<double, py::array::c_style | py::array::forcecast>::ensure(xy[1]);
    py::array_t<double> values(xs.request().shape), sigmas(xs.request().shape);
    for (py::ssize_t i = 0; i < xs.size(); ++i) {
        const FieldValue v = evaluateFieldTerm(*r.run.model, term, xs.data()[i], ys.data()[i]);
        values.mutable_data()[i] = v.value;
        sigmas.mutable_data()[i] = v.sigma;
    }
    if (xs.ndim() == 0)
        return py::make_tuple(values.data()[0], sigmas.data()[0]);
    return py::make_tuple(values, sigmas);
}

py::object jointDict(const FieldRun& run)
{
    if (!run.joint)
        return py::none();
    const FieldJointSummary& j = *run.joint;
    py::dict joint;
    joint["note"] = j.note;
    joint["beads"] = j.beads;
    joint["shared_terms"] = j.sharedTerms;
    joint["start_cost"] = j.startCost;
    joint["final_cost"] = j.finalCost;
    joint["separate_cost"] = j.separateCost;
    joint["iterations"] = j.iterations;
    joint["termination"] = j.termination;
    joint["seconds"] = j.seconds;
    joint["adopted"] = j.adopted;
    joint["joint_covariance"] = j.jointCovariance;
    return joint;
}

std::string fieldRepr(const PyFieldRun& r)
{
    int ok = 0;
    for (const FieldBead& bead : r.run.beads)
        ok += bead.status == "ok" ? 1 : 0;
    return "<wavefront_studio.FieldResult " + std::to_string(r.run.beads.size()) + " beads, " + std::to_string(ok) + " ok, "
           + (r.run.model ? "a model of " + std::to_string(r.run.modelTerms.size()) + " terms>" : "no model>");
}

void bindFieldResult(py::module_& m)
{
    py::class_<PyFieldRun, std::shared_ptr<PyFieldRun>>(
        m, "FieldResult", "A whole field's run (field(), field_describe()): every bead found, its fit, and the field model.")
        .def_property_readonly(
            "beads", [](const PyFieldRun& r) { return beadList(r.run); },
            "One dict per bead found, brightest first: index, x_px, y_px (x the column, y the row, row 0 at the bottom, whatever "
            "the origin), x_um, y_um (None without a pixel pitch), column, row, status ('ok', 'poor-fit', 'fit-failed', or why "
            "it was set aside: 'edge', 'neighbour', 'saturated', 'aggregate'), reason, significance_sigma (robust sigmas), "
            "brightness_<unit> (in the data's unit: brightness_counts, brightness_photons, ...), width_px, "
            "sharpest_plane, coefficients {index: (waves, sigma)}, fixed (indices the fit held), reduced_chi_square, "
            "rms_waves, termination, iterations, seconds, cost (None where not fitted), parameters (the fit's, where the joint "
            "fit starts the bead), in_model.")
        .def_property_readonly(
            "model", [](const PyFieldRun& r) { return modelDict(r.run); },
            "The field model as field.json's field_model: centre_x_px, centre_y_px, radius_px, samples, and terms (index, name, "
            "field_order, coefficients_waves and covariance as NumPy arrays, reduced_chi_square, covariance_scale, "
            "outlier_beads); None when there is none (model_error says why).")
        .def_property_readonly(
            "model_error", [](const PyFieldRun& r) { return r.run.modelError; }, "Why there is no field model; '' when there is one.")
        .def_property_readonly(
            "terms", [](const PyFieldRun& r) { return r.run.modelTerms; }, "The modelled terms' indices, in `ordering`.")
        .def_property_readonly(
            "ordering", [](const PyFieldRun& r) { return std::string(zernike::orderingName(r.run.ordering)); },
            "The coefficients' ordering ('noll' or 'ansi').")
        .def_property_readonly(
            "width", [](const PyFieldRun& r) { return r.run.width; }, "The field's width, pixels.")
        .def_property_readonly(
            "height", [](const PyFieldRun& r) { return r.run.height; }, "The field's height, pixels.")
        .def_property_readonly(
            "pixel_pitch", [](const PyFieldRun& r) { return r.run.pixelPitch; }, "Metres (the metadata's), or None.")
        .def_property_readonly(
            "jobs", [](const PyFieldRun& r) { return r.run.jobs; }, "Beads fitted at once.")
        .def_property_readonly(
            "seconds", [](const PyFieldRun& r) { return r.run.seconds; }, "The run's wall-clock time (field() only).")
        .def_property_readonly(
            "joint", [](const PyFieldRun& r) { return jointDict(r.run); },
            "What the joint fit did: note, beads, shared_terms, start_cost, final_cost, separate_cost, iterations, termination, "
            "seconds, adopted, joint_covariance (the model's covariance is the joint fit's); None when it did not run "
            "(joint_fit=False, or no model).")
        .def_readonly("notes", &PyFieldRun::notes, "What loading and the first bead's preparation said.")
        .def("field_value", &fieldValue, py::arg("term"), py::arg("x"), py::arg("y"), R"doc(
The model of term `term` (its index in `ordering`, e.g. 4 for Noll defocus) at field position (x, y), pixels (x the
column, y the row from the bottom, as x_px and y_px), in waves, and its 1-sigma from the model's covariance. Returns
(value, sigma): floats for numbers, NumPy arrays for arrays (broadcast). Raises ValueError without a model or for a
term the model does not describe.)doc")
        .def(
            "csv", [](const PyFieldRun& r) { return fieldBeadsCsv(r.run).toStdString(); },
            "The per-bead table, as wavefront-cli field writes beads.csv.")
        .def(
            "json", [](const PyFieldRun& r) { return QJsonDocument(fieldRunJson(r.run)).toJson().toStdString(); },
            "The run as wavefront-cli field writes field.json.")
        .def(
            "summary", [](const PyFieldRun& r) { return fieldSummary(r.run); }, "wavefront-cli field's report.")
        .def("__repr__", &fieldRepr);
}

const char* const kFieldDoc =
    R"doc(field(stack, *, crop=32, threshold=5.0, field_order=None, jobs=None, origin=None, **options) -> FieldResult

A whole field, as wavefront-cli field runs it: every bead of a wide-field z-stack found, the ones that cannot be fitted
alone set aside with a reason, every other fitted in its crop x crop square with the same settings (in parallel, without
the GIL), and each aberration term described as a smooth function of field position (double Zernike).

stack: a path (FITS, TIFF) or a list of them (the planes in file order), a NumPy array (planes, ny, nx) with its
    rows as `origin` says, or a Stack (read(), simulate_field()).
crop: the side of each bead's square, pixels (even). threshold: a bead's detection significance, robust sigmas.
field_order: the field Zernikes' radial order of every term (0..15); None: per term the lowest BIC over 0..4.
jobs: beads fitted at once; None: hardware threads / threads per fit.
joint_fit: then fit the beads in the model at once with the shared terms given by the field model, whose
    coefficients replace the two-step model's where that lowers the summed cost (FieldResult.joint says what it did).
options: reconstruct()'s keyword options (wavelength, defocus, order, objective, ...), every bead fitted with them.

Bead positions are the program's (x the column, y the row counted from the bottom) whatever the origin. No bead fitted
gives a FieldResult without a model (model_error says why; also a RuntimeWarning). Raises ValueError for planes of
different sizes, a bad crop, threshold or setting.)doc";

const char* const kStepsDoc = R"doc(

field()'s steps for beads fitted as independent tasks (Dask, a Slurm array). Each takes the stack (a path, an array
or a Stack) and the same crop, threshold, origin and options as field(); each re-runs the detection (deterministic and
cheap), so a task needs only plain, picklable inputs: the path or array, the options and a bead's index. The beads
fitted by field_fit_bead() in any order and process, then field_describe(), give field()'s result.)doc";

const char* const kDetectDoc = R"doc(field_detect(stack, *, crop=32, threshold=5.0, origin=None, **options) -> list of dict

The beads found, as FieldResult.beads has them; those to fit have status 'not-run'.)doc";

const char* const kFitBeadDoc = R"doc(field_fit_bead(stack, bead, *, crop=32, threshold=5.0, origin=None, **options) -> dict

Bead `bead` (its index in field_detect()'s list) fitted: its dict, as FieldResult.beads has it (a bead set aside is
returned as detected). A list of indices gives a list of dicts, fitted one after the other after one detection.
Raises IndexError for an index the detection does not have.)doc";

const char* const kDescribeDoc =
    R"doc(field_describe(stack, beads, *, crop=32, threshold=5.0, field_order=None, joint_fit=True, origin=None, **options) -> FieldResult

The run rebuilt from the beads' dicts (field_fit_bead()'s, in any order, any subset, also after a JSON round trip:
a bead without one stays 'not-run', with a UserWarning) and the field described (and jointly fitted) as field() does.
Raises ValueError for a dict of another stack or detection.)doc";

void bindFieldFunctions(py::module_& m)
{
    const BeadDetectionOptions detection;
    m.def("field", &field, py::arg("stack"), py::kw_only(), py::arg("crop") = detection.crop, py::arg("threshold") = detection.threshold,
          py::arg("field_order") = py::none(), py::arg("jobs") = py::none(), py::arg("joint_fit") = FieldRunOptions{}.jointFit,
          py::arg("origin") = py::none(), kFieldDoc);
    m.def("field_detect", &fieldDetect, py::arg("stack"), py::kw_only(), py::arg("crop") = detection.crop,
          py::arg("threshold") = detection.threshold, py::arg("origin") = py::none(), (std::string(kDetectDoc) + kStepsDoc).c_str());
    m.def("field_fit_bead", &fieldFitBead, py::arg("stack"), py::arg("bead"), py::kw_only(), py::arg("crop") = detection.crop,
          py::arg("threshold") = detection.threshold, py::arg("origin") = py::none(), (std::string(kFitBeadDoc) + kStepsDoc).c_str());
    m.def("field_describe", &fieldDescribe, py::arg("stack"), py::arg("beads"), py::kw_only(), py::arg("crop") = detection.crop,
          py::arg("threshold") = detection.threshold, py::arg("field_order") = py::none(),
          py::arg("joint_fit") = FieldRunOptions{}.jointFit, py::arg("origin") = py::none(),
          (std::string(kDescribeDoc) + kStepsDoc).c_str());
}

void bindSimulateField(py::module_& m)
{
    const FieldSimulationOptions d;
    m.def(
        "simulate_field",
        [](int width, int height, int beads, int doublets, int saturated, int edge, int planes, int crop, double photons, bool noise,
           std::uint64_t seed, const py::object& origin) {
            const FieldSimulationOptions o{width, height, beads, doublets, saturated, edge, planes, crop, photons, noise, seed, nullptr};
            return simulatedFieldStack(o, origin);
        },
        py::kw_only(), py::arg("width") = d.width, py::arg("height") = d.height, py::arg("beads") = d.beads,
        py::arg("doublets") = d.doublets, py::arg("saturated") = d.saturated, py::arg("edge") = d.edge, py::arg("planes") = d.planes,
        py::arg("crop") = d.crop, py::arg("photons") = d.photons, py::arg("noise") = d.noise, py::arg("seed") = d.seed,
        py::arg("origin") = "lower", R"doc(
A simulated bead slide, as wavefront-cli simulate --preset field writes it (the same cube, read back in memory): a
wide-field z-stack (600 nm, NA 0.9, Q 2, `planes` planes from -1 to +1 wave) of `beads` single beads at random
positions whose aberrations vary across the field, beside planted beads to be set aside: `doublets` pairs 2 pixels
apart, `saturated` beads and `edge` beads; `photons` per bead and plane, noise=False for none, `seed`; beads placed so
that singles' `crop` squares hold no other bead. Returns a Stack whose truth is the truth file's (the planted beads and
the field's formula). Fit it as bench field does: field(stack, order=4, objective="poisson"). Raises ValueError for a
field too small for its beads.)doc");
}

} // namespace

void bindField(py::module_& m)
{
    bindFieldResult(m);
    bindFieldFunctions(m);
    bindSimulateField(m);
    // Dask, multiprocessing and pickle send a function by its module and name; pybind11's functions do not pickle (their
    // self is a capsule), so the field's functions are also plain Python functions of this module that call them.
    const py::module_ builtins = py::module_::import("builtins");
    const char* const source = R"(
def _picklable(function):
    def call(*args, **kwargs):
        return function(*args, **kwargs)
    call.__name__ = call.__qualname__ = function.__name__
    call.__doc__ = function.__doc__
    call.__wrapped__ = function  # help() shows the binding's signature line
    return call
for _name in ("field", "field_detect", "field_fit_bead", "field_describe", "simulate_field"):
    globals()[_name] = _picklable(globals()[_name])
del _name, _picklable
)";
    builtins.attr("exec")(builtins.attr("compile")(source, "<wavefront_studio field>", "exec"), m.attr("__dict__"));
}

} // namespace wfs::python
