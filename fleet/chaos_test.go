package fleet

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tokendist/tokendist/node"

	"github.com/tokendist/tokendist"
	"github.com/tokendist/tokendist/async"
	"github.com/tokendist/tokendist/registry"
)

// The chaos test (issue 25) runs fleets of real tokendist-node processes on loopback,
// every link through a real toxiproxy server, and kill -9s them while work arrives and
// completes. It runs only when TOKENDIST_CHAOS is "short" or "long" and
// TOKENDIST_TOXIPROXY and TOKENDIST_NODE name the toxiproxy-server and tokendist-node
// binaries (scripts/chaos.sh builds both and sets them). The self-check runs it on a
// deliberately broken node binary instead (fleet/internal/brokennode: tokendist-node on
// a write-behind store, which sends before its state is durable), with
// TOKENDIST_CHAOS_BROKEN=1, which only changes the test's report: it must fail.

// chaosPlan is one mode's sizes.
type chaosPlan struct {
	chaos        time.Duration // the fault phase per topology
	killEvery    time.Duration // mean time between kills
	maxDown      int           // nodes down at once at most
	measureR     int64         // rounds of the measurement fleet
	recoverLimit time.Duration
}

var chaosPlans = map[string]chaosPlan{
	"short": {chaos: 20 * time.Second, killEvery: 1500 * time.Millisecond, maxDown: 2, measureR: 60, recoverLimit: 60 * time.Second},
	"long":  {chaos: 240 * time.Second, killEvery: 1200 * time.Millisecond, maxDown: 3, measureR: 200, recoverLimit: 120 * time.Second},
}

func chaosTopologies() []topology {
	const per = 20 // tokens per node
	return []topology{
		{"tree", registry.Spec{Network: choice("random-tree", map[string]any{"n": 16}), Loads: choice("uniform-random", map[string]any{"tokens": 16 * per}),
			Algorithm: choice("threshold-1", nil), Seed: 25}},
		{"torus", registry.Spec{Network: choice("torus", map[string]any{"sides": []int{4, 4}}), Loads: choice("uniform-random", map[string]any{"tokens": 16 * per}),
			Algorithm: choice("rsw-diffusion", nil), Seed: 25}},
		{"random-regular", registry.Spec{Network: choice("random-regular", map[string]any{"n": 16, "d": 4}), Loads: choice("uniform-random", map[string]any{"tokens": 16 * per}),
			Algorithm: choice("rsw-diffusion", nil), Seed: 25}},
	}
}

// chaosTotals are the figures the test reports.
type chaosTotals struct {
	topologies, processes, proxies, kills, restarts, faults, added, completed, checked, lost, doubled int
}

func TestChaos(t *testing.T) {
	mode := os.Getenv("TOKENDIST_CHAOS")
	plan, ok := chaosPlans[mode]
	if !ok {
		t.Skip("set TOKENDIST_CHAOS=short|long, TOKENDIST_TOXIPROXY and TOKENDIST_NODE (scripts/chaos.sh does)")
	}
	proxyBin, nodeBin := os.Getenv("TOKENDIST_TOXIPROXY"), os.Getenv("TOKENDIST_NODE")
	for _, p := range []string{proxyBin, nodeBin} {
		if st, err := os.Stat(p); err != nil || st.IsDir() {
			t.Fatalf("binary %q: %v", p, err)
		}
	}
	broken := os.Getenv("TOKENDIST_CHAOS_BROKEN") == "1"
	dir := t.TempDir()
	if keep := os.Getenv("TOKENDIST_CHAOS_KEEP"); keep != "" { // keep the logs and data directories
		var err error
		if dir, err = os.MkdirTemp(keep, "chaos-"); err != nil {
			t.Fatal(err)
		}
		t.Logf("logs and data in %s", dir)
	}
	tp := startToxiproxy(t, proxyBin, dir)
	var tot chaosTotals
	start := time.Now()
	for i, top := range chaosTopologies() {
		ok := t.Run(top.name, func(t *testing.T) {
			c := &chaos{t: t, tp: tp, nodeBin: nodeBin, broken: broken, plan: plan, top: top,
				r: rand.New(rand.NewPCG(uint64(i), uint64(time.Now().UnixNano()))), dir: filepath.Join(dir, top.name)}
			c.run(&tot)
		})
		if !ok && !broken {
			break
		}
	}
	t.Logf("chaos %s: %d topologies, %d processes, %d proxies, %d kills, %d restarts, %d faults injected, %d items added, %d completed, %d payloads checked, lost %d, doubled %d, %.0f s",
		mode, tot.topologies, tot.processes, tot.proxies, tot.kills, tot.restarts, tot.faults, tot.added, tot.completed, tot.checked, tot.lost, tot.doubled, time.Since(start).Seconds())
	if !t.Failed() {
		fmt.Printf("CHAOS PASS mode=%s kills=%d restarts=%d faults=%d payloads=%d lost=%d doubled=%d\n", mode, tot.kills, tot.restarts, tot.faults, tot.checked, tot.lost, tot.doubled)
	} else if broken {
		fmt.Printf("CHAOS BROKEN DETECTED lost=%d doubled=%d\n", tot.lost, tot.doubled)
	}
}

