"""Fits on core's worker thread: progress, cancellation by an exception or Ctrl-C, no leak over many calls."""
import _thread
import gc
import os
import signal
import sys
import threading

import numpy as np
import pytest

import wavefront_studio as wfs

# A fit that would run for all its 5000 iterations: nothing but a cancel ends it early.
LONG = dict(wavelength="633nm", data_unit="photons", max_iterations=5000, gtol=1e-300, ftol=1e-300, no_uncertainty=True)


def long_options(small_stack):
    _, sampling, defocus = small_stack
    return dict(LONG, sampling=sampling, defocus=defocus)


def test_progress_sees_every_iterate(small_stack, fast):
    data, sampling, defocus = small_stack
    rows = []
    result = wfs.reconstruct(data, **fast, sampling=sampling, defocus=defocus, progress=lambda *row: rows.append(row))
    # Every accepted iterate once, in order, from 0 (the start); the solver may end on an iterate it does not report.
    assert [r[0] for r in rows] == list(range(len(rows)))
    assert result.iterations - 1 <= rows[-1][0] <= result.iterations
    assert min(r[1] for r in rows) == pytest.approx(result.solver["final_cost"], rel=1e-6)
    assert all(len(r) == 3 and r[2] >= 0 for r in rows)


@pytest.mark.parametrize("error", [KeyboardInterrupt, ValueError])
def test_exception_in_progress_cancels(small_stack, error):
    data = small_stack[0]
    seen = []

    def progress(iteration, cost, gradient_norm):
        seen.append(iteration)
        if iteration == 3:
            raise error("stop here")

    with pytest.raises(error, match="stop here"):
        wfs.reconstruct(data, **long_options(small_stack), progress=progress)
    assert seen[-1] == 3  # no call after the cancel
    # The interpreter and the module stay usable.
    assert wfs.reconstruct(data, **dict(long_options(small_stack), max_iterations=2)).iterations == 2


@pytest.mark.parametrize("how", ["sigint", "interrupt_main"])
def test_ctrl_c_cancels_the_waiting_call(small_stack, how):
    """A SIGINT (or _thread.interrupt_main) while the main thread waits in C++ raises KeyboardInterrupt there."""
    if threading.current_thread() is not threading.main_thread():
        pytest.skip("signals reach the main thread only")
    data = small_stack[0]
    iterations = []
    fired = threading.Event()

    def interrupt():
        if how == "sigint":
            os.kill(os.getpid(), signal.SIGINT)
        else:
            _thread.interrupt_main()

    def progress(iteration, cost, gradient_norm):
        iterations.append(iteration)
        if iteration == 5 and not fired.is_set():
            fired.set()
            # From another thread, as a terminal's Ctrl-C arrives: the main thread is then waiting in C++.
            threading.Thread(target=interrupt).start()

    with pytest.raises(KeyboardInterrupt):
        wfs.reconstruct(data, **long_options(small_stack), progress=progress)
    assert fired.is_set() and iterations[-1] < LONG["max_iterations"]
    assert wfs.reconstruct(data, **dict(long_options(small_stack), max_iterations=1)).iterations == 1


def rss_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


@pytest.mark.filterwarnings("ignore:the iteration limit")
def test_no_leak_over_1000_calls(small_stack):
    data, sampling, defocus = small_stack
    stack = np.ascontiguousarray(data[:, 16:48, 16:48])  # 32 x 32: quick calls
    options = dict(wavelength="633nm", sampling=sampling, defocus=defocus, data_unit="photons", max_iterations=2, no_uncertainty=True)

    def progress(iteration, cost, gradient_norm):
        pass

    def call():
        result = wfs.reconstruct(stack, progress=progress, **options)
        views = (result.phase, result.coefficients, result.model, result.chi2_per_plane)
        assert views[0].base is not None  # a view of the result's memory
        return result

    for _ in range(50):  # warm-up: caches, FFTW plans, allocator pools
        call()
    gc.collect()
    refs = (sys.getrefcount(stack), sys.getrefcount(progress), sys.getrefcount(options))
    objects = len(gc.get_objects())
    rss = rss_bytes()
    kept = call()
    phase_refs = sys.getrefcount(kept)
    for _ in range(1000):
        call()
        kept.phase, kept.amplitude, kept.coefficients  # views made and dropped
    gc.collect()
    assert (sys.getrefcount(stack), sys.getrefcount(progress), sys.getrefcount(options)) == refs
    assert sys.getrefcount(kept) == phase_refs
    assert len(gc.get_objects()) - objects < 100
    # A leaked result would hold at least its three 32 x 32 planes of data, model and residual (about 70 kB).
    assert rss_bytes() - rss < 16 * 1024 * 1024
