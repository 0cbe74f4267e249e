// The general image formation (optics/CpuImageFormation.h) against computations that do not use it: the
// detector's pixel integration against the intensity averaged over each pixel by quadrature (the intensity
// evaluated anywhere by a direct Fourier sum over the pupil's samples) and the sinc's exact values; the
// object's sphere against a quadrature of its projection's Fourier transform; and a spectrum against the sum
// of monochromatic models, each a problem of its own at its wavelength and grid.
#include "TestSupport.h"

#include "optics/CpuModel.h"

#include <complex>
#include <functional>
#include <memory>

using namespace wfs;

namespace {

constexpr int kGrid = 32;
constexpr double kQ = 3.0; // the intensity's band (1 / Q cycles per pixel) stays below Nyquist: no aliasing

// A clear pupil with coma and astigmatism (so the PSF has no symmetry to hide a sign), one plane, no data.
ProblemSpec baseSpec()
{
    ProblemSpec s;
    s.grid = PupilGrid::centred(kGrid, kQ);
    s.basis.maxOrder = 3;
    s.basis.start = {0.0, 0.0, 0.0, 0.3, 0.5, -0.2, 0.4, -0.3, 0.0, 0.25}; // radians, Noll positions
    s.planes.resize(1);
    return s;
}

std::vector<std::vector<double>> modelImages(const ProblemSpec& spec)
{
    const auto problem = std::make_shared<const Problem>(spec);
    EvaluatorOptions options;
    options.measurePlans = false;
    auto evaluator = makeCpuEvaluator(problem, options);
    const std::vector<double> x = problem->initialParameters();
    return evaluator->modelImages(x.data());
}

// |E(x, y)|^2 at any image position (x = column, y = row, in pixels): the far field of the pupil's samples as a
// direct sum (the grid centre N/2 is the optical axis), the band-limited intensity the FFT samples at whole pixels.
std::function<double(double, double)> directIntensity(const Problem& problem)
{
    const ModelParameters p = problem.unpack(problem.initialParameters().data());
    const Eigen::VectorXd phase = problem.pupilPhase(p);
    const std::vector<double> amplitude = problem.pupilAmplitude(p);
    std::vector<std::complex<double>> field;
    std::vector<int> rows, cols;
    const int n = problem.gridSize();
    for (int i = 0; i < problem.pupilPixelCount(); ++i) {
        field.push_back(amplitude[size_t(i)] * std::polar(1.0, phase[i]));
        rows.push_back(problem.pupilIndex()[size_t(i)] / n);
        cols.push_back(problem.pupilIndex()[size_t(i)] % n);
    }
    return [=](double x, double y) {
        std::complex<double> e = 0.0;
        for (size_t j = 0; j < field.size(); ++j)
            e += field[j] * std::polar(1.0, 2.0 * M_PI * (cols[j] * (x - n / 2) + rows[j] * (y - n / 2)) / n);
        return std::norm(e);
    };
}

// Composite Simpson over [-1/2, 1/2]^2 around (x, y): 32 intervals per axis, ~1e-8 of the value for a trig
// polynomial of at most 1 / Q cycles per pixel.
double pixelAverage(const std::function<double(double, double)>& f, double x, double y)
{
    constexpr int m = 32;
    const auto weight = [](int k) { return k == 0 || k == m ? 1.0 : k % 2 ? 4.0 : 2.0; };
    double sum = 0.0;
    for (int i = 0; i <= m; ++i)
        for (int j = 0; j <= m; ++j)
            sum += weight(i) * weight(j) * f(x - 0.5 + double(j) / m, y - 0.5 + double(i) / m);
    return sum / (9.0 * m * m);
}

// The 2-D transfer function of a uniform sphere of `diameter` pixels seen in projection (thickness sqrt(R^2 - r^2)):
// its Hankel transform, normalised to 1 at f = 0, by Simpson's rule in r = R sin(theta) (a smooth integrand).
double projectedSphereTransfer(double frequency, double diameter)
{
    const double radius = 0.5 * diameter;
    constexpr int m = 2000;
    double sum = 0.0;
    for (int k = 0; k <= m; ++k) {
        const double theta = 0.5 * M_PI * k / m, w = k == 0 || k == m ? 1.0 : k % 2 ? 4.0 : 2.0;
        sum += w * std::cos(theta) * std::cos(theta) * std::sin(theta)
               * std::cyl_bessel_j(0.0, 2.0 * M_PI * frequency * radius * std::sin(theta));
    }
    return 3.0 * sum * (0.5 * M_PI / m) / 3.0; // the integral over theta, divided by its value 1/3 at f = 0
}

double frequencyOf(int index)
{
    return double(index < kGrid / 2 ? index : index - kGrid) / kGrid;
}

} // namespace

