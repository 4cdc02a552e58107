package tokendist_test

// The adversarial suite (issue 14): hundreds of hostile calls across the exported API,
// each run in a child process (this test binary re-executed with
// -test.run=TestAdversarialChild) under a memory cap (GOMEMLIMIT, and RLIMIT_AS on
// Linux without the race detector) and a timeout, so that a hang or an out-of-memory
// death is a reported failure. A case is clean if it returns an error starting with
// "tokendist: " or a value its oracle accepts. TestAdversarial prints the counts.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tokendist/tokendist"
	"go.uber.org/goleak"
)

// advCase is one hostile call. run returns nil when the result was checked correct,
// an advWrong when it is silently wrong, or the library's error.
type advCase struct {
	name string
	run  func() error
}

// advWrongError marks a silently wrong result found by a case's oracle.
type advWrongError struct{ msg string }

func (e *advWrongError) Error() string { return e.msg }

func advWrong(format string, args ...any) error {
	return &advWrongError{fmt.Sprintf(format, args...)}
}

const (
	advEnvCase   = "TOKENDIST_ADV_CASE"
	advMemLimit  = 256 << 20 // the child's GOMEMLIMIT, hence its memory budget
	advRSSLimit  = 1 << 30   // a child whose peak RSS exceeds this allocated absurdly
	advASLimit   = 4 << 30   // RLIMIT_AS of the child (not under the race detector)
	advTimeout   = 30 * time.Second
	advResultTag = "ADV-RESULT "
)

var advRegistry = struct {
	sync.Once
	cases []advCase
	index map[string]int
}{}

func advAll() []advCase {
	advRegistry.Do(func() {
		advRegistry.cases = advTable()
		advRegistry.index = map[string]int{}
		for i, c := range advRegistry.cases {
			if _, dup := advRegistry.index[c.name]; dup {
				panic("duplicate adversarial case " + c.name)
			}
			advRegistry.index[c.name] = i
		}
	})
	return advRegistry.cases
}

// TestAdversarialChild runs one case, named by the environment, and prints its verdict.
func TestAdversarialChild(t *testing.T) {
	name := os.Getenv(advEnvCase)
	if name == "" {
		t.Skip("run by TestAdversarial")
	}
	debug.SetMemoryLimit(advMemLimit)
	if !tokendist.RaceEnabled && runtime.GOOS == "linux" {
		lim := syscall.Rlimit{Cur: advASLimit, Max: advASLimit}
		require.NoError(t, syscall.Setrlimit(syscall.RLIMIT_AS, &lim), "setrlimit")
	}
	advAll()
	i, ok := advRegistry.index[name]
	require.True(t, ok, "no case %q", name)
	err := advRegistry.cases[i].run()
	verdict := "ok"
	var wrong *advWrongError
	switch {
	case errors.As(err, &wrong):
		verdict = "wrong " + wrong.msg
	case err != nil && !strings.HasPrefix(err.Error(), "tokendist: "):
		verdict = "unprefixed " + advShort(err.Error())
	case err != nil && len(err.Error()) > 2000:
		verdict = "long-error " + advShort(err.Error())
	case err != nil:
		verdict = "clean " + advShort(err.Error())
	}
	if leak := goleak.Find(); leak != nil && !strings.HasPrefix(verdict, "wrong") {
		verdict = "leak " + advShort(leak.Error())
	}
	fmt.Printf("\n%s%s\n", advResultTag, verdict)
}

func advShort(s string) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if len(s) > 300 {
		s = s[:300] + "..."
	}
	return s
}

// advOutcome is the parent's classification of one child.
type advOutcome struct {
	name, kind, detail string
}

