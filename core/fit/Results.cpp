#include "fit/Results.h"

#include "optics/Fftw.h"

#include <Eigen/Dense>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

namespace wfs {

namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
} // namespace

Eigen::VectorXd flattenedPhase(const Problem& problem, const ModelParameters& p, bool removeDefocus)
{
    const Eigen::VectorXd phase = problem.pupilPhase(p);
    const int pixels = problem.pupilPixelCount();
    Eigen::MatrixXd design(pixels, removeDefocus ? 4 : 3);
    for (int i = 0; i < pixels; ++i) {
        const double x = problem.pupilX()[size_t(i)], y = problem.pupilY()[size_t(i)];
        design(i, 0) = 1.0;
        design(i, 1) = x;
        design(i, 2) = y;
        if (removeDefocus)
            design(i, 3) = x * x + y * y;
    }
    const Eigen::VectorXd fit = design.colPivHouseholderQr().solve(phase);
    return phase - design * fit;
}

namespace {

// Peak intensity of the in-focus PSF for a pupil phase (on pupil pixels), found anywhere on the grid.
double psfPeak(const Problem& problem, const ModelParameters& p, const Eigen::VectorXd& phase)
{
    const std::vector<double> psf = inFocusIntensity(problem, p, phase);
    return psf.empty() ? 0.0 : *std::max_element(psf.begin(), psf.end());
}
} // namespace

std::vector<double> inFocusIntensity(const Problem& problem, const ModelParameters& p, const Eigen::VectorXd& phase)
{
    const int n = problem.gridSize();
    fftw::ComplexBuffer<double> buffer(size_t(n) * size_t(n));
    std::fill(buffer.data(), buffer.data() + buffer.size(), std::complex<double>(0, 0));
    const std::vector<double> amplitude = problem.pupilAmplitude(p);
    for (int i = 0; i < problem.pupilPixelCount(); ++i)
        buffer.data()[problem.pupilIndex()[size_t(i)]] = std::polar(amplitude[size_t(i)], phase[i]);
    fftw::PlanKey key;
    key.n = n;
    key.axes = fftw::Axes::Full2d;
    key.direction = fftw::Direction::Backward;
    key.measure = false;
    fftw::Traits<double>::execute(fftw::plan<double>(key), buffer.raw(), buffer.raw());
    std::vector<double> out(buffer.size());
    for (size_t i = 0; i < buffer.size(); ++i)
        out[i] = std::norm(buffer.data()[i]);
    return out;
}

std::vector<Image> modelImagesInDataLayout(ModelEvaluator& evaluator, const std::vector<double>& parameters)
{
    const Problem& problem = evaluator.problem();
    const auto grids = evaluator.modelImages(parameters.data());
    std::vector<Image> images;
    for (int k = 0; k < problem.planeCount(); ++k) {
        const Image& data = problem.spec().planes[size_t(k)].data;
        images.push_back(gridCentre(grids[size_t(k)], problem.gridSize(), data.width, data.height));
    }
    return images;
}

PlaneResiduals planeResiduals(const Problem& problem, int k, const Image& model)
{
    const ProblemSpec& spec = problem.spec();
    const Image& data = spec.planes[size_t(k)].data;
    PlaneResiduals out{Image(data.width, data.height, kNaN), Image(data.width, data.height, kNaN)};
    if (model.width != data.width || model.height != data.height)
        return out;
    const int n = problem.gridSize();
    const int rowOffset = n / 2 - data.height / 2, colOffset = n / 2 - data.width / 2;
    double sumSquares = 0.0;
    int used = 0;
    for (int row = 0; row < data.height; ++row)
        for (int col = 0; col < data.width; ++col) {
            const size_t g = size_t(row + rowOffset) * size_t(n) + size_t(col + colOffset);
            if (problem.weights(k)[g] <= 0.0)
                continue;
            const double m = model.at(row, col);
            const double r = problem.data(k)[g] - m;
            out.residual.at(row, col) = r;
            if (spec.objective == ObjectiveKind::LeastSquares) {
                sumSquares += r * r;
                ++used;
            } else {
                out.normalized.at(row, col) = r / std::sqrt(pixelVariance(m, spec.readNoise, spec.gain));
            }
        }
    if (spec.objective == ObjectiveKind::LeastSquares && used > 0) {
        const double sigma = std::sqrt(sumSquares / used);
        for (size_t i = 0; i < out.residual.pixels.size(); ++i)
            out.normalized.pixels[i] = sigma > 0.0 ? out.residual.pixels[i] / sigma : out.residual.pixels[i];
    }
    return out;
}

