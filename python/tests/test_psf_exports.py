"""Issue 46: the PSF model exports that localisation and deconvolution software load, read back by readers that share
no code with the program: scipy.io.loadmat (the SMAP/DECODE spline calibration), h5py (the HDF5 model file) and
tifffile (the voxel size of the ImageJ and OME-TIFF stacks). The fit is the shared bead stack's, as the README's
"Your own data" fits it (605 nm, NA 1.1 water, 0.1 um pixels, crop 64, order 6).

The spline is evaluated here from its coefficients (docs/exports.md: coeff[i1, i2, i3, p1 + 4 p2 + 16 p3], 0-based
spline coordinates, dimension 1 the rows top first) and compared with the fitted model:
- at the voxel centres with the PSF samples, to 1e-4 of the peak;
- half way between them along z with the model computed there (psf_stack at the mid planes), and half way along x and
  y with the model on pixels of half the size (psf_stack(pixel=0.05um): a sample every half pixel, 4 of its pixels make
  one of the data's), to SMOOTH_Z and SMOOTH_XY of the peak: a cubic spline through samples 0.1 um apart is that close
A PNG of an x-z section of the evaluated spline is written for a person to look at (WFS_TEST_FIGURES=folder keeps it).
"""
import os
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

import wavefront_studio as wfs
from conftest import ROOT, cli_path

import subprocess

scipy_io = pytest.importorskip("scipy.io")
h5py = pytest.importorskip("h5py")
tifffile = pytest.importorskip("tifffile")

BEAD = ROOT / "tests" / "data" / "bead_zstack_BIL113.tif"
BEAD_OPTIONS = dict(wavelength="605nm", na=1.1, immersion=1.33, pixel_scale="0.1um", crop=64, order=6)
Z = "-1um:1um:0.1um"  # 21 planes, focus the middle one
Z_MID = "-0.95um:0.95um:0.1um"
Z_COARSE = "-1um:1um:0.25um"  # 9 planes: a z step unlike the pixel, so the axes' order in the voxel size shows
CROP = 31
AT_CENTRES = 1e-4  # of the peak
SMOOTH_XY = 0.015  # of the peak, half way between the samples along x and y
SMOOTH_Z = 0.002  # along z (samples 100 nm apart, the PSF far smoother along z)


@pytest.fixture(scope="module")
def bead():
    result = wfs.reconstruct(wfs.read(BEAD), **BEAD_OPTIONS)
    stack = wfs.psf_stack(result, Z, crop=CROP, origin="upper")
    return result, stack


def evaluate(coeff, s):
    """The spline at 0-based coordinates s (..., 3): cell floor(s) (the last cell at the far edge), t = s - cell."""
    s = np.asarray(s, dtype=float)
    cells = np.array(coeff.shape[:3])
    cell = np.minimum(np.floor(s).astype(int), cells - 1)
    t = s - cell
    c = coeff[cell[..., 0], cell[..., 1], cell[..., 2]].astype(float).reshape(s.shape[:-1] + (4, 4, 4))  # [p3][p2][p1]
    powers = t[..., :, None] ** np.arange(4)  # (..., 3, 4)
    return np.einsum("...kji,...i,...j,...k->...", c, powers[..., 0, :], powers[..., 1, :], powers[..., 2, :])


def grid(*axes):
    return np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1)


