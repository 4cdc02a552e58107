#!/usr/bin/env bash
# check.sh builds a Go Jupyter kernel (gophernotes + gomacro) and executes
# examples/notebook/tokendist.ipynb headless; it exits non-zero if any cell fails.
#
#   examples/notebook/check.sh               # build (or reuse) the kernel, run the notebook
#   examples/notebook/check.sh --kernel-only # build and write the kernelspec, run nothing
#   examples/notebook/check.sh --out DIR     # also keep the executed notebook in DIR
#   examples/notebook/check.sh --notebook F  # execute notebook F instead (same kernel)
#
# Works from any directory and from a fresh clone with only Go installed (Debian/Ubuntu:
# missing apt packages are installed; as root, or through passwordless sudo). It never
# writes inside the repository. See examples/notebook/README.md.
#
# Environment:
#   TOKENDIST_NOTEBOOK_CACHE   kernel cache (default ${XDG_CACHE_HOME:-$HOME/.cache}/tokendist-notebook)
#   TOKENDIST_NOTEBOOK_TIMEOUT seconds one cell may run (default 900: the first import
#                              of the library builds it as a plugin)
#   TOKENDIST_NOTEBOOK_XTOOLS  golang.org/x/tools version the kernel links (default v0.52.0,
#                              which needs Go >= 1.26; older Go needs an older x/tools)
set -euo pipefail

# Versions that work together (see examples/notebook/README.md, "Notes for maintainers").
GOMACRO_VERSION=v0.0.0-20240506194242-2ff796e3da10 # gomacro's newest commit; no tags served
GOPHERNOTES_VERSION=v0.7.5
XTOOLS_VERSION=${TOKENDIST_NOTEBOOK_XTOOLS:-v0.52.0}
PATCH_LEVEL=1 # bump when the patches below change, to force a rebuild
APT_PACKAGES=(jupyter-nbconvert jupyter-client python3-nbclient python3-ipykernel jupyter-core)
MODULE=github.com/tokendist/tokendist

start=$SECONDS
log() { printf 'notebook: %s\n' "$*" >&2; }
die() {
	printf 'notebook: ERROR: %s\n' "$*" >&2
	exit 1
}

usage() { sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed -n 's/^# \{0,1\}//p'; }

