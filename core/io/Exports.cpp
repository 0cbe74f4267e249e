#include "io/Exports.h"

#include "fit/PsfStack.h"
#include "io/TiffWriter.h"

#include "io/OutputTransaction.h"

#include "io/Provenance.h"
#include "io/ResultJson.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <stdexcept>

namespace wfs {

// ---- FITS ---------------------------------------------------------------------------------------

double phaseFactor(PhaseUnit unit, double wavelength)
{
    switch (unit) {
    case PhaseUnit::Waves:
        return 1.0 / (2.0 * M_PI);
    case PhaseUnit::Nanometres:
        if (!(wavelength > 0.0))
            throw std::runtime_error("a phase in nm needs the wavelength");
        return wavelength * 1e9 / (2.0 * M_PI);
    case PhaseUnit::Radians:
        break;
    }
    return 1.0;
}

std::string wavelengthText(double wavelength)
{
    char text[64];
    std::snprintf(text, sizeof text, "%.1f nm", wavelength * 1e9);
    return text;
}

namespace {
// The data's Q: the fitted one after a sampling fit (FitResult::samplingFit), else the metadata's.
double samplingOf(const FitResult& r, const ExportContext& context)
{
    return r.samplingFit ? r.samplingQ : context.samplingQ;
}
} // namespace

std::vector<FitsKeyword> resultKeywords(const FitResult& r, const ExportContext& context, const std::string& bunit)
{
    std::vector<FitsKeyword> k;
    if (!bunit.empty())
        k.push_back({"BUNIT", bunit, bunit == "rad" ? "phase in radians; waves = rad / (2 pi)" : "unit of the pixel values"});
    k.push_back({"DATE", creationDateUtc(), "UTC date and time the file was written"});
    k.push_back({"CREATOR", softwareText(), "software and version"});
    if (!context.preset.empty())
        k.push_back({"PRESET", context.preset, "built-in problem (simulated data)"});
    const std::vector<FitsKeyword> fit = {
        {"WAVELENG", r.wavelength, "[m] wavelength"},
        {"ZORDERNG", std::string(zernike::orderingName(r.ordering)), "Zernike ordering (noll or ansi)"},
        {"ZNORM", std::string(zernike::normalizationName(r.normalization)), "Zernike normalisation (rms: Noll, unit: R(1)=1)"},
        {"ZORDER", (long long)(r.coefficients.empty() ? 0 : r.coefficients.back().mode.n), "highest radial order"},
        {"ZUNIT", std::string("waves"), "unit of the ZCk coefficients"},
        {"RMSWAVE", r.rmsWaves, r.defocusRemoved ? "[waves] RMS, piston/tip/tilt/defocus removed" : "[waves] RMS, piston/tip/tilt removed"},
        {"PVWAVE", r.pvWaves, "[waves] peak-to-valley wavefront error"},
        {"STREHL", r.strehl, "Strehl ratio from the model PSF peak"},
        {"FINLCOST", r.solver.finalCost, "final objective value"},
        {"ITERATNS", (long long)r.solver.iterations, "solver iterations"},
        {"TERMINAT", std::string(terminationName(r.solver.termination)), "solver termination"},
        {"BACKEND", r.backend.backend, "model backend"},
        {"ROWORDER", std::string("bottom-up"), "row 0 is the bottom row, x right, y up"},
        {"PUPILORI", std::string("x right, y up, angle CCW from +x"), "pupil radius 1 at the edge"},
    };
    k.insert(k.end(), fit.begin(), fit.end());
    if (context.pupilSampleSpacing > 0.0)
        k.push_back(
            {"PUPSAMP", context.pupilSampleSpacing / (r.samplingFit ? r.samplingFit->scale : 1.0), "pupil radii per phase-map pixel"});
    if (samplingOf(r, context) > 0.0)
        k.push_back(
            {"SAMPLING", samplingOf(r, context), r.samplingFit ? "Q = lambda F# / pixel, fitted" : "Q = lambda F# / pixel of the data"});
    if (context.apertureDiameter > 0.0)
        k.push_back({"APERTURE", context.apertureDiameter, "[m] pupil (aperture) diameter"});
    k.push_back({"IMGMODEL", std::string(imagingModelName(r.imagingModel)), "imaging model: scalar or vectorial"});
    if (r.imagingModel == ImagingModel::Vectorial) {
        const VectorialSpec& v = r.vectorial;
        const std::vector<FitsKeyword> vectorial = {
            {"VNA", v.numericalAperture, "vectorial model: numerical aperture"},
            {"VNIMM", v.immersionIndex, "vectorial model: immersion index"},
            {"VNSAMP", v.sampleIndex, "vectorial model: sample index"},
            {"VNCOVER", v.coverslipIndex > 0.0 ? v.coverslipIndex : v.immersionIndex, "vectorial model: coverslip index"},
            {"VDEPTH", v.emitterDepth, "[m] emitter depth below the coverslip (start)"},
            {"VDIPOLE", dipoleText(v.dipole), "dipole: free, or fixed (theta from z, phi from x)"},
        };
        k.insert(k.end(), vectorial.begin(), vectorial.end());
    }
    if (context.pupil) {
        k.push_back({"OBSCUR", context.pupil->obscuration, "central obscuration / pupil diameter"});
        k.push_back({"SPIDERS", (long long)context.pupil->spiderCount, "number of spider vanes"});
        k.push_back({"SPIDERW", context.pupil->spiderWidth, "vane width / pupil diameter"});
        k.push_back({"SPIDERA", context.pupil->spiderAngleDeg, "[deg] first vane angle from +x"});
    }
    for (const CoefficientResult& c : r.coefficients) {
        k.push_back({"ZC" + std::to_string(c.index), c.waves,
                     "[waves] Z(" + std::to_string(c.mode.n) + "," + std::to_string(c.mode.m) + ") " + c.name});
        if (std::isfinite(c.uncertaintyWaves) && c.free)
            k.push_back(
                {"ZE" + std::to_string(c.index), c.uncertaintyWaves, "[waves] 1-sigma uncertainty of ZC" + std::to_string(c.index)});
    }
    for (size_t i = 0; i < context.inputs.size() && i < 999; ++i)
        k.push_back({"INPUT" + std::to_string(i + 1), context.inputs[i], "input file"});
    return k;
}

std::vector<FitsKeyword> pupilWcsKeywords(const PupilMapGeometry& g, double apertureDiameter)
{
    if (!(g.spacing > 0.0))
        return {};
    const std::string columns = g.columnsAlongX ? "PUPX" : "PUPY", rows = g.columnsAlongX ? "PUPY" : "PUPX";
    std::vector<FitsKeyword> k = {
        {"WCSNAME", std::string("pupil"), "normalised pupil coordinates, radius 1"},
        {"CTYPE1", columns, g.columnsAlongX ? "pupil x" : "pupil y (columns along y)"},
        {"CTYPE2", rows, g.columnsAlongX ? "pupil y" : "pupil x (rows along x)"},
        {"CRPIX1", 1.0, "reference pixel: the first column"},
        {"CRPIX2", 1.0, "reference pixel: the first row"},
        {"CRVAL1", g.firstColumn, "[pupil radii] coordinate of the first column"},
        {"CRVAL2", g.firstRow, "[pupil radii] coordinate of the first row"},
        {"CDELT1", g.spacing, "[pupil radii] step per column"},
        {"CDELT2", g.spacing, "[pupil radii] step per row"},
    };
    if (apertureDiameter > 0.0) {
        const double radius = apertureDiameter / 2.0;
        const std::vector<FitsKeyword> metres = {
            {"WCSNAMEA", std::string("pupil in metres"), "the pupil, scaled by the aperture radius"},
            {"CTYPE1A", columns, g.columnsAlongX ? "pupil x" : "pupil y"},
            {"CTYPE2A", rows, g.columnsAlongX ? "pupil y" : "pupil x"},
            {"CUNIT1A", std::string("m"), "metres"},
            {"CUNIT2A", std::string("m"), "metres"},
            {"CRPIX1A", 1.0, "reference pixel: the first column"},
            {"CRPIX2A", 1.0, "reference pixel: the first row"},
            {"CRVAL1A", g.firstColumn * radius, "[m] coordinate of the first column"},
            {"CRVAL2A", g.firstRow * radius, "[m] coordinate of the first row"},
            {"CDELT1A", g.spacing * radius, "[m] step per column"},
            {"CDELT2A", g.spacing * radius, "[m] step per row"},
        };
        k.insert(k.end(), metres.begin(), metres.end());
    }
    return k;
}

DefocusAxis defocusAxis(const std::vector<PlaneResult>& planes)
{
    std::vector<DiversitySpec> specs;
    for (const PlaneResult& p : planes)
        specs.push_back(p.diversitySpec);
    return defocusAxis(specs);
}

DefocusAxis defocusAxis(const std::vector<DiversitySpec>& planes)
{
    DefocusAxis axis;
    // Each plane's quantity ("" = no diversity: 0 in either; "?" = not a defocus) and value.
    std::vector<std::pair<std::string, double>> each;
    for (const DiversitySpec& d : planes) {
        if (!d.extraTerms.empty())
            each.emplace_back("?", std::nan(""));
        else if (d.kind == DiversityKind::None)
            each.emplace_back("", 0.0);
        else if (d.kind == DiversityKind::ZernikeDefocus)
            each.emplace_back("W020", d.measure == DefocusMeasure::PeakToValley ? d.defocusWaves : 2.0 * std::sqrt(3.0) * d.defocusWaves);
        else
            each.emplace_back("DEFOCUSZ", d.axialDistance);
    }
    for (const auto& [quantity, value] : each) {
        if (quantity.empty())
            continue;
        if (quantity == "?" || (!axis.quantity.empty() && axis.quantity != quantity)) {
            axis.quantity.clear();
            break;
        }
        axis.quantity = quantity;
    }
    if (axis.quantity.empty()) {
        bool allNone = !each.empty();
        for (const auto& e : each)
            allNone = allNone && e.first.empty();
        if (allNone)
            axis.quantity = "W020";
    }
    if (axis.quantity.empty()) {
        axis.values.assign(planes.size(), std::nan(""));
        return axis;
    }
    axis.unit = axis.quantity == "W020" ? "waves" : "m";
    for (const auto& e : each)
        axis.values.push_back(e.second);
    if (axis.values.size() >= 2) {
        const double step = axis.values[1] - axis.values[0];
        double scale = std::abs(step);
        for (double v : axis.values)
            scale = std::max(scale, std::abs(v));
        axis.evenlySpaced = step != 0.0;
        for (size_t i = 0; i < axis.values.size() && axis.evenlySpaced; ++i)
            axis.evenlySpaced = std::abs(axis.values[i] - (axis.values[0] + double(i) * step)) <= 1e-9 * scale;
    }
    return axis;
}

std::vector<FitsKeyword> focalPlaneWcsKeywords(int width, int height, double samplingQ, const DefocusAxis& axis)
{
    const bool lod = samplingQ > 0.0;
    const std::string unit = lod ? "[lambda/D] " : "[pixels] ";
    std::vector<FitsKeyword> k = {
        {"WCSNAME", std::string(lod ? "focal plane, lambda/D" : "focal plane, pixels"), "x, y from the image centre"},
        {"CTYPE1", std::string(lod ? "XLOD" : "XPIX"), lod ? "focal-plane x in lambda/D" : "focal-plane x in pixels"},
        {"CTYPE2", std::string(lod ? "YLOD" : "YPIX"), lod ? "focal-plane y in lambda/D" : "focal-plane y in pixels"},
        {"CRPIX1", double(width / 2 + 1), "reference pixel: the optical axis"},
        {"CRPIX2", double(height / 2 + 1), "reference pixel: the optical axis"},
        {"CRVAL1", 0.0, unit + "x at the optical axis"},
        {"CRVAL2", 0.0, unit + "y at the optical axis"},
        {"CDELT1", lod ? 1.0 / samplingQ : 1.0, unit + "step per column (1 / Q)"},
        {"CDELT2", lod ? 1.0 / samplingQ : 1.0, unit + "step per row (1 / Q)"},
    };
    if (!lod) {
        k[7].comment = unit + "step per column";
        k[8].comment = unit + "step per row";
    }
    if (axis.values.size() < 2)
        return k;
    if (axis.evenlySpaced) {
        // Waves are a count (not a FITS unit: wcslib and astropy refuse CUNIT3 = 'waves'), so a W020
        // axis has no CUNIT3; CNAME3 and the comments say waves.
        const bool waves = axis.quantity == "W020";
        std::vector<FitsKeyword> third = {
            {"CTYPE3", axis.quantity, waves ? "[waves] defocus W020 (edge-to-centre)" : "[m] axial displacement of the slice"},
            {"CNAME3", std::string(waves ? "defocus W020 [waves]" : "defocus z [m]"), "the third axis"},
            {"CRPIX3", 1.0, "reference pixel: the first slice"},
            {"CRVAL3", axis.values.front(), "[" + axis.unit + "] defocus of the first slice"},
            {"CDELT3", axis.values[1] - axis.values[0], "[" + axis.unit + "] defocus step per slice"},
        };
        if (!waves)
            third.insert(third.begin() + 1, {"CUNIT3", axis.unit, "metres"});
        k.insert(k.end(), third.begin(), third.end());
    } else {
        const std::vector<FitsKeyword> third = {
            {"CTYPE3", std::string("PLANE"), "slice number; defocus in the DEFOCUS table"},
            {"CRPIX3", 1.0, "reference pixel: the first slice"},
            {"CRVAL3", 1.0, "the first slice is plane 1"},
            {"CDELT3", 1.0, "one plane per slice"},
        };
        k.insert(k.end(), third.begin(), third.end());
    }
    return k;
}

FitsHdu defocusTable(const std::vector<std::string>& descriptions, const DefocusAxis& axis)
{
    FitsHdu table;
    table.extname = "DEFOCUS";
    FitsColumn plane{"PLANE", "", {}, {}}, value{axis.quantity.empty() ? "DEFOCUS" : axis.quantity, axis.unit, {}, {}},
        words{"DIVERSITY", "", {}, {}};
    for (size_t k = 0; k < descriptions.size(); ++k) {
        plane.numbers.push_back(double(k + 1));
        value.numbers.push_back(k < axis.values.size() ? axis.values[k] : std::nan(""));
        words.texts.push_back(descriptions[k].empty() ? std::string("none") : descriptions[k]);
    }
    table.columns = {plane, value, words};
    table.keywords = {{"COMMENT",
                       std::string("The defocus of each slice of the image cubes (PLANE = slice number). "
                                   "W020 in waves: the wavefront W020 rho^2 added to the plane; DEFOCUSZ in m: "
                                   "axial displacement of the detector or sample; NaN: another diversity."),
                       ""}};
    return table;
}

QByteArray phaseFitsBytes(const FitResult& result, const ExportContext& context, const PhaseFitsOptions& options)
{
    if (result.phaseMap.isEmpty())
        throw std::runtime_error("the result has no phase map");
    Image map = result.phaseMap;
    const double factor = phaseFactor(options.unit, result.wavelength);
    for (double& v : map.pixels)
        v *= factor;
    std::vector<FitsKeyword> keywords = resultKeywords(result, context, phaseUnitName(options.unit));
    const std::vector<FitsKeyword> wcs = pupilWcsKeywords(result.phaseMapGeometry, context.apertureDiameter);
    keywords.insert(keywords.end(), wcs.begin(), wcs.end());
    return QByteArray::fromStdString(fitsBytes({map}, keywords, options.float32));
}

namespace {

std::string dataUnitOf(const ExportContext& context)
{
    return context.dataUnit.empty() ? std::string("counts") : context.dataUnit;
}

// A cube of per-plane images with its focal-plane and defocus axes, slice descriptions and BUNIT.
FitsHdu planeCube(const FitResult& result, const ExportContext& context, const DefocusAxis& axis, const std::string& extname,
                  const std::string& bunit, const std::string& bunitComment, const std::string& imageType, const std::string& typeComment,
                  Image PlaneResult::*member)
{
    FitsHdu hdu;
    hdu.extname = extname;
    for (const PlaneResult& p : result.planes)
        hdu.planes.push_back(p.*member);
    hdu.keywords = {{"BUNIT", bunit, bunitComment}, {"IMAGETYP", imageType, typeComment}};
    const std::vector<FitsKeyword> wcs =
        focalPlaneWcsKeywords(hdu.planes.front().width, hdu.planes.front().height, samplingOf(result, context), axis);
    hdu.keywords.insert(hdu.keywords.end(), wcs.begin(), wcs.end());
    for (size_t k = 0; k < result.planes.size() && k < 999; ++k)
        hdu.keywords.push_back(
            {"PLANE" + std::to_string(k + 1), result.planes[k].diversity, "diversity of slice " + std::to_string(k + 1)});
    return hdu;
}

std::vector<std::string> descriptionsOf(const FitResult& result)
{
    std::vector<std::string> descriptions;
    for (const PlaneResult& p : result.planes)
        descriptions.push_back(p.diversity);
    return descriptions;
}

void requireModels(const FitResult& result)
{
    if (result.planes.empty() || result.planes.front().model.isEmpty())
        throw std::runtime_error("the result has no model images");
}

} // namespace

QByteArray planesFitsBytes(const FitResult& result, const ExportContext& context, bool float32, bool residual)
{
    requireModels(result);
    const DefocusAxis axis = defocusAxis(result.planes);
    const std::string unit = dataUnitOf(context);
    FitsHdu cube = residual ? planeCube(result, context, axis, "", unit, "unit of the data", "residual",
                                        "data - model, NaN where not fitted", &PlaneResult::residual)
                            : planeCube(result, context, axis, "", unit, "unit of the data", "model", "model intensity at the solution",
                                        &PlaneResult::model);
    std::vector<FitsKeyword> keywords = resultKeywords(result, context, "");
    keywords.insert(keywords.begin(), cube.keywords.begin(), cube.keywords.end());
    cube.keywords = keywords;
    std::vector<FitsHdu> hdus = {cube};
    if (result.planes.size() > 1 && !axis.evenlySpaced)
        hdus.push_back(defocusTable(descriptionsOf(result), axis));
    return QByteArray::fromStdString(fitsBytes(hdus, float32));
}

QByteArray psfFitsBytes(const FitResult& result, const ExportContext& context, bool float32)
{
    if (!result.psf)
        throw std::runtime_error("the fit has no PSF analysis");
    const PsfAnalysis& psf = *result.psf;
    const double q = psf.lambdaOverDPerPixel > 0.0 ? 1.0 / psf.lambdaOverDPerPixel : 0.0;
    std::vector<FitsKeyword> keywords = {
        {"BUNIT", std::string(""), "dimensionless: / diffraction-limited peak"},
        {"CONTENT", std::string("slice 1: fitted PSF, 2: diffraction-limited"), "same pupil"},
    };
    std::vector<FitsKeyword> wcs = focalPlaneWcsKeywords(psf.fittedPsf.width, psf.fittedPsf.height, q, {});
    wcs.insert(wcs.end(), {{"CTYPE3", std::string("PSF"), "1: fitted PSF, 2: diffraction-limited PSF"},
                           {"CRPIX3", 1.0, "reference pixel: the first slice"},
                           {"CRVAL3", 1.0, "slice number"},
                           {"CDELT3", 1.0, "slice number step"}});
    keywords.insert(keywords.end(), wcs.begin(), wcs.end());
    const std::vector<FitsKeyword> analysis = {
        {"STREHL", psf.strehl, "peak of slice 1"},
        {"PIXLOD", psf.lambdaOverDPerPixel, "[lambda/D] per pixel"},
        {"FWHMFIT", psf.fwhmFittedPixels, "[pixels] FWHM of the fitted PSF"},
        {"FWHMDL", psf.fwhmDiffractionPixels, "[pixels] FWHM, diffraction-limited"},
    };
    keywords.insert(keywords.end(), analysis.begin(), analysis.end());
    for (const FitsKeyword& k : resultKeywords(result, context, ""))
        if (k.name != "STREHL")
            keywords.push_back(k);
    return QByteArray::fromStdString(fitsBytes({psf.fittedPsf, psf.diffractionPsf}, keywords, float32));
}

namespace {
// "PHASE, AMPLITUDE, ZONAL": the pupil maps a result has, as pupilHdus writes them.
std::string pupilExtensionNames(const FitResult& result)
{
    return std::string("PHASE") + (result.pupilAmplitude.isEmpty() ? "" : ", AMPLITUDE")
           + (result.zonalRemainderMap.isEmpty() ? "" : ", ZONAL (what the Zernike terms do not describe)");
}

// The pupil maps as image extensions with the pupil's WCS: the phase (in `phaseUnit`), the field amplitude
// when it was fitted, and the zonal remainder (the same unit) when the phase was zonal.
std::vector<FitsHdu> pupilHdus(const FitResult& result, const ExportContext& context, PhaseUnit phaseUnit)
{
    const FitsKeyword inherit{"INHERIT", true, "the primary header applies too"};
    const std::vector<FitsKeyword> pupilWcs = pupilWcsKeywords(result.phaseMapGeometry, context.apertureDiameter);
    const double factor = phaseFactor(phaseUnit, result.wavelength);
    auto map = [&](const char* extname, const Image& image, double scale, const std::string& bunit, const std::string& bunitComment,
                   const std::string& type, const std::string& typeComment) {
        FitsHdu hdu;
        hdu.extname = extname;
        hdu.planes = {image};
        for (double& v : hdu.planes.front().pixels)
            v *= scale;
        hdu.keywords = {inherit, {"BUNIT", bunit, bunitComment}, {"IMAGETYP", type, typeComment}};
        hdu.keywords.insert(hdu.keywords.end(), pupilWcs.begin(), pupilWcs.end());
        return hdu;
    };
    const std::string phaseComment = phaseUnit == PhaseUnit::Radians ? "phase in radians; waves = rad / (2 pi)" : "unit of the phase";
    std::vector<FitsHdu> hdus;
    hdus.push_back(map("PHASE", result.phaseMap, factor, phaseUnitName(phaseUnit), phaseComment, "phase",
                       "wavefront phase over the pupil, NaN outside"));
    if (!result.pupilAmplitude.isEmpty())
        hdus.push_back(map("AMPLITUDE", result.pupilAmplitude, 1.0, "", "dimensionless field amplitude", "pupil amplitude",
                           "fitted field amplitude, NaN outside"));
    if (!result.zonalRemainderMap.isEmpty())
        hdus.push_back(map("ZONAL", result.zonalRemainderMap, factor, phaseUnitName(phaseUnit), phaseComment, "zonal remainder",
                           "phase less its Zernike projection up to the fitted order"));
    return hdus;
}
} // namespace

QByteArray psfStackFitsBytes(const PsfStack& stack, const FitResult& result, const ExportContext& context, bool float32)
{
    const DefocusAxis axis = defocusAxis(stack.diversity);
    std::vector<FitsHdu> hdus;
    FitsHdu primary;
    primary.planes = stack.planes;
    primary.keywords = resultKeywords(result, context, "");
    primary.keywords.push_back({"BUNIT", std::string(""), "fraction of the unaberrated PSF's total per pixel"});
    primary.keywords.push_back({"IMAGETYP", std::string("psf stack"), "the fitted system's PSF through focus"});
    primary.keywords.push_back({"PIXSCALE", stack.pixelScale, "output pixel / data pixel"});
    primary.keywords.push_back({"PSFGRID", stack.grid, "model grid of the stack"});
    primary.keywords.push_back({"PSFFIELD", stack.field, "pixels across the field computed: light leaving the image leaves it"});
    primary.keywords.push_back({"COMMENT",
                                "The optical axis is at 0-based index NAXISn / 2 (rounded down) on both axes of the array as "
                                "stored (row 0 first, the bottom): CRPIX1, CRPIX2. Each plane holds the light that falls in it; "
                                "the unaberrated in-focus PSF sums to 1 over the field computed (PSFFIELD).",
                                ""});
    if (!stack.warning.empty())
        primary.keywords.push_back({"COMMENT", "Warning: " + stack.warning + ".", ""});
    for (const FitsKeyword& k : focalPlaneWcsKeywords(stack.planes.front().width, stack.planes.front().height, stack.samplingQ, axis))
        primary.keywords.push_back(k);
    std::erase_if(primary.keywords, [](const FitsKeyword& k) { return k.name == "SAMPLING" || k.name == "STREHL"; });
    primary.keywords.push_back({"SAMPLING", stack.samplingQ, "Q of the stack's pixels"});
    hdus.push_back(primary);
    if (!axis.evenlySpaced && stack.planes.size() > 1) {
        std::vector<std::string> descriptions;
        for (const DiversitySpec& d : stack.diversity)
            descriptions.push_back(d.describe());
        hdus.push_back(defocusTable(descriptions, axis));
    }
    return QByteArray::fromStdString(fitsBytes(hdus, float32));
}

namespace {

// "0.1" rather than std::to_string's "0.100000": micrometres to 12 significant digits.
std::string micronText(double metres)
{
    char text[40];
    std::snprintf(text, sizeof text, "%.12g", metres * 1e6);
    return text;
}

// The words of a PSF stack's TIFF that say how to read it (both flavours carry them).
std::string psfStackNotes(const PsfStack& stack, const FitResult& result)
{
    return "software=Wavefront Studio " + std::string(softwareVersion()) + "\nproblem=" + result.problemName
           + "\nfirst=" + stack.diversity.front().describe() + "\nlast=" + stack.diversity.back().describe() + "\npixel_scale="
           + std::to_string(stack.pixelScale) + " (output pixel / data pixel)\nsampling=" + std::to_string(stack.samplingQ)
           + "\nnormalisation=the unaberrated in-focus PSF sums to 1 over a field of " + std::to_string(stack.field) + " x "
           + std::to_string(stack.field)
           + " pixels; each page holds the light that falls in it (light leaving the page is not wrapped back)"
           + "\ncentre=the optical axis at 0-based column width/2 and row height/2 counted from the first row stored "
             "(the top), rounded down: where fftshift-centred tools look"
           + "\naxes=x to the right, y up (the first row stored is the top one); the page index runs along +z "
             "(README Conventions)\n"
           + (stack.warning.empty() ? std::string() : "warning=" + stack.warning + "\n");
}

// The OME-XML of a PSF stack (one image, XYZ, float, one channel): the voxel size in micrometres as Bio-Formats,
// Fiji and tifffile read it, the emission wavelength and, when known, the objective's NA and immersion index.
std::string psfStackOmeXml(const PsfStack& stack, const FitResult& result, const ExportContext& context, const DefocusAxis& axis,
                           double pixel)
{
    auto escaped = [](const std::string& text) { return QString::fromStdString(text).toHtmlEscaped().toStdString(); };
    const Image& first = stack.planes.front();
    std::string xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                      "<OME xmlns=\"http://www.openmicroscopy.org/Schemas/OME/2016-06\" "
                      "xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\" "
                      "xsi:schemaLocation=\"http://www.openmicroscopy.org/Schemas/OME/2016-06 "
                      "http://www.openmicroscopy.org/Schemas/OME/2016-06/ome.xsd\" Creator=\"Wavefront Studio "
                      + std::string(softwareVersion()) + "\">\n";
    if (context.numericalAperture > 0.0)
        xml += "  <Instrument ID=\"Instrument:0\"><Objective ID=\"Objective:0:0\" LensNA=\"" + std::to_string(context.numericalAperture)
               + "\"/></Instrument>\n";
    xml += "  <Image ID=\"Image:0\" Name=\"" + escaped("PSF of " + result.problemName) + "\">\n    <Description>"
           + escaped(psfStackNotes(stack, result)) + "</Description>\n";
    if (context.numericalAperture > 0.0)
        xml += "    <InstrumentRef ID=\"Instrument:0\"/>\n    <ObjectiveSettings ID=\"Objective:0:0\" RefractiveIndex=\""
               + std::to_string(context.immersionIndex) + "\"/>\n";
    xml += "    <Pixels ID=\"Pixels:0\" DimensionOrder=\"XYZCT\" Type=\"float\" BigEndian=\"false\" SizeX=\"" + std::to_string(first.width)
           + "\" SizeY=\"" + std::to_string(first.height) + "\" SizeZ=\"" + std::to_string(stack.planes.size())
           + "\" SizeC=\"1\" SizeT=\"1\"";
    if (pixel > 0.0)
        xml += " PhysicalSizeX=\"" + micronText(pixel) + "\" PhysicalSizeXUnit=\"µm\" PhysicalSizeY=\"" + micronText(pixel)
               + "\" PhysicalSizeYUnit=\"µm\"";
    if (axis.evenlySpaced && axis.unit == "m")
        xml += " PhysicalSizeZ=\"" + micronText(axis.values[1] - axis.values[0]) + "\" PhysicalSizeZUnit=\"µm\"";
    xml += ">\n      <Channel ID=\"Channel:0:0\" SamplesPerPixel=\"1\"";
    if (result.wavelength > 0.0)
        xml += " EmissionWavelength=\"" + std::to_string(result.wavelength * 1e9) + "\" EmissionWavelengthUnit=\"nm\"";
    xml +=
        "/>\n      <TiffData IFD=\"0\" PlaneCount=\"" + std::to_string(stack.planes.size()) + "\"/>\n    </Pixels>\n  </Image>\n</OME>\n";
    return xml;
}

} // namespace

double psfStackPixelPitch(const PsfStack& stack, const ExportContext& context)
{
    return context.samplePixelPitch > 0.0 ? context.samplePixelPitch * stack.pixelScale : 0.0;
}

QByteArray psfStackTiffBytes(const PsfStack& stack, const FitResult& result, const ExportContext& context, bool ome)
{
    const DefocusAxis axis = defocusAxis(stack.diversity);
    const double pixel = psfStackPixelPitch(stack, context);
    std::string description;
    if (ome) {
        description = psfStackOmeXml(stack, result, context, axis, pixel);
    } else {
        // ImageJ's keys first (it reads "key=value" lines), then the rest for people. The pixel size is the resolution
        // tags' (pixels per micron), the z step the spacing.
        description =
            "ImageJ=1.11a\nimages=" + std::to_string(stack.planes.size()) + "\nslices=" + std::to_string(stack.planes.size()) + "\n";
        if (pixel > 0.0 || (axis.evenlySpaced && axis.unit == "m"))
            description += "unit=micron\n";
        if (axis.evenlySpaced && axis.unit == "m")
            description += "spacing=" + micronText(axis.values[1] - axis.values[0]) + "\n";
        description += psfStackNotes(stack, result);
    }
    // An even height's pages are the window one row higher than the FITS cube's: a plain flip would put the axis at
    // row N / 2 - 1 from the top (fit/PsfStack.h).
    std::vector<Image> pages;
    for (size_t k = 0; k < stack.planes.size(); ++k)
        pages.push_back(psfStackTopFirstPlane(stack, k));
    return QByteArray::fromStdString(tiffStackBytes(pages, description, pixel > 0.0 ? 1.0 / (pixel * 1e6) : 0.0));
}

QByteArray pupilFitsBytes(const FitResult& result, const ExportContext& context, bool float32, PhaseUnit phaseUnit)
{
    if (result.phaseMap.isEmpty())
        throw std::runtime_error("the result has no phase map");
    std::vector<FitsHdu> hdus;
    FitsHdu primary;
    primary.keywords = resultKeywords(result, context, "");
    primary.keywords.push_back({"COMMENT", "Extensions: " + pupilExtensionNames(result) + ". Pupil orientation: README Conventions.", ""});
    hdus.push_back(primary);
    for (FitsHdu& hdu : pupilHdus(result, context, phaseUnit))
        hdus.push_back(std::move(hdu));
    return QByteArray::fromStdString(fitsBytes(hdus, float32));
}

QByteArray resultsFitsBytes(const FitResult& result, const ExportContext& context, bool float32, PhaseUnit phaseUnit)
{
    requireModels(result);
    if (result.phaseMap.isEmpty())
        throw std::runtime_error("the result has no phase map");
    const DefocusAxis axis = defocusAxis(result.planes);
    const std::string unit = dataUnitOf(context);
    std::vector<FitsHdu> hdus;
    FitsHdu primary;
    primary.keywords = resultKeywords(result, context, "");
    primary.keywords.push_back({"COMMENT",
                                std::string("Extensions: DATA, MODEL, RESIDUAL (data - model), NRESID ((data - model) / sigma "
                                            "of the objective's noise model), ")
                                    + pupilExtensionNames(result)
                                    + (result.planes.size() > 1 && !axis.evenlySpaced ? ", DEFOCUS (table)." : "."),
                                ""});
    hdus.push_back(primary);
    const FitsKeyword inherit{"INHERIT", true, "the primary header applies too"};
    auto cube = [&](const std::string& name, const std::string& bunit, const std::string& bunitComment, const std::string& type,
                    const std::string& typeComment, Image PlaneResult::*member) {
        FitsHdu hdu = planeCube(result, context, axis, name, bunit, bunitComment, type, typeComment, member);
        hdu.keywords.insert(hdu.keywords.begin(), inherit);
        hdus.push_back(hdu);
    };
    cube("DATA", unit, "unit of the data", "data", "the data as fitted, NaN where not used", &PlaneResult::data);
    cube("MODEL", unit, "unit of the data", "model", "model intensity at the solution", &PlaneResult::model);
    cube("RESIDUAL", unit, "unit of the data", "residual", "data - model, NaN where not fitted", &PlaneResult::residual);
    cube("NRESID", "", "dimensionless: residual / sigma", "normalized residual", "(data - model) / sigma of the noise model",
         &PlaneResult::normalizedResidual);
    for (FitsHdu& hdu : pupilHdus(result, context, phaseUnit))
        hdus.push_back(std::move(hdu));
    if (result.planes.size() > 1 && !axis.evenlySpaced)
        hdus.push_back(defocusTable(descriptionsOf(result), axis));
    return QByteArray::fromStdString(fitsBytes(hdus, float32));
}

namespace {
// Encodes with `make` (whose errors get the path in front) and writes all or nothing.
template <class Make>
void writeBytes(const std::string& path, bool overwrite, Make make)
{
    QByteArray bytes;
    try {
        bytes = make();
    } catch (const std::runtime_error& e) {
        throw std::runtime_error(path + ": " + e.what());
    }
    writeFileAtomically(path, bytes, overwrite);
}
} // namespace

void writePhaseFits(const std::string& path, const FitResult& result, const ExportContext& context, const PhaseFitsOptions& options)
{
    writeBytes(path, options.overwrite, [&] { return phaseFitsBytes(result, context, options); });
}

void writeModelFits(const std::string& path, const FitResult& result, const ExportContext& context, bool float32, bool overwrite)
{
    writeBytes(path, overwrite, [&] { return planesFitsBytes(result, context, float32, false); });
}

void writeResidualFits(const std::string& path, const FitResult& result, const ExportContext& context, bool float32, bool overwrite)
{
    writeBytes(path, overwrite, [&] { return planesFitsBytes(result, context, float32, true); });
}

// ---- Coefficients -------------------------------------------------------------------------------

QByteArray coefficientsJson(const FitResult& r)
{
    const QJsonObject o{
        {QStringLiteral("software"), softwareJson()},
        {QStringLiteral("date"), QString::fromStdString(creationDateUtc()) + QLatin1Char('Z')},
        {QStringLiteral("convention"), conventionJson(r.ordering, r.normalization, r.wavelength)},
        {QStringLiteral("coefficients"), coefficientsJsonArray(r)},
        {QStringLiteral("rms_waves"), r.rmsWaves},
        {QStringLiteral("pv_waves"), r.pvWaves},
        {QStringLiteral("strehl"), r.strehl},
    };
    return QJsonDocument(o).toJson();
}

QByteArray coefficientsCsvBytes(const FitResult& result)
{
    return coefficientsCsv(result).toUtf8();
}

} // namespace wfs
