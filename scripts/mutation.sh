#!/usr/bin/env bash
# Mutation testing with gremlins (github.com/go-gremlins/gremlins, pinned below; run
# through `go run`, nothing installed by hand). See docs/mutation.md.
#
#   scripts/mutation.sh                      non-test .go files changed against the base
#                                            (origin/main if it exists, else main), with
#                                            uncommitted changes
#   scripts/mutation.sh FILE|DIR ...         these files, or every non-test file of these
#                                            package directories; FILE:Func,Recv.Method
#                                            or FILE:12,30-41 selects functions or lines
#   scripts/mutation.sh --subset NAME        a subset of scripts/mutation-subsets.txt
#                                            ("ci" is the one .ci/run uses, "named" the
#                                            code named in issue 28)
#
# Options (before the paths):
#   --base REV     the base for the no-argument form
#   --run REGEX    run only the tests matching REGEX for every mutant (default: all the
#                  package's tests, with -short); subsets set their own
#   --floor PCT    exit 1 if the kill rate is below PCT (default 0: report only)
#   --workers N    mutants tested at once (default 1; the machine is shared)
#   --out DIR      keep the logs and JSON results there (default: a temporary directory)
#
# For every package directory it runs `gremlins unleash` once, excluding every other
# file, with GOFLAGS="-count=1 -short -run=REGEX" so that the coverage run is not served
# from the test cache (gremlins derives each mutant's timeout from its duration) and each
# mutant runs only the tests that can see it. It prints every surviving (LIVED) mutant as
# file:line:col and its kind, then the totals. The kill rate counts a mutant that
# times out as killed (the test binary would hit its -timeout); NOT COVERED mutants
# (no selected test reaches the line) are listed separately and are not in the rate.
set -euo pipefail
GREMLINS=github.com/go-gremlins/gremlins/cmd/gremlins@v0.6.0
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

base="" run="" floor=0 workers=1 out="" subset=""
while [ $# -gt 0 ]; do
  case $1 in
  --base) base=$2; shift 2 ;;
  --run) run=$2; shift 2 ;;
  --floor) floor=$2; shift 2 ;;
  --workers) workers=$2; shift 2 ;;
  --out) out=$2; shift 2 ;;
  --subset) subset=$2; shift 2 ;;
  -h | --help) sed -n '2,29p' "$0"; exit 0 ;;
  --) shift; break ;;
  -*) echo "mutation.sh: unknown option $1" >&2; exit 2 ;;
  *) break ;;
  esac
done
[ -n "$out" ] || { out=$(mktemp -d); trap 'rm -rf "$out"' EXIT; }
mkdir -p "$out"

# groups: one line per gremlins run, "dir<TAB>files (space-separated, relative to dir)<TAB>run regex"
groups=()
if [ -n "$subset" ]; then
  while IFS='|' read -r name dir files rx; do
    [ "$name" = "$subset" ] || continue
    groups+=("$dir	$files	$rx")
  done < <(grep -v '^[[:space:]]*\(#\|$\)' scripts/mutation-subsets.txt | sed 's/[[:space:]]*|[[:space:]]*/|/g')
  [ ${#groups[@]} -gt 0 ] || { echo "mutation.sh: no subset $subset in scripts/mutation-subsets.txt" >&2; exit 2; }
else
  paths=("$@")
  if [ ${#paths[@]} -eq 0 ]; then
    if [ -z "$base" ]; then
      base=main
      git rev-parse -q --verify origin/main >/dev/null && base=origin/main
    fi
    mapfile -t paths < <({ git diff --name-only "$(git merge-base "$base" HEAD)" -- '*.go'; git ls-files --others --exclude-standard -- '*.go'; } | sort -u)
  fi
  declare -A byDir=()
  for p in "${paths[@]}"; do
    p=${p#./}
    sel=""
    case $p in *.go:*) sel=:${p#*.go:}; p=${p%%.go:*}.go ;; esac
    if [ -d "$p" ]; then
      for f in "$p"/*.go; do
        [ -e "$f" ] || continue
        byDir[$p]+=" $(basename "$f")"
      done
    elif [ -f "$p" ]; then
      byDir[$(dirname "$p")]+=" $(basename "$p")$sel"
    fi
  done
  for d in "${!byDir[@]}"; do
    files=""
    for f in ${byDir[$d]}; do
      case $f in *_test.go) continue ;; esac
      case " $files " in *" $f "*) ;; *) files="$files $f" ;; esac
    done
    [ -n "$files" ] && groups+=("$d	${files# }	$run")
  done
  if [ ${#groups[@]} -eq 0 ]; then
    echo "mutation.sh: no non-test Go files to mutate"; exit 0
  fi
fi

# exclusions: every non-test .go file under dir except the chosen ones (gremlins walks
# the directory recursively and matches -E against paths relative to it).
exclude_regex() {
  local dir=$1 keep=" $2 " f rel alts=""
  while IFS= read -r f; do
    rel=${f#"$dir"/}
    case "$keep" in *" $rel "*) continue ;; esac
    alts="$alts|$(printf '%s' "$rel" | sed 's/[.]/\\./g')"
  done < <(find "$dir" -name '*.go' ! -name '*_test.go' | sort)
  if [ -n "$alts" ]; then printf '^(%s)$' "${alts#|}"; fi
}

# func_lines FILE NAME,... prints the line ranges (FROM-TO) of the named top-level
# functions and methods of a gofmt-formatted file; a name is Name or Recv.Name.
func_lines() {
  awk -v names="$2" -v file="$1" '
    BEGIN { n = split(names, a, ","); for (i = 1; i <= n; i++) want[a[i]] = 1 }
    /^func / {
      line = $0; recv = ""
      if (line ~ /^func \(/) { recv = line; sub(/^func \([^)]*[ *]/, "", recv); sub(/[\[)].*/, "", recv); sub(/^func \([^)]*\) /, "", line) }
      else sub(/^func /, "", line)
      name = line; sub(/[\[(].*/, "", name)
      if ((name in want) || ((recv "." name) in want)) { start = NR; inside = 1; found[name] = found[recv "." name] = 1 }
    }
    inside && (/^}/ || (NR == start && /}$/)) { print start "-" NR; inside = 0 }
    END { for (w in want) if (!(w in found)) { print "mutation.sh: no func " w " in " file > "/dev/stderr"; exit 1 } }' "$1"
}

