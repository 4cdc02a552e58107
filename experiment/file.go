// Package experiment reads tokendist experiment files, expands their grids into runs,
// sweeps them in parallel into an SQLite results database (resumable, shardable), and
// reports, plots and merges the results. It is the engine of the tokendist command;
// Main runs the command with any registry, so a Go program that registers its own
// balancers can offer the whole command line:
//
//	reg := registry.Default()
//	reg.RegisterAlgorithm(registry.Entry{Name: "mine"}, newMine)
//	os.Exit(experiment.Main(reg, os.Args[1:], os.Stdout, os.Stderr))
//
// The file format and workflow are documented in docs/experiments.md.
package experiment

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"

	"fmt"

	"math"

	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/tokendist/tokendist"
	"github.com/tokendist/tokendist/internal/errs"
	"github.com/tokendist/tokendist/internal/files"
	"github.com/tokendist/tokendist/registry"
	"go.yaml.in/yaml/v3"
)

// Axis is one value of a grid field, kept with its source line.
type value struct {
	v    any
	line int
}

// field is a parameter or stop field: one value, or a list of values that forms a grid
// axis.
type field struct {
	key    string // e.g. "network.d", "stop.max_steps"
	values []value
	list   bool // a list: the field is an axis of the grid
	line   int
}

type choiceSpec struct {
	name   string
	line   int
	fields []field // parameters, in file order
}

// File is a parsed experiment file.
type File struct {
	Path        string
	Name        string
	Description string
	networks    []choiceSpec
	loads       []choiceSpec
	algorithms  []choiceSpec
	stop        []field
	seeds       []uint64
	zip         [][]string
	zipLine     int
	// Code is the user's label of the code (the file's code key; sweep --code replaces
	// it) for what the code identity cannot see, such as data files or external tools the
	// program reads: it is part of every run's key, so runs of different labels are
	// never mixed (see CodeIdentity). Specs uses the value at the time of the call.
	Code        string
	Metrics     []string
	SampleEvery int64
	Trace       bool
	workload    []registry.Choice
	churn       *registry.Choice
	steady      *tokendist.SteadyOptions
	netModels   []*registry.NetworkModel // an axis of the grid: nil without a network_model block
	reg         *registry.Registry
	expanded    []Run  // the grid, once Specs has expanded it
	expandedFor string // the Code the keys of expanded include
}

var (
	topKeys    = []string{"name", "description", "networks", "loads", "algorithms", "stop", "seeds", "zip", "record", "workload", "churn", "steady", "network_model", "code", "quick"}
	stopKeys   = []string{"max_steps", "tau", "target", "no_stability", "stop_when_stable"}
	recordKeys = []string{"metrics", "sample_every", "trace"}
	steadyKeys = []string{"warm_up", "every"}
)

type parser struct {
	path string
	reg  *registry.Registry
}

func (p *parser) errf(n *yaml.Node, key, format string, args ...any) error {
	line := 0
	if n != nil {
		line = n.Line
	}
	return &FileError{File: p.path, Line: line, Key: key, Msg: fmt.Sprintf(format, args...)}
}

// errw is errf for an error of the registry (or the operating system): its message
// without the prefix, and err itself kept for errors.Is.
func (p *parser) errw(n *yaml.Node, key string, err error) error {
	line := 0
	if n != nil {
		line = n.Line
	}
	return &FileError{File: p.path, Line: line, Key: key, Msg: stripErr(err), Err: err}
}

// ReadFile reads and checks an experiment file against reg. With quick, the file's quick
// section overrides its top-level keys; a file without one is then an error.
//
// The file must be a regular file (a device, FIFO or directory is refused before it is
// read) of at most maxFileBytes bytes.
func ReadFile(path string, reg *registry.Registry, quick bool) (*File, error) {
	data, err := files.ReadFile(path, "experiment file", maxFileBytes)
	if err != nil {
		msg := stripErr(err)
		var pe *fs.PathError
		if errors.As(err, &pe) {
			msg = pe.Op + ": " + pe.Err.Error() // the path is already the error's location
		} else {
			msg = strings.Replace(msg, "experiment file "+files.Name(path)+" ", "", 1)
		}
		return nil, &FileError{File: files.Name(path), Msg: msg, Err: err}
	}
	return Parse(path, data, reg, quick)
}

// maxFileBytes bounds the size of an experiment file.
const maxFileBytes = 16 << 20