// ---- toxiproxy, through its REST API on loopback

type toxiproxy struct {
	api string
	hc  *http.Client
}

func startToxiproxy(t *testing.T, bin, dir string) *toxiproxy {
	addr := freeAddr(t)
	host, port, _ := strings.Cut(addr, ":")
	logf, err := os.Create(filepath.Join(dir, "toxiproxy.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-host", host, "-port", port)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		_ = logf.Close()
	})
	tp := &toxiproxy{api: "http://" + addr, hc: &http.Client{Timeout: 60 * time.Second}}
	for i := 0; ; i++ {
		if _, err := tp.call("GET", "/version", nil); err == nil {
			return tp
		}
		if i == 100 {
			t.Fatal("toxiproxy did not answer within 10 s")
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (tp *toxiproxy) call(method, path string, body any) ([]byte, error) {
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, tp.api+path, rd)
	if err != nil {
		return nil, err
	}
	resp, err := tp.hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode/100 != 2 {
		return out, fmt.Errorf("toxiproxy %s %s: %s: %s", method, path, resp.Status, out)
	}
	return out, nil
}

// ---- one topology

type chaos struct {
	t       *testing.T
	tp      *toxiproxy
	nodeBin string
	broken  bool
	// startArgs are added to the command line of the processes start starts.
	startArgs []string
	plan      chaosPlan
	top       topology
	r         *rand.Rand
	dir       string

	b       built
	cfgs    []Config
	paths   []string
	procs   []*exec.Cmd
	logs    []*os.File
	hc      *http.Client
	proxies []string
	toxics  []string // "proxy/toxic"
	tid     int

	expected  map[uint64]bool
	uncertain map[uint64]bool
	nextID    uint64
	kills     int
	restarts  int
	faults    int
	added     int
	completed int
	restartAt map[int]time.Time
	answered  map[int]bool // the node's current process has answered a request
	early     int          // kills of a process that had not answered yet
	recovery  []float64    // seconds from restart to the first delivered datagram
}

func (c *chaos) run(tot *chaosTotals) {
	t := c.t
	c.b = build(t, c.top.spec)
	if !c.b.g.Connected() {
		t.Fatalf("%s is not connected", c.top.name)
	}
	c.hc = authClient(15 * time.Second)
	c.restartAt = map[int]time.Time{}
	c.answered = map[int]bool{}
	t.Cleanup(c.killAll)

	// 1. The measurement fleet: Rounds rounds, every link through a latency toxic of
	// 20 ms, against async.Simulate's prediction.
	c.measure()

	// 2. The chaos fleet.
	c.setup("chaos", 0)
	c.startAll()
	c.expected = map[uint64]bool{}
	for _, id := range c.b.initialItems() {
		c.expected[id] = true
	}
	c.uncertain = map[uint64]bool{}
	c.nextID = 1<<63 | uint64(len(c.top.name))<<40
	down := map[int]time.Time{} // node -> restart time
	deadline := time.Now().Add(c.plan.chaos)
	nextKill := time.Now().Add(c.plan.killEvery)
	for iter := 0; time.Now().Before(deadline) && iter < 1_000_000; iter++ {
		now := time.Now()
		for v, at := range down {
			if now.After(at) {
				c.start(v)
				c.restarts++
				c.restartAt[v] = time.Now()
				delete(down, v)
			}
		}
		if now.After(nextKill) {
			c.crash(c.r.IntN(len(c.cfgs)), down)
			nextKill = now.Add(time.Duration(c.r.ExpFloat64() * float64(c.plan.killEvery)))
		}
		switch k := c.r.IntN(10); {
		case k < 3:
			c.injectToxic()
		case k < 5 && len(c.toxics) > 0:
			i := c.r.IntN(len(c.toxics))
			if _, err := c.tp.call("DELETE", "/proxies/"+c.toxics[i], nil); err != nil {
				t.Fatal(err)
			}
			c.toxics = slices.Delete(c.toxics, i, i+1)
		case k < 8:
			c.addWork(down)
		default:
			c.completeWork(down)
		}
		c.pollRecovery(down)
		time.Sleep(time.Duration(50+c.r.IntN(100)) * time.Millisecond)
	}

	// 3. Stop the faults, restart every node that is down, recover.
	if _, err := c.tp.call("POST", "/reset", nil); err != nil {
		t.Fatal(err)
	}
	c.toxics = nil
	for v := range down {
		c.start(v)
		c.restarts++
		c.restartAt[v] = time.Now()
	}
	for v := range c.cfgs {
		c.waitUp(v)
	}
	recStart := time.Now()
	waitBalanced(t, c.b, c.liveLoads, c.plan.recoverLimit)
	for deadline := time.Now().Add(10 * time.Second); len(c.restartAt) > 0 && time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		c.pollRecovery(nil)
	}
	balancedAfter := time.Since(recStart)
	time.Sleep(2 * time.Second) // a margin of fault-free rounds
	var rejected, moved, starts int64
	for v := range c.cfgs {
		s, err := c.status(v)
		if err != nil {
			t.Fatalf("node %d: %v", v, err)
		}
		rejected += s.Rejected
		moved += s.Moved
		starts += s.Starts
	}
	// A process killed before it counted its start (c.early of them at most) is missing.
	if want := int64(len(c.cfgs) + c.restarts); starts > want || starts < want-int64(c.early) {
		t.Errorf("the nodes count %d starts; the test made %d processes and %d restarts, %d of them killed before they answered", starts, len(c.cfgs), c.restarts, c.early)
	}

	// 4. Stop every node with SIGTERM (each must exit 0 within 10 s), then audit the
	// persisted states: every payload exactly once, the totals, the bound.
	c.stopAll()
	items, settled := auditStores(t, c.b, c.cfgs)
	var expected []uint64
	for id := range c.expected {
		expected = append(expected, id)
	}
	lost, doubled, unknown := exactlyOnce(expected, items)
	// An uncertain item (a request whose answer was lost) may be there once or not.
	unknown = slices.DeleteFunc(unknown, func(id uint64) bool { return c.uncertain[id] })
	var total int64
	for _, l := range settled {
		total += l
	}
	disc, local := c.b.discrepancy(settled)
	var rec []float64
	rec = append(rec, c.recovery...)
	sort.Float64s(rec)
	t.Logf("%s: %d processes, %d proxies, %d kills, %d restarts, %d faults, %d added, %d completed (%d uncertain), %d tokens moved, %d frames rejected since the last restarts, %d payloads checked: lost %d, doubled %d, unknown %d; total %d (expected %d); settled discrepancy %d (local %d), bound %d (local %d); balanced %.1f s after the faults stopped; recovery after a restart (to the first delivered datagram): n=%d median %.3f s, max %.3f s",
		c.top.name, len(c.cfgs), len(c.proxies), c.kills, c.restarts, c.faults, c.added, c.completed, len(c.uncertain), moved, rejected, len(expected), len(lost), len(doubled), len(unknown),
		total, len(expected), disc, local, c.b.bound, c.b.local, balancedAfter.Seconds(), len(rec), quantile(rec, 0.5), quantile(rec, 1))
	tot.topologies++
	tot.processes += len(c.cfgs)
	tot.proxies += len(c.proxies)
	tot.kills += c.kills
	tot.restarts += c.restarts
	tot.faults += c.faults
	tot.added += c.added
	tot.completed += c.completed
	tot.checked += len(expected)
	tot.lost += len(lost)
	tot.doubled += len(doubled)
	if len(lost)+len(doubled)+len(unknown) > 0 {
		t.Errorf("%s: lost %d %v, doubled %d %v, unknown %d %v", c.top.name, len(lost), head(lost), len(doubled), head(doubled), len(unknown), head(unknown))
	}
	if total != int64(len(expected)) && len(c.uncertain) == 0 {
		t.Errorf("%s: total %d, expected %d", c.top.name, total, len(expected))
	}
	if !c.b.withinBound(settled) {
		t.Errorf("%s: settled loads %v: discrepancy %d (local %d) over the bound %d (local %d)", c.top.name, settled, disc, local, c.b.bound, c.b.local)
	}
}

