#include "optics/PhaseUnwrap.h"

#include <Eigen/QR>

#include <cmath>
#include <queue>

namespace wfs {

namespace {

constexpr double kTwoPi = 2.0 * M_PI;

// Whole multiples of 2 pi per pupil pixel that make `phase` continuous between neighbours: quality-guided path
// following, the best unwrapped pixel's neighbours next (dark pixels, whose phase the data barely fix, last).
std::vector<double> wrapCorrection(const Problem& problem, const Eigen::VectorXd& phase, const std::vector<double>& amplitude)
{
    const size_t count = size_t(phase.size());
    std::vector<std::vector<int>> neighbours(count);
    for (const auto& [a, b] : problem.neighbourPairs()) {
        neighbours[size_t(a)].push_back(b);
        neighbours[size_t(b)].push_back(a);
    }
    std::vector<double> correction(count, 0.0);
    std::vector<char> done(count, 0);
    // The brightest first; among equals (a uniform pupil) the nearest the centre, so that the pupil is unwrapped in
    // rings outwards and its rim, where the light is weakest (evanescent beyond the sample's index), comes last.
    const auto& x = problem.pupilX();
    const auto& y = problem.pupilY();
    auto key = [&](size_t i) { return std::make_pair(amplitude[i], -(x[i] * x[i] + y[i] * y[i])); };
    using Entry = std::pair<std::pair<double, double>, int>;
    std::priority_queue<Entry> queue;
    for (size_t seed = 0; seed < count; ++seed) { // every connected part of the pupil (spiders may cut it)
        if (done[seed])
            continue;
        size_t first = seed;
        for (size_t i = seed; i < count; ++i)
            if (!done[i] && key(i) > key(first))
                first = i;
        done[first] = 1;
        queue.push({key(first), int(first)});
        while (!queue.empty()) {
            const int i = queue.top().second;
            queue.pop();
            const double unwrapped = phase[i] + correction[size_t(i)];
            for (int j : neighbours[size_t(i)]) {
                if (done[size_t(j)])
                    continue;
                correction[size_t(j)] = -kTwoPi * std::round((phase[j] - unwrapped) / kTwoPi);
                done[size_t(j)] = 1;
                queue.push({key(size_t(j)), j});
            }
        }
    }
    return correction;
}

} // namespace

std::optional<std::vector<double>> unwrappedPupilPhase(const Problem& problem, const std::vector<double>& parameters)
{
    if (!problem.hasZonalPhase() || int(parameters.size()) != problem.parameterCount())
        return std::nullopt;
    ModelParameters p = problem.unpack(parameters.data());
    const Eigen::VectorXd phase = problem.pupilPhase(p);
    const std::vector<double> correction = wrapCorrection(problem, phase, problem.pupilAmplitude(p));
    bool jumps = false;
    for (double c : correction)
        jumps = jumps || c != 0.0;
    if (!jumps)
        return std::nullopt;
    // The correction w goes to the free zonal values; the part of it in the projected-off span (the Zernike terms'
    // with both models, piston with zonal only) goes to the Zernike coefficients, so that the phase moves by w.
    const Eigen::Map<const Eigen::VectorXd> w(correction.data(), Eigen::Index(correction.size()));
    for (size_t i = 0; i < correction.size(); ++i)
        p.zonalPhase[i] += correction[i];
    if (problem.phaseModel() == PupilPhaseModel::Both && problem.basis().cols() > 0) {
        const Eigen::VectorXd inSpan = w - (problem.zonalPhase(p) - problem.zonalPhase(problem.unpack(parameters.data())));
        const Eigen::VectorXd terms = problem.basis().colPivHouseholderQr().solve(inSpan);
        for (Eigen::Index t = 0; t < terms.size(); ++t)
            p.zernike[size_t(t)] += terms[t];
    }
    std::vector<double> out(parameters.size());
    problem.pack(p, out.data());
    // Moved as asked? Not where a fixed term (held at its value) would have had to take part of it.
    const Eigen::VectorXd moved = problem.pupilPhase(problem.unpack(out.data())) - phase;
    Eigen::VectorXd miss = moved - w;
    miss.array() -= miss.mean(); // piston changes nothing
    if (miss.cwiseAbs().maxCoeff() > 1e-6)
        return std::nullopt;
    return out;
}

} // namespace wfs