// Parse parses experiment-file data (path names it in errors).
func Parse(path string, data []byte, reg *registry.Registry, quick bool) (*File, error) {
	p := &parser{path: files.Name(path), reg: reg}
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		return nil, &FileError{File: path, Msg: "not valid YAML: " + strings.TrimPrefix(err.Error(), "yaml: ")}
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		return nil, p.errf(&extra, "", "more than one YAML document")
	}
	if len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, p.errf(&doc, "", "the file must be a mapping with keys %s", strings.Join(topKeys, ", "))
	}
	root := doc.Content[0]
	top, err := p.mapping(root, "", topKeys)
	if err != nil {
		return nil, err
	}
	if q, ok := top["quick"]; ok {
		qk, err := p.mapping(q, "quick", topKeys[:len(topKeys)-1])
		if err != nil {
			return nil, err
		}
		if quick {
			for k, v := range qk {
				top[k] = v
			}
		} else if _, err := Parse(path, data, reg, true); err != nil {
			// The quick variant is checked too, so that a bad quick section is found
			// before the run that needs it.
			return nil, err
		}
	} else if quick {
		return nil, p.errf(root, "quick", "the file has no quick section, so --quick has nothing to run (add a quick: block, or leave out --quick)")
	}
	f := &File{Path: path, reg: reg}
	for _, k := range []string{"networks", "loads", "algorithms"} {
		if _, ok := top[k]; !ok {
			return nil, p.errf(root, k, "missing (every file names networks, loads and algorithms)")
		}
	}
	if n, ok := top["name"]; ok {
		if f.Name, err = p.str(n, "name"); err != nil {
			return nil, err
		}
	}
	if n, ok := top["description"]; ok {
		if f.Description, err = p.str(n, "description"); err != nil {
			return nil, err
		}
	}
	if n, ok := top["code"]; ok {
		if f.Code, err = p.str(n, "code"); err != nil {
			return nil, err
		}
		if err := checkCodeLabel(f.Code); err != nil {
			return nil, p.errf(n, "code", "%s", stripErr(err))
		}
	}
	if f.networks, err = p.choices(top["networks"], registry.KindNetwork, "networks", "network"); err != nil {
		return nil, err
	}
	if f.loads, err = p.choices(top["loads"], registry.KindLoads, "loads", "loads"); err != nil {
		return nil, err
	}
	if f.algorithms, err = p.choices(top["algorithms"], registry.KindAlgorithm, "algorithms", "algorithm"); err != nil {
		return nil, err
	}
	if n, ok := top["stop"]; ok {
		if f.stop, err = p.stop(n); err != nil {
			return nil, err
		}
	}
	f.seeds = []uint64{1}
	if n, ok := top["seeds"]; ok {
		if f.seeds, err = p.seeds(n); err != nil {
			return nil, err
		}
	}
	if n, ok := top["record"]; ok {
		if err := p.record(n, f); err != nil {
			return nil, err
		}
	}
	if n, ok := top["workload"]; ok {
		items := []*yaml.Node{n}
		if n.Kind == yaml.SequenceNode {
			items = n.Content
		}
		for i, it := range items {
			c, err := p.single(it, registry.KindWorkload, fmt.Sprintf("workload[%d]", i))
			if err != nil {
				return nil, err
			}
			f.workload = append(f.workload, c)
		}
	}
	if n, ok := top["churn"]; ok {
		c, err := p.single(n, registry.KindChurn, "churn")
		if err != nil {
			return nil, err
		}
		f.churn = &c
	}
	if n, ok := top["steady"]; ok {
		if f.steady, err = p.steadyOpts(n); err != nil {
			return nil, err
		}
	}
	if n, ok := top["network_model"]; ok {
		if f.netModels, err = p.networkModels(n); err != nil {
			return nil, err
		}
	}
	if n, ok := top["zip"]; ok {
		if f.zip, err = p.zip(n, f); err != nil {
			return nil, err
		}
		f.zipLine = n.Line
	}
	if _, err := f.Specs(); err != nil {
		return nil, err
	}
	return f, nil
}

// mapping checks that n is a mapping whose keys are all allowed and unique.
func (p *parser) mapping(n *yaml.Node, ctx string, allowed []string) (map[string]*yaml.Node, error) {
	if n.Kind != yaml.MappingNode {
		return nil, p.errf(n, ctx, "want a mapping with keys %s, got %s", strings.Join(allowed, ", "), kindOf(n))
	}
	out := map[string]*yaml.Node{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		key := join(ctx, short(k.Value))
		if k.Kind != yaml.ScalarNode {
			return nil, p.errf(k, ctx, "keys must be plain names")
		}
		if allowed != nil && !contains(allowed, k.Value) {
			return nil, p.errf(k, key, "unknown key (allowed: %s)", strings.Join(allowed, ", "))
		}
		if _, dup := out[k.Value]; dup {
			return nil, p.errf(k, key, "repeated key")
		}
		out[k.Value] = v
	}
	return out, nil
}

// q quotes a value of the file for an error message: at most 48 bytes of it.
func q(s string) string { return errs.Quote([]byte(s)) }

// short returns a key of the file for an error message: itself when it is a short
// printable name, else quoted and cut to 48 bytes.
func short(s string) string {
	if len(s) <= 48 && !strings.ContainsFunc(s, func(r rune) bool { return r < ' ' || r == utf8.RuneError || r == '"' }) {
		return s
	}
	return q(s)
}

func join(a, b string) string {
	if a == "" {
		return b
	}
	return a + "." + b
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

func kindOf(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.AliasNode:
		return "an alias"
	}
	if n.Tag == "!!null" {
		return "nothing"
	}
	return q(n.Value)
}

