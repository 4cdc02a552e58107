// Package chromiumtest opens pages in real headless Chromium for the tests of the
// HTML the module writes (experiment's report, animate's movie): Debian's chromium,
// which scripts/install-chromium.sh installs in CI, started with no network, no
// background services and no GPU. A page is opened with a checker script put at the
// start of its <head>; the checker writes a JSON report into a <pre id="tdcheck"> the
// test reads back from the dumped DOM. It is test support, not part of the API.
package chromiumtest

import (
	"context"
	"encoding/json"
	"html"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// Flags are the flags every page is opened with: headless, no network (every host name
// resolves to nothing), no background services, no extensions and no GPU.
var Flags = []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
	"--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-extensions",
	"--host-resolver-rules=MAP * ~NOTFOUND"}

// Find returns the path of chromium (/usr/bin/chromium, else the PATH's), or skips t.
func Find(t testing.TB) string {
	t.Helper()
	bin := "/usr/bin/chromium"
	if _, err := os.Stat(bin); err != nil {
		if bin, err = exec.LookPath("chromium"); err != nil {
			t.Skip("chromium not found (Debian package chromium; scripts/install-chromium.sh installs it); skipping the browser check")
		}
	}
	return bin
}

// Open writes page into dir/name with checker put right after its <head>, opens it in
// chromium bin with Flags, a profile in dir and the extra arguments (--dump-dom,
// --screenshot=FILE, --window-size=W,H, --virtual-time-budget=MS), and returns what
// chromium printed. It fails t if the page has no <head> or chromium fails; it gives
// chromium two minutes.
func Open(t testing.TB, bin, dir, name, page, checker string, extra ...string) string {
	t.Helper()
	i := strings.Index(page, "<head>")
	if i < 0 {
		t.Fatal("the page has no <head>")
	}
	i += len("<head>")
	file := filepath.Join(dir, name)
	if err := os.WriteFile(file, []byte(page[:i]+"\n"+checker+page[i:]), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	args := append(append(append([]string(nil), Flags...), "--user-data-dir="+filepath.Join(dir, "profile")), extra...)
	cmd := exec.CommandContext(ctx, bin, append(args, "file://"+file)...)
	cmd.Env = append(os.Environ(), "HOME="+dir)
	out, err := cmd.Output()
	if err != nil {
		var stderr string
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("chromium: %v: %s", err, stderr)
	}
	return string(out)
}

var tdcheck = regexp.MustCompile(`(?s)<pre id="tdcheck">(.*?)</pre>`)

// Report decodes the checker's JSON report from a dumped DOM into v, failing t if the
// checker wrote none.
func Report(t testing.TB, dom string, v any) {
	t.Helper()
	m := tdcheck.FindStringSubmatch(dom)
	if m == nil {
		t.Fatalf("the checker wrote no report; chromium printed %d bytes", len(dom))
	}
	if err := json.Unmarshal([]byte(html.UnescapeString(m[1])), v); err != nil {
		t.Fatal(err)
	}
}
