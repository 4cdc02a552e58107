package experiment

import (
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const quickFile = `name: q
networks:
  - name: ring
    n: [8, 12]
loads:
  - name: random-range
    hi: 9
algorithms: [randomized-diffusion]
stop:
  max_steps: 5
seeds: 3
quick:
  seeds: 1
`

// TestQuickOwnDatabase checks that sweep --quick without --db writes FILE.quick.db, not
// the full sweep's FILE.db, and says where.
func TestQuickOwnDatabase(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "q.yaml")
	require.NoError(t, os.WriteFile(file, []byte(quickFile), 0o644))
	code, _, errs := runMain(t, "sweep", "--progress", "none", "--quick", file)
	require.Equal(t, ExitOK, code, errs)
	require.Contains(t, errs, "results in "+filepath.Join(dir, "q.quick.db"))
	require.FileExists(t, filepath.Join(dir, "q.quick.db"))
	require.NoFileExists(t, filepath.Join(dir, "q.db"))
	code, _, errs = runMain(t, "sweep", "--progress", "none", file)
	require.Equal(t, ExitOK, code, errs)
	for db, runs := range map[string]int{"q.quick.db": 2, "q.db": 6} {
		code, out, errs := runMain(t, "report", "--db", filepath.Join(dir, db), "--format", "csv")
		require.Equal(t, ExitOK, code, errs)
		require.Len(t, strings.Split(strings.TrimSpace(out), "\n"), 1+runs, db)
	}
}

// TestNoSurprises checks the errors for what used to pass silently: --quick on a file
// without a quick section, and a scalar where a parameter takes a list (a torus's sides:
// 16 used to be a ring).
func TestNoSurprises(t *testing.T) {
	dir := t.TempDir()
	noQuick := filepath.Join(dir, "nq.yaml")
	require.NoError(t, os.WriteFile(noQuick, []byte(strings.Split(quickFile, "quick:")[0]), 0o644))
	scalar := filepath.Join(dir, "scalar.yaml")
	require.NoError(t, os.WriteFile(scalar, []byte(strings.Replace(quickFile, "name: ring\n    n: [8, 12]", "name: torus\n    sides: 16", 1)), 0o644))
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"run", "--quick", noQuick}, "quick: the file has no quick section"},
		{[]string{"sweep", "--quick", "--db", filepath.Join(dir, "x.db"), noQuick}, "quick: the file has no quick section"},
		{[]string{"run", scalar}, "sides: want a list of integers, such as [16, 16], got the single value 16"},
	} {
		code, _, errs := runMain(t, tc.args...)
		require.Equal(t, ExitUsage, code, errs)
		require.Contains(t, errs, tc.msg)
		require.True(t, strings.HasPrefix(errs, "tokendist: "), errs)
	}
	require.NoFileExists(t, filepath.Join(dir, "x.db"))
	code, _, errs := runMain(t, "run", noQuick)
	require.Equal(t, ExitOK, code, errs)
}

// TestRunFailedAndTraceFiles checks tokendist run's table: a failed run shows its
// status and error (with the option that fixes it) and no numbers, and --trace-dir
// names each run's trace file, which exists.
func TestRunFailedAndTraceFiles(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f.yaml")
	require.NoError(t, os.WriteFile(file, []byte(strings.Replace(quickFile, "[randomized-diffusion]", "[randomized-diffusion, discrepancy-1]", 1)), 0o644))
	traces := filepath.Join(dir, "traces")
	code, _, errs := runMain(t, "run", "--plot", filepath.Join(dir, "p.gif"), file)
	require.Equal(t, ExitUsage, code)
	require.Contains(t, errs, `unknown image format "gif"`)
	code, out, errs := runMain(t, "run", "--format", "csv", "--trace-dir", traces, "--plot", filepath.Join(dir, "p.png"), file)
	require.Equal(t, ExitFailed, code, errs)
	rows := readCSV(t, out)
	col := index(rows[0])
	require.Contains(t, col, "trace_file")
	failed := 0
	for _, r := range rows[1:] {
		if strings.HasPrefix(r[col["status"]], "Failed") {
			failed++
			require.Contains(t, r[col["status"]], "set spanning_tree: true")
			for _, c := range []string{"discrepancy", "steps", "time", "moved", "trace_file"} {
				require.Empty(t, r[col[c]], c)
			}
			continue
		}
		require.NotEmpty(t, r[col["discrepancy"]])
		require.FileExists(t, r[col["trace_file"]])
	}
	require.Equal(t, 6, failed)
	png, err := os.ReadFile(filepath.Join(dir, "p.png"))
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(string(png), "\x89PNG"))
}

// TestVersionCommand checks tokendist version: the version, module version, revision
// and Go version lines, with and without VCS information.
func TestVersionCommand(t *testing.T) {
	var b strings.Builder
	bi := &debug.BuildInfo{Main: debug.Module{Path: modulePath, Version: "v1.1.0"},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "0123abcd"}, {Key: "vcs.time", Value: "2026-11-27T08:00:00Z"}, {Key: "vcs.modified", Value: "true"}}}
	writeVersion(&b, bi, true)
	require.Equal(t, "tokendist v1.1.0 rev 0123abcd modified\nmodule:   github.com/tokendist/tokendist v1.1.0\nrevision: 0123abcd (modified) 2026-11-27T08:00:00Z\n",
		b.String()[:strings.Index(b.String(), "go:")])
	b.Reset()
	writeVersion(&b, nil, false)
	require.Contains(t, b.String(), "revision: not recorded")
	code, out, _ := runMain(t, "version")
	require.Equal(t, ExitOK, code)
	require.True(t, strings.HasPrefix(out, "tokendist "+Version()+"\n"), out)
	code, _, _ = runMain(t, "version", "extra")
	require.Equal(t, ExitUsage, code)
}
