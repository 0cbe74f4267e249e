// The forward model held to results derived outside the program: the pupil's transmitting area against
// its geometry, the direction of spider vanes and of the grid's axes, the centre intensity of defocused
// PSFs against the one-dimensional integral |int_0^1 exp(i phi(rho)) 2 rho d rho|^2 of each diversity
// screen (sinc^2 for a quadratic screen), the image motion of tip/tilt against Q, and the flux
// normalisation (Parseval). Each check states its tolerance: the discretisation of a disc of 128
// samples across is about 1e-3.
#include "TestSupport.h"

#include "optics/CpuModel.h"
#include "optics/Problem.h"

#include <complex>
#include <numbers>

using namespace wfs;

namespace {

constexpr double kPi = std::numbers::pi;

// A uniform pupil on a centred grid with one plane of the given diversity.
ProblemSpec onePlane(int grid, double q, const DiversitySpec& diversity)
{
    ProblemSpec s;
    s.grid = PupilGrid::centred(grid, q);
    s.basis.maxOrder = 2;
    s.wavelength = 600e-9;
    PlaneSpec p;
    p.diversity = diversity;
    p.flux = 1.0;
    s.planes = {p};
    return s;
}

std::vector<double> image(const ProblemSpec& spec, const std::vector<double>& parameters = {})
{
    auto problem = std::make_shared<const Problem>(spec);
    EvaluatorOptions options;
    options.measurePlans = false;
    auto model = makeCpuEvaluator(problem, options);
    const std::vector<double> p = parameters.empty() ? problem->initialParameters() : parameters;
    return model->modelImages(p.data())[0];
}

// |int_0^1 exp(i phi(rho)) 2 rho d rho|^2 by Simpson's rule on 4000 intervals: the on-axis intensity of
// a uniform circular pupil with a radially symmetric phase, relative to the unaberrated one.
template <class Phase>
double centreIntensity(Phase phi)
{
    const int n = 4000;
    std::complex<double> sum = 0;
    for (int i = 0; i <= n; ++i) {
        const double rho = double(i) / n;
        const double w = (i == 0 || i == n) ? 1 : (i % 2 ? 4 : 2);
        sum += w * std::polar(2.0 * rho, phi(rho));
    }
    sum /= 3.0 * n;
    return std::norm(sum);
}

// Index of the brightest pixel of an N x N image.
std::pair<int, int> peak(const std::vector<double>& img, int n)
{
    const auto it = std::max_element(img.begin(), img.end());
    const int i = int(it - img.begin());
    return {i / n, i % n};
}

} // namespace

class TestPhysics : public QObject {
    Q_OBJECT

private slots:
    void pupilAreaMatchesGeometry_data()
    {
        QTest::addColumn<double>("obscuration");
        QTest::addColumn<int>("vanes");
        QTest::addColumn<double>("width");
        QTest::newRow("clear") << 0.0 << 0 << 0.0;
        QTest::newRow("obscured 0.3") << 0.3 << 0 << 0.0;
        QTest::newRow("obscured 0.3, 4 vanes of 0.02 D") << 0.3 << 4 << 0.02;
        QTest::newRow("3 vanes of 0.05 D") << 0.0 << 3 << 0.05;
    }

    void pupilAreaMatchesGeometry()
    {
        // Area in pupil radii^2: pi (1 - eps^2) minus, per vane, a strip of width 2 w (w is a fraction
        // of the diameter, 2 radii) from the obscuration to the edge. Samples of a 256 grid at Q = 2
        // (128 across): within 0.5 %.
        QFETCH(double, obscuration);
        QFETCH(int, vanes);
        QFETCH(double, width);
        ProblemSpec s = onePlane(256, 2.0, {});
        s.pupil.obscuration = obscuration;
        s.pupil.spiderCount = vanes;
        s.pupil.spiderWidth = width;
        s.pupil.spiderAngleDeg = 15.0;
        const Problem problem(s);
        const double cell = s.grid.spacing * s.grid.spacing;
        const double area = problem.pupilPixelCount() * cell;
        const double expected = kPi * (1 - obscuration * obscuration) - vanes * 2 * width * (1 - obscuration);
        WFS_VERIFY_CLOSE(area, expected, 5e-3, 0.0);
    }

