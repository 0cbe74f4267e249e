"""Which way an array's rows run (origin="lower" / "upper", matplotlib's words) and stacks that are not square.

The program holds images with row 0 at the bottom (FITS orientation, as astropy reads a cube); tifffile, PIL and
imageio hand a TIFF or PNG over top row first. origin="upper" takes and returns arrays that way, so no one flips
by hand. The stacks here are 56 rows x 64 columns, so that swapped axes or a flip change the answer (issue 47: the
other Python tests use square stacks only).
"""
import struct
import warnings

import numpy as np
import pytest

import wavefront_studio as wfs
from conftest import cli_coefficients, run_cli

NY, NX = 56, 64  # rows, columns: not square


def write_fits(path, cube):
    """A minimal FITS cube (BITPIX -64, no other keyword): its first row is row 0, the bottom, as astropy writes it."""
    cube = np.asarray(cube, dtype=">f8")
    planes, ny, nx = cube.shape
    cards = ["SIMPLE  =                    T", "BITPIX  =                  -64", "NAXIS   =                    3",
             f"NAXIS1  = {nx:20d}", f"NAXIS2  = {ny:20d}", f"NAXIS3  = {planes:20d}", "END"]
    header = "".join(card.ljust(80) for card in cards).encode("ascii")
    header += b" " * (-len(header) % 2880)
    data = cube.tobytes()
    path.write_bytes(header + data + b"\0" * (-len(data) % 2880))


def write_tiff(path, cube):
    """A minimal multi-page 16-bit TIFF, each page's rows stored in the array's order: row 0 of the array is the
    first stored row, the top of the picture, as tifffile.imwrite stores it (and tifffile.imread reads it back)."""
    cube = np.asarray(cube, dtype="<u2")
    planes, ny, nx = cube.shape
    out = bytearray(b"II*\0" + struct.pack("<I", 0))
    previous = 4  # where the offset of the next IFD goes
    for page in cube:
        strip = len(out)
        out += page.tobytes()
        if len(out) % 2:
            out += b"\0"
        ifd = len(out)
        struct.pack_into("<I", out, previous, ifd)
        entries = [(256, 4, nx), (257, 4, ny), (258, 3, 16), (259, 3, 1), (262, 3, 1), (273, 4, strip),
                   (277, 3, 1), (278, 4, ny), (279, 4, page.nbytes), (339, 3, 1)]
        out += struct.pack("<H", len(entries))
        for tag, kind, value in entries:
            out += struct.pack("<HHI", tag, kind, 1) + (struct.pack("<HH", value, 0) if kind == 3 else struct.pack("<I", value))
        previous = len(out)
        out += struct.pack("<I", 0)
    path.write_bytes(bytes(out))


def marked_stack():
    """A (3, 56, 64) stack as an image library holds it, top row first, with a mark near the picture's top left."""
    upper = np.full((3, NY, NX), 100, dtype=np.uint16)
    upper[:, 2, 3] = 4000 + np.arange(3)  # row 2 from the top, column 3
    upper[:, NY - 5, NX - 9] = 900  # and a fainter one near the bottom right
    return upper


@pytest.fixture(scope="module")
def psf_stack_56x64():
    """The small demo stack cut to 56 x 64 (rows 4..59 of 64: the PSF stays inside), with its settings."""
    stack = wfs.simulate("demo", grid=64)
    data = stack.data[:, 4:60, :]
    assert data.shape == (3, NY, NX)
    return data, stack.metadata["sampling"], stack.defocus


def options(sampling, defocus):
    return dict(wavelength="633nm", sampling=sampling, defocus=defocus, data_unit="photons", order=4, max_iterations=40)


