// Issue 42 item 2: what the image views' tools measure (fit/ImageInspection.h), on exact cases: a histogram of known
// values gives known counts (bin edges, the top end, NaN and infinities left out, values outside counted apart); a
// line profile on a linear image is linear with the values of the plane at the sampled points (bilinear
// interpolation is exact there), one sample per pixel of length at least, a zero-length line gives the value under
// its point, and samples outside the image are NaN while the outer half pixel takes the edge's value.
#include "TestSupport.h"

#include "fit/ImageInspection.h"

#include <cmath>
#include <limits>

using namespace wfs;

namespace {

const double kNan = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

// 6 x 5 pixels, value 2 x + 10 y at pixel (x, y): a plane, which bilinear interpolation reproduces exactly.
Image plane()
{
    Image image(6, 5);
    for (int r = 0; r < image.height; ++r)
        for (int c = 0; c < image.width; ++c)
            image.at(r, c) = 2.0 * c + 10.0 * r;
    return image;
}

} // namespace

class TestImageInspection : public QObject {
    Q_OBJECT

private slots:
    void histogramCounts()
    {
        const std::vector<double> values{0.0, 0.99, 1.0, 2.5, 2.75, 3.999, 4.0, kNan, kInf, -kInf, -1.0, 5.0, 4.0000001};
        const Histogram h = histogram(values, 0.0, 4.0, 4);
        QCOMPARE(h.counts, (std::vector<size_t>{2, 1, 2, 2})); // [0,1): 0, 0.99; [1,2): 1; [2,3): 2.5, 2.75; [3,4]: 3.999, 4
        QCOMPARE(h.nonFinite, size_t(3));
        QCOMPARE(h.below, size_t(1));
        QCOMPARE(h.above, size_t(2));
        QCOMPARE(h.binWidth(), 1.0);
        QCOMPARE(h.binCentre(0), 0.5);
        QCOMPARE(h.binCentre(3), 3.5);
        // Every value counted once.
        size_t total = h.nonFinite + h.below + h.above;
        for (const size_t c : h.counts)
            total += c;
        QCOMPARE(total, values.size());

        // Negative ranges, many bins: 0.1 steps from -1 (values on the bin edges go up, as far as rounding allows).
        std::vector<double> ramp;
        for (int i = 0; i < 20; ++i)
            ramp.push_back(-1.0 + 0.1 * i + 0.05);
        const Histogram fine = histogram(ramp, -1.0, 1.0, 20);
        QCOMPARE(fine.counts, std::vector<size_t>(20, 1));
    }

    void histogramRefusesBadRanges()
    {
        const std::vector<double> values{1.0, 2.0};
        QVERIFY(histogram(values, 1.0, 1.0, 10).counts.empty());
        QVERIFY(histogram(values, 2.0, 1.0, 10).counts.empty());
        QVERIFY(histogram(values, 0.0, 3.0, 0).counts.empty());
        QVERIFY(histogram(values, kNan, 3.0, 10).counts.empty());
        QVERIFY(histogram(values, 0.0, kInf, 10).counts.empty());
        QCOMPARE(histogram(values, 0.0, 1.0, 10).binWidth(), 0.1);
        QCOMPARE(histogram(values, 1.0, 1.0, 10).binWidth(), 0.0);
        QVERIFY(histogram({}, 0.0, 1.0, 3).counts == (std::vector<size_t>{0, 0, 0}));
    }

    void extentOfFiniteValues()
    {
        const auto extent = finiteExtent({kNan, 3.0, -kInf, -2.5, 7.0, kInf});
        QVERIFY(extent.has_value());
        QCOMPARE(extent->first, -2.5);
        QCOMPARE(extent->second, 7.0);
        QVERIFY(!finiteExtent({kNan, kInf}).has_value());
        QVERIFY(!finiteExtent({}).has_value());
        const auto one = finiteExtent({4.0});
        QVERIFY(one && one->first == 4.0 && one->second == 4.0);
    }

    // Along a row: one sample per pixel, on the pixel centres, the plane's values.
    void profileAlongARow()
    {
        const LineProfile p = lineProfile(plane(), 0.0, 1.0, 4.0, 1.0);
        QCOMPARE(p.distance, (std::vector<double>{0, 1, 2, 3, 4}));
        QCOMPARE(p.value, (std::vector<double>{10, 12, 14, 16, 18}));
    }

