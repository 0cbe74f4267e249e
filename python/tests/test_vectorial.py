"""The vectorial model (issue 24) from Python: the same fit as wavefront-cli's for the same settings."""
import json

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
