"""`nox -s index` without a build: which interpreters get a wheel, which wheel pip should pick for each, and the
index written for a given set of wheels (orchestration/local_index.py)."""

from __future__ import annotations

import hashlib

import pytest

from orchestration import local_index, pins

PROJECT = {"name": "executorch-openvino", "requires-python": pins.REQUIRES_PYTHON}


def _wheel(tag: str) -> str:
    return f"executorch_openvino-0.1.0-{pins.RELEASE_WHEEL_TAGS[tag]}-{pins.MANYLINUX_X86_64}.whl"


def test_the_interpreters_found_get_a_wheel_and_the_session_s_own_always(tmp_path):
    python310 = tmp_path / "python3.10"
    python310.write_text("")
    found = {"3.10": str(python310), "3.12": "not installed (no pythonX.Y on PATH, none under pyenv)",
             "3.13": str(python310)}
    assert local_index.chosen_pythons([], found) == ["3.10", pins.PYTHON]
    assert local_index.chosen_pythons([], {}) == [pins.PYTHON]


def test_the_session_s_arguments_choose_among_the_release_interpreters():
    assert local_index.chosen_pythons(["3.12"], {}) == [pins.PYTHON, "3.12"]
    assert local_index.chosen_pythons([pins.PYTHON], {}) == [pins.PYTHON]
    with pytest.raises(ValueError, match="3.13"):
        local_index.chosen_pythons(["3.13"], {})


def test_pip_should_pick_each_interpreter_s_wheel_and_the_abi3_one_from_3_12_on():
    wheels = [_wheel("3.11"), _wheel("3.12")]
    assert local_index.served(wheels) == {"3.11": wheels[0], "3.12": wheels[1], "3.13": wheels[1]}
    assert local_index.served([_wheel("3.11")]) == {"3.11": _wheel("3.11")}


def test_the_index_serves_exactly_the_wheels_given(tmp_path):
    built = tmp_path / "built"
    built.mkdir()
    wheels = []
    for tag in ("3.11", "3.12"):
        wheels.append(built / _wheel(tag))
        wheels[-1].write_bytes(tag.encode())
    folder = tmp_path / "index"
    folder.mkdir()
    (folder / _wheel("3.10")).write_bytes(b"from an earlier run")
    root = local_index.write_index(wheels, folder, PROJECT)
    assert root == folder / "simple"
    assert sorted(p.name for p in folder.glob("*.whl")) == sorted(w.name for w in wheels)
    page = (root / "executorch-openvino" / "index.html").read_text()
    assert page.count("<a ") == 2 and _wheel("3.10") not in page
    for tag in ("3.11", "3.12"):
        assert f"../../{_wheel(tag)}#sha256={hashlib.sha256(tag.encode()).hexdigest()}" in page
    assert 'href="executorch-openvino/"' in (root / "index.html").read_text()
