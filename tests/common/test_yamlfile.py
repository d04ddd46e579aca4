"""The one YAML reader (common.yamlfile): each failure one line of the caller's error type that
names the file; configs and overlays both read through it."""

from __future__ import annotations

import pytest

from common.yamlfile import read_yaml


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
