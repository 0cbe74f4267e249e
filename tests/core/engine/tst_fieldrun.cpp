// A microscope's whole field (issue 43): on the simulated bead slide (engine/FieldSimulation.h) the beads found are the
// planted ones, the ones set aside are exactly the planted doublets, saturated and edge beads, each with its reason;
// every accepted bead is fitted; the field model recovers the field's known aberrations within its stated
// uncertainties; one bead gives that bead's own fit; bad input (no bead, planes of different sizes, every bead set
// aside) says so and keeps what was found.
#include "TestSupport.h"

#include "engine/FieldRun.h"
#include "engine/FieldSimulation.h"
#include "io/ImageReaders.h"
#include "io/Session.h"

#include <Eigen/Dense>
#include <QJsonDocument>

#include <QJsonArray>
#include <QTest>

#include <cmath>

using namespace wfs;

namespace {

FieldSimulationOptions smallField(int beads)
{
    FieldSimulationOptions o;
    o.width = o.height = 320;
    o.beads = beads;
    o.doublets = 2;
    o.saturated = 1;
    o.edge = 3;
    o.seed = 7;
    return o;
}

// The planted bead nearest a detection, and its distance.
std::pair<const PlantedBead*, double> nearestPlanted(const FieldSimulation& field, const DetectedBead& bead)
{
    const PlantedBead* best = nullptr;
    double distance = INFINITY;
    for (const PlantedBead& p : field.beads) {
        const double d = std::hypot(p.x - bead.x, p.y - bead.y);
        if (d < distance) {
            distance = d;
            best = &p;
        }
    }
    return {best, distance};
}

double truthTerm(const Truth& truth, int index)
{
    for (const TruthTerm& t : truth.terms)
        if (t.index == index)
            return t.valueWaves;
    return 0.0;
}

// The fitted field shared by the tests that need it (one run of the pipeline, about 40 bead fits).
struct FittedField {
    FieldSimulation field;
    FieldRun run;
};
const FittedField& fittedField()
{
    static const FittedField fitted = [] {
        FittedField f;
        f.field = simulateField(smallField(24));
        FieldRunOptions options;
        options.detection.crop = 32;
        f.run = runField(simulatedFieldSession(f.field, 4), options);
        return f;
    }();
    return fitted;
}

} // namespace

class TestFieldRun : public QObject {
    Q_OBJECT

private slots:
    void findsThePlantedBeadsAndSetsAsideExactlyThePlantedRejects()
    {
        const FieldSimulation field = simulateField(smallField(24));
        BeadDetectionOptions options;
        options.saturationLevel = kFieldSimulationSaturation;
        const BeadDetection found = detectBeads(field.planes, options);
        int accepted = 0;
        std::map<const PlantedBead*, int> hits;
        for (const DetectedBead& bead : found.beads) {
            const auto [planted, distance] = nearestPlanted(field, bead);
            // Every detection is a planted bead (a doublet's pair 2 pixels apart counts as its first bead).
            QVERIFY2(distance < 3.0, qPrintable(QStringLiteral("a detection at (%1, %2) is no planted bead").arg(bead.x).arg(bead.y)));
            ++hits[planted];
            if (planted->kind == "single") {
                QVERIFY2(bead.status == BeadStatus::Accepted, bead.reason.c_str());
                QVERIFY2(distance < 0.5, qPrintable(QStringLiteral("a single bead found %1 pixels from where it is").arg(distance)));
                ++accepted;
            } else {
                QVERIFY2(bead.status != BeadStatus::Accepted,
                         qPrintable(QStringLiteral("the planted %1 bead was accepted").arg(QString::fromStdString(planted->kind))));
                QVERIFY(!bead.reason.empty());
                if (planted->kind == "saturated")
                    QCOMPARE(bead.status, BeadStatus::Saturated);
                if (planted->kind == "edge")
                    QCOMPARE(bead.status, BeadStatus::Edge);
                if (planted->kind == "doublet")
                    QVERIFY(bead.status == BeadStatus::Aggregate || bead.status == BeadStatus::Neighbour);
            }
        }
        QCOMPARE(accepted, 24);
        QCOMPARE(int(hits.size()), int(field.beads.size())); // nothing planted was missed
    }

