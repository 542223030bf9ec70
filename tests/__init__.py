"""torus-sim tests."""
