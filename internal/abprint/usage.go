package abprint

import (
	"fmt"
	"io"
)

// This file is what ab prints outside a run: its banner and its usage text,
// byte for byte.

// WriteBanner prints ab's banner (-V, and the start of every run); -w before
// -V gives its HTML form, whose last <p> is never closed.
func WriteBanner(w io.Writer, html bool) {
	if html {
		io.WriteString(w, "<p>\n"+
			" This is ApacheBench, Version 2.3 <i>&lt;$Revision$&gt;</i><br>\n"+
			" Copyright 1996 Adam Twiss, Zeus Technology Ltd, http://www.zeustech.net/<br>\n"+
			" Licensed to The Apache Software Foundation, http://www.apache.org/<br>\n"+
			"</p>\n<p>\n")
		return
	}
	io.WriteString(w, "This is ApacheBench, Version 2.3 <$Revision$>\n"+
		"Copyright 1996 Adam Twiss, Zeus Technology Ltd, http://www.zeustech.net/\n"+
		"Licensed to The Apache Software Foundation, http://www.apache.org/\n"+
		"\n")
}

// usage is ab's usage text; %s is argv[0] as given.
const usage = `Usage: %s [options] [http[s]://]hostname[:port]/path
Options are:
    -n requests     Number of requests to perform
    -c concurrency  Number of multiple requests to make at a time
    -t timelimit    Seconds to max. to spend on benchmarking
                    This implies -n 50000
    -s timeout      Seconds to max. wait for each response
                    Default is 30 seconds
    -b windowsize   Size of TCP send/receive buffer, in bytes
    -B address      Address to bind to when making outgoing connections
    -p postfile     File containing data to POST. Remember also to set -T
    -u putfile      File containing data to PUT. Remember also to set -T
    -T content-type Content-type header to use for POST/PUT data, eg.
                    'application/x-www-form-urlencoded'
                    Default is 'text/plain'
    -v verbosity    How much troubleshooting info to print
    -w              Print out results in HTML tables
    -i              Use HEAD instead of GET
    -x attributes   String to insert as table attributes
    -y attributes   String to insert as tr attributes
    -z attributes   String to insert as td or th attributes
    -C attribute    Add cookie, eg. 'Apache=1234'. (repeatable)
    -H attribute    Add Arbitrary header line, eg. 'Accept-Encoding: gzip'
                    Inserted after all normal header lines. (repeatable)
    -A attribute    Add Basic WWW Authentication, the attributes
                    are a colon separated username and password.
    -P attribute    Add Basic Proxy Authentication, the attributes
                    are a colon separated username and password.
    -X proxy:port   Proxyserver and port number to use
    -V              Print version number and exit
    -k              Use HTTP KeepAlive feature
    -d              Do not show percentiles served table.
    -S              Do not show confidence estimators and warnings.
    -q              Do not show progress when doing more than 150 requests
    -l              Accept variable document length (use this for dynamic pages)
    -g filename     Output collected data to gnuplot format file.
    -e filename     Output CSV file with percentages served
    -r              Don't exit on socket receive errors.
    -m method       Method name
    -h              Display usage information (this message)
    -I              Disable TLS Server Name Indication (SNI) extension
    -Z ciphersuite  Specify SSL/TLS cipher suite (See openssl ciphers)
    -f protocol     Specify SSL/TLS protocol
                    (SSL2, TLS1, TLS1.1, TLS1.2, TLS1.3 or ALL)
    -E certfile     Specify optional client certificate chain and private key
`

// WriteUsage prints ab's usage text exactly (it goes to stderr, exit 22).
func WriteUsage(w io.Writer, argv0 string) {
	fmt.Fprintf(w, usage, argv0)
}

// TrunkUsage lists httpd trunk's options that ab 2.3's usage text lacks; -h
// and --help print it after ab 2.3's text, before gab's long options.
const TrunkUsage = `Options of the next ab (Apache httpd trunk):
    -W workers      Number of worker threads: gab's event loops (at most -c)
                    and the threads running Go code (GOMAXPROCS, unless --cpus)
    -R rampdelay    Milliseconds in between each new connection when starting up
    -Q              Do not show the "This is ApacheBench" banner
`
