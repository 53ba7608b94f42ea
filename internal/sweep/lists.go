// Package sweep is gab sweep's experiment logic: the lists of the command
// line, the order of the runs, the statistics across repetitions and the
// sweep's outputs (table, CSV, JSON). It never touches the network: the
// caller runs each point and hands back what it measured.
package sweep

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"gab/internal/bytesize"
	"gab/report"
)

// The sweep's limits, stated in gab sweep --help: what a command line may ask
// for is bounded before anything is allocated for it.
const (
	// MaxConcurrency is ab's limit on -c.
	MaxConcurrency = report.MaxConcurrency
	// MaxListLength is the most values a list holds (-c, --sizes,
	// --post-sizes), and the most targets.
	MaxListLength = 100
	// MaxSize is the largest --sizes value (1024g): a size only replaces
	// {size} in the URLs, and the responses are read as they come.
	MaxSize = 1 << 40
	// MaxPostSize is the largest --post-sizes value (64m): each run's
	// request, body included, is built in memory before the run (one at a
	// time, shared by all its connections).
	MaxPostSize = 64 << 20
	// MaxRepeat is the largest --repeat.
	MaxRepeat = 1000
	// MaxRuns is the most runs of one sweep (targets × sizes × concurrencies ×
	// --repeat): every run's JSON document is kept until the sweep's outputs
	// are written.
	MaxRuns = 10000
	// MaxPause is the longest --pause.
	MaxPause = time.Hour
)

// splitList splits a comma-separated list of at most MaxListLength values;
// option names the list in the error.
func splitList(option, s string) ([]string, error) {
	if n := strings.Count(s, ",") + 1; n > MaxListLength {
		return nil, fmt.Errorf("%s: %d values, at most %d", option, n, MaxListLength)
	}
	return strings.Split(s, ","), nil
}

// ParseConcurrency reads -c's list ("1,10,100"): positive integers up to
// MaxConcurrency, no duplicates, at most MaxListLength of them.
func ParseConcurrency(s string) ([]int, error) {
	fields, err := splitList("-c", s)
	if err != nil {
		return nil, err
	}
	var out []int
	seen := map[int]bool{}
	for _, f := range fields {
		f = strings.TrimSpace(f)
		v, err := strconv.Atoi(f)
		if err != nil {
			return nil, fmt.Errorf("-c: %q is not a number (in %q)", f, s)
		}
		if v < 1 || v > MaxConcurrency {
			return nil, fmt.Errorf("-c: %d is out of range 1..%d (in %q)", v, MaxConcurrency, s)
		}
		if seen[v] {
			return nil, fmt.Errorf("-c: %d appears twice (in %q)", v, s)
		}
		seen[v] = true
		out = append(out, v)
	}
	return out, nil
}

// Size is one element of --sizes or --post-sizes: the text as typed (what
// replaces {size} in the targets) and the number of bytes it stands for.
type Size struct {
	Text  string
	Bytes int64
}

// ParseSizes reads --sizes or --post-sizes (option names the option in
// errors): a comma-separated list of sizes, no duplicates, at most
// MaxListLength of them, each at most MaxSize (MaxPostSize for --post-sizes).
func ParseSizes(option, s string) ([]Size, error) {
	limit, limitText := int64(MaxSize), "1024g (1 TiB)"
	if option == "--post-sizes" {
		limit, limitText = MaxPostSize, "64m (64 MiB: each body is built in memory)"
	}
	fields, err := splitList(option, s)
	if err != nil {
		return nil, err
	}
	var out []Size
	seen := map[string]bool{}
	for _, f := range fields {
		f = strings.TrimSpace(f)
		n, err := bytesize.Parse(f)
		if err != nil {
			return nil, fmt.Errorf("%s: %v (in %q)", option, err, s)
		}
		if n > limit {
			return nil, fmt.Errorf("%s: %s is above the limit of %s (in %q)", option, f, limitText, s)
		}
		if seen[f] {
			return nil, fmt.Errorf("%s: %q appears twice (in %q)", option, f, s)
		}
		seen[f] = true
		out = append(out, Size{Text: f, Bytes: n})
	}
	return out, nil
}

// Placeholder is what each size replaces in the targets.
const Placeholder = "{size}"

// Target is a server to measure: its label (the name in every table) and its
// URL, which may hold Placeholder.
type Target struct {
	Label string
	URL   string
}

// URLFor is the target's URL for one size (the URL itself without one).
func (t Target) URLFor(size *Size) string {
	if size == nil {
		return t.URL
	}
	return strings.ReplaceAll(t.URL, Placeholder, size.Text)
}

