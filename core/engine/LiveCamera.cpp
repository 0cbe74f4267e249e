#include "engine/LiveCamera.h"
#include "engine/LiveWatch.h"

#include "engine/Presets.h"
#include "io/OutputTransaction.h"
#include "optics/Zernike.h"

#include <QDir>
#include <QRegularExpression>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <stdexcept>

namespace wfs {

std::string liveCameraSettingsError(const LiveCameraSettings& s)
{
    auto inRange = [](double v, double lo, double hi) { return std::isfinite(v) && v >= lo && v <= hi; };
    if (!(std::isfinite(s.rate) && s.rate > 0.0 && s.rate <= 1000.0))
        return "rate: " + std::to_string(s.rate) + " stacks per second is outside (0, 1000]";
    if (!inRange(s.photons, 10.0, 1e12))
        return "photons: " + std::to_string(s.photons) + " per plane is outside [10, 1e12]";
    if (!inRange(s.readNoise, 0.0, 1e6))
        return "read noise: " + std::to_string(s.readNoise) + " counts is outside [0, 1e6]";
    if (!inRange(s.background, 0.0, 1e6))
        return "background: " + std::to_string(s.background) + " counts is outside [0, 1e6]";
    for (const TruthTerm& t : s.terms) {
        if (t.index < 2 || t.index > zernike::termCount(10))
            return "term " + std::to_string(t.index) + ": Noll indices 2.." + std::to_string(zernike::termCount(10))
                   + " (order 10 at most)";
        if (!inRange(t.valueWaves, -5.0, 5.0))
            return "term " + std::to_string(t.index) + ": " + std::to_string(t.valueWaves) + " waves is outside +-5";
    }
    return {};
}

LiveCamera::LiveCamera(LiveCameraOptions options)
    : m_options(std::move(options))
{
    if (m_options.grid < 16 || m_options.grid > 1024 || m_options.grid % 2 != 0)
        throw std::invalid_argument("grid: " + std::to_string(m_options.grid) + " must be even, 16..1024");
    if (m_options.count < 0)
        throw std::invalid_argument("count: must be 0 (until stopped) or more");
    const std::string error = liveCameraSettingsError(m_options.settings);
    if (!error.empty())
        throw std::invalid_argument(error);
}

LiveCamera::~LiveCamera()
{
    stop();
}

void LiveCamera::start()
{
    if (m_thread.joinable())
        return;
    m_stop.store(false);
    m_running.store(true);
    m_thread = std::thread([this] {
        if (m_options.background)
            lowerThisThreadsPriority();
        run();
    });
}

void LiveCamera::stop()
{
    m_stop.store(true);
    if (m_thread.joinable())
        m_thread.join();
    m_running.store(false);
}

void LiveCamera::setSettings(const LiveCameraSettings& settings)
{
    const std::string error = liveCameraSettingsError(settings);
    if (!error.empty())
        throw std::invalid_argument(error);
    std::lock_guard<std::mutex> lock(m_mutex);
    m_options.settings = settings;
}

LiveCameraSettings LiveCamera::settings() const
{
    std::lock_guard<std::mutex> lock(m_mutex);
    return m_options.settings;
}

std::string LiveCamera::error() const
{
    std::lock_guard<std::mutex> lock(m_mutex);
    return m_error;
}

namespace {

// Whether two settings make the same stacks (the rate aside).
bool sameStacks(const LiveCameraSettings& a, const LiveCameraSettings& b)
{
    if (a.photons != b.photons || a.readNoise != b.readNoise || a.background != b.background || a.terms.size() != b.terms.size())
        return false;
    for (size_t i = 0; i < a.terms.size(); ++i)
        if (a.terms[i].index != b.terms[i].index || a.terms[i].valueWaves != b.terms[i].valueWaves)
            return false;
    return true;
}

// The optics, header and truth parameters of a camera's settings, made once per change of settings (a problem's
// basis costs more than a stack's simulation).
class StackMaker {
public:
    std::string make(int grid, const LiveCameraSettings& s, std::uint64_t seed)
    {
        if (!m_preset || !sameStacks(s, m_key) || grid != m_grid) {
            // The demo preset gives the optics and the header; its data are replaced by this camera's.
            PresetOptions po;
            po.grid = grid;
            po.noise = false;
            po.truth = Truth{ZernikeOrdering::Noll, ZernikeNormalization::Rms, s.terms, {}};
            m_preset = std::make_unique<PresetCase>(makePreset("demo", po));
            m_truthSpec = m_preset->spec;
            for (const TruthTerm& t : s.terms)
                m_truthSpec.basis.maxOrder = std::max(m_truthSpec.basis.maxOrder, zernike::modeFromIndex(t.index, ZernikeOrdering::Noll).n);
            for (PlaneSpec& p : m_truthSpec.planes) {
                p.flux = s.photons;
                p.background = s.background;
            }
            m_truthSpec.readNoise = s.readNoise;
            m_parameters = parametersForTruth(Problem(m_truthSpec), m_preset->truth);
            m_preset->spec.readNoise = s.readNoise;
            m_preset->noiseDescription = "live camera: Poisson, " + QString::number(s.photons, 'g', 3).toStdString()
                                         + " photons/plane, read noise " + QString::number(s.readNoise, 'g', 3).toStdString();
            m_key = s;
            m_grid = grid;
        }
        std::mt19937_64 rng(seed);
        const std::vector<Image> images =
            simulateImages(m_truthSpec, m_parameters, grid, grid, {NoiseModel::PhotonAndRead, s.readNoise}, &rng);
        for (size_t k = 0; k < images.size(); ++k)
            m_preset->spec.planes[k].data = images[k];
        return presetFitsBytes(*m_preset, "demo", seed).toStdString();
    }

private:
    LiveCameraSettings m_key;
    int m_grid = 0;
    std::unique_ptr<PresetCase> m_preset;
    ProblemSpec m_truthSpec;
    std::vector<double> m_parameters;
};

} // namespace

std::string LiveCamera::stackBytes(int grid, const LiveCameraSettings& s, std::uint64_t seed)
{
    return StackMaker().make(grid, s, seed);
}

void LiveCamera::run()
{
    const QDir dir(QString::fromStdString(m_options.folder));
    // Numbered on after the files of an earlier run, whose names live mode has already handled.
    int next = 1;
    const QRegularExpression numbered(
        QStringLiteral("^%1(\\d+)\\.fits$").arg(QRegularExpression::escape(QString::fromStdString(m_options.prefix))));
    for (const QString& name : dir.entryList(QDir::Files)) {
        const QRegularExpressionMatch m = numbered.match(name);
        if (m.hasMatch())
            next = std::max(next, m.captured(1).toInt() + 1);
    }
    using Clock = std::chrono::steady_clock;
    Clock::time_point due = Clock::now();
    StackMaker maker;
    for (int i = 0; !m_stop.load() && (m_options.count == 0 || i < m_options.count); ++i, ++next) {
        const LiveCameraSettings s = settings();
        try {
            const std::string bytes = maker.make(m_options.grid, s, m_options.seed + std::uint64_t(next));
            const QString name =
                QStringLiteral("%1%2.fits").arg(QString::fromStdString(m_options.prefix)).arg(next, 6, 10, QLatin1Char('0'));
            // A temporary name beside it, then a rename: live mode takes the file as complete at the rename.
            writeFileAtomically(dir.filePath(name).toStdString(), QByteArray::fromStdString(bytes), false);
        } catch (const std::exception& e) {
            std::lock_guard<std::mutex> lock(m_mutex);
            m_error = e.what();
            break;
        }
        m_written.fetch_add(1);
        due += std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(1.0 / s.rate));
        if (due < Clock::now())
            due = Clock::now(); // behind (a slow machine): the next stack at once, no burst to catch up
        while (!m_stop.load() && Clock::now() < due)
            std::this_thread::sleep_for(std::min<Clock::duration>(due - Clock::now(), std::chrono::milliseconds(20)));
    }
    m_running.store(false);
}

} // namespace wfs
