"""Terrain for the simulated plants: ramps, steps, loose slabs, rough ground, a softer floor.

One specification, taken by every simulated plant (``plant.terrain`` of ``plant.type: sim`` and
``sim_estimated``, :class:`hardware.fake.motor_plant.FakeMotorPlant`, ``mpc-fake-robot
--terrain``, ``python -m hardware.fake.lcm_robot --terrain``) and built into the robot's
:class:`mujoco.MjSpec` before it is compiled. Only the plant has it: the planning model keeps
its level plane at height zero (the controller is blind to the terrain).

A terrain is a shipped name (:data:`SHIPPED`, e.g. ``ramp_up_10``), one feature as a mapping
with a ``kind``, or a list of features that are combined. Distances are metres ahead of where
the robot starts, along +x (the direction the configs' goals lie in); heights are relative to
the ground under the robot's start, which stays at z = 0 so that the robot's home pose stands
on it.

- ``ramp``: ``direction`` up or down, ``slope`` (degrees, at most 45), ``start`` (where the
  ramp begins; at or below 0 the robot starts on the slope, its base and feet turned with the
  ground), ``length`` (horizontal run), then a plateau to the end of the world.
- ``step``: ``direction`` up or down, ``height``, ``start`` (> 0).
- ``slabs``: loose boxes (free bodies) resting on the ground in a region ahead, each of a random
  footprint (``min_size``..``max_size``), height (``min_height``..``max_height``) and yaw,
  apart from one another, seeded by ``seed``.
- ``rough``: a height field of smooth bumps up to ``amplitude`` above the floor with features
  of about ``wavelength``, seeded by ``seed``, in a region ahead; its edges taper to the floor.
- ``heightfield``: the same from a file (``.npy``: a 2-D array of heights in metres, rows
  along y, columns along x) over ``size`` = [length, width] from ``start``.
- ``map``: a terrain map (:mod:`mpc.tasks.terrain_map`) from ``file`` (.yaml, or .npy/.png with a
  sidecar), in world coordinates, the floor plane lowered under it: the ground a map-planning
  task (``task.ground: map``) plans on, so that map and world agree, or, with ``offset`` (m)
  and ``noise`` (m, standard deviation per sample, seeded by ``seed``), disagree as an
  elevation map does. Alone (or with ``soft``): ramps, steps and the rest are the map's job.
  A map that is a flight of steps along x (:meth:`~mpc.tasks.terrain_map.HeightMap.steps`) is
  built of boxes, one per tread, with vertical risers at the higher tread's sample next to
  them, the treads nowhere above the map (``shape: auto``, the default; ``shape: field``
  keeps the height field): a real staircase, where the height field's riser slopes over one
  cell and traps a foot pressed into it.
- ``soft``: the ground's contact made softer (``solref``, ``solimp``) and optionally its
  ``friction`` changed; the ground then takes precedence over the feet's own contact
  parameters (MuJoCo's geom priority), keeping their condim.
- ``flat``: nothing (the level floor), for tables that list it beside the others.

Ramps and steps add up: the ground's height along x is the sum of their profiles (a ramp up and
a later ramp down make a hill), built as one box per piece of the profile (tilted for a slope,
posed before compiling: a static geom does not move when its pose changes after compiling), the
floor plane lowered to the lowest piece. Ground is tilted, never gravity: an IMU on a ramp
must read what it reads on a real one. Slabs and rough ground go on flat pieces only.

Bad input raises :class:`TerrainError` with one line naming the key (``'terrain.slope' must be
> 0 and <= 45, got 50``); the programs that take a terrain turn it into exit code 2.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import mujoco
import numpy as np

from common.settings import setting
from mpc.app.schema import ConfigError, build_dataclass
from mpc.tasks import terrain_map

#: Half-extent (m) of the terrain's boxes beyond their last feature, ahead, behind and aside.
FAR = 20.0
#: How far (m) boxes reach below the lowest ground, so that no seam shows at the floor.
DEPTH = 0.1
#: How far (m) the treads of a map built of boxes reach below the floor: a foot pushed deep into
#: a thin tread (the floor's 5 cm under the lowest) is nearer its bottom face than its top and
#: would be pushed through it (seen after a stumble: both hind feet wedged under the first tread).
TREAD_DEPTH = 0.5
#: Gap (m) kept between slabs' bounding circles.
SLAB_GAP = 0.02
#: Colour of the terrain's geoms (the floor keeps its own).
RGBA = (0.55, 0.5, 0.42, 1.0)


#: What a terrain option holds: None, a shipped name, a mapping with a ``kind`` or a list of
#: them; checked by :func:`parse` (so a config's schema passes it through as it is).
TerrainSpec = Any


class TerrainError(ValueError):
    """A terrain specification that makes no sense; the message is one line naming the key."""


# --- the schema ------------------------------------------------------------------------------


@dataclass
class Flat:
    """The level floor: no terrain."""

    kind: str = "flat"


@dataclass
class Ramp:
    kind: str = "ramp"
    direction: str = setting("up", choices=("up", "down"))
    slope: float = setting(10.0, gt=0.0, max=45.0, help="degrees from the horizontal")
    start: float = setting(0.5, min=-FAR, max=FAR,
                           help="m ahead where the ramp begins (<= 0: the robot starts on it)")
    length: float = setting(1.5, gt=0.0, max=FAR, help="horizontal run (m); a plateau follows")


@dataclass
class Step:
    kind: str = "step"
    direction: str = setting("up", choices=("up", "down"))
    height: float = setting(0.05, gt=0.0, max=1.0, help="m")
    start: float = setting(0.5, gt=0.0, max=FAR, help="m ahead of the robot")


@dataclass
class Slabs:
    kind: str = "slabs"
    max_height: float = setting(0.05, gt=0.0, max=0.5, help="m")
    min_height: float = setting(0.01, gt=0.0, max=0.5, help="m")
    min_size: float = setting(0.15, gt=0.0, max=2.0, help="m, side of a slab's footprint")
    max_size: float = setting(0.4, gt=0.0, max=2.0, help="m")
    count: int = setting(12, min=1, max=200, help="slabs asked for (as many as fit)")
    start: float = setting(0.4, min=-FAR, max=FAR, help="m ahead where the region begins")
    length: float = setting(2.0, gt=0.0, max=FAR, help="m along x")
    width: float = setting(1.0, gt=0.0, max=FAR, help="m across, centred on the path")
    density: float = setting(1000.0, gt=0.0, max=20000.0, help="kg/m^3")
    seed: int = setting(0, min=0, max=2**32 - 1)


@dataclass
class Rough:
    kind: str = "rough"
    amplitude: float = setting(0.03, gt=0.0, max=0.3, help="m, highest bump above the floor")
    wavelength: float = setting(0.3, min=0.04, max=10.0, help="m, size of the bumps")
    start: float = setting(0.4, min=-FAR, max=FAR, help="m ahead where the region begins")
    length: float = setting(3.0, gt=0.0, max=FAR, help="m along x")
    width: float = setting(2.0, gt=0.0, max=FAR, help="m across, centred on the path")
    resolution: float = setting(0.02, min=0.005, max=0.5, help="m between grid points")
    seed: int = setting(0, min=0, max=2**32 - 1)


@dataclass
class Heightfield:
    kind: str = "heightfield"
    file: str = setting("", help=".npy: 2-D array of heights (m), rows along y, columns along x")
    size: list[float] = setting([2.0, 1.0], gt=0.0, max=2 * FAR, help="[length, width] (m)")
    start: float = setting(0.4, min=-FAR, max=FAR, help="m ahead where the field begins")


@dataclass
class Map:
    kind: str = "map"
    file: str = setting("", help="a map file: .yaml, or .npy/.png with a sidecar .yaml")
    offset: float = setting(0.0, min=-1.0, max=1.0, help="m added to every height")
    noise: float = setting(0.0, min=0.0, max=0.2, help="m, standard deviation per sample")
    seed: int = setting(0, min=0, max=2**32 - 1)
    shape: str = setting("auto", choices=("auto", "field"),
                         help="auto: a flight of steps is built of boxes; field: a height field")


@dataclass
class Soft:
    kind: str = "soft"
    solref: list[float] = setting([0.05, 1.0], gt=0.0, max=10.0,
                                  help="[time constant (s), damping ratio]: larger is softer")
    solimp: list[float] = setting([0.015, 1.0, 0.031, 0.5, 2.0], min=0.0, max=10.0,
                                  help="MuJoCo's solimp of the ground contact")
    friction: float | None = setting(None, gt=0.0, max=10.0,
                                     help="sliding friction (None: the feet's)")


KINDS: dict[str, type] = {"flat": Flat, "ramp": Ramp, "step": Step, "slabs": Slabs,
                          "rough": Rough, "heightfield": Heightfield, "map": Map,
                          "soft": Soft}


def _ramp(direction: str, slope: float, start: float = 0.5, length: float = 1.5) -> dict:
    return {"kind": "ramp", "direction": direction, "slope": slope, "start": start,
            "length": length}


#: Terrains by name: what ``--terrain NAME`` and ``plant.terrain: NAME`` give.
SHIPPED: dict[str, list[dict]] = {
    "flat": [{"kind": "flat"}],
    **{f"ramp_{d}_{s}": [_ramp(d, s)] for d in ("up", "down") for s in (4, 5, 8, 10, 15)},
    # standing on a slope that runs on under the whole path
    **{f"slope_{d}_{s}": [_ramp(d, s, start=-1.0, length=5.0)] for d in ("up", "down")
       for s in (4, 8)},
    "ramp_up_down_10": [_ramp("up", 10, 0.5, 1.0), _ramp("down", 10, 2.5, 1.0)],
    **{f"step_{d}_{h}cm": [{"kind": "step", "direction": d, "height": h / 100, "start": 0.5}]
       for d in ("up", "down") for h in (2, 3, 5, 8, 10)},
    "slabs_5cm": [{"kind": "slabs", "max_height": 0.05, "min_height": 0.02}],
    "slabs_3_6cm": [{"kind": "slabs", "max_height": 0.06, "min_height": 0.03}],
    "rough_2cm": [{"kind": "rough", "amplitude": 0.02, "wavelength": 0.3}],
    "soft": [{"kind": "soft"}],
}


def parse(value, where: str = "terrain") -> list:
    """The features of a terrain given as None (none), a shipped name, a mapping with a
    ``kind``, or a list of such mappings; TerrainError (one line naming the key) if it makes
    no sense."""
    if value is None:
        return []
    if isinstance(value, str):
        if value not in SHIPPED:
            raise TerrainError(f"'{where}': unknown terrain {value!r}; shipped: "
                               f"{', '.join(sorted(SHIPPED))}")
        value = SHIPPED[value]
    items = value if isinstance(value, list) else [value]
    features = []
    for i, item in enumerate(items):
        at = f"{where}[{i}]" if isinstance(value, list) else where
        if not isinstance(item, dict):
            raise TerrainError(f"'{at}' must be a mapping with a kind, got {item!r}")
        kind = item.get("kind")
        if kind not in KINDS:
            raise TerrainError(f"'{at}.kind' must be one of {', '.join(KINDS)}, got {kind!r}")
        try:
            feature = build_dataclass(KINDS[kind], item, "terrain", f"{at}.")
        except ConfigError as e:
            raise TerrainError(str(e).removeprefix("terrain: ")) from None
        _check(feature, at)
        features.append(feature)
    if any(isinstance(f, Map) for f in features) and not all(
            isinstance(f, (Map, Soft, Flat)) for f in features):
        raise TerrainError(f"'{where}': a map goes alone (or with soft): put ramps, steps and "
                           f"the rest into the map")
    if sum(isinstance(f, Map) for f in features) > 1:
        raise TerrainError(f"'{where}': one map at a time")
    profile = Profile(features, where)  # slopes of combined ramps, within bounds
    for i, f in enumerate(features):
        length = f.length if isinstance(f, Rough) else f.size[0] if isinstance(
            f, Heightfield) else None
        if length is not None and profile.flat_over(f.start, f.start + length) is None:
            at = f"{where}[{i}]" if isinstance(value, list) else where
            raise TerrainError(f"'{at}': a {f.kind} region needs flat ground under it "
                               f"(x = {f.start:g}..{f.start + length:g} m crosses a ramp or "
                               f"step)")
    return features


def _check(f, at: str) -> None:
    """Checks across one feature's keys."""
    if isinstance(f, Slabs):
        if f.min_height > f.max_height:
            raise TerrainError(f"'{at}.min_height' must be <= {at}.max_height "
                               f"({f.max_height}), got {f.min_height}")
        if f.min_size > f.max_size:
            raise TerrainError(f"'{at}.min_size' must be <= {at}.max_size ({f.max_size}), "
                               f"got {f.min_size}")
    elif isinstance(f, Rough) and f.wavelength < 2 * f.resolution:
        raise TerrainError(f"'{at}.wavelength' must be >= 2 {at}.resolution "
                           f"({2 * f.resolution:g}), got {f.wavelength}")
    elif isinstance(f, Heightfield):
        path = Path(f.file)
        if path.suffix != ".npy":
            raise TerrainError(f"'{at}.file' must be a .npy file, got {f.file!r}")
        if not path.is_file():
            raise TerrainError(f"'{at}.file': no such file: {f.file}")
        if len(f.size) != 2:
            raise TerrainError(f"'{at}.size' must be [length, width], got {f.size}")
        heights = _load_heights(f, at)
        if heights.ndim != 2 or min(heights.shape) < 2:
            raise TerrainError(f"'{at}.file' must hold a 2-D array of at least 2 x 2 heights, "
                               f"got shape {heights.shape}")
        if not np.all(np.isfinite(heights)) or heights.min() < 0 or heights.max() > 1.0:
            raise TerrainError(f"'{at}.file' heights must be finite, within 0..1 m")
    elif isinstance(f, Map):
        load_map(f, at)
    elif isinstance(f, Soft) and len(f.solref) != 2:
        raise TerrainError(f"'{at}.solref' must be [time constant, damping ratio], got "
                           f"{f.solref}")
    elif isinstance(f, Soft) and (len(f.solimp) != 5 or not f.solimp[0] < f.solimp[1] <= 1):
        raise TerrainError(f"'{at}.solimp' must be [dmin, dmax, width, midpoint, power] with "
                           f"dmin < dmax <= 1, got {f.solimp}")


