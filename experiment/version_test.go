package experiment

import (
	"database/sql"
	"path/filepath"
	"runtime/debug"
	"testing"

	"github.com/tokendist/tokendist/registry"
)

// TestVersionOf derives the version from build information of every shape.
func TestVersionOf(t *testing.T) {
	settings := func(kv ...string) []debug.BuildSetting {
		var out []debug.BuildSetting
		for i := 0; i+1 < len(kv); i += 2 {
			out = append(out, debug.BuildSetting{Key: kv[i], Value: kv[i+1]})
		}
		return out
	}
	main := func(v string, s []debug.BuildSetting) *debug.BuildInfo {
		return &debug.BuildInfo{Main: debug.Module{Path: modulePath, Version: v}, Settings: s}
	}
	for _, c := range []struct {
		name string
		bi   *debug.BuildInfo
		ok   bool
		want string
	}{
		{"no build info", nil, false, "(unknown)"},
		{"go test", main("(devel)", nil), true, "(devel)"},
		{"empty version", main("", nil), true, "(devel)"},
		{"-buildvcs=false", main("(devel)", settings("-buildvcs", "false")), true, "(devel)"},
		{"tagged", main("v1.2.0", settings("vcs.revision", "abc123", "vcs.modified", "false")), true, "v1.2.0 rev abc123"},
		{"dirty tree", main("v1.2.1-0.20260101000000-abc123+dirty", settings("vcs", "git", "vcs.revision", "abc123", "vcs.modified", "true")), true,
			"v1.2.1-0.20260101000000-abc123+dirty rev abc123 modified"},
		{"devel with vcs", main("(devel)", settings("vcs.revision", "def456", "vcs.modified", "true")), true, "(devel) rev def456 modified"},
		{"dependency", &debug.BuildInfo{Main: debug.Module{Path: "example.com/lab", Version: "(devel)"}, Settings: settings("vcs.revision", "zzz"),
			Deps: []*debug.Module{{Path: "gonum.org/v1/gonum", Version: "v0.17.0"}, {Path: modulePath, Version: "v1.0.0"}}}, true, "v1.0.0"},
		{"replaced dependency", &debug.BuildInfo{Main: debug.Module{Path: "example.com/lab"},
			Deps: []*debug.Module{{Path: modulePath, Version: "v1.0.0", Replace: &debug.Module{Path: "../tokendist"}}}}, true, "v1.0.0 => ../tokendist"},
	} {
		if got := versionOf(c.bi, c.ok); got != c.want {
			t.Errorf("%s: versionOf = %q, want %q", c.name, got, c.want)
		}
	}
}

// TestVersionStored: under go test the version is the build information's ("(devel)",
// as go test records no version control information); a sweep stores it in the version
// column and the key depends on it.
func TestVersionStored(t *testing.T) {
	bi, ok := debug.ReadBuildInfo()
	if want := versionOf(bi, ok); Version() != want {
		t.Errorf("Version() = %q, build information gives %q", Version(), want)
	}
	t.Logf("Version() = %q", Version())
	if Version() == "" {
		t.Fatal("empty version")
	}
	s := registry.Spec{Network: registry.Choice{Name: "path", Params: registry.Params{"n": 4}}, Seed: 1}
	k1, err := runKey("(devel)", s)
	if err != nil {
		t.Fatal(err)
	}
	k2, _ := runKey("v1.0.0", s)
	k3, _ := RunKey(s)
	k4, _ := runKey(Version(), s)
	if k1 == k2 || k3 != k4 {
		t.Errorf("keys: (devel) %s, v1.0.0 %s, RunKey %s, runKey(Version()) %s", k1, k2, k3, k4)
	}
	path := filepath.Join(t.TempDir(), "v.db")
	db, err := OpenDB(path)
	if err != nil {
		t.Fatal(err)
	}
	run := Run{Spec: s, Key: k3}
	if err := db.Insert([]Record{{Run: run, Experiment: "v"}}); err != nil {
		t.Fatal(err)
	}
	db.Close()
	// Reopening works whatever the version string ("(devel)" included).
	db, err = OpenDB(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var got string
	if err := db.sql.QueryRow(`SELECT version FROM runs WHERE key = ?`, k3).Scan(&got); err != nil && err != sql.ErrNoRows {
		t.Fatal(err)
	}
	if got != Version() {
		t.Errorf("stored version %q, want %q", got, Version())
	}
	done, err := db.Done()
	if err != nil || !done[k3] {
		t.Errorf("Done: %v, %v", done, err)
	}
}