class TestImageFormation : public QObject {
    Q_OBJECT

private slots:
    // H(f) = sinc(fx) sinc(fy) for square pixels one sample wide, f in cycles per pixel: sinc(1/4) = 2 sqrt(2) / pi,
    // sinc(1/2) = 2 / pi at Nyquist. The transfer is computed in double: 1e-14.
    void pixelSincHasItsExactValues()
    {
        ProblemSpec s = baseSpec();
        s.detector.pixelIntegration = true;
        const Problem problem(s);
        const std::vector<double>& h = problem.transferFunction();
        QCOMPARE(h.size(), size_t(kGrid) * kGrid);
        const auto at = [&](int row, int col) { return h[size_t(row) * kGrid + size_t(col)]; };
        WFS_VERIFY_CLOSE(at(0, 0), 1.0, 1e-14, 0.0);
        WFS_VERIFY_CLOSE(at(0, 8), 2.0 * std::sqrt(2.0) / M_PI, 1e-14, 0.0);
        WFS_VERIFY_CLOSE(at(8, 0), 2.0 * std::sqrt(2.0) / M_PI, 1e-14, 0.0);
        WFS_VERIFY_CLOSE(at(kGrid / 2, 0), 2.0 / M_PI, 1e-14, 0.0);
        WFS_VERIFY_CLOSE(at(kGrid - 8, kGrid / 2), 2.0 * std::sqrt(2.0) / M_PI * 2.0 / M_PI, 1e-14, 0.0); // f = (-1/2, -1/4)
    }

    // The pixel-integrated image is the intensity averaged over each pixel. The direct Fourier sum is first checked
    // against the point-sampled model (1e-10 of the peak: the two orders of summation round differently), which
    // fixes the scale and the conventions; the blurred model then matches the quadrature to 1e-7 of the peak
    // (Simpson's error on a band-limited intensity).
    void pixelIntegrationAveragesOverThePixel()
    {
        ProblemSpec s = baseSpec();
        const Problem problem(s);
        const auto intensity = directIntensity(problem);
        const std::vector<double> point = modelImages(s).front();
        s.detector.pixelIntegration = true;
        const std::vector<double> blurred = modelImages(s).front();
        const size_t peakIndex = size_t(std::max_element(point.begin(), point.end()) - point.begin());
        const double peak = point[peakIndex];
        const double scale = peak / intensity(double(peakIndex % kGrid), double(peakIndex / kGrid));
        const std::pair<int, int> pixels[] = {{16, 16}, {16, 17}, {15, 18}, {19, 14}, {13, 13}, {20, 21}, {10, 16}, {16, 23}};
        for (const auto& [row, col] : pixels) {
            const size_t i = size_t(row) * kGrid + size_t(col);
            WFS_VERIFY_CLOSE(point[i], scale * intensity(col, row), 0.0, 1e-10 * peak);
            WFS_VERIFY_CLOSE(blurred[i], scale * pixelAverage(intensity, col, row), 0.0, 1e-7 * peak);
        }
        // The blur moves light, it does not make or lose any (H(0) = 1): 1e-12 of the total.
        double before = 0.0, after = 0.0;
        for (size_t i = 0; i < point.size(); ++i) {
            before += point[i];
            after += blurred[i];
        }
        WFS_VERIFY_CLOSE(after, before, 1e-12, 0.0);
    }

