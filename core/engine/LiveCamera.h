#pragma once
// A simulated camera for teaching and demos: writes noisy through-focus stacks (the demo preset's optics: three
// planes at -1, 0, +1 wave of defocus, 633 nm, Q = 2) of a wavefront set by a few Zernike terms into a folder
// at a chosen rate, each as one FITS cube written to a temporary name and renamed in, exactly as a camera
// program would. It feeds live mode through the folder (engine/LiveWatch.h), not through a side channel, so a
// class sees the same path a real camera takes. The wavefront, photons, noise and rate may change while it
// runs (sliders); each stack uses the settings current when it is made.
//
//   LiveCameraOptions o;  o.folder = "incoming";  o.settings.terms = {{5, 0.1}};
//   LiveCamera camera(o);  camera.start();  ...  camera.setSettings(s);  ...  camera.stop();
#include "io/ResultJson.h"

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace wfs {

struct LiveCameraSettings {
    std::vector<TruthTerm> terms = {{4, 0.05}, {5, -0.08}, {7, 0.04}}; // Noll indices, RMS-normalised, waves
    double photons = 1e6;                                              // per plane
    double readNoise = 2.0;                                            // counts RMS (Gaussian), on top of the photon (Poisson) noise
    double background = 10.0;                                          // counts per pixel
    double rate = 5.0;                                                 // stacks per second
};
// Empty when usable, else why not ("rate: ...", "photons: ...", "term 5: ..."): rate in (0, 1000], photons in
// [10, 1e12], read noise and background in [0, 1e6], terms Noll 2..66 within +-5 waves.
std::string liveCameraSettingsError(const LiveCameraSettings& settings);

struct LiveCameraOptions {
    std::string folder;
    int grid = 128;               // image size (pixels); the planes are grid x grid
    int count = 0;                // stacks to write; 0 = until stop()
    std::string prefix = "live_"; // files PREFIX000001.fits, numbered on after those already in the folder
    std::uint64_t seed = 1;       // of the noise; stack i uses seed + i
    LiveCameraSettings settings;
    bool background = false; // its thread yields to the caller's (engine/LiveWatch.h lowerThisThreadsPriority)
};

class LiveCamera {
public:
    // Throws std::invalid_argument for a bad grid or settings.
    explicit LiveCamera(LiveCameraOptions options);
    ~LiveCamera(); // stops and joins
    LiveCamera(const LiveCamera&) = delete;
    LiveCamera& operator=(const LiveCamera&) = delete;

    void start();
    void stop();
    bool isRunning() const { return m_running.load(); }
    // Takes effect at the next stack. Throws std::invalid_argument (liveCameraSettingsError).
    void setSettings(const LiveCameraSettings& settings);
    LiveCameraSettings settings() const;
    int written() const { return m_written.load(); }
    std::string error() const; // why it stopped early (the folder gone, a full disk); empty otherwise

    // One stack's FITS bytes for `settings` and noise seed `seed` (what the camera writes).
    static std::string stackBytes(int grid, const LiveCameraSettings& settings, std::uint64_t seed);

private:
    void run();
    LiveCameraOptions m_options;
    mutable std::mutex m_mutex;
    std::thread m_thread;
    std::atomic<bool> m_stop{false}, m_running{false};
    std::atomic<int> m_written{0};
    std::string m_error;
};

} // namespace wfs
