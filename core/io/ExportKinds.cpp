#include "io/ExportKinds.h"

#include "fit/PsfAnalysis.h"
#include "fit/PsfStack.h"
#include "io/Hdf5Model.h"
#include "io/ResultJson.h"
#include "io/SplineCalibration.h"
#include "optics/Zernike.h"
#include "settings/SettingsText.h"

#include <QFileInfo>
#include <QJsonDocument>
#include <QRegularExpression>

#include <algorithm>
#include <stdexcept>

namespace wfs {

namespace {

constexpr const char* kFits = "FITS image (*.fits *.fit *.fts)";

bool hasSuffix(const std::string& path, std::initializer_list<const char*> suffixes)
{
    const QString suffix = QFileInfo(QString::fromStdString(path)).suffix().toLower();
    return std::any_of(suffixes.begin(), suffixes.end(), [&](const char* s) { return suffix == QLatin1String(s); });
}

} // namespace

const std::vector<ResultExport>& resultExports()
{
    using K = ExportKind;
    static const std::vector<ResultExport> exports = {
        {K::ResultJson, "json", "Whole result as JSON", "JSON (*.json)", "-result.json", true, nullptr,
         "Write the result as JSON ('-' for stdout).", "FILE"},
        {K::CoefficientsCsv, "csv", "Coefficients as CSV", "CSV table (*.csv)", "-coefficients.csv", true, nullptr,
         "Write the coefficient table as CSV ('-' for stdout).", "FILE"},
        {K::CoefficientsJson, "coefficients-json", "Coefficients as JSON", "JSON (*.json)", "-coefficients.json", true, nullptr,
         "Write the coefficient table as JSON ('-' for stdout).", "FILE"},
        {K::PhaseFits, "phase-out", "Phase map as FITS", kFits, "-phase.fits", false, nullptr,
         "Write the phase map as FITS (radians unless --phase-unit).", "FILE.fits"},
        {K::PhasePng, "phase-png", "Phase map as PNG", "PNG image (*.png)", "-phase.png", false, "Wavefront",
         "Write the phase map as PNG with colour bar and units.", "FILE.png"},
        {K::ModelFits, "model-out", "Model images as FITS", kFits, "-model.fits", false, nullptr,
         "Write the model images (one slice per plane) as FITS.", "FILE.fits"},
        {K::ResidualFits, "residual-out", "Residual images as FITS", kFits, "-residual.fits", false, nullptr,
         "Write the residual images (data - model) as FITS.", "FILE.fits"},
        {K::PsfAnalysisCsv, "psf-analysis", "PSF analysis as CSV", "CSV table (*.csv)", "-psf-analysis.csv", true, nullptr,
         "Write the PSF analysis as CSV (radius, radial profiles of data and model, encircled energy, MTF of the fitted and "
         "diffraction-limited system, units in the column names; '-' for stdout).",
         "FILE.csv"},
        {K::PsfFits, "psf-out", "Fitted and diffraction-limited PSF as FITS", kFits, "-psf.fits", false, nullptr,
         "Write the fitted and the diffraction-limited PSF (two planes, divided by the diffraction-limited peak) as FITS.", "FILE.fits"},
        {K::ResultsFits, "results-fits", "All results as one FITS file", kFits, "-results.fits", false, nullptr,
         "Write data, model, residual, normalised residual, phase (and the fitted pupil amplitude) as one multi-extension FITS "
         "file, extensions named.",
         "FILE.fits"},
        {K::PupilFits, "pupil-out", "Pupil function as FITS", kFits, "-pupil.fits", false, nullptr,
         "Write the pupil function as FITS: PHASE, AMPLITUDE (when fitted) and ZONAL (the zonal remainder) extensions with the "
         "pupil's WCS.",
         "FILE.fits"},
        {K::AmplitudePng, "amplitude-png", "Pupil amplitude as PNG", "PNG image (*.png)", "-amplitude.png", false, "Pupil amplitude",
         "Write the fitted pupil amplitude as PNG with colour bar.", "FILE.png"},
        {K::ZonalPng, "zonal-png", "Zonal phase remainder as PNG", "PNG image (*.png)", "-zonal.png", false,
         "Phase beyond the Zernike terms", "Write the zonal remainder (the phase the Zernike terms do not describe) as PNG.", "FILE.png"},
        {K::PsfStack, "psf-stack-out", "3-D PSF stack as FITS, TIFF or OME-TIFF",
         "FITS cube (*.fits);;ImageJ TIFF stack (*.tif *.tiff);;OME-TIFF (*.ome.tif *.ome.tiff)", "-psf-stack.fits", false, nullptr,
         "Write the fitted system's 3-D PSF (pupil and detector as fitted) as a FITS cube or, for .tif, a 32-bit float ImageJ "
         "TIFF stack, for .ome.tif an OME-TIFF (both with the voxel size: pixel and z step in um, which Fiji and tifffile "
         "read).",
         "FILE"},
        {K::SplineMat, "spline-mat-out", "3-D PSF as SMAP/DECODE cubic-spline calibration (.mat)", "MATLAB file (*.mat)", "-3dcal.mat",
         false, nullptr,
         "Write the 3-D PSF as the cubic-spline calibration SMAP and DECODE load (MATLAB file, struct SXY with cspline.coeff, "
         "x0, z0, dz) at --psf-z (lengths), --psf-pixel and --psf-crop (square). Needs the pixel size with "
         "the NA.",
         "FILE.mat"},
        {K::ModelHdf5, "model-h5-out", "PSF model (pupil, Zernikes, 3-D PSF) as HDF5", "HDF5 file (*.h5 *.hdf5)", "-psf-model.h5", false,
         nullptr,
         "Write the PSF model as one HDF5 file: pupil phase and amplitude, Zernike coefficients with uncertainties, the "
         "optics, the 3-D PSF with its voxel size; units as attributes.",
         "FILE.h5"},
    };
    return exports;
}

const ResultExport* findResultExport(const std::string& key)
{
    std::string dashed = key;
    std::replace(dashed.begin(), dashed.end(), '_', '-');
    const auto& all = resultExports();
    const auto it = std::find_if(all.begin(), all.end(), [&](const ResultExport& e) { return dashed == e.key; });
    return it == all.end() ? nullptr : &*it;
}

const ResultExport& resultExport(ExportKind kind)
{
    const auto& all = resultExports();
    const auto it = std::find_if(all.begin(), all.end(), [&](const ResultExport& e) { return e.kind == kind; });
    if (it == all.end())
        throw std::logic_error("an export kind without an entry in resultExports()");
    return *it;
}

const ResultExport* resultExportForFileName(const std::string& path)
{
    for (const ResultExport& e : resultExports())
        if (QString::fromStdString(path).endsWith(QLatin1String(e.suffix)))
            return &e;
    if (hasSuffix(path, {"json"}))
        return &resultExport(ExportKind::ResultJson);
    if (hasSuffix(path, {"csv"}))
        return &resultExport(ExportKind::CoefficientsCsv);
    if (hasSuffix(path, {"png"}))
        return &resultExport(ExportKind::PhasePng);
    if (hasSuffix(path, {"fits", "fit", "fts"}))
        return &resultExport(ExportKind::ResultsFits);
    if (hasSuffix(path, {"mat"}))
        return &resultExport(ExportKind::SplineMat);
    if (hasSuffix(path, {"h5", "hdf5"}))
        return &resultExport(ExportKind::ModelHdf5);
    return nullptr;
}

std::string exportUnavailable(ExportKind kind, const FitResult& result)
{
    switch (kind) {
    case ExportKind::PhaseFits:
    case ExportKind::PhasePng:
        return result.phaseMap.isEmpty() ? "the result has no phase map" : "";
    case ExportKind::PsfAnalysisCsv:
    case ExportKind::PsfFits:
        return result.psf ? "" : "the fit has no PSF analysis";
    case ExportKind::AmplitudePng:
        return result.pupilAmplitude.isEmpty() ? "the fit has no pupil amplitude (fit one with --pupil-amplitude zonal or gaussian)" : "";
    case ExportKind::ZonalPng:
        return result.zonalRemainderMap.isEmpty() ? "the fit has no zonal phase (fit one with --pupil-phase zonal or both)" : "";
    default:
        return {};
    }
}

std::string exportTitle(ExportKind kind, const FitResult& result)
{
    const char* title = resultExport(kind).title;
    if (!title)
        return {};
    const std::string start = std::string(title) + " " + result.problemName;
    switch (kind) {
    case ExportKind::PhasePng:
        return start + " (" + zernike::orderingName(result.ordering) + ", order "
               + std::to_string(result.coefficients.empty() ? 0 : result.coefficients.back().mode.n) + ")";
    case ExportKind::AmplitudePng:
        return start + " (" + pupilAmplitudeModelName(result.amplitudeModel) + ")";
    default:
        return start;
    }
}

QByteArray dataExportBytes(ExportKind kind, const std::string& path, const ResultExportSources& in)
{
    const FitResult& result = in.result;
    if (const std::string why = exportUnavailable(kind, result); !why.empty())
        throw std::runtime_error(why);
    switch (kind) {
    case ExportKind::ResultJson:
        return QJsonDocument(resultToJson(result)).toJson();
    case ExportKind::CoefficientsCsv:
        return coefficientsCsvBytes(result);
    case ExportKind::CoefficientsJson:
        return coefficientsJson(result);
    case ExportKind::PhaseFits:
        return phaseFitsBytes(result, in.context, {in.float32, in.fitsUnit, true});
    case ExportKind::ModelFits:
    case ExportKind::ResidualFits:
        return planesFitsBytes(result, in.context, in.float32, kind == ExportKind::ResidualFits);
    case ExportKind::PsfAnalysisCsv:
        return QByteArray::fromStdString(psfAnalysisCsv(*result.psf));
    case ExportKind::PsfFits:
        return psfFitsBytes(result, in.context, in.float32);
    case ExportKind::ResultsFits:
        return resultsFitsBytes(result, in.context, in.float32, in.fitsUnit);
    case ExportKind::PupilFits:
        return pupilFitsBytes(result, in.context, in.float32, in.fitsUnit);
    case ExportKind::PsfStack:
    case ExportKind::SplineMat:
    case ExportKind::ModelHdf5:
        if (!in.stack)
            throw std::logic_error("no PSF stack was made");
        if (kind == ExportKind::SplineMat)
            return splineMatBytes(*in.stack, result, in.context);
        if (kind == ExportKind::ModelHdf5)
            return hdf5ModelBytes(*in.stack, result, in.context);
        if (hasSuffix(path, {"tif", "tiff"})) {
            const bool ome = QString::fromStdString(path).toLower().contains(QRegularExpression(QStringLiteral("\\.ome\\.tiff?$")));
            return psfStackTiffBytes(*in.stack, result, in.context, ome);
        }
        return psfStackFitsBytes(*in.stack, result, in.context, in.float32);
    case ExportKind::PhasePng:
    case ExportKind::AmplitudePng:
    case ExportKind::ZonalPng:
        break;
    }
    throw std::logic_error(std::string("the export '") + resultExport(kind).key + "' is a picture, drawn by render/ResultExports");
}

std::vector<double> defaultPsfStackDefocus(const ProblemSpec& spec)
{
    double lo = 0.0, hi = 0.0;
    for (const PlaneSpec& plane : spec.planes) {
        lo = std::min(lo, plane.diversity.amount());
        hi = std::max(hi, plane.diversity.amount());
    }
    std::vector<double> defocus;
    for (int i = 0; i <= 20; ++i)
        defocus.push_back(lo + (hi - lo) * i / 20.0);
    return defocus;
}

} // namespace wfs