namespace {
// The columns [begin, end) of the grid that hold pupil pixels.
std::pair<int, int> pupilColumns(const Problem& problem)
{
    const int n = problem.gridSize();
    int colBegin = n, colEnd = 0;
    for (int index : problem.pupilIndex()) {
        colBegin = std::min(colBegin, index % n);
        colEnd = std::max(colEnd, index % n + 1);
    }
    return {colBegin, colEnd};
}
} // namespace

PupilMapGeometry phaseMapGeometry(const Problem& problem)
{
    const PupilGrid& grid = problem.spec().grid;
    PupilMapGeometry g;
    g.firstColumn = grid.coordinate(pupilColumns(problem).first);
    g.firstRow = grid.coordinate(problem.rowBegin());
    g.spacing = grid.spacing;
    g.columnsAlongX = !grid.rowIsX;
    return g;
}

Image pupilMap(const Problem& problem, const double* values, const std::string& name)
{
    const int n = problem.gridSize();
    const auto [colBegin, colEnd] = pupilColumns(problem);
    Image map(colEnd - colBegin, problem.rowEnd() - problem.rowBegin(), kNaN);
    for (int i = 0; i < problem.pupilPixelCount(); ++i) {
        const int index = problem.pupilIndex()[size_t(i)];
        map.at(index / n - problem.rowBegin(), index % n - colBegin) = values[i];
    }
    map.source = name;
    return map;
}

Image pupilAmplitudeMap(const Problem& problem, const ModelParameters& p)
{
    return pupilMap(problem, problem.pupilAmplitude(p).data(), "pupil amplitude");
}

Image phaseMap(const Problem& problem, const ModelParameters& p)
{
    return pupilMap(problem, problem.pupilPhase(p).data(), "phase map");
}

ZernikeProjection projectOntoZernikes(const Problem& problem, const Eigen::VectorXd& phase)
{
    const Eigen::MatrixXd& basis = problem.basis();
    ZernikeProjection out;
    out.coefficients = basis.colPivHouseholderQr().solve(phase);
    out.remainder = phase - basis * out.coefficients;
    out.remainderRms = std::sqrt((out.remainder.array() - out.remainder.mean()).square().mean());
    return out;
}

ProblemSpec fittedSpec(const ProblemSpec& spec, const FitResult& result)
{
    return result.samplingFit ? withApertureScale(spec, result.samplingFit->scale) : spec;
}

namespace {

// Per plane: the model in the data's layout, residuals, the objective's cost and chi-square per pixel.
std::vector<PlaneResult> planeResults(ModelEvaluator& evaluator, const std::vector<double>& parameters)
{
    const Problem& problem = evaluator.problem();
    const ProblemSpec& spec = problem.spec();
    std::vector<PlaneResult> planes;
    std::vector<Image> models = modelImagesInDataLayout(evaluator, parameters);
    const int n = problem.gridSize();
    for (int k = 0; k < problem.planeCount(); ++k) {
        const Image& data = spec.planes[size_t(k)].data;
        PlaneResult plane;
        plane.diversity = spec.planes[size_t(k)].diversity.describe();
        plane.diversitySpec = spec.planes[size_t(k)].diversity;
        plane.model = std::move(models[size_t(k)]);
        plane.residual = Image(data.width, data.height, kNaN);
        plane.data = Image(data.width, data.height, kNaN);
        const int rowOffset = n / 2 - data.height / 2, colOffset = n / 2 - data.width / 2;
        double chi = 0.0;
        for (int row = 0; row < data.height; ++row) {
            for (int col = 0; col < data.width; ++col) {
                const size_t g = size_t(row + rowOffset) * size_t(n) + size_t(col + colOffset);
                const double m = plane.model.at(row, col);
                const double w = problem.weights(k)[g];
                if (w <= 0.0)
                    continue;
                const double d = problem.data(k)[g];
                plane.residual.at(row, col) = d - m;
                plane.data.at(row, col) = d;
                ++plane.usedPixels;
                switch (spec.objective) {
                case ObjectiveKind::LeastSquares:
                    plane.cost += (d - m) * (d - m);
                    break;
                case ObjectiveKind::WeightedLeastSquares:
                    plane.cost += w * (d - m) * (d - m);
                    break;
                case ObjectiveKind::Poisson:
                    plane.cost += m > 0.0 ? w * poissonDeviance(d, m) : 0.0; // w: the gain (Problem::compileData)
                    break;
                }
                chi += (d - m) * (d - m) / pixelVariance(m, spec.readNoise, spec.gain);
            }
        }
        plane.reducedChiSquare = spec.objective == ObjectiveKind::LeastSquares ? kNaN : chi / std::max(1, plane.usedPixels);
        plane.normalizedResidual = planeResiduals(problem, k, plane.model).normalized;
        planes.push_back(std::move(plane));
    }
    return planes;
}

} // namespace

