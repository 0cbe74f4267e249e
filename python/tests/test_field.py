"""A microscope's whole field from Python (issue 43): wfs.field, its steps as independent tasks (Dask, a Slurm array),
and what it says when it cannot describe a field."""
import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

from conftest import ROOT, run_cli

import wavefront_studio as wfs

# The simulated fields' data warnings (Q = 2, a PSF reaching its crop's edge) are said, not tested, here.
pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")
SETTINGS = dict(order=4, objective="poisson")  # as bench field fits the simulated field
SLURM_SCRIPT = ROOT / "python" / "examples" / "field_slurm.py"


@pytest.fixture(scope="module")
def small_field():
    """A 320 x 320 simulated field of 12 single beads and 2 doublets, 1 saturated and 3 edge beads, and its run."""
    stack = wfs.simulate_field(width=320, height=320, beads=12, doublets=2, saturated=1, edge=3, seed=7)
    return stack, wfs.field(stack, **SETTINGS)


@pytest.fixture(scope="module")
def field_fits(tmp_path_factory):
    """The field as `wavefront-cli simulate --preset field` writes it (512 x 512, 12 single beads): a file for the tasks."""
    path = tmp_path_factory.mktemp("field") / "field.fits"
    run_cli("simulate", "--preset", "field", "--beads", 12, "--out", path)
    return path


def planted_nearest(truth, bead):
    return min(truth["beads"], key=lambda p: (p["x_px"] - bead["x_px"]) ** 2 + (p["y_px"] - bead["y_px"]) ** 2)


def assert_same_run(expected, run):
    """The same beads with the same statuses, coefficients within 1e-9 waves, and the same field model."""
    assert [b["status"] for b in run.beads] == [b["status"] for b in expected.beads]
    assert [b["in_model"] for b in run.beads] == [b["in_model"] for b in expected.beads]
    for got, want in zip(run.beads, expected.beads):
        assert got["coefficients"].keys() == want["coefficients"].keys()
        for index, (waves, _) in want["coefficients"].items():
            assert abs(got["coefficients"][index][0] - waves) <= 1e-9
    assert run.terms == expected.terms
    for got, want in zip(run.model["terms"], expected.model["terms"]):
        assert got["field_order"] == want["field_order"]
        np.testing.assert_allclose(got["coefficients_waves"], want["coefficients_waves"], rtol=0, atol=1e-9)


def test_field_finds_the_planted_beads_and_recovers_the_truth(small_field):
    """Every planted bead is found; singles are fitted "ok" and the planted doublets, saturated and edge beads are set
    aside; the field model at every single bead is its truth (fieldTruthAt) within 4 sigma + 0.005 wave."""
    stack, run = small_field
    assert stack.data.shape == (9, 320, 320) and stack.truth["format"] == "wavefront-studio-field-truth"
    found = {}
    for bead in run.beads:
        planted = planted_nearest(stack.truth, bead)
        found[id(planted)] = planted
        if planted["kind"] == "single":
            assert bead["status"] == "ok", bead["reason"]
            assert bead["in_model"] and len(bead["coefficients"]) == 14  # Noll 2..15 at order 4
        elif planted["kind"] == "doublet":  # by its brightness or width, or by its fit's verdict
            assert bead["status"] in ("aggregate", "neighbour", "poor-fit") and not bead["in_model"]
        else:
            assert bead["status"] == planted["kind"] and bead["reason"] and not bead["coefficients"]
    assert len(found) == len(stack.truth["beads"])  # nothing planted was missed
    assert run.model is not None and run.model_error == "" and run.terms[0] == 4
    for planted in (p for p in stack.truth["beads"] if p["kind"] == "single"):
        truth = {c["index"]: c["value_waves"] for c in planted["truth"]["coefficients"]}
        for term in run.terms:
            value, sigma = run.field_value(term, planted["x_px"], planted["y_px"])
            assert abs(value - truth.get(term, 0.0)) <= 4 * sigma + 0.005, (term, planted["x_px"], planted["y_px"])


def test_field_result_exports_and_model(small_field):
    """csv(), json() and summary() are wavefront-cli field's; the model's arrays; field_value broadcasts arrays."""
    _, run = small_field
    assert len(run.csv().splitlines()) == len(run.beads) + 1
    saved = json.loads(run.json())
    assert saved["format"] == "wavefront-studio-field" and len(saved["beads"]) == len(run.beads)
    assert [t["index"] for t in saved["field_model"]["terms"]] == run.terms
    assert "beads found" in run.summary()
    # the detection's figures carry their units, in the dicts as in the table: the simulated slide is in photons
    assert run.csv().splitlines()[0].startswith("index,x_px,y_px,x_um,y_um,status,significance_sigma,brightness_photons,")
    assert run.beads[0]["brightness_photons"] > 0 and run.beads[0]["significance_sigma"] > 5
    term = run.model["terms"][0]
    k = len(term["coefficients_waves"])
    assert term["covariance"].shape == (k, k)
    values, sigmas = run.field_value(4, np.array([[10.0, 160.0]]), np.array([50.0]))
    assert values.shape == sigmas.shape == (1, 2) and (sigmas > 0).all()
    assert values[0, 1] == pytest.approx(run.field_value(4, 160.0, 50.0)[0], abs=1e-15)
    with pytest.raises(ValueError, match="term 1 is not modelled"):
        run.field_value(1, 0.0, 0.0)


