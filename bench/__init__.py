"""Benchmarks, run from a checkout (``python bench/accuracy.py``): product code only, never tests."""
