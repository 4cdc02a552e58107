package experiment

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tokendist/tokendist"
)

// faultFile is a grid of 48 runs with traces: the database grows to about 0.5 MB, and a
// sweep with one worker commits it in several transactions (one per 200 ms). Under the
// race detector, where every run is several times slower, the network is smaller.
const faultFile = `name: faults
networks:
  - name: random-regular
    n: NODES
    d: 4
loads:
  - name: point-mass
    tokens: 100000
algorithms: [randomized-diffusion, rsw-diffusion, random-matching]
stop:
  max_steps: [150, 300]
seeds: 8
record:
  trace: true
  sample_every: 3
`

// child runs this test binary as the tokendist command with args (env adds variables)
// and returns its exit code, stdout and stderr.
func child(t *testing.T, env []string, args ...string) (int, string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], args...)
	cmd.Env = append(append(os.Environ(), "TOKENDIST_EXP_MAIN=1"), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	require.NoError(t, ctx.Err(), "the command hung: %s", errb.String())
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else {
		require.NoError(t, err)
	}
	return code, out.String(), errb.String()
}

// readDump returns the comparable lines of a database, opened read-only.
func readDump(t *testing.T, path string) []string {
	t.Helper()
	db, err := OpenDBReadOnly(path)
	if errors.Is(err, ErrNotResults) && strings.Contains(err.Error(), "no tables") {
		return nil // created, nothing committed yet
	}
	require.NoError(t, err)
	defer db.Close()
	d, err := db.Dump()
	require.NoError(t, err)
	return d
}

func fileHash(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	s := sha256.Sum256(b)
	return fmt.Sprintf("%x", s)
}

// requireSubset checks that every line of got is a line of the reference: a partial
// database holds only runs the uninterrupted sweep stores, each once.
func requireSubset(t *testing.T, got, ref []string, what string) {
	t.Helper()
	want := map[string]int{}
	for _, l := range ref {
		want[l]++
	}
	for _, l := range got {
		require.Positive(t, want[l], "%s: a stored line is not in the reference (wrong or duplicated): %.200s", what, l)
		want[l]--
	}
}

// requireFailed checks a failure: a non-zero exit and an error line with the prefix.
func requireFailed(t *testing.T, code int, stderr, what string) {
	t.Helper()
	require.NotZero(t, code, "%s: exit 0; stderr %s", what, stderr)
	require.Contains(t, stderr, "tokendist: ", "%s: no error message", what)
	for _, line := range strings.Split(strings.TrimSpace(stderr), "\n") {
		require.True(t, strings.HasPrefix(line, "tokendist: ") || strings.HasPrefix(line, "sweep"), "%s: unprefixed line %q", what, line)
	}
}