    void fitsEveryAcceptedBeadAndRecoversTheField()
    {
        const FittedField& f = fittedField();
        const FieldRun& run = f.run;
        int ok = 0;
        for (const FieldBead& bead : run.beads) {
            QVERIFY2(bead.status != "not-run" && bead.status != "fit-failed", bead.reason.c_str());
            if (bead.status == "ok") {
                ++ok;
                QVERIFY(bead.xMicrons.has_value());
                QVERIFY(std::abs(*bead.xMicrons - bead.detection.x * f.field.pixelPitch * 1e6) < 1e-9);
            }
        }
        QVERIFY2(ok >= 22, qPrintable(QStringLiteral("%1 of 24 beads fitted ok").arg(ok)));
        QVERIFY(run.model.has_value());
        // The terms from defocus up at order 4: Noll 4..15.
        QCOMPARE(run.modelTerms.front(), 4);
        QCOMPARE(int(run.modelTerms.size()), 12);
        // At points across the field, every term within 4 of the model's sigmas (plus 0.005 wave for what a per-bead
        // fit of order 4 on 32 x 32 pixels leaves): field curvature, astigmatism and coma as simulated.
        for (const auto& [u, v] : std::vector<std::pair<double, double>>{{0.0, 0.0}, {0.4, 0.3}, {-0.45, 0.2}, {0.1, -0.5}}) {
            const double x = f.field.centreX + u * f.field.radius, y = f.field.centreY + v * f.field.radius;
            const Truth truth = fieldTruthAt(x, y, 320, 320);
            for (size_t t = 0; t < run.modelTerms.size(); ++t) {
                const FieldValue m = evaluateFieldTerm(*run.model, int(t), x, y);
                const double expected = truthTerm(truth, run.modelTerms[t]);
                QVERIFY2(std::abs(m.value - expected) < 4.0 * m.sigma + 0.005,
                         qPrintable(QStringLiteral("Noll %1 at (%2, %3): model %4 +/- %5, truth %6")
                                        .arg(run.modelTerms[t])
                                        .arg(u)
                                        .arg(v)
                                        .arg(m.value)
                                        .arg(m.sigma)
                                        .arg(expected)));
            }
        }
    }

    void theJointFitLowersTheCost()
    {
        // Every bead in the model fitted at once through the field model: the summed cost falls below the two-step
        // model's prediction and stays above the separate fits' (each bead free in every term). The recovery test above
        // checks the adopted coefficients against the truth.
        const FieldRun& run = fittedField().run;
        QVERIFY(run.joint.has_value());
        const FieldJointSummary& joint = *run.joint;
        QVERIFY2(joint.beads >= 20, joint.note.c_str());
        QVERIFY(joint.adopted);
        QVERIFY(joint.finalCost < joint.startCost);
        QVERIFY(joint.finalCost >= joint.separateCost - 1e-6 * std::abs(joint.separateCost));
        QCOMPARE(joint.sharedTerms.front(), 5); // defocus stays each bead's own
        QCOMPARE(int(joint.sharedTerms.size()), int(run.modelTerms.size()) - 1);
    }

    void theJointGradientIsExact()
    {
        // The joint cost's gradient (each bead's adjoint carried through the field model) against central differences
        // of the joint cost, in the field coefficients and in a bead's own parameters.
        const FittedField& f = fittedField();
        const Session session = simulatedFieldSession(f.field, 4);
        FieldRun run = f.run;
        run.model = FieldModel(*run.model); // the shared terms start from the model as it is (joint coefficients adopted)
        const JointFieldSetup setup = jointFieldSetup(session, run, FieldRunOptions{});
        QVERIFY(setup.beads.size() >= 20);
        const JointFieldObjective objective = jointFieldObjective(setup.beads, *run.model, setup.terms);
        std::vector<double> gradient(objective.start.size());
        objective.evaluate(objective.start.data(), gradient.data());
        const size_t firstBead = objective.start.size() - setup.beads.size() * (setup.beads.front().start.size() - setup.terms.size());
        for (size_t i : {size_t(0), size_t(1), size_t(4), size_t(9), firstBead, firstBead + 3}) {
            std::vector<double> x = objective.start;
            const double h = 1e-6 * objective.scales[i];
            x[i] += h;
            const double up = objective.evaluate(x.data(), nullptr);
            x[i] -= 2.0 * h;
            const double down = objective.evaluate(x.data(), nullptr);
            const double numeric = (up - down) / (2.0 * h);
            QVERIFY2(std::abs(numeric - gradient[i]) <= 1e-4 * std::abs(numeric) + 1e-6 * objective.start.size(),
                     qPrintable(QStringLiteral("parameter %1: adjoint %2, differences %3").arg(i).arg(gradient[i]).arg(numeric)));
        }
    }

