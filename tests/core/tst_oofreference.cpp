// The OOF preset against the independent reference values of spec/oof-reference-values.json:
// cost to 1e-10 relative, every gradient component to 1e-6 relative (or 1e-18 absolute).
#include "ModelFixtures.h"

#include "engine/BackendFactory.h"


using namespace wfs;

class TestOofReference : public QObject {
    Q_OBJECT

private slots:
    void referenceValues_data()
    {
        QTest::addColumn<int>("caseIndex");
        QTest::addColumn<int>("precision");
        const QJsonArray all = test::oofReferenceCases();
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
        const QJsonObject c = test::oofReferenceCases()[caseIndex].toObject();
        auto problem = test::oofReferenceProblem(c.value(QStringLiteral("grid")).toInt(), c.value(QStringLiteral("order")).toInt(),
                                                 test::jsonVector(c.value(QStringLiteral("truth"))));
        EvaluatorOptions options;
        options.precision = Precision(precision);
        options.measurePlans = false;
        auto evaluator = makeEvaluator(BackendKind::Cpu, problem, options, GradientKind::Adjoint);
        test::verifyOofReference(*evaluator, c, Precision(precision));
    }
};

QTEST_GUILESS_MAIN(TestOofReference)
#include "tst_oofreference.moc"