def load_map(f: Map, at: str = "terrain") -> terrain_map.HeightMap:
    """The map of a ``map`` feature with its offset and noise."""
    if not f.file:
        raise TerrainError(f"'{at}.file' must name a map file")
    try:
        return terrain_map.load(f.file).perturbed(f.offset, f.noise, f.seed)
    except terrain_map.MapError as e:
        raise TerrainError(f"'{at}.file': {e}") from None


def _load_heights(f: Heightfield, at: str) -> np.ndarray:
    try:
        return np.asarray(np.load(f.file, allow_pickle=False), dtype=float)
    except (OSError, ValueError) as e:
        raise TerrainError(f"'{at}.file': cannot read {f.file}: {e}") from None


# --- the ground's profile along x ------------------------------------------------------------


@dataclass(frozen=True)
class Piece:
    """The ground between x0 and x1 (either may be infinite): z0 at x0 rising linearly to z1
    at x1."""

    x0: float
    x1: float
    z0: float
    z1: float

    @property
    def slope(self) -> float:
        return 0.0 if math.isinf(self.x0) or math.isinf(self.x1) else \
            (self.z1 - self.z0) / (self.x1 - self.x0)

    def height(self, x: float) -> float:
        return self.z0 + self.slope * (x - self.x0) if math.isfinite(self.x0) else self.z1