func head(ids []uint64) []uint64 { return ids[:min(len(ids), 5)] }

func quantile(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	return xs[min(len(xs)-1, int(q*float64(len(xs))))]
}

// setup makes the proxies (one per directed link) and the configs of a fleet in
// c.dir/name.
func (c *chaos) setup(name string, rounds int64) {
	t := c.t
	for _, p := range c.proxies {
		if _, err := c.tp.call("DELETE", "/proxies/"+p, nil); err != nil {
			t.Fatal(err)
		}
	}
	c.proxies = nil
	dir := filepath.Join(c.dir, name)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	c.cfgs = configs(t, c.b, c.top.spec, dir, func(u, v int, listen []string) string {
		pname := fmt.Sprintf("%s-%s-%d-%d", c.top.name, name, u, v)
		addr := freeAddr(t)
		if _, err := c.tp.call("POST", "/proxies", map[string]any{"name": pname, "listen": addr, "upstream": listen[v], "enabled": true}); err != nil {
			t.Fatal(err)
		}
		c.proxies = append(c.proxies, pname)
		return addr
	})
	c.paths = make([]string, len(c.cfgs))
	for _, f := range c.logs {
		if f != nil {
			_ = f.Close()
		}
	}
	for v := range c.cfgs {
		c.cfgs[v].Rounds = rounds
		b, err := json.MarshalIndent(c.cfgs[v], "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		c.paths[v] = filepath.Join(dir, fmt.Sprintf("node-%d.json", v))
		if err := os.WriteFile(c.paths[v], b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	c.procs = make([]*exec.Cmd, len(c.cfgs))
	c.logs = make([]*os.File, len(c.cfgs))
}

func (c *chaos) startAll() {
	for v := range c.cfgs {
		c.start(v)
	}
	for v := range c.cfgs {
		c.waitUp(v)
	}
}

// start starts node v's process (its log appended to its data directory's node.log).
func (c *chaos) start(v int) {
	t := c.t
	if err := os.MkdirAll(c.cfgs[v].Data, 0o700); err != nil {
		t.Fatal(err)
	}
	if c.logs[v] == nil {
		f, err := os.OpenFile(filepath.Join(c.cfgs[v].Data, "..", fmt.Sprintf("node-%d.log", v)), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		c.logs[v] = f
	}
	args := []string{"-config", c.paths[v]}
	if c.broken {
		// The write-behind store loses a node's first states, and an empty store on a
		// used data directory is refused (Options.Reinit): the self-check forces the
		// restart, so that it checks what it is for, the order of saves and sends.
		args = append(args, "-reinit")
	}
	args = append(args, c.startArgs...)
	cmd := exec.Command(c.nodeBin, args...)
	cmd.Stdout, cmd.Stderr = c.logs[v], c.logs[v]
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c.procs[v] = cmd
	c.answered[v] = false
}

// kill kill -9s node v and reaps it.
func (c *chaos) kill(v int) {
	if p := c.procs[v]; p != nil {
		_ = p.Process.Signal(syscall.SIGKILL)
		_ = p.Wait()
		c.procs[v] = nil
	}
}

func (c *chaos) killAll() {
	for v := range c.procs {
		c.kill(v)
	}
	for _, f := range c.logs {
		if f != nil {
			_ = f.Close()
		}
	}
}

// stopAll sends SIGTERM to every node and waits (at most 10 s each) for exit status 0.
func (c *chaos) stopAll() {
	for _, p := range c.procs {
		if p != nil {
			_ = p.Process.Signal(syscall.SIGTERM)
		}
	}
	for v, p := range c.procs {
		if p == nil {
			continue
		}
		done := make(chan error, 1)
		go func() { done <- p.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				c.t.Errorf("node %d: exit after SIGTERM: %v", v, err)
			}
		case <-time.After(10 * time.Second):
			c.t.Errorf("node %d did not stop within 10 s of SIGTERM", v)
			_ = p.Process.Kill()
			<-done
		}
		c.procs[v] = nil
	}
}

// waitUp waits (at most 20 s) for node v's status endpoint.
func (c *chaos) waitUp(v int) {
	for i := 0; i < 400; i++ {
		if _, err := c.status(v); err == nil {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	c.t.Fatalf("node %d did not answer within 20 s; its log ends:\n%s", v, c.logTail(v))
}

// logTail returns the last lines of node v's log.
func (c *chaos) logTail(v int) string {
	b, _ := os.ReadFile(filepath.Join(c.cfgs[v].Data, "..", fmt.Sprintf("node-%d.log", v)))
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return strings.Join(lines[max(0, len(lines)-8):], "\n")
}

func (c *chaos) status(v int) (Status, error) {
	var s Status
	resp, err := c.hc.Get("http://" + c.cfgs[v].Status + "/status")
	if err != nil {
		return s, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		return s, fmt.Errorf("status %s", resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(&s); err != nil {
		return s, err
	}
	c.answered[v] = true
	return s, nil
}

func (c *chaos) liveLoads() []int64 {
	out := make([]int64, len(c.cfgs))
	for v := range c.cfgs {
		if s, err := c.status(v); err == nil {
			out[v] = s.Load
		} else {
			out[v] = math.MaxInt32 // not balanced while a node does not answer
		}
	}
	return out
}

// pollRecovery records the recovery time of restarted nodes that have delivered.
func (c *chaos) pollRecovery(down map[int]time.Time) {
	for v := range c.restartAt {
		if _, isDown := down[v]; isDown {
			continue
		}
		s, err := c.status(v)
		if err != nil || s.FirstDelivery == 0 {
			continue
		}
		c.recovery = append(c.recovery, s.FirstDelivery)
		delete(c.restartAt, v)
	}
}

// post sends a JSON request to node v; refused reports that the request never reached
// the node (nothing happened).
func (c *chaos) post(v int, path string, body, out any) (refused bool, err error) {
	b, _ := json.Marshal(body)
	resp, err := c.hc.Post("http://"+c.cfgs[v].Status+path, "application/json", bytes.NewReader(b))
	if err != nil {
		return errors.Is(err, syscall.ECONNREFUSED), err
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
		return resp.StatusCode == http.StatusServiceUnavailable, fmt.Errorf("%s: %s", resp.Status, msg)
	}
	c.answered[v] = true
	return false, json.NewDecoder(resp.Body).Decode(out)
}

// crash kill -9s node v, unless it is down or plan.maxDown nodes are, and schedules
// its restart in 0 to 1.5 s.
func (c *chaos) crash(v int, down map[int]time.Time) {
	if _, isDown := down[v]; isDown || len(down) >= c.plan.maxDown {
		return
	}
	if !c.answered[v] {
		c.early++
	}
	c.kill(v)
	c.kills++
	down[v] = time.Now().Add(time.Duration(c.r.IntN(1500)) * time.Millisecond)
}

// addWork adds 1..8 new items at a node that is up (skewed towards low IDs, so that
// the algorithm has work to do).
func (c *chaos) addWork(down map[int]time.Time) {
	v := min(c.r.IntN(len(c.cfgs)), c.r.IntN(len(c.cfgs)))
	if _, isDown := down[v]; isDown || c.procs[v] == nil {
		return
	}
	ids := make([]uint64, 1+c.r.IntN(8))
	for i := range ids {
		c.nextID++
		ids[i] = c.nextID
	}
	var s Status
	refused, err := c.post(v, "/work", WorkRequest{Items: ids}, &s)
	switch {
	case err == nil:
		for _, id := range ids {
			c.expected[id] = true
		}
		c.added += len(ids)
		if c.r.IntN(8) == 0 { // a kill right after the node acknowledged work
			c.crash(v, down)
		}
	case refused:
	default:
		for _, id := range ids {
			c.uncertain[id] = true
		}
		c.t.Logf("node %d: /work: %v (the items are uncertain)", v, err)
	}
}

// completeWork completes 1..5 items at a node that is up.
func (c *chaos) completeWork(down map[int]time.Time) {
	v := c.r.IntN(len(c.cfgs))
	if _, isDown := down[v]; isDown || c.procs[v] == nil {
		return
	}
	var r ItemsResponse
	refused, err := c.post(v, "/complete", CompleteRequest{Count: 1 + c.r.IntN(5)}, &r)
	switch {
	case err == nil:
		for _, id := range r.Items {
			if !c.expected[id] {
				c.t.Errorf("node %d completed item %#x, which is not in the fleet", v, id)
			}
			delete(c.expected, id)
		}
		c.completed += len(r.Items)
	case refused:
	default:
		c.t.Errorf("node %d: /complete: %v (items may be lost from the test's view)", v, err)
	}
}

// injectToxic adds one random toxic to one random proxy, on the stream the frames
// take (upstream: from the dialling sender to the receiver).
func (c *chaos) injectToxic() {
	if len(c.toxics) >= len(c.proxies)/2 {
		return
	}
	// One toxic per proxy at a time: toxiproxy removes a toxic by draining it into
	// the next one of the chain, which a timeout toxic never reads.
	p := c.proxies[c.r.IntN(len(c.proxies))]
	for _, x := range c.toxics {
		if strings.HasPrefix(x, p+"/") {
			return
		}
	}
	c.tid++
	name := fmt.Sprintf("x%d", c.tid)
	var typ string
	var attrs map[string]any
	switch c.r.IntN(5) {
	case 0:
		typ, attrs = "latency", map[string]any{"latency": 5 + c.r.IntN(80), "jitter": c.r.IntN(40)}
	case 1: // loss: nothing passes while the toxic is active; the connection times out
		typ, attrs = "timeout", map[string]any{"timeout": c.r.IntN(2000)}
	case 2:
		typ, attrs = "bandwidth", map[string]any{"rate": 4 + c.r.IntN(60)} // KB/s
	case 3:
		typ, attrs = "reset_peer", map[string]any{"timeout": c.r.IntN(500)}
	default: // frames cut into small pieces with delays between them
		typ, attrs = "slicer", map[string]any{"average_size": 8, "size_variation": 6, "delay": 2000}
	}
	tox := map[string]any{"name": name, "type": typ, "stream": "upstream", "toxicity": 0.5 + 0.5*c.r.Float64(), "attributes": attrs}
	if _, err := c.tp.call("POST", "/proxies/"+p+"/toxics", tox); err != nil {
		c.t.Fatal(err)
	}
	c.toxics = append(c.toxics, p+"/toxics/"+name)
	c.faults++
}

// measure runs a fault-free fleet of plan.measureR rounds, all tokens starting on
// node 0, with a constant 20 ms latency toxic on every link, to completion (every node
// idle), and compares its tokens moved, frames and time with async.Simulate on the same
// network and loads with a constant delay of one time unit, a unit being 20 ms.
func (c *chaos) measure() {
	t := c.t
	const latency = 20 * time.Millisecond
	saved := c.top.spec
	defer func() { c.top.spec = saved }()
	c.top.spec.Loads = choice("point-mass", map[string]any{"tokens": c.b.loads.Total()})
	mb := build(t, c.top.spec)
	c.setup("measure", c.plan.measureR)
	for _, p := range c.proxies {
		if _, err := c.tp.call("POST", "/proxies/"+p+"/toxics", map[string]any{"name": "lat", "type": "latency", "stream": "upstream",
			"toxicity": 1, "attributes": map[string]any{"latency": latency.Milliseconds()}}); err != nil {
			t.Fatal(err)
		}
	}
	t0 := time.Now()
	c.startAll()
	up := time.Since(t0).Seconds()
	var sts []Status
	for deadline := time.Now().Add(5 * time.Minute); ; time.Sleep(50 * time.Millisecond) {
		sts = sts[:0]
		idle := true
		for v := range c.cfgs {
			s, err := c.status(v)
			if err != nil {
				t.Fatal(err)
			}
			sts = append(sts, s)
			idle = idle && s.Idle
		}
		if idle {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the measurement fleet did not finish within 5 minutes")
		}
	}
	wall := time.Since(t0).Seconds()
	var moved, sent, saves int64
	var saveSec float64
	for _, s := range sts {
		moved += s.Moved
		sent += s.Sent
		saves += s.Saves
		saveSec += s.SaveSeconds
	}
	c.stopAll()
	for _, p := range c.proxies { // the chaos fleet's links start clean
		_, _ = c.tp.call("DELETE", "/proxies/"+p+"/toxics/lat", nil)
	}
	// The prediction.
	reg := registry.Default()
	s, _ := reg.Canonical(c.top.spec)
	_, _, bal, err := reg.Build(s)
	if err != nil {
		t.Fatal(err)
	}
	progs, err := bal.(tokendist.NodeAlgorithm).NodePrograms(mb.g, &node.Options{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := async.Simulate(context.Background(), mb.g, progs, mb.loads, &async.Options{Seed: s.Seed, Rounds: c.plan.measureR, RetransmitTicks: 5})
	if err != nil {
		t.Fatal(err)
	}
	n, links := float64(mb.g.Order()), float64(2*mb.g.Size())
	pred := res.Time * latency.Seconds()
	per := func(x float64, d float64) float64 { return x / math.Max(d, 1e-9) }
	t.Logf("%s measurement (%d rounds from a point mass of %d tokens, 20 ms latency toxic on every link): fleet %.2f s (%.2f s until all %d processes answered), moved %d tokens: %.1f tokens/s per node, %.2f per directed link; %d frames, %.2f per token moved; %d saves, mean %.2f ms. Simulator (constant delay 1 = 20 ms): %.0f units = %.2f s, moved %d: %.1f tokens/s per node, %.2f per directed link; %d datagrams, %.2f per token moved. Fleet time / predicted: %.2f",
		c.top.name, c.plan.measureR, mb.loads.Total(), wall, up, len(c.cfgs), moved, per(float64(moved), wall*n), per(float64(moved), wall*links), sent, per(float64(sent), float64(moved)),
		saves, 1000*per(saveSec, float64(saves)), res.Time, pred, res.Moved, per(float64(res.Moved), pred*n), per(float64(res.Moved), pred*links), res.Datagrams, per(float64(res.Datagrams), float64(res.Moved)), wall/pred)
	if moved != res.Moved {
		t.Errorf("%s: the fleet moved %d tokens in %d rounds, the simulator %d (zero patience: the same run)", c.top.name, moved, c.plan.measureR, res.Moved)
	}
}
