"""The keyword arguments are the settings table's options (core/settings/SettingsTable.h), as wavefront-cli's flags
are: every one the docstring lists is a flag of `wavefront-cli reconstruct` and is accepted by name."""
import re

import numpy as np
import pytest

import wavefront_studio as wfs

from conftest import run_cli


def documented_options():
    doc = wfs.reconstruct.__doc__
    listed = doc[doc.index("a switch is True:"):]
    return re.findall(r"^    ([a-z_]+)=", listed, flags=re.MULTILINE)


def test_every_keyword_is_a_cli_flag():
    names = documented_options()
    assert len(names) > 60 and len(set(names)) == len(names)
    help_text = run_cli("reconstruct", "--help").stdout
    flags = set(re.findall(r"--([a-z][a-z0-9-]*)", help_text))
    for name in names:
        assert name.replace("_", "-") in flags, name


def test_every_documented_keyword_is_accepted():
    # None is "not given", but the name is still checked: an unknown one is a TypeError before any work.
    options = {name: None for name in documented_options()}
    with pytest.raises(ValueError, match="wavelength"):
        wfs.reconstruct(np.ones((1, 16, 16)), **options)
    with pytest.raises(TypeError, match="did you mean 'pupil_phase'"):
        wfs.reconstruct(np.ones((1, 16, 16)), pupil_phas="zonal")