class Profile:
    """The ground's height along x from the ramps and steps of a terrain: a sum of ramps
    (height rising by length tan(slope) over [start, start + length]) and steps (rising by
    height at start), shifted so that the height at x = 0 is 0."""

    def __init__(self, features: list, where: str = "terrain"):
        self.ramps = [(f.start, f.length, math.tan(math.radians(f.slope))
                       * (1 if f.direction == "up" else -1))
                      for f in features if isinstance(f, Ramp)]
        self.steps = [(f.start, f.height * (1 if f.direction == "up" else -1))
                      for f in features if isinstance(f, Step)]
        cuts = sorted({x for s, n, _ in self.ramps for x in (s, s + n)}
                      | {s for s, _ in self.steps})
        self.offset = 0.0
        self.offset = self._raw(0.0, side=1)
        edges = [-math.inf, *cuts, math.inf]
        self.pieces = [Piece(a, b, self._raw(a, 1), self._raw(b, -1))
                       for a, b in itertools.pairwise(edges)]
        for p in self.pieces:
            if abs(p.slope) > 1.0 + 1e-9:
                raise TerrainError(f"'{where}': the ramps add up to a slope of "
                                   f"{math.degrees(math.atan(abs(p.slope))):.1f} deg between "
                                   f"x = {p.x0:g} and {p.x1:g} m, more than 45")

    def _raw(self, x: float, side: int) -> float:
        """Height at x approached from the right (side 1) or the left (-1), less the offset."""
        if math.isinf(x):
            x = math.copysign(1e9, x)
        z = sum(k * min(max(x - s, 0.0), n) for s, n, k in self.ramps)
        z += sum(h for s, h in self.steps if x > s or (x == s and side > 0))
        return z - self.offset

    def piece_at(self, x: float) -> Piece:
        for p in self.pieces:
            if p.x0 <= x < p.x1:
                return p
        return self.pieces[-1]

    def height(self, x: float) -> float:
        return self.piece_at(x).height(x)

    @property
    def lowest(self) -> float:
        return min(min(p.z0, p.z1) for p in self.pieces)

    def flat_over(self, x0: float, x1: float) -> float | None:
        """The height of the ground if it is one flat piece over [x0, x1], else None."""
        p = self.piece_at(x0)
        return p.z0 if p.slope == 0.0 and x1 <= p.x1 else None


