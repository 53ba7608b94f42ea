package main

import (
	"time"

	"gab/client"
)

// The options of Apache httpd trunk's ab, the next ab (its usage and getopt
// string "...SqQB:m:R:W:"), so that scripts written for it run on gab:
//
//	-W workers    worker threads: gab's event loops (at most -c), and the
//	              threads that run Go code (GOMAXPROCS, unless --cpus)
//	-R rampdelay  milliseconds between new connections at the start
//	-Q            no "This is ApacheBench" banner
//
// ab 2.3's usage text (-h) stays ab 2.3's, byte for byte: these options are
// listed after it, with gab's long options (writeLongUsage).

// maxRampDelay bounds -R (ms): a day between two connections.
const maxRampDelay = 24 * 60 * 60 * 1000

// applyTrunkShort applies -W and -R (checked after the options, in checkTrunk).
func (o *cliOptions) applyTrunkShort(opt byte, arg string, st *shortState) {
	switch opt {
	case 'W':
		st.workers, st.workersSet = client.Atoi(arg), true
	case 'R':
		st.rampDelay = client.Atoi(arg)
	}
}

// checkTrunk refuses a -W below 1 and a negative -R as usage errors (ab's
// status 22) and moves them into the configuration.
func (o *cliOptions) checkTrunk(st *shortState, usageError func(string, ...any) (int, bool)) (status int, done bool) {
	cfg := &o.Config
	if st.workersSet {
		if st.workers < 1 {
			return usageError("Invalid number of workers [at least 1]")
		}
		cfg.Workers = st.workers
	}
	if st.rampDelay < 0 || st.rampDelay > maxRampDelay {
		return usageError("Invalid ramp delay [Range 0..%d ms]", maxRampDelay)
	}
	cfg.ConnectDelay = time.Duration(st.rampDelay) * time.Millisecond
	return exitOK, false
}

// trunkUsage lists httpd trunk's options that ab 2.3's usage text lacks; -h
// and --help print it after ab 2.3's text, before gab's long options.
const trunkUsage = `Options of the next ab (Apache httpd trunk):
    -W workers      Number of worker threads: gab's event loops (at most -c)
                    and the threads running Go code (GOMAXPROCS, unless --cpus)
    -R rampdelay    Milliseconds in between each new connection when starting up
    -Q              Do not show the "This is ApacheBench" banner
`
