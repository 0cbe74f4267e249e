#include "optics/Problem.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace wfs {

const char* objectiveName(ObjectiveKind kind)
{
    switch (kind) {
    case ObjectiveKind::LeastSquares:
        return "least-squares";
    case ObjectiveKind::Poisson:
        return "poisson";
    case ObjectiveKind::WeightedLeastSquares:
        return "weighted-least-squares";
    }
    return "?";
}

namespace {
constexpr int kMaxGrid = 8192; // 8192^2 complex doubles are 1 GiB per buffer: beyond this is a typo

[[noreturn]] void fail(const std::string& message)
{
    throw std::invalid_argument(message);
}
} // namespace

Image gridCentre(const std::vector<double>& grid, int n, int width, int height)
{
    Image image(width, height);
    const int rowOffset = n / 2 - height / 2, colOffset = n / 2 - width / 2; // as in compileData
    for (int r = 0; r < height; ++r)
        for (int c = 0; c < width; ++c)
            image.at(r, c) = grid[size_t(r + rowOffset) * size_t(n) + size_t(c + colOffset)];
    return image;
}

Problem::Problem(ProblemSpec spec)
    : m_spec(std::move(spec))
{
    const int n = m_spec.grid.size;
    if (n < 16 || n > kMaxGrid || n % 2 != 0)
        fail("grid size must be an even number between 16 and " + std::to_string(kMaxGrid) + ", got " + std::to_string(n));
    if (!(m_spec.wavelength > 0.0) || !std::isfinite(m_spec.wavelength))
        fail("wavelength must be positive, got " + std::to_string(m_spec.wavelength) + " m");
    if (m_spec.basis.maxOrder < 1 || m_spec.basis.maxOrder > zernike::kMaxOrder)
        fail("Zernike order must be between 1 and " + std::to_string(zernike::kMaxOrder) + ", got " + std::to_string(m_spec.basis.maxOrder));
    if (m_spec.planes.empty())
        fail("the problem has no image planes");
    const PupilSpec& pupil = m_spec.pupil;
    if (pupil.obscuration < 0.0 || pupil.obscuration >= 1.0)
        fail("central obscuration must be in [0, 1), got " + std::to_string(pupil.obscuration));
    // No telescope has more than a few dozen vanes; a million is a typo that would still "converge".
    if (pupil.spiderCount < 0 || pupil.spiderCount > 64 || pupil.spiderWidth < 0.0 || pupil.spiderWidth >= 0.5)
        fail("spider vanes: count must be from 0 to 64 and width in [0, 0.5) of the pupil diameter, got " + std::to_string(pupil.spiderCount)
             + " of width " + std::to_string(pupil.spiderWidth));
    if (!pupil.customMask.empty() && pupil.customMask.size() != size_t(n) * size_t(n))
        fail("custom pupil mask has " + std::to_string(pupil.customMask.size()) + " values, the grid needs " + std::to_string(n * n));
    if (pupil.illumination.gaussian && !(pupil.illumination.sigma > 0.0))
        fail("Gaussian illumination width must be positive");
    if (m_spec.objective == ObjectiveKind::WeightedLeastSquares && m_spec.readNoise < 0.0)
        fail("read noise must not be negative");
    if (m_spec.grid.spacing * (n / 2) < 1.0 - 1e-12 && !m_spec.grid.rowIsX)
        fail("the pupil does not fit in the grid (sampling Q < 1); use a larger grid or coarser sampling");

    compileGeometry();
    compileData();
    compileParameters();
}

