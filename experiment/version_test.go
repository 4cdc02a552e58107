package experiment

import (
	"errors"
	"path/filepath"
	"runtime/debug"
	"strings"
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
// column, the code identity (with the test binary's digest) in the code columns, and the
// key depends on the code identity.
func TestVersionStored(t *testing.T) {
	bi, ok := debug.ReadBuildInfo()
	if want := versionOf(bi, ok); Version() != want {
		t.Errorf("Version() = %q, build information gives %q", Version(), want)
	}
	t.Logf("Version() = %q", Version())
	if Version() == "" {
		t.Fatal("empty version")
	}
	code, err := CodeIdentity("")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("CodeIdentity() = %q", code)
	// go test records no VCS information: the digest of the test binary identifies it.
	digest, err := executableDigest()
	if err != nil {
		t.Fatal(err)
	}
	if want := "main=" + modulePath + "@(devel)+sha256:" + digest[:12]; code != want {
		t.Errorf("CodeIdentity() = %q, want %q", code, want)
	}
	s := registry.Spec{Network: registry.Choice{Name: "path", Params: registry.Params{"n": 4}}, Seed: 1}
	k1, err := runKey("main=a@(devel)", s)
	if err != nil {
		t.Fatal(err)
	}
	k2, _ := runKey("main=a@v1.0.0", s)
	k3, _ := RunKey(s)
	k5, _ := RunKeyCode(s, "data-v2")
	c, _ := thisCode()
	k4, _ := runKey(c.identity(false), s)
	if k1 == k2 || k3 != k4 || k3 == k5 || k1 == k3 {
		t.Errorf("keys: a@(devel) %s, a@v1.0.0 %s, RunKey %s, runKey(this code) %s, label %s", k1, k2, k3, k4, k5)
	}
	path := filepath.Join(t.TempDir(), "v.db")
	db, err := OpenDB(path)
	if err != nil {
		t.Fatal(err)
	}
	run := Run{Spec: s, Key: k3}
	if err := db.Insert([]Record{{Run: run, Experiment: "v"}, {Run: Run{Spec: s, Key: k5, Code: "data-v2"}, Experiment: "v"}}); err != nil {
		t.Fatal(err)
	}
	db.Close()
	// Reopening works whatever the version string ("(devel)" included).
	db, err = OpenDB(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var got, gotCode, main, rev, sha, label string
	var modified bool
	if err := db.sql.QueryRow(`SELECT version, code, code_main, code_revision, code_modified, code_sha256, code_label FROM runs WHERE key = ?`, k3).
		Scan(&got, &gotCode, &main, &rev, &modified, &sha, &label); err != nil {
		t.Fatal(err)
	}
	if got != Version() || gotCode != code || main != modulePath+"@(devel)" || rev != "" || modified || sha != digest || label != "" {
		t.Errorf("stored version %q code %q main %q revision %q modified %v sha256 %q label %q; want %q, %q, %q@(devel), no revision, %q",
			got, gotCode, main, rev, modified, sha, label, Version(), code, modulePath, digest)
	}
	if err := db.sql.QueryRow(`SELECT code, code_label FROM runs WHERE key = ?`, k5).Scan(&gotCode, &label); err != nil {
		t.Fatal(err)
	}
	if gotCode != code+" label=data-v2" || label != "data-v2" {
		t.Errorf("labelled run: code %q label %q", gotCode, label)
	}
	done, err := db.Done()
	if err != nil || !done[k3] || !done[k5] {
		t.Errorf("Done: %v, %v", done, err)
	}
}

// TestCodeOf derives the code identity from build information of every shape, and
// reads the executable's digest exactly where the build information cannot tell two
// builds apart.
func TestCodeOf(t *testing.T) {
	set := func(kv ...string) []debug.BuildSetting {
		var out []debug.BuildSetting
		for i := 0; i+1 < len(kv); i += 2 {
			out = append(out, debug.BuildSetting{Key: kv[i], Value: kv[i+1]})
		}
		return out
	}
	dep := func(v string) *debug.Module { return &debug.Module{Path: modulePath, Version: v} }
	gonum := &debug.Module{Path: "gonum.org/v1/gonum", Version: "v0.17.0"}
	const rev = "0123456789abcdef0123456789abcdef01234567"
	const digest = "fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210"
	for _, c := range []struct {
		name        string
		bi          *debug.BuildInfo
		ok          bool
		short, full string
	}{
		{"no build info", nil, false, "main=(unknown)@(unknown)+sha256:fedcba987654", "main=(unknown)@(unknown)+sha256:" + digest},
		{"build info not ok", &debug.BuildInfo{Main: debug.Module{Path: "example.com/lab", Version: "v1.0.0"}, Settings: set("vcs.revision", rev)}, false,
			"main=(unknown)@(unknown)+sha256:fedcba987654", "main=(unknown)@(unknown)+sha256:" + digest},
		{"nil build info", nil, true, "main=(unknown)@(unknown)+sha256:fedcba987654", "main=(unknown)@(unknown)+sha256:" + digest},
		{"go test", &debug.BuildInfo{Main: debug.Module{Path: modulePath, Version: "(devel)"}, Deps: []*debug.Module{gonum}}, true,
			"main=" + modulePath + "@(devel)+sha256:fedcba987654", "main=" + modulePath + "@(devel)+sha256:" + digest},
		{"clean checkout of tokendist", &debug.BuildInfo{Main: debug.Module{Path: modulePath, Version: "v1.2.0"}, Deps: []*debug.Module{gonum},
			Settings: set("vcs.revision", rev, "vcs.modified", "false")}, true,
			"main=" + modulePath + "@v1.2.0+rev:0123456789ab", "main=" + modulePath + "@v1.2.0+rev:" + rev},
		{"go install tokendist@v1.2.0", &debug.BuildInfo{Main: debug.Module{Path: modulePath, Version: "v1.2.0"}, Deps: []*debug.Module{gonum}}, true,
			"main=" + modulePath + "@v1.2.0", "main=" + modulePath + "@v1.2.0"},
		{"go install of a user program", &debug.BuildInfo{Main: debug.Module{Path: "example.com/lab", Version: "v0.3.0"}, Deps: []*debug.Module{dep("v1.0.0")}}, true,
			"main=example.com/lab@v0.3.0 tokendist=v1.0.0", "main=example.com/lab@v0.3.0 tokendist=v1.0.0"},
		{"empty main version", &debug.BuildInfo{Main: debug.Module{Path: "example.com/lab"}, Deps: []*debug.Module{dep("v1.0.0")}}, true,
			"main=example.com/lab@(devel)+sha256:fedcba987654 tokendist=v1.0.0", "main=example.com/lab@(devel)+sha256:" + digest + " tokendist=v1.0.0"},
		{"nil dependency", &debug.BuildInfo{Main: debug.Module{Path: modulePath, Version: "v1.2.0"}, Deps: []*debug.Module{nil, gonum},
			Settings: set("vcs.revision", rev)}, true,
			"main=" + modulePath + "@v1.2.0+rev:0123456789ab", "main=" + modulePath + "@v1.2.0+rev:" + rev},
		{"nil dependency before a workspace module", &debug.BuildInfo{Main: debug.Module{Path: modulePath, Version: "v1.2.0"},
			Deps: []*debug.Module{nil, {Path: "example.com/ws", Version: "(devel)"}}, Settings: set("vcs.revision", rev)}, true,
			"main=" + modulePath + "@v1.2.0+rev:0123456789ab+sha256:fedcba987654", "main=" + modulePath + "@v1.2.0+rev:" + rev + "+sha256:" + digest},
		{"dirty tree", &debug.BuildInfo{Main: debug.Module{Path: modulePath, Version: "v1.2.1-0.2026-012345678901+dirty"},
			Settings: set("vcs.revision", rev, "vcs.modified", "true")}, true,
			"main=" + modulePath + "@v1.2.1-0.2026-012345678901+dirty+rev:0123456789ab+modified+sha256:fedcba987654",
			"main=" + modulePath + "@v1.2.1-0.2026-012345678901+dirty+rev:" + rev + "+modified+sha256:" + digest},
		{"user program, tagged dependency, clean", &debug.BuildInfo{Main: debug.Module{Path: "example.com/lab", Version: "v0.0.0-2026-abc"},
			Settings: set("vcs.revision", rev), Deps: []*debug.Module{gonum, dep("v1.0.0")}}, true,
			"main=example.com/lab@v0.0.0-2026-abc+rev:0123456789ab tokendist=v1.0.0", "main=example.com/lab@v0.0.0-2026-abc+rev:" + rev + " tokendist=v1.0.0"},
		{"user program without VCS", &debug.BuildInfo{Main: debug.Module{Path: "example.com/lab", Version: "(devel)"},
			Deps: []*debug.Module{dep("v1.0.0")}}, true,
			"main=example.com/lab@(devel)+sha256:fedcba987654 tokendist=v1.0.0", "main=example.com/lab@(devel)+sha256:" + digest + " tokendist=v1.0.0"},
		{"replace by a directory", &debug.BuildInfo{Main: debug.Module{Path: "example.com/lab", Version: "v0.0.0-2026-abc"}, Settings: set("vcs.revision", rev),
			Deps: []*debug.Module{{Path: modulePath, Version: "v1.0.0", Replace: &debug.Module{Path: "../tokendist", Version: "(devel)"}}}}, true,
			"main=example.com/lab@v0.0.0-2026-abc+rev:0123456789ab+sha256:fedcba987654 tokendist=v1.0.0=>../tokendist@(devel)",
			"main=example.com/lab@v0.0.0-2026-abc+rev:" + rev + "+sha256:" + digest + " tokendist=v1.0.0=>../tokendist@(devel)"},
		{"replace by a module version", &debug.BuildInfo{Main: debug.Module{Path: "example.com/lab", Version: "v0.0.0-2026-abc"}, Settings: set("vcs.revision", rev),
			Deps: []*debug.Module{{Path: modulePath, Version: "v1.0.0", Replace: &debug.Module{Path: "example.com/fork", Version: "v1.0.1"}}}}, true,
			"main=example.com/lab@v0.0.0-2026-abc+rev:0123456789ab tokendist=v1.0.0=>example.com/fork@v1.0.1",
			"main=example.com/lab@v0.0.0-2026-abc+rev:" + rev + " tokendist=v1.0.0=>example.com/fork@v1.0.1"},
		{"workspace module", &debug.BuildInfo{Main: debug.Module{Path: "example.com/lab", Version: "v0.0.0-2026-abc"}, Settings: set("vcs.revision", rev),
			Deps: []*debug.Module{dep("(devel)")}}, true,
			"main=example.com/lab@v0.0.0-2026-abc+rev:0123456789ab+sha256:fedcba987654 tokendist=(devel)",
			"main=example.com/lab@v0.0.0-2026-abc+rev:" + rev + "+sha256:" + digest + " tokendist=(devel)"},
	} {
		reads := 0
		got, err := codeOf(c.bi, c.ok, func() (string, error) { reads++; return digest, nil })
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if s, f := got.identity(true), got.identity(false); s != c.short || f != c.full {
			t.Errorf("%s: identity\n  %q\n  %q\nwant\n  %q\n  %q", c.name, s, f, c.short, c.full)
		}
		if want := strings.Contains(c.full, "sha256"); (reads == 1) != want || reads > 1 {
			t.Errorf("%s: the executable was read %d times", c.name, reads)
		}
		if l := got.withLabel("data v2").identity(true); l != c.short+" label=data v2" {
			t.Errorf("%s: with a label %q", c.name, l)
		}
	}
	// A digest that cannot be computed is an error, never an identity that pools builds.
	_, err := codeOf(&debug.BuildInfo{Main: debug.Module{Path: "example.com/lab"}}, true, func() (string, error) {
		return "", errors.New("tokendist: code identity: locate the executable: no /proc")
	})
	if err == nil {
		t.Error("codeOf without the executable's digest succeeded")
	}
	for _, r := range []struct {
		m   debug.Module
		dir bool
	}{
		{debug.Module{Path: "../tokendist", Version: "(devel)"}, true},
		{debug.Module{Path: "example.com/fork", Version: ""}, true},
		{debug.Module{Path: "example.com/fork", Version: "(devel)"}, true},
		{debug.Module{Path: "./fork", Version: "v1.0.0"}, true},
		{debug.Module{Path: "/src/fork", Version: "v1.0.0"}, true},
		{debug.Module{Path: "example.com/fork", Version: "v1.0.1"}, false},
	} {
		if got := isDirReplace(&r.m); got != r.dir {
			t.Errorf("isDirReplace(%+v) = %v", r.m, got)
		}
	}
	if got, want := listCodes([]string{"a", "b", "c"}), "a; b; c"; got != want {
		t.Errorf("listCodes of 3: %q", got)
	}
	if got, want := listCodes([]string{"a", "b", "c", "d", "e"}), "a; b; c; and 2 more"; got != want {
		t.Errorf("listCodes of 5: %q, want %q", got, want)
	}
	for _, bad := range []string{"\nlabel", "a\nb", "tab\there", strings.Repeat("x", 201), "\xff"} {
		if _, err := CodeIdentity(bad); err == nil || !strings.HasPrefix(err.Error(), "tokendist: bad parameter: code label ") {
			t.Errorf("CodeIdentity(%q): %v", bad, err)
		}
	}
	if id, err := CodeIdentity(strings.Repeat("x", 200)); err != nil || !strings.HasSuffix(id, " label="+strings.Repeat("x", 200)) {
		t.Errorf("a 200-byte label: %q, %v", id, err)
	}
}
