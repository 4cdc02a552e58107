// Package nodecmd is the body of the tokendist-node command (cmd/tokendist-node),
// shared with the chaos test's deliberately broken node (fleet/internal/brokennode),
// which differs from it only by its Store (Hooks.Store).
package nodecmd

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
	"os/signal"
	"syscall"
	"time"

	"github.com/tokendist/tokendist/fleet"
)

// shutdownTimeout bounds the HTTP server's shutdown.
const shutdownTimeout = 3 * time.Second

// Hooks change what Main runs; the zero value (or nil) is the tokendist-node command.
type Hooks struct {
	// Name is the command's name in its usage line and flag errors ("": tokendist-node).
	Name string
	// Store, when not nil, opens the node's store from its config; the node closes it
	// (Main closes it too when NewNode fails). nil: fleet's BoltStore in the data
	// directory.
	Store func(cfg fleet.Config) (fleet.Store, error)
}

// Main runs the command with the arguments args (without the program name), writing
// to stdout and stderr, and returns its exit status: 0 after a clean stop (SIGTERM or
// SIGINT), 1 on an error (printed to stderr), 2 on bad flags. The package comment of
// cmd/tokendist-node describes the flags.
func Main(args []string, stdout, stderr io.Writer, h *Hooks) int {
	var hk Hooks
	if h != nil {
		hk = *h
	}
	if hk.Name == "" {
		hk.Name = "tokendist-node"
	}
	fs := flag.NewFlagSet(hk.Name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfgPath := fs.String("config", "", "the node's JSON config file (fleet.Config)")
	printCfg := fs.Bool("print-config", false, "print the config as read and checked, and exit")
	quiet := fs.Bool("quiet", false, "log nothing but errors")
	printToken := fs.Bool("print-token", false, "print the bearer token of the node's HTTP endpoint (derived from key_file), and exit")
	reinit := fs.Bool("reinit", false, "start afresh with the node's initial items although its store is empty or missing on a data directory that has run before (fleet.Options.Reinit)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *cfgPath == "" || fs.NArg() > 0 {
		fmt.Fprintf(stderr, "usage: %s -config FILE [-print-config | -print-token] [-quiet] [-reinit]\n", hk.Name)
		return 2
	}
	cfg, err := fleet.ReadConfig(*cfgPath)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	if *printToken {
		token, err := cfg.HTTPToken()
		if err != nil {
			fmt.Fprintln(stderr, err)
			return 1
		}
		if token == "" {
			fmt.Fprintf(stderr, "tokendist: node %d: insecure: true, the HTTP endpoint takes requests without a token\n", cfg.ID)
			return 1
		}
		fmt.Fprintln(stdout, token)
		return 0
	}
	if *printCfg {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		_ = enc.Encode(cfg)
		return 0
	}
	logger := log.New(stderr, "", log.LstdFlags|log.Lmicroseconds)
	opts := &fleet.Options{Logf: logger.Printf, Reinit: *reinit}
	if *quiet {
		opts.Logf = nil
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if hk.Store != nil {
		if opts.Store, err = hk.Store(cfg); err != nil {
			fmt.Fprintln(stderr, err)
			return 1
		}
	}
	node, err := fleet.NewNode(cfg, opts)
	if err != nil {
		if opts.Store != nil {
			_ = opts.Store.Close() // NewNode may have closed it already; a second Close is harmless
		}
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
