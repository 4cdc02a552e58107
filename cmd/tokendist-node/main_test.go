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
		"peers": map[string]string{"1": freePort(t)}, // a neighbour that never answers
	}
	b, _ := json.Marshal(c)
	path = filepath.Join(dir, "node.json")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path, status
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
	go func() { done <- run([]string{"-config", path}, &out, &errb) }()
	var up bool
	for i := 0; i < 200 && !up; i++ {
		resp, err := http.Get("http://" + status + "/status")
		if err == nil {
			resp.Body.Close()
			up = resp.StatusCode == 200
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
