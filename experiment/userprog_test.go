package experiment

import (
	"bytes"
	"crypto/sha256"
	"database/sql"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// userMain is a user program as docs/experiments.md shows one: it registers the
// balancer "pairs" and runs experiment.Main. SPLIT is replaced by one line of the
// balancer.
const userMain = `package main

import (
	"os"

	"github.com/tokendist/tokendist"
	"github.com/tokendist/tokendist/experiment"
	"github.com/tokendist/tokendist/registry"
)

type pairs struct{ rounds int }

func (p pairs) Step(s *tokendist.State) error {
	for r := 0; r < p.rounds; r++ {
		for i := 0; i+1 < len(s.Loads); i += 2 {
			t := s.Loads[i] + s.Loads[i+1]
			SPLIT
		}
	}
	return nil
}

func main() {
	reg := registry.Default()
	err := reg.RegisterAlgorithm(registry.Entry{Name: "pairs", Doc: "a toy balancer",
		Params: []registry.Param{{Name: "rounds", Type: registry.ParamInt, Default: int64(1), Doc: "rounds per step"}}},
		func(g *tokendist.Graph, l tokendist.Loads, p registry.Params) (tokendist.Balancer, error) {
			r, err := p.Int("rounds")
			if err != nil {
				return nil, err
			}
			return pairs{rounds: r}, nil
		})
	if err != nil {
		panic(err)
	}
	os.Exit(experiment.Main(reg, os.Args[1:], os.Stdout, os.Stderr))
}
`

// userFile is a grid of 6 runs of the user's balancer.
const userFile = `name: userbal
networks:
  - name: path
    n: [4, 8]
loads:
  - name: point-mass
    tokens: 11
algorithms: [pairs]
stop:
  max_steps: 5
seeds: 3
`

// TestUserProgramCodeChange is the defect of issue 35 item 1 end to end: a user module
// (example.com/userbal, tokendist through a replace directive) registers a balancer and
// runs experiment.Main. It is built and swept; rebuilt unchanged, a sweep runs nothing
// (the build is reproducible, so the digest and the keys stay); with one line of the
// balancer changed and rebuilt, a sweep runs every run anew, says so in one line, and
// the report keeps the two codes apart (and pools them with --all-code only). A merge
// keeps the runs of both codes as distinct rows. Everything is written under
// t.TempDir(); the builds use the go command's caches and no network.
func TestUserProgramCodeChange(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds a user program twice")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH")
	}
	root, err := filepath.Abs("..")
	require.NoError(t, err)
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	require.NoError(t, err)
	mod := t.TempDir()
	gomod := "module example.com/userbal\n\ngo 1.24.0\n\nrequire github.com/tokendist/tokendist v1.0.0\n\nreplace github.com/tokendist/tokendist => " + strconv.Quote(root) + "\n"
	require.NoError(t, os.WriteFile(filepath.Join(mod, "go.mod"), []byte(gomod), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(mod, "go.sum"), sum, 0o644))
	work := t.TempDir()
	bin := filepath.Join(work, "userbal")
	build := func(split string) []byte {
		t.Helper()
		src := strings.Replace(userMain, "SPLIT", split, 1)
		require.NoError(t, os.WriteFile(filepath.Join(mod, "main.go"), []byte(src), 0o644))
		cmd := exec.Command(goTool, "build", "-o", bin, ".")
		cmd.Dir = mod
		// Offline: the module cache of this test's build holds every dependency.
		cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off", "GOPROXY=off", "GOTOOLCHAIN=local")
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "go build: %s", out)
		data, err := os.ReadFile(bin)
		require.NoError(t, err)
		s := sha256.Sum256(data)
		return s[:]
	}
	file := filepath.Join(work, "userbal.yaml")
	require.NoError(t, os.WriteFile(file, []byte(userFile), 0o644))
	db := filepath.Join(work, "userbal.db")
	run := func(args ...string) (string, string) {
		t.Helper()
		cmd := exec.Command(bin, args...)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		require.NoError(t, cmd.Run(), "%s %v: %s", bin, args, stderr.String())
		return stdout.String(), stderr.String()
	}
	sweep := func() string {
		_, e := run("sweep", "--progress", "lines", "--workers", "1", "--db", db, file)
		return e
	}
	const v1, v2 = "s.Loads[i], s.Loads[i+1] = t/2, t-t/2", "s.Loads[i], s.Loads[i+1] = t-t/2, t/2"

	sum1 := build(v1)
	out, _ := run("version")
	codeLine := regexp.MustCompile(`(?m)^code: +(\S.*)$`).FindStringSubmatch(out)
	require.NotNil(t, codeLine, "tokendist version prints no code line:\n%s", out)
	code1 := codeLine[1]
	require.Regexp(t, `^main=example\.com/userbal@\S+\+sha256:[0-9a-f]{12} tokendist=v1\.0\.0=>`, code1)
	e := sweep()
	require.Contains(t, e, "sweep: 6 runs done (0 failed), 0 skipped")
	require.NotContains(t, e, "other code")

	// Rebuilt unchanged: the same binary, the same keys, nothing to run.
	require.Equal(t, sum1, build(v1), "an unchanged rebuild gave another binary")
	e = sweep()
	require.Contains(t, e, "sweep: 0 runs done (0 failed), 6 skipped", "an unchanged rebuild re-ran runs:\n%s", e)
	require.NotContains(t, e, "other code")

	// One line of the balancer changed: every run again, with the notice.
	require.NotEqual(t, sum1, build(v2))
	out, _ = run("version")
	code2 := regexp.MustCompile(`(?m)^code: +(\S.*)$`).FindStringSubmatch(out)[1]
	require.NotEqual(t, code1, code2)
	e = sweep()
	require.Contains(t, e, "sweep: 6 runs done (0 failed), 0 skipped", "a changed balancer did not re-run:\n%s", e)
	notice := regexp.MustCompile(`(?m)^sweep: the database holds (\d+) of these runs from other code \((.*)\); running them anew for (.*) \(reports`).FindStringSubmatch(e)
	require.NotNil(t, notice, "no notice of other code:\n%s", e)
	require.Equal(t, "6", notice[1])
	require.Equal(t, code1, notice[2])
	require.Equal(t, code2, notice[3])
	require.Equal(t, 1, strings.Count(e, "other code"), "the notice is one line:\n%s", e)
	t.Logf("changed balancer:\n%s", e)

	// The runs table records both codes, 6 runs each, with the main module and digest.
	s, err := sql.Open("sqlite", "file:"+db+"?mode=ro")
	require.NoError(t, err)
	defer s.Close()
	rows, err := s.Query(`SELECT code, code_main, code_sha256, version, count(*) FROM runs GROUP BY code ORDER BY min(finished_at)`)
	require.NoError(t, err)
	var got []string
	for rows.Next() {
		var code, main, digest, version string
		var n int
		require.NoError(t, rows.Scan(&code, &main, &digest, &version, &n))
		require.Equal(t, "example.com/userbal@(devel)", main)
		require.Len(t, digest, 64)
		require.True(t, strings.HasPrefix(version, "v1.0.0 => "), version)
		got = append(got, code+" "+strconv.Itoa(n))
	}
	require.NoError(t, rows.Err())
	require.Equal(t, []string{code1 + " 6", code2 + " 6"}, got)

	// The summary keeps the codes apart (a code column, one group per code), and pools
	// them with --all-code only.
	out, _ = run("report", "--db", db, "--summary", "--format", "csv", "--values", "discrepancy")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Contains(t, lines[0], ",code,")
	require.Len(t, lines, 1+4, "2 networks × 2 codes:\n%s", out)
	require.Equal(t, 2, strings.Count(out, code1))
	require.Equal(t, 2, strings.Count(out, code2))
	out, _ = run("report", "--db", db, "--summary", "--format", "csv", "--values", "discrepancy", "--all-code")
	lines = strings.Split(strings.TrimSpace(out), "\n")
	require.NotContains(t, lines[0], "code")
	require.Len(t, lines, 1+2, "--all-code pools the codes:\n%s", out)
	require.Contains(t, lines[1], ",6,", "a pooled group has the 6 runs of both codes:\n%s", out)
	out, _ = run("report", "--db", db, "--format", "csv")
	require.Equal(t, 6, strings.Count(out, code1))
	require.Equal(t, 6, strings.Count(out, code2))

	// Merge keeps them apart.
	merged := filepath.Join(work, "merged.db")
	run("merge", "--into", merged, db)
	out, _ = run("report", "--db", merged, "--format", "csv")
	require.Equal(t, 6, strings.Count(out, code1))
	require.Equal(t, 6, strings.Count(out, code2))
}
