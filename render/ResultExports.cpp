#include "ResultExports.h"

#include "PhaseImage.h"
#include "io/ResultJson.h"

#include <QFileInfo>
#include <QJsonDocument>

#include <algorithm>
#include <stdexcept>

namespace wfs {

namespace {

// The fitted pupil amplitude or the zonal remainder, drawn like the phase.
QByteArray pupilMapPng(const std::string& key, const FitResult& result, PhaseUnit unit)
{
    PhaseImageOptions png;
    png.wavelength = result.wavelength;
    if (key == "amplitude-png") {
        if (result.pupilAmplitude.isEmpty())
            throw std::runtime_error("the fit has no pupil amplitude (fit one with --pupil-amplitude zonal or gaussian)");
        png.quantity = "field amplitude [relative]";
        png.title = "Pupil amplitude " + result.problemName + " (" + pupilAmplitudeModelName(result.amplitudeModel) + ")";
        return mapPngBytes(result.pupilAmplitude, png);
    }
    if (result.zonalRemainderMap.isEmpty())
        throw std::runtime_error("the fit has no zonal phase (fit one with --pupil-phase zonal or both)");
    png.unit = unit;
    png.title = "Phase beyond the Zernike terms " + result.problemName;
    return mapPngBytes(result.zonalRemainderMap, png);
}

QByteArray phasePng(const ResultExportSources& in)
{
    const FitResult& result = in.result;
    PhaseImageOptions png;
    png.unit = in.pngUnit;
    png.wrapped = in.wrapped;
    png.wavelength = result.wavelength;
    png.title = "Wavefront " + result.problemName + " (" + zernike::orderingName(result.ordering) + ", order "
                + std::to_string(result.coefficients.empty() ? 0 : result.coefficients.back().mode.n) + ")";
    return phasePngBytes(result, png);
}

QByteArray psfStackBytes(const std::string& path, const ResultExportSources& in)
{
    if (!in.stack)
        throw std::logic_error("no PSF stack was made");
    const QString suffix = QFileInfo(QString::fromStdString(path)).suffix().toLower();
    if (suffix == QLatin1String("tif") || suffix == QLatin1String("tiff"))
        return psfStackTiffBytes(*in.stack, in.result);
    return psfStackFitsBytes(*in.stack, in.result, in.context, in.float32);
}

} // namespace

const std::vector<ResultExport>& resultExports()
{
    static const std::vector<ResultExport> exports = {
        {"json", "Whole result as JSON", "JSON (*.json)", "-result.json", true},
        {"csv", "Coefficients as CSV", "CSV table (*.csv)", "-coefficients.csv", true},
        {"coefficients-json", "Coefficients as JSON", "JSON (*.json)", "-coefficients.json", true},
        {"phase-out", "Phase map as FITS", "FITS image (*.fits *.fit *.fts)", "-phase.fits", false},
        {"phase-png", "Phase map as PNG", "PNG image (*.png)", "-phase.png", false},
        {"model-out", "Model images as FITS", "FITS image (*.fits *.fit *.fts)", "-model.fits", false},
        {"residual-out", "Residual images as FITS", "FITS image (*.fits *.fit *.fts)", "-residual.fits", false},
        {"psf-analysis", "PSF analysis as CSV", "CSV table (*.csv)", "-psf-analysis.csv", true},
        {"psf-out", "Fitted and diffraction-limited PSF as FITS", "FITS image (*.fits *.fit *.fts)", "-psf.fits", false},
        {"results-fits", "All results as one FITS file", "FITS image (*.fits *.fit *.fts)", "-results.fits", false},
        {"pupil-out", "Pupil function as FITS", "FITS image (*.fits *.fit *.fts)", "-pupil.fits", false},
        {"amplitude-png", "Pupil amplitude as PNG", "PNG image (*.png)", "-amplitude.png", false},
        {"zonal-png", "Zonal phase remainder as PNG", "PNG image (*.png)", "-zonal.png", false},
        {"psf-stack-out", "3-D PSF stack as FITS or TIFF", "FITS cube (*.fits);;TIFF stack (*.tif *.tiff)", "-psf-stack.fits", false},
    };
    return exports;
}

const ResultExport* findResultExport(const std::string& key)
{
    const auto& all = resultExports();
    const auto it = std::find_if(all.begin(), all.end(), [&](const ResultExport& e) { return key == e.key; });
    return it == all.end() ? nullptr : &*it;
}

QByteArray resultExportBytes(const std::string& key, const std::string& path, const ResultExportSources& in)
{
    const FitResult& result = in.result;
    if (key == "psf-stack-out")
        return psfStackBytes(path, in);
    if (key == "json")
        return QJsonDocument(resultToJson(result)).toJson();
    if (key == "csv")
        return coefficientsCsvBytes(result);
    if (key == "coefficients-json")
        return coefficientsJson(result);
    if (key == "phase-out")
        return phaseFitsBytes(result, in.context, {in.float32, in.fitsUnit, true});
    if (key == "phase-png")
        return phasePng(in);
    if (key == "model-out" || key == "residual-out")
        return planesFitsBytes(result, in.context, in.float32, key == "residual-out");
    if (key == "results-fits")
        return resultsFitsBytes(result, in.context, in.float32, in.fitsUnit);
    if (key == "pupil-out")
        return pupilFitsBytes(result, in.context, in.float32, in.fitsUnit);
    if (key == "amplitude-png" || key == "zonal-png")
        return pupilMapPng(key, result, in.pngUnit);
    if (key == "psf-out")
        return psfFitsBytes(result, in.context, in.float32);
    if (key == "psf-analysis") {
        if (!result.psf)
            throw std::runtime_error("the fit has no PSF analysis");
        return QByteArray::fromStdString(psfAnalysisCsv(*result.psf));
    }
    throw std::logic_error("no writer for the export '" + key + "'");
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
