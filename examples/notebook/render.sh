#!/usr/bin/env bash
# render.sh executes examples/notebook/tokendist.ipynb headless (through check.sh, same
# kernel and checks) and writes the executed copy, outputs and plots included, to
# examples/notebook/tokendist-rendered.ipynb, which GitHub renders without Jupyter.
#
#   examples/notebook/render.sh    # regenerate tokendist-rendered.ipynb (commit it)
#
# Run it after changing the notebook or anything the notebook prints. Everything else
# (kernel build, apt packages, environment variables) is as in check.sh.
set -euo pipefail
script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
out=$(mktemp -d "${TMPDIR:-/tmp}/tokendist-render.XXXXXX")
trap 'rm -rf "$out"' EXIT
"$script_dir/check.sh" --out "$out"
# Drop the per-run metadata (timings, kernel start times) so that a re-render without
# changes gives a small diff.
/usr/bin/python3 - "$out/tokendist.ipynb" "$script_dir/tokendist-rendered.ipynb" <<'PY'
import json, sys
nb = json.load(open(sys.argv[1]))
for c in nb["cells"]:
    md = c.get("metadata", {})
    md.pop("execution", None)
    c["metadata"] = md
nb.setdefault("metadata", {}).pop("widgets", None)
with open(sys.argv[2], "w") as f:
    json.dump(nb, f, indent=1, ensure_ascii=False)
    f.write("\n")
PY
printf 'render: wrote %s\n' "$script_dir/tokendist-rendered.ipynb" >&2