namespace {

// A parameter's unit as a key suffix (FitResult::parameterUnits).
std::string parameterUnit(const ProblemSpec& spec, const ParameterInfo& info)
{
    switch (info.kind) {
    case ParameterKind::Zernike:
    case ParameterKind::ShiftX:
    case ParameterKind::ShiftY:
    case ParameterKind::ZonalPhase:
        return "rad";
    case ParameterKind::CentreX:
    case ParameterKind::CentreY:
    case ParameterKind::Sigma:
        return "pupil_radii";
    case ParameterKind::Flux:
        return "data_units";
    case ParameterKind::Background:
        return "data_units_per_px";
    case ParameterKind::Amplitude:
    case ParameterKind::ZonalAmplitude: // natural log of the amplitude
    case ParameterKind::DefocusScale:
        return "";
    case ParameterKind::DefocusOffset:
        return spec.planes[size_t(info.index)].diversity.amountUnit();
    case ParameterKind::EmitterDepth:
        return "m";
    }
    return "";
}

// Labels, units, values and (with options.computeUncertainty) one-sigma uncertainties of the parameters.
void addParameters(FitResult& r, ModelEvaluator& evaluator, const SolverSummary& summary, const AnalysisOptions& options)
{
    const Problem& problem = evaluator.problem();
    for (const ParameterInfo& info : problem.parameters()) {
        r.parameterLabels.push_back(info.label);
        r.parameterUnits.push_back(parameterUnit(problem.spec(), info));
    }
    r.parameterValues = summary.parameters;
    r.parameterUncertainties.assign(summary.parameters.size(), kNaN);
    // Not for a cancelled fit: the curvature costs P + 1 model evaluations or 2 P gradients (fit/Uncertainty.h),
    // which cancelling must not wait for, and a stopped fit is not at the minimum it describes.
    if (options.computeUncertainty && summary.termination == Termination::Cancelled)
        r.warnings.emplace_back("no uncertainties: the fit was cancelled before it converged");
    if (options.computeUncertainty && problem.hasData() && summary.termination != Termination::Failed
        && summary.termination != Termination::Cancelled) {
        r.parameterUncertainties = estimateUncertainty(evaluator, summary.parameters, summary.finalCost);
        if (conditionalUncertainty(problem))
            r.warnings.emplace_back("uncertainties are conditional on the zonal pupil (its " + std::to_string(problem.pupilPixelCount())
                                    + "-pixel maps held fixed): they leave out what the maps and the other parameters share");
    }
}

// Every basis term but piston in waves and nm. With a zonal phase the coefficients are the least-squares
// projection of the whole pupil phase (for "both" that is the Zernike terms themselves, the remainder
// being orthogonal to them), and the remainder's RMS and map are kept.
void addCoefficients(FitResult& r, const Problem& problem, const ModelParameters& p)
{
    const double toWaves = 1.0 / (2.0 * M_PI);
    std::optional<ZernikeProjection> projection;
    if (problem.hasZonalPhase()) {
        projection = projectOntoZernikes(problem, problem.pupilPhase(p));
        r.zonalRemainderRmsWaves = projection->remainderRms * toWaves;
        r.zonalRemainderMap = pupilMap(problem, projection->remainder.data(), "zonal remainder");
    }
    for (size_t t = 1; t < problem.modes().size(); ++t) {
        CoefficientResult c;
        c.index = problem.termIndex(int(t));
        c.mode = problem.modes()[t];
        c.name = zernike::name(c.mode);
        c.radians = projection ? projection->coefficients[Eigen::Index(t)] : p.zernike[t];
        c.waves = c.radians * toWaves;
        c.nm = c.waves * problem.spec().wavelength * 1e9;
        c.free = problem.phaseModel() == PupilPhaseModel::Zonal;
        c.uncertaintyWaves = c.free ? kNaN : 0.0; // zonal only: derived values, no uncertainty propagated
        for (size_t i = 0; i < problem.parameters().size(); ++i) {
            const ParameterInfo& info = problem.parameters()[i];
            if (info.kind == ParameterKind::Zernike && info.index == int(t)) {
                c.free = true;
                c.uncertaintyWaves = r.parameterUncertainties[i] * toWaves;
            }
        }
        r.coefficients.push_back(c);
    }
}

// RMS and PV wavefront error, Strehl ratio (and Marechal's), and the pupil maps.
void addWavefront(FitResult& r, const Problem& problem, const ModelParameters& p, bool removeDefocus)
{
    const double toWaves = 1.0 / (2.0 * M_PI);
    const double unaberratedPeak = psfPeak(problem, p, Eigen::VectorXd::Zero(problem.pupilPixelCount()));
    auto figures = [&](const Eigen::VectorXd& flat) {
        WavefrontFigures f;
        f.rmsWaves = std::sqrt((flat.array() - flat.mean()).square().mean()) * toWaves;
        f.pvWaves = (flat.maxCoeff() - flat.minCoeff()) * toWaves;
        f.strehl = psfPeak(problem, p, flat) / unaberratedPeak;
        return f;
    };
    const Eigen::VectorXd flat = flattenedPhase(problem, p, removeDefocus);
    const WavefrontFigures headline = figures(flat);
    r.rmsWaves = headline.rmsWaves;
    r.pvWaves = headline.pvWaves;
    r.strehl = headline.strehl;
    const double rmsRad = r.rmsWaves / toWaves;
    r.strehlMarechal = std::exp(-rmsRad * rmsRad);
    if (removeDefocus)
        r.withDefocus = figures(flattenedPhase(problem, p, false));
    r.phaseMap = phaseMap(problem, p);
    r.aberrationMap = pupilMap(problem, flat.data(), "aberration");
    r.phaseMapGeometry = phaseMapGeometry(problem);
    bool illuminationFitted = false;
    for (const ParameterInfo& info : problem.parameters())
        illuminationFitted = illuminationFitted || info.kind == ParameterKind::Amplitude || info.kind == ParameterKind::Sigma
                             || info.kind == ParameterKind::CentreX || info.kind == ParameterKind::CentreY;
    if (illuminationFitted || problem.hasZonalAmplitude())
        r.pupilAmplitude = pupilAmplitudeMap(problem, p);
}

} // namespace