func (p *parser) str(n *yaml.Node, key string) (string, error) {
	if n.Kind != yaml.ScalarNode || n.Tag != "!!str" {
		return "", p.errf(n, key, "want a string, got %s", kindOf(n))
	}
	return n.Value, nil
}

// scalar decodes a scalar node as int64, float64, bool or string.
func (p *parser) scalar(n *yaml.Node, key string) (any, error) {
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	if n.Kind != yaml.ScalarNode {
		return nil, p.errf(n, key, "want a single value, got %s", kindOf(n))
	}
	switch n.Tag {
	case "!!int":
		var i int64
		if err := n.Decode(&i); err != nil {
			return nil, p.errf(n, key, "integer %s out of range", q(n.Value))
		}
		return i, nil
	case "!!float":
		var f float64
		if err := n.Decode(&f); err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, p.errf(n, key, "bad number %s", q(n.Value))
		}
		return f, nil
	case "!!bool":
		var b bool
		if err := n.Decode(&b); err != nil {
			return nil, p.errf(n, key, "bad boolean %s", q(n.Value))
		}
		return b, nil
	case "!!str":
		return n.Value, nil
	case "!!null":
		return nil, p.errf(n, key, "missing value")
	}
	return nil, p.errf(n, key, "unsupported value %s (tag %s)", q(n.Value), q(n.Tag))
}

// paramField decodes a parameter value: a scalar, or a list (a grid axis). For a
// list-of-ints parameter a flat list of ints is one value and a list of lists an axis.
func (p *parser) paramField(n *yaml.Node, key string, par registry.Param) (field, error) {
	f := field{key: key, line: n.Line}
	one := func(n *yaml.Node) (value, error) {
		var raw any
		if par.Type == registry.ParamInts && n.Kind == yaml.ScalarNode {
			// A scalar would convert to a one-element list: torus sides: 16 would be a ring.
			return value{}, p.errf(n, key, "want a list of integers, such as [%s, %s], got the single value %s", n.Value, n.Value, n.Value)
		}
		if par.Type == registry.ParamInts && n.Kind == yaml.SequenceNode {
			l := make([]any, len(n.Content))
			for i, c := range n.Content {
				v, err := p.scalar(c, key)
				if err != nil {
					return value{}, err
				}
				l[i] = v
			}
			raw = l
		} else {
			v, err := p.scalar(n, key)
			if err != nil {
				return value{}, err
			}
			raw = v
		}
		c, err := par.Convert(raw)
		if err != nil {
			return value{}, p.errw(n, key, err)
		}
		return value{v: c, line: n.Line}, nil
	}
	isAxis := n.Kind == yaml.SequenceNode
	if par.Type == registry.ParamInts && isAxis {
		isAxis = len(n.Content) > 0 && n.Content[0].Kind == yaml.SequenceNode
	}
	if !isAxis {
		v, err := one(n)
		if err != nil {
			return f, err
		}
		f.values = []value{v}
		return f, nil
	}
	if len(n.Content) == 0 {
		return f, p.errf(n, key, "empty list")
	}
	f.list = true
	for _, c := range n.Content {
		v, err := one(c)
		if err != nil {
			return f, err
		}
		f.values = append(f.values, v)
	}
	return f, nil
}

func (p *parser) choices(n *yaml.Node, kind registry.Kind, key, single string) ([]choiceSpec, error) {
	items := []*yaml.Node{n}
	if n.Kind == yaml.SequenceNode {
		items = n.Content
		if len(items) == 0 {
			return nil, p.errf(n, key, "empty list")
		}
	}
	var out []choiceSpec
	for i, it := range items {
		ctx := fmt.Sprintf("%s[%d]", key, i)
		if it.Kind == yaml.ScalarNode {
			// A bare name: the entry with its defaults.
			e, err := p.reg.Lookup(kind, it.Value)
			if err != nil {
				return nil, p.errf(it, ctx, "unknown %s %s (known: %s)", kind, q(it.Value), strings.Join(p.reg.Names(kind), ", "))
			}
			if _, err := e.Resolve(nil); err != nil {
				return nil, p.errw(it, ctx, err)
			}
			out = append(out, choiceSpec{name: it.Value, line: it.Line})
			continue
		}
		if it.Kind != yaml.MappingNode {
			return nil, p.errf(it, ctx, "want a mapping with a name and parameters, got %s", kindOf(it))
		}
		m, err := p.mapping(it, ctx, nil)
		if err != nil {
			return nil, err
		}
		nn, ok := m["name"]
		if !ok {
			return nil, p.errf(it, ctx+".name", "missing (known %ss: %s)", kind, strings.Join(p.reg.Names(kind), ", "))
		}
		name, err := p.str(nn, ctx+".name")
		if err != nil {
			return nil, err
		}
		e, err := p.reg.Lookup(kind, name)
		if err != nil {
			return nil, p.errf(nn, ctx+".name", "unknown %s %s (known: %s)", kind, q(name), strings.Join(p.reg.Names(kind), ", "))
		}
		cs := choiceSpec{name: name, line: it.Line}
		for j := 0; j+1 < len(it.Content); j += 2 {
			k, v := it.Content[j], it.Content[j+1]
			if k.Value == "name" {
				continue
			}
			par, ok := e.Param(k.Value)
			if !ok {
				known := "none"
				if len(e.Params) > 0 {
					known = strings.Join(e.ParamNames(), ", ")
				}
				return nil, p.errf(k, ctx+"."+short(k.Value), "%s %s has no such parameter (parameters: %s)", kind, name, known)
			}
			fld, err := p.paramField(v, ctx+"."+k.Value, par)
			if err != nil {
				return nil, err
			}
			fld.key = single + "." + k.Value
			cs.fields = append(cs.fields, fld)
		}
		for _, par := range e.Params {
			if par.Default == nil && !cs.has(par.Name) {
				return nil, p.errf(it, ctx+"."+par.Name, "missing required parameter of %s %s (%s: %s)", kind, name, par.Type, par.Doc)
			}
		}
		out = append(out, cs)
	}
	return out, nil
}

