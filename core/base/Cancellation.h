#pragma once
// Stopping a long computation that returns one value (a PSF stack, a preset's simulated planes) from another thread:
// the caller owns a flag, the computation checks it between its steps and throws OperationCancelled, which the caller
// catches (the Python module raises KeyboardInterrupt). The fit has its own rule (fit/Solver.h: a cancelled fit keeps
// its last good state and returns it).
#include <atomic>
#include <stdexcept>

namespace wfs {

class OperationCancelled : public std::runtime_error {
public:
    OperationCancelled()
        : std::runtime_error("cancelled")
    {
    }
};

inline void throwIfCancelled(const std::atomic<bool>* cancel)
{
    if (cancel && cancel->load(std::memory_order_relaxed))
        throw OperationCancelled();
}

} // namespace wfs
