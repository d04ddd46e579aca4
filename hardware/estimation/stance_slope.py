"""The ground's slope from the feet that stand together, read from the legs alone.

Two feet standing at the same instant are both on the ground, so the difference of their
positions relative to the base, d = k_i - k_j (world-aligned axes, from the encoders through
the kinematics), is a chord of the ground: d_z = a₁ d_x + a₂ d_y on a plane z = a₀ + a₁x + a₂y.
A trot's two diagonals span both directions, so the last chords of each pair of feet give the
slope (a₁, a₂) by least squares with a small prior λ toward level,

    (a₁, a₂) = (DᵀD + λI)⁻¹ Dᵀ d_z,     D the chords' (d_x, d_y) rows,

using the chords taken within the last ``memory`` seconds (older ones describe ground the
robot has left; with none that recent the slope stays as it was).

Unlike a plane fitted to remembered footholds (:class:`mpc.tasks.ground.GroundFit`), nothing
here depends on the estimated base position: footholds taken at different times carry the
height estimate's drift between them, and a foot that stood last at the top of a ramp keeps
its foothold there until it is believed down again. The Kalman filter's kinematic contact
cue reads the slope to compare the feet's heights; fed by remembered footholds, a ramp's
uphill feet, once judged too high against a slope too shallow, were never believed down
again, so their footholds never moved and the slope never steepened (docs/terrain.md, "The
carried height").
"""

from __future__ import annotations

import numpy as np


class StanceSlope:
    """Slope of the ground under ``nfeet`` feet from their simultaneous stance chords."""

    def __init__(self, nfeet: int, memory: float = 1.0, prior: float = 1e-3):
        """``memory`` (s): how old a chord may be; ``prior`` λ (m²), small against a
        quadruped's diagonal chords (d_x² + d_y² ≈ 0.1-0.2 m²)."""
        self.n, self.memory, self.prior = int(nfeet), float(memory), float(prior)
        self.chord = np.zeros((self.n, self.n, 3))
        self.age = np.full((self.n, self.n), np.inf)  # s since each pair (i < j) last stood
        self.slope = np.zeros(2)

    def observe(self, rel: np.ndarray, standing: np.ndarray, dt: float) -> np.ndarray:
        """Feet relative to the base (n, 3, world-aligned) and which stand now, ``dt`` after
        the last call; returns the slope (a₁, a₂)."""
        self.age += dt
        feet = np.flatnonzero(standing)
        for a, i in enumerate(feet):
            for j in feet[a + 1:]:
                self.chord[i, j] = rel[i] - rel[j]
                self.age[i, j] = 0.0
        recent = self.age < self.memory
        if recent.any():
            d = self.chord[recent]
            D = d[:, 0:2]
            self.slope = np.linalg.solve(D.T @ D + self.prior * np.eye(2), D.T @ d[:, 2])
        return self.slope
