#!/usr/bin/env python3
"""Throws bad inputs, absurd values, output faults and signals at wavefront-cli and counts the outcomes
(issues 12 and 28): inputs tried, clear errors, crashes, hangs, partial or lost outputs, misleading
messages, nonsense accepted. Each case runs in a fresh folder; afterwards the folder must hold either
every requested output (the run succeeded) or none of them and no temporary (it failed). A "clear error"
is exit status 1 or 2 with a message on stderr that is not a bare exception name ("std::bad_alloc",
"basic_string", ...) and that says what the case expects it to say (expect_err: e.g. the bad value, the
kind of file); one that does not is a "misleading message". A case that expects a refusal (expect_ok=False)
but exits 0, or whose output lacks what it must say (expect_out: e.g. a stale batch result reused), is
"nonsense accepted". Resource limits that do not bind root (RLIMIT_NPROC) run the CLI as the user nobody.

Usage: scripts/hostile.py [BUILD_DIR]    (default build; needs bin/wavefront-cli; WFS_HOSTILE_ONLY=TEXT runs only the
cases whose name contains TEXT)
Exit status 0 when there are no crashes, hangs, partial outputs, misleading messages or nonsense accepted.
"""
import gzip
import json
import os
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time

BUILD = sys.argv[1] if len(sys.argv) > 1 else "build"
CLI = os.path.abspath(os.path.join(BUILD, "bin", "wavefront-cli"))
TIMEOUT = 120
ONLY = os.environ.get("WFS_HOSTILE_ONLY")  # run only the cases whose name contains this text (exploring one surface)
BARE = ("std::bad_alloc", "basic_string", "vector::", "std::length_error", "terminate called", "Aborted")

counts = {"tried": 0, "clear": 0, "ok": 0, "crash": 0, "hang": 0, "partial": 0, "unclear": 0, "misleading": 0, "nonsense": 0}
problems = []
accepted = []  # cases that ran to a complete result: listed so that a reader can judge them