// TestAdversarial runs every case in a child process and fails on any panic, hang,
// absurd allocation, silently wrong result, unprefixed error or leaked goroutine.
// TOKENDIST_ADV_ONLY=substring restricts it to matching cases.
func TestAdversarial(t *testing.T) {
	if os.Getenv(advEnvCase) != "" {
		t.Skip("child")
	}
	if testing.Short() && !advFull && !tokendist.LongTests() {
		t.Skip("-short: set TOKENDIST_LONG=1 (or TOKENDIST_ADV=full) to run the adversarial suite")
	}
	cases := advAll()
	if !advFull {
		// A cross-section by default: every fourth case, every tenth under the race
		// detector, where every child is several times slower. The whole table runs
		// in .ci/run (TOKENDIST_ADV=full).
		stride := 4
		if tokendist.RaceEnabled {
			stride = 10
		}
		var some []advCase
		for i := 0; i < len(cases); i += stride {
			some = append(some, cases[i])
		}
		cases = some
	}
	only := os.Getenv("TOKENDIST_ADV_ONLY")
	jobs := make(chan advCase)
	results := make(chan advOutcome)
	var wg sync.WaitGroup
	for w := 0; w < max(1, min(runtime.NumCPU(), 4)); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for c := range jobs {
				results <- advRunChild(c.name)
			}
		}()
	}
	go func() {
		for _, c := range cases {
			if only == "" || strings.Contains(c.name, only) {
				jobs <- c
			}
		}
		close(jobs)
		wg.Wait()
		close(results)
	}()
	counts := map[string]int{}
	bySurface := map[string]map[string]int{}
	var bad []advOutcome
	for r := range results {
		if r.kind == "wrong" && strings.HasPrefix(r.detail, "data loss") {
			r.kind = "loss"
		}
		counts[r.kind]++
		surface := "core"
		if rest, ok := strings.CutPrefix(r.name, "S."); ok {
			surface, _, _ = strings.Cut(rest, "/")
		}
		if bySurface[surface] == nil {
			bySurface[surface] = map[string]int{}
		}
		bySurface[surface][r.kind]++
		bySurface[surface]["total"]++
		if r.kind != "ok" && r.kind != "clean" {
			bad = append(bad, r)
		}
	}
	sort.Slice(bad, func(i, j int) bool { return bad[i].name < bad[j].name })
	for _, r := range bad {
		t.Errorf("%s: %s: %s", r.name, r.kind, r.detail)
	}
	total := 0
	for _, n := range counts {
		total += n
	}
	surfaces := make([]string, 0, len(bySurface))
	for k := range bySurface {
		surfaces = append(surfaces, k)
	}
	sort.Strings(surfaces)
	for _, k := range surfaces {
		c := bySurface[k]
		t.Logf("adversarial suite, %s: %d cases: %d clean errors, %d correct values; %d panics, %d hangs, %d absurd allocations, %d crashes, %d data loss, %d silent wrong numbers (%d unprefixed errors, %d over-long errors, %d goroutine leaks)",
			k, c["total"], c["clean"], c["ok"], c["panic"], c["hang"], c["alloc"], c["other"], c["loss"], c["wrong"], c["unprefixed"], c["long-error"], c["leak"])
	}
	t.Logf("adversarial suite: %d cases tried: %d correct values, %d clean errors; %d panics, %d hangs, %d absurd allocations, %d silent wrong results, %d unprefixed errors, %d goroutine leaks, %d other failures",
		total, counts["ok"], counts["clean"], counts["panic"], counts["hang"], counts["alloc"], counts["wrong"]+counts["loss"], counts["unprefixed"], counts["leak"], counts["other"]+counts["long-error"])
}

func advRunChild(name string) advOutcome {
	ctx, cancel := context.WithTimeout(context.Background(), advTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestAdversarialChild$", "-test.count=1", "-test.timeout=5m")
	cmd.Env = append(os.Environ(), advEnvCase+"="+name, "GOMEMLIMIT="+fmt.Sprint(advMemLimit), "GOTRACEBACK=single")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	out := stdout.String() + stderr.String()
	o := advOutcome{name: name}
	var rss int64
	if cmd.ProcessState != nil {
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			rss = int64(ru.Maxrss) * 1024
		}
	}
	switch {
	case ctx.Err() != nil:
		o.kind, o.detail = "hang", fmt.Sprintf("no result within %v", advTimeout)
	case strings.Contains(out, "out of memory") || strings.Contains(out, "cannot allocate memory"):
		o.kind, o.detail = "alloc", advShort(advTail(out))
	case strings.Contains(out, "panic: ") || strings.Contains(out, "fatal error:"):
		o.kind, o.detail = "panic", advShort(advPanicLine(out))
	case rss > advRSSLimit && !tokendist.RaceEnabled:
		o.kind, o.detail = "alloc", fmt.Sprintf("peak RSS %d MiB", rss>>20)
	default:
		i := strings.LastIndex(out, advResultTag)
		if i < 0 {
			o.kind, o.detail = "other", fmt.Sprintf("no verdict (%v): %s", err, advShort(advTail(out)))
			break
		}
		v := strings.TrimSpace(strings.SplitN(out[i+len(advResultTag):], "\n", 2)[0])
		o.kind, o.detail, _ = strings.Cut(v, " ")
	}
	return o
}

func advTail(s string) string {
	if len(s) > 600 {
		return s[len(s)-600:]
	}
	return s
}

func advPanicLine(s string) string {
	for _, key := range []string{"panic: ", "fatal error:"} {
		if i := strings.Index(s, key); i >= 0 {
			rest := s[i:]
			if j := strings.Index(rest, "goroutine "); j > 0 {
				rest = rest[:j]
			}
			return rest
		}
	}
	return s
}
