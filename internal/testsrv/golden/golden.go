// Package golden loads the captured ab outputs (testdata/golden), rewrites
// their command lines for the test servers, and masks the numbers that vary
// from run to run so that two outputs can be compared byte for byte
// everywhere else. The golden and differential suites at the top of the
// module are built on it.
package golden

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// Case is one captured ab run: <name>.txt holds "# cmd:", "# exit:" and the
// stdout; <name>.stderr the stderr, when there was any.
type Case struct {
	Name   string
	Cmd    string   // the command line as recorded (starts with "ab ")
	Args   []string // Cmd split into words, Args[0] == "ab"
	Exit   int
	Stdout string
	Stderr string
	// Files maps -g/-e output names (as in the command line) to their golden content.
	Files map[string]string
}

// Load reads the case name from dir.
func Load(dir, name string) (*Case, error) {
	raw, err := os.ReadFile(filepath.Join(dir, name+".txt"))
	if err != nil {
		return nil, err
	}
	cmdLine, rest, ok1 := strings.Cut(string(raw), "\n")
	exitLine, stdout, ok2 := strings.Cut(rest, "\n")
	if !ok1 || !ok2 || !strings.HasPrefix(cmdLine, "# cmd: ") || !strings.HasPrefix(exitLine, "# exit: ") {
		return nil, fmt.Errorf("%s.txt: no # cmd / # exit header", name)
	}
	c := &Case{Name: name, Cmd: strings.TrimPrefix(cmdLine, "# cmd: "), Stdout: stdout, Files: map[string]string{}}
	if c.Exit, err = strconv.Atoi(strings.TrimPrefix(exitLine, "# exit: ")); err != nil {
		return nil, fmt.Errorf("%s.txt: exit: %v", name, err)
	}
	cmd := c.Cmd
	if i := strings.Index(cmd, "   ("); i >= 0 { // sigint: "...   (SIGINT sent after 1.0 s)"
		cmd = cmd[:i]
	}
	if c.Args, err = SplitCommand(cmd); err != nil {
		return nil, fmt.Errorf("%s.txt: %v", name, err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, name+".stderr")); err == nil {
		c.Stderr = string(b)
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	for i, a := range c.Args {
		if (a == "-g" || a == "-e") && i+1 < len(c.Args) {
			f := c.Args[i+1]
			b, err := os.ReadFile(filepath.Join(dir, f))
			if err != nil {
				return nil, fmt.Errorf("%s: %v", name, err)
			}
			c.Files[f] = string(b)
		}
	}
	return c, nil
}

// Names lists the cases in dir (every <name>.txt), sorted.
func Names(dir string) ([]string, error) {
	m, err := filepath.Glob(filepath.Join(dir, "*.txt"))
	if err != nil {
		return nil, err
	}
	var names []string
	for _, f := range m {
		names = append(names, strings.TrimSuffix(filepath.Base(f), ".txt"))
	}
	sort.Strings(names)
	return names, nil
}

// SplitCommand splits a command line quoted the way harness/run_golden.sh
// quotes it: words separated by spaces, single quotes around words with
// special characters.
func SplitCommand(s string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord, inQuote := false, false
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch {
		case inQuote && ch == '\'':
			inQuote = false
		case inQuote:
			cur.WriteByte(ch)
		case ch == '\'':
			inQuote, inWord = true, true
		case ch == ' ':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteByte(ch)
			inWord = true
		}
	}
	if inQuote {
		return nil, fmt.Errorf("unterminated quote in %q", s)
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}

// Ports are the test servers standing in for the goldens' fixed ports.
type Ports struct {
	Nginx   int // 18080
	Py      int // 18081
	TLS     int // 18082
	Refused int // 18089
}

// The goldens' ports.
const (
	GoldenNginx   = 18080
	GoldenPy      = 18081
	GoldenTLS     = 18082
	GoldenRefused = 18089
)

// Rewrite replaces the goldens' port numbers in output text with p's, where
// a port is printed: after ':' (URLs, Host headers), in "Server Port:" and
// in an HTML cell. Test ports are ephemeral (5 digits on Linux), so lengths,
// and with them byte totals that include the Host header, stay the same.
func (p Ports) Rewrite(s string) string {
	return rewritePorts(s, map[int]int{GoldenNginx: p.Nginx, GoldenPy: p.Py, GoldenTLS: p.TLS, GoldenRefused: p.Refused})
}

// Unrewrite maps p's ports in output text back to the goldens' ports (for
// storing gab goldens), in the same places as Rewrite.
func (p Ports) Unrewrite(s string) string {
	return rewritePorts(s, map[int]int{p.Nginx: GoldenNginx, p.Py: GoldenPy, p.TLS: GoldenTLS, p.Refused: GoldenRefused})
}

var portContext = regexp.MustCompile(`(:|Server Port: +|>)(\d+)(<|\b)`)

func rewritePorts(s string, m map[int]int) string {
	return portContext.ReplaceAllStringFunc(s, func(match string) string {
		sub := portContext.FindStringSubmatch(match)
		n, err := strconv.Atoi(sub[2])
		if sub[1] == ">" && sub[3] != "<" {
			return match
		}
		if to, ok := m[n]; err == nil && ok && to != 0 {
			return sub[1] + strconv.Itoa(to) + sub[3]
		}
		return match
	})
}

func (p Ports) argRewrite(s string) string {
	r := strings.NewReplacer(
		strconv.Itoa(GoldenNginx), strconv.Itoa(p.Nginx),
		strconv.Itoa(GoldenPy), strconv.Itoa(p.Py),
		strconv.Itoa(GoldenTLS), strconv.Itoa(p.TLS),
		strconv.Itoa(GoldenRefused), strconv.Itoa(p.Refused),
	)
	return r.Replace(s)
}

// Argv rewrites c.Args for a run: ports replaced, the POST file and the
// -g/-e output names placed in dataDir and outDir. argv[0] stays "ab".
func (c *Case) Argv(p Ports, dataDir, outDir string) []string {
	argv := make([]string, len(c.Args))
	for i, a := range c.Args {
		switch {
		case a == "post.data":
			a = filepath.Join(dataDir, "post.data")
		case i > 0 && (c.Args[i-1] == "-g" || c.Args[i-1] == "-e"):
			a = filepath.Join(outDir, a)
		default:
			a = p.argRewrite(a)
		}
		argv[i] = a
	}
	return argv
}

// Capture is one block of request-capture.raw: a command line and the exact
// request bytes the server received for it.
type Capture struct {
	Cmd     string
	Args    []string
	Request []byte
}

// LoadCaptures parses request-capture.raw.
func LoadCaptures(path string) ([]Capture, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []Capture
	for len(raw) > 0 {
		if !bytes.HasPrefix(raw, []byte("# cmd: ")) {
			return nil, fmt.Errorf("%s: expected # cmd: at %q", path, raw[:min(len(raw), 40)])
		}
		line, rest, _ := bytes.Cut(raw, []byte("\n"))
		sep := []byte("\n=====\n")
		j := bytes.Index(rest, sep)
		if j < 0 {
			return nil, fmt.Errorf("%s: missing separator", path)
		}
		cmd := strings.TrimPrefix(string(line), "# cmd: ")
		args, err := SplitCommand(cmd)
		if err != nil {
			return nil, err
		}
		out = append(out, Capture{Cmd: cmd, Args: args, Request: append([]byte(nil), rest[:j]...)})
		raw = rest[j+len(sep):]
	}
	return out, nil
}

// Diff describes the first difference between want and got, line by line,
// with a little context; "" when they are equal.
func Diff(want, got string) string {
	if want == got {
		return ""
	}
	wl := strings.SplitAfter(want, "\n")
	gl := strings.SplitAfter(got, "\n")
	i := 0
	for i < len(wl) && i < len(gl) && wl[i] == gl[i] {
		i++
	}
	var b strings.Builder
	from := max(0, i-3)
	fmt.Fprintf(&b, "first difference at line %d:\n", i+1)
	for k := from; k < i; k++ {
		fmt.Fprintf(&b, "    %q\n", wl[k])
	}
	for k := i; k < min(len(wl), i+3); k++ {
		fmt.Fprintf(&b, "  - %q\n", wl[k])
	}
	for k := i; k < min(len(gl), i+3); k++ {
		fmt.Fprintf(&b, "  + %q\n", gl[k])
	}
	return b.String()
}
