package golden

import (
	"strings"
	"testing"
)

func TestSplitCommandHonoursQuotes(t *testing.T) {
	got, err := SplitCommand(`ab -n 1 -H 'X-One: 1' -P ' puser:ppass' '' "http://x/?q=1"`)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"ab", "-n", "1", "-H", "X-One: 1", "-P", " puser:ppass", "", `"http://x/?q=1"`}
	if strings.Join(got, "|") != strings.Join(want, "|") || len(got) != len(want) {
		t.Fatalf("got %q", got)
	}
	if _, err := SplitCommand("ab 'open"); err == nil {
		t.Fatal("unterminated quote accepted")
	}
}

func TestLoadEveryCase(t *testing.T) {
	names, err := Names(goldenDir)
	if err != nil {
		t.Fatal(err)
	}
	if len(names) != 80 {
		t.Fatalf("%d cases, want 80", len(names))
	}
	for _, n := range names {
		c, err := Load(goldenDir, n)
		if err != nil {
			t.Fatal(err)
		}
		if c.Args[0] != "ab" {
			t.Errorf("%s: argv[0] %q", n, c.Args[0])
		}
	}
	c, err := Load(goldenDir, "gnuplot-csv")
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Files) != 2 || !strings.HasPrefix(c.Files["gnuplot-csv.tsv"], "starttime\tseconds") {
		t.Fatalf("files %v", c.Files)
	}
	sig, _ := Load(goldenDir, "sigint")
	if sig.Exit != 1 || sig.Args[len(sig.Args)-1] != "http://127.0.0.1:18081/slow" {
		t.Fatalf("sigint args %q exit %d", sig.Args, sig.Exit)
	}
}

func TestLoadCaptures(t *testing.T) {
	caps, err := LoadCaptures(goldenDir + "/request-capture.raw")
	if err != nil {
		t.Fatal(err)
	}
	if len(caps) != 12 {
		t.Fatalf("%d captures, want 12", len(caps))
	}
	want := "GET /capture1 HTTP/1.0\r\nHost: 127.0.0.1:18081\r\nUser-Agent: ApacheBench/2.3\r\nAccept: */*\r\n\r\n"
	if string(caps[0].Request) != want {
		t.Fatalf("first capture %q", caps[0].Request)
	}
	if !strings.HasSuffix(string(caps[2].Request), "\r\n\r\na=1&b=2") {
		t.Fatalf("POST capture %q", caps[2].Request)
	}
}

func TestMaskHidesOnlyCorrectlyFormattedTimings(t *testing.T) {
	cases := []struct{ in, want string }{
		{"Time taken for tests:   0.008 seconds", "Time taken for tests:   <n> seconds"},
		{"Time taken for tests:   0.01 seconds", "Time taken for tests:   0.01 seconds"},
		{"Requests per second:    12072.92 [#/sec] (mean)", "Requests per second:    <n> [#/sec] (mean)"},
		{"Time per request:       0.083 [ms] (mean, across all concurrent requests)", "Time per request:       <n> [ms] (mean, across all concurrent requests)"},
		{"Connect:        0    0   0.1      0       1", "Connect:    <row>"},
		{"Connect:       0    0   0.1      0       1", "Connect:       0    0   0.1      0       1"},
		{"Processing: 100000 1000 100.5 1000000 10000000", "Processing: <row>"},
		{"Total:          0     0    3", "Total:      <row> -S"},
		{"Total:          0 10000010000", "Total:      <row> -S"},
		{"Total:          0     0     3", "Total:          0     0     3"},
		{"  50%      1", "50% <n>"},
		{" 100%      2 (longest request)", "100% <n> (longest request)"},
		{"  50%     1", "  50%     1"},
		{"Date: Mon, 30 Nov 2026 00:01:06 GMT\r", "Date: <date>\r"},
		{"Failed requests:        0", "Failed requests:        0"},
		{"<tr ><th bgcolor=white>Total:</th><td bgcolor=white>    0</td><td bgcolor=white>    0</td><td bgcolor=white>    9</td></tr>",
			"<tr ><th bgcolor=white>Total:</th><td bgcolor=white><n></td><td bgcolor=white><n></td><td bgcolor=white><n></td></tr>"},
		{"<tr ><th bgcolor=white>Total:</th><td bgcolor=white>0</td><td bgcolor=white>    0</td><td bgcolor=white>    9</td></tr>",
			"<tr ><th bgcolor=white>Total:</th><td bgcolor=white>0</td><td bgcolor=white>    0</td><td bgcolor=white>    9</td></tr>"},
	}
	for _, c := range cases {
		if got := Mask(c.in); got != c.want {
			t.Errorf("Mask(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestMaskDropsConfidenceLines(t *testing.T) {
	in := "Total:          0    1   0.4      1       2\n" +
		"ERROR: The median and mean for the processing time are more than twice the standard\n       deviation apart. These results are NOT reliable.\n" +
		"WARNING: The median and mean for the total time are not within a normal deviation\n        These results are probably not that reliable.\n" +
		"\nPercentage"
	if got := Mask(in); got != "Total:      <row>\n\nPercentage" {
		t.Fatalf("got %q", got)
	}
	if n := len(SanityLines(in)); n != 2 {
		t.Fatalf("%d sanity blocks, want 2", n)
	}
	bad := "ERROR: The median and mean for the processing time are more than twice the standard\n      deviation apart. These results are NOT reliable.\n"
	if Mask(bad) != bad {
		t.Fatal("a misformatted ERROR block was dropped")
	}
}

func TestPortRewriteRoundTrip(t *testing.T) {
	p := Ports{Nginx: 41234, Py: 41235, TLS: 41236, Refused: 41237}
	in := "Host: 127.0.0.1:18080\r\nServer Port:            18081\n<td colspan=2 bgcolor=white>18082</td>\nTotal transferred:      18080 bytes\n"
	got := p.Rewrite(in)
	want := "Host: 127.0.0.1:41234\r\nServer Port:            41235\n<td colspan=2 bgcolor=white>41236</td>\nTotal transferred:      18080 bytes\n"
	if got != want {
		t.Fatalf("Rewrite: %q", got)
	}
	if back := p.Unrewrite(got); back != in {
		t.Fatalf("Unrewrite: %q", back)
	}
}

func TestTSVAndCSVChecks(t *testing.T) {
	c, _ := Load(goldenDir, "gnuplot-csv")
	if err := TSVSortedByTotal(c.Files["gnuplot-csv.tsv"]); err != nil {
		t.Fatal(err)
	}
	if m := MaskTSV(c.Files["gnuplot-csv.tsv"]); strings.Count(m, "<row>") != 20 {
		t.Fatalf("masked rows: %q", m)
	}
	vals, err := CSVValues(c.Files["gnuplot-csv.csv"])
	if err != nil || len(vals) != 101 {
		t.Fatalf("%d values, %v", len(vals), err)
	}
	if err := TSVSortedByTotal("starttime\tseconds\tctime\tdtime\tttime\twait\nx\t1\t0\t0\t5\t0\nx\t1\t0\t0\t4\t0\n"); err == nil {
		t.Fatal("unsorted rows accepted")
	}
}
