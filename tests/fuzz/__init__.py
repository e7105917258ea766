"""Differential fuzzing of random Helion programs (issue 43): a typed grammar
(`grammar`), its rendering as Helion files (`render`), hypothesis strategies
(`strategies`) and the differential check against Helion's interpret mode (`check`).
Shared by tests/fuzz and benchmarks/fuzz.py; hypothesis stays a test dependency."""