// single parses one workload or churn entry: a bare name or a mapping with a name and
// single-valued parameters (these are not grid axes), resolved against the registry.
func (p *parser) single(n *yaml.Node, kind registry.Kind, ctx string) (registry.Choice, error) {
	known := strings.Join(p.reg.Names(kind), ", ")
	if n.Kind == yaml.ScalarNode {
		e, err := p.reg.Lookup(kind, n.Value)
		if err != nil {
			return registry.Choice{}, p.errf(n, ctx, "unknown %s %s (known: %s)", kind, q(n.Value), known)
		}
		ps, err := e.Resolve(nil)
		if err != nil {
			return registry.Choice{}, p.errw(n, ctx, err)
		}
		return p.checkDynamic(n, kind, ctx, registry.Choice{Name: n.Value, Params: ps})
	}
	if n.Kind != yaml.MappingNode {
		return registry.Choice{}, p.errf(n, ctx, "want a %s name or a mapping with a name and parameters, got %s", kind, kindOf(n))
	}
	m, err := p.mapping(n, ctx, nil)
	if err != nil {
		return registry.Choice{}, err
	}
	nn, ok := m["name"]
	if !ok {
		return registry.Choice{}, p.errf(n, ctx+".name", "missing (known %ss: %s)", kind, known)
	}
	name, err := p.str(nn, ctx+".name")
	if err != nil {
		return registry.Choice{}, err
	}
	e, err := p.reg.Lookup(kind, name)
	if err != nil {
		return registry.Choice{}, p.errf(nn, ctx+".name", "unknown %s %s (known: %s)", kind, q(name), known)
	}
	raw := map[string]any{}
	for j := 0; j+1 < len(n.Content); j += 2 {
		k, v := n.Content[j], n.Content[j+1]
		if k.Value == "name" {
			continue
		}
		key := ctx + "." + short(k.Value)
		par, ok := e.Param(k.Value)
		if !ok {
			pn := "none"
			if len(e.Params) > 0 {
				pn = strings.Join(e.ParamNames(), ", ")
			}
			return registry.Choice{}, p.errf(k, key, "%s %s has no such parameter (parameters: %s)", kind, name, pn)
		}
		fld, err := p.paramField(v, key, par)
		if err != nil {
			return registry.Choice{}, err
		}
		if fld.list {
			return registry.Choice{}, p.errf(v, key, "want a single value (%s parameters are not grid axes), got %s", kind, kindOf(v))
		}
		raw[k.Value] = fld.values[0].v
	}
	ps, err := e.Resolve(raw)
	if err != nil {
		return registry.Choice{}, p.errw(n, ctx, err)
	}
	return p.checkDynamic(n, kind, ctx, registry.Choice{Name: name, Params: ps})
}

// checkDynamic builds c once so that a bad value (a negative rate, a missing trace file)
// is reported with its line rather than by the first run.
// A constructor that panics is reported as the entry's error (user code never takes
// the parse down).
func (p *parser) checkDynamic(n *yaml.Node, kind registry.Kind, ctx string, c registry.Choice) (_ registry.Choice, err error) {
	s := registry.Spec{Workload: []registry.Choice{c}}
	if kind == registry.KindChurn {
		s = registry.Spec{Churn: &c}
	}
	defer func() {
		if v := recover(); v != nil {
			err = p.errf(n, ctx, "%s %s: constructor panicked: %s", kind, c.Name, errs.Quote([]byte(fmt.Sprint(v))))
		}
	}()
	if _, _, err := p.reg.BuildDynamic(s); err != nil {
		return registry.Choice{}, p.errw(n, ctx, err)
	}
	return c, nil
}

func (p *parser) steadyOpts(n *yaml.Node) (*tokendist.SteadyOptions, error) {
	m, err := p.mapping(n, "steady", steadyKeys)
	if err != nil {
		return nil, err
	}
	st := &tokendist.SteadyOptions{}
	for _, k := range steadyKeys {
		v, ok := m[k]
		if !ok {
			continue
		}
		x, err := p.scalar(v, "steady."+k)
		if err != nil {
			return nil, err
		}
		i, ok := x.(int64)
		if !ok || i < 0 {
			return nil, p.errf(v, "steady."+k, "want a non-negative integer, got %s", kindOf(v))
		}
		if k == "warm_up" {
			st.WarmUp = i
		} else {
			st.Every = i
		}
	}
	return st, nil
}

