// The PSF analysis (fit/PsfAnalysis.h) held to closed forms of the unaberrated circular pupil: the Airy
// pattern's encircled energy 1 - J0(pi r)^2 - J1(pi r)^2 (r in lambda / D) with its published values at the
// dark rings (83.8 %, 91.0 %, 93.8 %), its FWHM 1.029 lambda / D, the diffraction-limited MTF
// (2 / pi) (acos v - v sqrt(1 - v^2)) with the cutoff at 1 / Q cycles per pixel, and the Strehl ratio of
// a known defocus as |mean of exp(i phase)|^2 over the pupil's samples.
#include "TestSupport.h"

#include "engine/Presets.h"
#include "fit/PsfAnalysis.h"
#include "fit/Results.h"
#include "optics/CpuModel.h"

#include <complex>
#include <memory>

using namespace wfs;

namespace {

constexpr int kGrid = 256;
constexpr double kQ = 8.0; // lambda / D = 8 pixels: the Airy core spans ~20 pixels, so whole-pixel radii resolve it

// A clear circular pupil, one in-focus plane whose data are the model itself; `defocusRad` of RMS Zernike defocus.
std::shared_ptr<const Problem> airyProblem(double defocusRad)
{
    ProblemSpec s;
    s.grid = PupilGrid::centred(kGrid, kQ);
    s.basis.maxOrder = 2;
    s.basis.start = {0.0, 0.0, 0.0, defocusRad}; // Noll: piston, tip, tilt, defocus
    s.planes.resize(1);
    const Problem shape(s);
    s.planes[0].data = simulateImages(s, shape.initialParameters(), 64, 64, {}, nullptr).front();
    return std::make_shared<const Problem>(s);
}

PsfAnalysis analyse(const std::shared_ptr<const Problem>& problem)
{
    EvaluatorOptions options;
    options.measurePlans = false;
    auto evaluator = makeCpuEvaluator(problem, options);
    return analysePsf(*evaluator, problem->initialParameters());
}

// Encircled energy of the curve at `radius` pixels, linear between the whole-pixel radii it is given at.
double encircledAt(const PsfAnalysis& a, double radius)
{
    const size_t below = size_t(std::floor(radius));
    const double t = radius - double(below);
    return (1.0 - t) * a.encircledDiffraction[below] + t * a.encircledDiffraction[below + 1];
}

double airyEncircled(double radiusLambdaOverD)
{
    const double x = M_PI * radiusLambdaOverD;
    const double j0 = std::cyl_bessel_j(0.0, x), j1 = std::cyl_bessel_j(1.0, x);
    return 1.0 - j0 * j0 - j1 * j1;
}

} // namespace

class TestPsfAnalysis : public QObject {
    Q_OBJECT

private slots:
    void scalesFollowTheSampling()
    {
        const PsfAnalysis a = analyse(airyProblem(0.0));
        // A pixel is 1 / Q of lambda / D, and the incoherent cutoff D / (lambda F) is 1 / Q cycles per pixel: exact
        // up to the rounding of the grid's spacing.
        WFS_VERIFY_CLOSE(a.lambdaOverDPerPixel, 1.0 / kQ, 1e-12, 0.0);
        WFS_VERIFY_CLOSE(a.cutoffCyclesPerPixel, 1.0 / kQ, 1e-12, 0.0);
        WFS_VERIFY_CLOSE(a.strehl, 1.0, 1e-12, 0.0);
    }

    // The dark rings of the Airy pattern at 1.220, 2.233 and 3.238 lambda / D enclose 83.8 %, 91.0 % and 93.8 % of
    // the light (Born & Wolf, 8.5.2). Tolerance 0.004: the pupil is 32 samples across (its discrete edge moves the
    // rings by ~0.2 %) and the energy is summed over whole pixels; at a dark ring the curve is flat, so the
    // pixel-lattice counting barely matters there. A radius read as a diameter puts 48 % inside the first ring.
    void encircledEnergyOfTheAiryPattern()
    {
        const PsfAnalysis a = analyse(airyProblem(0.0));
        QCOMPARE(a.radius.size(), a.encircledDiffraction.size());
        for (size_t i = 0; i < a.radius.size(); ++i)
            QCOMPARE(a.radius[i], double(i));
        const std::pair<double, double> rings[] = {{1.2197, 0.838}, {2.2331, 0.910}, {3.2383, 0.938}};
        for (const auto& [ring, published] : rings) {
            const double measured = encircledAt(a, ring * kQ);
            qInfo("EE inside the dark ring at %.4f lambda/D: %.4f (published %.3f, closed form %.4f)", ring, measured, published,
                  airyEncircled(ring));
            WFS_VERIFY_CLOSE(measured, published, 0.0, 0.004);
            WFS_VERIFY_CLOSE(measured, airyEncircled(ring), 0.0, 0.004);
        }
        // The whole curve beyond the core (r >= 1 lambda / D), where whole-pixel counting of a disc is within a few
        // pixels' light: 0.02 absolute.
        for (size_t i = size_t(kQ); i < size_t(5 * kQ); ++i)
            WFS_VERIFY_CLOSE(a.encircledDiffraction[i], airyEncircled(double(i) / kQ), 0.0, 0.02);
        // No aberration: the fitted curve is the ideal one.
        for (size_t i = 0; i < a.radius.size(); ++i)
            WFS_VERIFY_CLOSE(a.encircledFitted[i], a.encircledDiffraction[i], 1e-9, 1e-12);
    }

