#pragma once
// What a request would take in memory, estimated before anything is allocated, against what this process may
// take. A front end that can be asked for a huge output (wavefront-cli psf, --psf-stack-out, a simulated
// session's grid, the Python module's psf_stack) asks core for the estimate and core refuses, naming the size and
// the limit, instead of allocating until the system kills the process or the machine swaps for minutes.
//
// The limit is the least of the machine's physical memory and the process's address-space and data-segment limits
// (ulimit -v, ulimit -d). Estimates count what is held at once (the output's doubles, the file's bytes made from
// them, the largest working buffers), so a request under the limit may still fail for lack of free memory, but
// one over it cannot succeed.
//
//   requireMemory(134e9, "the PSF stack (1001 planes of 4096 x 4096)")
//     -> throws MemoryLimitError("the PSF stack (1001 planes of 4096 x 4096) needs about 134 GB, more than the
//        23.4 GB of memory this machine has")
#include <stdexcept>
#include <string>

namespace wfs {

class MemoryLimitError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

struct MemoryLimit {
    double bytes = 0.0;
    std::string source; // "of memory this machine has", "the address-space limit (ulimit -v) allows"
};

// The limit now (physical memory, RLIMIT_AS, RLIMIT_DATA: the least).
MemoryLimit memoryLimit();

// "134 GB", "3.7 GB", "512 MB", "12 KB", "900 bytes" (decimal units, as `ls -h --si` and disk makers count).
std::string byteSizeText(double bytes);

// Throws MemoryLimitError when `bytes` exceeds `limit` (by default memoryLimit()): "WHAT needs about SIZE, more
// than the LIMIT ..." . `what` names the output and its dimensions.
void requireMemory(double bytes, const std::string& what);
void requireMemory(double bytes, const std::string& what, const MemoryLimit& limit);

} // namespace wfs
