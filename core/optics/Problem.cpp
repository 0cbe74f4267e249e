#include "optics/Problem.h"

#include <Eigen/QR>

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

const char* pupilPhaseModelName(PupilPhaseModel model)
{
    switch (model) {
    case PupilPhaseModel::Zernike:
        return "zernike";
    case PupilPhaseModel::Zonal:
        return "zonal";
    case PupilPhaseModel::Both:
        return "both";
    }
    return "?";
}

const char* pupilAmplitudeModelName(PupilAmplitudeModel model)
{
    switch (model) {
    case PupilAmplitudeModel::Uniform:
        return "uniform";
    case PupilAmplitudeModel::Gaussian:
        return "gaussian";
    case PupilAmplitudeModel::Zonal:
        return "zonal";
    }
    return "?";
}

namespace {

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
    // Specs built in code (presets, tests) come here unchecked; settings were checked by ModelSettings::isValid.
    if (const std::string error = zernike::orderError(m_spec.basis.maxOrder); !error.empty())
        fail("Zernike order " + error);
    if (m_spec.planes.empty())
        fail("the problem has no image planes");
    const PupilSpec& pupil = m_spec.pupil;
    if (pupil.obscuration < 0.0 || pupil.obscuration >= 1.0)
        fail("central obscuration must be in [0, 1), got " + std::to_string(pupil.obscuration));
    // No telescope has more than a few dozen vanes; a million is a typo that would still "converge".
    if (pupil.spiderCount < 0 || pupil.spiderCount > 64 || pupil.spiderWidth < 0.0 || pupil.spiderWidth >= 0.5)
        fail("spider vanes: count must be from 0 to 64 and width in [0, 0.5) of the pupil diameter, got "
             + std::to_string(pupil.spiderCount) + " of width " + std::to_string(pupil.spiderWidth));
    if (!pupil.customMask.empty() && pupil.customMask.size() != size_t(n) * size_t(n))
        fail("custom pupil mask has " + std::to_string(pupil.customMask.size()) + " values, the grid needs " + std::to_string(n * n));
    if (pupil.illumination.gaussian && !(pupil.illumination.sigma > 0.0))
        fail("Gaussian illumination width must be positive");
    if (m_spec.objective == ObjectiveKind::WeightedLeastSquares && m_spec.readNoise < 0.0)
        fail("read noise must not be negative");
    if (m_spec.grid.spacing * (n / 2) < 1.0 - 1e-12 && !m_spec.grid.rowIsX)
        fail("the pupil does not fit in the grid (sampling Q < 1); use a larger grid or coarser sampling");
    if (!(m_spec.gain > 0.0) || !std::isfinite(m_spec.gain))
        fail("camera gain must be a positive number of electrons per data unit, got " + std::to_string(m_spec.gain));
    if (hasZonalTerms(m_spec.phaseModel, m_spec.amplitudeModel)
        && (!(m_spec.regularization > 0.0) || !std::isfinite(m_spec.regularization)))
        fail("the regularisation weight of the zonal terms must be a positive number, got " + std::to_string(m_spec.regularization));
    const double object = m_spec.detector.objectDiameterPixels;
    if (!(object >= 0.0) || !std::isfinite(object))
        fail("object diameter must not be negative");
    if (object >= n)
        fail("the object (" + std::to_string(object) + " pixels across) is larger than the field of view (" + std::to_string(n)
             + " pixels)");
    // One carrier for the Gaussian profile: the amplitude model and the illumination agree.
    if (m_spec.amplitudeModel == PupilAmplitudeModel::Gaussian)
        m_spec.pupil.illumination.gaussian = true;
    else if (m_spec.pupil.illumination.gaussian && m_spec.amplitudeModel == PupilAmplitudeModel::Uniform)
        m_spec.amplitudeModel = PupilAmplitudeModel::Gaussian;
    else if (m_spec.amplitudeModel == PupilAmplitudeModel::Zonal && m_spec.pupil.illumination.gaussian)
        fail("a zonal pupil amplitude replaces the Gaussian illumination; choose one");

