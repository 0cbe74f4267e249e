"""What a run assumes where neither the user nor the files say (issue 40): the Python module, the CLI and the desktop
program call one core workflow, so the same stack with the same few settings gives the same focus plane, planes and
result, and says what it assumed."""
import json

import numpy as np

import wavefront_studio as wfs
from conftest import ROOT, run_cli

BEAD = ROOT / "tests" / "data" / "bead_zstack_BIL113.tif"
# The optics a user knows of the bead stack; the z step comes from the acquisition log beside it.
OPTICS = dict(wavelength="605nm", na=1.1, immersion=1.33, pixel_scale="0.1um", crop=64, order=4)


def flags(options):
    return [arg for key, value in options.items() for arg in (f"--{key.replace('_', '-')}", str(value))]


def test_bead_stack_same_assumptions_and_result_as_cli(tmp_path):
    out = tmp_path / "cli.json"
    done = run_cli("reconstruct", "--input", BEAD, *flags(OPTICS), "--json", out)
    assert "focus-plane 10 (assumed: the brightest plane" in done.stdout
    cli = json.loads(out.read_text())
    result = wfs.reconstruct(wfs.read(str(BEAD)), **OPTICS)

    assumed = {a["setting"]: a["value"] for a in result.assumptions}
    assert assumed == {a["setting"]: a["value"] for a in cli["assumptions"]}
    assert assumed["focus-plane"] == "10"
    assert assumed["planes"] == "4, 7, 10, 13, 16"
    assert assumed["defocus-model"] == "high-na"
    assert assumed["centre"] == "peak"
    # The headline without defocus (where focus sits in the stack), the figures with it beside them.
    assert result.defocus_removed and cli["wavefront_removed_terms"] == "piston, tip, tilt, defocus"
    assert result.with_defocus["rms"] >= result.rms
    assert abs(result.rms - cli["rms_waves"]) <= 1e-9
    waves = np.array([row["value_waves"] for row in cli["coefficients"]])
    np.testing.assert_allclose(result.coefficients["waves"], waves, rtol=0, atol=1e-9)
    assert result.describes_data == cli["verdict"]["describes_data"]


def test_given_focus_plane_is_not_assumed():
    result = wfs.reconstruct(wfs.read(str(BEAD)), focus_plane=10, planes="4,7,10,13,16", max_iterations=5, **OPTICS)
    settings = {a["setting"] for a in result.assumptions}
    assert "focus-plane" not in settings and "planes" not in settings