// TestSweepUnderFaults is the crash test of the sweep beyond SIGKILL: a disk that fills
// (RLIMIT_FSIZE at growing limits, then a full tmpfs when this process may mount one),
// a read-only database, and a database damaged between two sweeps. Every failure is a
// non-zero exit with a prefixed message, every committed run survives, none is stored
// twice or wrong (each stage's rows are rows of the uninterrupted sweep), and the
// resumed sweep ends equal to it.
func TestSweepUnderFaults(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the command as child processes")
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "faults.yaml")
	nodes := "3000"
	if raceEnabled {
		nodes = "300"
	}
	require.NoError(t, os.WriteFile(file, []byte(strings.Replace(faultFile, "NODES", nodes, 1)), 0o644))
	small := filepath.Join(dir, "small.yaml")
	require.NoError(t, os.WriteFile(small, []byte(tinyFile+"record:\n  trace: true\n  sample_every: 1\n"), 0o644))
	ref := filepath.Join(dir, "ref.db")
	code, _, stderr := child(t, nil, "sweep", "--progress", "none", "--db", ref, file)
	require.Zero(t, code, stderr)
	want := readDump(t, ref)
	require.Greater(t, len(want), 48)

	t.Run("file size limit", func(t *testing.T) {
		db := filepath.Join(dir, "fsize.db")
		prev := 0
		failures := 0
		fi, err := os.Stat(ref)
		require.NoError(t, err)
		size := int(fi.Size())
		for _, limit := range []int{size / 4, size / 2, 3 * size / 4, 0} {
			var env []string
			if limit > 0 {
				env = []string{fmt.Sprint("TOKENDIST_EXP_FSIZE=", limit)}
			}
			code, _, stderr := child(t, env, "sweep", "--progress", "none", "--workers", "1", "--db", db, file)
			got := readDump(t, db)
			requireSubset(t, got, want, fmt.Sprintf("limit %d", limit))
			require.GreaterOrEqual(t, len(got), prev, "limit %d: committed lines lost", limit)
			prev = len(got)
			if limit == 0 {
				require.Zero(t, code, stderr)
				require.Equal(t, want, got, "the resumed sweep differs from the uninterrupted one")
				continue
			}
			if code != 0 {
				failures++
				requireFailed(t, code, stderr, fmt.Sprintf("limit %d", limit))
			}
			t.Logf("limit %d KiB: exit %d, %d of %d lines stored", limit>>10, code, len(got), len(want))
		}
		require.Positive(t, failures, "no limit made the sweep fail: the test tests nothing")
	})

	t.Run("trace dir under a file size limit", func(t *testing.T) {
		traces := filepath.Join(dir, "traces")
		code, _, stderr := child(t, []string{"TOKENDIST_EXP_FSIZE=600"}, "run", "--trace-dir", traces, small)
		requireFailed(t, code, stderr, "run --trace-dir")
		ents, err := os.ReadDir(traces)
		require.NoError(t, err)
		for _, e := range ents {
			fh, err := os.Open(filepath.Join(traces, e.Name()))
			require.NoError(t, err)
			tr, err := tokendist.ReadTraceCSV(fh)
			fh.Close()
			require.NoError(t, err, "a truncated trace file %s was left", e.Name())
			require.NotEmpty(t, tr)
		}
	})

	t.Run("full tmpfs", func(t *testing.T) {
		mnt := filepath.Join(dir, "mnt")
		require.NoError(t, os.Mkdir(mnt, 0o755))
		fi, err := os.Stat(ref)
		require.NoError(t, err)
		// Room for about half the database (tmpfs rounds to pages).
		if err := syscall.Mount("tmpfs", mnt, "tmpfs", 0, fmt.Sprintf("size=%dk", fi.Size()/2048)); err != nil {
			t.Skipf("cannot mount a tmpfs here (%v); the file size limit covers a full disk", err)
		}
		defer syscall.Unmount(mnt, 0)
		db := filepath.Join(mnt, "full.db")
		code, _, stderr := child(t, nil, "sweep", "--progress", "none", "--workers", "1", "--db", db, file)
		requireFailed(t, code, stderr, "full tmpfs")
		got := readDump(t, db)
		requireSubset(t, got, want, "full tmpfs")
		require.NoError(t, syscall.Mount("tmpfs", mnt, "tmpfs", syscall.MS_REMOUNT, "size=64m"))
		code, _, stderr = child(t, nil, "sweep", "--progress", "none", "--db", db, file)
		require.Zero(t, code, stderr)
		after := readDump(t, db)
		requireSubset(t, got, after, "committed before the disk filled")
		require.Equal(t, want, after)
		t.Logf("full tmpfs: %d of %d lines stored before the disk filled", len(got), len(want))
	})

	t.Run("read-only database", func(t *testing.T) {
		rodir := filepath.Join(dir, "ro")
		require.NoError(t, os.Mkdir(rodir, 0o755))
		db := filepath.Join(rodir, "ro.db")
		code, _, stderr := child(t, nil, "sweep", "--progress", "none", "--shard", "0/2", "--db", db, file)
		require.Zero(t, code, stderr)
		half := readDump(t, db)
		if os.Geteuid() == 0 {
			// Permissions do not stop root: a read-only bind of the directory does.
			if err := syscall.Mount(rodir, rodir, "", syscall.MS_BIND, ""); err != nil {
				t.Skipf("root without a read-only mount (%v)", err)
			}
			defer syscall.Unmount(rodir, 0)
			require.NoError(t, syscall.Mount(rodir, rodir, "", syscall.MS_BIND|syscall.MS_REMOUNT|syscall.MS_RDONLY, ""))
		} else {
			require.NoError(t, os.Chmod(db, 0o444))
			require.NoError(t, os.Chmod(rodir, 0o555))
			defer os.Chmod(rodir, 0o755)
		}
		before := fileHash(t, db)
		code, _, stderr = child(t, nil, "sweep", "--progress", "none", "--db", db, file)
		requireFailed(t, code, stderr, "sweep into a read-only database")
		require.Contains(t, stderr, "ro.db")
		code, out, stderr := child(t, nil, "report", "--db", db, "--format", "csv")
		require.Zero(t, code, "report of a read-only database: %s", stderr)
		require.Equal(t, 24+1, strings.Count(out, "\n"), "report rows")
		svg := filepath.Join(dir, "ro.svg")
		code, _, stderr = child(t, nil, "plot", "--db", db, "--out", svg)
		require.Zero(t, code, "plot of a read-only database: %s", stderr)
		require.Equal(t, before, fileHash(t, db), "the read-only database changed")
		require.Equal(t, half, readDump(t, db))
	})

	t.Run("damaged between sweeps", func(t *testing.T) {
		for _, damage := range []string{"page header", "truncated", "header magic"} {
			db := filepath.Join(dir, "damaged-"+strings.ReplaceAll(damage, " ", "-")+".db")
			code, _, stderr := child(t, nil, "sweep", "--progress", "none", "--shard", "0/2", "--db", db, file)
			require.Zero(t, code, stderr)
			b, err := os.ReadFile(db)
			require.NoError(t, err)
			page := int(b[16])<<8 | int(b[17])
			if page == 1 {
				page = 65536
			}
			require.Greater(t, len(b), 3*page)
			switch damage {
			case "page header":
				for i := page; i < page+8; i++ {
					b[i] ^= 0xa5
				}
			case "truncated":
				b = b[:2*page+page/2]
			case "header magic":
				b[3] ^= 0xff
			}
			require.NoError(t, os.WriteFile(db, b, 0o644))
			before := fileHash(t, db)
			for _, args := range [][]string{{"sweep", "--progress", "none", "--db", db, file}, {"report", "--db", db}, {"merge", "--into", filepath.Join(dir, "m.db"), db}} {
				code, _, stderr := child(t, nil, args...)
				requireFailed(t, code, stderr, damage+": "+args[0])
				require.True(t, strings.Contains(stderr, "damaged") || strings.Contains(stderr, "not a database") || strings.Contains(stderr, "malformed"), "%s: %s: %s", damage, args[0], stderr)
				require.Equal(t, before, fileHash(t, db), "%s: %s wrote into a damaged database", damage, args[0])
			}
			_, err = os.Stat(filepath.Join(dir, "m.db"))
			require.True(t, errors.Is(err, os.ErrNotExist), "a failed merge left its target")
		}
	})
}