# --- building it into a model ----------------------------------------------------------------


@dataclass
class Terrain:
    """A terrain as built into a model: the ground's profile, the height fields, the slabs."""

    features: list
    profile: Profile
    #: (geom name, x0, y0, length, width, heights in m (rows along y)) of each height field.
    fields: list = dataclasses.field(default_factory=list)
    #: Names of the slabs' bodies (free joints, appended after the robot's).
    slabs: list = dataclasses.field(default_factory=list)
    #: The base's pitch at the start (rad, positive nose up): the slope under the robot.
    start_pitch: float = 0.0
    #: Whether the ground is a terrain map (its sections are reported by height).
    is_map: bool = False
    #: Height (m) of the ground under the robot's start: a map's there (0 otherwise).
    start_height: float = 0.0

    SLAB_PREFIX: ClassVar[str] = "terrain_slab"

    def ground_height(self, x: float, y: float = 0.0) -> float:
        """Height of the static ground (profile and height fields, not the slabs) at (x, y)."""
        z = self.profile.height(x)
        for _, x0, y0, length, width, h in self.fields:
            if x0 <= x <= x0 + length and y0 <= y <= y0 + width:
                rows, cols = h.shape
                u = (x - x0) / length * (cols - 1)
                v = (y - y0) / width * (rows - 1)
                c, r = min(int(u), cols - 2), min(int(v), rows - 2)
                a, b = u - c, v - r
                z += ((1 - a) * (1 - b) * h[r, c] + a * (1 - b) * h[r, c + 1]
                      + (1 - a) * b * h[r + 1, c] + a * b * h[r + 1, c + 1])
        return z

    def section(self, x: float) -> str:
        """What the ground is at x, for reports: ``before`` the first feature, ``on`` a slope,
        ``between`` features or ``after`` the last, with the ground's height."""
        pieces = self.profile.pieces
        p = self.profile.piece_at(x)
        if self.is_map:
            return f"on the map (ground {self.ground_height(x):+.2f} m)"
        if len(pieces) == 1:
            where = "on the terrain" if self.fields or self.slabs else "flat"
        elif p is pieces[0]:
            where = "before"
        elif p is pieces[-1]:
            where = "after"
        elif p.slope != 0.0:
            where = f"on the slope ({math.degrees(math.atan(p.slope)):+.0f} deg)"
        else:
            where = "between"
        return where

    @property
    def robot_free_slots(self) -> tuple[int, int]:
        """(qpos, qvel) sizes the slabs append after the robot's."""
        return 7 * len(self.slabs), 6 * len(self.slabs)

    def place(self, model: mujoco.MjModel, data: mujoco.MjData) -> None:
        """Turn the robot's start pose with the ground under it (a start on a slope): the base
        pose is rotated about the y axis through the ground point under the base, so that
        feet that stood on the level floor stand on the slope. On a map the robot is raised
        by the map's height under its start."""
        if self.start_height != 0.0:
            data.qpos[2] += self.start_height
            mujoco.mj_forward(model, data)
        if self.start_pitch == 0.0:
            return
        half = -self.start_pitch / 2  # nose up: a negative rotation about y
        turn = np.array([math.cos(half), 0.0, math.sin(half), 0.0])
        rot = np.empty(9)
        mujoco.mju_quat2Mat(rot, turn)
        data.qpos[0:3] = rot.reshape(3, 3) @ data.qpos[0:3]
        quat = np.empty(4)
        mujoco.mju_mulQuat(quat, turn, data.qpos[3:7])
        data.qpos[3:7] = quat
        mujoco.mj_forward(model, data)


