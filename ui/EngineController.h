#pragma once
// The GUI's handle on the reconstruction engine. The engine runs on its worker thread; a timer on the
// GUI thread pulls the latest snapshot at display rate and emits it only when it is new, so fast
// iterations never flood the event loop.
#include "engine/ReconstructionEngine.h"

#include <QElapsedTimer>
#include <QObject>
#include <QTimer>

namespace wfs::ui {

class EngineController : public QObject {
    Q_OBJECT

public:
    explicit EngineController(QObject* parent = nullptr);

    bool isRunning() const { return m_active; }
    void start(ReconstructionRequest request);
    void cancel();
    void setRefreshInterval(int milliseconds); // default 40 ms (25 Hz)

signals:
    void started();
    void progress(const wfs::ProgressSnapshot& snapshot);
    // The convergence history rows recorded since the last poll (every iteration, from 0).
    void historyAppended(const std::vector<wfs::HistoryRow>& rows);
    void finished(std::shared_ptr<const wfs::FitResult> result); // shared, never copied on the GUI thread
    void failed(const QString& message);

private:
    void poll();

    ReconstructionEngine m_engine;
    QTimer m_timer;
    unsigned long m_shownVersion = 0;
    size_t m_historyShown = 0;
    bool m_active = false;
};

} // namespace wfs::ui

Q_DECLARE_METATYPE(wfs::ProgressSnapshot)
Q_DECLARE_METATYPE(wfs::FitResult)
Q_DECLARE_METATYPE(std::vector<wfs::HistoryRow>)
