#include "engine/FieldSimulation.h"

#include "base/Cancellation.h"
#include "engine/Presets.h"
#include "io/ImageReaders.h"
#include "io/Provenance.h"
#include "io/Session.h"
#include "optics/Problem.h"

#include <QJsonArray>

#include <cmath>
#include <random>
#include <stdexcept>

namespace wfs {

namespace {

// The grid each bead's planes are drawn on: its wings reach past any crop, so that a bright bead's halo falls off as
// it does in a microscope instead of ending at a box's edge.
constexpr int kRenderGrid = 128;

double planeDefocusWaves(int plane, int planes)
{
    return planes == 1 ? 0.0 : -1.0 + 2.0 * plane / (planes - 1);
}

// One bead's planes, unit flux, no background: the scalar model on the render grid at the simulation's Q.
ProblemSpec beadRenderSpec(int planes)
{
    ProblemSpec s;
    s.name = "field bead";
    s.grid = PupilGrid::centred(kRenderGrid, kFieldSimulationQ);
    s.basis.maxOrder = kFieldSimulationOrder;
    s.basis.ordering = ZernikeOrdering::Noll;
    s.basis.normalization = ZernikeNormalization::Rms;
    s.wavelength = kFieldSimulationWavelength;
    for (int k = 0; k < planes; ++k) {
        PlaneSpec plane;
        plane.diversity.kind = DiversityKind::ZernikeDefocus;
        plane.diversity.defocusWaves = planeDefocusWaves(k, planes);
        plane.diversity.measure = DefocusMeasure::PeakToValley;
        plane.flux = 1.0;
        plane.background = 0.0;
        s.planes.push_back(plane);
    }
    return s;
}

// A bead drawn at a sub-pixel offset from its pixel: a tilt moves the PSF by 4 Q pixels per wave RMS of Noll 2 or 3
// (2 rho cos theta spans 4 waves edge to edge per wave RMS; each wave of tilt across the pupil's diameter moves the
// image by lambda F#, Q pixels), towards -x and -y for a positive coefficient in the model's transform convention.
std::vector<Image> renderBead(const ProblemSpec& spec, const Problem& problem, Truth truth, double dx, double dy)
{
    truth.terms.push_back({2, -dx / (4.0 * kFieldSimulationQ)});
    truth.terms.push_back({3, -dy / (4.0 * kFieldSimulationQ)});
    return simulateImages(spec, parametersForTruth(problem, truth), kRenderGrid, kRenderGrid, NoiseSettings{}, nullptr);
}

void addBead(std::vector<Image>& planes, const std::vector<Image>& bead, double x, double y, double photons)
{
    const int col0 = int(std::lround(x)) - kRenderGrid / 2, row0 = int(std::lround(y)) - kRenderGrid / 2;
    for (size_t k = 0; k < planes.size(); ++k)
        for (int r = 0; r < kRenderGrid; ++r)
            for (int c = 0; c < kRenderGrid; ++c) {
                const int rr = row0 + r, cc = col0 + c;
                if (rr >= 0 && cc >= 0 && rr < planes[k].height && cc < planes[k].width)
                    planes[k].at(rr, cc) += photons * bead[k].at(r, c);
            }
}

class Placer {
public:
    Placer(const FieldSimulationOptions& o, std::mt19937_64& rng)
        : m_o(o)
        , m_rng(rng)
    {
    }
    // A position at least `crop` pixels from every bead placed, its crop inside the image (or, for an edge bead, its
    // centre 4 to crop/2 - 4 pixels from one edge).
    std::pair<double, double> place(bool atEdge)
    {
        const int half = m_o.crop / 2;
        for (int attempt = 0; attempt < 20000; ++attempt) {
            std::uniform_real_distribution<double> ux(half + 1.0, m_o.width - half - 2.0), uy(half + 1.0, m_o.height - half - 2.0);
            double x = ux(m_rng), y = uy(m_rng);
            if (atEdge) {
                const double inset = std::uniform_real_distribution<double>(4.0, half - 4.0)(m_rng);
                switch (int(m_rng() % 4)) {
                case 0:
                    x = inset;
                    break;
                case 1:
                    x = m_o.width - 1 - inset;
                    break;
                case 2:
                    y = inset;
                    break;
                default:
                    y = m_o.height - 1 - inset;
                    break;
                }
            }
            if (isFree(x, y)) {
                m_placed.push_back({x, y});
                return {x, y};
            }
        }
        throw std::invalid_argument("a field of " + std::to_string(m_o.width) + " x " + std::to_string(m_o.height)
                                    + " pixels has no room for " + std::to_string(m_placed.size() + 1) + " beads "
                                    + std::to_string(m_o.crop) + " pixels apart; use a larger field or fewer beads");
    }

private:
    bool isFree(double x, double y) const
    {
        for (const auto& [px, py] : m_placed)
            if (std::hypot(px - x, py - y) < m_o.crop)
                return false;
        return true;
    }
    const FieldSimulationOptions& m_o;
    std::mt19937_64& m_rng;
    std::vector<std::pair<double, double>> m_placed;
};

void checkOptions(const FieldSimulationOptions& o)
{
    if (o.crop < 16 || o.crop % 2 != 0)
        throw std::invalid_argument("the field's crop must be an even number of pixels, at least 16");
    if (o.width < 2 * o.crop || o.height < 2 * o.crop)
        throw std::invalid_argument("a simulated field must be at least twice the crop on each side");
    if (o.beads < 0 || o.doublets < 0 || o.saturated < 0 || o.edge < 0 || o.planes < 1 || o.planes > 64)
        throw std::invalid_argument("bead counts must not be negative and planes must be 1..64");
    if (!(o.photons > 0.0) || !std::isfinite(o.photons))
        throw std::invalid_argument("photons per bead and plane must be positive");
}

void addNoise(std::vector<Image>& planes, const FieldSimulationOptions& o, std::mt19937_64& rng)
{
    constexpr double background = 10.0, readNoise = 2.0;
    std::normal_distribution<double> read(0.0, readNoise);
    for (Image& plane : planes) {
        throwIfCancelled(o.cancel);
        for (double& v : plane.pixels) {
            v += background;
            if (o.noise) {
                std::poisson_distribution<long long> photons(std::max(v, 0.0));
                v = double(photons(rng)) + read(rng);
            }
            v = std::min(v, kFieldSimulationSaturation);
        }
    }
}

std::vector<FitsKeyword> fieldKeywords(const FieldSimulationOptions& o, double pitch)
{
    std::vector<FitsKeyword> k = {
        {"ORIGIN", std::string("Wavefront Studio"), "software"},
        {"CREATOR", softwareText(), "software and version"},
        {"DATE", creationDateUtc(), "UTC date and time the file was written"},
        {"PRESET", std::string("field"), "problem preset"},
        {"BUNIT", std::string("photons"), "pixel unit"},
        {"WAVELENG", kFieldSimulationWavelength, "[m] wavelength"},
        {"NA", kFieldSimulationNa, "numerical aperture"},
        {"PIXPITCH", pitch, "[m] pixel pitch in the sample plane"},
        {"NPLANES", (long long)o.planes, "image planes (one per defocus)"},
    };
    for (int p = 0; p < o.planes; ++p)
        k.push_back({"DEFOCUS" + std::to_string(p + 1), planeDefocusWaves(p, o.planes), "[waves] W020 of plane (edge-to-centre)"});
    k.push_back({"SATURATE", kFieldSimulationSaturation, "[photons] saturation level"});
    k.push_back({"RDNOISE", 2.0, "[counts] read noise RMS"});
    k.push_back({"NOISE", std::string(o.noise ? "Poisson, background 10, read noise 2 (counts RMS)" : "none (background 10)"),
                 "noise model of the simulation"});
    k.push_back({"SEED", (long long)o.seed, "random seed"});
    k.push_back({"ROWORDER", std::string("bottom-up"), "row 0 is the bottom row, x right, y up"});
    return k;
}

} // namespace

Truth fieldTruthAt(double x, double y, int width, int height)
{
    const double cx = 0.5 * (width - 1), cy = 0.5 * (height - 1), radius = 0.5 * std::hypot(width, height);
    const double u = (x - cx) / radius, v = (y - cy) / radius;
    Truth t;
    t.terms = {
        {4, 0.03 + 0.15 * (u * u + v * v)}, {5, 0.16 * u * v}, {6, 0.08 * (u * u - v * v)}, {7, 0.06 * v}, {8, 0.06 * u}, {11, 0.04}};
    return t;
}

FieldSimulation simulateField(const FieldSimulationOptions& o)
{
    checkOptions(o);
    FieldSimulation field;
    field.centreX = 0.5 * (o.width - 1);
    field.centreY = 0.5 * (o.height - 1);
    field.radius = 0.5 * std::hypot(o.width, o.height);
    field.pixelPitch = kFieldSimulationWavelength / (2.0 * kFieldSimulationNa * kFieldSimulationQ);
    std::mt19937_64 rng(o.seed);
    Placer placer(o, rng);
    const auto plant = [&](const std::string& kind, bool atEdge, double brightness) {
        PlantedBead bead;
        bead.kind = kind;
        std::tie(bead.x, bead.y) = placer.place(atEdge);
        bead.photons = brightness * o.photons * std::uniform_real_distribution<double>(0.8, 1.2)(rng);
        bead.truth = fieldTruthAt(bead.x, bead.y, o.width, o.height);
        if (kind == "doublet") {
            const double angle = std::uniform_real_distribution<double>(0.0, 2.0 * M_PI)(rng);
            bead.partnerX = bead.x + 2.0 * std::cos(angle);
            bead.partnerY = bead.y + 2.0 * std::sin(angle);
        }
        field.beads.push_back(bead);
    };
    for (int i = 0; i < o.doublets; ++i)
        plant("doublet", false, 1.0);
    for (int i = 0; i < o.saturated; ++i)
        plant("saturated", false, 40.0);
    for (int i = 0; i < o.edge; ++i)
        plant("edge", true, 1.0);
    for (int i = 0; i < o.beads; ++i)
        plant("single", false, 1.0);

    field.planes.assign(size_t(o.planes), Image(o.width, o.height, 0.0));
    const ProblemSpec spec = beadRenderSpec(o.planes);
    const Problem problem(spec);
    const auto draw = [&](double x, double y, double photons, const Truth& truth) {
        throwIfCancelled(o.cancel);
        addBead(field.planes, renderBead(spec, problem, truth, x - std::lround(x), y - std::lround(y)), x, y, photons);
    };
    for (const PlantedBead& bead : field.beads) {
        draw(bead.x, bead.y, bead.photons, bead.truth);
        if (bead.kind == "doublet")
            draw(bead.partnerX, bead.partnerY, bead.photons, fieldTruthAt(bead.partnerX, bead.partnerY, o.width, o.height));
    }
    addNoise(field.planes, o, rng);
    for (size_t k = 0; k < field.planes.size(); ++k)
        field.planes[k].source = "simulated field plane " + std::to_string(k);
    field.keywords = fieldKeywords(o, field.pixelPitch);
    return field;
}

QByteArray fieldFitsBytes(const FieldSimulation& field)
{
    return QByteArray::fromStdString(fitsBytes(field.planes, field.keywords, true));
}

QJsonObject fieldTruthJson(const FieldSimulation& field)
{
    QJsonArray beads;
    for (const PlantedBead& bead : field.beads) {
        QJsonObject b{{"kind", QString::fromStdString(bead.kind)}, {"x_px", bead.x}, {"y_px", bead.y}, {"photons_per_plane", bead.photons}};
        if (bead.kind == "doublet") {
            b["partner_x_px"] = bead.partnerX;
            b["partner_y_px"] = bead.partnerY;
        }
        b["truth"] = truthToJson(bead.truth, kFieldSimulationWavelength);
        beads.append(b);
    }
    return {{"format", "wavefront-studio-field-truth"},
            {"convention",
             QJsonObject{{"position", "x = column, y = row (row 0 at the bottom), pixel centres at integers"},
                         {"zernike", "Noll, RMS-normalised, waves"},
                         {"field", "u = (x - centre_x) / radius, v = (y - centre_y) / radius; Z4 = 0.03 + 0.15 (u^2 + v^2), Z5 = 0.16 u v, "
                                   "Z6 = 0.08 (u^2 - v^2), Z7 = 0.06 v, Z8 = 0.06 u, Z11 = 0.04"}}},
            {"centre_x_px", field.centreX},
            {"centre_y_px", field.centreY},
            {"radius_px", field.radius},
            {"pixel_pitch_m", field.pixelPitch},
            {"beads", beads}};
}

Session simulatedFieldSession(const FieldSimulation& field, int order)
{
    const QByteArray bytes = fieldFitsBytes(field);
    const std::string source = "field (simulated)";
    Session session;
    addImages(session.dataset, readFitsMemory(reinterpret_cast<const std::uint8_t*>(bytes.constData()), size_t(bytes.size()), source),
              source);
    session.model.order = order;
    session.model.objective = ObjectiveKind::Poisson;
    return session;
}

} // namespace wfs