def fit(stack, **kwargs):
    """reconstruct() with its data warnings (a short fit's iteration limit) kept quiet."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return wfs.reconstruct(stack, **kwargs)


def test_non_square_files_keep_their_shape(tmp_path):
    """A (3, 56, 64) cube written as FITS and as TIFF reads back as (3, 56, 64), neither transposed nor flipped."""
    upper = marked_stack()
    lower = upper[:, ::-1, :]
    fits, tiff = tmp_path / "cube.fits", tmp_path / "cube.tif"
    write_fits(fits, lower)  # FITS: the first stored row is the bottom one
    write_tiff(tiff, upper)  # TIFF: the first stored row is the top one
    for path in (fits, tiff):
        stack = wfs.read(path)
        assert stack.origin == "lower"
        assert stack.data.shape == (3, NY, NX), path.name
        np.testing.assert_array_equal(stack.data, lower, err_msg=path.name)
        as_read = wfs.read(path, origin="upper")
        assert as_read.origin == "upper" and as_read.data.shape == (3, NY, NX)
        np.testing.assert_array_equal(as_read.data, upper, err_msg=path.name)  # what tifffile.imread gives
    # The mark near the top left is at row NY - 1 - 2 of the program's frame (row 0 at the bottom).
    assert np.unravel_index(np.argmax(wfs.read(tiff).data[0]), (NY, NX)) == (NY - 1 - 2, 3)


def test_origin_upper_lands_where_row_0_at_the_bottom_says(psf_stack_56x64):
    """An image passed top row first with origin="upper" is the program's image flipped: the same as passing
    np.flipud of it with origin="lower"; the fit's arrays come back in the orientation they went in."""
    data, sampling, defocus = psf_stack_56x64
    upper = data[:, ::-1, :].copy()  # as a TIFF library would hand the same planes over
    upper[:, 2:4, 3:5] += 0.2 * data.max()  # an asymmetric mark near the picture's top left
    opts = dict(options(sampling, defocus), max_iterations=1)
    from_upper = fit(upper, origin="upper", **opts)
    from_lower = fit(np.stack([np.flipud(plane) for plane in upper]), origin="lower", **opts)
    assert from_upper.origin == "upper" and from_lower.origin == "lower"
    assert from_upper.data.shape == from_lower.data.shape == (3, NY, NX)
    np.testing.assert_array_equal(from_upper.data[:, ::-1, :], from_lower.data)
    np.testing.assert_array_equal(from_upper.model[:, ::-1, :], from_lower.model)
    # The mark is near the top left of the array given with origin="upper", near the bottom left of the program's frame.
    row, col = np.unravel_index(np.nanargmax(from_lower.data[1][:, :8]), (NY, 8))
    assert row >= NY - 4 and col in (3, 4)
    row, col = np.unravel_index(np.nanargmax(from_upper.data[1][:, :8]), (NY, 8))
    assert row <= 3 and col in (3, 4)


def test_upper_on_flipped_data_fits_the_same_coefficients(psf_stack_56x64):
    """reconstruct(np.flipud-ed planes, origin="upper") fits what reconstruct(planes) fits, to 1e-9 wave, and every
    image of the result (data, model, residual, phase, PSF stack, PSF analysis) is the other's flipped."""
    data, sampling, defocus = psf_stack_56x64
    opts = options(sampling, defocus)
    lower = fit(data, **opts)
    upper = fit(np.ascontiguousarray(data[:, ::-1, :]), origin="upper", **opts)
    np.testing.assert_allclose(upper.coefficients["waves"], lower.coefficients["waves"], rtol=0, atol=1e-9)
    assert upper.iterations == lower.iterations
    for name in ("data", "model", "residual", "normalized_residual"):
        a, b = getattr(upper, name), getattr(lower, name)
        assert a.shape == b.shape == (3, NY, NX), name
        np.testing.assert_array_equal(a[:, ::-1, :], b, err_msg=name)
    np.testing.assert_array_equal(upper.phase[::-1], lower.phase)
    assert not upper.phase.flags.writeable and upper.phase.base is not None  # still a view, not a copy
    psf_upper, psf_lower = wfs.psf_stack(upper, "-1w:1w:1w", crop=32), wfs.psf_stack(lower, "-1w:1w:1w", crop=32)
    assert psf_upper.origin == "upper" and psf_lower.origin == "lower"
    # Even heights: top row first is the window one row higher, so that the optical axis stays at row n // 2.
    np.testing.assert_allclose(psf_upper.planes[:, 1:, :], psf_lower.planes[:, ::-1, :][:, :-1, :], rtol=0, atol=1e-15)
    np.testing.assert_array_equal(wfs.psf_stack(lower, "-1w:1w:1w", crop=32, origin="upper").planes[:, 1:, :],
                                  psf_lower.planes[:, ::-1, :][:, :-1, :])
    a_upper, a_lower = wfs.analyse_psf(upper), wfs.analyse_psf(lower)
    assert a_upper.origin == "upper"
    np.testing.assert_allclose(a_upper.fitted_psf[::-1], a_lower.fitted_psf, rtol=0, atol=1e-15)
    np.testing.assert_array_equal(wfs.analyse_psf(lower, origin="upper").fitted_psf, a_lower.fitted_psf[::-1])


