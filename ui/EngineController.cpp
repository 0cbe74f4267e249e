#include "EngineController.h"

namespace wfs::ui {

EngineController::EngineController(QObject* parent)
    : QObject(parent)
{
    qRegisterMetaType<wfs::ProgressSnapshot>();
    qRegisterMetaType<wfs::FitResult>();
    qRegisterMetaType<std::vector<wfs::HistoryRow>>();
    m_timer.setInterval(40);
    connect(&m_timer, &QTimer::timeout, this, &EngineController::poll);
}

void EngineController::setRefreshInterval(int milliseconds)
{
    m_timer.setInterval(milliseconds);
}

void EngineController::start(ReconstructionRequest request)
{
    m_engine.start(std::move(request)); // cancels and joins a running job first
    m_shownVersion = 0;
    m_historyShown = 0;
    m_active = true;
    m_timer.start();
    emit started();
}

void EngineController::cancel()
{
    m_engine.cancel();
}

void EngineController::poll()
{
    // Whether the job still runs is read first: the rows pulled next then include its last ones.
    const bool running = m_engine.isRunning();
    if (std::vector<HistoryRow> rows = m_engine.history(m_historyShown); !rows.empty()) {
        m_historyShown += rows.size();
        emit historyAppended(rows);
    }
    unsigned long version = 0;
    // Once the job has ended its result supersedes the last snapshot: drawing both in one event
    // would only double the longest stall of the event loop.
    if (auto snapshot = running ? m_engine.latest(&version) : std::nullopt; snapshot && version != m_shownVersion) {
        m_shownVersion = version;
        emit progress(*snapshot);
    }
    if (running)
        return;
    m_timer.stop();
    m_engine.wait();
    m_active = false;
    if (const std::string error = m_engine.error(); !error.empty())
        emit failed(QString::fromStdString(error));
    else if (auto result = m_engine.sharedResult())
        emit finished(std::move(result));
}

} // namespace wfs::ui
