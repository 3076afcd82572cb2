#!/usr/bin/env python3
"""Checks the module graph against the table in docs/ARCHITECTURE.md ("Module graph"): every
non-test target's direct dependencies (targets of this package, and products of others) must be
exactly what the table lists, so a dependency cannot be added — or dropped — without the picture
saying so.

Usage, from the repository root:
    scripts/check-module-graph.py               compare `swift package describe` with the table
    scripts/check-module-graph.py --self-test   show the check fails when the table misses a
                                                dependency (and when it lists one too many)
Exits 0 when they agree, 1 with one line per difference, 2 when the table cannot be read.
"""
import json
import re
import subprocess
import sys
import tempfile

TABLE_HEADING = "## Module graph"


def describe():
    """Non-test targets → sorted direct dependencies, from SwiftPM itself."""
    out = subprocess.run(
        ["swift", "package", "describe", "--type", "json"], check=True, capture_output=True, text=True
    ).stdout
    graph = {}
    for target in json.loads(out)["targets"]:
        if target["type"] == "test" or target["name"] == "SMPTestSupport":
            continue
        graph[target["name"]] = sorted(set(target.get("target_dependencies", []) + target.get("product_dependencies", [])))
    return graph


def table(path):
    """The table under the "Module graph" heading: `| Target | Depends on |`, dependencies in
    backticks, `—` for none."""
    text = open(path, encoding="utf-8").read()
    start = text.find(TABLE_HEADING)
    if start < 0:
        sys.exit(f"error: {path} has no '{TABLE_HEADING}' section")
    graph = {}
    for line in text[start:].splitlines()[1:]:
        if line.startswith("## "):
            break
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) != 2 or not cells[0].startswith("`"):
            continue
        name = cells[0].strip("`")
        graph[name] = sorted(re.findall(r"`([^`]+)`", cells[1]))
    if not graph:
        sys.exit(f"error: the '{TABLE_HEADING}' section of {path} has no table rows")
    return graph


def differences(actual, documented):
    lines = []
    for name in sorted(set(actual) | set(documented)):
        if name not in documented:
            lines.append(f"{name}: a target the table does not list (it depends on {', '.join(actual[name]) or 'nothing'})")
            continue
        if name not in actual:
            lines.append(f"{name}: in the table, but no such target")
            continue
        gained = sorted(set(actual[name]) - set(documented[name]))
        lost = sorted(set(documented[name]) - set(actual[name]))
        if gained:
            lines.append(f"{name}: depends on {', '.join(gained)}, which the table does not list")
        if lost:
            lines.append(f"{name}: the table lists {', '.join(lost)}, which it does not depend on")
    return lines


def main():
    path = "docs/ARCHITECTURE.md"
    actual = describe()
    if "--self-test" in sys.argv:
        documented = table(path)
        name = next(name for name, deps in documented.items() if deps)
        missing = dict(documented, **{name: documented[name][1:]})
        extra = dict(documented, **{name: documented[name] + ["NotADependency"]})
        for label, broken in [("a dependency left out", missing), ("one too many", extra)]:
            found = differences(actual, broken)
            if not found:
                print(f"error: the check missed {label} in {name}'s row")
                return 1
            print(f"self-test: {label} in {name}'s row is caught: {found[0]}")
        print("self-test passed")
        return 0
    found = differences(actual, table(path))
    for line in found:
        print(f"error: {line}")
    if found:
        print(f"the module graph differs from the table in {path} ('{TABLE_HEADING}'): update one or the other")
        return 1
    print(f"module graph: {len(actual)} targets, as {path} says")
    return 0


if __name__ == "__main__":
    sys.exit(main())