def test_a_stacks_origin_goes_on_to_the_result(tmp_path, psf_stack_56x64):
    """read(..., origin="upper") hands the rows out top first, and reconstruct of that Stack returns its arrays so."""
    data, sampling, defocus = psf_stack_56x64
    fits = tmp_path / "psf.fits"
    write_fits(fits, data)
    opts = dict(options(sampling, defocus), max_iterations=1)
    result = fit(wfs.read(fits, origin="upper"), **opts)
    told = fit(wfs.read(fits, origin="upper"), origin="lower", **opts)
    assert result.origin == "upper" and told.origin == "lower"
    np.testing.assert_array_equal(result.data[:, ::-1, :], told.data)
    simulated = wfs.simulate("demo", grid=64, origin="upper")
    assert simulated.origin == "upper"
    np.testing.assert_array_equal(simulated.data, wfs.simulate("demo", grid=64).data[:, ::-1, :])


def test_bad_pixels_are_in_the_arrays_orientation(psf_stack_56x64):
    """bad_pixels (column, row) given with origin="upper" count rows from the top, as the array does."""
    data, sampling, defocus = psf_stack_56x64
    opts = dict(options(sampling, defocus), max_iterations=1)
    upper = fit(data[:, ::-1, :], origin="upper", bad_pixels=[(5, 2)], **opts)
    lower = fit(data, bad_pixels=[(5, NY - 1 - 2)], **opts)
    assert np.isnan(upper.data[:, 2, 5]).all()
    np.testing.assert_array_equal(np.isnan(upper.data[:, ::-1, :]), np.isnan(lower.data))


def test_non_square_array_matches_the_cli(tmp_path, psf_stack_56x64):
    """The 56 x 64 planes as an array and as a FITS file given to wavefront-cli: the same coefficients."""
    data, sampling, defocus = psf_stack_56x64
    fits, out = tmp_path / "psf.fits", tmp_path / "cli.json"
    write_fits(fits, data)
    run_cli("reconstruct", "--input", fits, "--wavelength", "633nm", "--sampling", sampling, "--defocus", ",".join(defocus),
            "--data-unit", "photons", "--order", 4, "--max-iterations", 40, "--json", out, "--quiet")
    result = fit(data, **options(sampling, defocus))
    index, waves, _, _ = cli_coefficients(out)
    np.testing.assert_array_equal(result.coefficients["index"], index)
    np.testing.assert_allclose(result.coefficients["waves"], waves, rtol=0, atol=1e-12)


@pytest.mark.parametrize("call", ["reconstruct", "read", "simulate", "psf_stack", "analyse_psf"])
def test_unknown_origin_is_refused_by_name(call, tmp_path, psf_stack_56x64):
    data, sampling, defocus = psf_stack_56x64
    fits = tmp_path / "psf.fits"
    write_fits(fits, data)
    with pytest.raises(ValueError) as error:
        if call == "reconstruct":
            wfs.reconstruct(data, origin="top", **options(sampling, defocus))
        elif call == "read":
            wfs.read(fits, origin="top")
        elif call == "simulate":
            wfs.simulate("demo", grid=64, origin="top")
        else:
            result = fit(data, **dict(options(sampling, defocus), max_iterations=1))
            getattr(wfs, call)(result, origin="top")
    message = str(error.value)
    assert message.startswith("origin:") and "'top'" in message and "'lower'" in message and "'upper'" in message, message
    with pytest.raises(TypeError, match="origin"):
        wfs.read(fits, origin=1)
