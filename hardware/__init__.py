"""Hardware plants, bridges and the safety layer (see the README)."""