    void vanesAndAxesPointWhereTheSpecSays()
    {
        // One vane at 90 degrees (counter-clockwise from +x) blocks +y, not -y; rows run along y with
        // row 0 at the bottom, columns along x.
        PupilSpec pupil;
        pupil.spiderCount = 1;
        pupil.spiderWidth = 0.02;
        pupil.spiderAngleDeg = 90.0;
        QCOMPARE(pupil.transmission(0.0, 0.5), 0.0);
        QCOMPARE(pupil.transmission(0.0, -0.5), 1.0);
        QCOMPARE(pupil.transmission(0.5, 0.0), 1.0);
        pupil.spiderAngleDeg = 0.0;
        QCOMPARE(pupil.transmission(0.5, 0.0), 0.0);
        QCOMPARE(pupil.transmission(-0.5, 0.0), 1.0);
        pupil.spiderCount = 0;
        pupil.obscuration = 0.4; // a diameter ratio: radius 0.4 of the unit pupil
        QCOMPARE(pupil.transmission(0.35, 0.0), 0.0);
        QCOMPARE(pupil.transmission(0.0, 0.45), 1.0);
        QCOMPARE(pupil.transmission(0.99, 0.0), 1.0);
        QCOMPARE(pupil.transmission(0.8, 0.8), 0.0);

        const PupilGrid grid = PupilGrid::centred(64, 2.0);
        QCOMPARE(grid.x(10, 40), grid.coordinate(40));
        QCOMPARE(grid.y(10, 40), grid.coordinate(10));
        QVERIFY(grid.coordinate(32) == 0.0);                         // the FFT's zero frequency sits at N / 2
        WFS_VERIFY_CLOSE(grid.coordinate(32 + 16), 1.0, 1e-12, 0.0); // radius 1 spans N / (2 Q) samples
    }

    void defocusCentreIntensityMatchesTheIntegral_data()
    {
        QTest::addColumn<int>("kind");
        QTest::addColumn<double>("value");
        QTest::addColumn<int>("measure");
        QTest::newRow("W020 0.5 wave") << int(DiversityKind::ZernikeDefocus) << 0.5 << int(DefocusMeasure::PeakToValley);
        QTest::newRow("W020 -0.3 wave") << int(DiversityKind::ZernikeDefocus) << -0.3 << int(DefocusMeasure::PeakToValley);
        QTest::newRow("W020 1 wave (dark centre)") << int(DiversityKind::ZernikeDefocus) << 1.0 << int(DefocusMeasure::PeakToValley);
        QTest::newRow("RMS defocus 0.1 wave") << int(DiversityKind::ZernikeDefocus) << 0.1 << int(DefocusMeasure::Rms);
        QTest::newRow("paraxial z = 1 um, NA 0.5") << int(DiversityKind::AxialParaxial) << 1e-6 << 0;
        QTest::newRow("high NA z = 0.4 um, NA 1.2, n 1.33") << int(DiversityKind::AxialHighNa) << 0.4e-6 << 0;
        QTest::newRow("prime focus dz = 15 um") << int(DiversityKind::PrimeFocus) << 15e-6 << 0;
    }

