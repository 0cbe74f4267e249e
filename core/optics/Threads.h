#pragma once
// The program's worker threads, and the check that a run's threads can start at all.
//
// FFTW's own thread pool ignores a failed pthread_create and then waits for the missing worker for good
// (a hang under `ulimit -u`), and libgomp ends the process with its own "Thread creation failed". So
// FFTW and the model's loops run on the pool here (FFTW through fftw_threads_set_callback, optics/Fftw.cpp),
// which does the work on the calling thread when no helper can be had, and a run checks before its first
// parallel loop that its threads can start (requireThreads), so that a refusal is the program's message,
// not a hang or someone else's exit.
#include <functional>

namespace wfs::threads {

// Runs job(0) ... job(count - 1), on the calling thread and up to count - 1 of the pool's workers, and
// returns when all are done. Never fails for want of threads: what no worker takes, the caller runs.
void parallelFor(int count, const std::function<void(int)>& job);

// Throws std::runtime_error naming the count, how many threads started and the system's reason, unless
// the pool has count - 1 workers: a run that asked for `count` threads gets them or a message, rather than
// quietly running on fewer.
void requireThreads(int count);

// As requireThreads, and count - 1 further threads (the team an OpenMP region of `count` threads starts
// beside its caller) can run at the same time, for code that still uses OpenMP (fasth/Householder.cpp).
void requireOpenMpTeam(int count);

// For tests: the pool's workers and the checked team stop starting after `allowed` threads each (-1: never).
void setThreadLimitForTesting(int allowed);

} // namespace wfs::threads
