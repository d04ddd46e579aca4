"""The one YAML reader (common.yamlfile): each failure one line of the caller's error type that
names the file; configs and overlays both read through it."""

from __future__ import annotations

import pytest

from common.yamlfile import loads, read_yaml


class KindError(ValueError):
    pass


@pytest.mark.parametrize("text,message", [
    ("a: [1, 2\n", r"^.*f\.yaml: invalid YAML at line 2, column 1: expected ',' or ']'"),
    ("a: b: c\n", r"^.*f\.yaml: invalid YAML at line 1, column 5: mapping values are not"),
    ("a: " + "7" * 5000 + "\n", r"^.*f\.yaml: invalid value: Exceeds the limit"),
])
def test_bad_yaml_is_one_line_of_the_callers_error_naming_the_file(tmp_path, text, message):
    path = tmp_path / "f.yaml"
    path.write_text(text)
    with pytest.raises(KindError, match=message) as e:
        read_yaml(path, "thing file", KindError)
    assert "\n" not in str(e.value)


def test_a_missing_file_names_its_kind_and_path(tmp_path):
    with pytest.raises(KindError, match=r"^cannot read thing file .*none\.yaml: No such file"):
        read_yaml(tmp_path / "none.yaml", "thing file", KindError)


def test_a_good_file_and_an_empty_one(tmp_path):
    path = tmp_path / "f.yaml"
    path.write_text("a: {b: [1, 2.5]}\n")
    assert read_yaml(path, "thing file") == {"a": {"b": [1, 2.5]}}
    path.write_text("")
    assert read_yaml(path, "thing file") is None


@pytest.mark.parametrize(("text", "value"), [
    ("1e-4", 1e-4), ("5e3", 5000.0), ("-2.5E+2", -250.0), (".5e1", 5.0), ("1.0e-4", 1e-4),
    ("0.1", 0.1), ("3", 3), ("1e", "1e"), ("e5", "e5"), ('"1e-4"', "1e-4"),
])
def test_floats_are_read_as_yaml_1_2_reads_them(text, value):
    """A float without a dot (``1e-4``) is a float, as YAML 1.2 has it; PyYAML's YAML 1.1 made
    it the string "1e-4", and a config setting written so was refused as not a number."""
    got = loads(text)
    assert got == value and type(got) is type(value)


def test_a_setting_written_as_1e_4_is_a_number(tmp_path):
    from mpc.app.config import load_config

    cfg = load_config("configs/a1_trot.yaml", ["derivatives.audit.threshold=1e-4"])
    assert cfg.derivatives["audit"]["threshold"] == 1e-4
    path = tmp_path / "c.yaml"
    path.write_text("extends: a1_trot\nderivatives: {audit: {threshold: 2e-4}}\n")
    assert load_config(str(path)).derivatives["audit"]["threshold"] == 2e-4
