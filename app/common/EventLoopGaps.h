#pragma once
// How long an event loop is kept from its timers: a precise timer asks for a tick every few milliseconds on
// the thread that owns the meter, and a gap between ticks much longer than that is time the loop spent
// elsewhere (painting, a slot that ran long, a lock). `wavefront-cli bench live` measures its own thread
// while watching; `wavefront-studio --measure-stalls` the desktop's GUI thread while the Live tab updates.
#include <QElapsedTimer>
#include <QFile>
#include <QTimer>

#include <algorithm>
#include <cmath>
#include <vector>

namespace wfs::app {

// The q-quantile (0..1) of `v`, linearly interpolated; NaN when empty.
inline double quantile(std::vector<double> v, double q)
{
    if (v.empty())
        return std::nan("");
    std::sort(v.begin(), v.end());
    const double at = q * double(v.size() - 1);
    const size_t lo = size_t(std::floor(at)), hi = std::min(v.size() - 1, lo + 1);
    return v[lo] + (v[hi] - v[lo]) * (at - double(lo));
}

// The machine's 1-minute load average (/proc/loadavg), NaN where there is none: the machine may be shared.
inline double loadAverage()
{
    QFile f(QStringLiteral("/proc/loadavg"));
    if (!f.open(QIODevice::ReadOnly))
        return std::nan("");
    return f.readLine().split(' ').value(0).toDouble();
}

class EventLoopGaps {
public:
    explicit EventLoopGaps(int intervalMs = 5)
    {
        m_timer.setTimerType(Qt::PreciseTimer);
        m_timer.setInterval(intervalMs);
        QObject::connect(&m_timer, &QTimer::timeout, &m_timer, [this] {
            m_gapsMs.push_back(double(m_clock.nsecsElapsed()) * 1e-6);
            m_clock.restart();
        });
    }
    EventLoopGaps(const EventLoopGaps&) = delete;
    EventLoopGaps& operator=(const EventLoopGaps&) = delete;

    void start()
    {
        m_gapsMs.clear();
        m_clock.start();
        m_timer.start();
    }
    void stop() { m_timer.stop(); }

    int intervalMs() const { return m_timer.interval(); }
    int ticks() const { return int(m_gapsMs.size()); }
    double maxMs() const { return m_gapsMs.empty() ? std::nan("") : *std::max_element(m_gapsMs.begin(), m_gapsMs.end()); }
    double quantileMs(double q) const { return quantile(m_gapsMs, q); }
    int countOver(double ms) const
    {
        return int(std::count_if(m_gapsMs.begin(), m_gapsMs.end(), [ms](double g) { return g > ms; }));
    }

private:
    QTimer m_timer;
    QElapsedTimer m_clock;
    std::vector<double> m_gapsMs; // between consecutive ticks (the first: from start())
};

} // namespace wfs::app
