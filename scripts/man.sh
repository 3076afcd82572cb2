#!/usr/bin/env bash
# The mcumgr(1) man page, docs/man/mcumgr.1, generated from the command tree by
# swift-argument-parser's GenerateManual plugin.
#
# Usage, from anywhere in the repository:
#     scripts/man.sh           # regenerate docs/man/mcumgr.1 (commit the result)
#     scripts/man.sh --check   # exit 1 if the committed page differs from the command tree
#
# The page's date (.Dd) is kept while nothing else changes, so regenerating an unchanged tree is
# a no-op; a changed page gets today's date. The tool is built in debug mode, reusing the build
# of `swift build` / `swift test` (the plugin's default, release, would build everything again).
set -euo pipefail
cd "$(dirname "$0")/.."

page=docs/man/mcumgr.1
generated=.build/plugins/GenerateManual/outputs/MCUmgrCLI/mcumgr.1
check=false
case "${1:-}" in
    "") ;;
    --check) check=true ;;
    *)
        echo "usage: scripts/man.sh [--check]" >&2
        exit 64
        ;;
esac

# Generates the page with a date (yyyy-mm-dd) into $generated.
generate() {
    rm -f "$generated"
    swift package plugin generate-manual --configuration debug --date "$1" >/dev/null
    [[ -s "$generated" ]] || {
        echo "error: the GenerateManual plugin wrote no $generated" >&2
        exit 1
    }
    mdoc_blocks "$generated"
}

# The plugin copies help discussions verbatim, and mdoc reads text in fill mode: a blank line
# is a warning (and a lost paragraph break), and the indented tables of `mcumgr --help` (global
# options, exit statuses) would be run together. Blank lines become paragraphs (.Pp), indented
# runs literal displays (.Bd -literal / .Ed), and text lines start a new line at each new
# sentence, as mdoc wants (it spaces sentences by line ends).
mdoc_blocks() {
    python3 - "$1" <<'PY'
import re, sys
path = sys.argv[1]
lines = open(path, encoding="utf-8").read().split("\n")
out, literal = [], False
for line in lines:
    indented = line.startswith("  ") and not line.startswith(".")
    if indented and not literal:
        out.append(".Bd -literal -offset indent")
        literal = True
    elif literal and not indented:
        out.append(".Ed")
        literal = False
    if line == "" and not literal:
        out.append(".Pp")
    elif literal or line.startswith("."):
        out.append(line)
    else:
        out.extend(re.split(r"(?<=[A-Za-z0-9)][.!?]) +(?=[A-Z])", line))
# A paragraph break right before a list item or a section is no break: mdoc skips it, warning.
out = [line for index, line in enumerate(out)
       if not (line == ".Pp" and index + 1 < len(out) and out[index + 1].split(" ")[0] in (".It", ".El", ".Sh", ".Pp"))]
if out and out[-1] == ".Pp":
    out[-1] = ""
open(path, "w", encoding="utf-8").write("\n".join(out))
PY
}

# Renders the page as man(1) does and fails on any warning groff gives.
render_check() {
    if ! command -v groff >/dev/null; then
        echo "error: groff is not installed; it renders the page for the check (apt-get install groff-base)" >&2
        exit 1
    fi
    local warnings
    warnings=$(groff -mandoc -ww -z "$page" 2>&1)
    if [[ -n "$warnings" ]]; then
        echo "error: $page renders with warnings:" >&2
        echo "$warnings" >&2
        exit 1
    fi
    if command -v mandoc >/dev/null; then
        warnings=$(mandoc -T lint -W warning "$page" 2>&1 || true)
        if [[ -n "$warnings" ]]; then
            echo "error: mandoc finds warnings in $page:" >&2
            echo "$warnings" >&2
            exit 1
        fi
    fi
    echo "$page renders without warnings (groff -mandoc -ww$(command -v mandoc >/dev/null && echo ', mandoc -T lint'))"
}

# The committed page's .Dd date as yyyy-mm-dd, or nothing when there is no page yet.
committed_date() {
    [[ -f "$page" ]] || return 0
    python3 -c '
import datetime, sys
for line in open(sys.argv[1], encoding="utf-8"):
    if line.startswith(".Dd "):
        print(datetime.datetime.strptime(line[4:].strip(), "%B %d, %Y").date().isoformat())
        break
' "$page"
}

date=$(committed_date)
if [[ -n "$date" ]]; then
    generate "$date"
    if cmp -s "$generated" "$page"; then
        echo "$page is up to date with the command tree"
        render_check
        exit 0
    fi
fi

if $check; then
    echo "error: $page is out of date with the command tree; run scripts/man.sh and commit $page" >&2
    [[ -f "$page" ]] && { diff -u "$page" "$generated" | head -40 >&2 || true; }
    exit 1
fi

generate "$(date +%Y-%m-%d)"
mkdir -p "$(dirname "$page")"
cp "$generated" "$page"
echo "wrote $page"
render_check
