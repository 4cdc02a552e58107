package main

import (
	"bytes"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func freePort(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

func config(t *testing.T) (path, status string) {
	dir := t.TempDir()
	status = freePort(t)
	c := map[string]any{
		"id": 0,
		"spec": map[string]any{"network": map[string]any{"name": "random-tree", "params": map[string]any{"n": 2}},
			"loads": map[string]any{"name": "point-mass", "params": map[string]any{"tokens": 4}}, "algorithm": map[string]any{"name": "threshold-1"}},
		"listen": freePort(t), "status": status, "data": filepath.Join(dir, "data"),
		"peers":    map[string]string{"1": freePort(t)}, // a neighbour that never answers
		"key_file": "fleet.key",                         // relative to the config's directory
	}
	b, _ := json.Marshal(c)
	path = filepath.Join(dir, "node.json")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "fleet.key"), []byte("0123456789abcdef0123456789abcdef-main-test\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return path, status
}

// TestAuthConfig: a config without key_file and without insecure (an operator's config
// from before authentication) is refused, saying what to add; -print-token prints
// the HTTP token, the same twice, and refuses a config with a short key.
func TestAuthConfig(t *testing.T) {
	path, _ := config(t)
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var c map[string]any
	if err := json.Unmarshal(raw, &c); err != nil {
		t.Fatal(err)
	}
	delete(c, "key_file")
	b, _ := json.Marshal(c)
	old := filepath.Join(t.TempDir(), "old.json")
	if err := os.WriteFile(old, b, 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	if code := run([]string{"-config", old}, &out, &errb); code != 1 || !strings.Contains(errb.String(), `add "key_file": "fleet.key"`) || !strings.Contains(errb.String(), `"insecure": true`) {
		t.Errorf("a config without key_file: exit %d, %q; want 1 and what to add", code, errb.String())
	}
	var tokens []string
	for range 2 {
		out.Reset()
		if code := run([]string{"-config", path, "-print-token"}, &out, &errb); code != 0 || len(strings.TrimSpace(out.String())) != 64 {
			t.Fatalf("-print-token: exit %d, %q", code, out.String())
		}
		tokens = append(tokens, out.String())
	}
	if tokens[0] != tokens[1] || strings.Contains(tokens[0], "0123456789abcdef") {
		t.Errorf("tokens %q; want the same derived token twice, not the key", tokens)
	}
	if err := os.WriteFile(filepath.Join(filepath.Dir(path), "fleet.key"), []byte("short\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	errb.Reset()
	if code := run([]string{"-config", path, "-print-token"}, &out, &errb); code != 1 || !strings.Contains(errb.String(), "holds 5 bytes of key; want at least 32") {
		t.Errorf("a short key: exit %d, %q", code, errb.String())
	}
}

func TestFlagsAndPrintConfig(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run(nil, &out, &errb); code != 2 || !strings.Contains(errb.String(), "usage") {
		t.Errorf("no flags: %d %q", code, errb.String())
	}
	if code := run([]string{"-nope"}, &out, &errb); code != 2 {
		t.Errorf("bad flag: %d", code)
	}
	if code := run([]string{"-config", filepath.Join(t.TempDir(), "missing.json")}, &out, &errb); code != 1 {
		t.Errorf("missing config: %d", code)
	}
	path, _ := config(t)
	out.Reset()
	if code := run([]string{"-config", path, "-print-config"}, &out, &errb); code != 0 || !strings.Contains(out.String(), `"threshold-1"`) {
		t.Errorf("-print-config: %d %q", code, out.String())
	}
}

// TestSIGTERM: the command serves its endpoint and exits 0 on SIGTERM, within 5 s.
func TestSIGTERM(t *testing.T) {
	path, status := config(t)
	var out, errb bytes.Buffer
	done := make(chan int, 1)
	var tok bytes.Buffer
	if code := run([]string{"-config", path, "-print-token"}, &tok, &errb); code != 0 {
		t.Fatalf("-print-token: exit %d: %s", code, errb.String())
	}
	go func() { done <- run([]string{"-config", path}, &out, &errb) }()
	var up bool
	for i := 0; i < 200 && !up; i++ {
		resp, err := http.Get("http://" + status + "/status")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode != http.StatusUnauthorized {
				t.Fatalf("/status without a token: %s; want 401", resp.Status)
			}
			req, _ := http.NewRequest("GET", "http://"+status+"/status", nil)
			req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(tok.String()))
			if resp, err = http.DefaultClient.Do(req); err == nil {
				resp.Body.Close()
				up = resp.StatusCode == 200
			}
		}
		if !up {
			time.Sleep(25 * time.Millisecond)
		}
	}
	if !up {
		t.Fatalf("the endpoint did not answer; stderr: %s", errb.String())
	}
	if err := syscall.Kill(os.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case code := <-done:
		if code != 0 || !strings.Contains(errb.String(), "stopped") {
			t.Fatalf("exit %d; stderr: %s", code, errb.String())
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no exit within 5 s of SIGTERM")
	}
}
