#include "PyResult.h"

#include "ResultExports.h"
#include "engine/BackendFactory.h"
#include "engine/Report.h"
#include "io/OutputTransaction.h"
#include "io/ResultJson.h"

namespace wfs::python {

namespace {

std::shared_ptr<const void> owner(const PyResult& r)
{
    return r.fit;
}

// The coefficient table as a NumPy structured array.
py::object coefficientTable(const FitResult& fit)
{
    py::list rows;
    for (const CoefficientResult& c : fit.coefficients)
        rows.append(py::make_tuple(c.index, c.mode.n, c.mode.m, c.name, c.waves, c.nm, c.radians, c.uncertaintyWaves,
                                   c.uncertaintyWaves * fit.wavelength * 1e9, c.free));
    const py::list dtype = py::cast(std::vector<py::tuple>{
        py::make_tuple("index", "i4"), py::make_tuple("n", "i4"), py::make_tuple("m", "i4"), py::make_tuple("name", "U40"),
        py::make_tuple("waves", "f8"), py::make_tuple("nm", "f8"), py::make_tuple("rad", "f8"), py::make_tuple("uncertainty_waves", "f8"),
        py::make_tuple("uncertainty_nm", "f8"), py::make_tuple("free", "?")});
    return py::module_::import("numpy").attr("array")(rows, py::arg("dtype") = dtype);
}

std::vector<const Image*> planeImages(const FitResult& fit, Image PlaneResult::*member)
{
    std::vector<const Image*> images;
    for (const PlaneResult& p : fit.planes)
        images.push_back(&(p.*member));
    return images;
}

// A phase unit by core's names ("rad", "waves", "nm"), through core's word parser.
PhaseUnit phaseUnit(const std::string& text)
{
    return parseSettingOption<PhaseUnit>(QString::fromStdString(text), "phase_unit");
}

void save(PyResult& r, const py::object& pathObject, const py::object& what, const py::object& phaseUnitText, bool wrapped, bool float32,
          bool overwrite, const py::object& stack)
{
    const std::string path = pathArgument(pathObject);
    const std::string key = what.is_none() ? std::string() : what.cast<std::string>();
    QByteArray bytes;
    if (key == "session") {
        if (!r.session)
            throw py::value_error("session: a session keeps the paths of its input files; this fit's data came from an array "
                                  "(save the data to a file and reconstruct from wfs.read(path))");
        Session session = *r.session;
        session.result = resultToJson(*r.fit);
        session.resultParameters = r.fit->parameterValues;
        bytes = sessionBytes(path, session);
    } else {
        // The export named, else the one the file name suggests (core's table: io/ExportKinds.h).
        const ResultExport* entry = key.empty() ? resultExportForFileName(path) : findResultExport(key);
        if (!entry && key.empty())
            throw py::value_error(path + ": say which export with what= (the file name does not tell)");
        if (!entry) {
            std::string keys;
            for (const ResultExport& e : resultExports())
                keys += std::string(keys.empty() ? "" : ", ") + e.key;
            throw py::value_error("what: '" + key + "' is not one of " + keys + ", session");
        }
        ResultExportSources sources{*r.fit, r.context};
        if (!phaseUnitText.is_none())
            sources.fitsUnit = sources.pngUnit = phaseUnit(phaseUnitText.cast<std::string>());
        sources.wrapped = wrapped;
        sources.float32 = float32;
        std::optional<PyPsfStack> made;
        if (exportNeedsPsfStack(entry->kind)) {
            made = stack.is_none() ? makePsfStack(r, py::none(), py::none(), 0, r.origin) : stack.cast<PyPsfStack>();
            sources.stack = &made->stack;
        }
        if (entry->kind == ExportKind::PsfAnalysisCsv || entry->kind == ExportKind::PsfFits)
            psfAnalysisOf(r);
        if (isPictureExport(entry->kind))
            ensureGuiApplication();
        try {
            bytes = resultExportBytes(entry->kind, path, sources);
        } catch (const std::runtime_error& e) {
            throw py::value_error(path + ": " + e.what());
        }
    }
    OutputTransaction transaction(overwrite, "overwrite=True"); // the message names the keyword, not --force
    transaction.add(path, std::move(bytes));
    transaction.commit();
}

py::dict solverDict(const FitResult& fit)
{
    py::dict d;
    d["termination"] = terminationName(fit.solver.termination);
    d["message"] = fit.solver.message;
    d["iterations"] = fit.solver.iterations;
    d["initial_cost"] = fit.solver.initialCost;
    d["final_cost"] = fit.solver.finalCost;
    d["gradient_max_norm"] = fit.solver.gradientMaxNorm;
    d["cost_evaluations"] = fit.solver.costEvaluations;
    d["gradient_evaluations"] = fit.solver.gradientEvaluations;
    d["seconds"] = fit.solver.seconds;
    return d;
}

} // namespace

PyPsfStack makePsfStack(const PyResult& r, const py::object& z, const py::object& pixel, int crop, Origin origin)
{
    const Problem problem(fittedSpec(r.request.spec, *r.fit));
    PsfStackRequest request;
    PyPsfStack out;
    out.origin = origin;
    out.unit = psfStackUnit(problem);
    if (z.is_none()) {
        request.defocus = defaultPsfStackDefocus(r.request.spec);
    } else {
        const std::string text = z.cast<std::string>();
        const auto range = defocusRangeFromText(text);
        if (!range)
            throw py::value_error("z: expected START:STOP:STEP in one unit, lengths (-2um:2um:0.1um) or waves (-1w:1w:0.25w), "
                                  "STOP >= START, at most 1001 planes; got '"
                                  + text + "'");
        if (const std::string error = psfStackRangeError(problem, *range); !error.empty())
            throw py::value_error("z: " + error);
        request.defocus = range->values;
    }
    if (!pixel.is_none()) {
        if (!r.metadata.pixelPitch)
            throw py::value_error("pixel: needs the data's pixel size (pixel_scale as a length)");
        request.pixelScale = parsePlausibleOption(QString::fromStdString(py::str(pixel).cast<std::string>()), "pixel", Setting::PixelPitch)
                             / *r.metadata.pixelPitch;
    }
    request.crop = crop;
    try { // on a worker, so that Ctrl-C stops it between chunks of planes
        out.stack = runInterruptible([&](const std::atomic<bool>& cancel) {
            request.cancel = &cancel;
            return psfStack(problem, r.fit->solver.parameters, request);
        });
    } catch (const std::invalid_argument& e) {
        throw py::value_error(e.what());
    }
    out.defocus = request.defocus;
    return out;
}

const PsfAnalysis& psfAnalysisOf(PyResult& r)
{
    if (!r.fit->psf) {
        auto problem = std::make_shared<const Problem>(fittedSpec(r.request.spec, *r.fit));
        py::gil_scoped_release nogil;
        auto evaluator = makeEvaluator(r.request.backend, problem, r.request.evaluator, r.request.gradient);
        r.fit->psf = analysePsf(*evaluator, r.fit->solver.parameters);
    }
    return *r.fit->psf;
}

namespace {

using ResultClass = py::class_<PyResult, std::shared_ptr<PyResult>>;

// Result's arrays: the coefficient table, the maps and the per-plane stacks.
void bindResultArrays(ResultClass& result)
{
    result
        .def_property_readonly(
            "coefficients", [](const PyResult& r) { return coefficientTable(*r.fit); },
            "The Zernike coefficients (every term but piston) as a NumPy structured array with fields index (in the "
            "ordering), n, m, name, waves, nm, rad, uncertainty_waves, uncertainty_nm (one standard deviation; NaN "
            "when not available, 0 for fixed terms) and free.")
        .def_property_readonly(
            "phase", [](const PyResult& r) { return imageView(r.fit->phaseMap, owner(r), r.origin); },
            "The aberration phase (radians) over the pupil's bounding box, NaN outside the pupil (a read-only view); pupil y "
            "up, its rows as `origin` says.")
        .def_property_readonly(
            "amplitude",
            [](const PyResult& r) -> py::object {
                if (r.fit->pupilAmplitude.isEmpty())
                    return py::none();
                return imageView(r.fit->pupilAmplitude, owner(r), r.origin);
            },
            "The fitted field amplitude over the same box as phase (a read-only view), or None when the illumination was not fitted.")
        .def_property_readonly(
            "zonal_remainder",
            [](const PyResult& r) -> py::object {
                if (r.fit->zonalRemainderMap.isEmpty())
                    return py::none();
                return imageView(r.fit->zonalRemainderMap, owner(r), r.origin);
            },
            "With a zonal phase: what the Zernike terms do not describe (radians, a read-only view); None otherwise.")
        .def_property_readonly(
            "data", [](const PyResult& r) { return imageStack(planeImages(*r.fit, &PlaneResult::data), r.origin); },
            "The data as fitted (prepared), NaN where not used; shape (planes, ny, nx), rows as `origin` says.")
        .def_property_readonly(
            "model", [](const PyResult& r) { return imageStack(planeImages(*r.fit, &PlaneResult::model), r.origin); },
            "The model images in the data's layout; shape (planes, ny, nx), rows as `origin` says.")
        .def_property_readonly(
            "residual", [](const PyResult& r) { return imageStack(planeImages(*r.fit, &PlaneResult::residual), r.origin); },
            "data - model, NaN where not used; shape (planes, ny, nx).")
        .def_property_readonly(
            "normalized_residual",
            [](const PyResult& r) { return imageStack(planeImages(*r.fit, &PlaneResult::normalizedResidual), r.origin); },
            "(data - model) / sigma of the objective's noise model; shape (planes, ny, nx).")
        .def_property_readonly(
            "chi2_per_plane",
            [](const PyResult& r) {
                std::vector<double> chi2;
                for (const PlaneResult& p : r.fit->planes)
                    chi2.push_back(p.reducedChiSquare);
                return vectorArray(chi2);
            },
            "Reduced chi-square per plane: sum (D - M)^2 / (max(M, 0) + read noise^2) per used pixel (NaN for least squares).");
}

// Result's numbers and records: the figures of merit, the conventions, the solver's record, the parameters.
void bindResultFigures(ResultClass& result)
{
    result
        .def_property_readonly(
            "origin", [](const PyResult& r) { return originName(r.origin); },
            "'lower' (row 0 of every array at the bottom, FITS) or 'upper' (row 0 at the top, tifffile/PIL): "
            "reconstruct's origin; psf_stack() and analyse_psf() follow it unless told otherwise.")
        .def_property_readonly(
            "rms", [](const PyResult& r) { return r.fit->rmsWaves; },
            "Wavefront RMS in waves, piston, tip and tilt removed, and defocus too when defocus_removed is True (the default for "
            "planes at different defocus, where the fitted defocus is where focus sits in the stack; remove_defocus=True forces it).")
        .def_property_readonly(
            "defocus_removed", [](const PyResult& r) { return r.fit->defocusRemoved; },
            "Whether rms, pv and strehl have defocus removed (with_defocus then holds the figures with it).")
        .def_property_readonly(
            "with_defocus",
            [](const PyResult& r) -> py::object {
                if (!r.fit->withDefocus)
                    return py::none();
                py::dict d;
                d["rms"] = r.fit->withDefocus->rmsWaves;
                d["pv"] = r.fit->withDefocus->pvWaves;
                d["strehl"] = r.fit->withDefocus->strehl;
                return d;
            },
            "The figures with defocus kept, {'rms', 'pv' (waves), 'strehl'}, when defocus_removed; else None.")
        .def_property_readonly(
            "describes_data", [](const PyResult& r) { return r.fit->verdict.describesData; },
            "False when the model does not describe the data (a plane's chi2/pixel above 10); verdict says why.")
        .def_property_readonly(
            "verdict", [](const PyResult& r) { return r.fit->verdict.text; },
            "Why the model does not describe the data, with the likely cause; empty when it does (or least squares cannot tell).")
        .def_property_readonly(
            "assumptions",
            [](const PyResult& r) {
                py::list list;
                for (const Assumption& a : r.fit->assumptions) {
                    py::dict d;
                    d["setting"] = a.setting;
                    d["value"] = a.value;
                    d["reason"] = a.reason;
                    list.append(d);
                }
                return list;
            },
            "What the run assumed where neither you nor the files said: [{'setting', 'value', 'reason'}], e.g. the focus plane.")
        .def_property_readonly(
            "rms_nm", [](const PyResult& r) { return r.fit->rmsWaves * r.fit->wavelength * 1e9; }, "Wavefront RMS in nm.")
        .def_property_readonly(
            "pv", [](const PyResult& r) { return r.fit->pvWaves; }, "Wavefront peak-to-valley in waves.")
        .def_property_readonly(
            "strehl", [](const PyResult& r) { return r.fit->strehl; },
            "Strehl ratio: peak of the aberrated PSF over the unaberrated one's.")
        .def_property_readonly(
            "wavelength", [](const PyResult& r) { return r.fit->wavelength; }, "Wavelength in metres.")
        .def_property_readonly(
            "sampling_q", [](const PyResult& r) { return r.fit->samplingQ; }, "Sampling Q = lambda F# / pixel.")
        .def_property_readonly(
            "ordering", [](const PyResult& r) { return zernike::orderingName(r.fit->ordering); }, "Zernike ordering: noll or ansi.")
        .def_property_readonly(
            "normalization", [](const PyResult& r) { return zernike::normalizationName(r.fit->normalization); },
            "Zernike normalisation: rms (Noll) or unit (R(1) = 1).")
        .def_property_readonly(
            "objective", [](const PyResult& r) { return objectiveName(r.fit->objective); }, "The objective fitted.")
        .def_property_readonly(
            "termination", [](const PyResult& r) { return terminationName(r.fit->solver.termination); },
            "converged, max-iterations, stalled, cancelled or failed.")
        .def_property_readonly(
            "iterations", [](const PyResult& r) { return r.fit->solver.iterations; }, "BFGS iterations.")
        .def_property_readonly(
            "seconds", [](const PyResult& r) { return r.fit->solver.seconds; }, "The solver's own time, seconds.")
        .def_property_readonly(
            "core_seconds", [](const PyResult& r) { return r.coreSeconds; },
            "Preparation, fit and analysis in core, seconds: what wavefront-cli spends in its process on the same fit.")
        .def_property_readonly(
            "solver", [](const PyResult& r) { return solverDict(*r.fit); }, "The solver's record as a dict.")
        .def_property_readonly(
            "parameters",
            [](const PyResult& r) {
                py::dict d;
                for (size_t i = 0; i < r.fit->parameterLabels.size(); ++i)
                    d[py::str(r.fit->parameterLabels[i])] =
                        py::make_tuple(r.fit->parameterValues[i], r.fit->parameterUncertainties[i], r.fit->parameterUnits[i]);
                return d;
            },
            "Every fitted parameter: label -> (value, uncertainty, unit).")
        .def_property_readonly(
            "warnings", [](const PyResult& r) { return r.fit->warnings; }, "The fit's warnings (also issued as UserWarning).")
        .def_property_readonly(
            "notes", [](const PyResult& r) { return r.notes; }, "Notes of loading and preparation.");
}

// Result's methods: the report, the JSON, the exports.
void bindResultMethods(ResultClass& result)
{
    result
        .def(
            "summary", [](const PyResult& r) { return fullReport(*r.fit, r.notes); },
            "The report wavefront-cli prints: the summary and the coefficient table, as text.")
        .def(
            "to_json",
            [](const PyResult& r) {
                return resultExportBytes(ExportKind::ResultJson, "", {*r.fit, r.context}).toStdString();
            },
            "The result as JSON text, the bytes wavefront-cli --json writes.")
        .def("save", &save, py::arg("path"), py::arg("what") = py::none(), py::kw_only(), py::arg("phase_unit") = py::none(),
             py::arg("wrapped") = false, py::arg("float32") = false, py::arg("overwrite") = false, py::arg("psf_stack") = py::none(),
             R"doc(
Writes one export, the same bytes as wavefront-cli's option of that name (core's table io/ExportKinds.h, one dispatch): `what` is
json, phase-out, phase-png, model-out, residual-out, csv, psf-analysis, psf-out, results-fits,
coefficients-json, pupil-out, amplitude-png, psf-stack-out, zonal-png, spline-mat-out, model-h5-out or session ('_' may
stand for '-'); without it, the file name's ending chooses (-phase.fits, .json, .csv, .png: phase-png, .fits: results-fits,
.mat: spline-mat-out, .h5: model-h5-out). psf-stack-out writes FITS, or an ImageJ TIFF (.tif) or OME-TIFF (.ome.tif)
with the voxel size.
phase_unit: rad, waves or nm (defaults as the CLI's: FITS in rad, PNG in waves). wrapped: the phase PNG
wrapped to one wave. float32: FITS images as 32-bit floats. overwrite: replace an existing file (else OSError).
psf_stack: a PsfStack from psf_stack() for psf-stack-out, spline-mat-out and model-h5-out (default: 21 planes over the
fitted range); the spline needs evenly spaced lengths (z='-1um:1um:0.05um'), square planes and the data's pixel size.
"session" needs file input (wfs.read or a session). Raises OSError when the file cannot be written.
)doc")
        .def("__repr__", [](const PyResult& r) {
            return "<wavefront_studio.Result " + std::string(terminationName(r.fit->solver.termination)) + ", "
                   + std::to_string(r.fit->solver.iterations) + " iterations, rms " + QString::number(r.fit->rmsWaves, 'g', 4).toStdString()
                   + " waves, Strehl " + QString::number(r.fit->strehl, 'g', 4).toStdString() + ">";
        });
}

void bindPsfStack(py::module_& m)
{
    py::class_<PyPsfStack>(m, "PsfStack", "The fitted system's 3-D PSF (psf_stack()).")
        .def_property_readonly(
            "planes",
            [](const PyPsfStack& s) {
                // Top row first, an even plane is the window one row higher (psfStackTopFirstPlane), as a TIFF page is:
                // the axis stays at row N // 2 of the array in either origin.
                std::vector<Image> shifted;
                if (s.origin == Origin::Upper)
                    for (size_t k = 0; k < s.stack.planes.size(); ++k)
                        shifted.push_back(psfStackTopFirstPlane(s.stack, k));
                std::vector<const Image*> planes;
                for (const Image& image : s.origin == Origin::Upper ? shifted : s.stack.planes)
                    planes.push_back(&image);
                return imageStack(planes, s.origin);
            },
            "The PSF planes, shape (planes, ny, nx), rows as `origin` says, the optical axis at [ny // 2, nx // 2] in either "
            "origin; each plane holds the light that falls in it (the unaberrated in-focus PSF sums to 1 over the larger field "
            "it was computed on).")
        .def_property_readonly(
            "origin", [](const PyPsfStack& s) { return originName(s.origin); },
            "'lower' (row 0 of planes at the bottom, FITS) or 'upper' (row 0 at the top, tifffile/PIL).")
        .def_property_readonly(
            "z", [](const PyPsfStack& s) { return vectorArray(s.defocus); }, "Each plane's defocus, in `unit`.")
        .def_property_readonly(
            "unit", [](const PyPsfStack& s) { return s.unit; }, "m (axial lengths) or waves (W020).")
        .def_property_readonly(
            "pixel_scale", [](const PyPsfStack& s) { return s.stack.pixelScale; }, "Output pixel over data pixel, as realised.")
        .def_property_readonly(
            "sampling_q", [](const PyPsfStack& s) { return s.stack.samplingQ; }, "Sampling Q of the output pixels.");
}

void bindPsfAnalysis(py::module_& m)
{
    using A = PyPsfAnalysis;
    py::class_<A>(m, "PsfAnalysis", "The fitted PSF against the diffraction-limited one of the same pupil (analyse_psf()).")
        .def_property_readonly(
            "strehl", [](const A& a) { return a.analysis().strehl; }, "Strehl ratio.")
        .def_property_readonly(
            "lambda_over_d_per_pixel", [](const A& a) { return a.analysis().lambdaOverDPerPixel; }, "lambda / D per detector pixel.")
        .def_property_readonly(
            "fwhm_fitted_pixels", [](const A& a) { return a.analysis().fwhmFittedPixels; }, "FWHM of the fitted PSF, pixels.")
        .def_property_readonly(
            "fwhm_diffraction_pixels", [](const A& a) { return a.analysis().fwhmDiffractionPixels; },
            "FWHM of the diffraction-limited PSF, pixels.")
        .def_property_readonly(
            "cutoff_cycles_per_pixel", [](const A& a) { return a.analysis().cutoffCyclesPerPixel; },
            "The incoherent cut-off, cycles per pixel (1 / Q).")
        .def_property_readonly(
            "origin", [](const A& a) { return originName(a.origin); },
            "'lower' (row 0 of the PSF images at the bottom, FITS) or 'upper' (row 0 at the top, tifffile/PIL).")
        .def_property_readonly(
            "fitted_psf",
            [](const A& a) {
                const Image& psf = a.analysis().fittedPsf;
                return imageStack({&psf}, a.origin).attr("reshape")(psf.height, psf.width);
            },
            "The fitted PSF divided by the diffraction-limited peak, rows as `origin` says.")
        .def_property_readonly(
            "diffraction_psf",
            [](const A& a) {
                const Image& psf = a.analysis().diffractionPsf;
                return imageStack({&psf}, a.origin).attr("reshape")(psf.height, psf.width);
            },
            "The diffraction-limited PSF divided by its peak, rows as `origin` says.")
        .def_property_readonly(
            "radius", [](const A& a) { return vectorArray(a.analysis().radius); }, "Radii of the profiles, pixels.")
        .def_property_readonly(
            "encircled_fitted", [](const A& a) { return vectorArray(a.analysis().encircledFitted); }, "Encircled energy of the fitted PSF.")
        .def_property_readonly(
            "encircled_diffraction", [](const A& a) { return vectorArray(a.analysis().encircledDiffraction); },
            "Encircled energy of the diffraction-limited PSF.")
        .def_property_readonly(
            "frequency", [](const A& a) { return vectorArray(a.analysis().frequency); }, "MTF frequencies, cycles per pixel.")
        .def_property_readonly(
            "mtf_fitted", [](const A& a) { return vectorArray(a.analysis().mtfFitted); }, "Radial MTF of the fitted system.")
        .def_property_readonly(
            "mtf_diffraction", [](const A& a) { return vectorArray(a.analysis().mtfDiffraction); }, "Radial MTF, diffraction-limited.")
        .def(
            "to_csv", [](const A& a) { return psfAnalysisCsv(a.analysis()); }, "The CSV wavefront-cli --psf-analysis writes.");
}

} // namespace

void bindResult(py::module_& m)
{
    ResultClass result(m, "Result", R"doc(
A finished fit (from reconstruct). Arrays are NumPy arrays with their rows as `origin` says (reconstruct's
origin: 'lower', row 0 at the bottom, FITS orientation, by default; 'upper', row 0 at the top); the
single images (phase, amplitude, zonal_remainder) are read-only views of the result's memory (copy them to
change them); the per-plane stacks (data, model, residual, normalized_residual) are copies, shape
(planes, ny, nx). Phase in radians; coefficients in waves, nm and radians at the fit's wavelength.
)doc");
    bindResultArrays(result);
    bindResultFigures(result);
    bindResultMethods(result);
    bindPsfStack(m);
    bindPsfAnalysis(m);
}

} // namespace wfs::python