// ParseTargets reads the TARGET words: URL or LABEL=URL. A label is a word of
// letters, digits, '.', '_' and '-' (so "http://h/?a=b" is a URL, not a
// label). Unlabelled targets are named by host:port when that is unique among
// the targets, else by their URL. Labels must be unique. sizeOption is the
// size list given ("--sizes", "--post-sizes" or ""): with --sizes every URL
// must hold {size}, with --post-sizes it may, without a list none may.
func ParseTargets(args []string, sizeOption string) ([]Target, error) {
	if len(args) == 0 {
		return nil, fmt.Errorf("no TARGET (a URL or LABEL=URL; or --demo)")
	}
	if len(args) > MaxListLength {
		return nil, fmt.Errorf("%d targets, at most %d", len(args), MaxListLength)
	}
	out := make([]Target, len(args))
	labelled := make([]bool, len(args))
	for i, a := range args {
		t := Target{URL: a}
		if k := strings.IndexByte(a, '='); k > 0 && IsLabel(a[:k]) {
			t.Label, t.URL = a[:k], a[k+1:]
			labelled[i] = true
		}
		if t.URL == "" {
			return nil, fmt.Errorf("target %q has no URL", a)
		}
		has := strings.Contains(t.URL, Placeholder)
		switch {
		case has && sizeOption == "":
			return nil, fmt.Errorf("target %q holds %s but neither --sizes nor --post-sizes was given", a, Placeholder)
		case !has && sizeOption == "--sizes":
			return nil, fmt.Errorf("--sizes is given but target %q holds no %s", a, Placeholder)
		}
		out[i] = t
	}
	hosts := map[string]int{}
	for i := range out {
		if !labelled[i] {
			hosts[hostPort(out[i].URL)]++
		}
	}
	seen := map[string]bool{}
	for i := range out {
		if !labelled[i] {
			out[i].Label = out[i].URL
			if hp := hostPort(out[i].URL); hp != "" && hosts[hp] == 1 {
				out[i].Label = hp
			}
		}
		if seen[out[i].Label] {
			return nil, fmt.Errorf("two targets are named %q: give them labels (LABEL=URL)", out[i].Label)
		}
		seen[out[i].Label] = true
	}
	return out, nil
}

// IsLabel reports whether s is a label: a non-empty word of letters, digits,
// '.', '_' and '-'.
func IsLabel(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return s != ""
}

// hostPort is the URL's authority (host:port as typed), "" if it has none.
func hostPort(u string) string {
	_, rest, ok := strings.Cut(u, "://")
	if !ok {
		return ""
	}
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		rest = rest[:i]
	}
	if i := strings.LastIndexByte(rest, '@'); i >= 0 {
		rest = rest[i+1:]
	}
	return rest
}

// Param is --param NAME=V1,V2,...: a parameter the sweep varies by running
// --before's command, with {NAME} replaced by the value, before each run.
type Param struct {
	Name   string
	Values []string
}

// Placeholder is what the value replaces in --before's command.
func (p *Param) Placeholder() string { return "{" + p.Name + "}" }

// maxParamValue is the longest --param value, in bytes.
const maxParamValue = 256

// ParseParam reads --param NAME=V1,V2,...: NAME a word of letters, digits and
// '_' (not "size"), the values at most MaxListLength distinct words of
// letters, digits and ". _ - : / + @ %" (so that a value is one shell word
// as it stands and prints as it is), each at most 256 bytes.
func ParseParam(s string) (*Param, error) {
	name, list, ok := strings.Cut(s, "=")
	if !ok || name == "" || strings.TrimLeft(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") != "" {
		return nil, fmt.Errorf("--param: %q is not NAME=V1,V2,... (NAME letters, digits and _)", s)
	}
	if name == "size" {
		return nil, fmt.Errorf("--param: {size} is --sizes' placeholder; name the parameter otherwise")
	}
	fields, err := splitList("--param", list)
	if err != nil {
		return nil, err
	}
	p := &Param{Name: name}
	seen := map[string]bool{}
	for _, v := range fields {
		if v == "" || len(v) > maxParamValue || strings.TrimLeft(v, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-:/+@%") != "" {
			return nil, fmt.Errorf("--param %s: %q is not a value (1 to %d letters, digits and . _ - : / + @ %%)", name, v, maxParamValue)
		}
		if seen[v] {
			return nil, fmt.Errorf("--param %s: %q appears twice", name, v)
		}
		seen[v] = true
		p.Values = append(p.Values, v)
	}
	return p, nil
}
