"""wavefront_studio.reconstruct against wavefront-cli, every input dtype and memory order, errors."""
import json

import numpy as np
import pytest

import wavefront_studio as wfs
from conftest import cli_coefficients, run_cli

TOL = 1e-12  # waves: the same core on the same data and settings


def assert_same_coefficients(result, json_path):
    index, waves, sigma, _ = cli_coefficients(json_path)
    table = result.coefficients
    np.testing.assert_array_equal(table["index"], index)
    np.testing.assert_allclose(table["waves"], waves, rtol=0, atol=TOL)
    np.testing.assert_allclose(table["uncertainty_waves"], sigma, rtol=0, atol=TOL)


def test_demo_file_matches_cli(demo_fits, tmp_path):
    """The demo stack read by wfs.read and fitted with the same settings gives the CLI's coefficients."""
    out = tmp_path / "cli.json"
    run_cli("reconstruct", "--input", demo_fits, "--order", 6, "--json", out, "--quiet")
    result = wfs.reconstruct(wfs.read(demo_fits), order=6)
    assert_same_coefficients(result, out)
    cli = json.loads(out.read_text())
    assert result.iterations == cli["iterations"]
    assert result.termination == "converged"
    assert abs(result.rms - cli["rms_waves"]) <= TOL


def test_array_with_options_matches_cli(small_stack, tmp_path):
    """An array with keyword options equals the CLI given the same planes (a header-less FITS) and flags."""
    astropy_fits = pytest.importorskip("astropy.io.fits")
    data, sampling, defocus = small_stack
    plain = tmp_path / "plain.fits"
    astropy_fits.PrimaryHDU(data).writeto(plain)  # no keywords: every setting comes from the flags
    out = tmp_path / "cli.json"
    run_cli("reconstruct", "--input", plain, "--wavelength", "633nm", "--sampling", sampling, "--defocus", ",".join(defocus),
            "--data-unit", "photons", "--order", 5, "--centre", "peak", "--json", out, "--quiet")
    result = wfs.reconstruct(data, wavelength="633nm", sampling=sampling, defocus=defocus, data_unit="photons", order=5, centre="peak")
    assert_same_coefficients(result, out)


DTYPES = [np.uint8, np.uint16, np.int16, np.int32, np.uint32, np.int64, np.float32, np.float64]


@pytest.mark.filterwarnings("ignore:the iteration limit")
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_every_dtype_and_order(small_stack, fast, dtype):
    """Integer and float stacks, C and Fortran order, strided views: the same values give the same fit."""
    data, sampling, defocus = small_stack
    # Whole numbers in every dtype's range, below uint8's largest value (the default saturation level).
    values = np.round(data / data.max() * 200.0)
    options = dict(fast, sampling=sampling, defocus=defocus)
    reference = wfs.reconstruct(values.astype(np.float64), **options).coefficients["waves"]
    typed = values.astype(dtype)
    for stack in (np.ascontiguousarray(typed), np.asfortranarray(typed), np.repeat(typed, 2, axis=2)[:, :, ::2]):
        assert stack.dtype == dtype
        got = wfs.reconstruct(stack, **options).coefficients["waves"]
        np.testing.assert_allclose(got, reference, rtol=0, atol=TOL)


def test_integer_dtype_saturates_at_its_largest_value(small_stack, fast):
    """A uint8 stack's 255 is its saturation level, as an 8-bit file's is: those pixels leave the fit."""
    data, sampling, defocus = small_stack
    values = np.round(data / data.max() * 400.0).clip(0, 255).astype(np.uint8)
    assert (values == 255).any()
    options = dict(fast, sampling=sampling, defocus=defocus, max_iterations=1)
    with pytest.warns(UserWarning, match="saturat"):
        masked = wfs.reconstruct(values, **options)
    assert np.isnan(masked.data[values == 255]).all()
    kept = wfs.reconstruct(values.astype(np.float64), **options)
    assert not np.isnan(kept.data[values == 255]).any()


