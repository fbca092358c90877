"""Prints the vector unit's figures from each tpusim report given, one line
each, for tests/lit/tpuc/vector-costs.mlir to check."""
import json
import sys

for path in sys.argv[1:]:
    with open(path) as f:
        report = json.load(f)
    print(" ".join(f"{key} {value}" for key, value in (
        ("total_cycles", report["total_cycles"]),
        ("vector_elements", report["vector_elements"]),
        ("vector_transcendental_elements", report["vector_transcendental_elements"]),
        ("vector_pj", report["energy_pj"]["vector"]))))
