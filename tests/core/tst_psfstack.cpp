// The 3-D PSF export (fit/PsfStack.h) at another pixel size: the grid grows so that the pupil keeps its samples,
// the output's Q follows the pixel exactly, and an object of a given size stays that size in the sample plane, so
// its blur on the finer pixels is the sphere's transfer function at twice as many pixels across.
#include "TestSupport.h"

#include "fit/PsfStack.h"

#include <complex>

using namespace wfs;

namespace {

ProblemSpec stackSpec(double objectDiameterPixels)
{
    ProblemSpec s;
    s.grid = PupilGrid::centred(32, 3.0);
    s.basis.maxOrder = 3;
    s.basis.start = {0.0, 0.0, 0.0, 0.2, 0.3, -0.2, 0.25};
    s.planes.resize(1);
    s.detector.objectDiameterPixels = objectDiameterPixels;
    return s;
}

// One coefficient of the image's 2-D DFT: sum over pixels of v e^(-2 pi i (kx x + ky y) / N).
std::complex<double> dft(const Image& image, int kx, int ky)
{
    std::complex<double> sum = 0.0;
    for (int r = 0; r < image.height; ++r)
        for (int c = 0; c < image.width; ++c)
            sum += image.at(r, c) * std::polar(1.0, -2.0 * M_PI * (double(kx) * c / image.width + double(ky) * r / image.height));
    return sum;
}

// The transfer function of a uniform sphere seen in projection, u = pi f diameter (ProblemSpec.h's DetectorSpec;
// tst_imageformation holds it to a quadrature of the projection).
double sphere(double u)
{
    return 3.0 * (std::sin(u) - u * std::cos(u)) / (u * u * u);
}

} // namespace

class TestPsfStack : public QObject {
    Q_OBJECT

private slots:
    // Half the data's pixel: the grid doubles (64), Q doubles exactly (6), and the object of 1.6 data pixels is 3.2
    // output pixels across. The whole grid is exported, so the blur is a circular convolution and the ratio of the
    // stacks' DFT coefficients with and without the object is the sphere's transfer at each frequency: 1e-9
    // (rounding, at coefficients far above it).
    void objectKeepsItsSizeOnFinerPixels()
    {
        const double diameter = 1.6;
        const Problem point(stackSpec(0.0)), bead(stackSpec(diameter));
        PsfStackRequest request;
        request.defocus = {0.0, 0.5};
        request.pixelScale = 0.5;
        request.crop = 64;
        const PsfStack a = psfStack(point, point.initialParameters(), request);
        const PsfStack b = psfStack(bead, bead.initialParameters(), request);
        QCOMPARE(b.grid, 64);
        QCOMPARE(b.pixelScale, 0.5);
        WFS_VERIFY_CLOSE(b.samplingQ, 6.0, 1e-12, 0.0);
        for (size_t k = 0; k < b.planes.size(); ++k) {
            WFS_VERIFY_CLOSE(std::abs(dft(b.planes[k], 0, 0)), std::abs(dft(a.planes[k], 0, 0)), 1e-12, 0.0);
            for (const auto& [kx, ky] : {std::pair{2, 0}, std::pair{0, 3}, std::pair{4, 4}, std::pair{7, 1}}) {
                const std::complex<double> ratio = dft(b.planes[k], kx, ky) / dft(a.planes[k], kx, ky);
                const double u = M_PI * std::hypot(double(kx), double(ky)) / 64.0 * diameter / request.pixelScale;
                WFS_VERIFY_CLOSE(ratio.real(), sphere(u), 1e-9, 0.0);
                WFS_VERIFY_CLOSE(ratio.imag(), 0.0, 0.0, 1e-9);
            }
        }
    }
};

QTEST_GUILESS_MAIN(TestPsfStack)
#include "tst_psfstack.moc"