void Problem::compileGeometry()
{
    const int n = m_spec.grid.size;
    const PupilSpec& pupil = m_spec.pupil;
    m_rowBegin = n;
    m_rowEnd = 0;
    for (int row = 0; row < n; ++row) {
        for (int col = 0; col < n; ++col) {
            const double x = m_spec.grid.x(row, col), y = m_spec.grid.y(row, col);
            double t = pupil.transmission(x, y);
            if (t > 0.0 && !pupil.customMask.empty())
                t *= pupil.customMask[size_t(row) * size_t(n) + size_t(col)];
            if (!(t > 0.0))
                continue;
            m_pupilIndex.push_back(row * n + col);
            m_pupilX.push_back(x);
            m_pupilY.push_back(y);
            m_transmission.push_back(t);
            m_checkerboard.push_back(((row + col) % 2) ? -1 : 1);
            m_rowBegin = std::min(m_rowBegin, row);
            m_rowEnd = std::max(m_rowEnd, row + 1);
        }
    }
    if (m_pupilIndex.size() < 16)
        fail("the pupil covers only " + std::to_string(m_pupilIndex.size()) + " grid samples; check the sampling and the pupil geometry");

    m_modes = zernike::modes(m_spec.basis.maxOrder, m_spec.basis.ordering);
    const int pixels = pupilPixelCount();
    m_basis.resize(pixels, Eigen::Index(m_modes.size()));
    zernike::evaluateBasis(m_modes, m_spec.basis.normalization, m_pupilX.data(), m_pupilY.data(), size_t(pixels), m_basis.data());

    m_diversity.assign(m_spec.planes.size(), std::vector<double>(size_t(pixels), 0.0));
    for (size_t k = 0; k < m_spec.planes.size(); ++k) {
        const DiversitySpec& div = m_spec.planes[k].diversity;
        if ((div.kind == DiversityKind::AxialParaxial || div.kind == DiversityKind::AxialHighNa)
            && (!(div.numericalAperture > 0.0) || div.numericalAperture >= div.immersionIndex))
            fail("plane " + std::to_string(k) + ": axial defocus needs 0 < NA < immersion index");
        if (div.kind == DiversityKind::PrimeFocus && (!(div.focalLength > 0.0) || !(div.dishRadius > 0.0)))
            fail("plane " + std::to_string(k) + ": prime-focus defocus needs a positive focal length and dish radius");
        std::vector<std::pair<ZernikeMode, double>> extra;
        for (const auto& [index, value] : div.extraTerms)
            extra.emplace_back(zernike::modeFromIndex(index, m_spec.basis.ordering), value);
        for (int p = 0; p < pixels; ++p) {
            const double x = m_pupilX[size_t(p)], y = m_pupilY[size_t(p)];
            double phase = div.phase(x, y, m_spec.wavelength);
            for (const auto& [mode, value] : extra)
                phase += value * zernike::evaluate(mode, m_spec.basis.normalization, std::hypot(x, y), std::atan2(y, x));
            m_diversity[k][size_t(p)] = phase;
        }
    }

    if (m_spec.intensityScale > 0.0) {
        m_intensityScale = m_spec.intensityScale;
    } else {
        // Parseval with the 1/N^2 inverse DFT: total intensity = sum |E|^2 / N^2.
        double energy = 0.0;
        const Illumination& ill = pupil.illumination;
        for (int p = 0; p < pixels; ++p) {
            const double a = ill.amplitude * m_transmission[size_t(p)] * illuminationProfile(ill, m_pupilX[size_t(p)], m_pupilY[size_t(p)]);
            energy += a * a;
        }
        m_intensityScale = double(m_spec.grid.size) * double(m_spec.grid.size) / energy;
    }
}