def build(spec: mujoco.MjSpec, terrain, robot_feet: list[str] | None = None) -> Terrain:
    """Build ``terrain`` (anything :func:`parse` takes, or its result) into ``spec``, a robot's
    model specification with a plane geom named ``floor`` in its world body, before it is
    compiled. ``robot_feet`` (site names) give the contact parameters a ``soft`` ground keeps
    (the feet's condim and friction)."""
    features = terrain if _parsed(terrain) else parse(terrain)
    profile = Profile(features)
    floor = _floor(spec)
    out = Terrain(features, profile)
    ground = [floor]
    floor.pos = [floor.pos[0], floor.pos[1], profile.lowest]
    for i, p in enumerate(profile.pieces):
        box = _piece_box(spec, p, profile.lowest, i)
        if box is not None:
            ground.append(box)
    p0 = profile.piece_at(0.0)
    out.start_pitch = math.atan(p0.slope) if p0.x0 < 0.0 else 0.0
    for i, f in enumerate(features):
        if isinstance(f, (Rough, Heightfield)):
            ground.append(_field(spec, f, profile, out, i))
        elif isinstance(f, Map):
            hmap = load_map(f)
            name = f"terrain_field{i}"
            treads = hmap.steps() if f.shape == "auto" else None
            if treads is None:
                ground.append(hmap.add_to(spec, name, RGBA))
            else:
                ground.extend(_treads(spec, hmap, treads, floor, i))
            length, width = hmap.size
            out.fields.append((name, *hmap.origin, length, width, np.array(hmap.heights)))
            out.is_map = True
            out.start_height = float(hmap.height(0.0, 0.0))
    for i, f in enumerate(features):
        if isinstance(f, Slabs):
            _slabs(spec, f, profile, out, i)
    for g in ground[1:]:  # the terrain's ground touches as the floor does ...
        for attr in ("friction", "solref", "solimp", "solmix", "priority", "condim", "margin"):
            setattr(g, attr, getattr(floor, attr))
    for f in features:  # ... unless it is made softer
        if isinstance(f, Soft):
            _soften(spec, f, ground, robot_feet or [])
    return out