// maxModels bounds the models one network_model block expands to.
const maxModels = 4096

// networkModels parses the network_model block: a mapping, or a list of mappings, with
// the keys of registry.NetworkModel's JSON form (unknown keys are errors), each checked
// with faults.Model.Validate. In a mapping, a list where a single value is expected (loss:
// [0, 0.1], or max: [1, 4] inside delay) is an axis: the mapping stands for the
// cartesian product of its lists, keys in sorted order, the last varying fastest.
// crashes is a list by nature, not an axis.
func (p *parser) networkModels(n *yaml.Node) ([]*registry.NetworkModel, error) {
	items := []*yaml.Node{n}
	if n.Kind == yaml.SequenceNode {
		items = n.Content
		if len(items) == 0 {
			return nil, p.errf(n, "network_model", "an empty list; give a mapping or a list of mappings")
		}
	}
	var out []*registry.NetworkModel
	for i, it := range items {
		key := "network_model"
		if n.Kind == yaml.SequenceNode {
			key = fmt.Sprintf("network_model[%d]", i)
		}
		if it.Kind != yaml.MappingNode {
			return nil, p.errf(it, key, "want a mapping (keys: delay, loss, duplicate, reorder, reorder_delay, tick_interval, drift, crashes, crash_rate, down_time, patience, workload_every, max_time), got %s", kindOf(it))
		}
		var raw any
		if err := it.Decode(&raw); err != nil {
			return nil, p.errf(it, key, "%s", strings.TrimPrefix(err.Error(), "yaml: "))
		}
		for _, one := range expandModel(raw, "") {
			m, err := p.networkModel(it, key, one)
			if err != nil {
				return nil, err
			}
			if out = append(out, m); len(out) > maxModels {
				return nil, p.errf(n, "network_model", "expands to more than %d models; split the file", maxModels)
			}
		}
	}
	return out, nil
}

// expandModel returns the cartesian product of the list values of a decoded
// network_model mapping (and of its nested mappings), keys in sorted order; "crashes"
// stays a list.
func expandModel(raw any, path string) []any {
	switch v := raw.(type) {
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		outs := []map[string]any{{}}
		for _, k := range keys {
			alts := expandModel(v[k], path+"."+k)
			next := make([]map[string]any, 0, len(outs)*len(alts))
			for _, o := range outs {
				for _, a := range alts {
					c := make(map[string]any, len(o)+1)
					for kk, vv := range o {
						c[kk] = vv
					}
					c[k] = a
					next = append(next, c)
				}
			}
			if outs = next; len(outs) > maxModels {
				break // networkModels reports the size
			}
		}
		res := make([]any, len(outs))
		for i, o := range outs {
			res[i] = o
		}
		return res
	case []any:
		if path == ".crashes" || len(v) == 0 {
			return []any{v}
		}
		var res []any
		for _, x := range v {
			res = append(res, expandModel(x, path)...)
		}
		return res
	}
	return []any{raw}
}

// networkModel decodes one expanded model of the block at n.
func (p *parser) networkModel(n *yaml.Node, key string, raw any) (*registry.NetworkModel, error) {
	b, err := json.Marshal(raw)
	if err != nil {
		return nil, p.errf(n, key, "%v", err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	m := &registry.NetworkModel{}
	if err := dec.Decode(m); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return nil, p.errf(n, key+"."+strings.TrimPrefix(te.Field, "Model."), "want a %s, got a %s", te.Type, te.Value)
		}
		if !errors.Is(err, tokendist.ErrBadParameter) {
			err = fmt.Errorf("%w: %s", tokendist.ErrBadParameter, strings.TrimPrefix(err.Error(), "json: "))
		}
		return nil, p.errw(n, key, err)
	}
	if err := m.Validate(-1); err != nil {
		return nil, p.errw(n, key, err)
	}
	if m.Patience < 0 || m.WorkloadEvery < 0 || m.MaxTime < 0 {
		return nil, p.errf(n, key, "patience, workload_every and max_time must not be negative")
	}
	return m, nil
}

func (c choiceSpec) has(name string) bool {
	for _, f := range c.fields {
		if strings.HasSuffix(f.key, "."+name) {
			return true
		}
	}
	return false
}

func stripErr(err error) string {
	s := err.Error()
	s = strings.TrimPrefix(s, tokendist.ErrBadParameter.Error()+": ")
	return strings.TrimPrefix(s, "tokendist: ")
}

func (p *parser) stop(n *yaml.Node) ([]field, error) {
	m, err := p.mapping(n, "stop", stopKeys)
	if err != nil {
		return nil, err
	}
	var out []field
	for _, k := range stopKeys {
		v, ok := m[k]
		if !ok {
			continue
		}
		typ := registry.ParamInt
		if k == "tau" || k == "no_stability" || k == "stop_when_stable" {
			typ = registry.ParamBool
		}
		f, err := p.paramField(v, "stop."+k, registry.Param{Name: k, Type: typ})
		if err != nil {
			return nil, err
		}
		for _, x := range f.values {
			if i, ok := x.v.(int64); ok && i < 0 {
				return nil, &FileError{File: p.path, Line: x.line, Key: "stop." + k, Msg: fmt.Sprintf("%d is negative", i)}
			}
		}
		out = append(out, f)
	}
	return out, nil
}