// TestSecondInterrupt: a run whose Step blocks and ignores cancellation keeps the sweep
// alive after one SIGINT; the second exits at once with status 1, naming the lost run,
// and the runs committed before stay in the database.
func TestSecondInterrupt(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the command as a child process")
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "block.yaml")
	require.NoError(t, os.WriteFile(file, []byte("networks:\n  - name: ring\n    n: 16\nloads:\n  - name: point-mass\n    tokens: 100\nalgorithms: [blocking]\nstop:\n  max_steps: 20\nseeds: [2, 4, 6, 1]\n"), 0o644))
	db := filepath.Join(dir, "b.db")
	cmd := exec.Command(os.Args[0], "sweep", "--progress", "none", "--workers", "1", "--db", db, file)
	cmd.Env = append(os.Environ(), "TOKENDIST_EXP_MAIN=1", "TOKENDIST_EXP_REG=blocking")
	var errb bytes.Buffer
	cmd.Stderr = &errb
	require.NoError(t, cmd.Start())
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	// Wait until the three even seeds are committed (the odd one then blocks).
	deadline := time.Now().Add(30 * time.Second)
	for countRows(db) < 3 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	require.Equal(t, 3, countRows(db), "the runs before the blocking one were not committed")
	require.NoError(t, cmd.Process.Signal(os.Interrupt))
	select {
	case err := <-done:
		t.Fatalf("the sweep exited after one interrupt although a run blocks: %v, %s", err, errb.String())
	case <-time.After(500 * time.Millisecond):
	}
	start := time.Now()
	require.NoError(t, cmd.Process.Signal(os.Interrupt))
	var err error
	select {
	case err = <-done:
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatalf("the second interrupt did not end the sweep: %s", errb.String())
	}
	t.Logf("exited %v after the second interrupt", time.Since(start))
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee)
	require.Equal(t, ExitFailed, ee.ExitCode())
	require.Contains(t, errb.String(), "1 runs in progress are lost")
	require.Contains(t, errb.String(), "seed 1")
	require.Equal(t, 3, countRows(db))
}
