"""Benchmark support: a reproducible seed-scale vault and the KNN baselines search is held to."""
