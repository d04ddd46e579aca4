"""Every name a config can choose resolves to the class its registry promises: the registries
hold ``"module:Class"`` strings, which a move or a rename would otherwise break silently."""

import pytest

from derivatives import BACKENDS, DerivativeProvider
from hardware.estimation.base_state import BaseStateSource
from hardware.estimation.sources import SOURCES
from mpc.app.maps import MAP_SOURCES, MapSource
from mpc.app.observers.observer_base import Observer
from mpc.app.plants import PLANTS, SAFETY
from mpc.app.plants.plant_base import Plant
from mpc.app.runtime.session import OBSERVERS
from mpc.tasks import TASKS, Task

REGISTRIES = [(BACKENDS, DerivativeProvider), (TASKS, Task), (PLANTS, Plant),
              (OBSERVERS, Observer), (SOURCES, BaseStateSource), (MAP_SOURCES, MapSource)]


@pytest.mark.parametrize(("registry", "base"), REGISTRIES, ids=lambda r: getattr(r, "what", ""))
def test_every_registered_name_is_a_class_of_its_concept(registry, base):
    assert registry.available()
    for name in registry.available():
        cls = registry.get(name)
        assert issubclass(cls, base), f"{registry.what} {name!r}: {cls}"


def test_the_safety_layer_parts_resolve():
    from hardware.safety.layer import SafetyConfig
    from hardware.safety.safe_plant import SafePlant

    assert SAFETY.get("config") is SafetyConfig
    assert SAFETY.get("wrapper") is SafePlant
    from hardware.safety.envelope import check_envelope

    assert SAFETY.get("envelope") is check_envelope


def test_an_unknown_name_is_one_line_naming_the_choices():
    with pytest.raises(ValueError, match=r"^unknown plant type 'robot9'; available: lcm, sim, "):
        PLANTS.get("robot9")
    with pytest.raises(ValueError, match="must be 'module:Class'"):
        PLANTS.register("x", "no_colon")
