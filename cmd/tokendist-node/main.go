// Command tokendist-node runs one node of a tokendist fleet (package fleet): it reads a
// JSON config (fleet.Config), restores the node from its data directory or starts it
// with its initial items, exchanges frames with its neighbours over TCP, serves its
// HTTP endpoint (/metrics, /status, /items, /work, /complete) and stops cleanly on
// SIGTERM or SIGINT: it stops the HTTP server, persists the last state, closes the
// transport and the store, and exits 0 within a few seconds. docs/fleet.md describes
// a fleet.
//
// Usage:
//
//	tokendist-node -config node.json
//	tokendist-node -config node.json -print-config
//
// Exit status: 0 after a clean stop, 1 on an error (printed to stderr), 2 on bad flags.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/tokendist/tokendist/fleet"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// shutdownTimeout bounds the HTTP server's shutdown.
const shutdownTimeout = 3 * time.Second

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("tokendist-node", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfgPath := fs.String("config", "", "the node's JSON config file (fleet.Config)")
	printCfg := fs.Bool("print-config", false, "print the config as read and checked, and exit")
	quiet := fs.Bool("quiet", false, "log nothing but errors")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *cfgPath == "" || fs.NArg() > 0 {
		fmt.Fprintln(stderr, "usage: tokendist-node -config FILE [-print-config] [-quiet]")
		return 2
	}
	cfg, err := fleet.ReadConfig(*cfgPath)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	if *printCfg {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		_ = enc.Encode(cfg)
		return 0
	}
	logger := log.New(stderr, "", log.LstdFlags|log.Lmicroseconds)
	opts := &fleet.Options{Logf: logger.Printf}
	if *quiet {
		opts.Logf = nil
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	node, err := fleet.NewNode(cfg, opts)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	ln, err := net.Listen("tcp", cfg.Status)
	if err != nil {
		_ = node.Close()
		fmt.Fprintf(stderr, "tokendist: node %d: status endpoint %q: %v\n", cfg.ID, cfg.Status, err)
		return 1
	}
	srv := &http.Server{Handler: node.Handler(), ReadHeaderTimeout: 5 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	runErr := node.Run(ctx) // until SIGTERM/SIGINT or an error
	sctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	_ = srv.Shutdown(sctx)
	if err := <-served; err != nil && !errors.Is(err, http.ErrServerClosed) {
		runErr = errors.Join(runErr, err)
	}
	if runErr != nil {
		fmt.Fprintln(stderr, runErr)
		return 1
	}
	if opts.Logf != nil {
		opts.Logf("node %d: stopped", cfg.ID)
	}
	return 0
}