    // The joint fit's covariance (each bead's Fisher information with its own parameters marginalised, summed through
    // the field basis) against the inverse of the joint cost's whole Hessian (central differences of its exact
    // gradient) at the joint minimum, on two shared terms and ten beads: the Poisson likelihood's covariance is the
    // inverse curvature. The Fisher information leaves out the Hessian's residual terms: 5 % on the sigmas (they agree
    // to 1-3 %; without the marginalisation spherical aberration's come out 12 % small).
    void jointCovarianceIsTheInverseCurvature()
    {
        const FittedField& f = fittedField();
        QVERIFY(f.run.joint && f.run.joint->adopted && f.run.joint->jointCovariance);
        const Session session = simulatedFieldSession(f.field, 4);
        const JointFieldSetup setup = jointFieldSetup(session, f.run, FieldRunOptions{});
        // Coma and spherical aberration (Noll 7 and 11; 3 field coefficients each here): spherical is correlated with
        // each bead's own defocus, so the marginalisation matters.
        std::vector<int> positions, terms; // in setup.terms, and the model terms there
        for (size_t s = 0; s < setup.terms.size(); ++s)
            if (const int noll = f.run.modelTerms[size_t(setup.terms[s])]; noll == 7 || noll == 11) {
                positions.push_back(int(s));
                terms.push_back(setup.terms[s]);
            }
        QCOMPARE(int(terms.size()), 2);
        QVERIFY(setup.beads.size() >= 10);
        std::vector<JointFieldBead> beads(setup.beads.begin(), setup.beads.begin() + 10);
        for (JointFieldBead& bead : beads) {
            std::vector<int> shared;
            for (int position : positions)
                shared.push_back(bead.sharedParameter[size_t(position)]);
            bead.sharedParameter = shared;
        }
        SolverOptions options;
        options.optimizer = OptimizerKind::Lbfgs;
        options.maxIterations = 5000;
        const JointFieldResult result = fitJointField(beads, *f.run.model, terms, options);
        QCOMPARE(result.solver.termination, Termination::Converged);
        QCOMPARE(result.covariance.size(), terms.size());

        const JointFieldObjective objective = jointFieldObjective(beads, *f.run.model, terms);
        const std::vector<double>& x0 = result.solver.parameters;
        const Eigen::Index n = Eigen::Index(x0.size());
        Eigen::MatrixXd hessian(n, n);
        std::vector<double> x = x0, up(x0.size()), down(x0.size());
        for (Eigen::Index i = 0; i < n; ++i) {
            const double h = 1e-4 * objective.scales[size_t(i)];
            x[size_t(i)] = x0[size_t(i)] + h;
            objective.evaluate(x.data(), up.data());
            x[size_t(i)] = x0[size_t(i)] - h;
            objective.evaluate(x.data(), down.data());
            x[size_t(i)] = x0[size_t(i)];
            for (Eigen::Index j = 0; j < n; ++j)
                hessian(j, i) = (up[size_t(j)] - down[size_t(j)]) / (2.0 * h);
        }
        const Eigen::MatrixXd inverse = (0.5 * (hessian + hessian.transpose())).inverse();
        int offset = 0;
        for (size_t s = 0; s < terms.size(); ++s) {
            const int k = int(result.coefficients[s].size());
            for (int c = 0; c < k; ++c) {
                const double fromFisher = std::sqrt(result.covariance[s][size_t(c * k + c)]);
                const double fromHessian = std::sqrt(inverse(offset + c, offset + c));
                QVERIFY2(
                    std::abs(fromFisher / fromHessian - 1.0) < 0.05,
                    qPrintable(
                        QStringLiteral("term %1 coefficient %2: %3 against %4").arg(terms[s]).arg(c).arg(fromFisher).arg(fromHessian)));
            }
            offset += k;
        }
    }

