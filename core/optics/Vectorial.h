#pragma once
// The vectorial high-NA imaging model: what a dipole (or a bead: a freely rotating dipole) under a coverslip
// sends through an aplanatic objective to the camera's two field components.
//
// Per pupil sample (normalised radius rho, azimuth phi; the pupil edge is the objective's NA):
//   sin(theta_m) = NA rho / n_m in each medium m (immersion i, coverslip g, sample s; Snell), and
//   cos(theta_m) = sqrt(1 - sin^2), taken as +i sqrt(sin^2 - 1) beyond the critical angle (supercritical light:
//   the evanescent wave that decays away from the coverslip, exp(i k0 n_s d cos(theta_s)) = exp(-k0 d ...)).
//   Fresnel transmission sample -> coverslip -> immersion, t_p and t_s (products of the two interfaces;
//   multiple reflections in the coverslip are left out).
//   Amplitude: (n_i cos(theta_i)) / (n_s cos(theta_s)) from the plane-wave expansion of the dipole's field
//   through the interface (Weyl's 1/k_z in the sample, the far field's k_z in the immersion), times the aplanatic
//   objective's 1/sqrt(cos(theta_i)) (the sine condition: equal energy per solid angle becomes an amplitude
//   per pupil area of 1/sqrt(cos)). With the tube lens at low NA the camera sees the pupil's transverse field.
//   The 2 x 3 matrix from the dipole's (x, y, z) to the camera's (Ex, Ey), with P = t_p factor, S = t_s factor:
//     Ex = (P cos_s cos^2 phi + S sin^2 phi) mu_x + (P cos_s - S) cos phi sin phi mu_y - P sin_s cos phi mu_z
//     Ey = (P cos_s - S) cos phi sin phi mu_x + (P cos_s sin^2 phi + S cos^2 phi) mu_y - P sin_s sin phi mu_z
//   (p = (cos_s cos phi, cos_s sin phi, -sin_s) in the sample, carried to the pupil's radial direction; +z points
//   from the sample towards the objective.)
//   Depth: an emitter d below the coverslip, with the objective's nominal focus placed at d in the design medium,
//   adds the phase k0 d (n_s cos(theta_s) - n_i cos(theta_i)) (Gibson & Lanni's path difference in pupil form;
//   complex above the sample's critical angle), and a coverslip off its design value adds
//   k0 (t_g n_g cos(theta_g) - t_g* n_g* cos(theta_g*)). A plane's axial defocus z (DiversityKind::AxialHighNa,
//   k0 z n_i (1 - cos(theta_i))) moves that nominal focus deeper for z > 0.
// The image: a free dipole's is the incoherent sum over the dipole's x, y, z of |Ex|^2 + |Ey|^2 (six fields per
// plane); a fixed dipole's fields add coherently (two fields). Each field is the scalar model's pupil field (its
// amplitude, Zernike and zonal phase, diversity and tip/tilt) times the factor above, and goes through the scalar
// model's transform.
#include <algorithm>
#include <complex>
#include <optional>
#include <string>
#include <vector>

namespace wfs {

enum class ImagingModel { Scalar, Vectorial };
const char* imagingModelName(ImagingModel model); // "scalar", "vectorial"

struct DipoleSpec {
    bool free = true;   // a rotating dipole or a bead: the x, y and z dipoles add incoherently
    double theta = 0.0; // fixed dipole: radians from the optical axis, [0, pi]
    double phi = 0.0;   // fixed dipole: radians from +x, counter-clockwise, [-2 pi, 2 pi]
    bool operator==(const DipoleSpec&) const = default;
};
// "free", "x", "y", "z" or "THETA,PHI" in degrees; std::nullopt when the text is none of those.
std::optional<DipoleSpec> dipoleFromText(const std::string& text);
std::string dipoleText(const DipoleSpec& dipole); // "free" or "theta 90 deg, phi 0 deg"

struct VectorialSpec {
    double numericalAperture = 0.0; // the pupil's edge (pupil radius 1); below the immersion index
    double immersionIndex = 1.515;
    double sampleIndex = 1.515;            // = the immersion's: no mismatch, no depth aberration
    double coverslipIndex = 0.0;           // 0 = the immersion's (then the coverslip is no interface)
    double coverslipThickness = 170e-6;    // metres
    double designCoverslipIndex = 0.0;     // 0 = coverslipIndex
    double designCoverslipThickness = 0.0; // 0 = coverslipThickness
    double emitterDepth = 0.0;             // metres below the coverslip: the start value when fitted
    bool fitEmitterDepth = false;
    DipoleSpec dipole;
};

// Empty when the values are plausible, else what is wrong with the plausible range (NA above the immersion index,
// a sample index below 1, a negative depth, a dipole angle out of range, ...).
std::string vectorialSpecError(const VectorialSpec& spec);

// The model's per-pupil-pixel factors, compiled once per problem (Problem::vectorial()).
class VectorialPupil {
public:
    using Complex = std::complex<double>;

    // x, y: the pupil pixels' normalised coordinates.
    VectorialPupil(const VectorialSpec& spec, double wavelength, const std::vector<double>& x, const std::vector<double>& y);