def test_steps_in_any_order_give_the_run(small_field):
    """field_detect, field_fit_bead (in reverse order, one by one and as a list) and field_describe, also after a
    JSON round trip of the beads' dicts, give field()'s result."""
    stack, run = small_field
    beads = wfs.field_detect(stack, **SETTINGS)
    todo = [b["index"] for b in beads if b["status"] == "not-run"]
    assert [b["x_px"] for b in beads] == [b["x_px"] for b in run.beads]
    fitted = [wfs.field_fit_bead(stack, i, **SETTINGS) for i in reversed(todo[1:])]
    fitted += wfs.field_fit_bead(stack, todo[:1], **SETTINGS)
    assert_same_run(run, wfs.field_describe(stack, fitted, **SETTINGS))
    assert_same_run(run, wfs.field_describe(stack, json.loads(json.dumps(fitted)), **SETTINGS))
    with pytest.raises(IndexError, match="not a bead of this stack"):
        wfs.field_fit_bead(stack, len(beads), **SETTINGS)
    other = wfs.simulate_field(width=320, height=320, beads=12, doublets=2, saturated=1, edge=3, seed=8)
    with pytest.raises(ValueError, match="beads: bead .* this stack's detection"):
        wfs.field_describe(other, fitted, **SETTINGS)


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # tornado's, under distributed 2022.12
def test_dask_local_cluster_gives_the_single_process_run(field_fits):
    """The docs' Dask recipe: each bead fitted as a task on a local cluster of two worker processes, from the file's
    path, then field_describe: field()'s result."""
    distributed = pytest.importorskip("distributed")
    path = str(field_fits)
    expected = wfs.field(path, **SETTINGS)
    beads = wfs.field_detect(path, **SETTINGS)
    todo = [b["index"] for b in beads if b["status"] == "not-run"]
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        with distributed.Client(cluster) as client:
            fitted = client.gather([client.submit(wfs.field_fit_bead, path, i, **SETTINGS) for i in todo])
    assert_same_run(expected, wfs.field_describe(path, fitted, **SETTINGS))


def run_script(*args, task=None):
    env = dict(os.environ)
    if task is not None:
        env.update(SLURM_ARRAY_TASK_ID=str(task), SLURM_ARRAY_TASK_COUNT="2")
    return subprocess.run([sys.executable, str(SLURM_SCRIPT), *map(str, args)], env=env, capture_output=True, text=True)


def test_slurm_array_script_gives_the_single_process_run(field_fits, tmp_path):
    """python/examples/field_slurm.py as two array tasks run by hand, then its describe step: field()'s beads and model
    in beads.csv and field.json."""
    options = ["order=4", "objective=poisson"]
    for task in (0, 1):
        done = run_script("fit", field_fits, tmp_path, *options, task=task)
        assert done.returncode == 0, done.stderr
        assert (tmp_path / f"beads-{task}.json").exists()
    done = run_script("describe", field_fits, tmp_path, *options)
    assert done.returncode == 0, done.stderr
    assert "beads found" in done.stdout
    expected = wfs.field(str(field_fits), **SETTINGS)
    saved = json.loads((tmp_path / "field.json").read_text())
    assert [b["status"] for b in saved["beads"]] == [b["status"] for b in expected.beads]
    for got, want in zip(saved["beads"], expected.beads):
        for c in got.get("coefficients", []):
            assert abs(c["waves"] - want["coefficients"][c["index"]][0]) <= 1e-9
    for got, want in zip(saved["field_model"]["terms"], expected.model["terms"]):
        np.testing.assert_allclose(got["coefficients_waves"], want["coefficients_waves"], rtol=0, atol=1e-9)
    assert (tmp_path / "beads.csv").read_text().count("\n") == len(expected.beads) + 1
    outside = run_script("fit", field_fits, tmp_path / "other", *options)
    assert outside.returncode != 0 and "SLURM_ARRAY_TASK_ID" in outside.stderr


def test_field_says_what_it_cannot_do(tmp_path):
    """No bead: no model and why (a RuntimeWarning too); planes of different sizes (arrays, or files chosen to take
    part together), bad options: clear errors."""
    flat = np.random.default_rng(1).normal(100.0, 3.0, (5, 128, 128))
    with pytest.warns(RuntimeWarning, match="no field model: no bead"):
        none = wfs.field(flat, wavelength="600nm")
    assert none.beads == [] and none.model is None and "no bead" in none.model_error
    with pytest.raises(ValueError, match="no field model"):
        none.field_value(4, 0.0, 0.0)
    with pytest.raises(ValueError, match="not a .planes, ny, nx. or .ny, nx. array"):
        wfs.field([np.zeros((64, 64)), np.zeros((96, 96))], wavelength="600nm")
    astropy_fits = pytest.importorskip("astropy.io.fits")
    paths = [tmp_path / "a.fits", tmp_path / "b.fits"]
    astropy_fits.writeto(paths[0], flat[0])
    astropy_fits.writeto(paths[1], flat[1, :96, :96])
    with warnings.catch_warnings(record=True) as caught:  # core leaves such a plane out unless chosen
        warnings.simplefilter("always")
        assert wfs.field(paths, wavelength="600nm").width == 128
    said = [(w.category, str(w.message)) for w in caught]
    assert any(c is UserWarning and "differ in size" in m for c, m in said)
    assert any(c is RuntimeWarning and "no field model" in m for c, m in said)
    with pytest.raises(ValueError, match="the stack's planes differ in size .*: a field is one stack of one size"):
        wfs.field(paths, planes=[0, 1], wavelength="600nm")
    with pytest.raises(ValueError, match="crop"):
        wfs.field(flat, crop=31, wavelength="600nm")
    with pytest.raises(ValueError, match="field_order"):
        wfs.field(flat, field_order=16, wavelength="600nm")
    with pytest.raises(ValueError, match="jobs"):
        wfs.field(flat, jobs=0, wavelength="600nm")
    with pytest.raises(ValueError, match="wavelength"):
        wfs.field(flat)
    with pytest.raises(TypeError, match="did you mean 'order'"):
        wfs.field(flat, wavelength="600nm", ordr=4)