    void writesTheTableAndTheModel()
    {
        const FieldRun& run = fittedField().run;
        const QList<QByteArray> lines = fieldBeadsCsv(run).trimmed().split('\n');
        QCOMPARE(int(lines.size()), int(run.beads.size()) + 1);
        // The detection's figures name their units: robust sigmas, and the data's unit (the simulated slide is in photons).
        QVERIFY(lines.front().startsWith("index,x_px,y_px,x_um,y_um,status,significance_sigma,brightness_photons,width_px,"));
        QVERIFY(lines.front().contains("noll_11_waves,noll_11_sigma_waves"));
        QVERIFY(lines.front().endsWith(",reason"));
        const QJsonObject json = fieldRunJson(run);
        QCOMPARE(json["beads"].toArray().size(), qsizetype(run.beads.size()));
        QVERIFY(json["beads"].toArray()[0].toObject().contains("brightness_photons"));
        const QJsonArray terms = json["field_model"].toObject()["terms"].toArray();
        QCOMPARE(terms.size(), qsizetype(run.modelTerms.size()));
        QCOMPARE(terms[0].toObject()["index"].toInt(), 4);
        QVERIFY(json["convention"].toObject()["field_basis"].toString().contains("Noll"));
        QVERIFY(QString::fromStdString(fieldSummary(run)).contains("beads found"));
    }

    void stepsInAnyOrderGiveTheRun()
    {
        // The beads fitted one by one in reverse order, as independent tasks would, then the model: runField's result.
        const FittedField& f = fittedField();
        const Session session = simulatedFieldSession(f.field, 4);
        FieldRunOptions options;
        FieldRun steps = detectField(session, options.detection);
        QCOMPARE(steps.beads.size(), f.run.beads.size());
        for (auto bead = steps.beads.rbegin(); bead != steps.beads.rend(); ++bead)
            if (bead->status == "not-run")
                fitFieldBead(session, options.detection.crop, *bead);
        describeField(session, steps, options);
        QVERIFY(steps.model.has_value());
        for (size_t i = 0; i < steps.beads.size(); ++i) {
            QCOMPARE(steps.beads[i].status, f.run.beads[i].status);
            QCOMPARE(steps.beads[i].coefficients.size(), f.run.beads[i].coefficients.size());
            for (size_t c = 0; c < steps.beads[i].coefficients.size(); ++c)
                QVERIFY(std::abs(steps.beads[i].coefficients[c].waves - f.run.beads[i].coefficients[c].waves) < 1e-9);
        }
        for (size_t t = 0; t < steps.model->terms.size(); ++t)
            for (size_t k = 0; k < steps.model->terms[t].coefficients.size(); ++k)
                QVERIFY(std::abs(steps.model->terms[t].coefficients[k] - f.run.model->terms[t].coefficients[k]) < 1e-9);
    }

    void theModelReadBackAndAsAFitsCube()
    {
        // The field JSON's model gives, at any position, what the run's model gives (the PSF at a field position).
        const FieldRun& run = fittedField().run;
        const QJsonObject json = QJsonDocument::fromJson(QJsonDocument(fieldRunJson(run)).toJson()).object();
        const Truth at = fieldTruthFromJson(json, 250.0, 40.0, "field.json");
        QCOMPARE(at.terms.size(), run.modelTerms.size());
        for (size_t t = 0; t < at.terms.size(); ++t) {
            QCOMPARE(at.terms[t].index, run.modelTerms[t]);
            QVERIFY(std::abs(at.terms[t].valueWaves - evaluateFieldTerm(*run.model, int(t), 250.0, 40.0).value) < 1e-12);
        }
        QVERIFY_THROWS_EXCEPTION(std::runtime_error, fieldTruthFromJson(QJsonObject{{"field_model_error", "none"}}, 0, 0, "x.json"));
        // The maps: one plane per term, the grid's values, the pixel and micrometre axes.
        const QByteArray bytes = fieldMapsFits(run, 16);
        const ImageFileContent content =
            readFitsMemory(reinterpret_cast<const std::uint8_t*>(bytes.constData()), size_t(bytes.size()), "maps");
        QCOMPARE(content.planes.size(), 2 * run.modelTerms.size()); // the values, then the extension of sigmas
        const FieldTermGrid grid = fieldTermGrid(run, 2, 16);
        QCOMPARE(content.planes[2].width, 16);
        for (size_t i = 0; i < grid.values.pixels.size(); ++i)
            QVERIFY(std::abs(content.planes[2].pixels[i] - grid.values.pixels[i]) < 1e-6 * (1.0 + std::abs(grid.values.pixels[i])));
        QCOMPARE(content.numbers.at("TERM3"), double(run.modelTerms[2]));
        QVERIFY(std::abs(content.numbers.at("CDELT1") - 319.0 / 15.0) < 1e-9);
        QVERIFY(content.numbers.count("CDELT1A"));
    }