FitResult analyseFit(ModelEvaluator& evaluator, const SolverSummary& summary, GradientKind gradient, const AnalysisOptions& options)
{
    const Problem& problem = evaluator.problem();
    const ProblemSpec& spec = problem.spec();
    FitResult r;
    r.problemName = spec.name;
    r.ordering = spec.basis.ordering;
    r.normalization = spec.basis.normalization;
    r.wavelength = spec.wavelength;
    r.solver = summary;
    r.backend = evaluator.info();
    r.gradient = gradient;
    r.defocusRemoved = options.removeDefocus;
    r.assumptions = options.assumptions;
    r.phaseModel = problem.phaseModel();
    r.amplitudeModel = problem.amplitudeModel();
    r.regularization = spec.regularization;
    r.detector = spec.detector;
    r.gain = spec.gain;
    r.imagingModel = spec.model;
    r.vectorial = spec.vectorial;
    for (const Problem::SpectralChannel& c : problem.spectrum())
        r.spectrumWavelengths.push_back(c.wavelength);
    r.objective = spec.objective;
    r.gridSize = spec.grid.size;
    r.samplingQ = spec.grid.size * spec.grid.spacing / 2.0;

    const ModelParameters p = problem.unpack(summary.parameters.data());
    addParameters(r, evaluator, summary, options);
    addCoefficients(r, problem, p);
    addWavefront(r, problem, p, options.removeDefocus);
    if (problem.hasData())
        r.planes = planeResults(evaluator, summary.parameters);
    if (options.psfAnalysis)
        r.psf = analysePsf(evaluator, summary.parameters);

    const auto& planes = problem.spec().planes;
    // Diversity of any kind counts: a defocus, an axial distance, or known extra Zernike terms.
    if (std::none_of(planes.begin(), planes.end(),
                     [](const PlaneSpec& plane) { return plane.diversity.amount() != 0.0 || !plane.diversity.extraTerms.empty(); }))
        r.warnings.emplace_back(kNoDefocusWarning);
    if (summary.termination == Termination::MaxIterations)
        r.warnings.emplace_back("the iteration limit was reached before convergence");
    const bool focusAssumed =
        std::any_of(options.assumptions.begin(), options.assumptions.end(), [](const Assumption& a) { return a.setting == "focus-plane"; });
    // Only a fit that ended as finished is judged: one stopped by its iteration limit or cancelled says so already.
    if (summary.termination == Termination::Converged || summary.termination == Termination::Stalled)
        r.verdict = judgeFit(r.planes, spec.objective, focusAssumed, options.degenerateNoise);
    if (!r.verdict.text.empty())
        r.warnings.push_back(r.verdict.text);
    return r;
}