def _treads(spec: mujoco.MjSpec, hmap: terrain_map.HeightMap,
            treads: list[tuple[float, float, float]], floor, i: int) -> list:
    """A map that is a flight of steps (:meth:`~mpc.tasks.terrain_map.HeightMap.steps`) as
    one box per tread, from below the floor (lowered as under a map's height field) to the tread,
    across the map's width: a staircase with vertical risers, where a height field's riser
    slopes over a cell and a foot pressed into it meets the inner walls of MuJoCo's prisms,
    which push it sideways (docs/terrain.md, "Planning on a map")."""
    floor_z = float(hmap.heights.min()) - terrain_map.FLOOR_DROP
    floor.pos = [floor.pos[0], floor.pos[1], floor_z]
    bottom = floor_z - TREAD_DEPTH
    y0, width = hmap.origin[1], hmap.size[1]
    return [spec.worldbody.add_geom(
        name=f"terrain_tread{i}_{k}", type=mujoco.mjtGeom.mjGEOM_BOX,
        size=[(x1 - x0) / 2, width / 2, (z - bottom) / 2],
        pos=[(x0 + x1) / 2, y0 + width / 2, (z + bottom) / 2], rgba=list(RGBA))
        for k, (x0, x1, z) in enumerate(treads)]


def _parsed(terrain) -> bool:
    return isinstance(terrain, list) and all(dataclasses.is_dataclass(f) for f in terrain)


