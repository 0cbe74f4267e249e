"""Result's arrays and exports, the PSF stack and analysis, and the FastH products."""
import json

import numpy as np
import pytest

import wavefront_studio as wfs
from conftest import run_cli

EXPORTS = {  # export -> (file name, how the file starts)
    "json": ("r.json", b"{"), "phase-out": ("p.fits", b"SIMPLE"), "phase-png": ("p.png", b"\x89PNG"),
    "model-out": ("m.fits", b"SIMPLE"), "residual-out": ("res.fits", b"SIMPLE"), "csv": ("c.csv", b"index,n,m,name"),
    "psf-analysis": ("a.csv", b""), "psf-out": ("psf.fits", b"SIMPLE"), "results-fits": ("all.fits", b"SIMPLE"),
    "coefficients-json": ("c.json", b"{"), "pupil-out": ("pupil.fits", b"SIMPLE"), "psf-stack-out": ("stack.tif", b"II*\x00"),
}


@pytest.fixture(scope="module")
def demo_result(demo_fits):
    return wfs.reconstruct(wfs.read(demo_fits), order=6)


def test_arrays_share_the_results_memory(demo_result):
    phase = demo_result.phase
    assert phase.base is not None and not phase.flags.writeable and phase.dtype == np.float64
    assert np.shares_memory(phase, demo_result.phase)  # both views of the one map
    assert demo_result.amplitude is None  # no illumination fitted
    assert demo_result.model.shape == demo_result.residual.shape == (3, 256, 256)
    np.testing.assert_allclose(demo_result.data - demo_result.model, demo_result.residual, atol=1e-9, equal_nan=True)
    assert demo_result.chi2_per_plane.shape == (3,)
    table = demo_result.coefficients
    assert table.dtype.names[:6] == ("index", "n", "m", "name", "waves", "nm")
    np.testing.assert_allclose(table["nm"], table["waves"] * demo_result.wavelength * 1e9, rtol=1e-12)
    assert "Zernike" in demo_result.summary() or "Noll" in demo_result.summary()


def test_every_export_is_the_clis(demo_result, demo_fits, tmp_path):
    """save() writes each export of wavefront-cli; the text ones byte for byte as the CLI writes them."""
    for key, (name, start) in EXPORTS.items():
        path = tmp_path / name
        demo_result.save(path, key)
        assert path.read_bytes().startswith(start), key
    with pytest.raises(OSError, match="r.json"):
        demo_result.save(tmp_path / "r.json", "json")  # no overwrite without overwrite=True
    demo_result.save(tmp_path / "r.json", overwrite=True)
    assert json.loads(demo_result.to_json())["coefficients"] == json.loads((tmp_path / "r.json").read_text())["coefficients"]
    with pytest.raises(ValueError, match="x.png: the fit has no pupil amplitude"):
        demo_result.save(tmp_path / "x.png", "amplitude-png")  # no fitted amplitude: core's refusal
    with pytest.raises(ValueError, match="is not one of"):
        demo_result.save(tmp_path / "x.dat", "phase-jpeg")
    demo_result.save(tmp_path / "s.json", "session")
    assert json.loads((tmp_path / "s.json").read_text())["format"] == "wavefront-studio-session"
    cli = tmp_path / "cli"
    cli.mkdir()
    run_cli("reconstruct", "--input", demo_fits, "--order", 6, "--quiet", "--csv", cli / "c.csv", "--coefficients-json", cli / "c.json")
    for name in ("c.csv",):
        assert (cli / name).read_bytes() == (tmp_path / name).read_bytes()
    strip = lambda d: {k: v for k, v in d.items() if k not in ("date", "software")}
    assert strip(json.loads((cli / "c.json").read_text())) == strip(json.loads((tmp_path / "c.json").read_text()))


def test_array_input_cannot_save_a_session(small_stack, fast, tmp_path):
    data, sampling, defocus = small_stack
    result = wfs.reconstruct(data, **fast, sampling=sampling, defocus=defocus)
    with pytest.raises(ValueError, match="came from an array"):
        result.save(tmp_path / "s.json", "session")


