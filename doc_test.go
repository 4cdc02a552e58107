package tokendist_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestCoreImports holds the root package to what doc.go promises: it imports only the
// standard library, gonum's graph and mat packages (with what they need) and the
// module's internal packages. Plotting, fonts, images, YAML and SQLite live in the
// packages beside it.
func TestCoreImports(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to list the dependencies")
	}
	out, err := exec.Command(gobin, "list", "-deps", ".").Output()
	require.NoError(t, err)
	deps := strings.Fields(string(out))
	require.Greater(t, len(deps), 10)
	for _, d := range deps {
		first := strings.SplitN(d, "/", 2)[0]
		switch {
		case !strings.Contains(first, "."): // the standard library
		case strings.HasPrefix(d, "github.com/tokendist/tokendist"):
			require.Equal(t, "github.com/tokendist/tokendist", d[:len("github.com/tokendist/tokendist")])
			rest := strings.TrimPrefix(d, "github.com/tokendist/tokendist")
			require.True(t, rest == "" || strings.HasPrefix(rest, "/internal/"), "the root imports %s", d)
		case strings.HasPrefix(d, "gonum.org/v1/gonum/"):
		default:
			t.Errorf("the root package depends on %s", d)
		}
		for _, banned := range []string{"gonum.org/v1/plot", "golang.org/x/image", "fonts", "sqlite", "yaml"} {
			require.NotContains(t, d, banned, "the root package depends on %s", d)
		}
	}
}

// TestCoreBinarySize builds the smallest user program (testdata/onebalancer: one
// balancer on a ring) and checks that it stays under 5 MB: the core pulls in no fonts or
// plotting (it was 10.5 MB when it did).
func TestCoreBinarySize(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: not building a program")
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	out := filepath.Join(t.TempDir(), "onebalancer")
	cmd := exec.Command(gobin, "build", "-o", out, "./testdata/onebalancer")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	msg, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", msg)
	st, err := os.Stat(out)
	require.NoError(t, err)
	t.Logf("onebalancer: %d bytes", st.Size())
	require.LessOrEqual(t, st.Size(), int64(5<<20), "a one-balancer program is %d bytes", st.Size())
}
