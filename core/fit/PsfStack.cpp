#include "fit/PsfStack.h"

#include "base/Cancellation.h"
#include "base/MemoryBudget.h"
#include "base/Units.h"
#include "optics/CpuModel.h"
#include "optics/Vectorial.h"

#include <Eigen/LU>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <stdexcept>

namespace wfs {

namespace {
constexpr int kMaxPlanes = 1001;
// The largest field a stack is computed on: a 4096^2 transform buffer of complex doubles is 256 MiB. A stack that
// needs more (tens of micrometres out of focus at high NA on fine pixels) gets this one and a warning (PsfStack::
// warning) naming the light that wraps.
constexpr int kMaxField = 4096;
// The pupil's samples across on the field (field / Q): see psfStack.
constexpr double kMinPupilSamples = 128.0;
// The images of one evaluation are held together: at most 2^24 doubles (128 MiB) of them.
constexpr double kChunkValues = 16777216.0;

// The diversity the stack's planes copy: the first axial plane (its NA, index and kind), else W020.
DiversitySpec templateDiversity(const ProblemSpec& spec)
{
    for (const PlaneSpec& plane : spec.planes)
        if (plane.diversity.kind == DiversityKind::AxialHighNa || plane.diversity.kind == DiversityKind::AxialParaxial
            || plane.diversity.kind == DiversityKind::PrimeFocus) {
            DiversitySpec d = plane.diversity;
            d.extraTerms.clear();
            return d;
        }
    DiversitySpec d;
    d.kind = DiversityKind::ZernikeDefocus;
    d.measure = DefocusMeasure::PeakToValley;
    return d;
}

// The smallest even size >= n with no prime factor above 7: the sizes FFTW transforms quickest.
int fftFriendlySize(int n)
{
    for (int m = n + n % 2;; m += 2) {
        int rest = m;
        for (int f : {2, 3, 5, 7})
            while (rest % f == 0)
                rest /= f;
        if (rest == 1)
            return m;
    }
}

// How far from the axis, in output pixels, the stack's light lands: geometric optics, from the pupil phase's gradient.
// A gradient of G radians per pupil radius sends a ray G Q / pi pixels from the axis (on an N-sample grid of s pupil
// radii per sample a ramp of 2 pi / N per sample moves light one pixel, and N s = 2 Q). The phase is the fitted Zernike
// terms, the vectorial model's depth and coverslip terms and the plane's defocus, evaluated in closed form (not on the
// fitted pupil's samples, which at high NA stop short of the rim where the defocus is steepest) at probes of equal
// pupil area; the reach is where the rays of all but kUnreached of the pupil's area land. Not the farthest ray: at an
// index mismatch the depth term's gradient is infinite at the sample's critical angle, so a vanishing sliver of light
// goes arbitrarily far, and wraps in spread thin over the whole field. The zonal phase adds at most its steepest step
// between neighbouring samples. Defocus is linear in its amount, so each ray's distance is convex along z and largest
// at one end of the range: only the two end planes are probed.
constexpr double kUnreached = 0.01;
double reachOf(const Problem& fitted, const ModelParameters& p, const ProblemSpec& stack, const DiversitySpec& shape, double zFirst,
               double zLast, double q)
{
    const int annuli = 128, angles = 64; // rho^2 evenly spaced: each probe stands for the same area
    const size_t count = size_t(annuli) * size_t(angles);
    const double h = 1e-5;
    // Each probe's four neighbours at +-h along x and y: central differences of a phase known in closed form.
    std::vector<double> x(4 * count), y(4 * count);
    for (int i = 0; i < annuli; ++i)
        for (int j = 0; j < angles; ++j) {
            const double rho = std::sqrt((i + 0.5) / annuli), theta = 2.0 * M_PI * (j + 0.5 * (i % 2)) / angles;
            const size_t probe = size_t(i) * size_t(angles) + size_t(j);
            const double dx[4] = {h, -h, 0.0, 0.0}, dy[4] = {0.0, 0.0, h, -h};
            for (size_t k = 0; k < 4; ++k) {
                x[4 * probe + k] = rho * std::cos(theta) + dx[k];
                y[4 * probe + k] = rho * std::sin(theta) + dy[k];
            }
        }
    std::vector<double> common(x.size(), 0.0); // what every plane shares
    std::vector<ZernikeMode> modes;
    std::vector<double> coefficients;
    for (size_t t = 1; t < p.zernike.size() && t < fitted.modes().size(); ++t)
        if (p.zernike[t] != 0.0) {
            modes.push_back(fitted.modes()[t]);
            coefficients.push_back(p.zernike[t]);
        }
    if (!modes.empty()) {
        std::vector<double> basis(x.size() * modes.size());
        zernike::evaluateBasis(modes, stack.basis.normalization, x.data(), y.data(), x.size(), basis.data());
        for (size_t t = 0; t < modes.size(); ++t)
            for (size_t i = 0; i < x.size(); ++i)
                common[i] += coefficients[t] * basis[t * x.size() + i];
    }
    if (stack.model == ImagingModel::Vectorial) {
        const VectorialPupil vectorial(stack.vectorial, stack.wavelength, x, y);
        for (size_t i = 0; i < x.size(); ++i)
            common[i] += vectorial.depthRate()[i].real() * stack.vectorial.emitterDepth + vectorial.coverslipPhase()[i].real();
    }
    double steepest = 0.0; // radians per pupil radius: the gradient all but kUnreached of the area stays under
    std::vector<double> gradient(count);
    for (double z : {zFirst, zLast}) {
        DiversitySpec d = shape;
        d.setAmount(z);
        for (size_t i = 0; i < count; ++i) {
            double phase[4];
            for (size_t k = 0; k < 4; ++k)
                phase[k] = common[4 * i + k] + d.phase(x[4 * i + k], y[4 * i + k], stack.wavelength);
            const double g = std::hypot(phase[0] - phase[1], phase[2] - phase[3]) / (2.0 * h);
            gradient[i] = std::isfinite(g) ? g : std::numeric_limits<double>::max();
        }
        const size_t kept = std::min(count - 1, size_t(std::ceil((1.0 - kUnreached) * double(count))));
        std::nth_element(gradient.begin(), gradient.begin() + std::ptrdiff_t(kept), gradient.end());
        steepest = std::max(steepest, gradient[kept]);
    }
    if (fitted.hasZonalPhase()) {
        const Eigen::VectorXd zonal = fitted.zonalPhase(p);
        double step = 0.0;
        for (const auto& [a, b] : fitted.neighbourPairs())
            step = std::max(step, std::abs(zonal[a] - zonal[b]));
        steepest += step / fitted.spec().grid.spacing;
    }
    return steepest * q / M_PI;
}

// Values given per pupil sample of `fitted`, at other pupil points: bilinear between the four samples around each
// point where all four are pupil samples. Near the rim, where the fitted samples stop short of the edge (by up to a
// sample), a plane fitted by least squares to the pupil samples of the 4 x 4 block around the point, evaluated there:
// first-order right instead of holding the last sample's value out to the edge (a steep phase there moved the rim's
// light). The nearest pupil sample where the block holds too few.
std::vector<double> resampled(const Problem& fitted, const std::vector<double>& values, const std::vector<double>& x,
                              const std::vector<double>& y)
{
    const PupilGrid& g = fitted.spec().grid;
    const int n = g.size;
    std::vector<int> pixelAt(size_t(n) * size_t(n), -1);
    for (size_t i = 0; i < fitted.pupilIndex().size(); ++i)
        pixelAt[size_t(fitted.pupilIndex()[i])] = int(i);
    auto pixel = [&](int r, int c) { return r < 0 || c < 0 || r >= n || c >= n ? -1 : pixelAt[size_t(r) * size_t(n) + size_t(c)]; };
    std::vector<double> out(x.size());
    for (size_t i = 0; i < x.size(); ++i) {
        const double u = (x[i] - g.origin) / g.spacing, v = (y[i] - g.origin) / g.spacing;
        const double rowF = g.rowIsX ? u : v, colF = g.rowIsX ? v : u;
        const int r0 = int(std::floor(rowF)), c0 = int(std::floor(colF));
        const double fr = rowF - r0, fc = colF - c0;
        const int corners[4] = {pixel(r0, c0), pixel(r0, c0 + 1), pixel(r0 + 1, c0), pixel(r0 + 1, c0 + 1)};
        if (std::all_of(std::begin(corners), std::end(corners), [](int k) { return k >= 0; })) {
            out[i] = (1.0 - fr) * ((1.0 - fc) * values[size_t(corners[0])] + fc * values[size_t(corners[1])])
                     + fr * ((1.0 - fc) * values[size_t(corners[2])] + fc * values[size_t(corners[3])]);
            continue;
        }
        // value = a + b dr + c dc about the point, in sample units.
        Eigen::Matrix3d normal = Eigen::Matrix3d::Zero();
        Eigen::Vector3d right = Eigen::Vector3d::Zero();
        int used = 0;
        for (int r = r0 - 1; r <= r0 + 2; ++r)
            for (int c = c0 - 1; c <= c0 + 2; ++c) {
                const int k = pixel(r, c);
                if (k < 0)
                    continue;
                const Eigen::Vector3d row(1.0, r - rowF, c - colF);
                normal += row * row.transpose();
                right += row * values[size_t(k)];
                ++used;
            }
        const Eigen::FullPivLU<Eigen::Matrix3d> lu(normal);
        if (used >= 3 && lu.rank() == 3) {
            out[i] = lu.solve(right)[0];
            continue;
        }
        double nearest = std::numeric_limits<double>::infinity();
        for (size_t j = 0; j < values.size(); ++j) {
            const double d = std::hypot(fitted.pupilX()[j] - x[i], fitted.pupilY()[j] - y[i]);
            if (d < nearest) {
                nearest = d;
                out[i] = values[j];
            }
        }
    }
    return out;
}

// The stack's spec on a field of `field` samples: the same output pixel and Q, the pupil sampled `field` / N' times
// finer (its samples no longer those of the fit), the zonal terms carried over by resampled(). On the grid itself the
// spec is unchanged: the fitted pupil samples and zonal values, exactly the fitted model.
ProblemSpec onField(const ProblemSpec& stack, int field, const Problem& fitted, const ModelParameters& p)
{
    if (field == stack.grid.size)
        return stack;
    ProblemSpec spec = stack;
    const double centre = stack.grid.coordinate(stack.grid.size / 2); // the pupil coordinate of the FFT's zero frequency
    spec.grid.size = field;
    spec.grid.spacing = stack.grid.spacing * double(stack.grid.size) / double(field);
    spec.grid.origin = centre - spec.grid.spacing * (field / 2);
    std::vector<double> x, y; // the new pupil samples, in Problem::pupilIndex order
    for (int row = 0; row < field; ++row)
        for (int col = 0; col < field; ++col) {
            const double px = spec.grid.x(row, col), py = spec.grid.y(row, col);
            if (spec.pupil.transmission(px, py) > 0.0) {
                x.push_back(px);
                y.push_back(py);
            }
        }
    spec.zonalPhaseStart.clear();
    spec.zonalAmplitudeStart.clear();
    if (fitted.hasZonalPhase()) {
        // The zonal phase as the fit used it (its projection off the Zernike span done): as a zonal phase whose own
        // projection removes only a piston, which no image sees. Projecting it off the span again on the new samples
        // would take away a little of the fitted phase.
        const Eigen::VectorXd zonal = fitted.zonalPhase(p);
        spec.phaseModel = PupilPhaseModel::Zonal;
        spec.zonalPhaseStart = resampled(fitted, std::vector<double>(zonal.data(), zonal.data() + zonal.size()), x, y);
    }
    if (fitted.hasZonalAmplitude())
        spec.zonalAmplitudeStart = resampled(fitted, p.zonalAmplitude, x, y);
    return spec;
}

// Rows [first, first + rows) and the centred `width` columns of an n x n grid image, modulo n (the model's field is
// periodic: a crop as large as the grid takes its row above from the bottom, as the fitted model has it).
Image window(const std::vector<double>& grid, int n, int width, int rows, int first)
{
    Image image(width, rows);
    const int colOffset = n / 2 - width / 2;
    for (int r = 0; r < rows; ++r)
        for (int c = 0; c < width; ++c)
            image.at(r, c) = grid[size_t((r + first) % n) * size_t(n) + size_t((c + colOffset) % n)];
    return image;
}
} // namespace

std::string psfStackUnit(const Problem& problem)
{
    return psfStackUnit(problem.spec());
}

std::string psfStackUnit(const ProblemSpec& spec)
{
    return templateDiversity(spec).amountUnit();
}

namespace {

// The stack's grid and image size, checked: what psfStack and psfStackBytes both start from.
struct StackGeometry {
    int grid = 0, width = 0, height = 0;
};

StackGeometry stackGeometry(const ProblemSpec& fitted, const PsfStackRequest& request)
{
    if (request.defocus.empty() || request.defocus.size() > size_t(kMaxPlanes))
        throw std::invalid_argument("the PSF stack needs 1 to " + std::to_string(kMaxPlanes) + " planes");
    if (!(request.pixelScale >= 0.05 && request.pixelScale <= 20.0))
        throw std::invalid_argument("the PSF stack's pixel must be from 0.05 to 20 times the data's");
    if (!fitted.pupil.customMask.empty())
        throw std::invalid_argument("a PSF stack of a pupil with a custom mask is not supported");
    const int n = fitted.grid.size;
    // The same pupil samples on a grid of N' = N / scale (even): the image pixel becomes N / N' of the data's.
    StackGeometry g;
    g.grid = int(std::lround(double(n) / request.pixelScale));
    g.grid += g.grid % 2;
    g.grid = std::max(g.grid, 16);
    g.width = request.crop > 0 ? request.crop : fitted.planes.front().data.width;
    g.height = request.crop > 0 ? request.crop : fitted.planes.front().data.height;
    if (request.crop < 0 || g.width <= 0 || g.height <= 0 || g.width > g.grid || g.height > g.grid)
        throw std::invalid_argument("the PSF stack's crop must be from 1 to the grid's " + std::to_string(g.grid) + " pixels, got "
                                    + std::to_string(request.crop > 0 ? request.crop : std::max(g.width, g.height)));
    return g;
}

} // namespace

double psfStackBytes(const ProblemSpec& spec, const PsfStackRequest& request)
{
    const StackGeometry g = stackGeometry(spec, request);
    const double planes = double(request.defocus.size());
    const double rows = double(g.height + (g.height % 2 == 0 ? 1 : 0));
    // The planes (and the row above each) as doubles, and a file's bytes made from them while they are held.
    const double output = planes * double(g.width) * rows * sizeof(double) * 2.0;
    // The smallest field: the grid, or the crop with its margin; one chunk of its images and three complex buffers.
    const double field = std::max(double(g.grid), std::max(double(g.width), rows) + 2.0);
    const double chunk = std::clamp(kChunkValues / (field * field), 1.0, std::min(64.0, planes));
    const double working = (chunk * sizeof(double) + 3.0 * 2.0 * sizeof(double)) * field * field;
    return output + working;
}

void requirePsfStackMemory(const ProblemSpec& spec, const PsfStackRequest& request)
{
    const StackGeometry g = stackGeometry(spec, request);
    requireMemory(psfStackBytes(spec, request), "the PSF stack (" + std::to_string(request.defocus.size()) + " planes of "
                                                    + std::to_string(g.width) + " x " + std::to_string(g.height) + " pixels)");
}

PsfStack psfStack(const Problem& problem, const std::vector<double>& parameters, const PsfStackRequest& request)
{
    const ProblemSpec& fitted = problem.spec();
    const auto [grid, width, height] = stackGeometry(fitted, request);
    requirePsfStackMemory(fitted, request);
    const int n = problem.gridSize();

    const ModelParameters p = problem.unpack(parameters.data());
    ProblemSpec spec = fitted;
    // The same spacing and the same samples, shifted by whole samples: every pupil pixel keeps its coordinates.
    spec.grid.size = grid;
    spec.grid.origin = fitted.grid.origin - fitted.grid.spacing * ((grid - n) / 2);
    spec.basis.start = p.zernike;
    spec.zonalPhaseStart = p.zonalPhase;
    spec.zonalAmplitudeStart = p.zonalAmplitude;
    spec.pupil.illumination.x0 = p.centreX;
    spec.pupil.illumination.y0 = p.centreY;
    spec.pupil.illumination.sigma = p.sigma;
    spec.pupil.illumination.amplitude = 1.0;
    spec.vectorial.emitterDepth = p.emitterDepth;
    spec.nuisance = NuisanceSpec{};
    spec.intensityScale = 0.0; // flux 1 = the unaberrated plane's total over the field
    spec.detector.objectDiameterPixels = fitted.detector.objectDiameterPixels * double(grid) / double(n);
    const DiversitySpec shape = templateDiversity(fitted);
    PsfStack stack;
    for (double z : request.defocus) {
        stack.diversity.push_back(shape);
        stack.diversity.back().setAmount(z);
    }
    stack.pixelScale = double(n) / double(grid);
    stack.samplingQ = grid * spec.grid.spacing / 2.0;
    stack.grid = grid;

    // The field. Light that lands d pixels from the axis wraps to d - field: it stays out of the crop (with an even
    // height's row above) while d < field - crop / 2. So the field holds the light's reach (reachOf) plus a margin
    // for the diffraction tails beyond it (16 Q pixels, 8 lambda / NA) plus the whole crop, half of it more than the
    // wrap needs. And the pupil spans at least 128 samples (field / Q): its rim, where a high-NA pupil is brightest (the
    // aplanatic 1 / sqrt(cos)) and whose light goes farthest, is then fine enough that the share of the light a plane
    // holds is right to a few 1e-3 (tst_psfstack, against a Richards-Wolf quadrature at NA 1.45; at 58 samples across
    // it was 3 % high, the rim's samples too many for its area).
    const int rows = height + (height % 2 == 0 ? 1 : 0);
    const auto [zFirst, zLast] = std::minmax_element(request.defocus.begin(), request.defocus.end());
    stack.reach = reachOf(problem, p, spec, shape, *zFirst, *zLast, stack.samplingQ) + 0.5 * spec.detector.objectDiameterPixels
                  + (spec.detector.pixelIntegration ? 1.0 : 0.0);
    const double forReach = stack.reach + 16.0 * stack.samplingQ + std::max(width, rows) + 2.0;
    const double needed = std::max(forReach, kMinPupilSamples * stack.samplingQ);
    if (request.asFitted) {
        stack.field = grid;
    } else {
        const double capped = std::isfinite(needed) ? std::min(needed, double(kMaxField)) : double(kMaxField);
        stack.field = std::max(grid, std::min(kMaxField, fftFriendlySize(int(std::ceil(capped)))));
        if (!(forReach <= stack.field))
            stack.warning = "the light of the planes reaches " + std::to_string(int(std::lround(std::min(stack.reach, 1e9))))
                            + " pixels from the axis, beyond the largest field computed (" + std::to_string(stack.field)
                            + " pixels): light that lands farther out than " + std::to_string(stack.field - std::max(width, rows) / 2 - 1)
                            + " pixels wraps back into the image";
    }

    const int field = stack.field;
    throwIfCancelled(request.cancel);
    const ProblemSpec base = onField(spec, field, problem, p);
    const size_t chunk = size_t(std::clamp(kChunkValues / (double(field) * double(field)), 1.0, 64.0));
    EvaluatorOptions options;
    options.measurePlans = false;
    for (size_t begin = 0; begin < stack.diversity.size(); begin += chunk) {
        throwIfCancelled(request.cancel);
        const size_t end = std::min(stack.diversity.size(), begin + chunk);
        ProblemSpec part = base;
        part.planes.clear();
        for (size_t k = begin; k < end; ++k) {
            PlaneSpec plane;
            plane.diversity = stack.diversity[k];
            plane.flux = 1.0;
            part.planes.push_back(plane);
        }
        const auto stackProblem = std::make_shared<const Problem>(part);
        if (field == grid && stackProblem->pupilPixelCount() != problem.pupilPixelCount())
            throw std::logic_error("the PSF stack's grid changed the pupil's samples");
        auto model = makeCpuEvaluator(stackProblem, options);
        const std::vector<double> x = stackProblem->initialParameters();
        const auto images = model->modelImages(x.data());
        for (size_t k = 0; k < images.size(); ++k) {
            // Rows from field / 2 - height / 2: the axis (grid row field / 2) lands on row height / 2, odd or even.
            Image image = window(images[k], field, width, rows, field / 2 - height / 2);
            if (rows > height) {
                stack.rowsAbove.emplace_back(image.pixels.end() - width, image.pixels.end());
                image.pixels.resize(size_t(width) * size_t(height));
                image.height = height;
            }
            image.source = "PSF at " + stack.diversity[begin + k].describe();
            stack.planes.push_back(std::move(image));
        }
    }
    return stack;
}

Image psfStackTopFirstPlane(const PsfStack& stack, size_t plane)
{
    const Image& image = stack.planes.at(plane);
    if (image.height % 2 != 0)
        return image;
    if (stack.rowsAbove.size() != stack.planes.size() || stack.rowsAbove[plane].size() != size_t(image.width))
        throw std::logic_error("the PSF stack has no row above its planes");
    // Rows 1 .. N - 1 and the row above: the writer's flip puts the axis (row N / 2 here) at row N / 2 from the top.
    Image out(image.width, image.height);
    std::copy(image.pixels.begin() + image.width, image.pixels.end(), out.pixels.begin());
    std::copy(stack.rowsAbove[plane].begin(), stack.rowsAbove[plane].end(), out.pixels.end() - image.width);
    out.source = image.source;
    return out;
}

std::optional<DefocusRange> defocusRangeFromText(const std::string& text)
{
    std::string why;
    return defocusRangeFromText(text, why);
}

std::optional<DefocusRange> defocusRangeFromText(const std::string& text, std::string& why)
{
    why = "expected START:STOP:STEP in one unit, lengths (-2um:2um:0.1um) or waves (-1w:1w:0.25w), STOP >= START, STEP > 0";
    const size_t first = text.find(':'), second = first == std::string::npos ? first : text.find(':', first + 1);
    if (second == std::string::npos)
        return std::nullopt;
    const auto start = valueFromText(text.substr(0, first)), stop = valueFromText(text.substr(first + 1, second - first - 1)),
               step = valueFromText(text.substr(second + 1));
    if (!start || !stop || !step)
        return std::nullopt;
    // One unit for all three (a bare 0 goes with either); waves or lengths only.
    using Kind = ValueWithUnit::Kind;
    Kind kind = Kind::Bare;
    for (const ValueWithUnit& v : {*start, *stop, *step}) {
        if (v.kind == Kind::Angle || (v.kind == Kind::Bare && v.value != 0.0))
            return std::nullopt;
        if (v.kind != Kind::Bare) {
            if (kind != Kind::Bare && kind != v.kind)
                return std::nullopt;
            kind = v.kind;
        }
    }
    if (kind == Kind::Bare || !(step->value > 0.0) || stop->value < start->value)
        return std::nullopt;
    // The ranges every defocus obeys (--defocus, session planes): a step of 1e297 m is a typo, not a stack.
    const Setting setting = kind == Kind::Waves ? Setting::DefocusWaves : Setting::DefocusLength;
    for (const auto& [name, v] : {std::pair{"start", start->value}, std::pair{"stop", stop->value}, std::pair{"step", step->value}})
        if (const std::string error = plausibilityError(setting, v); !error.empty()) {
            why = std::string("the ") + name + ": " + error;
            return std::nullopt;
        }
    const double count = std::floor((stop->value - start->value) / step->value + 1e-9) + 1.0;
    if (count > kMaxPlanes) {
        why = "the range holds " + std::to_string((long long)std::min(count, 1e15)) + " planes, more than " + std::to_string(kMaxPlanes);
        return std::nullopt;
    }
    why.clear();
    DefocusRange range;
    range.waves = kind == Kind::Waves;
    for (int i = 0; i < int(count); ++i)
        range.values.push_back(start->value + i * step->value);
    return range;
}

std::string psfStackRangeError(const Problem& problem, const DefocusRange& range)
{
    return psfStackRangeError(problem.spec(), range);
}

std::string psfStackRangeError(const ProblemSpec& spec, const DefocusRange& range)
{
    const std::string unit = psfStackUnit(spec);
    if (range.waves == (unit == "waves"))
        return {};
    return "the fitted planes' defocus is in " + std::string(unit == "m" ? "lengths (e.g. um)" : "waves (w)")
           + "; give the range in the same unit";
}

} // namespace wfs
