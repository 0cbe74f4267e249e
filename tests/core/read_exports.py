#!/usr/bin/env python3
"""Reads Wavefront Studio's exports with libraries that share no code with the program and prints
what it found as one JSON object on stdout (tst_exportreaders compares it with the fit).

  read_exports.py PHASE.fits MODEL.fits COEFFS.csv COEFFS.json

FITS through astropy.io.fits (its own parser, not CFITSIO), CSV through the csv module, JSON through
the json module. NaN pixels come back as null. Exit 77 when astropy or numpy is missing.
"""
import csv
import json
import math
import sys

try:
    import numpy as np
    from astropy.io import fits
except ImportError as e:  # the test skips, naming what is missing
    print("missing: %s" % e, file=sys.stderr)
    sys.exit(77)


def plain(value):
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def read_fits(path):
    with fits.open(path) as hdus:
        hdu = hdus[0]
        data = np.asarray(hdu.data, dtype=np.float64)
        header = {}
        for key in ("BITPIX", "NAXIS", "NAXIS1", "NAXIS2", "NAXIS3", "BUNIT", "WAVELENG", "ZORDERNG",
                    "ZNORM", "ROWORDER", "RMSWAVE", "ZC4"):
            if key in hdu.header:
                header[key] = plain(hdu.header[key])
        planes = data if data.ndim == 3 else data[np.newaxis, :, :]
        # Rows as stored: FITS row 0 first (the bottom row by the FITS convention).
        return {
            "header": header,
            "planes": [[[plain(float(v)) for v in row] for row in plane] for plane in planes],
        }


def read_csv(path):
    with open(path, newline="") as f:
        lines = [line for line in f if not line.startswith("#")]
    return [dict(row) for row in csv.DictReader(lines)]


def main():
    phase, model, table, document = sys.argv[1:5]
    with open(document) as f:
        parsed = json.load(f)
    out = {
        "phase": read_fits(phase),
        "model": read_fits(model),
        "csv": read_csv(table),
        "json": parsed,
    }
    json.dump(out, sys.stdout, allow_nan=False)


if __name__ == "__main__":
    main()
