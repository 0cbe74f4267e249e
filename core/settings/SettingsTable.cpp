#include "settings/SettingsTable.h"

#include "settings/SettingsText.h"

#include <algorithm>
#include <climits>

namespace wfs {

namespace {

using Group = SettingGroup;

constexpr std::array<const char*, 3> keys(const char* first, const char* second = nullptr, const char* third = nullptr)
{
    return {first, second, third};
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
        {"wavelength", Group::Metadata, true, keys("metadata.wavelength_m"), "DatasetMetadata::wavelength", "length", "m",
         plausibleAs(Setting::Wavelength), wavelength.c_str(), nullptr, "633nm", false, 3},
        {"pixel-scale", Group::Metadata, true, keys("metadata.pixel_pitch_m", "metadata.pixel_angle_rad"), "DatasetMetadata::pixelPitch",
         "value", "m", plausibleAs(Setting::PixelPitch), pixelScale.c_str(), nullptr, "5.5um"},
        {"f-number", Group::Metadata, true, keys("metadata.f_number"), "DatasetMetadata::fNumber", "F", "", plausibleAs(Setting::FNumber),
         fNumber.c_str(), nullptr, "20"},
        {"na", Group::Metadata, true, keys("metadata.na"), "DatasetMetadata::numericalAperture", "NA", "",
         plausibleAs(Setting::NumericalAperture), na.c_str(), nullptr, "0.9"},
        {"immersion", Group::Metadata, true, keys("metadata.immersion"), "DatasetMetadata::immersionIndex", "n", "",
         plausibleAs(Setting::ImmersionIndex), "Immersion refractive index (default: the headers', else {default}).",
         [](const SettingDefaults& d) { return number(d.metadata.immersionIndex); }, "1.33"},
        {"aperture", Group::Metadata, true, keys("metadata.aperture_m"), "DatasetMetadata::aperture", "length", "m",
         plausibleAs(Setting::Aperture), aperture.c_str(), nullptr, "2.4m"},
        {"sampling", Group::Metadata, true, keys("metadata.sampling"), "DatasetMetadata::samplingQ", "Q", "",
         plausibleAs(Setting::SamplingQ),
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
         keys("metadata.defocus_model"),
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
        {"z-step", Group::Metadata, true, keys("metadata.z_step_m"), "DatasetMetadata::zStep", "length", "m", plausibleAs(Setting::ZStep),
         zStep.c_str(), nullptr, "0.3um", false, 5},
        {"focus-plane",
         Group::Metadata,
         true,
         keys("metadata.focus_plane"),
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
         keys("metadata.data_unit"),
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
         keys("metadata.saturation"),
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
         keys("preprocess.mask_saturated"),
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
         keys("preprocess.subtract_background"),
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
         keys("preprocess.border_width"),
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
         keys("preprocess.clip_sigma"),
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
         keys("preprocess.centre"),
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
         keys("preprocess.centre_each_plane"),
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
         keys("preprocess.crop_size"),
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
         keys("preprocess.mask_hot_pixels", "preprocess.hot_pixel_sigma"),
         "PreprocessOptions::hotPixelSigma",
         "k",
         "",
         {},
         "Mask isolated hot pixels more than k noise deviations above their neighbours (k = {default}), off, or auto (the default: "
         "masked when the sampling is known to be Q >= 2, where a PSF has no isolated bright pixel).",
         [](const SettingDefaults& d) { return number(d.preprocess.hotPixelSigma); },
         "6"},
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
         keys("preprocess.normalise"),
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
         keys("model.obscuration"),
         "ModelSettings::obscuration",
         "ratio",
         "",
         {},
         "Central obscuration, fraction of the pupil diameter (default {default}).",
         [](const SettingDefaults& d) { return number(d.model.obscuration); },
         "0.3"},
        {"spiders", Group::Model, true, keys("model.spiders"), "ModelSettings::spiderCount", "count", "", closed(0, 64),
         "Number of spider vanes (default {default}).", [](const SettingDefaults& d) { return integer(d.model.spiderCount); }, "4"},
        {"spider-width",
         Group::Model,
         true,
         keys("model.spider_width"),
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
         keys("model.grid"),
         "ModelSettings::grid",
         "N",
         "",
         {},
         "Model grid size N (even; default: the data size).",
         nullptr,
         "64",
         true},
        {"order", Group::Model, true, keys("model.order"), "ModelSettings::order", "n", "", closed(1, zernike::kMaxOrder),
         "Highest Zernike radial order, {range} (default {default}).", [](const SettingDefaults& d) { return integer(d.model.order); }, "8",
         true},
        {"ordering",
         Group::Model,
         true,
         keys("model.ordering"),
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
         keys("model.normalization"),
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
         keys("model.objective"),
         "ModelSettings::objective",
         "name",
         "",
         {},
         "poisson, least-squares or weighted (Poisson plus read noise) (default: from the data unit: poisson for photons "
         "or electrons, least-squares for relative or normalised data, weighted for counts; a preset's own).",
         nullptr,
         "poisson",
         true},
        {"read-noise", Group::Model, true, keys("model.read_noise"), "ModelSettings::readNoise", "e", "", plausibleAs(Setting::ReadNoise),
         "Read noise in counts RMS, for --objective weighted (default: the noise of the image border).", nullptr, "3", true},
        {"fit-shift",
         Group::Model,
         true,
         keys("model.fit_shift"),
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
         keys("model.pupil_phase"),
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
         keys("model.pupil_amplitude"),
         "ModelSettings::amplitudeModel",
         "model",
         "",
         {},
         "uniform, gaussian (fitted centre and width) or zonal (exp of one value per pupil pixel) (default {default}).",
         [](const SettingDefaults& d) { return word(d.model.amplitudeModel); },
         "gaussian"},
        {"regularization", Group::Model, true, keys("model.regularization"), "ModelSettings::regularization", "W|auto", "",
         plausibleAs(Setting::Regularization),
         "Smoothness weight W of the zonal terms: (W/2) x the sum of squared neighbour differences, in units of the objective "
         "(about chi^2/2) per rad^2, or auto (a sweep from 1000 to 0.1: the discrepancy principle) (default {default}).",
         [](const SettingDefaults& d) { return number(d.model.regularization); }, "10"},
        {"pixel-integration",
         Group::Model,
         true,
         keys("model.pixel_integration"),
         "ModelSettings::pixelIntegration",
         nullptr,
         "",
         {},
         "Model square detector pixels: the OTF times the pixel's sinc.",
         nullptr,
         ""},
        {"object-diameter", Group::Model, true, keys("model.object_diameter_m"), "ModelSettings::objectDiameter", "length", "m",
         plausibleAs(Setting::ObjectDiameter),
         "Diameter of the imaged object (a uniform sphere, e.g. a bead), e.g. 100nm; needs the sample-plane pixel size (default: a "
         "point).",
         nullptr, "100nm"},
        {"gain", Group::Model, true, keys("model.gain"), "ModelSettings::gain", "e/unit", "", plausibleAs(Setting::Gain),
         "Camera gain in electrons per data unit, or auto (photon transfer: the noise power above the OTF cut-off against the "
         "signal, plane by plane) (default {default}: a count is a photon).",
         [](const SettingDefaults& d) { return number(d.model.gain); }, "2"},
        {"offset", Group::Model, true, keys("model.offset", "model.estimate_offset"), "ModelSettings::offset", "units|auto", "",
         plausibleAs(Setting::CameraOffset),
         "Camera offset (bias) in data units, removed before the Poisson objective (default {default}: the data's BIAS keyword "
         "where it states one). auto: from each plane's border "
         "by photon transfer, mean - gain (variance - read noise^2); needs the read noise (--read-noise or RDNOISE).",
         [](const SettingDefaults& d) { return number(d.model.offset); }, "100"},
        {"bandwidth", Group::Model, true, keys("model.bandwidth_m"), "ModelSettings::bandwidth", "length", "m",
         plausibleAs(Setting::Bandwidth),
         "Full width of the source's band (flat), e.g. 30nm: the image is the sum over wavelengths, each on its own FFT size, so "
         "they fall 2/N of the wavelength apart (default: one wavelength).",
         nullptr, "30nm"},
        {"spectral-samples", Group::Model, true, keys("model.spectral_samples"), "ModelSettings::spectralSamples", "n", "",
         closed(1, kMaxSpectralSamples),
         "Wavelengths across --bandwidth, {range} (default {default}; those closer than the grid's 2/N merge).",
         [](const SettingDefaults& d) { return integer(d.model.spectralSamples); }, "5"},
        {"fit-defocus-scale",
         Group::Model,
         true,
         keys("model.fit_defocus_scale"),
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
         keys("model.fit_defocus_offsets"),
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
         keys("model.fit_sampling"),
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
         keys("model.imaging_model"),
         "ModelSettings::imagingModel",
         "name",
         "",
         {},
         "scalar or vectorial: the fields of a dipole or bead through a high-NA objective (polarisation, Fresnel transmission, "
         "aplanatic apodisation, index mismatch, the emitter's depth, supercritical light); needs --na and --immersion (default "
         "{default}).",
         [](const SettingDefaults& d) { return word(d.model.imagingModel); },
         "vectorial"},
        {"sample-index", Group::Model, true, keys("model.sample_index"), "ModelSettings::sampleIndex", "n", "",
         plausibleAs(Setting::SampleIndex),
         "Vectorial model: refractive index of the sample around the emitter, e.g. 1.33 for water (default: the immersion's, no "
         "mismatch).",
         nullptr, "1.33"},
        {"emitter-depth", Group::Model, true, keys("model.emitter_depth_m"), "ModelSettings::emitterDepth", "length", "m",
         plausibleAs(Setting::EmitterDepth),
         "Vectorial model: the emitter's depth below the coverslip, e.g. 2um (default 0); the planes' z is the objective's nominal "
         "focus relative to that depth.",
         nullptr, "2um"},
        {"fit-emitter-depth",
         Group::Model,
         true,
         keys("model.fit_emitter_depth"),
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
         keys("model.dipole_theta_rad", "model.dipole_phi_rad", "model.dipole_free"),
         "ModelSettings::dipole",
         "free|x|y|z|T,P",
         "rad",
         {},
         "Vectorial model: free (a bead or rotating molecule: x, y, z dipoles add incoherently), x, y, z, or THETA,PHI in degrees "
         "from the optical axis and from +x (default free).",
         nullptr,
         "45,30"},
        {"coverslip-index", Group::Model, true, keys("model.coverslip_index"), "ModelSettings::coverslipIndex", "n", "",
         plausibleAs(Setting::CoverslipIndex), "Vectorial model: the coverslip's index (default: the immersion's, no second interface).",
         nullptr, "1.52"},
        {"coverslip-thickness", Group::Model, true, keys("model.coverslip_thickness_m"), "ModelSettings::coverslipThickness", "length", "m",
         plausibleAs(Setting::CoverslipThickness), "Vectorial model: the coverslip's thickness (default {default}um).",
         [](const SettingDefaults& d) { return number(d.model.coverslipThickness * 1e6); }, "150um"},
        {"design-coverslip-index", Group::Model, true, keys("model.design_coverslip_index"), "ModelSettings::designCoverslipIndex", "n", "",
         plausibleAs(Setting::CoverslipIndex), "Vectorial model: the index the objective is designed for (default: --coverslip-index).",
         nullptr, "1.5"},
        {"design-coverslip-thickness", Group::Model, true, keys("model.design_coverslip_thickness_m"),
         "ModelSettings::designCoverslipThickness", "length", "m", plausibleAs(Setting::CoverslipThickness),
         "Vectorial model: the thickness the objective is designed for (default: --coverslip-thickness).", nullptr, "160um"},
        {"z-direction",
         Group::Model,
         true,
         keys("metadata.z_direction"),
         "DatasetMetadata::zIndexDown",
         "up|down",
         "",
         {},
         "Stacks: up (plane index increases along +z) or down (default up).",
         nullptr,
         "down"},
        {"stages", Group::Model, true, keys("solver.stages"), "SolverSettings::stages", "list", "", closed(1, zernike::kMaxOrder),
         "Coarse-to-fine Zernike orders, e.g. 2,4,6 (the last is the fitted order; default: one stage at --order).", nullptr, "2,4,6",
         true},
        {"remove-defocus",
         Group::Model,
         true,
         keys("solver.remove_defocus"),
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
         keys("solver.uncertainty"),
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
         keys("model.spider_angle_deg"),
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
         keys("model.fit_flux"),
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
         keys("model.fit_background"),
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
         keys("model.fixed_terms"),
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
         keys("solver.backend"),
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
         keys("solver.gradient"),
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
         keys("solver.optimizer"),
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
         keys("solver.precision"),
         "SolverSettings::precision",
         "p",
         "",
         {},
         "double or float (default {default}).",
         [](const SettingDefaults& d) { return word(d.solver.precision); },
         "float"},
        {"threads", Group::Solver, true, keys("solver.threads"), "SolverSettings::threads", "T", "", closed(1, 1024),
         "CPU threads for FFTs and pointwise work (default {default}).", [](const SettingDefaults& d) { return integer(d.solver.threads); },
         "4"},
        {"max-iterations", Group::Solver, true, keys("solver.max_iterations"), "SolverSettings::maxIterations", "K", "", closed(1, INT_MAX),
         "Iteration limit of the whole run: coarse-to-fine stages, a sampling profile and a smoothness weight's search share it, and a run "
         "it ends says not converged, with the best result so far (default {default}).",
         [](const SettingDefaults& d) { return integer(d.solver.maxIterations); }, "500"},
        {"gtol",
         Group::Solver,
         true,
         keys("solver.gtol"),
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
         keys("solver.ftol"),
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

std::string settingSessionKey(const std::string& name)
{
    const SettingDescription* s = findSetting(name);
    return s && s->sessionKeys[0] ? s->sessionKeys[0] : name;
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