    // Diagonals: samples evenly spaced from end to end, never more than a pixel apart, the plane's values.
    void profileAlongADiagonal()
    {
        const LineProfile p = lineProfile(plane(), 1.0, 1.0, 4.0, 4.0);
        // (1, 1) to (4, 4): length 3 sqrt 2 = 4.24, so 6 samples 0.849 px apart.
        QCOMPARE(p.value.size(), size_t(6));
        for (size_t i = 0; i < 6; ++i) {
            const double t = double(i) / 5.0, x = 1.0 + 3.0 * t, y = 1.0 + 3.0 * t;
            WFS_VERIFY_CLOSE(p.distance[i], t * 3.0 * std::sqrt(2.0), 1e-14, 1e-14);
            WFS_VERIFY_CLOSE(p.value[i], 2.0 * x + 10.0 * y, 1e-14, 1e-13);
        }
        const LineProfile q = lineProfile(plane(), 1.0, 0.0, 4.0, 4.0); // length 5: exactly 6 samples 1 px apart
        QCOMPARE(q.value.size(), size_t(6));
        for (size_t i = 0; i < 6; ++i) {
            const double x = 1.0 + 0.6 * double(i), y = 0.8 * double(i);
            WFS_VERIFY_CLOSE(q.distance[i], double(i), 1e-14, 1e-14);
            WFS_VERIFY_CLOSE(q.value[i], 2.0 * x + 10.0 * y, 1e-14, 1e-13);
        }
        // A length just over a whole number of pixels takes one more sample: 2.5 px, 4 samples.
        QCOMPARE(lineProfile(plane(), 0.0, 0.0, 2.5, 0.0).value.size(), size_t(4));
    }

    void zeroLengthLine()
    {
        const LineProfile p = lineProfile(plane(), 0.5, 0.25, 0.5, 0.25);
        QCOMPARE(p.distance, std::vector<double>{0.0});
        QCOMPARE(p.value, std::vector<double>{3.5}); // 2 * 0.5 + 10 * 0.25
    }

    // Partly outside: NaN beyond the image's edge (x < -0.5), kept so that the distances stay evenly spaced.
    void linePartlyOutside()
    {
        const LineProfile p = lineProfile(plane(), -3.0, 2.0, 2.0, 2.0);
        QCOMPARE(p.distance, (std::vector<double>{0, 1, 2, 3, 4, 5}));
        QCOMPARE(p.value.size(), size_t(6));
        for (size_t i = 0; i < 3; ++i)
            QVERIFY2(std::isnan(p.value[i]), qPrintable(QString::number(p.value[i])));
        QCOMPARE(p.value[3], 20.0);
        QCOMPARE(p.value[4], 22.0);
        QCOMPARE(p.value[5], 24.0);
        // The outer half pixel takes the edge pixel's value; beyond it, nothing.
        QCOMPARE(bilinearAt(plane(), -0.5, 2.0), 20.0);
        QCOMPARE(bilinearAt(plane(), 5.5, 4.5), 50.0);
        QVERIFY(std::isnan(bilinearAt(plane(), -0.51, 2.0)));
        QVERIFY(std::isnan(bilinearAt(plane(), 2.0, 4.51)));
        // Wholly outside: every sample NaN, as many as the length asks.
        const LineProfile out = lineProfile(plane(), 10.0, 10.0, 13.0, 10.0);
        QCOMPARE(out.value.size(), size_t(4));
        for (const double v : out.value)
            QVERIFY(std::isnan(v));
    }

    // A pixel without data (NaN) spoils the samples it weighs in, not those on its neighbours' centres.
    void missingPixels()
    {
        Image image = plane();
        image.at(2, 2) = kNan;
        QVERIFY(std::isnan(bilinearAt(image, 2.0, 2.0)));
        QVERIFY(std::isnan(bilinearAt(image, 2.5, 2.0)));
        QVERIFY(std::isnan(bilinearAt(image, 1.5, 1.5)));
        QCOMPARE(bilinearAt(image, 3.0, 2.0), 26.0);
        QCOMPARE(bilinearAt(image, 3.5, 2.0), 27.0);
        QCOMPARE(bilinearAt(image, 2.0, 3.0), 34.0);
        // A one-pixel image: its value anywhere on the pixel.
        const Image one(1, 1, 7.0);
        QCOMPARE(bilinearAt(one, 0.0, 0.0), 7.0);
        QCOMPARE(bilinearAt(one, 0.4, -0.3), 7.0);
        QVERIFY(std::isnan(bilinearAt(Image(), 0.0, 0.0)));
        QCOMPARE(lineProfile(one, 0.0, 0.0, 0.0, 0.0).value, std::vector<double>{7.0});
        QVERIFY(lineProfile(plane(), 0.0, 0.0, kNan, 1.0).value.empty());
    }
};

QTEST_GUILESS_MAIN(TestImageInspection)
#include "tst_imageinspection.moc"
