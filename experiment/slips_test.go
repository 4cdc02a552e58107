package experiment

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tokendist/tokendist/registry"
)

// modelFile runs one algorithm under six network models (an axis of 3 × 2 values).
const modelFile = `name: models
networks:
  - name: ring
    n: 8
loads:
  - name: point-mass
    tokens: 80
algorithms: [randomized-diffusion]
stop:
  max_steps: 5
seeds: 2
network_model:
  - {loss: [0.2, 0.05, 0.1], patience: [0, 4]}
`

// TestRunModelColumns: tokendist run prints the model.* fields that differ between the
// runs, so every row can be told apart; the constant ones are left out.
func TestRunModelColumns(t *testing.T) {
	file := filepath.Join(t.TempDir(), "models.yaml")
	require.NoError(t, os.WriteFile(file, []byte(modelFile), 0o644))
	code, out, e := mainRun("run", "--format", "csv", file)
	require.Equal(t, ExitOK, code, e)
	rows := readCSV(t, out)
	require.Equal(t, []string{"network", "loads", "algorithm", "model.loss", "model.patience", "seed", "status"}, rows[0][:7])
	require.Len(t, rows, 1+12)
	seen := map[string]bool{}
	for _, r := range rows[1:] {
		k := strings.Join(r[:6], ",")
		require.False(t, seen[k], "two rows %s", k)
		seen[k] = true
	}
	require.Equal(t, []string{"0.2", "0"}, rows[1][3:5])
	require.Equal(t, []string{"0.1", "4"}, rows[12][3:5])
	// A file without a model has no model columns.
	plain := filepath.Join(t.TempDir(), "plain.yaml")
	require.NoError(t, os.WriteFile(plain, []byte(strings.Split(modelFile, "network_model:")[0]), 0o644))
	code, out, e = mainRun("run", "--format", "csv", plain)
	require.Equal(t, ExitOK, code, e)
	require.NotContains(t, out, "model.")
}

// TestSummaryModelOrder: summary groups of network models come in the order of the
// models' values (numbers numerically), not of the runs' key hashes.
func TestSummaryModelOrder(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "models.yaml")
	require.NoError(t, os.WriteFile(file, []byte(strings.Replace(modelFile, "n: 8", "n: [8, 6]", 1)), 0o644))
	db := filepath.Join(dir, "models.db")
	code, _, e := mainRun("sweep", "--progress", "none", "--db", db, file)
	require.Equal(t, ExitOK, code, e)
	code, out, e := mainRun("report", "--db", db, "--where", "n = 8", "--summary", "--by", "model.loss,model.patience", "--values", "discrepancy", "--format", "csv")
	require.Equal(t, ExitOK, code, e)
	var got []string
	for _, r := range readCSV(t, out)[1:] {
		got = append(got, r[0]+"/"+r[1])
	}
	require.Equal(t, []string{"0.05/0", "0.05/4", "0.1/0", "0.1/4", "0.2/0", "0.2/4"}, got)
	// The per-run export too: by model, then seed.
	code, out, _ = mainRun("report", "--db", db, "--format", "csv")
	require.Equal(t, ExitOK, code)
	rows := readCSV(t, out)
	col := index(rows[0])
	got = nil
	for _, r := range rows[1:] {
		got = append(got, r[col["n"]]+"/"+r[col["model.loss"]]+"/"+r[col["model.patience"]]+"/"+r[col["seed"]])
	}
	var want []string
	for _, n := range []string{"6", "8"} { // the networks stay in the query's order
		for _, m := range []string{"0.05/0", "0.05/4", "0.1/0", "0.1/4", "0.2/0", "0.2/4"} {
			want = append(want, n+"/"+m+"/1", n+"/"+m+"/2")
		}
	}
	require.Equal(t, want, got)
	require.Equal(t, -1, compareValues(nil, int64(1)))
	require.Equal(t, -1, compareValues(int64(9), 10.5))
	require.Equal(t, 1, compareValues("a", 3.0))
	require.Equal(t, 0, compareValues(2.0, int64(2)))
	require.Equal(t, -1, compareValues("a", "b"))
}

// TestListHeadings: tokendist list names each kind in the plural once ("LOADS", not
// "LOADSS").
func TestListHeadings(t *testing.T) {
	code, out, e := mainRun("list")
	require.Equal(t, ExitOK, code, e)
	for _, h := range []string{"NETWORKS", "LOADS", "ALGORITHMS", "METRICS", "WORKLOADS", "CHURNS"} {
		require.Contains(t, "\n"+out, "\n"+h+"\n", "heading %s", h)
	}
	require.NotContains(t, out, "LOADSS")
}

// TestSpanningTreeHelp: the spanning_tree parameter of each of Houle et al.'s algorithms
// names that algorithm, not DISCREPANCY-1 for all three.
func TestSpanningTreeHelp(t *testing.T) {
	reg := registry.Default()
	doc := map[string]string{}
	for _, e := range reg.Entries(registry.KindAlgorithm) {
		for _, p := range e.Params {
			if p.Name == "spanning_tree" {
				doc[e.Name] = p.Doc
			}
		}
	}
	require.Contains(t, doc["threshold-1"], "needed for THRESHOLD-1 on non-trees")
	require.Contains(t, doc["threshold-2"], "optional")
	require.Contains(t, doc["discrepancy-1"], "needed for DISCREPANCY-1 on non-trees")
	for _, a := range []string{"threshold-1", "threshold-2"} {
		require.NotContains(t, doc[a], "DISCREPANCY-1")
	}
}