    void defocusCentreIntensityMatchesTheIntegral()
    {
        QFETCH(int, kind);
        QFETCH(double, value);
        QFETCH(int, measure);
        const double lambda = 600e-9, k = 2 * kPi / lambda;
        DiversitySpec d;
        d.kind = DiversityKind(kind);
        d.measure = DefocusMeasure(measure);
        double expected = 0;
        switch (d.kind) {
        case DiversityKind::ZernikeDefocus:
            d.defocusWaves = value;
            if (d.measure == DefocusMeasure::PeakToValley) {
                // W(rho) = W020 rho^2: I(0) = sinc^2(pi W020), exactly.
                const double a = kPi * value;
                expected = std::pow(std::sin(a) / a, 2);
            } else {
                // W = c sqrt(3) (2 rho^2 - 1): a quadratic of 2 sqrt(3) c waves edge to centre.
                const double a = kPi * 2 * std::sqrt(3.0) * value;
                expected = std::pow(std::sin(a) / a, 2);
            }
            break;
        case DiversityKind::AxialParaxial:
            d.axialDistance = value;
            d.numericalAperture = 0.5;
            d.immersionIndex = 1.0;
            expected = centreIntensity([&](double rho) { return k * value * 0.25 * rho * rho / 2.0; });
            break;
        case DiversityKind::AxialHighNa:
            d.axialDistance = value;
            d.numericalAperture = 1.2;
            d.immersionIndex = 1.33;
            // Angular spectrum: the path difference z (n cos(theta) - n) with n sin(theta) = NA rho.
            expected = centreIntensity([&](double rho) { return k * value * (1.33 - std::sqrt(1.33 * 1.33 - 1.44 * rho * rho)); });
            break;
        case DiversityKind::PrimeFocus: {
            // The OOF benchmark (Nikolic 2018, as specified for this project): phase = 2 pi dz / lambda ((1 - u^2) / (1 + u^2) - 1), u = rho R / (2 F).
            d.axialDistance = value;
            d.focalLength = 14.4;
            d.dishRadius = 2.8;
            expected = centreIntensity([&](double rho) {
                const double u = rho * 2.8 / 28.8;
                return 2 * kPi * value / lambda * ((1 - u * u) / (1 + u * u) - 1);
            });
            break;
        }
        default:
            QFAIL("unexpected kind");
        }
        const int n = 256;
        const auto focused = image(onePlane(n, 2.0, {}));
        const auto defocused = image(onePlane(n, 2.0, d));
        const size_t centre = size_t(n / 2) * size_t(n) + size_t(n / 2);
        const double ratio = defocused[centre] / focused[centre];
        qInfo("centre intensity %.6f, integral %.6f", ratio, expected);
        WFS_VERIFY_CLOSE(ratio, expected, 0.0, 5e-3);
    }

    void tiltMovesTheImageByQOverPiPerRadian()
    {
        // Phase s x (radians at the pupil edge, x in pupil radii) is a ramp of s Q / pi cycles over the
        // grid; the model propagates with an inverse DFT (as the OOF reference model does), which puts
        // the PSF s Q / pi samples towards -x (columns), and likewise -y (rows, row 0 at the bottom).
        // Noll Z2 = 2 rho cos(theta) with coefficient c is s = 2 c. The per-plane shift and the Zernike
        // tilt must move the image the same way and by the same amount.
        const int n = 128;
        const double q = 2.0;
        ProblemSpec s = onePlane(n, q, {});
        s.planes[0].fitShift = true;
        const Problem problem(s);
        std::vector<double> p = problem.initialParameters(); // Z2..Z6, shift x, shift y
        QCOMPARE(int(p.size()), 7);
        QCOMPARE(peak(image(s, p), n), std::make_pair(n / 2, n / 2));
        const double fourSamples = 4 * kPi / q;
        p[5] = fourSamples; // per-plane shift x
        QCOMPARE(peak(image(s, p), n), std::make_pair(n / 2, n / 2 - 4));
        p[5] = 0;
        p[6] = -fourSamples / 2; // shift y: two samples up the rows
        QCOMPARE(peak(image(s, p), n), std::make_pair(n / 2 + 2, n / 2));
        p[6] = 0;
        p[0] = fourSamples / 2; // Noll Z2 (x tilt)
        QCOMPARE(peak(image(s, p), n), std::make_pair(n / 2, n / 2 - 4));
        p[0] = 0;
        p[1] = fourSamples / 2; // Noll Z3 (y tilt)
        QCOMPARE(peak(image(s, p), n), std::make_pair(n / 2 - 4, n / 2));
    }

    void fluxIsTheTotalOfAnUnaberratedPlane()
    {
        // intensityScale 0: flux = the plane's total over the grid (Parseval), aberrated or not, for
        // any pupil; background adds per pixel.
        ProblemSpec s = onePlane(64, 2.5, {});
        s.pupil.obscuration = 0.25;
        s.pupil.spiderCount = 3;
        s.pupil.spiderWidth = 0.03;
        s.pupil.illumination.gaussian = true;
        s.pupil.illumination.sigma = 0.7;
        s.planes[0].flux = 1234.5;
        s.planes[0].background = 0.5;
        s.basis.start = {0, 0.3, -0.2, 0.8, 0.1, -0.4};
        s.planes[0].diversity.kind = DiversityKind::ZernikeDefocus;
        s.planes[0].diversity.defocusWaves = 0.7;
        const auto img = image(s);
        double total = 0;
        for (double v : img)
            total += v;
        WFS_VERIFY_CLOSE(total - 0.5 * 64 * 64, 1234.5, 1e-10, 0.0);
    }
};

QTEST_GUILESS_MAIN(TestPhysics)
#include "tst_physics.moc"