    if (m_spec.model == ImagingModel::Vectorial) {
        if (m_spec.grid.rowIsX)
            fail("the vectorial model describes a microscope objective with an immersion medium, not the telescope geometry; "
                 "use the scalar model");
        if (const std::string error = vectorialSpecError(m_spec.vectorial); !error.empty())
            fail("vectorial model: " + error);
    }

    compileGeometry();
    compileData();
    compilePupilFunction();
    compileDetector();
    compileSpectrum();
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
    m_diversityFixed = m_diversityUnit = m_diversity;
    m_diversityAmount.assign(m_spec.planes.size(), 0.0);
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
        // Every diversity is linear in its amount: phase = amount x unit phase + the extra terms.
        DiversitySpec unit = div;
        unit.setAmount(1.0);
        m_diversityAmount[k] = div.amount();
        for (int p = 0; p < pixels; ++p) {
            const double x = m_pupilX[size_t(p)], y = m_pupilY[size_t(p)];
            double fixed = 0.0;
            for (const auto& [mode, value] : extra)
                fixed += value * zernike::evaluate(mode, m_spec.basis.normalization, std::hypot(x, y), std::atan2(y, x));
            m_diversityFixed[k][size_t(p)] = fixed;
            m_diversityUnit[k][size_t(p)] = div.kind == DiversityKind::None ? 0.0 : unit.phase(x, y, m_spec.wavelength);
            m_diversity[k][size_t(p)] = fixed + div.phase(x, y, m_spec.wavelength);
        }
    }

    if (m_spec.model == ImagingModel::Vectorial)
        m_vectorial.emplace(m_spec.vectorial, m_spec.wavelength, m_pupilX, m_pupilY);
    if (m_spec.intensityScale > 0.0) {
        m_intensityScale = m_spec.intensityScale;
    } else {
        // Parseval with the 1/N^2 inverse DFT: total intensity = sum |E|^2 / N^2 (summed over the vectorial fields,
        // at the start depth).
        double energy = 0.0;
        const Illumination& ill = pupil.illumination;
        const std::vector<double> power = m_vectorial ? m_vectorial->powerFactor(m_spec.vectorial.emitterDepth) : std::vector<double>{};
        for (int p = 0; p < pixels; ++p) {
            const double a = ill.amplitude * m_transmission[size_t(p)] * illuminationProfile(ill, m_pupilX[size_t(p)], m_pupilY[size_t(p)]);
            energy += a * a * (power.empty() ? 1.0 : power[size_t(p)]);
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
            fail(where + " is " + std::to_string(w) + " x " + std::to_string(h) + ", larger than the model grid of " + std::to_string(n)
                 + "; crop it or use a larger grid");
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
                    weights[g] = 1.0;
                    break;
                case ObjectiveKind::Poisson:
                    // The deviance of electrons: gain x the deviance in data units (a common factor of the
                    // log-likelihood, so that it stays about chi^2 / 2 whatever the data's unit).
                    weights[g] = m_spec.gain;
                    break;
                case ObjectiveKind::WeightedLeastSquares:
                    weights[g] = 1.0 / pixelVariance(v, m_spec.readNoise, m_spec.gain);
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
        m_parameters.push_back(
            {ParameterKind::Zernike, int(t), std::string("Z").append(std::to_string(index)).append(" ").append(zernike::name(m_modes[t]))});
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
    if (hasZonalPhase())
        for (int i = 0; i < pupilPixelCount(); ++i)
            m_parameters.push_back({ParameterKind::ZonalPhase, i, "zonal phase[" + std::to_string(i) + "]"});
    if (hasZonalAmplitude())
        for (int i = 0; i < pupilPixelCount(); ++i)
            m_parameters.push_back({ParameterKind::ZonalAmplitude, i, "zonal log-amplitude[" + std::to_string(i) + "]"});
    compileDefocusParameters();
    if (m_vectorial && m_spec.vectorial.fitEmitterDepth) {
        // With matched indices (and no supercritical light) the depth changes nothing: a parameter without data.
        const VectorialSpec& v = m_spec.vectorial;
        if (v.sampleIndex == v.immersionIndex && v.numericalAperture < v.sampleIndex)
            fail("fitting the emitter's depth needs an index mismatch: with the sample's index equal to the immersion's ("
                 + std::to_string(v.sampleIndex) + ") the depth changes nothing");
        m_parameters.push_back({ParameterKind::EmitterDepth, 0, "emitter depth"});
    } else if (!m_vectorial && m_spec.vectorial.fitEmitterDepth) {
        fail("the emitter's depth is a parameter of the vectorial model; choose it (--model vectorial)");
    }
    for (int k = 0; k < planeCount(); ++k) {
        const PlaneSpec& plane = m_spec.planes[size_t(k)];
        const std::string suffix = std::string("[").append(std::to_string(k)).append("]");
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

void Problem::compileDefocusParameters()
{
    const NuisanceSpec& nuisance = m_spec.nuisance;
    if (!nuisance.defocusOffsets.empty() && nuisance.defocusOffsets.size() != m_spec.planes.size())
        fail("defocus offsets: " + std::to_string(nuisance.defocusOffsets.size()) + " start values for "
             + std::to_string(m_spec.planes.size()) + " planes");
    if (!nuisance.fitDefocusScale && !nuisance.fitDefocusOffsets)
        return;
    int defocused = 0, lowest = -1, highest = -1;
    m_referencePlane = -1;
    for (int k = 0; k < planeCount(); ++k) {
        if (m_spec.planes[size_t(k)].diversity.kind == DiversityKind::None)
            continue;
        const double a = m_diversityAmount[size_t(k)];
        defocused += a != 0.0 ? 1 : 0;
        if (m_referencePlane < 0 || std::abs(a) < std::abs(m_diversityAmount[size_t(m_referencePlane)]))
            m_referencePlane = k;
        if (lowest < 0 || a < m_diversityAmount[size_t(lowest)])
            lowest = k;
        if (highest < 0 || a > m_diversityAmount[size_t(highest)])
            highest = k;
    }
    if (nuisance.fitDefocusScale && defocused < 2)
        fail("a defocus scale needs at least two defocused planes");
    m_hasDefocusParameters = true;
    if (nuisance.fitDefocusScale)
        m_parameters.push_back({ParameterKind::DefocusScale, 0, "defocus scale"});
    if (!nuisance.fitDefocusOffsets)
        return;
    int offsets = 0;
    for (int k = 0; k < planeCount(); ++k) {
        const bool held = m_spec.planes[size_t(k)].diversity.kind == DiversityKind::None || k == m_referencePlane
                          || (nuisance.fitDefocusScale && (k == lowest || k == highest));
        if (held)
            continue;
        m_parameters.push_back({ParameterKind::DefocusOffset, k, "defocus offset[" + std::to_string(k) + "]"});
        ++offsets;
    }
    if (offsets == 0)
        fail("per-plane defocus offsets need a plane besides the reference plane"
             + std::string(nuisance.fitDefocusScale ? " and the two outermost planes (held while the scale is fitted)" : ""));
}

void Problem::compilePupilFunction()
{
    if (!hasZonalPhase() && !hasZonalAmplitude())
        return;
    const int n = m_spec.grid.size;
    std::vector<int> pixelAt(size_t(n) * size_t(n), -1);
    for (int i = 0; i < pupilPixelCount(); ++i)
        pixelAt[size_t(m_pupilIndex[size_t(i)])] = i;
    for (int i = 0; i < pupilPixelCount(); ++i) {
        const int g = m_pupilIndex[size_t(i)], row = g / n, col = g % n;
        if (col + 1 < n && pixelAt[size_t(g + 1)] >= 0)
            m_neighbours.emplace_back(i, pixelAt[size_t(g + 1)]);
        if (row + 1 < n && pixelAt[size_t(g + n)] >= 0)
            m_neighbours.emplace_back(i, pixelAt[size_t(g + n)]);
    }
    const auto check = [&](const std::vector<double>& start, const char* what) {
        if (!start.empty() && start.size() != size_t(pupilPixelCount()))
            fail(std::string(what) + ": " + std::to_string(start.size()) + " start values for " + std::to_string(pupilPixelCount())
                 + " pupil pixels");
    };
    check(m_spec.zonalPhaseStart, "zonal phase");
    check(m_spec.zonalAmplitudeStart, "zonal amplitude");
    if (!hasZonalPhase())
        return;
    // Zonal only: piston does nothing. Both: the Zernike terms describe their span, the zonal part the rest.
    const Eigen::MatrixXd span = m_spec.phaseModel == PupilPhaseModel::Both ? m_basis : Eigen::MatrixXd::Ones(pupilPixelCount(), 1);
    Eigen::HouseholderQR<Eigen::MatrixXd> qr(span);
    m_zonalProjector = qr.householderQ() * Eigen::MatrixXd::Identity(span.rows(), span.cols());
}

void Problem::compileDetector()
{
    const DetectorSpec& detector = m_spec.detector;
    if (detector.isIdentity())
        return;
    const int n = m_spec.grid.size;
    m_transfer.assign(size_t(n) * size_t(n), 1.0);
    const auto frequency = [n](int index) { return double(index < n / 2 ? index : index - n) / double(n); }; // cycles/pixel
    const auto sinc = [](double x) { return x == 0.0 ? 1.0 : std::sin(M_PI * x) / (M_PI * x); };
    const auto sphere = [](double u) {
        return std::abs(u) < 1e-4 ? 1.0 - u * u / 10.0 : 3.0 * (std::sin(u) - u * std::cos(u)) / (u * u * u);
    };
    for (int row = 0; row < n; ++row) {
        for (int col = 0; col < n; ++col) {
            const double fy = frequency(row), fx = frequency(col);
            double h = 1.0;
            if (detector.pixelIntegration)
                h *= sinc(fx) * sinc(fy);
            if (detector.objectDiameterPixels > 0.0)
                h *= sphere(M_PI * std::hypot(fx, fy) * detector.objectDiameterPixels);
            m_transfer[size_t(row) * size_t(n) + size_t(col)] = h;
        }
    }
}

int Problem::gaugeDimensions() const
{
    return (hasZonalPhase() ? int(m_zonalProjector.cols()) : 0) + (hasZonalAmplitude() ? 1 : 0);
}

bool Problem::usesPupilFunctionTerms() const
{
    return hasZonalPhase() || hasZonalAmplitude() || m_hasDefocusParameters || !m_transfer.empty() || !m_spectrum.empty();
}

void Problem::compileSpectrum()
{
    const SpectrumSpec& spectrum = m_spec.spectrum;
    if (spectrum.samples < 1 || spectrum.samples > kMaxSpectralSamples)
        fail("spectral samples must be from 1 to " + std::to_string(kMaxSpectralSamples) + ", got " + std::to_string(spectrum.samples));
    if (!(spectrum.bandwidth >= 0.0) || !(spectrum.bandwidth < 0.5 * m_spec.wavelength))
        fail("the bandwidth must be from 0 to half the wavelength, got " + std::to_string(spectrum.bandwidth * 1e9) + " nm");
    if (spectrum.isMonochromatic())
        return;
    const int n = m_spec.grid.size;
    for (int s = 0; s < spectrum.samples; ++s) {
        // The midpoint of sub-band s of the flat band, snapped to the even FFT sizes.
        const double wavelength = m_spec.wavelength + spectrum.bandwidth * ((s + 0.5) / spectrum.samples - 0.5);
        int grid = int(std::lround(n * wavelength / m_spec.wavelength / 2.0)) * 2;
        const double weight = 1.0 / spectrum.samples;
        auto same = std::find_if(m_spectrum.begin(), m_spectrum.end(), [&](const SpectralChannel& c) { return c.grid == grid; });
        if (same != m_spectrum.end()) {
            same->weight += weight;
            continue;
        }
        SpectralChannel channel;
        channel.grid = grid;
        channel.wavelength = m_spec.wavelength * grid / n;
        channel.phaseScale = double(n) / grid;
        channel.weight = weight;
        const int shift = (grid - n) / 2; // the same pupil samples, centred on N' / 2
        if (m_rowBegin + shift < 0 || m_rowEnd + shift > grid)
            fail("the spectrum's shortest wavelength leaves the pupil no room on its grid; use a narrower band or a larger grid");
        for (int g : m_pupilIndex)
            channel.index.push_back((g / n + shift) * grid + (g % n + shift));
        m_spectrum.push_back(std::move(channel));
    }
    if (m_hasData) {
        const Image& first = m_spec.planes.front().data;
        for (const SpectralChannel& c : m_spectrum)
            if (c.grid < std::max(first.width, first.height))
                fail("the spectrum's shortest wavelength images on a " + std::to_string(c.grid) + "-sample grid, smaller than the "
                     + std::to_string(first.width) + "-pixel data; use a larger grid or a narrower band");
    }
    if (m_spectrum.size() == 1 && m_spectrum.front().grid == n)
        m_spectrum.clear(); // a band narrower than the lattice: one wavelength after all
    std::sort(m_spectrum.begin(), m_spectrum.end(), [](const SpectralChannel& a, const SpectralChannel& b) { return a.grid < b.grid; });
}

Eigen::VectorXd Problem::zonalPhase(const ModelParameters& p) const
{
    if (!hasZonalPhase())
        return {};
    Eigen::VectorXd z = Eigen::Map<const Eigen::VectorXd>(p.zonalPhase.data(), Eigen::Index(p.zonalPhase.size()));
    z -= m_zonalProjector * (m_zonalProjector.transpose() * z);
    return z;
}

Eigen::VectorXd Problem::pupilPhase(const ModelParameters& p) const
{
    Eigen::VectorXd phase = m_basis * Eigen::Map<const Eigen::VectorXd>(p.zernike.data(), Eigen::Index(p.zernike.size()));
    if (hasZonalPhase())
        phase += zonalPhase(p);
    return phase;
}

std::vector<double> Problem::pupilAmplitude(const ModelParameters& p) const
{
    std::vector<double> a(m_transmission.size());
    if (hasZonalAmplitude()) {
        double mean = 0.0;
        for (double v : p.zonalAmplitude)
            mean += v;
        mean /= double(std::max<size_t>(1, p.zonalAmplitude.size()));
        for (size_t i = 0; i < a.size(); ++i)
            a[i] = p.amplitude * m_transmission[i] * std::exp(p.zonalAmplitude[i] - mean);
        return a;
    }
    Illumination current = m_spec.pupil.illumination;
    current.x0 = p.centreX;
    current.y0 = p.centreY;
    current.sigma = p.sigma;
    for (size_t i = 0; i < a.size(); ++i)
        a[i] = p.amplitude * m_transmission[i] * illuminationProfile(current, m_pupilX[i], m_pupilY[i]);
    return a;
}

void Problem::chainPupilGradient(const ModelParameters& p, const double* dPhase, const double* dAmplitude,
                                 const std::vector<double>& amplitude, ModelParameters& grad) const
{
    const Eigen::Index pixels = pupilPixelCount();
    if (hasZonalPhase()) {
        // phase = P z with P = I - Q Q^T symmetric, so dL/dz = P dL/dphase.
        Eigen::VectorXd g = Eigen::Map<const Eigen::VectorXd>(dPhase, pixels);
        g -= m_zonalProjector * (m_zonalProjector.transpose() * g);
        for (Eigen::Index i = 0; i < pixels; ++i)
            grad.zonalPhase[size_t(i)] += g[i];
    }
    double dAmp = 0, dX0 = 0, dY0 = 0, dSigma = 0;
    if (hasZonalAmplitude()) {
        // a_i = c t_i exp(v_i - mean v): dL/dv_j = g_j - mean g with g_i = dL/da_i a_i.
        double mean = 0.0;
        for (Eigen::Index i = 0; i < pixels; ++i)
            mean += dAmplitude[i] * amplitude[size_t(i)];
        mean /= double(pixels);
        for (Eigen::Index i = 0; i < pixels; ++i)
            grad.zonalAmplitude[size_t(i)] += dAmplitude[i] * amplitude[size_t(i)] - mean;
    }
    const double s2 = p.sigma * p.sigma;
    const bool gaussian = m_spec.pupil.illumination.gaussian;
    for (Eigen::Index i = 0; i < pixels; ++i) {
        const double da = dAmplitude[i];
        const double a = amplitude[size_t(i)];
        if (p.amplitude != 0.0)
            dAmp += da * a / p.amplitude;
        if (gaussian) {
            const double dx = m_pupilX[size_t(i)] - p.centreX, dy = m_pupilY[size_t(i)] - p.centreY;
            dX0 += da * a * dx / s2;
            dY0 += da * a * dy / s2;
            dSigma += da * a * (dx * dx + dy * dy) / (s2 * p.sigma);
        }
    }
    grad.amplitude += dAmp;
    grad.centreX += dX0;
    grad.centreY += dY0;
    grad.sigma += dSigma;
}

double Problem::regularization(const ModelParameters& p, ModelParameters* grad) const
{
    const double w = m_spec.regularization;
    double cost = 0.0;
    const auto smoothness = [&](const double* v, std::vector<double>* g) {
        double sum = 0.0;
        for (const auto& [i, j] : m_neighbours) {
            const double d = v[i] - v[j];
            sum += d * d;
            if (g) {
                (*g)[size_t(i)] += w * d;
                (*g)[size_t(j)] -= w * d;
            }
        }
        return 0.5 * w * sum;
    };
    if (hasZonalPhase()) {
        // On the phase the model uses (projected): R(P z), dR/dz = P dR/d(P z).
        const Eigen::VectorXd used = zonalPhase(p);
        std::vector<double> g(size_t(used.size()), 0.0);
        cost += smoothness(used.data(), grad ? &g : nullptr);
        if (grad) {
            Eigen::Map<Eigen::VectorXd> gv(g.data(), Eigen::Index(g.size()));
            gv -= m_zonalProjector * (m_zonalProjector.transpose() * gv);
            for (size_t i = 0; i < g.size(); ++i)
                grad->zonalPhase[i] += g[i];
        }
    }
    if (hasZonalAmplitude())
        cost += smoothness(p.zonalAmplitude.data(), grad ? &grad->zonalAmplitude : nullptr);
    return cost;
}

void Problem::planeDiversity(const ModelParameters& p, int plane, std::vector<double>& out) const
{
    const size_t k = size_t(plane);
    const double amount = p.defocusScale * m_diversityAmount[k] + p.defocusOffset[k];
    const std::vector<double>& fixed = m_diversityFixed[k];
    const std::vector<double>& unit = m_diversityUnit[k];
    out.resize(fixed.size());
    for (size_t i = 0; i < fixed.size(); ++i)
        out[i] = fixed[i] + amount * unit[i];
}

double Problem::defocusAmountChange(const ModelParameters& p, int plane) const
{
    const size_t k = size_t(plane);
    return (p.defocusScale - 1.0) * m_diversityAmount[k] + p.defocusOffset[k];
}

void Problem::chainDefocusGradient(int plane, double unitDerivative, ModelParameters& grad) const
{
    grad.defocusScale += m_diversityAmount[size_t(plane)] * unitDerivative;
    grad.defocusOffset[size_t(plane)] += unitDerivative;
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

ProblemSpec withApertureScale(ProblemSpec spec, double naScale)
{
    if (!(naScale > 0.0) || !std::isfinite(naScale))
        throw std::invalid_argument("the aperture scale must be a positive number");
    if (!spec.pupil.customMask.empty())
        throw std::invalid_argument("the sampling fit cannot rescale a custom pupil mask (it is drawn on the grid's samples)");
    spec.grid.spacing /= naScale; // the grid stays centred on the same sample
    spec.grid.origin /= naScale;
    for (PlaneSpec& plane : spec.planes) {
        DiversitySpec& d = plane.diversity;
        if (d.kind != DiversityKind::AxialParaxial && d.kind != DiversityKind::AxialHighNa)
            continue;
        d.numericalAperture *= naScale;
        if (d.numericalAperture >= d.immersionIndex)
            throw std::invalid_argument("an aperture scale of " + std::to_string(naScale) + " takes the NA to "
                                        + std::to_string(d.numericalAperture) + ", at or above the immersion index "
                                        + std::to_string(d.immersionIndex));
    }
    if (spec.model == ImagingModel::Vectorial) {
        VectorialSpec& v = spec.vectorial;
        v.numericalAperture *= naScale;
        if (v.numericalAperture >= v.immersionIndex)
            throw std::invalid_argument("an aperture scale of " + std::to_string(naScale) + " takes the NA to "
                                        + std::to_string(v.numericalAperture) + ", at or above the immersion index "
                                        + std::to_string(v.immersionIndex));
    }
    spec.zonalPhaseStart.clear();
    spec.zonalAmplitudeStart.clear();
    return spec;
}

} // namespace wfs
