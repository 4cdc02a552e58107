// Command tokendist runs token-distribution experiments described by YAML files: a
// single run, a resumable parallel sweep into an SQLite database (shardable over Slurm
// job arrays and Kubernetes Indexed Jobs), reports, plots and merges. Run
// "tokendist help" for the commands and docs/experiments.md for the file format.
//
// Install with:
//
//	go install github.com/tokendist/tokendist/cmd/tokendist@latest
package main

import (
	"os"

	"github.com/tokendist/tokendist/experiment"
	"github.com/tokendist/tokendist/registry"
)

func main() {
	os.Exit(experiment.Main(registry.Default(), os.Args[1:], os.Stdout, os.Stderr))
}
