#pragma once
// A ProblemSpec compiled for evaluation: the pupil pixels and their coordinates, the Zernike basis on
// those pixels only, the diversity screens, the data in grid layout with per-pixel weights, and the
// layout of the free-parameter vector. Immutable after construction; shared by every backend.
#include "optics/ProblemSpec.h"

#include <Eigen/Core>

#include <string>
#include <vector>

namespace wfs {

enum class ParameterKind { Zernike, CentreX, CentreY, Amplitude, Sigma, Flux, Background, ShiftX, ShiftY };

struct ParameterInfo {
    ParameterKind kind;
    int index;         // Zernike: position in the basis; per-plane kinds: the plane
    std::string label; // "Z4 Defocus", "flux[1]", ...
};

// All model quantities, free or fixed, in physical form.
struct ModelParameters {
    std::vector<double> zernike; // radians, one per basis term (position 0 = piston)
    double centreX = 0, centreY = 0, amplitude = 1, sigma = 1;
    std::vector<double> flux, background, shiftX, shiftY; // per plane
};

// The width x height window at the centre of an N x N grid-layout image (where data sit on the grid).
Image gridCentre(const std::vector<double>& grid, int n, int width, int height);

class Problem {
public:
    // Validates and compiles; throws std::invalid_argument with a message naming the problem.
    explicit Problem(ProblemSpec spec);

    const ProblemSpec& spec() const { return m_spec; }
    int gridSize() const { return m_spec.grid.size; }
    int planeCount() const { return int(m_spec.planes.size()); }

    // Pupil pixels (transmission > 0), in grid order.
    int pupilPixelCount() const { return int(m_pupilIndex.size()); }
    const std::vector<int>& pupilIndex() const { return m_pupilIndex; } // row * N + col
    const std::vector<double>& pupilX() const { return m_pupilX; }
    const std::vector<double>& pupilY() const { return m_pupilY; }
    const std::vector<double>& transmission() const { return m_transmission; }
    const std::vector<int>& checkerboard() const { return m_checkerboard; } // (-1)^(row + col)
    int rowBegin() const { return m_rowBegin; } // grid rows [rowBegin, rowEnd) hold every pupil pixel
    int rowEnd() const { return m_rowEnd; }

    const std::vector<ZernikeMode>& modes() const { return m_modes; }
    int termIndex(int position) const; // index in the spec's ordering of basis position
    const Eigen::MatrixXd& basis() const { return m_basis; } // pupil pixels x terms
    const std::vector<std::vector<double>>& diversityPhase() const { return m_diversity; } // radians

    // Data and weights in grid layout (N x N); weight 0 = not part of the objective.
    const std::vector<double>& data(int plane) const { return m_data[size_t(plane)]; }
    const std::vector<double>& weights(int plane) const { return m_weights[size_t(plane)]; }
    bool hasData() const { return m_hasData; }
    double intensityScale() const { return m_intensityScale; }

    // The free-parameter vector.
    int parameterCount() const { return int(m_parameters.size()); }
    const std::vector<ParameterInfo>& parameters() const { return m_parameters; }
    std::vector<double> initialParameters() const;
    // Typical magnitude of each free parameter (1 for phases in radians, the start value for flux,
    // ...). The solver works on parameters divided by these, so that BFGS starts well conditioned.
    std::vector<double> parameterScales() const;
    ModelParameters unpack(const double* parameters) const;
    // Picks the free components out of a full gradient in ModelParameters form.
    void pack(const ModelParameters& full, double* out) const;
    ModelParameters zeroLike() const;

    // The same problem with new data (simulation, tests); the images must match the grid.
    Problem withData(const std::vector<Image>& images) const;

private:
    void compileGeometry();
    void compileData();
    void compileParameters();

    ProblemSpec m_spec;
    std::vector<int> m_pupilIndex;
    std::vector<double> m_pupilX, m_pupilY, m_transmission;
    std::vector<int> m_checkerboard;
    int m_rowBegin = 0, m_rowEnd = 0;
    std::vector<ZernikeMode> m_modes;
    Eigen::MatrixXd m_basis;
    std::vector<std::vector<double>> m_diversity;
    std::vector<std::vector<double>> m_data, m_weights;
    bool m_hasData = false;
    double m_intensityScale = 1.0;
    std::vector<ParameterInfo> m_parameters;
};

} // namespace wfs