def _floor(spec: mujoco.MjSpec):
    for g in spec.worldbody.geoms:
        if g.name == "floor" and g.type == mujoco.mjtGeom.mjGEOM_PLANE:
            return g
    raise ValueError("the model has no plane geom named 'floor' in its world body")


def _piece_box(spec: mujoco.MjSpec, p: Piece, lowest: float, i: int):
    """A box whose top face is the piece (tilted about y for a slope), reaching below the
    lowest ground; None for a flat piece at the lowest height (the floor plane is there)."""
    x0 = p.x0 if math.isfinite(p.x0) else p.x1 - FAR
    x1 = p.x1 if math.isfinite(p.x1) else p.x0 + FAR
    if (math.isinf(p.x0) and math.isinf(p.x1)) or (p.slope == 0.0 and p.z0 <= lowest):
        return None
    z0, z1 = p.height(x0), p.height(x1)
    angle = math.atan2(z1 - z0, x1 - x0)
    half_len = math.hypot(x1 - x0, z1 - z0) / 2
    thick = (max(z0, z1) - lowest) / math.cos(angle) + DEPTH
    normal = np.array([-math.sin(angle), 0.0, math.cos(angle)])
    center = np.array([(x0 + x1) / 2, 0.0, (z0 + z1) / 2]) - thick / 2 * normal
    quat = [math.cos(-angle / 2), 0.0, math.sin(-angle / 2), 0.0]
    return spec.worldbody.add_geom(name=f"terrain_piece{i}", type=mujoco.mjtGeom.mjGEOM_BOX,
                                   size=[half_len, FAR, thick / 2], pos=center.tolist(),
                                   quat=quat, rgba=list(RGBA))


def _field(spec: mujoco.MjSpec, f, profile: Profile, out: Terrain, i: int):
    """A height field on a flat piece of ground: its heights over [start, start + length]."""
    if isinstance(f, Rough):
        length, width = f.length, f.width
        heights = rough_heights(f)
    else:
        length, width = f.size
        heights = _load_heights(f, "terrain")
    z = profile.flat_over(f.start, f.start + length)  # not None: checked by parse
    top = float(heights.max())
    if top <= 0.0:
        top, heights = 1e-6, heights + 1e-6
    name = f"terrain_field{i}"
    rows, cols = heights.shape
    spec.add_hfield(name=name, nrow=rows, ncol=cols, size=[length / 2, width / 2, top, DEPTH],
                    userdata=(heights / top).ravel().tolist())
    out.fields.append((name, f.start, -width / 2, length, width, heights))
    return spec.worldbody.add_geom(name=name, type=mujoco.mjtGeom.mjGEOM_HFIELD,
                                   hfieldname=name, pos=[f.start + length / 2, 0.0, z],
                                   rgba=list(RGBA))


