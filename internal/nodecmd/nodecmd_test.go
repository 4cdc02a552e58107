package nodecmd

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tokendist/tokendist/fleet"
)

func writeConfig(t *testing.T, algorithm string) string {
	t.Helper()
	dir := t.TempDir()
	c := map[string]any{
		"id": 0,
		"spec": map[string]any{"network": map[string]any{"name": "random-tree", "params": map[string]any{"n": 2}},
			"loads": map[string]any{"name": "point-mass", "params": map[string]any{"tokens": 4}}, "algorithm": map[string]any{"name": algorithm}},
		"listen": "127.0.0.1:1", "status": "127.0.0.1:2", "data": filepath.Join(dir, "data"),
		"peers": map[string]string{"1": "127.0.0.1:3"}, "insecure": true, // loopback addresses only
	}
	b, _ := json.Marshal(c)
	path := filepath.Join(dir, "node.json")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestHooks: the name appears in the usage line; -print-config opens no store; a
// failing Store hook exits 1 with its error; a store the node refuses to start on is
// closed.
func TestHooks(t *testing.T) {
	var out, errb bytes.Buffer
	if code := Main(nil, &out, &errb, &Hooks{Name: "other-node"}); code != 2 || !strings.Contains(errb.String(), "usage: other-node -config") {
		t.Errorf("usage: %d %q", code, errb.String())
	}
	errb.Reset()
	if code := Main(nil, &out, &errb, nil); code != 2 || !strings.Contains(errb.String(), "usage: tokendist-node -config") {
		t.Errorf("default name: %d %q", code, errb.String())
	}
	opened := 0
	hook := func(fleet.Config) (fleet.Store, error) { opened++; return nil, errors.New("tokendist: no store today") }
	if code := Main([]string{"-config", writeConfig(t, "threshold-1"), "-print-config"}, &out, &errb, &Hooks{Store: hook}); code != 0 || opened != 0 {
		t.Errorf("-print-config: exit %d, %d stores opened", code, opened)
	}
	errb.Reset()
	if code := Main([]string{"-config", writeConfig(t, "threshold-1")}, &out, &errb, &Hooks{Store: hook}); code != 1 || opened != 1 || !strings.Contains(errb.String(), "no store today") {
		t.Errorf("failing hook: exit %d, %d opened, %q", code, opened, errb.String())
	}
	mem := fleet.NewMemoryStore()
	errb.Reset()
	code := Main([]string{"-config", writeConfig(t, "no-such-algorithm"), "-quiet"}, &out, &errb,
		&Hooks{Store: func(fleet.Config) (fleet.Store, error) { return mem, nil }})
	if code != 1 || !strings.Contains(errb.String(), "no-such-algorithm") {
		t.Errorf("bad algorithm: exit %d, %q", code, errb.String())
	}
	if _, err := mem.Load(); err == nil {
		t.Error("the store of a node that did not start was left open")
	}
}

// TestReinit: on a data directory that has run a node before, an empty store is
// refused, naming -reinit; with -reinit the node is built (and here stops at its
// status endpoint, whose address cannot be listened on).
func TestReinit(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	if err := os.MkdirAll(data, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(data, fleet.StartsFile), []byte("1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c := map[string]any{
		"id": 0,
		"spec": map[string]any{"network": map[string]any{"name": "random-tree", "params": map[string]any{"n": 2}},
			"loads": map[string]any{"name": "point-mass", "params": map[string]any{"tokens": 4}}, "algorithm": map[string]any{"name": "threshold-1"}},
		"listen": "127.0.0.1:0", "status": "256.0.0.1:2", "data": data,
		"peers": map[string]string{"1": "127.0.0.1:3"}, "key_file": "fleet.key",
	}
	if err := os.WriteFile(filepath.Join(dir, "fleet.key"), []byte("0123456789abcdef0123456789abcdef"), 0o600); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(c)
	path := filepath.Join(dir, "node.json")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	hook := &Hooks{Store: func(fleet.Config) (fleet.Store, error) { return fleet.NewMemoryStore(), nil }}
	var out, errb bytes.Buffer
	if code := Main([]string{"-config", path, "-quiet"}, &out, &errb, hook); code != 1 || !strings.Contains(errb.String(), "has run a node before") || !strings.Contains(errb.String(), "-reinit") {
		t.Errorf("without -reinit: exit %d, %q; want a refusal naming -reinit", code, errb.String())
	}
	errb.Reset()
	if code := Main([]string{"-config", path, "-quiet", "-reinit"}, &out, &errb, hook); code != 1 || strings.Contains(errb.String(), "has run a node before") || !strings.Contains(errb.String(), "status endpoint") {
		t.Errorf("with -reinit: exit %d, %q; want the node built, then the status address refused", code, errb.String())
	}
}
