"""The overhead of wfs.reconstruct against core's share of the same call, and the same fit by wavefront-cli.

    PYTHONPATH=build/python /usr/bin/python3 python/measure_overhead.py build/bin/wavefront-cli
"""
import json, os, subprocess, sys, tempfile, time, statistics, warnings
import numpy as np
import wavefront_studio as wfs
cli = sys.argv[1]
work = tempfile.mkdtemp()
warnings.simplefilter("ignore")
sim = wfs.simulate("demo", grid=128)
sim_data = sim.data
opts = dict(wavelength="633nm", sampling=sim.metadata["sampling"], defocus=sim.defocus, data_unit="photons", read_noise=2)
from astropy.io import fits
fits.PrimaryHDU(sim_data).writeto(os.path.join(work, "d128.fits"), overwrite=True)
rows = []
for dtype in (np.float64, ):
    stack = sim_data.astype(dtype)
    wfs.reconstruct(stack, **opts)  # warm-up (FFTW plans)
    for _ in range(10):
        t = time.perf_counter(); r = wfs.reconstruct(stack, **opts); call = time.perf_counter() - t
        rows.append((call, r.core_seconds, r.seconds, r.iterations))
over = [(c - k) / k for c, k, _, _ in rows]
print(f"128 x 128 x 3 planes, order 4, {rows[0][3]} iterations, 10 calls after a warm-up")
print(f"  call (perf_counter)   median {statistics.median(r[0] for r in rows)*1e3:8.2f} ms")
print(f"  core (same work as the CLI's process) median {statistics.median(r[1] for r in rows)*1e3:8.2f} ms")
print(f"  solver alone          median {statistics.median(r[2] for r in rows)*1e3:8.2f} ms")
print(f"  overhead (call - core) / core: median {statistics.median(over)*100:.3f} %, max {max(over)*100:.3f} %")
print(f"  overhead absolute: median {statistics.median(c-k for c,k,_,_ in rows)*1e6:.0f} us")
args = [cli, "reconstruct", "--input", os.path.join(work, "d128.fits"), "--wavelength", "633nm", "--sampling", str(opts["sampling"]),
        "--defocus", ",".join(opts["defocus"]), "--data-unit", "photons", "--read-noise", "2", "--json", os.path.join(work, "cli.json"), "--force", "--quiet"]
walls, secs = [], []
for _ in range(5):
    t = time.perf_counter(); subprocess.run(args, check=True, capture_output=True); walls.append(time.perf_counter() - t)
    secs.append(json.load(open(os.path.join(work, "cli.json")))["seconds"])
cj = json.load(open(os.path.join(work, "cli.json")))
print(f"  wavefront-cli: solver median {statistics.median(secs)*1e3:.2f} ms, process wall median {statistics.median(walls)*1e3:.2f} ms, iterations {cj['iterations']}")
diff = np.max(np.abs(np.array([c['value_waves'] for c in cj['coefficients']]) - r.coefficients['waves']))
print(f"  max |coefficient difference| module vs CLI: {diff:.3g} waves")
