"""Issue 41: every bad argument is a Python exception with core's message, never a crash or 'Internal error'."""
import numpy as np
import pytest

import wavefront_studio as wfs


@pytest.fixture(scope="module")
def stack():
    return wfs.simulate("demo", grid=64)


def test_self_referential_and_deep_lists_are_type_errors(stack):
    loop = [0]
    loop.append(loop)
    with pytest.raises(TypeError, match="defocus"):
        wfs.reconstruct(stack, defocus=loop)
    deep = [0.0]
    for _ in range(100000):
        deep = [deep]
    with pytest.raises(TypeError, match="defocus"):
        wfs.reconstruct(stack, defocus=deep)
    with pytest.raises(ValueError, match="stack: the list is not"):
        wfs.reconstruct(deep)


def test_ragged_list_and_huge_view_are_value_errors():
    with pytest.raises(ValueError, match="inhomogeneous"):
        wfs.reconstruct([[1, 2], [3]])
    # Refused on its shape, before a float64 copy of 648 MB is made.
    with pytest.raises(ValueError, match="more than this program loads"):
        wfs.reconstruct(np.broadcast_to(np.zeros(1), (9000, 9000)))
    with pytest.raises(ValueError, match="more than this program loads"):
        wfs.reconstruct(np.broadcast_to(np.zeros(1), (1000, 100000, 100000)))


def test_wrong_types_name_the_argument(stack, tmp_path):
    with pytest.raises(TypeError, match="Settings.from_session"):
        wfs.reconstruct(stack, settings="s.json")
    with pytest.raises(FileNotFoundError):
        wfs.read(bytes(tmp_path / "missing.fits"))
    result = wfs.reconstruct(stack, max_iterations=3, data_unit="photons")
    with pytest.raises(TypeError, match="z: expected a str"):
        wfs.psf_stack(result, z=5)
    with pytest.raises(ValueError, match="not plausible"):
        wfs.psf_stack(result, z="0:1e297w:1e297w")
    existing = tmp_path / "r.json"
    existing.write_text("mine")
    with pytest.raises(OSError, match=r"overwrite=True"):
        result.save(str(existing))
    assert existing.read_text() == "mine"


def test_settings_ranges_as_the_flags(stack):
    with pytest.raises(ValueError, match="clip_sigma"):
        wfs.reconstruct(stack, clip_sigma=0, max_iterations=2)
    with pytest.raises(ValueError, match="dipole"):
        wfs.reconstruct(stack, dipole="0x10,0", max_iterations=2)