func (p *parser) seeds(n *yaml.Node) ([]uint64, error) {
	if n.Kind == yaml.ScalarNode {
		v, err := p.scalar(n, "seeds")
		if err != nil {
			return nil, err
		}
		c, ok := v.(int64)
		if !ok || c < 1 || c > 1<<20 {
			return nil, p.errf(n, "seeds", "want a count 1..%d or a list of seeds, got %s", 1<<20, kindOf(n))
		}
		out := make([]uint64, c)
		for i := range out {
			out[i] = uint64(i + 1)
		}
		return out, nil
	}
	if n.Kind != yaml.SequenceNode || len(n.Content) == 0 {
		return nil, p.errf(n, "seeds", "want a count or a non-empty list of seeds, got %s", kindOf(n))
	}
	seen := map[uint64]bool{}
	var out []uint64
	for _, c := range n.Content {
		v, err := p.scalar(c, "seeds")
		if err != nil {
			return nil, err
		}
		i, ok := v.(int64)
		if !ok || i < 0 {
			return nil, p.errf(c, "seeds", "want a non-negative integer seed, got %s", kindOf(c))
		}
		if seen[uint64(i)] {
			return nil, p.errf(c, "seeds", "seed %d repeated", i)
		}
		seen[uint64(i)] = true
		out = append(out, uint64(i))
	}
	return out, nil
}

func (p *parser) record(n *yaml.Node, f *File) error {
	m, err := p.mapping(n, "record", recordKeys)
	if err != nil {
		return err
	}
	if v, ok := m["metrics"]; ok {
		items := []*yaml.Node{v}
		if v.Kind == yaml.SequenceNode {
			items = v.Content
		}
		for _, it := range items {
			s, err := p.str(it, "record.metrics")
			if err != nil {
				return err
			}
			if _, err := p.reg.Lookup(registry.KindMetric, s); err != nil {
				return p.errf(it, "record.metrics", "unknown metric %s (known: %s)", q(s), strings.Join(p.reg.Names(registry.KindMetric), ", "))
			}
			f.Metrics = append(f.Metrics, s)
		}
	}
	if v, ok := m["sample_every"]; ok {
		x, err := p.scalar(v, "record.sample_every")
		if err != nil {
			return err
		}
		i, ok := x.(int64)
		if !ok || i < 0 {
			return p.errf(v, "record.sample_every", "want a non-negative integer, got %s", kindOf(v))
		}
		f.SampleEvery = i
	}
	if v, ok := m["trace"]; ok {
		x, err := p.scalar(v, "record.trace")
		if err != nil {
			return err
		}
		b, ok := x.(bool)
		if !ok {
			return p.errf(v, "record.trace", "want true or false, got %s", kindOf(v))
		}
		f.Trace = b
	}
	return nil
}

func (p *parser) zip(n *yaml.Node, f *File) ([][]string, error) {
	if n.Kind != yaml.SequenceNode {
		return nil, p.errf(n, "zip", "want a list of groups of fields, e.g. [[network.n, loads.tokens]], got %s", kindOf(n))
	}
	known := f.fieldKeys()
	used := map[string]bool{}
	var out [][]string
	for _, g := range n.Content {
		if g.Kind != yaml.SequenceNode || len(g.Content) < 2 {
			return nil, p.errf(g, "zip", "each group is a list of at least two fields, got %s", kindOf(g))
		}
		var grp []string
		for _, c := range g.Content {
			s, err := p.str(c, "zip")
			if err != nil {
				return nil, err
			}
			if !known[s] {
				ks := make([]string, 0, len(known))
				for k := range known {
					ks = append(ks, k)
				}
				sort.Strings(ks)
				return nil, p.errf(c, "zip", "%s is not a list-valued field of this file (list-valued: %s)", q(s), strings.Join(ks, ", "))
			}
			if used[s] {
				return nil, p.errf(c, "zip", "%s is in two groups", q(s))
			}
			used[s] = true
			grp = append(grp, s)
		}
		out = append(out, grp)
	}
	return out, nil
}

// fieldKeys returns the keys of the file's list-valued fields.
func (f *File) fieldKeys() map[string]bool {
	out := map[string]bool{}
	for _, l := range [][]choiceSpec{f.networks, f.loads, f.algorithms} {
		for _, c := range l {
			for _, fl := range c.fields {
				if fl.list {
					out[fl.key] = true
				}
			}
		}
	}
	for _, fl := range f.stop {
		if fl.list {
			out[fl.key] = true
		}
	}
	return out
}

// MaxRuns bounds the runs of one file's grid (each run takes about a kilobyte before it
// starts).
const MaxRuns = 1 << 22

