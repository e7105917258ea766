"""The paper's evaluation (Tables 2 and 3, Figures 7, 10, 11, 12) in the simulator.

A thin wrapper over `loom eval`: every option is passed through. Loom and every baseline
(TTNN's out-of-box and tuned matmul configs, SDPA and SDPA-decode defaults, a
TileLoom-style search) are lowered and simulated by the same code in one run; the results
folder keeps results.csv, tables.txt and the figures, and a rerun skips finished cases
(delete the folder to measure again, e.g. after a latency-model change).

    PYTHONPATH=src .venv/bin/python benchmarks/paper_eval.py --quick --out eval-results-quick
    PYTHONPATH=src .venv/bin/python benchmarks/paper_eval.py [--jobs N] [--out eval-results]
"""

from __future__ import annotations

import os
import sys

os.environ.setdefault("OMP_NUM_THREADS", "1")

from loom.cli import main

if __name__ == "__main__":
    sys.exit(main(["eval", *sys.argv[1:]]))
