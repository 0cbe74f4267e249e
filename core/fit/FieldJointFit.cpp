#include "fit/FieldJointFit.h"

#include "fit/Uncertainty.h"
#include "optics/Problem.h"

#include <Eigen/Dense>

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace wfs {

namespace {

// The joint parameters: the shared terms' field coefficients first, then each bead's own parameters (all but its
// shared terms), in order.
class JointLayout {
public:
    JointLayout(const std::vector<JointFieldBead>& beads, const FieldModel& model, const std::vector<int>& terms)
        : m_beads(beads)
    {
        for (int t : terms) {
            if (t < 0 || size_t(t) >= model.terms.size())
                throw std::invalid_argument("the joint fit's term " + std::to_string(t) + " is not in the field model");
            m_termOffset.push_back(m_count);
            m_termSize.push_back(int(model.terms[size_t(t)].coefficients.size()));
            m_count += m_termSize.back();
        }
        for (const JointFieldBead& bead : beads) {
            if (bead.sharedParameter.size() != terms.size())
                throw std::invalid_argument("a bead of the joint fit does not list one parameter per shared term");
            m_beadOffset.push_back(m_count);
            m_count += int(bead.start.size() - bead.sharedParameter.size());
            m_basis.push_back(basisAt(model, terms, bead));
        }
    }
    int count() const { return m_count; }
    size_t terms() const { return m_termSize.size(); }

    // The bead's parameters from the joint ones; with `gradient`, the bead's gradient is added into the joint one.
    void beadParameters(size_t b, const double* joint, std::vector<double>& out) const
    {
        const JointFieldBead& bead = m_beads[b];
        out.resize(bead.start.size());
        for (size_t i = 0, local = 0; i < out.size(); ++i)
            if (const int s = sharedSlot(b, int(i)); s >= 0)
                out[i] = 2.0 * M_PI * dot(joint + m_termOffset[size_t(s)], m_basis[b][size_t(s)]);
            else
                out[i] = joint[size_t(m_beadOffset[b]) + local++];
    }
    void addGradient(size_t b, const std::vector<double>& beadGradient, double* joint) const
    {
        for (size_t i = 0, local = 0; i < beadGradient.size(); ++i)
            if (const int s = sharedSlot(b, int(i)); s >= 0) {
                const std::vector<double>& f = m_basis[b][size_t(s)];
                for (size_t k = 0; k < f.size(); ++k)
                    joint[size_t(m_termOffset[size_t(s)]) + k] += 2.0 * M_PI * f[k] * beadGradient[i];
            } else {
                joint[size_t(m_beadOffset[b]) + local++] = beadGradient[i];
            }
    }
    // Where the joint parameters start (the field model, the beads' own fits) and how the solver scales them (a bead's
    // own scales; a field coefficient as its term's radians over 2 pi).
    void start(const FieldModel& model, const std::vector<int>& terms, std::vector<double>& x, std::vector<double>& scales) const
    {
        x.assign(size_t(m_count), 0.0);
        scales.assign(size_t(m_count), 1.0);
        for (size_t s = 0; s < terms.size(); ++s) {
            const std::vector<double>& c = model.terms[size_t(terms[s])].coefficients;
            const double scale = m_beads.front().evaluator->problem().parameterScales()[size_t(m_beads.front().sharedParameter[s])];
            for (size_t k = 0; k < c.size(); ++k) {
                x[size_t(m_termOffset[s]) + k] = c[k];
                scales[size_t(m_termOffset[s]) + k] = scale / (2.0 * M_PI);
            }
        }
        for (size_t b = 0; b < m_beads.size(); ++b) {
            const std::vector<double> beadScales = m_beads[b].evaluator->problem().parameterScales();
            for (size_t i = 0, local = 0; i < beadScales.size(); ++i)
                if (sharedSlot(b, int(i)) < 0) {
                    x[size_t(m_beadOffset[b]) + local] = m_beads[b].start[i];
                    scales[size_t(m_beadOffset[b]) + local++] = beadScales[i];
                }
        }
    }
    std::vector<double> coefficients(const double* joint, size_t s) const
    {
        return {joint + m_termOffset[s], joint + m_termOffset[s] + m_termSize[s]};
    }
    // d(bead b's shared parameter s, radians) / d(field coefficient j, waves), over every shared term's coefficients.
    Eigen::MatrixXd fieldMap(size_t b) const
    {
        Eigen::MatrixXd map = Eigen::MatrixXd::Zero(Eigen::Index(terms()), m_beadOffset.front());
        for (size_t s = 0; s < terms(); ++s)
            for (size_t k = 0; k < m_basis[b][s].size(); ++k)
                map(Eigen::Index(s), m_termOffset[s] + Eigen::Index(k)) = 2.0 * M_PI * m_basis[b][s][k];
        return map;
    }
    // The block of the field coefficients' covariance that belongs to shared term s, row-major.
    std::vector<double> termBlock(const Eigen::MatrixXd& covariance, size_t s) const
    {
        std::vector<double> block;
        for (int r = 0; r < m_termSize[s]; ++r)
            for (int c = 0; c < m_termSize[s]; ++c)
                block.push_back(covariance(m_termOffset[s] + r, m_termOffset[s] + c));
        return block;
    }

private:
    int sharedSlot(size_t b, int parameter) const
    {
        const std::vector<int>& shared = m_beads[b].sharedParameter;
        for (size_t s = 0; s < shared.size(); ++s)
            if (shared[s] == parameter)
                return int(s);
        return -1;
    }
    static double dot(const double* a, const std::vector<double>& b)
    {
        double sum = 0.0;
        for (size_t k = 0; k < b.size(); ++k)
            sum += a[k] * b[k];
        return sum;
    }
    // Per shared term, the field basis at the bead: the model's own evaluation of each unit coefficient, so that the
    // joint fit and the field model agree on the basis by construction.
    static std::vector<std::vector<double>> basisAt(const FieldModel& model, const std::vector<int>& terms, const JointFieldBead& bead)
    {
        std::vector<std::vector<double>> basis;
        for (int t : terms) {
            FieldModel unit = model;
            FieldTermFit& fit = unit.terms[size_t(t)];
            std::vector<double> f(fit.coefficients.size());
            for (size_t k = 0; k < f.size(); ++k) {
                std::fill(fit.coefficients.begin(), fit.coefficients.end(), 0.0);
                fit.coefficients[k] = 1.0;
                f[k] = evaluateFieldTerm(unit, t, bead.x, bead.y).value;
            }
            basis.push_back(std::move(f));
        }
        return basis;
    }

    const std::vector<JointFieldBead>& m_beads;
    std::vector<int> m_termOffset, m_termSize, m_beadOffset;
    std::vector<std::vector<std::vector<double>>> m_basis; // bead, shared term, field coefficient
    int m_count = 0;
};

// The information bead b's images give on the shared terms' values there (radians), its own parameters marginalised:
// the Schur complement I_SS - I_SR I_RR^+ I_RS of its information (fit/Uncertainty.h) at `parameters`. Empty where its
// information cannot be computed or a shared term is not among its judged parameters.
Eigen::MatrixXd sharedInformation(const JointFieldBead& bead, const std::vector<double>& parameters)
{
    ModelEvaluator& evaluator = *bead.evaluator;
    const double cost = evaluator.evaluate(parameters.data(), nullptr);
    const ParameterInformation information = parameterInformation(evaluator, parameters, cost);
    const Eigen::Index n = Eigen::Index(information.parameters.size());
    if (information.matrix.size() != size_t(n * n))
        return {};
    const Eigen::Map<const Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>> full(information.matrix.data(), n, n);
    std::vector<Eigen::Index> shared, own;
    for (int parameter : bead.sharedParameter) {
        const auto at = std::find(information.parameters.begin(), information.parameters.end(), parameter);
        if (at == information.parameters.end())
            return {};
        shared.push_back(Eigen::Index(at - information.parameters.begin()));
    }
    for (Eigen::Index i = 0; i < n; ++i)
        if (std::find(shared.begin(), shared.end(), i) == shared.end())
            own.push_back(i);
    const Eigen::MatrixXd sharedBlock = full(shared, shared), cross = full(shared, own), ownBlock = full(own, own);
    return sharedBlock - cross * ownBlock.completeOrthogonalDecomposition().pseudoInverse() * cross.transpose();
}

// The field coefficients' covariance from the joint information: sum_b M_b^T I_b M_b (M_b the field model's map at
// bead b), inverted; a pseudo-inverse where the beads' positions leave combinations undetermined (as the two-step
// model's). Per shared term, its block; empty when any bead's information is missing or the sum is not positive.
std::vector<std::vector<double>> jointCovariance(const std::vector<JointFieldBead>& beads, const JointLayout& layout,
                                                 const std::vector<std::vector<double>>& beadParameters)
{
    const Eigen::Index coefficients = layout.fieldMap(0).cols();
    Eigen::MatrixXd total = Eigen::MatrixXd::Zero(coefficients, coefficients);
    for (size_t b = 0; b < beads.size(); ++b) {
        const Eigen::MatrixXd information = sharedInformation(beads[b], beadParameters[b]);
        if (information.rows() != Eigen::Index(layout.terms()) || !information.allFinite())
            return {};
        const Eigen::MatrixXd map = layout.fieldMap(b);
        total += map.transpose() * information * map;
    }
    const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eigen(total);
    if (eigen.info() != Eigen::Success || !(eigen.eigenvalues().maxCoeff() > 0.0))
        return {};
    Eigen::VectorXd inverse = eigen.eigenvalues();
    const double floor = inverse.maxCoeff() * 1e-12;
    for (Eigen::Index i = 0; i < inverse.size(); ++i)
        inverse[i] = inverse[i] > floor ? 1.0 / inverse[i] : 0.0;
    const Eigen::MatrixXd covariance = eigen.eigenvectors() * inverse.asDiagonal() * eigen.eigenvectors().transpose();
    std::vector<std::vector<double>> blocks;
    for (size_t s = 0; s < layout.terms(); ++s)
        blocks.push_back(layout.termBlock(covariance, s));
    return blocks;
}

} // namespace

JointFieldObjective jointFieldObjective(const std::vector<JointFieldBead>& beads, const FieldModel& model, const std::vector<int>& terms)
{
    if (beads.empty())
        throw std::invalid_argument("the joint fit needs at least one bead");
    auto layout = std::make_shared<const JointLayout>(beads, model, terms);
    JointFieldObjective objective;
    layout->start(model, terms, objective.start, objective.scales);
    objective.evaluate = [layout, &beads](const double* joint, double* gradient) {
        std::vector<double> p, g;
        double cost = 0.0;
        if (gradient)
            std::fill(gradient, gradient + layout->count(), 0.0);
        for (size_t b = 0; b < beads.size(); ++b) {
            layout->beadParameters(b, joint, p);
            g.assign(p.size(), 0.0);
            cost += beads[b].evaluator->evaluate(p.data(), gradient ? g.data() : nullptr);
            if (gradient)
                layout->addGradient(b, g, gradient);
        }
        return cost;
    };
    return objective;
}

JointFieldResult fitJointField(const std::vector<JointFieldBead>& beads, const FieldModel& model, const std::vector<int>& terms,
                               const SolverOptions& options)
{
    const JointFieldObjective objective = jointFieldObjective(beads, model, terms);
    const JointLayout layout(beads, model, terms);
    JointFieldResult result;
    result.startCost = objective.evaluate(objective.start.data(), nullptr);
    result.solver = minimise(objective.evaluate, objective.start, objective.scales, options);
    result.finalCost = result.solver.finalCost;
    const std::vector<double>& best = result.solver.parameters;
    for (size_t s = 0; s < layout.terms(); ++s)
        result.coefficients.push_back(layout.coefficients(best.data(), s));
    std::vector<double> p;
    for (size_t b = 0; b < beads.size(); ++b) {
        layout.beadParameters(b, best.data(), p);
        result.beadParameters.push_back(p);
    }
    if (result.solver.termination != Termination::Failed && result.solver.termination != Termination::Cancelled)
        result.covariance = jointCovariance(beads, layout, result.beadParameters);
    return result;
}

} // namespace wfs
