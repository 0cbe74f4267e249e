#pragma once
// A ProblemSpec compiled for evaluation: the pupil pixels and their coordinates, the Zernike basis on
// those pixels only, the diversity screens, the data in grid layout with per-pixel weights, and the
// layout of the free-parameter vector. Immutable after construction; shared by every backend.
#include "optics/ProblemSpec.h"

#include <Eigen/Core>

#include <optional>

#include <string>
#include <vector>

namespace wfs {

enum class ParameterKind {
    Zernike,
    CentreX,
    CentreY,
    Amplitude,
    Sigma,
    Flux,
    Background,
    ShiftX,
    ShiftY,
    ZonalPhase,     // index: pupil pixel
    ZonalAmplitude, // index: pupil pixel (log-amplitude)
    DefocusScale,
    DefocusOffset, // index: plane
    EmitterDepth,  // the vectorial model's emitter depth below the coverslip, metres
};

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
    std::vector<double> zonalPhase, zonalAmplitude;       // per pupil pixel (empty without zonal terms)
    double defocusScale = 1.0;
    std::vector<double> defocusOffset; // per plane, in the diversity's unit
    double emitterDepth = 0.0;         // metres (the vectorial model)
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
    int rowBegin() const { return m_rowBegin; }                             // grid rows [rowBegin, rowEnd) hold every pupil pixel
    int rowEnd() const { return m_rowEnd; }

    const std::vector<ZernikeMode>& modes() const { return m_modes; }
    int termIndex(int position) const;                                                     // index in the spec's ordering of basis position
    const Eigen::MatrixXd& basis() const { return m_basis; }                               // pupil pixels x terms
    const std::vector<std::vector<double>>& diversityPhase() const { return m_diversity; } // radians, at the start values

    // ---- The pupil function (what every backend shares; CPU and GPU call these) ----
    PupilPhaseModel phaseModel() const { return m_spec.phaseModel; }
    PupilAmplitudeModel amplitudeModel() const { return m_spec.amplitudeModel; }
    bool hasZonalPhase() const { return m_spec.phaseModel != PupilPhaseModel::Zernike; }
    bool hasZonalAmplitude() const { return m_spec.amplitudeModel == PupilAmplitudeModel::Zonal; }
    // The zonal phase as the model uses it (radians per pupil pixel): the free values with the projection
    // applied (piston for zonal only, the whole Zernike span for both). Empty without zonal phase.
    Eigen::VectorXd zonalPhase(const ModelParameters& p) const;
    // Zernike plus zonal phase (radians per pupil pixel), without diversity.
    Eigen::VectorXd pupilPhase(const ModelParameters& p) const;
    // Field amplitude per pupil pixel: illumination (uniform or Gaussian) or zonal, times transmission.
    std::vector<double> pupilAmplitude(const ModelParameters& p) const;
    // Chain rule from dL/dphase and dL/damplitude (per pupil pixel) to every pupil parameter except the
    // Zernike terms (each backend does B^T dphase with its own kernels): zonal values and illumination.
    void chainPupilGradient(const ModelParameters& p, const double* dPhase, const double* dAmplitude, const std::vector<double>& amplitude,
                            ModelParameters& grad) const;
    // The smoothness prior of the zonal terms (ProblemSpec::regularization); adds its gradient to *grad.
    double regularization(const ModelParameters& p, ModelParameters* grad) const;
    // Pairs of pupil pixels that are neighbours along a row or a column (indices into the pupil pixels).
    const std::vector<std::pair<int, int>>& neighbourPairs() const { return m_neighbours; }

    // ---- Diversity with the defocus nuisance parameters ----
    bool hasDefocusParameters() const { return m_hasDefocusParameters; }
    // Plane k's diversity amount (metres, or waves of W020; DiversitySpec::amount) and its phase per unit.
    double diversityAmount(int plane) const { return m_diversityAmount[size_t(plane)]; }
    const std::vector<double>& diversityUnitPhase(int plane) const { return m_diversityUnit[size_t(plane)]; }
    // Plane k's diversity phase (radians per pupil pixel) at p's defocus scale and offset.
    void planeDiversity(const ModelParameters& p, int plane, std::vector<double>& out) const;
    // The derivatives of the cost with respect to defocus scale and plane k's offset, from
    // sum_i dL/dphase_i x unit phase_i of that plane (`unitDerivative`).
    void chainDefocusGradient(int plane, double unitDerivative, ModelParameters& grad) const;
    // Plane k's defocus amount at p less the amount its diversityPhase() holds: planeDiversity() is that phase
    // plus this times diversityUnitPhase() (the GPU model's form).
    double defocusAmountChange(const ModelParameters& p, int plane) const;
    int referencePlane() const { return m_referencePlane; } // the plane nearest focus

    // ---- Spectrum ----
    // One channel per wavelength used (SpectrumSpec); empty for one wavelength.
    struct SpectralChannel {
        int grid = 0;           // FFT size N'
        double wavelength = 0;  // metres: ProblemSpec::wavelength N' / N
        double phaseScale = 1;  // lambda / lambda' = N / N': the pupil phase at this wavelength
        double weight = 0;      // share of the flux (the weights add to 1)
        std::vector<int> index; // each pupil pixel's place in the N' x N' grid
    };
    const std::vector<SpectralChannel>& spectrum() const { return m_spectrum; }

    // ---- The vectorial model (optics/Vectorial.h); null for the scalar model ----
    const VectorialPupil* vectorial() const { return m_vectorial ? &*m_vectorial : nullptr; }

    // ---- Detector ----
    // H(f) on the N x N grid in FFT order (zero frequency at (0, 0)); empty when the detector adds nothing.
    const std::vector<double>& transferFunction() const { return m_transfer; }
    // Directions of the parameter vector that change nothing (the zonal terms' projected-off span).
    int gaugeDimensions() const;
    // Whether anything beyond the Zernike / illumination model is in play.
    bool usesPupilFunctionTerms() const;

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
    void compilePupilFunction();
    void compileDefocusParameters();
    void compileDetector();
    void compileSpectrum();

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
    std::vector<std::pair<int, int>> m_neighbours;
    Eigen::MatrixXd m_zonalProjector; // orthonormal columns removed from the zonal phase
    std::vector<std::vector<double>> m_diversityUnit, m_diversityFixed;
    std::vector<double> m_diversityAmount;
    int m_referencePlane = 0;
    bool m_hasDefocusParameters = false;
    std::vector<double> m_transfer;
    std::vector<SpectralChannel> m_spectrum;
    std::optional<VectorialPupil> m_vectorial;
};

} // namespace wfs
