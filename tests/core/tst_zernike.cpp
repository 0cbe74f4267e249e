// Zernike bases: orderings, conversions, names, normalisation (orthonormality on a fine disc grid).
#include "TestSupport.h"

#include "optics/Zernike.h"

#include <Eigen/Dense>

using namespace wfs;

class TestZernike : public QObject {
    Q_OBJECT

private slots:
    void nollTable()
    {
        // Noll (1976), Table 1.
        const ZernikeMode expected[] = {{0, 0}, {1, 1}, {1, -1}, {2, 0}, {2, -2}, {2, 2}, {3, -1}, {3, 1},
                                        {3, -3}, {3, 3}, {4, 0}, {4, 2}, {4, -2}, {4, 4}, {4, -4}, {5, 1},
                                        {5, -1}, {5, 3}, {5, -3}, {5, 5}, {5, -5}, {6, 0}};
        for (int j = 1; j <= 22; ++j) {
            const ZernikeMode m = zernike::modeFromIndex(j, ZernikeOrdering::Noll);
            QCOMPARE(m.n, expected[j - 1].n);
            QCOMPARE(m.m, expected[j - 1].m);
            QCOMPARE(zernike::indexFromMode(m, ZernikeOrdering::Noll), j);
        }
    }

    void ansiTable()
    {
        const ZernikeMode expected[] = {{0, 0}, {1, -1}, {1, 1}, {2, -2}, {2, 0}, {2, 2}, {3, -3}, {3, -1}, {3, 1}, {3, 3}, {4, -4}};
        for (int j = 0; j <= 10; ++j) {
            const ZernikeMode m = zernike::modeFromIndex(j, ZernikeOrdering::Ansi);
            QCOMPARE(m.n, expected[j].n);
            QCOMPARE(m.m, expected[j].m);
        }
    }

    void conversionsRoundTrip()
    {
        const int count = zernike::termCount(zernike::kMaxOrder);
        QCOMPARE(count, 136);
        std::vector<bool> seen(size_t(count) + 1, false);
        for (int j = 1; j <= count; ++j) {
            const int ansi = zernike::convertIndex(j, ZernikeOrdering::Noll, ZernikeOrdering::Ansi);
            QVERIFY(ansi >= 0 && ansi < count);
            QVERIFY(!seen[size_t(ansi)]);
            seen[size_t(ansi)] = true;
            QCOMPARE(zernike::convertIndex(ansi, ZernikeOrdering::Ansi, ZernikeOrdering::Noll), j);
        }
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, zernike::modeFromIndex(0, ZernikeOrdering::Noll));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, zernike::indexFromMode({3, 2}, ZernikeOrdering::Noll));
    }

    void names()
    {
        QCOMPARE(QString::fromStdString(zernike::name(zernike::modeFromIndex(4, ZernikeOrdering::Noll))), QStringLiteral("Defocus"));
        QCOMPARE(QString::fromStdString(zernike::name(zernike::modeFromIndex(11, ZernikeOrdering::Noll))), QStringLiteral("Primary spherical"));
        QCOMPARE(QString::fromStdString(zernike::name({7, 3})), QStringLiteral("Z(7,3)"));
    }

    void unitNormalisationIsOneAtTheEdge()
    {
        for (const ZernikeMode& m : zernike::modes(zernike::kMaxOrder, ZernikeOrdering::Ansi))
            WFS_VERIFY_CLOSE(zernike::radial(m.n, std::abs(m.m), 1.0), 1.0, 1e-9, 0.0);
    }

    void basisEvaluationMatchesSingleModes()
    {
        // evaluateBasis (per-point powers and multiples, per-mode coefficients) against evaluate().
        const auto modes = zernike::modes(zernike::kMaxOrder, ZernikeOrdering::Noll);
        std::vector<double> x, y;
        for (int i = 0; i < 200; ++i) {
            const double r = std::sqrt((i % 17) / 16.0), theta = 0.37 * i;
            x.push_back(r * std::cos(theta));
            y.push_back(r * std::sin(theta));
        }
        for (ZernikeNormalization norm : {ZernikeNormalization::Rms, ZernikeNormalization::Unit}) {
            std::vector<double> out(x.size() * modes.size());
            zernike::evaluateBasis(modes, norm, x.data(), y.data(), x.size(), out.data());
            for (size_t t = 0; t < modes.size(); ++t)
                for (size_t p = 0; p < x.size(); ++p)
                    WFS_VERIFY_CLOSE(out[p + t * x.size()],
                                     zernike::evaluate(modes[t], norm, std::hypot(x[p], y[p]), std::atan2(y[p], x[p])), 1e-10, 1e-10); // n = 15 sums cancel terms of ~1e4
        }
    }

    void rmsBasisIsOrthonormal_data()
    {
        QTest::addColumn<int>("order");
        QTest::newRow("order 6") << 6;
        QTest::newRow("order 15") << 15;
    }

    void rmsBasisIsOrthonormal()
    {
        QFETCH(int, order);
        // Midpoint rule on a fine grid over the unit disc; the Gram matrix divided by the disc's
        // sample count must be the identity up to the discretisation error of the boundary.
        const int samples = order <= 6 ? 1024 : 400;
        const auto modes = zernike::modes(order, ZernikeOrdering::Noll);
        Eigen::MatrixXd gram = Eigen::MatrixXd::Zero(Eigen::Index(modes.size()), Eigen::Index(modes.size()));
        long count = 0;
        Eigen::VectorXd values(Eigen::Index(modes.size()));
        for (int i = 0; i < samples; ++i) {
            for (int j = 0; j < samples; ++j) {
                const double x = -1.0 + (i + 0.5) * 2.0 / samples, y = -1.0 + (j + 0.5) * 2.0 / samples;
                const double r = std::hypot(x, y);
                if (r > 1.0)
                    continue;
                for (size_t t = 0; t < modes.size(); ++t)
                    values[Eigen::Index(t)] = zernike::evaluate(modes[t], ZernikeNormalization::Rms, r, std::atan2(y, x));
                gram.noalias() += values * values.transpose();
                ++count;
            }
        }
        gram /= double(count);
        const double error = (gram - Eigen::MatrixXd::Identity(gram.rows(), gram.cols())).cwiseAbs().maxCoeff();
        // Boundary pixels make the error grow with order (steep high-order terms at the edge).
        QVERIFY2(error < (order <= 6 ? 2e-3 : 3e-2), qPrintable(QStringLiteral("max |G - I| = %1").arg(error)));
    }
};

QTEST_APPLESS_MAIN(TestZernike)
#include "tst_zernike.moc"
