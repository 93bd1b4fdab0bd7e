#!/usr/bin/env python3
"""Turns benchmark results JSON (from `jax-kernels-bench --json`) into the markdown tables for README.

    python bench/results_to_md.py bench/results/h100.json [bench/results/h100_model.json ...] > tables.md

Several files are concatenated (e.g. the op sweeps and the `--model` run), each with its own header.
"""
import os
import sys

try:
    from jax_kernels._bench import report
except ImportError:  # run from a source checkout without an install
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    from jax_kernels._bench import report


def main(paths):
    if not paths:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    print("\n\n".join(report.to_markdown(report.read_json(p)) for p in paths))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
