"""The corpus's work area, built once per test module (see harness.py)."""

import pytest

from badinput.harness import make_area


@pytest.fixture(scope="module")
def area():
    with make_area() as made:
        yield made