def fits_bytes(width=32, height=32, planes=1, bitpix=-64, extra=b""):
    cards = [b"SIMPLE  =                    T", b"BITPIX  = %20d" % bitpix, b"NAXIS   = %20d" % (3 if planes > 1 else 2),
             b"NAXIS1  = %20d" % width, b"NAXIS2  = %20d" % height]
    if planes > 1:
        cards.append(b"NAXIS3  = %20d" % planes)
    header = b"".join(c.ljust(80) for c in cards) + extra + b"END".ljust(80)
    header = header.ljust(-(-len(header) // 2880) * 2880)
    return header


def setup(work, base):
    """The clean inputs every case starts from: simulated data with its truth."""
    for name in os.listdir(base):
        src = os.path.join(base, name)
        if os.path.isfile(src):
            shutil.copy(src, work)


def tiff_bytes(pages):
    """A little-endian, uncompressed, 16-bit grey TIFF; `pages` is a list of (width, height)."""
    out = bytearray(b"II*\0" + struct.pack("<I", 0))
    previous = 4  # where the offset of the next IFD goes
    for w, h in pages:
        data = bytearray()
        for r in range(h):
            for c in range(w):
                d2 = (r - h / 2) ** 2 + (c - w / 2) ** 2
                data += struct.pack("<H", int(100 + 5000 * 2.718281828 ** (-d2 / 8.0)))
        offset = len(out)
        out += data
        if len(out) % 2:
            out += b"\0"
        entries = [(256, 3, 1, w), (257, 3, 1, h), (258, 3, 1, 16), (259, 3, 1, 1), (262, 3, 1, 1), (273, 4, 1, offset),
                   (277, 3, 1, 1), (278, 3, 1, h), (279, 4, 1, len(data))]
        ifd = len(out)
        struct.pack_into("<I", out, previous, ifd)
        out += struct.pack("<H", len(entries))
        for tag, kind, count, value in entries:
            out += struct.pack("<HHI", tag, kind, count) + (struct.pack("<HH", value, 0) if kind == 3 else struct.pack("<I", value))
        previous = len(out)
        out += struct.pack("<I", 0)
    return bytes(out)


def png_bytes(n):
    """An 8-bit grey PNG of n x n, black with a spot in the middle: a few hundred KB for 8000 x 8000."""
    import zlib
    rows = bytearray()
    blank = bytes(n + 1)
    for r in range(n):
        if abs(r - n // 2) < 12:
            row = bytearray(blank)
            for c in range(n // 2 - 12, n // 2 + 12):
                row[c + 1] = min(255, int(10 + 240 * 2.718281828 ** (-((c - n / 2) ** 2 + (r - n / 2) ** 2) / 18)))
            rows += row
        else:
            rows += blank
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xffffffff)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", n, n, 8, 0, 0, 0, 0)) + chunk(b"IDAT", zlib.compress(bytes(rows), 9))
            + chunk(b"IEND", b""))


def classify_message(name, status, out, err, expect_err, expect_out):
    """A failure's message (or a result's output) that lacks what the case expects: misleading, or nonsense
    accepted when the run went on as if nothing were wrong. Returns True when counted."""
    lacking = [e for e in (expect_out or []) if e not in out]
    if status != 0:
        lacking += [e for e in (expect_err or []) if e not in err]
    if not lacking:
        return False
    if status == 0:
        counts["nonsense"] += 1
        problems.append(f"NONSENSE {name}: exit 0, output lacks {lacking}")
    else:
        counts["misleading"] += 1
        problems.append(f"MISLEADING {name}: status {status}, lacks {lacking}: {err.strip()[-300:]}")
    return True


def own_font_cache(folder):
    """A fontconfig whose cache is in `folder`, for a run under a resource limit: there fontconfig may fail to map or
    write the machine's cache and leave an empty one that every later program trusts (no fonts). Same fonts and rules
    (tests/TestSupport.h, isolateFontCache)."""
    path = os.path.join(folder, "fonts.conf")
    with open(path, "w") as f:
        f.write('<?xml version="1.0"?>\n<!DOCTYPE fontconfig SYSTEM "urn:fontconfig:fonts.dtd">\n<fontconfig>\n'
                '  <dir>/usr/share/fonts</dir>\n  <dir>/usr/local/share/fonts</dir>\n'
                f'  <cachedir>{folder}/fontconfig</cachedir>\n'
                '  <include ignore_missing="yes">/etc/fonts/conf.d</include>\n</fontconfig>\n')
    return path


def run_case(name, args, outputs, base, prepare=None, pre_exec=None, kill_after=None, expect_signal=False, expect_ok=None,
             expect_err=None, expect_out=None, check_outputs=True, check=None, protected=()):
    """`protected`: files of the case's folder (after `prepare`) that no run may change, whatever its status: an input,
    or a file at an output's path that is not the program's own."""
    if ONLY and ONLY not in name:
        return
    counts["tried"] += 1
    work = tempfile.mkdtemp(prefix="wfs-hostile-")
    try:
        setup(work, base)
        if prepare:
            prepare(work)
        before = set(os.listdir(work))
        kept = {name: open(os.path.join(work, name), "rb").read() for name in protected}
        env = dict(os.environ, WFS_FFTW_WISDOM_DIR=os.path.join(base, "wisdom"), QT_QPA_PLATFORM="offscreen")
        if pre_exec:
            env["FONTCONFIG_FILE"] = own_font_cache(base)
        proc = subprocess.Popen([CLI] + args, cwd=work, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                                preexec_fn=pre_exec, start_new_session=True)
        if kill_after is not None:
            sig, delay = kill_after
            time.sleep(delay)
            if proc.poll() is None:
                os.killpg(proc.pid, sig)
        try:
            out, err = proc.communicate(timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            counts["hang"] += 1
            problems.append(f"HANG    {name}")
            return
        err = err.decode(errors="replace")
        out = out.decode(errors="replace")
        status = proc.returncode
        changed = [n for n, b in kept.items() if not os.path.isfile(os.path.join(work, n)) or open(os.path.join(work, n), "rb").read() != b]
        if changed:
            counts["partial"] += 1
            problems.append(f"DAMAGED {name}: status {status}, changed {changed}")
            return
        if status >= 0 and classify_message(name, status, out, err, expect_err, expect_out):
            return
        complaint = check(work) if check and status == 0 else None
        if complaint:
            counts["nonsense"] += 1
            problems.append(f"NONSENSE {name}: {complaint}")
            return
        if status == 0 and expect_ok is False:
            counts["nonsense"] += 1
            problems.append(f"NONSENSE {name}: exit 0 (expected a refusal)")
            return
        if not check_outputs and status >= 0:
            created = []
            outputs = []
        else:
            created = sorted(set(os.listdir(work)) - before - {"wisdom"})
        missing = [o for o in outputs if o not in os.listdir(work) or os.path.getsize(os.path.join(work, o)) == 0]
        for o in outputs:  # a JSON output must parse as a whole
            if o.endswith(".json") and o not in missing:
                try:
                    json.load(open(os.path.join(work, o)))
                except ValueError:
                    missing.append(o + " (invalid JSON)")
        if status < 0 and not (expect_signal and -status in (signal.SIGTERM, signal.SIGINT)):
            counts["crash"] += 1
            problems.append(f"CRASH   {name}: signal {-status}; {err.strip()[-200:]}")
        elif status == 0:
            if missing:
                counts["partial"] += 1
                problems.append(f"PARTIAL {name}: exit 0 but missing {missing}")
            else:
                counts["ok"] += 1
                accepted.append(name)
        else:
            complete = not missing and set(created) == set(outputs)
            if created and expect_signal and status < 0 and complete:
                # The signal came after every output was in place: all of them, as promised.
                counts["ok"] += 1
                accepted.append(name + " (signal after the outputs were in place)")
            elif created:
                counts["partial"] += 1
                problems.append(f"PARTIAL {name}: failed (status {status}) but left {created}")
            elif status < 0 or ((err.strip() or (expect_out and out.strip())) and not any(b in err for b in BARE)):
                # batch says each input's failure in its progress on standard output (expect_out checked it)
                counts["clear"] += 1
                if expect_ok is True:
                    problems.append(f"REFUSED {name} (expected success): {err.strip()[-200:]}")
            else:
                counts["unclear"] += 1
                problems.append(f"UNCLEAR {name}: status {status}: {err.strip()[-200:]}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main():
    if not os.access(CLI, os.X_OK):
        sys.exit(f"{CLI} not built")
    base = tempfile.mkdtemp(prefix="wfs-hostile-base-")
    os.chmod(base, 0o755)
    subprocess.run([CLI, "simulate", "--grid", "32", "--order", "2", "--out", "d.fits"], cwd=base, check=True, capture_output=True)
    good = open(os.path.join(base, "d.fits"), "rb").read()
    fit = ["reconstruct", "--input", "d.fits", "--max-iterations", "20", "--quiet"]

    def write(name, data, mode=0o644):
        def prepare(work):
            path = os.path.join(work, name)
            with open(path, "wb") as f:
                f.write(data)
            os.chmod(path, mode)
        return prepare

    def fifo(name):
        return lambda work: os.mkfifo(os.path.join(work, name))

    def limit(resource, value):
        import resource as r
        return lambda: r.setrlimit(getattr(r, resource), (value, value))

    # 1. Corrupt and hostile input files.
    cases = []
    for n in (0, 1, 79, 2879, 2880, 5000, len(good) // 2, len(good) - 1):
        cases.append((f"truncated FITS ({n} bytes)", write("t.fits", good[:n])))
    for i, off in enumerate((0, 9, 85, 170, 400, 2900, 3000, 8000)):
        b = bytearray(good)
        b[off] ^= 0xFF
        cases.append((f"bit-flipped FITS at byte {off}", write("t.fits", bytes(b))))
    for suffix in ("fits", "tif", "png", "dat"):
        cases.append((f"random bytes .{suffix}", write("t." + suffix, os.urandom(5000))))
    cases.append(("FITS header claiming 100000 x 100000", write("t.fits", fits_bytes(100000, 100000))))
    cases.append(("FITS header claiming 8000 x 8000 x 1000", write("t.fits", fits_bytes(8000, 8000, 1000))))
    cases.append(("FITS with NaN BLANK planes", write("t.fits", fits_bytes(4, 4, 1, -64) + b"\x7f\xf8" + b"\0" * 6 * 16)))
    cases.append(("gzip FITS bomb", write("t.fits", gzip.compress(fits_bytes() + b"\0" * (300 << 20), 9))))
    gz = bytearray(gzip.compress(good))
    gz[-4:] = struct.pack("<I", 1260000000)
    cases.append(("gzip FITS with a lying size", write("t.fits", bytes(gz))))
    cases.append(("bzip2 magic", write("t.fits", b"BZh9" + os.urandom(3000))))
    png = b"\x89PNG\r\n\x1a\n" + struct.pack(">I", 13) + b"IHDR" + struct.pack(">IIBBBBB", 8000, 8000, 8, 2, 0, 0, 0)
    import zlib
    png += struct.pack(">I", zlib.crc32(png[12:29]) & 0xffffffff) + struct.pack(">I", 0) + b"IDAT" + struct.pack(">I", zlib.crc32(b"IDAT"))
    cases.append(("PNG declaring 8000 x 8000", write("t.png", png)))
    cases.append(("empty file", write("t.fits", b"")))
    cases.append(("FIFO as input", fifo("t.fits")))
    cases.append(("folder as input", lambda w: os.mkdir(os.path.join(w, "t.fits"))))
    cases.append(("missing input", None))
    cases.append(("symlink loop", lambda w: (os.symlink("t2.fits", os.path.join(w, "t.fits")), os.symlink("t.fits", os.path.join(w, "t2.fits")))))
    cases.append(("unreadable file", write("t.fits", good, 0o000)))
    for name, prep in cases:
        if name == "unreadable file":  # read as the user nobody, who may write outputs there
            prep = (lambda p: lambda w: (p(w), os.chmod(w, 0o777)))(prep)
        run_case(name, ["reconstruct", "--input", _input_name(name), "--wavelength", "633nm", "--sampling", "2", "--json", "r.json", "--quiet",
                        "--max-iterations", "20"], ["r.json"], base, prepare=prep,
                 pre_exec=(lambda: (os.setgid(65534), os.setuid(65534))) if name == "unreadable file" and os.geteuid() == 0 else None,
                 expect_ok=False if not name.startswith("bit-flipped") else None)  # a flipped data byte is a plausible pixel

    # 2. Absurd values.
    absurd = {
        "--wavelength": ["633", "1e30", "-1", "0", "nan", "inf", "abc", "633parsecs", "1e-20"],
        "--pixel-scale": ["5.5", "0", "-1", "1e9", "1e-20rad"],
        "--f-number": ["0", "-3", "1e9"],
        "--na": ["2", "0", "-0.5"],
        "--immersion": ["0.5", "10"],
        "--sampling": ["0", "-2", "1e6", "1e-9"],
        "--defocus": ["1e9w,0,1e9w", "2,0,2", "abc", "1w,0", "1e9m,0,1m"],
        "--crop": ["16384", "2", "3", "-2", "0"],
        "--grid": ["3", "100000", "-1", "0"],
        "--order": ["0", "99", "-1"],
        "--stages": ["4,2", "0", "99", "2,2"],
        "--max-iterations": ["0", "99999999999", "abc", "-5"],
        "--threads": ["0", "100000"],
        "--gtol": ["-1", "nan"],
        "--read-noise": ["-1", "1e300"],
        "--planes": ["99", "-1", "0,0"],
        "--obscuration": ["2", "-1", "0.999"],
        "--spiders": ["-1", "1000000"],
        "--spider-width": ["2", "-1"],
        "--border": ["0", "100000"],
        "--hot-pixels": ["0", "-3"],
        "--bad-pixels": ["1e18:2", "a:b", "5"],
        "--z-step": ["0", "1e9"],
        "--saturation": ["0", "-1"],
    }
    for flag, values in absurd.items():
        for v in values:
            run_case(f"{flag} {v}", fit + [f"{flag}={v}", "--json", "r.json"], ["r.json"], base, expect_ok=False)
    run_case("--na 1.4 in air", fit + ["--na", "1.4", "--pixel-scale", "0.1um", "--json", "r.json"], ["r.json"], base)

    # 3. Outputs.
    run_case("same file twice", fit + ["--json", "s.out", "--csv", "s.out"], ["s.out"], base)
    run_case("same file twice (./)", fit + ["--json", "s.out", "--csv", "./s.out", "--force"], ["s.out"], base)
    run_case("output = input", fit + ["--phase-out", "d.fits", "--force"], [], base)
    run_case("output in a missing folder", fit + ["--json", "r.json", "--csv", "no/c.csv"], ["r.json", "no/c.csv"], base)
    run_case("output is a folder", fit + ["--json", "dir"], ["dir"], base, prepare=lambda w: os.mkdir(os.path.join(w, "dir")))
    run_case("output is a FIFO", fit + ["--json", "pipe", "--force"], ["pipe"], base, prepare=fifo("pipe"))
    run_case("FITS to standard output", fit + ["--phase-out", "-"], [], base)
    run_case("two outputs on standard output", fit + ["--json", "-", "--csv", "-"], [], base)
    run_case("existing output without --force", fit + ["--json", "r.json", "--csv", "c.csv"], ["r.json", "c.csv"], base,
             prepare=write("c.csv", b"mine"))
    for lim in (0, 4096, 12000, 20000):
        run_case(f"ulimit -f {lim // 1024} KiB (SIGXFSZ)", fit + ["--json", "r.json", "--csv", "c.csv", "--phase-png", "p.png", "--model-out", "m.fits",
                                                               "--save-session", "s.json"],
                 ["r.json", "c.csv", "p.png", "m.fits", "s.json"], base, pre_exec=limit("RLIMIT_FSIZE", lim))
    for sig in (signal.SIGTERM, signal.SIGINT):
        for delay in (0.3, 1.0, 1.5):
            run_case(f"signal {sig.name} after {delay} s", ["reconstruct", "--input", "d.fits", "--max-iterations", "200", "--quiet", "--json", "r.json",
                                                           "--csv", "c.csv", "--phase-out", "p.fits", "--model-out", "m.fits"],
                     ["r.json", "c.csv", "p.fits", "m.fits"], base, kill_after=(sig, delay), expect_signal=True)
    run_case("names with brackets and blanks", fit + ["--phase-out", "p[1].fits", "--phase-png", "p (1).png", "--json", "r (1).json"],
             ["p[1].fits", "p (1).png", "r (1).json"], base, expect_ok=True)
    run_case("--csv - (standard output)", fit + ["--csv", "-", "--json", "r.json"], ["r.json"], base, expect_ok=True)
    run_case("user's NAME.part kept", fit + ["--phase-out", "p.fits"], ["p.fits", "p.fits.part"], base, prepare=write("p.fits.part", b"mine"),
             expect_ok=True)
    run_case("ulimit -v 1.5 GB", fit + ["--json", "r.json"], ["r.json"], base, pre_exec=limit("RLIMIT_AS", 1500000 * 1024))
    # Issue 41 item 7: the CUDA libraries are loaded only when the GPU is asked for: --version and a CPU fit run under
    # 1.49 GB, and the GPU asked for there is refused saying why (in a build without CUDA: "CUDA not built").
    run_case("ulimit -v 1.49 GB, --version", ["--version"], [], base, pre_exec=limit("RLIMIT_AS", 1490 << 20), expect_ok=True,
             check_outputs=False)
    run_case("ulimit -v 1.49 GB, CPU fit", fit + ["--json", "r.json"], ["r.json"], base, pre_exec=limit("RLIMIT_AS", 1490 << 20),
             expect_ok=True)
    run_case("ulimit -v 1.49 GB, --backend gpu", fit + ["--backend", "gpu", "--json", "r.json"], ["r.json"], base,
             pre_exec=limit("RLIMIT_AS", 1490 << 20), expect_ok=False, expect_err=["no GPU"])
    run_case("ulimit -v 300 MB", fit + ["--json", "r.json"], ["r.json"], base, pre_exec=limit("RLIMIT_AS", 300000 * 1024))

    # 4. Sessions and simulate.
    session = {"format": "wavefront-studio-session", "format_version": 1}
    run_case("session: missing", ["reconstruct", "--session", "none.json"], [], base)
    run_case("session: FIFO", ["reconstruct", "--session", "s.json"], [], base, prepare=fifo("s.json"))
    run_case("session: not JSON", ["reconstruct", "--session", "s.json"], [], base, prepare=write("s.json", b"{nope"))
    run_case("session: not an object", ["reconstruct", "--session", "s.json"], [], base, prepare=write("s.json", b"[1,2]"))
    run_case("session: empty object", ["reconstruct", "--session", "s.json"], [], base, prepare=write("s.json", json.dumps(session).encode()))
    subprocess.run([CLI] + fit + ["--save-session", "saved.json"], cwd=base, capture_output=True, env=dict(os.environ, WFS_FFTW_WISDOM_DIR=""))
    saved = json.load(open(os.path.join(base, "saved.json")))

    def edited(change):
        s = json.loads(json.dumps(saved))
        change(s)
        return write("s.json", json.dumps(s).encode())
    edits = {
        "stages 6,2": lambda s: s["solver"].__setitem__("stages", [6, 2]),
        "NA above immersion": lambda s: (s["metadata"].__setitem__("na", 1.4), s["metadata"].__setitem__("pixel_pitch_m", 1e-7),
                                         s["metadata"].__setitem__("sampling", None)),
        "bad_pixels 1e18": lambda s: s["preprocess"].__setitem__("bad_pixels", [[1e18, 2]]),
        "wavelength 633 m": lambda s: s["metadata"].__setitem__("wavelength_m", 633),
        "threads 0": lambda s: s["solver"].__setitem__("threads", 0),
        "order 99": lambda s: s["model"].__setitem__("order", 99),
        "input is a FIFO": lambda s: s["inputs"][0].update(path="pipe.fits", relative_path="pipe.fits"),
        "input missing": lambda s: s["inputs"][0].update(path="gone.fits", relative_path="gone.fits"),
    }
    for name, change in edits.items():
        prep = edited(change)
        if "FIFO" in name:
            prep = (lambda p: lambda w: (p(w), os.mkfifo(os.path.join(w, "pipe.fits"))))(prep)
        run_case(f"session: {name}", ["reconstruct", "--session", "s.json", "--json", "r.json", "--quiet", "--max-iterations", "20"], ["r.json"], base,
                 prepare=prep)
    # Issue 41: the PSF generator and sessions obey the same ranges as the flags, and refuse before allocating.
    for name, change, said in (("clip_sigma 0", lambda s: s["preprocess"].__setitem__("clip_sigma", 0), ["clip_sigma", "must be positive"]),
                               ("every plane excluded", lambda s: [p.__setitem__("use", False) for p in s["planes"]], ["no plane takes part"])):
        run_case(f"session: {name}", ["reconstruct", "--session", "s.json", "--json", "r.json", "--quiet"], ["r.json"], base,
                 prepare=edited(change), expect_ok=False, expect_err=said)
    optics = ["psf", "--wavelength", "600nm", "--na", "1.4", "--immersion", "1.518", "--pixel-scale", "65nm"]
    run_case("psf: 1001 planes of 4096 x 4096", optics + ["--size", "4096", "--psf-z", "-5um:5um:10nm", "--out", "p.fits"], ["p.fits"], base,
             expect_ok=False, expect_err=["needs about", "of memory"])
    run_case("psf: --psf-z steps of 1e296 m", optics + ["--psf-z", "0m:1e297m:1e296m", "--out", "p.fits"], ["p.fits"], base,
             expect_ok=False, expect_err=["not plausible"])
    run_case("psf: --out its --coefficients file", optics + ["--coefficients", "c.fits", "--out", "c.fits", "--force"], [], base,
             prepare=write("c.fits", json.dumps({"coefficients": [{"index": 4, "value_waves": 0.1}]}).encode()), expect_ok=False,
             expect_err=["is the --coefficients file"], protected=["c.fits"])
    run_case("psf: design coverslip index 1.0 under NA 1.4", optics + ["--model", "vectorial", "--design-coverslip-index", "1.0", "--out", "p.fits"],
             ["p.fits"], base, expect_ok=False, expect_err=["must be above the numerical aperture"])
    run_case("psf: --dipole 0x10,0", optics + ["--model", "vectorial", "--dipole", "0x10,0", "--out", "p.fits"], ["p.fits"], base,
             expect_ok=False, expect_err=["--dipole", "THETA,PHI"])
    truth = {"coefficients": [{"index": 4, "value_waves": 1e300}]}
    run_case("simulate: truth of 1e300 waves", ["simulate", "--grid", "32", "--truth", "t.json", "--out", "o.fits"], ["o.fits", "o.truth.json"], base,
             prepare=write("t.json", json.dumps(truth).encode()))
    run_case("simulate: --out equal to --truth", ["simulate", "--grid", "32", "--truth", "d.truth.json", "--out", "d.fits", "--force"], [], base)
    run_case("simulate: missing folder", ["simulate", "--grid", "32", "--out", "no/o.fits"], ["no/o.fits"], base)
    run_case("simulate: grid 3", ["simulate", "--grid", "3", "--out", "o.fits"], ["o.fits", "o.truth.json"], base)
    run_case("simulate: truth FIFO", ["simulate", "--grid", "32", "--truth", "t.json", "--out", "o.fits"], ["o.fits", "o.truth.json"], base,
             prepare=fifo("t.json"))

    # 5. Issue 28's classes: threads the system refuses, batch resume after an edited or copied input, the
    # misleading messages of item 11, a large stack without its settings, a large PNG with a small crop.
    nobody = (lambda: (os.setgid(65534), os.setuid(65534))) if os.geteuid() == 0 else None

    def as_nobody_with(resource, value):
        import resource as r
        def limit():
            if nobody:
                nobody()
            r.setrlimit(getattr(r, resource), (value, value))
        return limit
    open_folder = lambda w: os.chmod(w, 0o777)  # nobody writes its outputs there
    for n in (2, 3, 5, 8):
        run_case(f"ulimit -u {n} as nobody, --threads 8", fit + ["--threads", "8", "--json", "r.json"], ["r.json"], base, prepare=open_folder,
                 pre_exec=as_nobody_with("RLIMIT_NPROC", n), expect_err=["threads"])
    for kb in (1560000, 900000, 400000):
        run_case(f"ulimit -v {kb} KB, --threads 8", fit + ["--threads", "8", "--json", "r.json"], ["r.json"], base, pre_exec=limit("RLIMIT_AS", kb * 1024))

    other = os.path.join(base, "other.fits")
    subprocess.run([CLI, "simulate", "--grid", "32", "--order", "2", "--seed", "9", "--out", other], check=True, capture_output=True)
    other_bytes = open(other, "rb").read()
    batch = ["batch", "--out", "out", "--jobs", "1", "--settings", "s.json", "a.fits", "b.fits"]

    def batch_done_then(change):
        def prepare(work):
            shutil.copy(os.path.join(work, "d.fits"), os.path.join(work, "a.fits"))
            shutil.copy(other, os.path.join(work, "b.fits"))
            with open(os.path.join(work, "s.json"), "w") as f:
                f.write(json.dumps({"format": "wavefront-studio-session", "format_version": 1, "solver": {"max_iterations": 20}}))
            subprocess.run([CLI] + batch, cwd=work, capture_output=True, env=dict(os.environ, WFS_FFTW_WISDOM_DIR=""))
            change(work)
        return prepare
    run_case("batch resume: input edited", batch, [], base, check_outputs=False, expect_out=["a: run again: the input changed"],
             prepare=batch_done_then(lambda w: open(os.path.join(w, "a.fits"), "wb").write(other_bytes)))
    run_case("batch resume: another input's result copied in", batch, [], base, check_outputs=False,
             expect_out=["a: run again: the result belongs to another input"],
             prepare=batch_done_then(lambda w: shutil.copy(os.path.join(w, "out", "b.json"), os.path.join(w, "out", "a.json"))))
    run_case("batch resume: settings edited", batch, [], base, check_outputs=False, expect_out=["run again: the settings changed"],
             prepare=batch_done_then(lambda w: open(os.path.join(w, "s.json"), "a").write(" ")))
    run_case("batch: full disk (ulimit -f 1 KiB)", ["batch", "--out", "out", "--jobs", "1", "d.fits", other], [], base, check_outputs=False,
             pre_exec=limit("RLIMIT_FSIZE", 1024), expect_out=["d: FAILED: out/d.json: write failed"])

    def keyword(card, value):
        b = bytearray(good)
        at = b.find(card.ljust(8).encode() + b"=")
        b[at:at + 80] = (card.ljust(8) + "= " + value).ljust(80).encode()
        return bytes(b)
    bad_keywords = [("WAVELENG", "abc", ["WAVELENG = 'abc' is not a number"]), ("WAVELENG", "'abc'", ["WAVELENG = 'abc' is not a number"]),
                    ("WAVELENG", "-6.33E-07", ["WAVELENG = -6.33e-07 is not positive"]), ("WAVELENG", "6.33E-07x", ["WAVELENG = '6.33E-07x'"]),
                    ("SAMPLING", "T", ["SAMPLING = 'T' is not a number"]), ("SAMPLING", "-2", ["SAMPLING = -2 is not positive"]),
                    ("DEFOCUS1", "'one'", ["DEFOCUS1 = 'one' is not a number"])]
    for card, value, expected in bad_keywords:
        run_case(f"header {card} = {value}", ["reconstruct", "--input", "t.fits", "--quiet", "--max-iterations", "20", "--json", "r.json"], ["r.json"],
                 base, prepare=write("t.fits", keyword(card, value)), expect_ok=False, expect_err=expected)
    whole = tiff_bytes([(32, 32)] * 3)
    run_case("TIFF with a truncated page", ["reconstruct", "--input", "t.tif", "--wavelength", "633nm", "--sampling", "2", "--defocus", "-1w,0,1w",
                                            "--quiet", "--json", "r.json"], ["r.json"], base, prepare=write("t.tif", whole[:len(whole) * 3 // 4]),
             expect_ok=False, expect_err=["truncated"])
    run_case("TIFF with an odd-sized page", ["reconstruct", "--input", "t.tif", "--wavelength", "633nm", "--sampling", "2", "--defocus", "-1w,0,1w",
                                             "--quiet", "--json", "r.json"], ["r.json"], base,
             prepare=write("t.tif", tiff_bytes([(32, 32), (24, 24), (32, 32)])), expect_ok=False, expect_err=["differ in size", "not taking part"])
    run_case("truth value \"x\"", ["simulate", "--grid", "32", "--truth", "t.json", "--out", "o.fits"], ["o.fits", "o.truth.json"], base,
             prepare=write("t.json", json.dumps({"coefficients": [{"index": 4, "value_waves": "x"}]}).encode()), expect_ok=False,
             expect_err=['"x" is not a number'])
    nul = json.loads(json.dumps(saved))
    nul["inputs"][0].update(path="d\u0000x.fits", relative_path="d\u0000x.fits")
    run_case("session: NUL in an input path", ["reconstruct", "--session", "s.json", "--json", "r.json", "--quiet"], ["r.json"], base,
             prepare=write("s.json", json.dumps(nul).encode()), expect_ok=False, expect_err=["NUL"])
    run_case("session: a FIFO (named)", ["reconstruct", "--session", "s.json"], [], base, prepare=fifo("s.json"), expect_ok=False,
             expect_err=["give a session file"])
    run_case("truth: a FIFO (named)", ["simulate", "--grid", "32", "--truth", "t.json", "--out", "o.fits"], ["o.fits", "o.truth.json"], base,
             prepare=fifo("t.json"), expect_ok=False, expect_err=["give a truth file"])
    run_case("manifest: a FIFO", ["batch", "--out", "out", "--manifest", "m.csv"], [], base, prepare=fifo("m.csv"), check_outputs=False,
             expect_ok=False, expect_err=["give a manifest"])
    run_case("batch input: a FIFO", ["batch", "--out", "out", "p.fits"], [], base, prepare=fifo("p.fits"), check_outputs=False, expect_ok=False,
             expect_out=["p: FAILED: p.fits: is not a regular file"])

    def warnings_in_json(work):
        # The run's data warning (the simulated PSF reaches its 32 x 32 edge) must be in the result's warnings.
        warnings = json.load(open(os.path.join(work, "r.json"))).get("warnings", [])
        return None if any("reaches the edge" in w for w in warnings) else f"the result's warnings lack the data's: {warnings}"
    run_case("result JSON keeps the data's warnings", fit + ["--json", "r.json"], ["r.json"], base, expect_ok=True, check=warnings_in_json)
    def address_space_floor(args, accepted):
        """The least address space (MB, 25 MB steps) in which a run is accepted: what the program itself takes (its
        libraries, a CUDA build's too), measured rather than assumed."""
        import resource as r
        def run_under(mb):
            proc = subprocess.run([CLI] + args, cwd=base, capture_output=True, env=dict(os.environ, WFS_FFTW_WISDOM_DIR=""),
                                  preexec_fn=lambda: r.setrlimit(r.RLIMIT_AS, (mb << 20, mb << 20)))
            return accepted(proc.returncode, proc.stderr.decode(errors="replace"))
        low, high = 25, 8192
        if not run_under(high):
            return None
        while high - low > 25:
            middle = (low + high) // 2
            if run_under(middle):
                high = middle
            else:
                low = middle
        return high
    with open(os.path.join(base, "small.fits"), "wb") as f:
        f.write(fits_bytes(32, 32, 4, 16, b"BZERO   =                32768".ljust(80)) + bytes(2880 * 3))
    refusal_floor = address_space_floor(["reconstruct", "--input", "small.fits", "--sampling", "2", "--quiet"],
                                        lambda status, err: status == 2 and "the wavelength is unknown" in err)
    fit_floor = address_space_floor(fit, lambda status, err: status == 0)
    stack = os.path.join(base, "stack.fits")
    with open(stack, "wb") as f:
        f.write(fits_bytes(4096, 4096, 4, 16, b"BZERO   =                32768".ljust(80)))
        f.truncate(f.tell() + 4 * 4096 * 4096 * 2)  # a sparse file: zero pixels, 128 MB on the header's word
    # The stack's pixels need 512 MB as doubles: 150 MB more than a small stack's refusal takes cannot hold them.
    run_case("4 x 4096 x 4096 stack without --wavelength, 150 MB above a small one's refusal",
             ["reconstruct", "--input", stack, "--sampling", "2", "--z-step", "1um", "--na", "0.5", "--quiet"], [], base,
             pre_exec=limit("RLIMIT_AS", ((refusal_floor or 8192) + 150) << 20), expect_ok=False, expect_err=["the wavelength is unknown"])
    # The image is 512 MB as doubles; before, its fit took about 1.5 GB more than a small fit.
    run_case("8000 x 8000 PNG with --crop 64, 1100 MB above a small fit",
             ["reconstruct", "--input", "big.png", "--wavelength", "633nm", "--sampling", "2", "--crop", "64", "--max-iterations", "5", "--quiet",
              "--json", "r.json"], ["r.json"], base,
             prepare=write("big.png", png_bytes(8000)), pre_exec=limit("RLIMIT_AS", ((fit_floor or 8192) + 1100) << 20), expect_ok=True)
    for extra, expected in ((["--grid", "0"], "not a grid size"), (["--planes", "0,0"], "listed twice")):
        run_case(" ".join(extra), fit + extra + ["--json", "r.json"], ["r.json"], base, expect_ok=False, expect_err=[expected])

    # 4. Live mode (issue 41): the watch writes only into files of its own, never blocks on a FIFO, waits for a stack
    # still being written, keeps log, trend table and results consistent.
    def folder_with(files):
        def prepare(work):
            os.mkdir(os.path.join(work, "in"))
            for name, data in files.items():
                with open(os.path.join(work, "in", name), "wb") as f:
                    f.write(data)
        return prepare

    def both(*prepares):
        def prepare(work):
            for p in prepares:
                p(work)
        return prepare

    def link(name, target):
        return lambda work: os.symlink(target, os.path.join(work, name))

    watch = ["watch", "in", "--stable-ms", "100", "--exit-when-idle", "1", "--quiet"]
    settings = json.dumps({"format": "wavefront-studio-session", "format_version": 1, "model": {"order": 2}}).encode()
    one = folder_with({"a.fits": good})
    run_case("watch --out an existing FITS file", watch + ["--out", "d.fits"], [], base, prepare=one, expect_ok=False,
             expect_err=["is not a live log"], protected=["d.fits"])
    run_case("watch --out a link to a FITS file", watch + ["--out", "l.jsonl"], [], base, prepare=both(one, link("l.jsonl", "d.fits")),
             expect_ok=False, expect_err=["symbolic link"], protected=["d.fits"], check_outputs=False)
    run_case("watch --out a FIFO", watch + ["--out", "f.jsonl"], [], base, prepare=both(one, fifo("f.jsonl")), expect_ok=False,
             expect_err=["FIFO"], check_outputs=False)
    run_case("watch --csv a FIFO", watch + ["--out", "o.jsonl", "--csv", "f.csv"], [], base, prepare=both(one, fifo("f.csv")),
             expect_ok=False, expect_err=["FIFO"], check_outputs=False)
    run_case("watch --out the --settings file", watch + ["--settings", "s.json", "--out", "s.json"], [], base,
             prepare=both(one, write("s.json", settings)), expect_ok=False, expect_err=["is the --settings file"], protected=["s.json"])
    run_case("watch --csv a settings file", watch + ["--settings", "s.json", "--out", "o.jsonl", "--csv", "c.csv"], [], base,
             prepare=both(one, write("s.json", settings), write("c.csv", settings)), expect_ok=False,
             expect_err=["not a live trend table"], protected=["c.csv"])
    other_order = b"sequence,stack,status,warm_started,written,finished,latency_seconds,fit_seconds,rms_waves,strehl,noll_2_waves,skipped,error\n"
    run_case("watch --csv of another order", watch + ["--settings", "s.json", "--out", "o.jsonl", "--csv", "c.csv"], [], base,
             prepare=both(one, write("s.json", settings), write("c.csv", other_order)), expect_ok=False,
             expect_err=["other columns", "--order"], protected=["c.csv"])

    def one_row(kind, *expected):
        def check(work):
            rows = [json.loads(l) for l in open(os.path.join(work, "o.jsonl"), "rb").read().splitlines()]
            if len(rows) != 1 or rows[0].get("status") != kind or any(e not in rows[0].get("error", "") for e in expected):
                return f"the log holds {[(r.get('stack'), r.get('status'), r.get('error', '')[:80]) for r in rows]}"
            return None
        return check
    run_case("watch a truncated cube that stays so", watch + ["--settings", "s.json", "--out", "o.jsonl", "--incomplete-ms", "500"], ["o.jsonl"],
             base, prepare=both(folder_with({"t.fits": good[:len(good) // 2]}), write("s.json", settings)), expect_ok=True,
             check=one_row("failed", "truncated", "unchanged for 0.5 s"))

    def both_results(work):
        # Both complete in one scan: the newest is fitted, the other skipped; its result is named by its whole name.
        names = sorted(os.listdir(os.path.join(work, "r")))
        return None if len(names) == 1 and names[0] in ("run1.a.fits.json", "run1.b.fits.json") else f"results {names}"
    run_case("watch --save-results for run1.a.fits and run1.b.fits", watch + ["--settings", "s.json", "--out", "o.jsonl", "--save-results", "r"],
             ["o.jsonl"], base, prepare=both(folder_with({"run1.a.fits": good, "run1.b.fits": good}), write("s.json", settings)),
             expect_ok=True, check=both_results, check_outputs=False)

    shutil.rmtree(base, ignore_errors=True)
    for p in problems:
        print(p)
    print("accepted and complete:", "; ".join(accepted))
    c = counts
    print(f"inputs tried: {c['tried']}; clear errors: {c['clear']}; accepted and complete: {c['ok']}; crashes: {c['crash']}; hangs: {c['hang']}; "
          f"partial or lost outputs: {c['partial']}; misleading messages: {c['misleading'] + c['unclear']} (bare: {c['unclear']}); "
          f"nonsense accepted: {c['nonsense']}")
    return 1 if c["crash"] or c["hang"] or c["partial"] or c["misleading"] or c["unclear"] or c["nonsense"] else 0


def _input_name(case):
    for suffix in ("tif", "png", "dat"):
        if case.endswith("." + suffix) or f" .{suffix}" in case or case.startswith("PNG"):
            return "t.png" if case.startswith("PNG") else "t." + suffix
    return "t.fits"


if __name__ == "__main__":
    sys.exit(main())