# prepare DIR SPEC... copies the work tree to a temporary module whose git repository
# (rooted at DIR, so that gremlins' diff paths match its own) has a base commit in which
# the selected lines are blank: gremlins --diff then mutates exactly those lines. SPEC is
# FILE (every line), FILE:Name,Recv.Name (those functions) or FILE:12,30-41 (those
# lines). Prints the copy's path.
prepare() {
  local dir=$1 tmp spec f names ranges r
  shift
  tmp=$(mktemp -d)
  git ls-files -z -co --exclude-standard | tar --null -T - -cf - | tar -x -C "$tmp"
  (
    cd "$tmp/$dir"
    # No context lines: gremlins takes each hunk's added lines as one run from its first
    # changed line, so a hunk that joins separate changes would lose the later ones.
    git init -q . && git config diff.context 0 && git add -A . >/dev/null
    for spec in "$@"; do # a file may come in several specs: blank them all, then commit
      f=${spec%%:*}
      [ -e "$f.orig" ] || cp "$f" "$f.orig"
      if [ "$f" = "$spec" ]; then ranges="1-$(wc -l <"$f")"; else
        names=${spec#*:}
        if [[ $names =~ ^[0-9,-]+$ ]]; then # line numbers and ranges
          ranges=$(tr ',' '\n' <<<"$names" | sed 's/^\([0-9]*\)$/\1-\1/')
        else
          ranges=$(func_lines "$f.orig" "$names") || exit 1
        fi
      fi
      for r in $ranges; do sed -i "${r%-*},${r#*-}s/.*//" "$f"; done
    done
    for spec in "$@"; do
      f=${spec%%:*}
      [ -e "$f.orig" ] || continue
      git add "$f"
      mv "$f.orig" "$f"
    done
    git -c user.name=m -c user.email=m@m commit -qm base --no-gpg-sign
  ) >&2 || { rm -rf "$tmp"; return 1; }
  echo "$tmp"
}

i=0 status=0
for g in "${groups[@]}"; do
  IFS='	' read -r dir files rx <<<"$g"
  i=$((i + 1))
  plain=""
  for spec in $files; do plain="$plain ${spec%%:*}"; done
  ex=$(exclude_regex "$dir" "${plain# }")
  flags="-count=1 -short"
  [ -n "$rx" ] && flags="$flags -run=$rx"
  echo "-- $dir: $files${rx:+ (tests: $rx)}"
  # shellcheck disable=SC2086 # $files is a list
  tmp=$(prepare "$dir" $files) || { status=1; continue; }
  args=(unleash --workers "$workers" --timeout-coefficient 10 -o "$out/$i.raw" --diff HEAD
    --invert-logical --invert-loopctrl --remove-self-assignments)
  [ -n "$ex" ] && args+=(-E "$ex")
  start=$(date +%s)
  if ! (cd "$tmp/$dir" && GOFLAGS="${GOFLAGS:-} $flags" go run "$GREMLINS" "${args[@]}" "$tmp/$dir") >"$out/$i.log" 2>&1; then
    tail -n 30 "$out/$i.log"; echo "mutation.sh: gremlins failed on $dir"; status=1; rm -rf "$tmp"; continue
  fi
  rm -rf "$tmp"
  jq --arg d "$dir" '.dir = $d' "$out/$i.raw" >"$out/$i.json"
  echo "   ($(($(date +%s) - start))s)"
done

# The totals and survivors, from gremlins' JSON results.
shopt -s nullglob
results=("$out"/*.json)
[ ${#results[@]} -gt 0 ] || exit 1
jq -rs '[.[] | .dir as $d | .files[] | ((if $d == "." then "" else $d + "/" end) + .file_name) as $f | .mutations[] | select(.status == "LIVED") |
  "   LIVED \($f):\(.line):\(.column) \(.type)"] | .[]' "${results[@]}"
jq -rs '[.[] | .dir as $d | .files[] | ((if $d == "." then "" else $d + "/" end) + .file_name) as $f | .mutations[] | select(.status == "NOT COVERED") |
  "   not covered \($f):\(.line):\(.column) \(.type)"] | .[]' "${results[@]}"
read -r killed lived timedout notcov notviable < <(jq -rs '[.[].files[].mutations[].status] as $s |
  ["KILLED", "LIVED", "TIMED OUT", "NOT COVERED", "NOT VIABLE"] | map(. as $k | $s | map(select(. == $k)) | length) | @tsv' "${results[@]}")
tested=$((killed + timedout + lived))
rate=$(awk -v k=$((killed + timedout)) -v t=$tested 'BEGIN { if (t == 0) print "100.0"; else printf "%.1f", 100 * k / t }')
echo "mutants: $killed killed, $timedout timed out, $lived lived, $notcov not covered, $notviable not viable"
echo "kill rate: $rate % ($((killed + timedout)) of $tested)"
if awk -v r="$rate" -v f="$floor" 'BEGIN { exit !(r < f) }'; then
  echo "mutation.sh: kill rate $rate % is below the floor $floor %"; status=1
fi
exit $status