    // The Airy FWHM is 1.029 lambda / D (the half-maximum of (2 J1(x) / x)^2 at x = 1.6163). Tolerance 1 %: linear
    // interpolation between samples 1 / 8 lambda / D apart on a curve this smooth, and the pupil's discrete edge.
    void fwhmOfTheAiryPattern()
    {
        const PsfAnalysis a = analyse(airyProblem(0.0));
        const double expected = 2.0 * 1.6163 / M_PI * kQ;
        qInfo("Airy FWHM %.4f pixels (closed form %.4f)", a.fwhmDiffractionPixels, expected);
        WFS_VERIFY_CLOSE(a.fwhmDiffractionPixels, expected, 0.01, 0.0);
        WFS_VERIFY_CLOSE(a.fwhmFittedPixels, a.fwhmDiffractionPixels, 1e-9, 0.0);
    }

    // The MTF of a clear circular pupil: (2 / pi) (acos v - v sqrt(1 - v^2)), v = frequency / cutoff. Tolerance 0.01:
    // a 32-sample pupil's autocorrelation against the continuous disc's, averaged over whole-pixel frequency rings.
    void mtfOfTheCircularPupil()
    {
        const PsfAnalysis a = analyse(airyProblem(0.0));
        QVERIFY(a.frequency.size() >= 3 && a.frequency.size() == a.mtfDiffraction.size());
        WFS_VERIFY_CLOSE(a.mtfDiffraction.front(), 1.0, 1e-12, 0.0);
        // The curve runs to the cutoff (its last ring is the first at or beyond it).
        QVERIFY2(a.frequency.back() >= a.cutoffCyclesPerPixel * (1.0 - 1e-12), qPrintable(QString::number(a.frequency.back())));
        for (size_t i = 0; i < a.frequency.size(); ++i) {
            const double v = std::min(a.frequency[i] / a.cutoffCyclesPerPixel, 1.0);
            const double expected = 2.0 / M_PI * (std::acos(v) - v * std::sqrt(1.0 - v * v));
            WFS_VERIFY_CLOSE(a.mtfDiffraction[i], expected, 0.0, 0.01);
        }
        // The 2-D map is centred on zero frequency and reaches the cutoff on its edge.
        const Image& map = a.mtfDiffraction2d;
        QCOMPARE(map.width, 2 * int(a.frequency.size() - 1) + 1);
        WFS_VERIFY_CLOSE(map.at(map.height / 2, map.width / 2), 1.0, 1e-12, 0.0);
    }

    // With a known defocus the Strehl ratio is the on-axis intensity ratio |sum A e^(i phi)|^2 / |sum A|^2 over the pupil's
    // samples, computed here from the pupil directly (float64 rounding: 1e-9); and the aberrated PSF encloses less light.
    void strehlOfAKnownDefocus()
    {
        const double defocus = 0.1 * 2.0 * M_PI; // 0.1 wave RMS
        const auto problem = airyProblem(defocus);
        const PsfAnalysis a = analyse(problem);
        const ModelParameters p = problem->unpack(problem->initialParameters().data());
        const Eigen::VectorXd phase = problem->pupilPhase(p);
        const std::vector<double> amplitude = problem->pupilAmplitude(p);
        std::complex<double> field = 0.0;
        double clear = 0.0;
        for (Eigen::Index i = 0; i < phase.size(); ++i) {
            field += amplitude[size_t(i)] * std::polar(1.0, phase[i]);
            clear += amplitude[size_t(i)];
        }
        const double expected = std::norm(field) / (clear * clear);
        qInfo("Strehl %.6f (pupil sum %.6f, Marechal exp(-sigma^2) %.4f)", a.strehl, expected, std::exp(-defocus * defocus));
        WFS_VERIFY_CLOSE(a.strehl, expected, 1e-9, 0.0);
        QVERIFY(a.encircledFitted[size_t(kQ)] < a.encircledDiffraction[size_t(kQ)]);
    }
};

QTEST_GUILESS_MAIN(TestPsfAnalysis)
#include "tst_psfanalysis.moc"
