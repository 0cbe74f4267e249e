#!/usr/bin/env python3
"""Reads Wavefront Studio's exports with libraries that share no code with the program and prints
what it found as one JSON object on stdout (tst_exportreaders compares it with the fit).

  read_exports.py [--fits NAME FILE.fits]... [--csv FILE.csv] [--json FILE.json]

FITS through astropy.io.fits and astropy.wcs (their own parsers, not CFITSIO): for every HDU its
EXTNAME, BUNIT, a few header values, the pixels (NaN as null), and for images the world coordinates
its WCS gives to the first and last pixel (and to every slice of a cube), for the primary and the 'A'
description; for tables the columns with their units. Warnings astropy raises while reading are
listed. CSV through the csv module (the file as it is: no lines skipped), JSON through the json
module. Exit 77 when astropy or numpy is missing.
"""
import csv
import json
import math
import sys
import warnings

try:
    import numpy as np
    from astropy.io import fits
    from astropy.wcs import WCS
except ImportError as e:  # the test skips, naming what is missing
    print("missing: %s" % e, file=sys.stderr)
    sys.exit(77)

HEADER_KEYS = ("BITPIX", "NAXIS", "NAXIS1", "NAXIS2", "NAXIS3", "BUNIT", "WAVELENG", "ZORDERNG", "ZNORM", "ROWORDER",
               "RMSWAVE", "ZC4", "DATE", "CREATOR", "EXTNAME", "IMAGETYP", "SAMPLING", "PUPSAMP", "OBSCUR", "SPIDERS",
               "PRESET", "PIXLOD", "CTYPE3", "CUNIT3", "INHERIT")


def plain(value):
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        value = float(value)
        return value if math.isfinite(value) else None
    return str(value)


def world(header, key, shape):
    """World coordinates of the first and last pixel, and of the first pixel of every slice."""
    if ("CTYPE1" + key.strip()) not in header:
        return None
    w = WCS(header, key=key)
    n = w.wcs.naxis
    first = [0.0] * n
    last = [float(s - 1) for s in reversed(shape)][:n]
    out = {
        "ctype": [str(c) for c in w.wcs.ctype],
        "cunit": [str(u) for u in w.wcs.cunit],
        "first": [plain(v) for v in w.wcs_pix2world([first], 0)[0]],
        "last": [plain(v) for v in w.wcs_pix2world([last], 0)[0]],
    }
    if n == 3:
        slices = [[0.0, 0.0, float(k)] for k in range(shape[0])]
        out["slices"] = [plain(p[2]) for p in w.wcs_pix2world(slices, 0)]
    return out


def read_fits(path):
    hdus_out = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with fits.open(path) as hdus:
            hdus.verify("exception")  # astropy's own FITS-standard check
            for hdu in hdus:
                h = hdu.header
                entry = {"name": hdu.name, "header": {k: plain(h[k]) for k in HEADER_KEYS if k in h}}
                if isinstance(hdu, fits.BinTableHDU):
                    entry["table"] = {
                        c.name: {"unit": c.unit, "values": [plain(v) for v in hdu.data[c.name]]} for c in hdu.columns
                    }
                elif hdu.data is not None:
                    data = np.asarray(hdu.data, dtype=np.float64)
                    planes = data if data.ndim == 3 else data[np.newaxis, :, :]
                    # Rows as stored: FITS row 0 first (the bottom row by the FITS convention).
                    entry["planes"] = [[[plain(float(v)) for v in row] for row in plane] for plane in planes]
                    entry["wcs"] = world(h, " ", data.shape)
                    entry["wcsA"] = world(h, "A", data.shape)
                hdus_out.append(entry)
    return {"hdus": hdus_out, "warnings": [str(w.message) for w in caught]}


def main():
    args = sys.argv[1:]
    out = {"fits": {}}
    i = 0
    while i < len(args):
        if args[i] == "--fits":
            out["fits"][args[i + 1]] = read_fits(args[i + 2])
            i += 3
        elif args[i] == "--csv":
            with open(args[i + 1], newline="") as f:
                out["csv"] = [dict(row) for row in csv.DictReader(f)]
            i += 2
        elif args[i] == "--json":
            with open(args[i + 1]) as f:
                out["json"] = json.load(f)
            i += 2
        else:
            print("unknown argument %s" % args[i], file=sys.stderr)
            sys.exit(2)
    json.dump(out, sys.stdout, allow_nan=False)


if __name__ == "__main__":
    main()
