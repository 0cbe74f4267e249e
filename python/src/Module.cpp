// wavefront_studio: numpy in, results out, over the same core workflow as wavefront-cli and the desktop
// program (engine/Workflow.h). The binding converts and waits; core reads, checks, prepares and fits.
#include "PyResult.h"
#include "Stack.h"

#include "engine/Presets.h"
#include "engine/Workflow.h"
#include "io/Fits.h"
#include "io/ImageReaders.h"
#include "io/ResultJson.h"

#include <QJsonDocument>

#include <chrono>
#include <filesystem>
#include <thread>

namespace wfs::python {

void bindFasth(py::module_& m);
void bindField(py::module_& m);

namespace {

// A session's settings and inputs (Settings.from_session).
struct PySettings {
    Session session;
    std::string path;
    std::vector<std::string> notes;
};

py::dict metadataDict(const DatasetMetadata& m)
{
    py::dict d;
    auto put = [&](const char* key, const std::optional<double>& v) { d[key] = v ? py::cast(*v) : py::none(); };
    put("wavelength", m.wavelength);
    put("pixel_pitch", m.pixelPitch);
    put("pixel_angle", m.pixelAngle);
    put("f_number", m.fNumber);
    put("na", m.numericalAperture);
    d["immersion"] = m.immersionIndex;
    put("aperture", m.aperture);
    put("sampling", m.samplingQ);
    put("z_step", m.zStep);
    put("focus_plane", m.focusPlane);
    d["data_unit"] = m.dataUnit;
    put("saturation", m.saturationLevel);
    put("read_noise", m.readNoise);
    py::dict origin;
    for (const auto& [key, value] : m.origin)
        origin[py::str(key)] = value;
    d["origin"] = origin;
    return d;
}

py::list defocusList(const Dataset& data)
{
    py::list list;
    for (int k = 0; k < int(data.planes.size()); ++k) {
        const PlaneDefocus d = planeDefocus(data, k);
        list.append(d.kind == PlaneDefocus::Kind::Waves    ? py::str(QString::number(d.value, 'g', 10).toStdString() + "w")
                    : d.kind == PlaneDefocus::Kind::Length ? py::str(QString::number(d.value, 'g', 10).toStdString() + "m")
                                                           : py::object(py::none()));
    }
    return list;
}

} // namespace

Dataset datasetFrom(const py::object& stack, std::vector<std::string>& notes, Origin origin)
{
    if (py::isinstance<PyStack>(stack)) {
        const PyStack& s = stack.cast<const PyStack&>();
        notes = s.notes;
        return s.dataset;
    }
    if (!py::isinstance<py::array>(stack) && !py::isinstance<py::list>(stack) && !py::isinstance<py::tuple>(stack))
        throw py::type_error("stack: expected a NumPy array (planes, ny, nx) or a wavefront_studio.Stack, got "
                             + py::str(py::type::of(stack).attr("__name__")).cast<std::string>());
    Dataset dataset;
    py::array array;
    if (py::isinstance<py::array>(stack)) {
        array = py::reinterpret_borrow<py::array>(stack);
    } else {
        // NumPy's conversion of a list, whose refusal (a ragged list, one nested deeper than 32) is said as NumPy says it.
        try {
            array = py::module_::import("numpy").attr("asarray")(stack);
        } catch (py::error_already_set& e) {
            if (!e.matches(PyExc_ValueError) && !e.matches(PyExc_TypeError))
                throw;
            throw py::value_error("stack: the list is not a (planes, ny, nx) or (ny, nx) array of numbers: " + std::string(e.what()));
        }
    }
    ImageFileContent content = contentFromArray(array, "array", origin);
    const std::vector<DatasetMessage> messages = addImages(dataset, std::move(content), "array");
    notes = takeMessages(messages);
    return dataset;
}

namespace {

// A session's settings over other data: its metadata, preparation and model; its planes' use and defocus
// when the plane counts agree.
void takeSessionData(Session& session, Dataset data)
{
    const Dataset& saved = session.dataset;
    data.metadata = saved.metadata;
    data.preprocess = saved.preprocess;
    if (data.planes.size() == saved.planes.size())
        for (size_t k = 0; k < data.planes.size(); ++k) {
            data.planes[k].use = saved.planes[k].use;
            data.planes[k].defocus = saved.planes[k].defocus;
        }
    session.dataset = std::move(data);
}

// Runs the request on the engine's worker thread; this thread waits without the GIL, takes it back to
// hand every accepted iterate to `progress` and to let Python see a signal (Ctrl-C: KeyboardInterrupt).
// An exception from either cancels the fit, waits for the worker, and propagates.
std::shared_ptr<FitResult> runEngine(const ReconstructionRequest& request, const py::object& progress)
{
    ReconstructionEngine engine;
    {
        py::gil_scoped_release nogil;
        engine.start(request);
    }
    size_t delivered = 0;
    auto stop = [&] {
        py::gil_scoped_release nogil;
        engine.cancel();
        engine.wait();
    };
    for (bool running = engine.isRunning();; running = engine.isRunning()) {
        try {
            if (!progress.is_none()) {
                std::vector<HistoryRow> rows;
                {
                    py::gil_scoped_release nogil;
                    rows = engine.history(delivered);
                }
                delivered += rows.size();
                for (const HistoryRow& row : rows)
                    progress(row.iteration, row.cost, row.gradientMaxNorm);
            }
            if (PyErr_CheckSignals() != 0)
                throw py::error_already_set();
        } catch (...) {
            stop();
            throw;
        }
        if (!running)
            break;
        py::gil_scoped_release nogil;
        // Waits of 2 ms: the fit's end is seen soon (well under 1 % of a 128 x 128 fit), and the waiting
        // thread wakes rarely enough not to take the worker's core (a 0.5 ms poll slowed fits measurably).
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    {
        py::gil_scoped_release nogil;
        engine.wait();
    }
    if (!engine.error().empty())
        throw std::runtime_error(engine.error());
    return std::const_pointer_cast<FitResult>(engine.sharedResult());
}

} // namespace

// bad_pixels are typed in the arrays' orientation: with origin="upper" their rows count from the top, and
// become core's (from the bottom) here. A row outside the planes is left as typed, for core to refuse by name.
void flipBadPixelRows(Session& session, const OptionSource& options, Origin origin)
{
    if (origin != Origin::Upper || !options.has("bad-pixels") || session.dataset.planes.empty())
        return;
    const int height = session.dataset.planes.front().raw.height;
    for (auto& [col, row] : session.dataset.preprocess.badPixels)
        if (row >= 0 && row < height)
            row = height - 1 - row;
}

namespace {

std::shared_ptr<PyResult> reconstruct(const py::object& stack, const py::object& settings, const py::object& progress, bool psfAnalysis,
                                      const py::object& originValue, const py::kwargs& kwargs)
{
    const KeywordOptions options(kwargs, "reconstruct");
    // A Stack's own origin unless one is given: what read(..., origin=) chose goes on to the result's arrays.
    const Origin origin = originArgument(originValue, py::isinstance<PyStack>(stack) ? stack.cast<const PyStack&>().origin : Origin::Lower);
    if (!progress.is_none() && !PyCallable_Check(progress.ptr()))
        throw py::type_error("progress: expected a callable progress(iteration, cost, gradient_norm)");
    Session session;
    auto result = std::make_shared<PyResult>();
    const bool fromSession = !settings.is_none();
    if (fromSession) {
        if (!py::isinstance<PySettings>(settings))
            throw py::type_error("settings: expected a wavefront_studio.Settings, got "
                                 + py::str(py::type::of(settings).attr("__name__")).cast<std::string>()
                                 + (py::isinstance<py::str>(settings) || py::hasattr(settings, "__fspath__")
                                        ? "; for a session file give settings=Settings.from_session(path)"
                                        : ""));
        const PySettings& s = settings.cast<const PySettings&>();
        session = s.session;
        result->notes = s.notes;
        if (!stack.is_none())
            takeSessionData(session, datasetFrom(stack, result->notes, origin));
    } else {
        if (stack.is_none())
            throw py::type_error("reconstruct() needs a stack (an array or a Stack) or settings=Settings.from_session(path)");
        session.dataset = datasetFrom(stack, result->notes, origin);
    }
    // From here on core works as in wavefront-cli's process: the binding's share is what comes before and after.
    const auto started = std::chrono::steady_clock::now();
    applyRunOptions(options, session, fromSession);
    flipBadPixelRows(session, options, origin);
    PreparedRun run = prepareRun(session);
    for (std::string& note : takeMessages(run.messages))
        result->notes.push_back(std::move(note));
    session.dataset = std::move(run.dataset);
    session.model.order = run.request.spec.basis.maxOrder; // the stages' last, as a saved session says
    run.request.analysis.psfAnalysis = psfAnalysis;
    result->fit = runEngine(run.request, progress);
    result->coreSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    result->request = std::move(run.request);
    result->context = std::move(run.context);
    result->metadata = session.dataset.metadata;
    result->origin = origin;
    if (!session.dataset.files.empty() && std::filesystem::exists(session.dataset.files.front().path))
        result->session = std::move(session);
    for (const std::string& w : result->fit->warnings)
        if (PyErr_WarnEx(PyExc_UserWarning, w.c_str(), 2) != 0)
            throw py::error_already_set();
    if (result->fit->solver.termination == Termination::Failed
        && PyErr_WarnEx(PyExc_RuntimeWarning, ("the fit failed: " + result->fit->solver.message).c_str(), 2) != 0)
        throw py::error_already_set();
    return result;
}

} // namespace

PyStack readStack(const std::vector<std::string>& paths, Origin origin)
{
    PyStack stack;
    stack.origin = origin;
    for (const std::string& path : paths) {
        std::error_code error;
        if (!std::filesystem::exists(path, error)) {
            try {
                requireReadableFile(path); // core's message
            } catch (const ImageReadError& e) {
                PyErr_SetString(PyExc_FileNotFoundError, e.what());
                throw py::error_already_set();
            }
        }
    }
    const std::vector<DatasetMessage> messages = addFiles(stack.dataset, paths);
    std::string errors;
    for (const DatasetMessage& m : messages)
        if (m.level == MessageLevel::Error)
            errors += (errors.empty() ? "" : "; ") + m.text;
    if (!errors.empty())
        throw ImageReadError(errors);
    stack.notes = takeMessages(messages);
    return stack;
}

namespace {

PyStack simulate(const std::string& preset, std::uint64_t seed, int grid, int order, bool noise, double photons, const py::object& origin)
{
    PresetOptions options;
    options.seed = seed;
    options.photons = photons;
    options.grid = grid;
    options.order = order;
    options.noise = noise;
    PyStack stack;
    stack.origin = originArgument(origin);
    PresetSession simulated;
    try { // on a worker, so that Ctrl-C stops it between the simulation's steps and planes
        simulated = runInterruptible([&](const std::atomic<bool>& cancel) {
            PresetOptions withCancel = options;
            withCancel.cancel = &cancel;
            return presetSession(preset, withCancel); // the cube wavefront-cli simulate writes, read back as a file is
        });
    } catch (const std::invalid_argument& e) {
        throw OptionError(e.what());
    }
    stack.dataset = std::move(simulated.session.dataset);
    stack.notes = takeMessages(simulated.messages);
    stack.notes.push_back("simulated data: " + simulated.noiseDescription);
    const QByteArray truth = QJsonDocument(truthToJson(simulated.truth, simulated.wavelength)).toJson(QJsonDocument::Compact);
    stack.truth = py::module_::import("json").attr("loads")(truth.toStdString());
    return stack;
}

std::string optionsDoc()
{
    std::string doc;
    for (const OptionHelp& o : KeywordOptions::all())
        doc += "    " + KeywordOptions::pythonName(o.name.toStdString())
               + (o.valueName.isEmpty() ? "=True" : "=" + o.valueName.toStdString()) + ": " + o.description.toStdString() + "\n";
    return doc;
}

// Stack: planes with their metadata.
void bindStack(py::module_& m)
{
    py::class_<PyStack>(
        m, "Stack",
        "PSF planes with their metadata: from read(), simulate(), simulate_field() or a session. Pass it to reconstruct() or field().")
        .def_property_readonly(
            "data",
            [](const PyStack& s) {
                std::vector<const Image*> planes;
                for (const DatasetPlane& p : s.dataset.planes)
                    planes.push_back(&p.raw);
                for (const Image* p : planes)
                    if (p->width != planes.front()->width || p->height != planes.front()->height)
                        throw py::value_error("the planes differ in size; see planes");
                return imageStack(planes, s.origin);
            },
            "The planes as read, shape (planes, ny, nx), float64 (a copy), rows as `origin` says (row 0 at the bottom for "
            "'lower', at the top for 'upper').")
        .def_property_readonly(
            "origin", [](const PyStack& s) { return originName(s.origin); },
            "'lower' or 'upper': how `data` orders rows (read(), simulate()); reconstruct() returns its arrays the same way "
            "unless told otherwise.")
        .def_property_readonly(
            "metadata", [](const PyStack& s) { return metadataDict(s.dataset.metadata); },
            "What the files' headers and sidecars say (SI units; None where unknown), and where each value came from.")
        .def_property_readonly(
            "defocus", [](const PyStack& s) { return defocusList(s.dataset); },
            "Each plane's defocus as the metadata give it ('1w', '9e-07m'), None where unknown.")
        .def_property_readonly(
            "files",
            [](const PyStack& s) {
                std::vector<std::string> files;
                for (const DatasetFile& f : s.dataset.files)
                    files.push_back(f.path);
                return files;
            },
            "The files read.")
        .def_readonly("notes", &PyStack::notes, "What reading said (warnings were issued as UserWarning).")
        .def_readonly("truth", &PyStack::truth,
                      "simulate(), simulate_field(): the injected aberrations (the CLI's truth-file schema); None otherwise.")
        .def("__len__", [](const PyStack& s) { return s.dataset.planes.size(); })
        .def("__repr__", [](const PyStack& s) {
            const Image& first = s.dataset.planes.front().raw;
            return "<wavefront_studio.Stack " + std::to_string(s.dataset.planes.size()) + " planes of " + std::to_string(first.width)
                   + " x " + std::to_string(first.height) + ">";
        });
}

// Settings: a saved session's inputs and settings.
void bindSettings(py::module_& m)
{
    py::class_<PySettings>(m, "Settings", "A saved session's inputs and settings (metadata, preparation, model, solver).")
        .def_static(
            "from_session",
            [](const py::object& pathObject) {
                const std::string path = pathArgument(pathObject);
                PySettings s;
                OpenedSession opened = openSession(path);
                if (opened.session.simulated) // no files to re-read: the command line remakes the preset's planes
                    throw py::value_error(path + ": holds a fit of the " + opened.session.simulated->preset
                                          + " preset's simulated data, not of image files; simulate(\"" + opened.session.simulated->preset
                                          + "\", ...) makes the same planes, and wavefront-cli reconstruct --session re-runs it");
                s.session = std::move(opened.session);
                s.path = path;
                s.notes = takeMessages(opened.messages);
                return s;
            },
            py::arg("path"), R"doc(
Opens a session file (wavefront-cli --save-session, the desktop program's Save Session) and re-reads its
inputs. reconstruct(settings=...) then fits them with its settings, keyword options overriding them, as
wavefront-cli reconstruct --session does; a stack given too replaces the inputs (keeping the session's
metadata, preparation, and the planes' defocus when the plane counts agree). Raises OSError for a file that
cannot be read, is malformed or too new, ValueError for a session of a preset's simulated data.)doc")
        .def_readonly("path", &PySettings::path)
        .def_readonly("notes", &PySettings::notes, "What opening said.")
        .def_property_readonly(
            "stack",
            [](const PySettings& s) {
                PyStack stack;
                stack.dataset = s.session.dataset;
                return stack;
            },
            "The session's inputs as a Stack.")
        .def_property_readonly(
            "order", [](const PySettings& s) { return s.session.model.order; }, "The model's Zernike order.")
        .def_property_readonly(
            "metadata", [](const PySettings& s) { return metadataDict(s.session.dataset.metadata); }, "The session's metadata.");
}

// reconstruct(), with the keyword options listed from core's option lists (the settings table).
void bindReconstruct(py::module_& m)
{
    const std::string reconstructDoc =
        R"doc(reconstruct(stack=None, *, settings=None, progress=None, psf_analysis=False, origin=None, **options) -> Result

Fits the Zernike coefficients (and the rest of the model) to `stack`, through core's workflow, as
`wavefront-cli reconstruct` does.

stack: a NumPy array (planes, ny, nx) or (ny, nx) of any integer or float dtype, C or Fortran order, its
    rows as `origin` says; or a Stack from read(), simulate() or Settings.stack (its metadata are used,
    options override them).
settings: Settings.from_session(path): the session's inputs and settings (options override them).
progress: called as progress(iteration, cost, gradient_norm) for every accepted iterate (gradient_norm is
    the max-norm the stopping rule uses); an exception it raises cancels the fit and propagates.
psf_analysis: also analyse the fitted PSF (analyse_psf() does it later when not).
origin: how the rows of an array run, and how the Result's arrays (data, model, residual,
    normalized_residual, phase, amplitude, zonal_remainder) and bad_pixels' rows are given:
    'lower': row 0 is the bottom row (FITS orientation, as astropy reads a cube; the program's own);
    'upper': row 0 is the top row (as tifffile, PIL and imageio read a TIFF or PNG, and as matplotlib's
    imshow shows an array by default), so an image read that way is passed without flipping.
    Default: a Stack's own origin (read(..., origin=)), else 'lower'. A Stack's planes are held the
    program's way whatever its origin. Another value raises ValueError.

The fit runs on core's worker thread without the GIL; Ctrl-C (KeyboardInterrupt) cancels it cleanly.
Raises ValueError for a bad or missing setting (core's message), OSError for files, TypeError for an
unknown option. Data warnings are issued as UserWarning.

options: wavefront-cli's flags with '_' for '-'; a str is parsed by core ("633nm"), a number is in SI
units, a list is joined by commas, a switch is True:
)doc" + optionsDoc();
    m.def("reconstruct", &wfs::python::reconstruct, py::arg("stack") = py::none(), py::kw_only(), py::arg("settings") = py::none(),
          py::arg("progress") = py::none(), py::arg("psf_analysis") = false, py::arg("origin") = py::none(), reconstructDoc.c_str());
}

// read(), simulate(), psf_stack(), analyse_psf().
void bindFunctions(py::module_& m)
{
    m.def(
        "read",
        [](const py::object& paths, const py::object& origin) {
            const Origin rows = originArgument(origin);
            std::vector<std::string> list;
            if (py::isinstance<py::str>(paths) || py::isinstance<py::bytes>(paths) || py::hasattr(paths, "__fspath__"))
                list.push_back(pathArgument(paths));
            else
                for (const py::handle p : py::iter(paths))
                    list.push_back(pathArgument(p));
            return readStack(list, rows);
        },
        py::arg("path"), py::kw_only(), py::arg("origin") = "lower", R"doc(
Reads FITS (images, cubes, HDUs), TIFF (pages) or PNG files, with their metadata (FITS keywords, a JSON
sidecar, an acquisition log), as wavefront-cli --input does. `path` is one path or a list (planes in file
order). Returns a Stack. Raises FileNotFoundError / OSError with core's message for a file that is missing
or unreadable.

Every file is read into the program's orientation (row 0 at the bottom: a FITS file's first row; a TIFF
or PNG's last stored row). origin chooses how Stack.data hands the rows out: 'lower' (default) row 0 at
the bottom, as astropy reads a FITS file; 'upper' row 0 at the top, as tifffile or PIL read a TIFF or PNG.
reconstruct() of the Stack returns its arrays the same way. Another value raises ValueError.)doc");

    m.def("simulate", &wfs::python::simulate, py::arg("preset") = "demo", py::kw_only(), py::arg("seed") = PresetOptions{}.seed,
          py::arg("grid") = 0, py::arg("order") = 0, py::arg("noise") = true, py::arg("photons") = 0.0, py::arg("origin") = "lower", R"doc(
Synthetic PSF planes with known aberrations, as wavefront-cli simulate writes them (the same FITS cube,
read back in memory): preset demo, oof, pupil, vectorial or air (NA 0.85 dry, over a 100-count camera bias);
seed of the noise; grid and order 0 for the preset's own; noise=False for data equal to the model; photons
per plane, 0 for the preset's own (oof has none). Returns a Stack whose truth holds the injected aberrations.
origin: how Stack.data orders rows, 'lower' (default, row 0 at the bottom, as astropy reads the FITS
cube) or 'upper' (row 0 at the top, as tifffile reads a TIFF). Raises ValueError for an unknown preset,
bad options or another origin.)doc");

    m.def(
        "psf_stack",
        [](const PyResult& r, const py::object& z, const py::object& pixel, int crop, const py::object& origin) {
            const Origin rows = originArgument(origin, r.origin);
            if (!z.is_none()) {
                if (!py::isinstance<py::str>(z))
                    throw py::type_error("z: expected a str START:STOP:STEP with units (\"-2um:2um:0.1um\" or \"-1w:1w:0.25w\"), got "
                                         + py::str(py::type::of(z).attr("__name__")).cast<std::string>());
                std::string why; // core's reason (a range beyond a defocus's plausible one, too many planes)
                if (!defocusRangeFromText(z.cast<std::string>(), why))
                    throw py::value_error("z: " + why + ", at most 1001 planes; got '" + z.cast<std::string>() + "'");
            }
            if (!pixel.is_none() && !py::isinstance<py::str>(pixel) && !(PyNumber_Check(pixel.ptr()) && !py::isinstance<py::bool_>(pixel)))
                throw py::type_error("pixel: expected a length (\"50nm\", or a number in metres), got "
                                     + py::str(py::type::of(pixel).attr("__name__")).cast<std::string>());
            return makePsfStack(r, z, pixel, crop, rows);
        },
        py::arg("result"), py::arg("z") = py::none(), py::kw_only(), py::arg("pixel") = py::none(), py::arg("crop") = 0,
        py::arg("origin") = py::none(), R"doc(
The fitted system's 3-D PSF (pupil and detector as fitted), as wavefront-cli --psf-stack-out makes it.
z: "START:STOP:STEP" in the fitted planes' unit, lengths ("-2um:2um:0.1um") or waves ("-1w:1w:0.25w");
default 21 planes over the fitted planes' range. pixel: the output pixel size ("50nm"; needs the data's
pixel size). crop: output size in pixels, odd or even (0 = the data's). The optical axis is at index
N // 2 on both axes of each plane ((N-1)/2 for odd N) in either origin; light that leaves the image leaves it
(computed on a larger field and cropped). origin: how PsfStack.planes orders rows, 'lower' (row 0 at the bottom,
FITS) or 'upper' (row 0 at the top, tifffile/PIL); default the result's. Returns a PsfStack.)doc");

    m.def(
        "analyse_psf",
        [](std::shared_ptr<PyResult> r, const py::object& origin) {
            const Origin rows = originArgument(origin, r->origin);
            psfAnalysisOf(*r);
            return PyPsfAnalysis{r->fit, rows};
        },
        py::arg("result"), py::kw_only(), py::arg("origin") = py::none(), R"doc(
The fitted PSF against the diffraction-limited PSF of the same pupil: Strehl, FWHM, encircled energy, MTF
(as wavefront-cli --psf-analysis). Made once and kept with the result. origin: how the PSF images
(fitted_psf, diffraction_psf) order rows, 'lower' or 'upper'; default the result's. Returns a PsfAnalysis.)doc");
}

} // namespace

} // namespace wfs::python

PYBIND11_MODULE(wavefront_studio, m)
{
    using namespace wfs;
    using namespace wfs::python;
    m.doc() = R"doc(Wavefront Studio: wavefront reconstruction (phase retrieval) from PSF images, over the same core as
wavefront-cli and the desktop program.

    import wavefront_studio as wfs
    result = wfs.reconstruct(stack, wavelength="633nm", pixel_scale="5.5um", f_number=20, defocus=["-1w", "0", "1w"])
    result.coefficients, result.phase, result.rms, result.save("fit.json")

Arrays are (planes, ny, nx). By default row 0 is the bottom row (origin="lower": FITS orientation, as
astropy reads a cube, the program's own); every function that takes or returns images accepts
origin="upper" for arrays whose row 0 is the top row (as tifffile, PIL and imageio read a TIFF or PNG, and
matplotlib's imshow shows by default), so they pass without flipping. Keyword options have wavefront-cli's names with '_' for
'-', its units (core's parser: "605nm", "0.3um"; a bare number is in SI units) and its defaults.)doc";
    m.attr("__version__") = WFS_VERSION;
    registerExceptions();

    bindStack(m);
    bindSettings(m);
    bindResult(m);
    bindReconstruct(m);
    bindFunctions(m);
    bindFasth(m);
    bindField(m);
}