def test_single_plane_and_rejected_dtypes(small_stack, fast):
    data, sampling, _ = small_stack
    result = wfs.reconstruct(data[1], **fast, sampling=sampling)
    assert result.model.shape == (1, 64, 64)
    with pytest.raises(TypeError, match="complex128"):
        wfs.reconstruct(data.astype(np.complex128), **fast, sampling=sampling)
    with pytest.raises(TypeError, match="bool"):
        wfs.reconstruct(data > 0, **fast, sampling=sampling)
    with pytest.raises(ValueError, match="4 dimensions"):
        wfs.reconstruct(data[None], **fast, sampling=sampling)


def test_bad_settings_raise_value_error_with_core_messages(small_stack):
    data, sampling, defocus = small_stack
    with pytest.raises(ValueError, match=r"^wavelength: the wavelength 633 m is not plausible.*did you mean 633nm\?"):
        wfs.reconstruct(data, wavelength="633", sampling=sampling, defocus=defocus)
    with pytest.raises(ValueError, match=r"^order: must be between 1 and 15 \(got 99\)"):
        wfs.reconstruct(data, wavelength="633nm", sampling=sampling, defocus=defocus, order=99)
    with pytest.raises(ValueError, match=r"^defocus has 2 entries but 3 planes take part"):
        wfs.reconstruct(data, wavelength="633nm", sampling=sampling, defocus=["1w", "0"])
    with pytest.raises(ValueError, match=r"^defocus: '-1' is neither waves"):
        wfs.reconstruct(data, wavelength="633nm", sampling=sampling, defocus=[-1, 0, 1])
    with pytest.raises(ValueError, match=r"^the wavelength is unknown: give wavelength"):
        wfs.reconstruct(data, sampling=sampling)
    with pytest.raises(ValueError, match=r"^centre: 'middle' is not one of auto\|none\|peak\|centroid"):
        wfs.reconstruct(data, wavelength="633nm", sampling=sampling, defocus=defocus, centre="middle")
    with pytest.raises(TypeError, match="did you mean 'wavelength'"):
        wfs.reconstruct(data, wavelenght="633nm")
    with pytest.raises(TypeError, match="no_background: expected True or False"):
        wfs.reconstruct(data, wavelength="633nm", no_background="yes")


def test_missing_and_bad_files_raise_os_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="nothing.fits: file not found"):
        wfs.read(tmp_path / "nothing.fits")
    junk = tmp_path / "junk.fits"
    junk.write_bytes(b"SIMPLE  = nonsense")
    with pytest.raises(OSError, match="junk.fits"):
        wfs.read(junk)
    with pytest.raises(OSError, match="nothing.json: file not found"):
        wfs.Settings.from_session(tmp_path / "nothing.json")


def test_session_settings_match_cli(demo_fits, tmp_path):
    """Settings.from_session fits the session's inputs with its settings, as wavefront-cli --session does."""
    session = tmp_path / "s.json"
    run_cli("reconstruct", "--input", demo_fits, "--order", 5, "--no-uncertainty", "--save-session", session, "--quiet")
    out = tmp_path / "cli.json"
    run_cli("reconstruct", "--session", session, "--max-iterations", 20, "--json", out, "--quiet")
    settings = wfs.Settings.from_session(session)
    assert settings.order == 5
    result = wfs.reconstruct(settings=settings, max_iterations=20)
    index, waves, _, _ = cli_coefficients(out)
    np.testing.assert_allclose(result.coefficients["waves"], waves, rtol=0, atol=TOL)


def test_simulated_session_is_refused_with_the_way_to_run_it(tmp_path):
    """A session of a preset's run (reconstruct --preset --save-session) holds no files: from_session says so."""
    session = tmp_path / "preset.json"
    run_cli("reconstruct", "--preset", "demo", "--grid", 64, "--max-iterations", 3, "--save-session", session, "--quiet")
    with pytest.raises(ValueError, match=r"preset\.json: holds a fit of the demo preset's simulated data.*simulate\(\"demo\""):
        wfs.Settings.from_session(session)
