#!/usr/bin/python3
"""Checks that docs/compiler.md's ONNX -> TOSA table names exactly the
operators the importer's own table has (onnx-to-tosa --list-operators), so
the documentation can neither claim an operator nor miss one.

    check-op-table.py ONNX_TO_TOSA DOCS/compiler.md
"""
import re
import subprocess
import sys


def documented(markdown):
    """The operator names in the first column of the table headed | ONNX | TOSA |."""
    names, inside = set(), False
    for line in markdown.splitlines():
        if line.startswith("| ONNX | TOSA |"):
            inside = True
            continue
        if inside and not line.startswith("|"):
            break
        if inside and not line.startswith("|---"):
            cell = re.sub(r"\([^)]*\)", "", line.split("|")[1])
            names.update(re.findall(r"\b[A-Z][A-Za-z0-9]+\b", cell))  # 2+ letters: not "1-D"
    return names


def main():
    tool, docs = sys.argv[1:3]
    supported = set(subprocess.run([tool, "--list-operators"], check=True, capture_output=True,
                                   text=True).stdout.split())
    with open(docs) as f:
        written = documented(f.read())
    status = 0
    for name in sorted(written - supported):
        print(f"{docs}: the table lists {name}, which the importer does not import")
        status = 1
    for name in sorted(supported - written):
        print(f"{docs}: the importer imports {name}, which the table does not list")
        status = 1
    if status == 0:
        print(f"{len(supported)} operators, table and importer agree")
    return status


if __name__ == "__main__":
    sys.exit(main())
