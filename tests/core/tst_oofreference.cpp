// The OOF preset against the independent reference values of spec/oof-reference-values.json:
// cost to 1e-10 relative, every gradient component to 1e-6 relative (or 1e-18 absolute).
#include "TestSupport.h"

#include "engine/BackendFactory.h"
#include "engine/Presets.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

using namespace wfs;

class TestOofReference : public QObject {
    Q_OBJECT

private:
    static std::vector<double> toVector(const QJsonValue& v)
    {
        std::vector<double> out;
        for (const QJsonValue& x : v.toArray())
            out.push_back(x.toDouble());
        return out;
    }

    static QJsonArray cases()
    {
        QFile file(test::dataPath(QStringLiteral("oof-reference-values.json")));
        if (!file.open(QIODevice::ReadOnly))
            return {};
        return QJsonDocument::fromJson(file.readAll()).object().value(QStringLiteral("cases")).toArray();
    }

    // The preset's problem with noise-free data equal to the model at `truth`.
    static std::shared_ptr<const Problem> referenceProblem(int grid, int order, const std::vector<double>& truth)
    {
        PresetOptions options;
        options.grid = grid;
        options.order = order;
        options.noise = false;
        ProblemSpec spec = makePreset("oof", options).spec;
        const auto images = simulateImages(spec, truth, grid, grid, {}, nullptr);
        for (size_t k = 0; k < images.size(); ++k)
            spec.planes[k].data = images[k];
        return std::make_shared<const Problem>(spec);
    }

private slots:
    void referenceValues_data()
    {
        QTest::addColumn<int>("caseIndex");
        QTest::addColumn<int>("precision");
        const QJsonArray all = cases();
        QVERIFY2(!all.isEmpty(), "oof-reference-values.json is missing or empty");
        for (int i = 0; i < all.size(); ++i) {
            const QJsonObject c = all[i].toObject();
            const QByteArray name = QByteArray::number(c.value(QStringLiteral("grid")).toInt()) + "/"
                                    + QByteArray::number(c.value(QStringLiteral("order")).toInt());
            QTest::newRow(name + " double") << i << int(Precision::Double);
            QTest::newRow(name + " float") << i << int(Precision::Float);
        }
    }

    void referenceValues()
    {
        QFETCH(int, caseIndex);
        QFETCH(int, precision);
        const QJsonObject c = cases()[caseIndex].toObject();
        const int grid = c.value(QStringLiteral("grid")).toInt();
        const int order = c.value(QStringLiteral("order")).toInt();
        const std::vector<double> truth = toVector(c.value(QStringLiteral("truth")));
        const std::vector<double> start = toVector(c.value(QStringLiteral("start")));
        const std::vector<double> expected = toVector(c.value(QStringLiteral("gradient")));
        const double loss = c.value(QStringLiteral("loss")).toDouble();

        auto problem = referenceProblem(grid, order, truth);
        QCOMPARE(problem->parameterCount(), int(start.size()));
        EvaluatorOptions options;
        options.precision = Precision(precision);
        options.measurePlans = false;
        auto evaluator = makeEvaluator(BackendKind::Cpu, problem, options, GradientKind::Adjoint);
        std::vector<double> gradient(start.size());
        const double cost = evaluator->evaluate(start.data(), gradient.data());

        if (Precision(precision) == Precision::Double) {
            WFS_VERIFY_CLOSE(cost, loss, 1e-10, 0.0);
            for (size_t i = 0; i < gradient.size(); ++i)
                WFS_VERIFY_CLOSE(gradient[i], expected[i], 1e-6, 1e-18);
            // The model itself: peak and total power of plane 0 at the truth.
            const auto images = evaluator->modelImages(truth.data());
            double peak = 0, total = 0;
            for (double v : images[0]) {
                peak = std::max(peak, v);
                total += v;
            }
            WFS_VERIFY_CLOSE(peak, c.value(QStringLiteral("peak_intensity_plane0_at_truth")).toDouble(), 1e-10, 0.0);
            WFS_VERIFY_CLOSE(total, c.value(QStringLiteral("total_power_plane0_at_truth")).toDouble(), 1e-10, 0.0);
        } else {
            // float32: the cost is a small difference of ~1e-3 intensities; 1e-3 relative is what
            // single precision can promise here, the gradient 1e-2 of its largest component.
            WFS_VERIFY_CLOSE(cost, loss, 1e-3, 0.0);
            double largest = 0;
            for (double g : expected)
                largest = std::max(largest, std::abs(g));
            for (size_t i = 0; i < gradient.size(); ++i)
                WFS_VERIFY_CLOSE(gradient[i], expected[i], 0.0, 1e-2 * largest);
        }
    }
};

QTEST_GUILESS_MAIN(TestOofReference)
#include "tst_oofreference.moc"