// Run is one run of a file's grid: its canonical spec and its key.
type Run struct {
	// Index is the run's position in the grid (the order of Specs).
	Index int
	Spec  registry.Spec
	// Key identifies the run in a results database: a hash of the canonical spec, the
	// contents of any network file and the code identity with the label Code
	// (RunKeyCode).
	Key string
	// Code is the user's label of the code (File.Code) that Key includes.
	Code string
	// Labels name the run's network, loads and algorithm with their parameters.
	Network, Loads, Algorithm string
	// Trace asks for the run's samples to be stored.
	Trace bool
	line  int
}

// Specs expands the grid: the networks × loads × algorithms entries, and within each
// combination the cartesian product of the list-valued fields (fields in one zip group
// advance together), × seeds. The order is deterministic. The grid's size is computed
// before anything is expanded: a grid of more than MaxRuns runs, or one whose runs would
// not fit in the memory budget (about runBytes each), is refused at once. The expansion
// is computed once per File and Code (Parse checks it); later calls return a copy.
func (f *File) Specs() ([]Run, error) {
	if f.expanded != nil && f.expandedFor == f.Code {
		return append([]Run(nil), f.expanded...), nil
	}
	runs, err := f.specs()
	if err != nil {
		return nil, err
	}
	f.expanded, f.expandedFor = runs, f.Code
	return append([]Run(nil), runs...), nil
}

// runBytes is about the memory one expanded run takes (its Run and share of the spec).
const runBytes = 512

// gridSize returns the number of runs of the grid before duplicates are removed (at most
// MaxRuns+1: more is reported as MaxRuns+1), or the error of a bad zip group.
func (f *File) gridSize() (int64, error) {
	var total int64
	for _, nc := range f.networks {
		for _, lc := range f.loads {
			for _, ac := range f.algorithms {
				axes, err := f.axes(f.comboFields(nc, lc, ac))
				if err != nil {
					return 0, err
				}
				size := int64(len(f.seeds)) * int64(max(1, len(f.netModels)))
				for _, ax := range axes {
					size *= int64(len(ax[0].values))
					if size > MaxRuns {
						return MaxRuns + 1, nil
					}
				}
				if total += size; total > MaxRuns {
					return MaxRuns + 1, nil
				}
			}
		}
	}
	return total, nil
}

func (f *File) comboFields(nc, lc, ac choiceSpec) []field {
	var fields []field
	fields = append(fields, nc.fields...)
	fields = append(fields, lc.fields...)
	fields = append(fields, ac.fields...)
	return append(fields, f.stop...)
}

func (f *File) specs() ([]Run, error) {
	size, err := f.gridSize()
	if err != nil {
		return nil, err
	}
	line := 0
	if len(f.networks) > 0 {
		line = f.networks[0].line
	}
	if size > MaxRuns {
		return nil, &FileError{File: f.Path, Line: line, Msg: fmt.Sprintf("the grid has more than %d runs; split the file", MaxRuns)}
	}
	if err := errs.CheckAlloc("the grid's runs", size, runBytes); err != nil {
		return nil, &FileError{File: f.Path, Line: line, Msg: fmt.Sprintf("the grid has %d runs, too many for the memory budget: %s", size, stripErr(err)), Err: err}
	}
	out := make([]Run, 0, size)
	seen := make(map[string]int, size)
	keys, err := newKeyer(f.Code)
	if err != nil {
		return nil, &FileError{File: f.Path, Line: line, Key: "code", Msg: stripErr(err), Err: err}
	}
	for _, nc := range f.networks {
		for _, lc := range f.loads {
			for _, ac := range f.algorithms {
				fields := f.comboFields(nc, lc, ac)
				axes, err := f.axes(fields)
				if err != nil {
					return nil, err
				}
				idx := make([]int, len(axes))
				for {
					if err := f.expandModels(nc, lc, ac, fields, axes, idx, keys, seen, &out); err != nil {
						return nil, err
					}
					// Advance the odometer.
					a := len(axes) - 1
					for ; a >= 0; a-- {
						idx[a]++
						if idx[a] < len(axes[a][0].values) {
							break
						}
						idx[a] = 0
					}
					if a < 0 {
						break
					}
				}
			}
		}
	}
	return out, nil
}

// expandModels appends the runs of one combination of values (idx on axes): one per
// network model (or one without) and seed, skipping runs already in the grid.
func (f *File) expandModels(nc, lc, ac choiceSpec, fields []field, axes [][]field, idx []int, keys *keyer, seen map[string]int, out *[]Run) error {
	models := f.netModels
	if len(models) == 0 {
		models = []*registry.NetworkModel{nil}
	}
	for _, nm := range models {
		vals := map[string]value{}
		for _, fl := range fields {
			if !fl.list {
				vals[fl.key] = fl.values[0]
			}
		}
		for a, ax := range axes {
			for _, fl := range ax {
				vals[fl.key] = fl.values[idx[a]]
			}
		}
		proto, err := f.build(nc, lc, ac, nm, vals)
		if err != nil {
			return err
		}
		for _, seed := range f.seeds {
			r := proto
			r.Spec.Seed = seed
			r.Code = f.Code
			if r.Key, err = keys.key(r.Spec); err != nil {
				return &FileError{File: f.Path, Line: nc.line, Msg: stripErr(err), Err: err}
			}
			if _, dup := seen[r.Key]; dup {
				continue // the same run twice in the grid: run it once
			}
			r.Index = len(*out)
			seen[r.Key] = r.Index
			*out = append(*out, r)
		}
	}
	return nil
}

