"""Benchmarks of the evaluator fleet (GitHub issue 7): ``python -m bench.<name>``."""