void Problem::compileData()
{
    const int n = m_spec.grid.size;
    const auto& planes = m_spec.planes;
    m_hasData = !planes.front().data.isEmpty();
    m_data.assign(planes.size(), {});
    m_weights.assign(planes.size(), {});
    if (!m_hasData) {
        for (size_t k = 1; k < planes.size(); ++k)
            if (!planes[k].data.isEmpty())
                fail("plane 0 has no image but plane " + std::to_string(k) + " has one");
        return;
    }
    const int w = planes.front().data.width, h = planes.front().data.height;
    for (size_t k = 0; k < planes.size(); ++k) {
        const Image& img = planes[k].data;
        const std::string where = img.source.empty() ? "plane " + std::to_string(k) : img.source;
        if (img.isEmpty())
            fail(where + ": no image data");
        if (img.width != w || img.height != h)
            fail("planes have different sizes: " + where + " is " + std::to_string(img.width) + " x " + std::to_string(img.height)
                 + ", plane 0 is " + std::to_string(w) + " x " + std::to_string(h));
        if (w > n || h > n)
            fail(where + " is " + std::to_string(w) + " x " + std::to_string(h) + ", larger than the model grid of "
                 + std::to_string(n) + "; crop it or use a larger grid");
        if (img.pixels.size() != size_t(w) * size_t(h))
            fail(where + ": pixel buffer does not match its size");
        if (!planes[k].mask.empty() && planes[k].mask.size() != img.pixels.size())
            fail(where + ": mask size does not match the image");

        std::vector<double> data(size_t(n) * size_t(n), 0.0), weights(size_t(n) * size_t(n), 0.0);
        const int rowOffset = n / 2 - h / 2, colOffset = n / 2 - w / 2; // PSF centre on the grid centre
        size_t used = 0;
        bool anySignal = false;
        for (int r = 0; r < h; ++r) {
            for (int c = 0; c < w; ++c) {
                const size_t i = size_t(r) * size_t(w) + size_t(c);
                const double v = img.pixels[i];
                if (std::isinf(v))
                    fail(where + ": pixel (row " + std::to_string(r) + ", column " + std::to_string(c) + ") is infinite");
                if (std::isnan(v) || (!planes[k].mask.empty() && planes[k].mask[i] == 0))
                    continue; // masked: NaN marks a pixel without data (FITS BLANK convention)
                const size_t g = size_t(r + rowOffset) * size_t(n) + size_t(c + colOffset);
                data[g] = v;
                switch (m_spec.objective) {
                case ObjectiveKind::LeastSquares:
                case ObjectiveKind::Poisson:
                    weights[g] = 1.0;
                    break;
                case ObjectiveKind::WeightedLeastSquares:
                    // Variance floor of one count squared keeps empty pixels from dominating.
                    weights[g] = 1.0 / std::max(std::max(v, 0.0) + m_spec.readNoise * m_spec.readNoise, 1.0);
                    break;
                }
                anySignal = anySignal || v != 0.0;
                ++used;
            }
        }
        if (used == 0)
            fail(where + ": every pixel is masked or NaN");
        if (!anySignal)
            fail(where + ": the image is all zero (no signal to fit)");
        m_data[k] = std::move(data);
        m_weights[k] = std::move(weights);
    }
}

void Problem::compileParameters()
{
    const BasisSpec& basis = m_spec.basis;
    for (int index : basis.fixedTerms) {
        try {
            zernike::modeFromIndex(index, basis.ordering);
        } catch (const std::invalid_argument& e) {
            fail(std::string("fixed term: ") + e.what());
        }
    }
    for (size_t t = 1; t < m_modes.size(); ++t) {
        const int index = termIndex(int(t));
        if (std::find(basis.fixedTerms.begin(), basis.fixedTerms.end(), index) != basis.fixedTerms.end())
            continue;
        m_parameters.push_back({ParameterKind::Zernike, int(t), "Z" + std::to_string(index) + " " + zernike::name(m_modes[t])});
    }
    const Illumination& ill = m_spec.pupil.illumination;
    if (ill.gaussian && ill.fitCentre) {
        m_parameters.push_back({ParameterKind::CentreX, 0, "illumination x0"});
        m_parameters.push_back({ParameterKind::CentreY, 0, "illumination y0"});
    }
    if (ill.fitAmplitude)
        m_parameters.push_back({ParameterKind::Amplitude, 0, "amplitude"});
    if (ill.gaussian && ill.fitSigma)
        m_parameters.push_back({ParameterKind::Sigma, 0, "illumination sigma"});
    for (int k = 0; k < planeCount(); ++k) {
        const PlaneSpec& plane = m_spec.planes[size_t(k)];
        const std::string suffix = "[" + std::to_string(k) + "]";
        if (plane.fitFlux)
            m_parameters.push_back({ParameterKind::Flux, k, "flux" + suffix});
        if (plane.fitBackground)
            m_parameters.push_back({ParameterKind::Background, k, "background" + suffix});
        if (plane.fitShift) {
            m_parameters.push_back({ParameterKind::ShiftX, k, "shift x" + suffix});
            m_parameters.push_back({ParameterKind::ShiftY, k, "shift y" + suffix});
        }
    }
    if (m_parameters.empty())
        fail("nothing to fit: every parameter is fixed");
}

