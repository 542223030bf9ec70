"""Benchmarks of torus-sim (python -m benchmarks.run)."""
