#pragma once
// The joint fit of a whole field (issue 43 item 3): every bead's images fitted at once with the shared terms' values
// given by the field model (a double Zernike over the field, fit/FieldModel.h) instead of by each bead alone, while each
// bead keeps its own other parameters (flux, background, position, focus). The cost is the sum of the beads' own
// objectives; its gradient in the field model's coefficients is the exact adjoint of each bead's model carried through
// the field model's linear map: dC/da_tk = sum_b 2 pi F_k(u_b, v_b) dC_b/dz_bt (z in radians, a in waves).
// Solved by L-BFGS on parameters scaled as the single-bead fits scale theirs.
#include "fit/FieldModel.h"
#include "fit/Solver.h"
#include "optics/ModelEvaluator.h"

#include <memory>
#include <vector>

namespace wfs {

struct JointFieldBead {
    std::shared_ptr<ModelEvaluator> evaluator; // the bead's own problem
    std::vector<double> start;                 // its parameters (its own fit)
    std::vector<int> sharedParameter;          // per shared term: the index of that term's parameter in `start`
    double x = 0.0, y = 0.0;                   // field position (pixels)
};

struct JointFieldResult {
    std::vector<std::vector<double>> coefficients;   // per shared term: the field Zernike coefficients (waves)
    std::vector<std::vector<double>> beadParameters; // per bead: all its parameters at the joint minimum
    double startCost = 0.0, finalCost = 0.0;         // summed over the beads; the start is the field model's prediction
    SolverSummary solver;
    // Per shared term: its coefficients' covariance (waves^2, row-major) from the joint Fisher information, each bead's
    // own parameters marginalised (the Schur complement of its information, fit/Uncertainty.h), summed through the field
    // model's map and inverted. Costs each bead's P + 1 model evaluations. Empty when it cannot be computed.
    std::vector<std::vector<double>> covariance;
};

// The joint cost and its gradient on the joint parameters (the shared terms' field coefficients, then each bead's own
// parameters, in bead order), where they start (the field model, the beads' own fits), and the solver's scales.
struct JointFieldObjective {
    ObjectiveFunction evaluate;
    std::vector<double> start, scales;
};
// Throws as fitJointField. The beads and the model must outlive the objective.
JointFieldObjective jointFieldObjective(const std::vector<JointFieldBead>& beads, const FieldModel& model, const std::vector<int>& terms);

// `model`'s options give the field circle; `terms` lists, per shared term, its index among model.terms (the field
// order and the start coefficients come from there). Throws std::invalid_argument for beads whose shared parameters do
// not match `terms`.
JointFieldResult fitJointField(const std::vector<JointFieldBead>& beads, const FieldModel& model, const std::vector<int>& terms,
                               const SolverOptions& options);

} // namespace wfs