def test_psf_stack_and_analysis(demo_result, tmp_path):
    stack = wfs.psf_stack(demo_result, "-1w:1w:0.5w", crop=64)
    assert stack.unit == "waves" and stack.planes.shape == (5, 64, 64)
    np.testing.assert_allclose(stack.z, [-1, -0.5, 0, 0.5, 1])
    assert wfs.psf_stack(demo_result).planes.shape[0] == 21
    with pytest.raises(ValueError, match="z: the fitted planes' defocus is in waves"):
        wfs.psf_stack(demo_result, "-1um:1um:0.5um")
    with pytest.raises(ValueError, match="pixel: needs the data's pixel size"):
        wfs.psf_stack(demo_result, pixel="50nm")
    analysis = wfs.analyse_psf(demo_result)
    # The analysis is of the fitted in-focus PSF, its defocus included: the Strehl with defocus (the headline has it
    # removed for the demo's planes at -1, 0, +1 wave).
    assert demo_result.defocus_removed
    assert analysis.strehl == pytest.approx(demo_result.with_defocus["strehl"], rel=1e-6)
    assert analysis.mtf_fitted.shape == analysis.frequency.shape
    demo_result.save(tmp_path / "a.csv", "psf-analysis")
    assert (tmp_path / "a.csv").read_text() == analysis.to_csv()
    assert analysis.fitted_psf.max() == pytest.approx(analysis.strehl, rel=1e-6)


def householder_matrix(v):
    d, k = v.shape
    q = np.eye(d)
    for i in range(k):
        u = v[:, i:i + 1]
        q = q @ (np.eye(d) - 2 * u @ u.T / (u.T @ u))
    return q


@pytest.mark.parametrize("algorithm", ["sequential", "fasth", "ut", "tree"])
def test_fasth_product_and_gradient(algorithm):
    rng = np.random.default_rng(7)
    d, k, m = 24, 20, 5
    v, x, g = rng.standard_normal((d, k)), rng.standard_normal((d, m)), rng.standard_normal((d, m))
    q = householder_matrix(v)
    a = wfs.fasth.product(v, x, algorithm=algorithm, block_size=4)
    np.testing.assert_allclose(a, q @ x, atol=1e-12)
    np.testing.assert_allclose(wfs.fasth.product(v, x, transpose=True, algorithm=algorithm, block_size=4), q.T @ x, atol=1e-12)
    grad_v, grad_x = wfs.fasth.product_gradient(v, x, g, algorithm=algorithm, block_size=4)
    np.testing.assert_allclose(grad_x, q.T @ g, atol=1e-12)
    # dL/dV against central differences of L = sum(g * A).
    loss = lambda vv: float(np.sum(g * (householder_matrix(vv) @ x)))
    h, numeric = 1e-6, np.zeros_like(v)
    for i in range(d):
        for j in range(k):
            e = np.zeros_like(v)
            e[i, j] = h
            numeric[i, j] = (loss(v + e) - loss(v - e)) / (2 * h)
    np.testing.assert_allclose(grad_v, numeric, atol=1e-6)
    with pytest.raises(ValueError, match="fasth: X has 3 rows"):
        wfs.fasth.product(v, x[:3])
    with pytest.raises(ValueError, match="algorithm: 'fast' is not one of"):
        wfs.fasth.product(v, x, algorithm="fast")


def test_psf_stack_axis_at_the_middle_in_either_origin(demo_result):
    """The optical axis is at [n // 2, n // 2] as the array is read, row 0 at the bottom or at the top: the top-first
    planes of an even size are the window one row higher (as the TIFF export writes them), not a plain flip."""
    lower = wfs.psf_stack(demo_result, "-1w:1w:1w", crop=64).planes
    upper = wfs.psf_stack(demo_result, "-1w:1w:1w", crop=64, origin="upper").planes
    np.testing.assert_array_equal(upper[:, 1:, :], lower[:, ::-1, :][:, :-1, :])
    odd_lower = wfs.psf_stack(demo_result, "0w:0w:1w", crop=61).planes
    odd_upper = wfs.psf_stack(demo_result, "0w:0w:1w", crop=61, origin="upper").planes
    np.testing.assert_array_equal(odd_upper, odd_lower[:, ::-1, :])
