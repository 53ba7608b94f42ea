package main

import (
	"fmt"
	"strings"

	"github.com/spf13/pflag"
)

// splitSubArgs splits the command line of a subcommand that runs ab's
// command line many times (gab sweep, gab capacity): ab's options for every
// run (ab's grammar: clusters, attached or separate values; short ones only
// before the first target, long ones anywhere), the subcommand's own long
// options (parsed into rules.own) and the targets.
func splitSubArgs(args []string, rules subArgRules) (ab, targets []string, err error) {
	var lo longOptions
	abfs := newLongFlagSet(&lo)
	var own []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			targets = append(targets, args[i+1:]...)
			i = len(args)
		case strings.HasPrefix(a, "--"):
			name, _, hasValue := strings.Cut(a[2:], "=")
			dst := &own
			f := rules.own.Lookup(name)
			if f == nil {
				if err := rules.long(name); err != nil {
					return nil, nil, err
				}
				if f = abfs.Lookup(name); f == nil {
					return nil, nil, fmt.Errorf("unknown option --%s", name)
				}
				dst = &ab
			}
			*dst = append(*dst, a)
			if !hasValue && f.NoOptDefVal == "" && i+1 < len(args) {
				i++
				*dst = append(*dst, args[i])
			}
		case len(a) > 1 && a[0] == '-' && len(targets) == 0:
			kept := "-"
			for j := 1; j < len(a); j++ {
				c := a[j]
				if !takesArgument(c) {
					handled, err := rules.flag(c)
					if err != nil {
						return nil, nil, err
					}
					if !handled {
						kept += string(c)
					}
					continue
				}
				value := a[j+1:]
				if value == "" {
					if i+1 >= len(args) {
						return nil, nil, fmt.Errorf("option -%c needs a value", c)
					}
					i++
					value = args[i]
				}
				pass, err := rules.value(c, value)
				if err != nil {
					return nil, nil, err
				}
				if pass {
					ab = append(ab, kept+string(c), value)
					kept = "-"
				}
				break
			}
			if kept != "-" {
				ab = append(ab, kept)
			}
		case len(a) > 1 && a[0] == '-':
			return nil, nil, fmt.Errorf("ab's options go before the targets (%q follows a target)", a)
		default:
			targets = append(targets, a)
		}
	}
	if err := rules.own.Parse(own); err != nil {
		return nil, nil, longOptionError(err)
	}
	if name := emptyValue(rules.own); name != "" {
		return nil, nil, fmt.Errorf("--%s needs a value (an empty one would leave it without effect)", name)
	}
	return ab, targets, nil
}

// subArgRules is how a subcommand takes the options splitSubArgs meets.
type subArgRules struct {
	own *pflag.FlagSet // the subcommand's own long options
	// long refuses an ab long option the subcommand cannot use (nil error:
	// it goes to every run).
	long func(name string) error
	// flag sees a short option without a value: handled keeps it from the
	// runs' command line.
	flag func(c byte) (handled bool, err error)
	// value sees a short option with its value: pass puts both on the runs'
	// command line.
	value func(c byte, value string) (pass bool, err error)
}