    void badPixelsMoveWithTheCrop()
    {
        // A bad pixel given in the field's coordinates masks the same pixel in the bead's crop, and one outside the crop
        // is not in it.
        Session session;
        session.dataset.planes.resize(2);
        for (DatasetPlane& plane : session.dataset.planes)
            plane.raw = Image(100, 80, 1.0);
        session.dataset.preprocess.badPixels = {{45, 30}, {5, 5}};
        DetectedBead bead;
        bead.column = 50;
        bead.row = 35;
        const Session crop = fieldBeadSession(session, bead, 16);
        QCOMPARE(crop.dataset.planes.front().raw.width, 16);
        QCOMPARE(int(crop.dataset.preprocess.badPixels.size()), 1);
        QCOMPARE(crop.dataset.preprocess.badPixels.front(), std::make_pair(45 - 42, 30 - 27));
    }

    void oneBeadGivesItsOwnFit()
    {
        FieldSimulationOptions o = smallField(1);
        o.width = o.height = 96;
        o.doublets = o.saturated = o.edge = 0;
        const FieldSimulation field = simulateField(o);
        const Session session = simulatedFieldSession(field, 4);
        FieldRunOptions options;
        const FieldRun run = runField(session, options);
        QCOMPARE(int(run.beads.size()), 1);
        const FieldBead& bead = run.beads.front();
        QCOMPARE(bead.status, std::string("ok"));
        QVERIFY(run.model.has_value());
        // The same bead fitted as a user would: its crop through the one workflow.
        Session single = session;
        for (DatasetPlane& plane : single.dataset.planes)
            plane.raw = cropAround(plane.raw, bead.detection, options.detection.crop);
        const FitResult direct = reconstruct(prepareRun(single).request, {}, nullptr);
        for (size_t t = 0; t < run.modelTerms.size(); ++t) {
            const FieldValue m = evaluateFieldTerm(*run.model, int(t), 10.0, 80.0); // anywhere: order 0
            double expected = NAN;
            for (const CoefficientResult& c : direct.coefficients)
                if (c.index == run.modelTerms[t])
                    expected = c.waves;
            QVERIFY2(std::abs(m.value - expected) < 1e-6, qPrintable(QStringLiteral("Noll %1").arg(run.modelTerms[t])));
        }
    }

    void saysWhatItCouldNotDo()
    {
        // No bead: a flat, noisy field.
        FieldSimulationOptions o = smallField(0);
        o.width = o.height = 128;
        o.doublets = o.saturated = o.edge = 0;
        const FieldRun none = runField(simulatedFieldSession(simulateField(o), 4), {});
        QVERIFY(none.beads.empty());
        QVERIFY(!none.model);
        QVERIFY(none.modelError.find("no bead") != std::string::npos);
        // Every bead set aside: only edge beads. The rows stay, with their reasons.
        o.edge = 3;
        const FieldRun edges = runField(simulatedFieldSession(simulateField(o), 4), {});
        QCOMPARE(int(edges.beads.size()), 3);
        for (const FieldBead& bead : edges.beads) {
            QCOMPARE(bead.status, std::string("edge"));
            QVERIFY(bead.reason.find("crop does not fit") != std::string::npos);
        }
        QVERIFY(!edges.model);
        // Planes of different sizes.
        Session mixed = simulatedFieldSession(simulateField(o), 4);
        mixed.dataset.planes[1].raw = Image(64, 64, 10.0);
        QVERIFY_THROWS_EXCEPTION(DatasetError, runField(mixed, {}));
        // A crop that is not even.
        FieldRunOptions odd;
        odd.detection.crop = 31;
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, runField(simulatedFieldSession(simulateField(o), 4), odd));
    }
};

QTEST_GUILESS_MAIN(TestFieldRun)
#include "tst_fieldrun.moc"