    // A sphere of `objectDiameterPixels` (the diameter, not the radius) against the quadrature of its projection's
    // transform, at frequencies along an axis and a diagonal: 1e-8 (Simpson with 2000 intervals).
    void objectSphereMatchesItsProjection()
    {
        ProblemSpec s = baseSpec();
        const double diameter = 3.4;
        s.detector.objectDiameterPixels = diameter;
        const Problem problem(s);
        const std::vector<double>& h = problem.transferFunction();
        const std::pair<int, int> samples[] = {{0, 1}, {0, 3}, {2, 5}, {5, 5}, {kGrid - 4, 7}, {kGrid / 2, kGrid / 2}};
        for (const auto& [row, col] : samples) {
            const double f = std::hypot(frequencyOf(row), frequencyOf(col));
            WFS_VERIFY_CLOSE(h[size_t(row) * kGrid + size_t(col)], projectedSphereTransfer(f, diameter), 0.0, 1e-8);
        }
        // A sphere as wide as 1 / f has its transfer well below 1 there (a sanity check of the quadrature itself).
        QVERIFY(projectedSphereTransfer(1.0 / diameter, diameter) < 0.5);
    }

    // A band of 10 % in three samples: wavelengths lambda N' / N on grids N' = 30, 32, 34, a third of the light each.
    // Each is the monochromatic model of the same pupil samples on its own grid (origin moved by whole samples), the
    // phase an optical path (Zernike radians times lambda / lambda', the axial defocus through its own wavelength),
    // summed where the grids overlap the model's: 1e-10 of the peak (FFT rounding on different sizes).
    void spectrumIsTheSumOfItsWavelengths()
    {
        ProblemSpec s = baseSpec();
        s.wavelength = 600e-9;
        s.planes[0].diversity.kind = DiversityKind::AxialParaxial;
        s.planes[0].diversity.axialDistance = 0.8e-6;
        s.planes[0].diversity.numericalAperture = 0.5;
        s.spectrum.bandwidth = 0.1 * s.wavelength;
        s.spectrum.samples = 3;
        const Problem problem(s);
        QCOMPARE(problem.spectrum().size(), size_t(3));
        const std::vector<double> spectral = modelImages(s).front();

        std::vector<double> expected(spectral.size(), 0.0);
        for (const int grid : {30, 32, 34}) {
            ProblemSpec mono = baseSpec();
            mono.planes[0].diversity = s.planes[0].diversity;
            mono.wavelength = s.wavelength * grid / kGrid;
            mono.grid.size = grid;
            mono.grid.origin = s.grid.origin - s.grid.spacing * ((grid - kGrid) / 2);
            for (double& c : mono.basis.start)
                c *= s.wavelength / mono.wavelength;
            const std::vector<double> image = modelImages(mono).front();
            const int shift = (grid - kGrid) / 2;
            for (int row = 0; row < kGrid; ++row)
                for (int col = 0; col < kGrid; ++col) {
                    const int r = row + shift, c = col + shift;
                    if (r >= 0 && c >= 0 && r < grid && c < grid)
                        expected[size_t(row) * kGrid + size_t(col)] += image[size_t(r) * size_t(grid) + size_t(c)] / 3.0;
                }
        }
        const double peak = *std::max_element(expected.begin(), expected.end());
        for (size_t i = 0; i < spectral.size(); ++i)
            WFS_VERIFY_CLOSE(spectral[i], expected[i], 0.0, 1e-10 * peak);
    }
};

QTEST_GUILESS_MAIN(TestImageFormation)
#include "tst_imageformation.moc"