int Problem::termIndex(int position) const
{
    return zernike::firstIndex(m_spec.basis.ordering) + position;
}

ModelParameters Problem::zeroLike() const
{
    ModelParameters p;
    p.zernike.assign(m_modes.size(), 0.0);
    p.centreX = p.centreY = p.amplitude = p.sigma = 0.0;
    const size_t k = m_spec.planes.size();
    p.flux.assign(k, 0.0);
    p.background.assign(k, 0.0);
    p.shiftX.assign(k, 0.0);
    p.shiftY.assign(k, 0.0);
    return p;
}

namespace {
// The member of p (const or not) that a free parameter stands for.
template <class Parameters>
auto& slot(Parameters& p, const ParameterInfo& info)
{
    switch (info.kind) {
    case ParameterKind::Zernike:
        return p.zernike[size_t(info.index)];
    case ParameterKind::CentreX:
        return p.centreX;
    case ParameterKind::CentreY:
        return p.centreY;
    case ParameterKind::Amplitude:
        return p.amplitude;
    case ParameterKind::Sigma:
        return p.sigma;
    case ParameterKind::Flux:
        return p.flux[size_t(info.index)];
    case ParameterKind::Background:
        return p.background[size_t(info.index)];
    case ParameterKind::ShiftX:
        return p.shiftX[size_t(info.index)];
    case ParameterKind::ShiftY:
        return p.shiftY[size_t(info.index)];
    }
    return p.amplitude;
}

ModelParameters fixedValues(const ProblemSpec& spec, size_t terms)
{
    ModelParameters p;
    p.zernike.assign(terms, 0.0);
    for (size_t t = 1; t < terms && t < spec.basis.start.size(); ++t)
        p.zernike[t] = spec.basis.start[t];
    const Illumination& ill = spec.pupil.illumination;
    p.centreX = ill.x0;
    p.centreY = ill.y0;
    p.amplitude = ill.amplitude;
    p.sigma = ill.sigma;
    for (const PlaneSpec& plane : spec.planes) {
        p.flux.push_back(plane.flux);
        p.background.push_back(plane.background);
        p.shiftX.push_back(plane.shiftX);
        p.shiftY.push_back(plane.shiftY);
    }
    return p;
}
} // namespace

std::vector<double> Problem::initialParameters() const
{
    ModelParameters p = fixedValues(m_spec, m_modes.size());
    std::vector<double> out(m_parameters.size());
    for (size_t i = 0; i < m_parameters.size(); ++i)
        out[i] = slot(p, m_parameters[i]);
    return out;
}

std::vector<double> Problem::parameterScales() const
{
    const std::vector<double> start = initialParameters();
    std::vector<double> scales(start.size(), 1.0);
    for (size_t i = 0; i < start.size(); ++i) {
        switch (m_parameters[i].kind) {
        case ParameterKind::Amplitude:
        case ParameterKind::Sigma:
        case ParameterKind::Flux:
            scales[i] = start[i] != 0.0 ? std::abs(start[i]) : 1.0;
            break;
        case ParameterKind::Background:
            scales[i] = std::max(std::abs(start[i]), 1.0);
            break;
        default:
            break;
        }
    }
    return scales;
}

ModelParameters Problem::unpack(const double* parameters) const
{
    ModelParameters p = fixedValues(m_spec, m_modes.size());
    for (size_t i = 0; i < m_parameters.size(); ++i)
        slot(p, m_parameters[i]) = parameters[i];
    return p;
}

void Problem::pack(const ModelParameters& full, double* out) const
{
    for (size_t i = 0; i < m_parameters.size(); ++i)
        out[i] = slot(full, m_parameters[i]);
}

Problem Problem::withData(const std::vector<Image>& images) const
{
    if (images.size() != m_spec.planes.size())
        fail("expected " + std::to_string(m_spec.planes.size()) + " images, got " + std::to_string(images.size()));
    ProblemSpec spec = m_spec;
    for (size_t k = 0; k < images.size(); ++k)
        spec.planes[k].data = images[k];
    return Problem(std::move(spec));
}

} // namespace wfs