// axes groups the list-valued fields into axes: one per zip group present, one per other
// list field.
func (f *File) axes(fields []field) ([][]field, error) {
	var axes [][]field
	inZip := map[string]int{}
	for g, grp := range f.zip {
		for _, k := range grp {
			inZip[k] = g
		}
	}
	zipAxis := map[int]int{}
	for _, fl := range fields {
		if !fl.list {
			continue
		}
		g, ok := inZip[fl.key]
		if !ok {
			axes = append(axes, []field{fl})
			continue
		}
		if a, ok := zipAxis[g]; ok {
			if len(axes[a][0].values) != len(fl.values) {
				return nil, &FileError{File: f.Path, Line: fl.line, Key: fl.key,
					Msg: fmt.Sprintf("zipped with %s, so it needs %d values, has %d", axes[a][0].key, len(axes[a][0].values), len(fl.values))}
			}
			axes[a] = append(axes[a], fl)
			continue
		}
		zipAxis[g] = len(axes)
		axes = append(axes, []field{fl})
	}
	return axes, nil
}

// build returns the run of one combination of values with seed 0 and no key (the
// canonical spec does not depend on the seed).
func (f *File) build(nc, lc, ac choiceSpec, nm *registry.NetworkModel, vals map[string]value) (Run, error) {
	params := func(c choiceSpec, prefix string) registry.Params {
		p := registry.Params{}
		for _, fl := range c.fields {
			p[strings.TrimPrefix(fl.key, prefix+".")] = vals[fl.key].v
		}
		return p
	}
	s := registry.Spec{
		Network:     registry.Choice{Name: nc.name, Params: params(nc, "network")},
		Loads:       registry.Choice{Name: lc.name, Params: params(lc, "loads")},
		Algorithm:   registry.Choice{Name: ac.name, Params: params(ac, "algorithm")},
		SampleEvery: f.SampleEvery,
		Metrics:     f.Metrics,
		Workload:    f.workload,
		Churn:       f.churn,
		Steady:      f.steady,
	}
	if nm != nil {
		m := *nm
		s.NetworkModel = &m
	}
	for k, v := range vals {
		switch k {
		case "stop.max_steps":
			s.Stop.MaxSteps = v.v.(int64)
		case "stop.target":
			s.Stop.UseTarget, s.Stop.TargetDiscrepancy = true, v.v.(int64)
		case "stop.tau":
			s.Stop.Tau = v.v.(bool)
		case "stop.no_stability":
			s.Stop.NoStability = v.v.(bool)
		case "stop.stop_when_stable":
			s.Stop.StopWhenStable = v.v.(bool)
		}
	}
	cs, err := f.reg.Canonical(s)
	if err != nil {
		line := nc.line
		return Run{}, &FileError{File: f.Path, Line: line, Msg: stripErr(err), Err: err}
	}
	return Run{Spec: cs, Trace: f.Trace, line: nc.line,
		Network: f.label(registry.KindNetwork, cs.Network), Loads: f.label(registry.KindLoads, cs.Loads),
		Algorithm: f.label(registry.KindAlgorithm, cs.Algorithm)}, nil
}

// label is Label of c without the parameters at their defaults.
func (f *File) label(kind registry.Kind, c registry.Choice) string {
	e, err := f.reg.Lookup(kind, c.Name)
	if err != nil {
		return Label(c)
	}
	def := map[string]any{}
	for _, par := range e.Params {
		if par.Default != nil {
			if v, err := par.Convert(par.Default); err == nil {
				def[par.Name] = v
			}
		}
	}
	p := registry.Params{}
	for k, v := range c.Params {
		if d, ok := def[k]; !ok || fmtValue(d) != fmtValue(v) {
			p[k] = v
		}
	}
	return Label(registry.Choice{Name: c.Name, Params: p})
}

// Label writes a choice as name(k=v, ...) with the parameters in sorted order, in the
// experiment file's words: a list as [3, 3].
func Label(c registry.Choice) string {
	if len(c.Params) == 0 {
		return c.Name
	}
	keys := make([]string, 0, len(c.Params))
	for k := range c.Params {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString(c.Name)
	b.WriteByte('(')
	for i, k := range keys {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(fmtValue(c.Params[k]))
	}
	b.WriteByte(')')
	return b.String()
}

func fmtValue(v any) string {
	switch x := v.(type) {
	case []int64:
		s := make([]string, len(x))
		for i, y := range x {
			s[i] = strconv.FormatInt(y, 10)
		}
		return "[" + strings.Join(s, ", ") + "]" // as the file writes it, not Go's [3 3]
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	}
	return fmt.Sprint(v)
}
