"""The vectorial model (issue 24) from Python: the same fit as wavefront-cli's for the same settings."""
import json

import numpy as np
import pytest

from conftest import run_cli
from test_reconstruct import TOL, assert_same_coefficients

import wavefront_studio as wfs


def test_vectorial_fit_matches_cli(tmp_path):
    """The vectorial preset's stack (NA 1.4 oil, a bead 3 um deep in water) fitted with the vectorial model from
    Python gives the CLI's coefficients, iterations and rms, and says the model it used."""
    fits = tmp_path / "vectorial.fits"
    run_cli("simulate", "--preset", "vectorial", "--seed", 3, "--out", fits)
    out = tmp_path / "cli.json"
    run_cli("reconstruct", "--input", fits, "--model", "vectorial", "--sample-index", 1.33, "--emitter-depth", "3um",
            "--order", 4, "--json", out, "--quiet")
    result = wfs.reconstruct(wfs.read(fits), model="vectorial", sample_index=1.33, emitter_depth="3um", order=4)
    cli = json.loads(out.read_text())
    assert cli["pupil_function"]["imaging_model"]["model"] == "vectorial"
    assert_same_coefficients(result, out)
    assert result.iterations == cli["iterations"]
    assert result.termination == "converged"
    assert abs(result.rms - cli["rms_waves"]) <= TOL
    saved = tmp_path / "py.json"
    result.save(str(saved), overwrite=True)
    assert json.loads(saved.read_text())["pupil_function"]["imaging_model"] == cli["pupil_function"]["imaging_model"]


def test_air_preset_is_the_cli_cube(tmp_path):
    """simulate("air") is the cube wavefront-cli simulate --preset air writes: seven planes over the camera's 100-count
    bias, and photons= scales the photons per plane as --photons does."""
    fits = tmp_path / "air.fits"
    run_cli("simulate", "--preset", "air", "--grid", 64, "--photons", "1e5", "--out", fits)
    stack = wfs.simulate("air", grid=64, photons=1e5)
    assert stack.data.shape == (7, 32, 32)
    assert np.array_equal(stack.data, wfs.read(str(fits)).data)
    assert stack.data.min() > 100 - 6  # the bias, less a few read-noise sigmas at worst
    dim = wfs.simulate("air", grid=64, photons=1e5, noise=False).data - 105.0  # less the bias and the background
    bright = wfs.simulate("air", grid=64, noise=False).data - 105.0
    assert abs(dim.sum() / bright.sum() - 0.1) < 1e-6
    with pytest.raises(ValueError, match="photon"):
        wfs.simulate("oof", photons=1e5)