    const VectorialSpec& spec() const { return m_spec; }
    bool freeDipole() const { return m_spec.dipole.free; }
    // 6 for a free dipole (field = camera component * 3 + dipole component), 2 for a fixed one (camera component).
    int fieldCount() const { return int(m_matrix.size()); }
    // Field f's factor per pupil pixel at the coverslip (depth 0), without the coverslip's phase.
    const std::vector<Complex>& matrix(int field) const { return m_matrix[size_t(field)]; }
    // d(phase)/d(depth) per pupil pixel: k0 (n_s cos(theta_s) - n_i cos(theta_i)), radians per metre (complex above
    // the critical angle: its imaginary part is the evanescent decay rate).
    const std::vector<Complex>& depthRate() const { return m_depthRate; }
    // The coverslip's phase against its design per pupil pixel, radians (complex where its light is evanescent).
    const std::vector<Complex>& coverslipPhase() const { return m_coverslipPhase; }
    // exp(i s (depth x depthRate + coverslipPhase)) per pupil pixel: the depth factor at phase scale s (lambda / lambda').
    void depthFactor(double depth, double phaseScale, std::vector<Complex>& out) const;
    // sum_f |matrix_f depthFactor|^2 per pupil pixel: what multiplies |amplitude|^2 in the pupil's power.
    std::vector<double> powerFactor(double depth) const;

private:
    VectorialSpec m_spec;
    std::vector<std::vector<Complex>> m_matrix;
    std::vector<Complex> m_depthRate, m_coverslipPhase;
};

// The CPU model's per-evaluation state of the vectorial fields (one per wavelength channel), shared by its plain
// and general image formations: the factors at the current depth, the scatter of a field into the transform's
// input, the gather of the adjoint (h = sum_f conj(factor_f) g_f, a pupil field that the scalar model's gather
// kernel turns into phase and amplitude derivatives) and the depth's derivative.
template <class Real>
class VectorialFields {
public:
    using Complex = std::complex<Real>;

    VectorialFields(const VectorialPupil& pupil, double phaseScale)
        : m_pupil(pupil)
        , m_phaseScale(phaseScale)
        , m_factor(size_t(pupil.fieldCount()))
        , m_adjoint(pupil.depthRate().size())
        , m_identity(pupil.depthRate().size())
        , m_ones(pupil.depthRate().size(), 1)
    {
        for (size_t i = 0; i < m_identity.size(); ++i)
            m_identity[i] = int(i);
        for (auto& f : m_factor)
            f.resize(m_identity.size());
    }

    int fieldCount() const { return int(m_factor.size()); }

    // The factors at `depth` (metres); clears the adjoint sum.
    void prepare(double depth)
    {
        m_pupil.depthFactor(depth, m_phaseScale, m_depth);
        for (size_t f = 0; f < m_factor.size(); ++f) {
            const auto& m = m_pupil.matrix(int(f));
            for (size_t i = 0; i < m_depth.size(); ++i)
                m_factor[f][i] = Complex(m[i] * m_depth[i]);
        }
        clearAdjoint();
    }
    void clearAdjoint() { std::fill(m_adjoint.begin(), m_adjoint.end(), Complex(0, 0)); }

    // buffer[index[i]] = sign_i field[i] factor_f[i] (the checkerboard sign, as the scalar kernel writes).
    void scatter(int f, const Complex* field, const int* index, const int* checkerboard, Complex* buffer) const
    {
        const Complex* v = m_factor[size_t(f)].data();
        for (size_t i = 0; i < m_adjoint.size(); ++i) {
            const Complex u = multiply(field[i], v[i]);
            buffer[index[i]] = checkerboard[i] > 0 ? u : -u;
        }
    }
    // h[i] += conj(factor_f[i]) sign_i buffer[index[i]].
    void gather(int f, const Complex* buffer, const int* index, const int* checkerboard)
    {
        const Complex* v = m_factor[size_t(f)].data();
        for (size_t i = 0; i < m_adjoint.size(); ++i) {
            const Complex g = checkerboard[i] > 0 ? buffer[index[i]] : -buffer[index[i]];
            m_adjoint[i] += multiply(std::conj(v[i]), g);
        }
    }
    // The adjoint pupil field h and the index and signs under which the scalar gather kernel reads it.
    const Complex* adjoint() const { return m_adjoint.data(); }
    const int* identity() const { return m_identity.data(); }
    const int* ones() const { return m_ones.data(); }
    // dL/d(depth) = sum_i Re(i s rate_i E0_i conj(h_i)) for the scalar pupil field E0.
    double depthDerivative(const Complex* field) const
    {
        const auto& rate = m_pupil.depthRate();
        double sum = 0.0;
        for (size_t i = 0; i < m_adjoint.size(); ++i) {
            const std::complex<double> e(field[i]), h(m_adjoint[i]);
            sum += (std::complex<double>(0.0, m_phaseScale) * rate[i] * e * std::conj(h)).real();
        }
        return sum;
    }

private:
    // On real pairs: std::complex's operator* checks for infinities (a library call per product).
    static Complex multiply(Complex a, Complex b)
    {
        return Complex(a.real() * b.real() - a.imag() * b.imag(), a.real() * b.imag() + a.imag() * b.real());
    }

    const VectorialPupil& m_pupil;
    double m_phaseScale;
    std::vector<std::vector<Complex>> m_factor;
    std::vector<std::complex<double>> m_depth;
    std::vector<Complex> m_adjoint;
    std::vector<int> m_identity, m_ones;
};

} // namespace wfs
