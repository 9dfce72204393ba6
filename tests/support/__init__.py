"""Test doubles and sample-file writers shared by the tests and the benchmarks."""