kernel_only=false
out_dir=
notebook_arg=
while (($#)); do
	case $1 in
	--kernel-only) kernel_only=true ;;
	--notebook)
		(($# >= 2)) || die "--notebook needs a file"
		notebook_arg=$2
		shift
		;;
	--out)
		(($# >= 2)) || die "--out needs a directory"
		out_dir=$2
		shift
		;;
	-h | --help)
		usage
		exit 0
		;;
	*) die "unknown argument $1 (try --help)" ;;
	esac
	shift
done

# --- locate the repository from the script's own path -------------------------------
script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
repo=$(cd "$script_dir/../.." && pwd -P)
notebook=$script_dir/tokendist.ipynb
if [[ -n $notebook_arg ]]; then
	[[ -f $notebook_arg ]] || die "notebook $notebook_arg does not exist"
	notebook=$(cd "$(dirname "$notebook_arg")" && pwd -P)/$(basename "$notebook_arg")
fi
if ! grep -qs "^module $MODULE\$" "$repo/go.mod"; then
	die "$repo is not the $MODULE checkout (expected its go.mod two levels above $script_dir)"
fi
[[ -f $notebook ]] || die "notebook $notebook is missing"
if [[ -n $out_dir ]]; then
	mkdir -p "$out_dir" || die "cannot create --out directory $out_dir"
	out_dir=$(cd "$out_dir" && pwd -P)
fi

# --- Go --------------------------------------------------------------------------------
command -v go >/dev/null || die "go is not on PATH; install Go first (https://go.dev/dl)"
export GOTOOLCHAIN=local # plugins must be built by exactly the kernel's toolchain
goversion=$(go env GOVERSION)
gov=${goversion#go}
gov=${gov%%[!0-9.]*}
libgo=$(sed -n 's/^go \([0-9.]*\).*/\1/p' "$repo/go.mod")
if [[ $(printf '%s\n%s\n' "$libgo" "$gov" | sort -V | head -n1) != "$libgo" ]]; then
	die "the library needs Go >= $libgo, this is $goversion"
fi
goroot=$(go env GOROOT)
gomodcache=$(go env GOMODCACHE)
gocache=$(go env GOCACHE)

# --- system packages: a C compiler (plugins need cgo) and Debian's Jupyter --------------
missing=()
command -v gcc >/dev/null || missing+=(gcc libc6-dev)
command -v pgrep >/dev/null || missing+=(procps) # cleanup finds an orphaned kernel with pgrep
if command -v dpkg-query >/dev/null; then
	for p in "${APT_PACKAGES[@]}"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
	done
elif ! /usr/bin/python3 -c 'import nbconvert, nbclient, jupyter_client' 2>/dev/null; then
	die "no dpkg here: install Jupyter's nbconvert, nbclient and jupyter_client for /usr/bin/python3 yourself"
fi
if ((${#missing[@]})); then
	log "installing ${missing[*]} with apt-get"
	sudo=()
	if ((EUID != 0)); then
		if ! { command -v sudo >/dev/null && sudo -n true 2>/dev/null; }; then
			die "need root to install ${missing[*]}; run: sudo apt-get install --no-install-recommends ${missing[*]}"
		fi
		sudo=(sudo -n)
	fi
	command -v apt-get >/dev/null || die "no apt-get: install ${missing[*]} yourself"
	"${sudo[@]}" apt-get update -qq </dev/null >&2 || die "apt-get update failed"
	DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends \
		"${missing[@]}" </dev/null >&2 || die "apt-get install ${missing[*]} failed"
fi
python=/usr/bin/python3
"$python" -c 'import nbconvert, nbclient, jupyter_client' ||
	die "$python cannot import nbconvert/nbclient/jupyter_client"
command -v gcc >/dev/null || die "gcc is missing: Go plugins need cgo"

# --- build gomacro and gophernotes into the cache ----------------------------------
cache=${TOKENDIST_NOTEBOOK_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/tokendist-notebook}
mkdir -p "$cache" || die "cannot create cache directory $cache"
cache=$(cd "$cache" && pwd -P)
if command -v flock >/dev/null; then
	exec 9>"$cache/.lock"
	flock 9 # one build at a time per cache
fi
bin=$cache/bin
stamp="go=$goversion $(go env GOOS)/$(go env GOARCH) goroot=$goroot gomacro=$GOMACRO_VERSION"
stamp+=" gophernotes=$GOPHERNOTES_VERSION x/tools=$XTOOLS_VERSION patch=$PATCH_LEVEL"

# Environment of every build step: gomacro's pseudo-version has no checksum-database entry.
buildenv() {
	env GOFLAGS="-mod=mod -buildvcs=false" GONOSUMDB=github.com/cosmos72 GOWORK=off CGO_ENABLED=1 "$@"
}

# step NAME CMD...: runs a build step, shows its output only if it fails.
step() {
	local what=$1 t0=$SECONDS
	shift
	if ! "$@" >"$build/step.log" 2>&1; then
		cat "$build/step.log" >&2
		die "kernel build failed at: $what (cache: $cache; output above)"
	fi
	log "  $what ($((SECONDS - t0)) s)"
}

# modsrc MOD@VER DEST: copies a module's source from the module cache, writable.
modsrc() {
	local dir
	dir=$(cd "$build" && buildenv go mod download -json "$1" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
	[[ -n $dir && -d $dir ]] || return 1
	cp -R "$dir" "$2" && chmod -R u+w "$2"
}

# Patch 1: gomacro writes a go.mod for every plugin it builds; add the replace directives
# listed in $GOMACRO_GOMOD_REPLACE, so the notebook imports the local checkout by module
# path. (GOFLAGS=-modfile does not work: x/tools runs `go list` with GO111MODULE=off.)
patch_gomacro() {
	local d=$1/base/genimport
	cat >"$d/zz_tokendist_replace.go" <<'EOF'
package genimport

import (
	"os"
	"path/filepath"
	"strings"
)

// addEnvReplaceDirectives adds to m the replace directives listed in
// $GOMACRO_GOMOD_REPLACE ("module/path=/abs/dir" entries separated by the OS list
// separator), so a plugin can import an unpublished local module by its module path.
// Added by tokendist's examples/notebook/check.sh.
func addEnvReplaceDirectives(m map[PackagePath]AbsolutePath) map[PackagePath]AbsolutePath {
	for _, entry := range filepath.SplitList(os.Getenv("GOMACRO_GOMOD_REPLACE")) {
		mod, dir, ok := strings.Cut(entry, "=")
		if !ok || mod == "" || !filepath.IsAbs(dir) || isLocalFilesystemPath(mod) {
			continue
		}
		if m == nil {
			m = make(map[PackagePath]AbsolutePath)
		}
		if _, dup := m[PackagePath{mod}]; !dup {
			m[PackagePath{mod}] = AbsolutePath{filepath.Clean(dir)}
		}
	}
	return m
}
EOF
	sed -i 's/createPluginGoModFile(o, dir, goModReplaceDirective)/createPluginGoModFile(o, dir, addEnvReplaceDirectives(goModReplaceDirective))/' \
		"$d/importer_load.go"
	grep -q 'addEnvReplaceDirectives(goModReplaceDirective)' "$d/importer_load.go"
}

# Patch 2: gophernotes v0.7.5's JSONer proxy must return a map, as display.JSONer does
# (otherwise the kernel panics at start: "proxy for interface JSONer is invalid").
patch_gophernotes() {
	local f=$1/x_package.go
	sed -i -e 's/^\tJSON_  func(interface{}) string$/\tJSON_  func(interface{}) map[string]interface{}/' \
		-e 's/^func (P \*proxy_JSONer) JSON() string {$/func (P *proxy_JSONer) JSON() map[string]interface{} {/' "$f"
	[[ $(grep -c 'map\[string\]interface{}' "$f") == 2 ]]
}

build_kernel() {
	build=$cache/build
	rm -rf "$build" "$bin"
	mkdir -p "$build" "$bin"
	log "building the Go kernel into $cache (once per Go version: 1 to 5 minutes)"
	step "fetch gomacro $GOMACRO_VERSION" modsrc "github.com/cosmos72/gomacro@$GOMACRO_VERSION" "$build/gomacro"
	step "patch gomacro (GOMACRO_GOMOD_REPLACE)" patch_gomacro "$build/gomacro"
	# gomacro pins x/tools v0.14.0, which does not compile with Go >= 1.22; gotypesalias=0
	# avoids its panic on *types.Alias.
	step "gomacro: go.mod (x/tools $XTOOLS_VERSION, gotypesalias=0)" buildenv sh -c "cd '$build/gomacro' &&
		go mod edit -go=$gov -godebug=gotypesalias=0 &&
		go get golang.org/x/tools@$XTOOLS_VERSION && go mod tidy"
	step "build gomacro" buildenv sh -c "cd '$build/gomacro' && go build -o '$build/gomacro.bin' ."
	step "fetch gophernotes $GOPHERNOTES_VERSION" modsrc "github.com/gopherdata/gophernotes@$GOPHERNOTES_VERSION" "$build/gophernotes"
	step "patch gophernotes (JSONer proxy)" patch_gophernotes "$build/gophernotes"
	step "gophernotes: go.mod (patched gomacro, x/tools $XTOOLS_VERSION)" buildenv sh -c "cd '$build/gophernotes' &&
		go mod edit -go=$gov -godebug=gotypesalias=0 -require=github.com/cosmos72/gomacro@$GOMACRO_VERSION \
			-replace=github.com/cosmos72/gomacro=../gomacro &&
		go get golang.org/x/tools@$XTOOLS_VERSION && go mod tidy"
	step "build gophernotes" buildenv sh -c "cd '$build/gophernotes' && go build -o '$build/gophernotes.bin' ."
	mv "$build/gomacro.bin" "$bin/gomacro"
	mv "$build/gophernotes.bin" "$bin/gophernotes"
	printf '%s\n' "$stamp" >"$cache/stamp"
	rm -rf "$build"
}

t_build=$SECONDS
if [[ -x $bin/gophernotes && -x $bin/gomacro && -f $cache/stamp && $(cat "$cache/stamp") == "$stamp" ]]; then
	built="reused (built for $goversion)"
else
	build_kernel
	built="built in $((SECONDS - t_build)) s"
fi
log "kernel: $built: $bin/gophernotes"

# --- kernelspec ---------------------------------------------------------------------
# The kernel's go commands: the machine's proxies joined by "|" and then "off", so that
# `go get` of the (unpublished) library module ends in "lookup disabled" and the go
# command takes the replace directive's local copy instead of failing (a proxy answers
# 403 or 404 for it, and "," only falls through on 404/410).
goproxy=
IFS=',|' read -r -a proxies <<<"$(go env GOPROXY)"
for p in "${proxies[@]}"; do
	[[ -z $p || $p == direct || $p == off ]] || goproxy+="$p|"
done
goproxy+=off

# write_kernelspec DIR GOPATH: writes DIR/kernels/gophernotes/kernel.json.
write_kernelspec() {
	mkdir -p "$1/kernels/gophernotes"
	KS_FILE=$1/kernels/gophernotes/kernel.json KS_GOPATH=$2 KS_BIN=$bin/gophernotes \
		KS_GOPROXY=$goproxy KS_MODULE=$MODULE KS_REPO=$repo KS_GOROOT=$goroot \
		KS_GOMODCACHE=$gomodcache KS_GOCACHE=$gocache "$python" - <<'EOF'
import json, os
e = os.environ
spec = {
    "argv": [e["KS_BIN"], "{connection_file}"],
    "display_name": "Go (tokendist)",
    "language": "go",
    "env": {
        "GOPROXY": e["KS_GOPROXY"],
        "GONOSUMDB": "github.com/cosmos72," + e["KS_MODULE"],
        "GOMACRO_GOMOD_REPLACE": e["KS_MODULE"] + "=" + e["KS_REPO"],
        "GOTOOLCHAIN": "local",
        "GOWORK": "off",
        "CGO_ENABLED": "1",
        "GOROOT": e["KS_GOROOT"],
        "GOPATH": e["KS_GOPATH"],
        "GOMODCACHE": e["KS_GOMODCACHE"],
        "GOCACHE": e["KS_GOCACHE"],
        "PATH": e["KS_GOROOT"] + "/bin:" + e["PATH"],
    },
}
with open(e["KS_FILE"], "w") as f:
    json.dump(spec, f, indent=1)
    f.write("\n")
EOF
}
# For interactive use (README): the last checkout that ran check.sh.
write_kernelspec "$cache/jupyter" "$cache/gopath"
exec 9>&- # release the build lock (the kernel must not inherit it)
if $kernel_only; then
	log "kernelspec for $repo written; run the notebook interactively with:"
	log "  JUPYTER_PATH=$cache/jupyter jupyter notebook $notebook"
	exit 0
fi

# --- execute the notebook headless -------------------------------------------------
# Everything the run writes (kernelspec, connection files, gomacro's plugin sources,
# the executed notebook) lives in a private temp dir, removed at exit.
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tokendist-notebook.XXXXXX")
nbpid=
cleanup() {
	local pid
	if [[ -n $nbpid ]]; then
		kill "$nbpid" 2>/dev/null || true
		wait "$nbpid" 2>/dev/null || true
	fi
	# A kernel left behind (nbconvert killed) is recognised by its connection file, which
	# lives in $tmp (TMPDIR below); its go commands (a plugin build) go with it.
	local -a tree
	for pid in $(pgrep -f -- "$tmp/" 2>/dev/null || true); do
		mapfile -t tree < <(descendants "$pid")
		kill "${tree[@]}" "$pid" 2>/dev/null || true
	done
	rm -rf "$tmp"
}
descendants() {
	local child
	for child in $(pgrep -P "$1" 2>/dev/null || true); do
		descendants "$child"
		echo "$child"
	done
}
trap cleanup EXIT
trap 'exit 130' INT TERM
write_kernelspec "$tmp/jupyter" "$tmp/gopath"
mkdir -p "$tmp/out" "$tmp/runtime" "$tmp/tmp"

log "executing $notebook (timeout ${TOKENDIST_NOTEBOOK_TIMEOUT:-900} s per cell)"
t_run=$SECONDS
set +e
(
	cd "$(dirname "$notebook")" &&
		JUPYTER_PATH=$tmp/jupyter JUPYTER_RUNTIME_DIR=$tmp/runtime JUPYTER_CONFIG_DIR=$tmp/config \
			JUPYTER_DATA_DIR=$tmp/data JUPYTER_PLATFORM_DIRS=1 PYTHONNOUSERSITE=1 TMPDIR=$tmp/tmp \
			exec "$python" -m nbconvert --to notebook --execute \
			--ExecutePreprocessor.kernel_name=gophernotes \
			--ExecutePreprocessor.timeout="${TOKENDIST_NOTEBOOK_TIMEOUT:-900}" \
			--ExecutePreprocessor.startup_timeout=120 \
			--output-dir "$tmp/out" --output executed.ipynb "$notebook"
) </dev/null >"$tmp/nbconvert.log" 2>&1 &
nbpid=$!
wait "$nbpid"
rc=$?
nbpid=
set -e
t_run=$((SECONDS - t_run))
if ((rc != 0)); then
	if grep -q 'An error occurred while executing the following cell' "$tmp/nbconvert.log"; then
		sed -n '/An error occurred while executing the following cell/,$p' "$tmp/nbconvert.log" | head -n 80 >&2
	else
		tail -n 60 "$tmp/nbconvert.log" >&2
	fi
	die "the notebook failed (nbconvert exit $rc after $t_run s); the failing cell and its error are above"
fi

# Summary: every code cell must have run and produced no error output.
summary=$("$python" - "$tmp/out/executed.ipynb" <<'EOF'
import json, sys
nb = json.load(open(sys.argv[1]))
code = [c for c in nb["cells"] if c["cell_type"] == "code"]
ran = [c for c in code if c.get("execution_count") is not None]
errs = [c for c in code if any(o.get("output_type") == "error" for o in c.get("outputs", []))]
svgs = sum(1 for c in code for o in c.get("outputs", []) if "image/svg+xml" in o.get("data", {}))
print(len(code), len(ran), len(errs), svgs)
EOF
)
read -r n_code n_ran n_err n_svg <<<"$summary"
if ((n_ran != n_code || n_err != 0)); then
	die "only $n_ran of $n_code code cells ran cleanly ($n_err with errors)"
fi
if [[ -n $out_dir ]]; then
	cp "$tmp/out/executed.ipynb" "$out_dir/$(basename "$notebook")"
	log "executed notebook saved to $out_dir/$(basename "$notebook")"
fi
log "OK: $n_ran/$n_code code cells ran, $n_svg plots, notebook $t_run s, total $((SECONDS - start)) s (kernel $built)"
