#include "fit/PsfStack.h"

#include "base/Units.h"
#include "optics/CpuModel.h"

#include <cmath>
#include <optional>
#include <stdexcept>

namespace wfs {

namespace {
constexpr int kMaxPlanes = 1001;

// The diversity the stack's planes copy: the first axial plane (its NA, index and kind), else W020.
DiversitySpec templateDiversity(const Problem& problem)
{
    for (const PlaneSpec& plane : problem.spec().planes)
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
} // namespace

std::string psfStackUnit(const Problem& problem)
{
    return templateDiversity(problem).amountUnit();
}

PsfStack psfStack(const Problem& problem, const std::vector<double>& parameters, const PsfStackRequest& request)
{
    const ProblemSpec& fitted = problem.spec();
    if (request.defocus.empty() || request.defocus.size() > size_t(kMaxPlanes))
        throw std::invalid_argument("the PSF stack needs 1 to " + std::to_string(kMaxPlanes) + " planes");
    if (!(request.pixelScale >= 0.05 && request.pixelScale <= 20.0))
        throw std::invalid_argument("the PSF stack's pixel must be from 0.05 to 20 times the data's");
    if (!fitted.pupil.customMask.empty())
        throw std::invalid_argument("a PSF stack of a pupil with a custom mask is not supported");
    const int n = problem.gridSize();
    // The same pupil samples on a grid of N' = N / scale (even): the image pixel becomes N / N' of the data's.
    int grid = int(std::lround(double(n) / request.pixelScale));
    grid += grid % 2;
    grid = std::max(grid, 16);
    const int width = request.crop > 0 ? request.crop : fitted.planes.front().data.width;
    const int height = request.crop > 0 ? request.crop : fitted.planes.front().data.height;
    if (width <= 0 || height <= 0 || width > grid || height > grid || (request.crop > 0 && request.crop % 2 != 0))
        throw std::invalid_argument("the PSF stack's crop must be even and at most the grid (" + std::to_string(grid) + " pixels)");

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
    spec.nuisance = NuisanceSpec{};
    spec.intensityScale = 0.0; // flux 1 = the unaberrated plane's total over the grid
    spec.detector.objectDiameterPixels = fitted.detector.objectDiameterPixels * double(grid) / double(n);
    const DiversitySpec shape = templateDiversity(problem);
    spec.planes.clear();
    PsfStack stack;
    for (double z : request.defocus) {
        PlaneSpec plane;
        plane.diversity = shape;
        plane.diversity.setAmount(z);
        plane.flux = 1.0;
        spec.planes.push_back(plane);
        stack.diversity.push_back(plane.diversity);
    }
    const auto stackProblem = std::make_shared<const Problem>(spec);
    if (stackProblem->pupilPixelCount() != problem.pupilPixelCount())
        throw std::logic_error("the PSF stack's grid changed the pupil's samples");
    EvaluatorOptions options;
    options.measurePlans = false;
    auto model = makeCpuEvaluator(stackProblem, options);
    const std::vector<double> x = stackProblem->initialParameters();
    const auto images = model->modelImages(x.data());
    for (size_t k = 0; k < images.size(); ++k) {
        Image image = gridCentre(images[k], grid, width, height);
        image.source = "PSF at " + stack.diversity[k].describe();
        stack.planes.push_back(std::move(image));
    }
    stack.pixelScale = double(n) / double(grid);
    stack.samplingQ = grid * spec.grid.spacing / 2.0;
    stack.grid = grid;
    return stack;
}

std::optional<DefocusRange> defocusRangeFromText(const std::string& text)
{
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
    const double count = std::floor((stop->value - start->value) / step->value + 1e-9) + 1.0;
    if (count > kMaxPlanes)
        return std::nullopt;
    DefocusRange range;
    range.waves = kind == Kind::Waves;
    for (int i = 0; i < int(count); ++i)
        range.values.push_back(start->value + i * step->value);
    return range;
}

std::string psfStackRangeError(const Problem& problem, const DefocusRange& range)
{
    const std::string unit = psfStackUnit(problem);
    if (range.waves == (unit == "waves"))
        return {};
    return "the fitted planes' defocus is in " + std::string(unit == "m" ? "lengths (e.g. um)" : "waves (w)")
           + "; give the range in the same unit";
}

} // namespace wfs
