#include "settings/SettingsTable.h"

#include "settings/SettingsText.h"

#include <algorithm>
#include <climits>

namespace wfs {

namespace {

using Group = SettingGroup;

std::array<SessionKey, 3> keys(SessionKey first, SessionKey second = {}, SessionKey third = {})
{
    return {first, second, third};
}

constexpr const char* kAuto = "auto"; // how a session writes a setting that core decides

// z_direction: the words "up" and "down" for DatasetMetadata::zIndexDown.
SettingAccess zDirectionAccess()
{
    SettingAccess access;
    access.type = SettingType::Word;
    access.part = SettingPart::Metadata;
    access.words = [] { return std::vector<std::string>{"up", "down"}; };
    access.get = [](const SettingsBundle& b) { return SettingValue{std::string(b.metadata.zIndexDown ? "down" : "up")}; };
    access.set = [](SettingsBundle& b, const SettingValue& v) { b.metadata.zIndexDown = std::get<std::string>(v) == "down"; };
    return access;
}

SettingRange plausibleAs(Setting setting)
{
    return {SettingRange::Kind::Plausible, setting, 0.0, 0.0};
}

SettingRange closed(double lo, double hi)
{
    return {SettingRange::Kind::Closed, Setting::Wavelength, lo, hi};
}

// A default as the help has always written it (QString::arg's shortest form).
QString number(double value)
{
    return QStringLiteral("%1").arg(value);
}

QString integer(int value)
{
    return QString::number(value);
}

template <typename E>
QString word(E value)
{
    return QLatin1String(settingText(value));
}

constexpr const char* kFromHeaders = " (default: from the files' headers or sidecars)";

std::vector<SettingDescription> metadataSettings()
{
    // A table, one entry per setting (settings/SettingsTable.h): its length is its settings'.
    // The metadata's own words: unknown until the files or the user say, so their defaults are said in words.
    static const std::string wavelength = std::string("Wavelength, e.g. 633nm") + kFromHeaders;
    static const std::string pixelScale =
        std::string("Pixel pitch (with --f-number or --na) or angle (arcsec, mas, rad; with --aperture)") + kFromHeaders;
    static const std::string fNumber = std::string("Focal ratio F#: Q = lambda F# / pitch") + kFromHeaders;
    static const std::string na = std::string("Numerical aperture: Q = lambda / (2 NA pitch)") + kFromHeaders;
    static const std::string aperture = std::string("Aperture diameter, with an angular pixel scale") + kFromHeaders;
    static const std::string zStep =
        std::string("Stacks: axial step between planes (e.g. 0.3um); plane i is at (i - focus plane) * step") + kFromHeaders;
    static const std::string focusPlane =
        std::string("Stacks: the plane (0-based, may be fractional) at focus, for --z-step") + kFromHeaders;
    return {
        {"wavelength", Group::Metadata, true, keys({"metadata.wavelength_m", fieldAccess<&DatasetMetadata::wavelength>()}),
         "DatasetMetadata::wavelength", "length", "m", plausibleAs(Setting::Wavelength), wavelength.c_str(), nullptr, "633nm", false, 3},
        {"pixel-scale", Group::Metadata, true,
         keys({"metadata.pixel_pitch_m", fieldAccess<&DatasetMetadata::pixelPitch>()},
              {"metadata.pixel_angle_rad", fieldAccess<&DatasetMetadata::pixelAngle>()}),
         "DatasetMetadata::pixelPitch", "value", "m", plausibleAs(Setting::PixelPitch), pixelScale.c_str(), nullptr, "5.5um"},
        {"f-number", Group::Metadata, true, keys({"metadata.f_number", fieldAccess<&DatasetMetadata::fNumber>()}),
         "DatasetMetadata::fNumber", "F", "", plausibleAs(Setting::FNumber), fNumber.c_str(), nullptr, "20"},
        {"na", Group::Metadata, true, keys({"metadata.na", fieldAccess<&DatasetMetadata::numericalAperture>()}),
         "DatasetMetadata::numericalAperture", "NA", "", plausibleAs(Setting::NumericalAperture), na.c_str(), nullptr, "0.9"},
        {"immersion", Group::Metadata, true, keys({"metadata.immersion", fieldAccess<&DatasetMetadata::immersionIndex>()}),
         "DatasetMetadata::immersionIndex", "n", "", plausibleAs(Setting::ImmersionIndex),
         "Immersion refractive index (default: the headers', else {default}).",
         [](const SettingDefaults& d) { return number(d.metadata.immersionIndex); }, "1.33"},
        {"aperture", Group::Metadata, true, keys({"metadata.aperture_m", fieldAccess<&DatasetMetadata::aperture>()}),
         "DatasetMetadata::aperture", "length", "m", plausibleAs(Setting::Aperture), aperture.c_str(), nullptr, "2.4m"},
        {"sampling", Group::Metadata, true, keys({"metadata.sampling", fieldAccess<&DatasetMetadata::samplingQ>()}),
         "DatasetMetadata::samplingQ", "Q", "", plausibleAs(Setting::SamplingQ),
         "Sampling Q = lambda F# / pixel, given directly (default: the headers', else from the pixel scale and the optics).", nullptr,
         "2.5", false, 4},
        {"defocus",
         Group::Metadata,
         true,
         keys("planes[].defocus"),
         "DatasetPlane::defocus",
         "list",
         "waves",
         {},
         "One entry per plane that takes part: waves of W020 ('1w') or an axial length ('0.9um') (default: the headers', "
         "sidecars' or --z-step's).",
         nullptr,
         "-1w,0,1w",
         false,
         1},
        {"defocus-model",
         Group::Metadata,
         true,
         keys({"metadata.defocus_model", fieldAccess<&DatasetMetadata::defocusModel>()}),
         "DatasetMetadata::defocusModel",
         "model",
         "",
         {},
         "paraxial or high-na, for defocus given as lengths (default: the headers', else {default}).",
         [](const SettingDefaults& d) { return word(d.metadata.defocusModel); },
         "high-na"},
        {"planes",
         Group::Metadata,
         true,
         keys("planes[].use"),
         "DatasetPlane::use",
         "list",
         "",
         {},
         "Planes that take part (0-based, in file order; default: all).",
         nullptr,
         "0,2",
         false,
         2},
        {"z-step", Group::Metadata, true, keys({"metadata.z_step_m", fieldAccess<&DatasetMetadata::zStep>()}), "DatasetMetadata::zStep",
         "length", "m", plausibleAs(Setting::ZStep), zStep.c_str(), nullptr, "0.3um", false, 5},
        {"focus-plane",
         Group::Metadata,
         true,
         keys({"metadata.focus_plane", fieldAccess<&DatasetMetadata::focusPlane>()}),
         "DatasetMetadata::focusPlane",
         "index",
         "",
         {},
         focusPlane.c_str(),
         nullptr,
         "1",
         false,
         6},
        {"data-unit",
         Group::Metadata,
         true,
         keys({"metadata.data_unit", fieldAccess<&DatasetMetadata::dataUnit>()}),
         "DatasetMetadata::dataUnit",
         "unit",
         "",
         {},
         "photons, electrons, counts, adu or relative; chooses the objective (default: the FITS BUNIT, else counts).",
         nullptr,
         "photons"},
    };
}

std::vector<SettingDescription> preparationSettings()
{
    // A table, one entry per setting (settings/SettingsTable.h): its length is its settings'.
    return {
        {"saturation",
         Group::Preparation,
         true,
         keys({"metadata.saturation", fieldAccess<&DatasetMetadata::saturationLevel>()}),
         "DatasetMetadata::saturationLevel",
         "level",
         "",
         {},
         "Saturation level in data units (default: the format's maximum).",
         nullptr,
         "60000"},
        {"no-saturation-mask",
         Group::Preparation,
         true,
         keys({"preprocess.mask_saturated", fieldAccess<&PreprocessOptions::maskSaturated>()}),
         "PreprocessOptions::maskSaturated",
         nullptr,
         "",
         {},
         "Keep saturated pixels in the fit.",
         nullptr,
         ""},
        {"no-background",
         Group::Preparation,
         true,
         keys({"preprocess.subtract_background", fieldAccess<&PreprocessOptions::subtractBackground>()}),
         "PreprocessOptions::subtractBackground",
         nullptr,
         "",
         {},
         "Do not subtract the border background.",
         nullptr,
         ""},
        {"border",
         Group::Preparation,
         true,
         keys({"preprocess.border_width", fieldAccess<&PreprocessOptions::borderWidth>()}),
         "PreprocessOptions::borderWidth",
         "pixels",
         "",
         {},
         "Border width for the background, pixels (default: the image size / 16, at least 2).",
         nullptr,
         "4"},
        {"clip-sigma",
         Group::Preparation,
         true,
         keys({"preprocess.clip_sigma", fieldAccess<&PreprocessOptions::clipSigma>()}),
         "PreprocessOptions::clipSigma",
         "k",
         "",
         {},
         "Sigma clipping of the border statistics (default {default}).",
         [](const SettingDefaults& d) { return number(d.preprocess.clipSigma); },
         "2.5"},
        {"centre",
         Group::Preparation,
         true,
         keys({"preprocess.centre", fieldAccess<&PreprocessOptions::centre>()}),
         "PreprocessOptions::centre",
         "method",
         "",
         {},
         "Centre the PSF: auto, none, peak or centroid (default {default}: peak for a z-stack, whose planes a z step places, none "
         "otherwise).",
         [](const SettingDefaults& d) { return word(d.preprocess.centre); },
         "peak"},
        {"centre-each-plane",
         Group::Preparation,
         true,
         keys({"preprocess.centre_each_plane", fieldAccess<&PreprocessOptions::centreEachPlane>()}),
         "PreprocessOptions::centreEachPlane",
         nullptr,
         "",
         {},
         "Centre every plane on its own (default: one centre for the stack).",
         nullptr,
         ""},
        {"crop",
         Group::Preparation,
         true,
         keys({"preprocess.crop_size", fieldAccess<&PreprocessOptions::cropSize>()}),
         "PreprocessOptions::cropSize",
         "N",
         "",
         {},
         "Crop to N x N pixels around the centre (even N; default: no crop).",
         nullptr,
         "32"},
        {"hot-pixels",
         Group::Preparation,
         true,
         keys({"preprocess.mask_hot_pixels", fieldAccess<&PreprocessOptions::maskHotPixels>(kAuto)},
              {"preprocess.hot_pixel_sigma", fieldAccess<&PreprocessOptions::hotPixelSigma>()}),
         "PreprocessOptions::hotPixelSigma",
         "k",
         "",
         {},
         "Mask isolated hot pixels more than k noise deviations above their neighbours (k = {default}), off, or auto (the default: "
         "masked when the sampling is known to be Q >= 2, where a PSF has no isolated bright pixel).",
         [](const SettingDefaults& d) { return number(d.preprocess.hotPixelSigma); },
         "6"},
        {"hot-pixel-ratio", Group::Preparation, true,
         keys({"preprocess.hot_pixel_ratio", fieldAccess<&PreprocessOptions::hotPixelRatio>()}), "PreprocessOptions::hotPixelRatio",
         "ratio", "", closed(1, 100),
         "Hot pixels: how many times as bright as their brightest neighbour, above the background, pixels must also be to be "
         "masked, {range} (default {default}; a diffraction-limited core pixel is 3.4 times its neighbours at Q = 1.5).",
         [](const SettingDefaults& d) { return number(d.preprocess.hotPixelRatio); }, "4"},
        {"bad-pixels",
         Group::Preparation,
         true,
         keys("preprocess.bad_pixels"),
         "PreprocessOptions::badPixels",
         "list",
         "",
         {},
         "Mask these pixels in every plane: column:row,... (raw image coordinates; default: none).",
         nullptr,
         "10:20,31:7"},
        {"normalise",
         Group::Preparation,
         true,
         keys({"preprocess.normalise", fieldAccess<&PreprocessOptions::normalise>()}),
         "PreprocessOptions::normalise",
         nullptr,
         "",
         {},
         "Scale every plane to unit sum (least-squares objective).",
         nullptr,
         ""},
    };
}

// The geometry and the Zernike basis, the objective, the pupil function, the detector and the source.
std::vector<SettingDescription> modelBasisSettings()
{
    // A table, one entry per setting (settings/SettingsTable.h): its length is its settings'.
    return {
        {"obscuration",
         Group::Model,
         true,
         keys({"model.obscuration", fieldAccess<&ModelSettings::obscuration>()}),
         "ModelSettings::obscuration",
         "ratio",
         "",
         {},
         "Central obscuration, fraction of the pupil diameter (default {default}).",
         [](const SettingDefaults& d) { return number(d.model.obscuration); },
         "0.3"},
        {"spiders", Group::Model, true, keys({"model.spiders", fieldAccess<&ModelSettings::spiderCount>()}), "ModelSettings::spiderCount",
         "count", "", closed(0, 64), "Number of spider vanes (default {default}).",
         [](const SettingDefaults& d) { return integer(d.model.spiderCount); }, "4"},
        {"spider-width",
         Group::Model,
         true,
         keys({"model.spider_width", fieldAccess<&ModelSettings::spiderWidth>()}),
         "ModelSettings::spiderWidth",
         "w",
         "",
         {},
         "Vane width, fraction of the pupil diameter (default {default}).",
         [](const SettingDefaults& d) { return number(d.model.spiderWidth); },
         "0.05"},
        {"grid",
         Group::Model,
         true,
         keys({"model.grid", fieldAccess<&ModelSettings::grid>()}),
         "ModelSettings::grid",
         "N",
         "",
         {},
         "Model grid size N (even; default: the data size).",
         nullptr,
         "64",
         true},
        {"order", Group::Model, true, keys({"model.order", fieldAccess<&ModelSettings::order>()}), "ModelSettings::order", "n", "",
         closed(1, zernike::kMaxOrder), "Highest Zernike radial order, {range} (default {default}).",
         [](const SettingDefaults& d) { return integer(d.model.order); }, "8", true},
        {"ordering",
         Group::Model,
         true,
         keys({"model.ordering", fieldAccess<&ModelSettings::ordering>()}),
         "ModelSettings::ordering",
         "name",
         "",
         {},
         "noll or ansi (default {default}).",
         [](const SettingDefaults& d) { return word(d.model.ordering); },
         "ansi"},
        {"normalization",
         Group::Model,
         true,
         keys({"model.normalization", fieldAccess<&ModelSettings::normalization>()}),
         "ModelSettings::normalization",
         "name",
         "",
         {},
         "rms (Noll) or unit (R(1) = 1) (default {default}).",
         [](const SettingDefaults& d) { return word(d.model.normalization); },
         "unit"},
        {"objective",
         Group::Model,
         true,
         keys({"model.objective", fieldAccess<&ModelSettings::objective>()}),
         "ModelSettings::objective",
         "name",
         "",
         {},
         "poisson, least-squares or weighted (Poisson plus read noise) (default: from the data unit: poisson for photons "
         "or electrons, least-squares for relative or normalised data, weighted for counts; a preset's own).",
         nullptr,
         "poisson",
         true},
        {"read-noise", Group::Model, true, keys({"model.read_noise", fieldAccess<&ModelSettings::readNoise>()}), "ModelSettings::readNoise",
         "e", "", plausibleAs(Setting::ReadNoise),
         "Read noise in counts RMS, for --objective weighted (default: the noise of the image border).", nullptr, "3", true},
        {"fit-shift",
         Group::Model,
         true,
         keys({"model.fit_shift", fieldAccess<&ModelSettings::fitShift>()}),
         "ModelSettings::fitShift",
         nullptr,
         "",
         {},
         "Fit a tip/tilt per plane (drift between planes).",
         nullptr,
         ""},
        {"pupil-phase",
         Group::Model,
         true,
         keys({"model.pupil_phase", fieldAccess<&ModelSettings::phaseModel>()}),
         "ModelSettings::phaseModel",
         "model",
         "",
         {},
         "zernike, zonal (one value per pupil pixel) or both (Zernike terms plus a zonal remainder orthogonal to them) (default "
         "{default}).",
         [](const SettingDefaults& d) { return word(d.model.phaseModel); },
         "zonal"},
        {"pupil-amplitude",
         Group::Model,
         true,
         keys({"model.pupil_amplitude", fieldAccess<&ModelSettings::amplitudeModel>()}),
         "ModelSettings::amplitudeModel",
         "model",
         "",
         {},
         "uniform, gaussian (fitted centre and width) or zonal (exp of one value per pupil pixel) (default {default}).",
         [](const SettingDefaults& d) { return word(d.model.amplitudeModel); },
         "gaussian"},
        {"regularization", Group::Model, true, keys({"model.regularization", fieldAccess<&ModelSettings::regularization>()}),
         "ModelSettings::regularization", "W|auto", "", plausibleAs(Setting::Regularization),
         "Smoothness weight W of the zonal terms: (W/2) x the sum of squared neighbour differences, in units of the objective "
         "(about chi^2/2) per rad^2, or auto (a sweep from 1000 to 0.1: the discrepancy principle) (default {default}).",
         [](const SettingDefaults& d) { return number(d.model.regularization); }, "10"},
        {"pixel-integration",
         Group::Model,
         true,
         keys({"model.pixel_integration", fieldAccess<&ModelSettings::pixelIntegration>()}),
         "ModelSettings::pixelIntegration",
         nullptr,
         "",
         {},
         "Model square detector pixels: the OTF times the pixel's sinc.",
         nullptr,
         ""},
        {"object-diameter", Group::Model, true, keys({"model.object_diameter_m", fieldAccess<&ModelSettings::objectDiameter>()}),
         "ModelSettings::objectDiameter", "length", "m", plausibleAs(Setting::ObjectDiameter),
         "Diameter of the imaged object (a uniform sphere, e.g. a bead), e.g. 100nm; needs the sample-plane pixel size (default: a "
         "point).",
         nullptr, "100nm"},
        {"gain", Group::Model, true, keys({"model.gain", fieldAccess<&ModelSettings::gain>()}), "ModelSettings::gain", "e/unit", "",
         plausibleAs(Setting::Gain),
         "Camera gain in electrons per data unit, or auto (photon transfer: the noise power above the OTF cut-off against the "
         "signal, plane by plane) (default {default}: a count is a photon).",
         [](const SettingDefaults& d) { return number(d.model.gain); }, "2"},
        {"offset", Group::Model, true,
         keys({"model.offset", fieldAccess<&ModelSettings::offset>()},
              {"model.estimate_offset", fieldAccess<&ModelSettings::estimateOffset>()}),
         "ModelSettings::offset", "units|auto", "", plausibleAs(Setting::CameraOffset),
         "Camera offset (bias) in data units, removed before the Poisson objective (default {default}: the data's BIAS keyword "
         "where it states one). auto: from each plane's border "
         "by photon transfer, mean - gain (variance - read noise^2); needs the read noise (--read-noise or RDNOISE).",
         [](const SettingDefaults& d) { return number(d.model.offset); }, "100"},
        {"bandwidth", Group::Model, true, keys({"model.bandwidth_m", fieldAccess<&ModelSettings::bandwidth>()}), "ModelSettings::bandwidth",
         "length", "m", plausibleAs(Setting::Bandwidth),
         "Full width of the source's band (flat), e.g. 30nm: the image is the sum over wavelengths, each on its own FFT size, so "
         "they fall 2/N of the wavelength apart (default: one wavelength).",
         nullptr, "30nm"},
        {"spectral-samples", Group::Model, true, keys({"model.spectral_samples", fieldAccess<&ModelSettings::spectralSamples>()}),
         "ModelSettings::spectralSamples", "n", "", closed(1, kMaxSpectralSamples),
         "Wavelengths across --bandwidth, {range} (default {default}; those closer than the grid's 2/N merge).",
         [](const SettingDefaults& d) { return integer(d.model.spectralSamples); }, "5"},
        {"fit-defocus-scale",
         Group::Model,
         true,
         keys({"model.fit_defocus_scale", fieldAccess<&ModelSettings::fitDefocusScale>()}),
         "ModelSettings::fitDefocusScale",
         nullptr,
         "",
         {},
         "Fit a scale of every plane's defocus (a z-step calibration error).",
         nullptr,
         ""},
        {"fit-defocus-offsets",
         Group::Model,
         true,
         keys({"model.fit_defocus_offsets", fieldAccess<&ModelSettings::fitDefocusOffsets>()}),
         "ModelSettings::fitDefocusOffsets",
         nullptr,
         "",
         {},
         "Fit a defocus offset per plane (the plane nearest focus is held; with --fit-defocus-scale the two outermost too).",
         nullptr,
         ""},
        {"fit-sampling",
         Group::Model,
         true,
         keys({"model.fit_sampling", fieldAccess<&ModelSettings::fitSampling>()}),
         "ModelSettings::fitSampling",
         nullptr,
         "",
         {},
         "Fit the sampling Q as an NA error (with an axial defocus the defocus follows the NA; otherwise a pixel-size error): the "
         "cost profiled over the NA by whole fits in 4 % steps, then the parabola's vertex; reported with a 1-sigma error.",
         nullptr,
         ""},
    };
}

// The imaging model (ModelSettings' block of that name), then the stack's direction and the run's own.
std::vector<SettingDescription> modelImagingSettings()
{
    // A table, one entry per setting (settings/SettingsTable.h): its length is its settings'.
    return {
        {"model",
         Group::Model,
         true,
         keys({"model.imaging_model", fieldAccess<&ModelSettings::imagingModel>()}),
         "ModelSettings::imagingModel",
         "name",
         "",
         {},
         "scalar or vectorial: the fields of a dipole or bead through a high-NA objective (polarisation, Fresnel transmission, "
         "aplanatic apodisation, index mismatch, the emitter's depth, supercritical light); needs --na and --immersion (default "
         "{default}).",
         [](const SettingDefaults& d) { return word(d.model.imagingModel); },
         "vectorial"},
        {"sample-index", Group::Model, true, keys({"model.sample_index", fieldAccess<&ModelSettings::sampleIndex>()}),
         "ModelSettings::sampleIndex", "n", "", plausibleAs(Setting::SampleIndex),
         "Vectorial model: refractive index of the sample around the emitter, e.g. 1.33 for water (default: the immersion's, no "
         "mismatch).",
         nullptr, "1.33"},
        {"emitter-depth", Group::Model, true, keys({"model.emitter_depth_m", fieldAccess<&ModelSettings::emitterDepth>()}),
         "ModelSettings::emitterDepth", "length", "m", plausibleAs(Setting::EmitterDepth),
         "Vectorial model: the emitter's depth below the coverslip, e.g. 2um (default 0); the planes' z is the objective's nominal "
         "focus relative to that depth.",
         nullptr, "2um"},
        {"fit-emitter-depth",
         Group::Model,
         true,
         keys({"model.fit_emitter_depth", fieldAccess<&ModelSettings::fitEmitterDepth>()}),
         "ModelSettings::fitEmitterDepth",
         nullptr,
         "",
         {},
         "Vectorial model: fit the emitter's depth (needs --sample-index other than the immersion's).",
         nullptr,
         ""},
        {"dipole",
         Group::Model,
         true,
         keys({"model.dipole_theta_rad", fieldAccess<&ModelSettings::dipole, &DipoleSpec::theta>()},
              {"model.dipole_phi_rad", fieldAccess<&ModelSettings::dipole, &DipoleSpec::phi>()},
              {"model.dipole_free", fieldAccess<&ModelSettings::dipole, &DipoleSpec::free>()}),
         "ModelSettings::dipole",
         "free|x|y|z|T,P",
         "rad",
         {},
         "Vectorial model: free (a bead or rotating molecule: x, y, z dipoles add incoherently), x, y, z, or THETA,PHI in degrees "
         "from the optical axis and from +x (default free).",
         nullptr,
         "45,30"},
        {"coverslip-index", Group::Model, true, keys({"model.coverslip_index", fieldAccess<&ModelSettings::coverslipIndex>()}),
         "ModelSettings::coverslipIndex", "n", "", plausibleAs(Setting::CoverslipIndex),
         "Vectorial model: the coverslip's index (default: the immersion's, no second interface).", nullptr, "1.52"},
        {"coverslip-thickness", Group::Model, true,
         keys({"model.coverslip_thickness_m", fieldAccess<&ModelSettings::coverslipThickness>()}), "ModelSettings::coverslipThickness",
         "length", "m", plausibleAs(Setting::CoverslipThickness), "Vectorial model: the coverslip's thickness (default {default}um).",
         [](const SettingDefaults& d) { return number(d.model.coverslipThickness * 1e6); }, "150um"},
        {"design-coverslip-index", Group::Model, true,
         keys({"model.design_coverslip_index", fieldAccess<&ModelSettings::designCoverslipIndex>()}), "ModelSettings::designCoverslipIndex",
         "n", "", plausibleAs(Setting::CoverslipIndex),
         "Vectorial model: the index the objective is designed for (default: --coverslip-index).", nullptr, "1.5"},
        {"design-coverslip-thickness", Group::Model, true,
         keys({"model.design_coverslip_thickness_m", fieldAccess<&ModelSettings::designCoverslipThickness>()}),
         "ModelSettings::designCoverslipThickness", "length", "m", plausibleAs(Setting::CoverslipThickness),
         "Vectorial model: the thickness the objective is designed for (default: --coverslip-thickness).", nullptr, "160um"},
        {"z-direction",
         Group::Model,
         true,
         keys({"metadata.z_direction", zDirectionAccess()}),
         "DatasetMetadata::zIndexDown",
         "up|down",
         "",
         {},
         "Stacks: up (plane index increases along +z) or down (default up).",
         nullptr,
         "down"},
        {"stages", Group::Model, true, keys({"solver.stages", fieldAccess<&SolverSettings::stages>()}), "SolverSettings::stages", "list",
         "", closed(1, zernike::kMaxOrder),
         "Coarse-to-fine Zernike orders, e.g. 2,4,6 (the last is the fitted order; default: one stage at --order).", nullptr, "2,4,6",
         true},
        {"remove-defocus",
         Group::Model,
         true,
         keys({"solver.remove_defocus", fieldAccess<&SolverSettings::removeDefocus>(kAuto)}),
         "SolverSettings::removeDefocus",
         nullptr,
         "",
         {},
         "Headline RMS, PV and Strehl with defocus removed (default: removed for defocus-diverse data such as z-stacks, where the "
         "fitted defocus is where focus sits in the stack; the figures with defocus are shown beside them).",
         nullptr,
         "",
         true},
        {"no-uncertainty",
         Group::Model,
         true,
         keys({"solver.uncertainty", fieldAccess<&SolverSettings::computeUncertainty>()}),
         "SolverSettings::computeUncertainty",
         nullptr,
         "",
         {},
         "Skip the uncertainty estimate (2 P extra gradients).",
         nullptr,
         "",
         true},
        // Kept in session files (and set by the desktop program), without a flag of their own.
        {"spider-angle",
         Group::Model,
         false,
         keys({"model.spider_angle_deg", fieldAccess<&ModelSettings::spiderAngleDeg>()}),
         "ModelSettings::spiderAngleDeg",
         nullptr,
         "deg",
         {},
         "The first spider vane's angle, degrees.",
         nullptr,
         "30"},
        {"fit-flux",
         Group::Model,
         false,
         keys({"model.fit_flux", fieldAccess<&ModelSettings::fitFlux>()}),
         "ModelSettings::fitFlux",
         nullptr,
         "",
         {},
         "Fit each plane's flux.",
         nullptr,
         "false"},
        {"fit-background",
         Group::Model,
         false,
         keys({"model.fit_background", fieldAccess<&ModelSettings::fitBackground>()}),
         "ModelSettings::fitBackground",
         nullptr,
         "",
         {},
         "Fit each plane's background.",
         nullptr,
         "false"},
        {"fixed-terms",
         Group::Model,
         false,
         keys({"model.fixed_terms", fieldAccess<&ModelSettings::fixedTerms>()}),
         "ModelSettings::fixedTerms",
         nullptr,
         "",
         {},
         "Zernike terms held at zero (indices in the ordering).",
         nullptr,
         "[5,6]"},
    };
}

std::vector<SettingDescription> solverSettings()
{
    // A table, one entry per setting (settings/SettingsTable.h): its length is its settings'.
    return {
        {"backend",
         Group::Solver,
         true,
         keys({"solver.backend", fieldAccess<&SolverSettings::backend>()}),
         "SolverSettings::backend",
         "name",
         "",
         {},
         "cpu or gpu (default {default}).",
         [](const SettingDefaults& d) { return word(d.solver.backend); },
         "gpu"},
        {"gradient",
         Group::Solver,
         true,
         keys({"solver.gradient", fieldAccess<&SolverSettings::gradient>()}),
         "SolverSettings::gradient",
         "kind",
         "",
         {},
         "adjoint (exact) or fd (forward differences) (default {default}).",
         [](const SettingDefaults& d) { return word(d.solver.gradient); },
         "fd"},
        {"optimizer",
         Group::Solver,
         true,
         keys({"solver.optimizer", fieldAccess<&SolverSettings::optimizer>()}),
         "SolverSettings::optimizer",
         "name",
         "",
         {},
         "bfgs or lbfgs (default {default}).",
         [](const SettingDefaults& d) { return word(d.solver.optimizer); },
         "lbfgs"},
        {"precision",
         Group::Solver,
         true,
         keys({"solver.precision", fieldAccess<&SolverSettings::precision>()}),
         "SolverSettings::precision",
         "p",
         "",
         {},
         "double or float (default {default}).",
         [](const SettingDefaults& d) { return word(d.solver.precision); },
         "float"},
        {"threads", Group::Solver, true, keys({"solver.threads", fieldAccess<&SolverSettings::threads>()}), "SolverSettings::threads", "T",
         "", closed(1, 1024), "CPU threads for FFTs and pointwise work (default {default}).",
         [](const SettingDefaults& d) { return integer(d.solver.threads); }, "4"},
        {"max-iterations", Group::Solver, true, keys({"solver.max_iterations", fieldAccess<&SolverSettings::maxIterations>()}),
         "SolverSettings::maxIterations", "K", "", closed(1, INT_MAX),
         "Iteration limit of the whole run: coarse-to-fine stages, a sampling profile and a smoothness weight's search share it, and a run "
         "it ends says not converged, with the best result so far (default {default}).",
         [](const SettingDefaults& d) { return integer(d.solver.maxIterations); }, "500"},
        {"gtol",
         Group::Solver,
         true,
         keys({"solver.gtol", fieldAccess<&SolverSettings::gradientTolerance>()}),
         "SolverSettings::gradientTolerance",
         "X",
         "",
         {},
         "Stop when the gradient's max-norm is at most X (default {default}).",
         [](const SettingDefaults& d) { return QStringLiteral("%1").arg(d.solver.gradientTolerance, 0, 'g', 6); },
         "1e-8"},
        {"ftol",
         Group::Solver,
         true,
         keys({"solver.ftol", fieldAccess<&SolverSettings::functionTolerance>()}),
         "SolverSettings::functionTolerance",
         "X",
         "",
         {},
         "Stop when the relative cost change is below X (default {default}).",
         [](const SettingDefaults& d) { return QStringLiteral("%1").arg(d.solver.functionTolerance, 0, 'g', 6); },
         "1e-9"},
    };
}

} // namespace

const std::vector<SettingDescription>& settingsTable()
{
    static const std::vector<SettingDescription> table = [] {
        std::vector<SettingDescription> all;
        for (auto group : {metadataSettings(), preparationSettings(), modelBasisSettings(), modelImagingSettings(), solverSettings()})
            all.insert(all.end(), group.begin(), group.end());
        return all;
    }();
    return table;
}

const SettingDescription* findSetting(std::string_view name)
{
    for (const SettingDescription& s : settingsTable())
        if (name == s.name)
            return &s;
    return nullptr;
}

QString settingHelp(const SettingDescription& s, const SettingDefaults& defaults)
{
    QString text = QString::fromUtf8(s.help);
    if (s.defaultText)
        text.replace(QLatin1String("{default}"), s.defaultText(defaults));
    if (s.range.kind == SettingRange::Kind::Closed)
        text.replace(QLatin1String("{range}"), QStringLiteral("%1..%2").arg(s.range.lo).arg(s.range.hi));
    // A note goes inside the parenthesis that states the default: "(default 6; --preset demo 6, oof 8)."
    const auto note = defaults.notes.find(s.name);
    if (note != defaults.notes.end() && !note->second.isEmpty()) {
        const qsizetype close = text.indexOf(QLatin1Char(')'), text.lastIndexOf(QLatin1String("default")));
        if (close >= 0)
            text.insert(close, QStringLiteral("; ") + note->second);
    }
    return text;
}

std::optional<SettingsError> closedRangeError(std::string_view name, double value)
{
    const SettingDescription* s = findSetting(name);
    if (!s || s->range.kind != SettingRange::Kind::Closed || (value >= s->range.lo && value <= s->range.hi))
        return std::nullopt;
    return SettingsError(s->name, "must be from " + number(s->range.lo).toStdString() + " to " + number(s->range.hi).toStdString()
                                      + " (got " + number(value).toStdString() + ")");
}

std::string settingSessionKey(const std::string& name)
{
    const SettingDescription* s = findSetting(name);
    return s && s->sessionKeys[0].name ? s->sessionKeys[0].name : name;
}

std::vector<std::string> manifestColumns()
{
    std::vector<const SettingDescription*> columns;
    for (const SettingDescription& s : settingsTable())
        if (s.manifestColumn > 0)
            columns.push_back(&s);
    std::sort(columns.begin(), columns.end(), [](auto* a, auto* b) { return a->manifestColumn < b->manifestColumn; });
    std::vector<std::string> names;
    for (const SettingDescription* s : columns)
        names.emplace_back(s->name);
    return names;
}

} // namespace wfs