def rough_heights(f: Rough) -> np.ndarray:
    """Smooth random bumps on a grid (rows along y): a sum of 24 plane waves of wavelength
    ``wavelength`` in random directions and phases, scaled to 0..``amplitude`` and tapered to
    0 over one wavelength at the edges (no wall where the rough ground begins)."""
    rng = np.random.default_rng(f.seed)
    cols = max(2, round(f.length / f.resolution) + 1)
    rows = max(2, round(f.width / f.resolution) + 1)
    x = np.linspace(0.0, f.length, cols)
    y = np.linspace(0.0, f.width, rows)
    X, Y = np.meshgrid(x, y)
    k = 2 * math.pi / f.wavelength
    z = np.zeros_like(X)
    for theta, phase in zip(rng.uniform(0, math.pi, 24), rng.uniform(0, 2 * math.pi, 24),
                            strict=True):
        z += np.cos(k * (X * math.cos(theta) + Y * math.sin(theta)) + phase)
    z = (z - z.min()) / max(z.max() - z.min(), 1e-12)
    edge = np.minimum.reduce([X, f.length - X, Y, f.width - Y]) / f.wavelength
    return f.amplitude * z * np.clip(edge, 0.0, 1.0)


def _slabs(spec: mujoco.MjSpec, f: Slabs, profile: Profile, out: Terrain, i: int) -> None:
    """Loose boxes resting on flat ground in the region, apart from each other."""
    rng = np.random.default_rng(f.seed)
    placed: list[tuple[float, float, float]] = []  # x, y, bounding radius
    for _ in range(f.count):
        for _attempt in range(100):
            sx, sy = rng.uniform(f.min_size, f.max_size, 2)
            h = rng.uniform(f.min_height, f.max_height)
            yaw = rng.uniform(0.0, math.pi)
            r = math.hypot(sx, sy) / 2
            x = rng.uniform(f.start + r, f.start + f.length - r) if f.length > 2 * r else None
            y = rng.uniform(-f.width / 2 + r, f.width / 2 - r) if f.width > 2 * r else None
            if x is None or y is None:
                continue
            z = profile.flat_over(x - r, x + r)
            if z is None or any(math.hypot(x - a, y - b) < r + c + SLAB_GAP
                                for a, b, c in placed):
                continue
            placed.append((x, y, r))
            name = f"{Terrain.SLAB_PREFIX}{i}_{len(out.slabs)}"
            body = spec.worldbody.add_body(name=name, pos=[x, y, z + h / 2],
                                           quat=[math.cos(yaw / 2), 0, 0, math.sin(yaw / 2)])
            body.add_freejoint()
            body.add_geom(type=mujoco.mjtGeom.mjGEOM_BOX, size=[sx / 2, sy / 2, h / 2],
                          density=f.density, rgba=[0.45, 0.42, 0.38, 1.0])
            out.slabs.append(name)
            break


def _soften(spec: mujoco.MjSpec, f: Soft, ground: list, feet: list[str]) -> None:
    """The ground's contact parameters win over the robot's (priority above every robot
    geom), with the given solref/solimp and the feet's condim and friction (or ``friction``):
    what a foot met before, on a softer ground."""
    priority = max((g.priority for g in spec.geoms), default=0) + 1
    foot_geoms = [g for g in spec.geoms if g.parent.name in _site_bodies(spec, feet)]
    friction = list(foot_geoms[0].friction) if foot_geoms else list(ground[0].friction)
    condim = max((g.condim for g in foot_geoms), default=ground[0].condim)
    if f.friction is not None:
        friction[0] = f.friction
    for g in ground:
        g.priority, g.solref, g.solimp = priority, f.solref, f.solimp
        g.friction, g.condim = friction, condim


def _site_bodies(spec: mujoco.MjSpec, sites: list[str]) -> set[str]:
    return {s.parent.name for s in spec.sites if s.name in sites}
