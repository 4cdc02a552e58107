// Command brokennode is tokendist-node (the same flags, config and endpoint) on a
// deliberately broken store: a write-behind cache (brokenstore.WriteBehind) in front of
// the node's BoltStore that writes only every 10th state, so that the node sends and
// answers before its state is durable. It exists only for the chaos test's self-check:
// `scripts/chaos.sh broken` builds it and runs TestChaos on it, which must fail. Never
// run it for real work.
package main

import (
	"os"
	"path/filepath"

	"github.com/tokendist/tokendist/fleet"
	"github.com/tokendist/tokendist/fleet/internal/brokenstore"
	"github.com/tokendist/tokendist/internal/errs"
	"github.com/tokendist/tokendist/internal/nodecmd"
)

// saveEvery is the write-behind period, in saves.
const saveEvery = 10

func main() {
	os.Exit(nodecmd.Main(os.Args[1:], os.Stdout, os.Stderr, &nodecmd.Hooks{Name: "brokennode", Store: openStore}))
}

// openStore opens the node's BoltStore, as fleet.NewNode would, behind the cache.
func openStore(cfg fleet.Config) (fleet.Store, error) {
	if err := os.MkdirAll(cfg.Data, 0o700); err != nil {
		return nil, errs.Wrapf(err, "node %d: data directory %q", cfg.ID, cfg.Data)
	}
	s, err := fleet.OpenBoltStore(filepath.Join(cfg.Data, fleet.StoreFile), nil)
	if err != nil {
		return nil, err
	}
	return brokenstore.NewWriteBehind(s, saveEvery), nil
}
