"""Fixtures of the Python module's tests: the built wavefront-cli and the demo data it simulates."""
import json
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

import wavefront_studio as wfs

ROOT = Path(__file__).resolve().parents[2]


def cli_path():
    path = os.environ.get("WFS_CLI") or str(ROOT / "build" / "bin" / "wavefront-cli")
    if not Path(path).exists():
        pytest.skip("wavefront-cli is not built (set WFS_CLI)")
    return path


def run_cli(*args):
    """Runs wavefront-cli; returns the completed process (raises with its stderr when it fails)."""
    done = subprocess.run([cli_path(), *map(str, args)], capture_output=True, text=True)
    if done.returncode != 0:
        raise AssertionError(f"wavefront-cli {' '.join(map(str, args))} failed ({done.returncode}): {done.stderr}")
    return done


def cli_coefficients(json_path):
    with open(json_path) as f:
        result = json.load(f)
    rows = result["coefficients"]
    return (np.array([r["index"] for r in rows]), np.array([r["value_waves"] for r in rows]),
            np.array([np.nan if r["uncertainty_waves"] is None else r["uncertainty_waves"] for r in rows]), result)


@pytest.fixture(scope="session")
def demo_fits(tmp_path_factory):
    """The demo preset's stack as wavefront-cli simulate writes it (FITS cube with its metadata keywords)."""
    path = tmp_path_factory.mktemp("demo") / "demo.fits"
    run_cli("simulate", "--preset", "demo", "--out", path)
    return path


@pytest.fixture(scope="session")
def small_stack():
    """A small demo stack (64 x 64) as float64 values, with the sampling and defocus to fit it."""
    stack = wfs.simulate("demo", grid=64)
    return stack.data, stack.metadata["sampling"], stack.defocus


@pytest.fixture
def fast():
    """Options for quick fits of the small stack (the same settings on both sides of a comparison)."""
    return dict(wavelength="633nm", data_unit="photons", max_iterations=30)