def test_spline_calibration_reads_in_scipy_and_follows_the_model(bead, tmp_path):
    result, stack = bead
    path = tmp_path / "bead-3dcal.mat"
    result.save(path, "spline-mat-out", psf_stack=stack)
    sxy = scipy_io.loadmat(path, struct_as_record=False, squeeze_me=True)["SXY"]
    cs = sxy.cspline
    coeff = cs.coeff
    assert coeff.dtype == np.float32 and coeff.shape == (CROP - 1, CROP - 1, 20, 64)
    assert cs.x0 == CROP // 2 + 1  # 1-based: DECODE's origin is x0 - 1 = 15
    assert cs.z0 == pytest.approx(10.0, abs=1e-9)  # 0-based slice of z = 0
    assert cs.dz == pytest.approx(100.0, rel=1e-9)  # nm
    assert sxy.wavefrontstudio.pixelsize_nm == pytest.approx(100.0, rel=1e-9)
    assert "top first" in sxy.wavefrontstudio.conventions

    model = np.asarray(stack.planes)  # (z, rows top first, columns)
    scale = model[10].sum()
    model = model / scale
    peak = model.max()
    np.testing.assert_allclose(sxy.PSF, np.transpose(model, (1, 2, 0)), rtol=1e-6, atol=1e-9 * peak)

    # At the voxel centres: the samples.
    n = np.arange(CROP)
    centres = evaluate(coeff, grid(n, n, np.arange(21)))
    at_centres = np.abs(centres - np.transpose(model, (1, 2, 0))).max() / peak
    print(f"spline at the voxel centres: max |spline - model| = {at_centres:.2e} of the peak")
    assert at_centres < AT_CENTRES

    # Half way along z: the model computed at the mid planes.
    mid = np.asarray(wfs.psf_stack(result, Z_MID, crop=CROP, origin="upper").planes) / scale
    between_z = evaluate(coeff, grid(n, n, np.arange(20) + 0.5))
    off_z = np.abs(between_z - np.transpose(mid, (1, 2, 0))).max() / peak
    # Half way along x and y: the model on half-size pixels (the same focus and axis; 4 of them per data pixel).
    fine = wfs.psf_stack(result, Z, pixel="0.05um", crop=2 * CROP + 1, origin="upper")
    assert fine.pixel_scale == pytest.approx(0.5, rel=1e-12)
    fine_planes = np.asarray(fine.planes) * 4 / scale  # axis at 31: data pixel i is fine pixel 2 i + 1
    np.testing.assert_allclose(fine_planes[:, 1::2, 1::2], model, atol=2e-3 * peak)  # the same model on the samples
    half = np.arange(CROP - 1) + 0.5
    between_xy = evaluate(coeff, grid(half, half, np.arange(21)))
    off_xy = np.abs(between_xy - np.transpose(fine_planes[:, 2:-1:2, 2:-1:2], (1, 2, 0))).max() / peak
    print(f"spline between the voxel centres: max |spline - model| = {off_z:.2e} (z) and {off_xy:.2e} (x, y) of the peak")
    assert off_z < SMOOTH_Z and off_xy < SMOOTH_XY

    # What a person looks at: an x-z section through the axis, the spline at 8 points per voxel, beside the samples.
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fine_x = np.linspace(0, CROP - 1, 8 * (CROP - 1) + 1)
    fine_z = np.linspace(0, 20, 8 * 20 + 1)
    section = evaluate(coeff, grid(np.array([CROP // 2]), fine_x, fine_z))[0]  # (x, z) through the axis's row
    focus = evaluate(coeff, grid(fine_x, fine_x, np.array([10.0])))[..., 0]
    figure, axes = plt.subplots(1, 3, figsize=(13, 4.4))
    extent_xz = [(-0.5 - cs.z0) * cs.dz, (20.5 - cs.z0) * cs.dz, (CROP - 0.5 - cs.x0 + 1) * 100, (-0.5 - cs.x0 + 1) * 100]
    axes[0].imshow(np.transpose(model[:, CROP // 2, :]), extent=extent_xz, aspect="auto", cmap="magma")
    axes[0].set_title("model samples, x-z through the axis")
    axes[1].imshow(section, extent=extent_xz, aspect="auto", cmap="magma")
    axes[1].set_title("spline from 3dcal.mat (8 points per voxel)")
    for a in axes[:2]:
        a.set_xlabel("z (nm)")
        a.set_ylabel("x (nm)")
    axes[2].imshow(focus, extent=[-1550, 1550, 1550, -1550], cmap="magma")
    axes[2].set_title("spline at z = 0 (rows top first)")
    axes[2].set_xlabel("x (nm)")
    axes[2].set_ylabel("y (nm, down)")
    figure.suptitle(f"bead stack fit as SMAP/DECODE spline: peak {peak:.3g}, centres {at_centres:.1e}, "
                    f"between {max(off_z, off_xy):.1e} of the peak")
    figure.tight_layout()
    png = tmp_path / "spline-section.png"
    figure.savefig(png, dpi=80)
    plt.close(figure)
    assert png.read_bytes().startswith(b"\x89PNG")
    if os.environ.get("WFS_TEST_FIGURES"):
        shutil.copy(png, Path(os.environ["WFS_TEST_FIGURES"]) / png.name)


def coarse(result):
    """The fit's 3-D PSF at 100 nm pixels and a 250 nm z step."""
    return wfs.psf_stack(result, Z_COARSE, crop=CROP, origin="upper")


def test_hdf5_model_holds_values_with_units(bead, tmp_path):
    result = bead[0]
    stack = coarse(result)
    path = tmp_path / "bead-psf-model.h5"
    result.save(path, psf_stack=stack)  # the file name's ending chooses
    with h5py.File(path, "r") as f:
        assert f.attrs["format"] == "wavefront-studio-psf-model" and f.attrs["format_version"] == 1
        assert f["optics/wavelength"][()] == pytest.approx(605e-9) and f["optics/wavelength"].attrs["units"] == "m"
        assert f["optics/numerical_aperture"][()] == pytest.approx(1.1)
        assert f["optics/pixel_size"][()] == pytest.approx(1e-7) and f["optics/pixel_size"].attrs["units"] == "m"
        psf = f["psf/stack"]
        assert psf.shape == (9, CROP, CROP) and psf.attrs["units"] == "1"
        np.testing.assert_allclose(psf.attrs["voxel_size"], [2.5e-7, 1e-7, 1e-7], rtol=1e-9)  # [dz, dy, dx]
        assert psf.attrs["voxel_size_units"] == "m"
        np.testing.assert_allclose(psf.attrs["element_size_um"], [0.25, 0.1, 0.1], rtol=1e-9)
        np.testing.assert_array_equal(psf[...][:, ::-1, :], np.asarray(stack.planes))  # row 0 at the bottom in the file
        np.testing.assert_allclose(f["psf/z"][...], np.linspace(-1e-6, 1e-6, 9), atol=1e-15)
        assert f["psf/z"].attrs["units"] == "m"
        table = result.coefficients
        z = f["zernike"]
        assert z.attrs["ordering"] == "noll" and z.attrs["normalisation"].startswith("rms")
        np.testing.assert_array_equal(z["index"][...], table["index"])
        np.testing.assert_array_equal(z["n"][...], table["n"])
        np.testing.assert_array_equal(z["m"][...], table["m"])
        np.testing.assert_array_equal(z["value"][...], table["waves"])
        np.testing.assert_array_equal(z["uncertainty"][...], table["uncertainty_waves"])
        assert z["value"].attrs["units"] == "waves" and z["value_nm"].attrs["units"] == "nm"
        phase = f["pupil/phase"]
        assert phase.attrs["units"] == "rad"
        np.testing.assert_array_equal(phase[...], result.phase)  # both row 0 at the bottom


def test_tiff_stacks_carry_their_voxel_size(bead, tmp_path):
    result = bead[0]
    stack = coarse(result)
    imagej, ome = tmp_path / "bead-psf.tif", tmp_path / "bead-psf.ome.tif"
    result.save(imagej, "psf-stack-out", psf_stack=stack)
    result.save(ome, "psf-stack-out", psf_stack=stack)
    planes = np.asarray(stack.planes, dtype=np.float32)
    with tifffile.TiffFile(imagej) as tif:
        assert tif.is_imagej
        meta = tif.imagej_metadata
        assert meta["unit"] == "micron" and meta["spacing"] == pytest.approx(0.25)
        numerator, denominator = tif.pages[0].tags["XResolution"].value
        assert denominator / numerator == pytest.approx(0.1, rel=1e-9)  # microns per pixel
        numerator, denominator = tif.pages[0].tags["YResolution"].value
        assert denominator / numerator == pytest.approx(0.1, rel=1e-9)
        np.testing.assert_array_equal(tif.asarray(), planes)
    with tifffile.TiffFile(ome) as tif:
        assert tif.is_ome and tif.series[0].axes == "ZYX"
        pixels = ET.fromstring(tif.ome_metadata).find(".//{*}Pixels")
        for axis, size in zip("XYZ", (0.1, 0.1, 0.25)):
            assert float(pixels.get(f"PhysicalSize{axis}")) == pytest.approx(size)
            assert pixels.get(f"PhysicalSize{axis}Unit") == "µm"
        np.testing.assert_array_equal(tif.asarray(), planes)


def test_a_spline_of_a_fit_without_pixel_size_says_so(small_stack, fast, tmp_path):
    data, sampling, defocus = small_stack
    result = wfs.reconstruct(data, sampling=sampling, defocus=defocus, **fast)
    path = tmp_path / "a-3dcal.mat"
    with pytest.raises(ValueError, match="needs the pixel size in the sample plane.*--pixel-scale"):
        result.save(path, "spline-mat-out")
    assert not path.exists()


def test_existing_files_are_kept_and_a_run_writes_all_or_nothing(bead, tmp_path):
    result, stack = bead
    path = tmp_path / "kept-3dcal.mat"
    path.write_bytes(b"the user's calibration")
    with pytest.raises(OSError, match="kept-3dcal.mat"):
        result.save(path, "spline-mat-out", psf_stack=stack)
    assert path.read_bytes() == b"the user's calibration"
    result.save(path, "spline-mat-out", psf_stack=stack, overwrite=True)
    assert scipy_io.loadmat(path, struct_as_record=False, squeeze_me=True)["SXY"].cspline.coeff.shape[3] == 64

    # wavefront-cli: an export that cannot be made (no pixel size: the sampling given as Q) leaves no file of the run.
    demo = tmp_path / "demo.fits"
    subprocess.run([cli_path(), "simulate", "--preset", "demo", "--grid", "64", "--out", demo], check=True, capture_output=True)
    outputs = [tmp_path / "run.json", tmp_path / "run-psf.ome.tif", tmp_path / "run-3dcal.mat"]
    done = subprocess.run([cli_path(), "reconstruct", "--input", demo, "--order", "4", "--max-iterations", "20", "--quiet",
                           "--json", outputs[0], "--psf-stack-out", outputs[1], "--spline-mat-out", outputs[2]],
                          capture_output=True, text=True)
    assert done.returncode == 1, done.stderr
    assert "run-3dcal.mat" in done.stderr and "pixel size" in done.stderr
    assert not any(p.exists() for p in outputs)
    # An existing file without --force: refused before the fit, nothing written.
    outputs[2].write_bytes(b"kept")
    done = subprocess.run([cli_path(), "reconstruct", "--input", demo, "--order", "4", "--quiet", "--json", outputs[0],
                           "--spline-mat-out", outputs[2]], capture_output=True, text=True)
    assert done.returncode != 0 and "run-3dcal.mat" in done.stderr
    assert outputs[2].read_bytes() == b"kept" and not outputs[0].exists()
