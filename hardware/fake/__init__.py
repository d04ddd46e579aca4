"""Fake Unitree robots: MuJoCo simulations that speak the real low-level protocols."""