FitVerdict judgeFit(const std::vector<PlaneResult>& planes, ObjectiveKind objective, bool focusAssumed, const std::string& degenerateNoise)
{
    FitVerdict v;
    if (objective == ObjectiveKind::LeastSquares || planes.empty())
        return v; // the residuals' own RMS is the noise: chi-square is 1 by construction
    v.judged = true;
    for (size_t k = 0; k < planes.size(); ++k) {
        const double chi = planes[k].reducedChiSquare;
        if (!std::isfinite(chi) || v.worstPlane < 0 || chi > v.worstReducedChiSquare) {
            v.worstPlane = int(k);
            v.worstReducedChiSquare = chi;
        }
    }
    const double worst = v.worstReducedChiSquare;
    v.describesData = std::isfinite(worst) && worst <= kPoorFitReducedChiSquare;
    if (v.describesData)
        return v;
    // One pixel's share of the plane's misfit: a hot pixel, a cosmic ray, a dead column's end.
    const PlaneResult& plane = planes[size_t(v.worstPlane)];
    const Image& z = plane.normalizedResidual;
    double total = 0.0, largest = -1.0;
    int largestRow = 0, largestColumn = 0;
    for (int row = 0; row < z.height; ++row)
        for (int col = 0; col < z.width; ++col) {
            const double e = z.at(row, col);
            if (!std::isfinite(e))
                continue;
            total += e * e;
            if (e * e > largest) {
                largest = e * e;
                largestRow = row;
                largestColumn = col;
            }
        }
    char buffer[320];
    if (total > 0.0 && largest / total > 0.5) {
        std::snprintf(buffer, sizeof buffer,
                      "one pixel (column %d, row %d of the fitted image, row 0 at the bottom) holds %.0f %% of the misfit: a hot pixel "
                      "or a cosmic ray? mask it (--bad-pixels, --hot-pixels)",
                      largestColumn, largestRow, 100.0 * largest / total);
        v.cause = buffer;
    } else if (!degenerateNoise.empty()) {
        v.cause = degenerateNoise;
    } else if (focusAssumed) {
        v.cause = "the focus plane was assumed (the brightest plane): is it right? give it (--focus-plane) or check the z step and NA";
    } else {
        v.cause = "check the focus plane, the z step, the sampling (pixel size, NA or f-number) and the wavelength";
    }
    std::snprintf(buffer, sizeof buffer,
                  "the model does not fit plane %d (%s): chi2/pixel %.3g (a model that describes its data gives about 1); ", v.worstPlane,
                  plane.diversity.c_str(), worst);
    v.text = buffer + v.cause;
    return v;
}

} // namespace wfs
