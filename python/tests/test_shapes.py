"""Stacks that are not square, both ways (issue 47 item 4): 56 rows x 64 columns and 64 rows x 56 columns.

The same planes go in as an array, as a FITS cube and as a TIFF stack read by the module, and as the FITS cube given
to wavefront-cli; each way gives the same shapes, pixels and coefficients, and the exports (model and residual FITS)
of the module and of the CLI hold the same images in the data's shape. A width and height swapped anywhere, or a
transposed plane, changes a shape or a pixel. (The C++ readers and the CLI on the same shapes: tests/app/tst_shapes.)
"""
import warnings

import numpy as np
import pytest

import wavefront_studio as wfs
from conftest import cli_coefficients, run_cli
from test_orientation import write_fits, write_tiff


@pytest.fixture(scope="module")
def demo_64():
    stack = wfs.simulate("demo", grid=64)
    return stack.data, stack.metadata["sampling"], stack.defocus


def cut(data, rows, cols):
    """The planes cut to rows x cols about their centre, scaled to a 16-bit camera (peak 60000) and rounded."""
    r0, c0 = (data.shape[1] - rows) // 2, (data.shape[2] - cols) // 2
    planes = data[:, r0:r0 + rows, c0:c0 + cols]
    return np.round(np.clip(planes, 0, None) * (60000.0 / data.max()))


def options(sampling, defocus):
    return dict(wavelength="633nm", sampling=sampling, defocus=defocus, data_unit="counts", order=4, max_iterations=40)


@pytest.mark.parametrize("rows, cols", [(56, 64), (64, 56)])
def test_non_square_through_module_cli_and_exports(tmp_path, demo_64, rows, cols):
    data, sampling, defocus = demo_64
    planes = cut(data, rows, cols)
    assert planes.shape == (3, rows, cols)
    fits, tiff = tmp_path / "psf.fits", tmp_path / "psf.tif"
    write_fits(fits, planes)  # row 0 first: the bottom, the program's frame
    write_tiff(tiff, planes[:, ::-1, :])  # top row first, as an image library stores it

    # The readers: the same shape and pixels, neither transposed nor flipped.
    for path in (fits, tiff):
        stack = wfs.read(path)
        assert stack.data.shape == (3, rows, cols), path.name
        np.testing.assert_array_equal(stack.data, planes, err_msg=path.name)

    # The module on the array, on each file, and wavefront-cli on the FITS cube: the same coefficients.
    opts = options(sampling, defocus)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = wfs.reconstruct(planes, **opts)
        from_fits = wfs.reconstruct(wfs.read(fits), **opts)
        from_tiff = wfs.reconstruct(wfs.read(tiff), **opts)
    cli_json, cli_model, cli_residual = tmp_path / "cli.json", tmp_path / "cli-model.fits", tmp_path / "cli-residual.fits"
    run_cli("reconstruct", "--input", fits, "--wavelength", "633nm", "--sampling", sampling, "--defocus=" + ",".join(defocus),
            "--data-unit", "counts", "--order", 4, "--max-iterations", 40, "--json", cli_json, "--model-out", cli_model,
            "--residual-out", cli_residual, "--quiet")
    index, waves, _, _ = cli_coefficients(cli_json)
    for other in (result, from_fits, from_tiff):
        np.testing.assert_array_equal(other.coefficients["index"], index)
        np.testing.assert_allclose(other.coefficients["waves"], waves, rtol=0, atol=1e-12)

    # The result's images: the data's shape; the data as given less the camera offset the preparation takes off each
    # plane (a constant per plane, so a flipped or transposed plane shows); model + residual = data.
    for name in ("data", "model", "residual", "normalized_residual"):
        assert getattr(result, name).shape == (3, rows, cols), name
    offset = planes - result.data
    np.testing.assert_allclose(offset, offset.mean(axis=(1, 2), keepdims=True) + 0 * offset, rtol=0, atol=1e-9 * 60000)
    np.testing.assert_allclose(result.model + result.residual, result.data, rtol=0, atol=1e-9 * 60000)

    # The exports: the module's and the CLI's model and residual FITS, read back, are the result's images.
    for what, cli_file in (("model-out", cli_model), ("residual-out", cli_residual)):
        mine = tmp_path / f"module-{what}.fits"
        result.save(mine, what)
        for path in (mine, cli_file):
            back = wfs.read(path).data
            assert back.shape == (3, rows, cols), (what, path.name)
            expected = result.model if what == "model-out" else result.residual
            np.testing.assert_allclose(back, expected, rtol=0, atol=1e-9 * 60000, err_msg=f"{what} {path.name}")
