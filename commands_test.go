package main

import (
	"regexp"
	"strings"
	"testing"
)

// Every subcommand in the table prints its help on stdout and exits 0, for
// --help and -h alike, and is reached through run.
func TestEverySubcommandHelp(t *testing.T) {
	for _, c := range commands() {
		for _, flag := range []string{"--help", "-h"} {
			status, stdout, stderr := runArgs(t, t.Context(), "gab", c.name, flag)
			if status != exitOK || stderr != "" || !strings.HasPrefix(stdout, "Usage: gab") || !strings.Contains(stdout, " "+c.name) {
				t.Errorf("gab %s %s: status %d, stdout %q, stderr %q; want its usage on stdout, exit 0", c.name, flag, status, stdout, stderr)
			}
		}
	}
}

// gab --help lists every subcommand after ab's usage and gab's options; -h,
// ab's option, prints ab's usage and gab's options alone, on stderr.
func TestLongHelpListsSubcommands(t *testing.T) {
	status, stdout, stderr := runArgs(t, t.Context(), "gab", "--help")
	if status != exitOK || stderr != "" {
		t.Fatalf("--help: status %d, stderr %q", status, stderr)
	}
	_, _, dashH := runArgs(t, t.Context(), "gab", "-h")
	list, ok := strings.CutPrefix(stdout, dashH)
	if !ok || !strings.HasPrefix(list, "\ngab's subcommands (gab COMMAND --help for each):\n") {
		t.Fatalf("--help is not -h's text followed by the subcommands:\n%s", stdout)
	}
	for _, c := range commands() {
		if !strings.Contains(list, "    "+c.name+" ") || !strings.Contains(list, c.summary+"\n") {
			t.Errorf("--help does not list %s:\n%s", c.name, list)
		}
	}
	if strings.Contains(dashH, "subcommands") {
		t.Errorf("-h lists the subcommands:\n%s", dashH)
	}
}

// A subcommand's bad option is one line that names it, exit 22, nothing on
// stdout (no usage text after it).
func TestSubcommandOptionErrorIsOneLine(t *testing.T) {
	for _, c := range []struct {
		args   []string
		option string
	}{
		{[]string{"merge", "--bogus"}, "--bogus"},
		{[]string{"merge", "-x"}, "-x"},
		{[]string{"merge", "--force=maybe"}, "--force"},
		{[]string{"merge", "--format", "xml", "a.json"}, "--format"},
		{[]string{"merge", "--format"}, "--format"},
		{[]string{"compare", "--format=csv", "a.json", "b.json"}, "--format"},
		{[]string{"compare", "--help=maybe"}, "--help"},
		{[]string{"compare", "-q", "a.json", "b.json"}, "-q"},
		{[]string{"plot", "-o"}, "-o"},
		{[]string{"plot", "-o", "", "a.json"}, "-o"},
		{[]string{"plot", "--output=", "a.json"}, "-o"},
		{[]string{"plot", "--colour", "a.json"}, "--colour"},
		{[]string{"plot", "-h=maybe"}, "--help"},
	} {
		status, stdout, stderr := runArgs(t, t.Context(), append([]string{"gab"}, c.args...)...)
		if status != exitUsage || stdout != "" || !oneLineNaming(stderr, "gab "+c.args[0]+": ", c.option) {
			t.Errorf("gab %q: status %d, stdout %q, stderr %q; want one line naming %s, exit 22", c.args, status, stdout, stderr, c.option)
		}
	}
}

// No subcommand's help shows an option's default as its metavar: the
// metavar names the kind of value (ORDER, not interleaved), the default is
// in the text.
func TestHelpMetavarsAreNotDefaults(t *testing.T) {
	opt := regexp.MustCompile(`^\s+(?:-\w, )?--([\w-]+) (\S+)\s{2,}.*\(default "?([^")]*)"?\)$`)
	for _, c := range commands() {
		_, stdout, _ := runArgs(t, t.Context(), "gab", c.name, "--help")
		for line := range strings.Lines(stdout) {
			m := opt.FindStringSubmatch(strings.TrimRight(line, "\n"))
			if m != nil && m[2] == m[3] {
				t.Errorf("gab %s --help: --%s's metavar is its default %q:\n%s", c.name, m[1], m[3], line)
			}
		}
	}
}
