package report

import (
	"bytes"
	"errors"
	"testing"

	"gab/client"
)

func TestWriteCGITable(t *testing.T) {
	res := &client.Result{CGI: &client.CGITimes{
		// ab's quirks show: odd count → the median averages v[1] and v[2];
		// 2500 µs rounds half up to 3 ms; sd is around the truncated mean.
		Spawn:     []uint32{3000, 1000, 2000},
		FirstByte: []uint32{400, 600, 1499},
		Output:    []uint32{10_000, 10_000, 10_000},
		Reap:      []uint32{0, 0, 1},
		ChildCPU:  []uint32{123_456, 0, 1_000_000},
	}}
	var buf bytes.Buffer
	if err := writeCGI(&buf, Summarize(res, Options{})); err != nil {
		t.Fatal(err)
	}
	want := "\nCGI times (ms)\n" +
		"              min  mean[+/-sd] median   max\n" +
		"Spawn:          1    2   1.0      3       3\n" +
		"First byte:     0    1   0.6      1       1\n" +
		"Output:        10   10   0.0     10      10\n" +
		"Reap:           0    0   0.0      0       0\n" +
		"Child CPU:      0  374 545.2    562    1000\n"
	if got := buf.String(); got != want {
		t.Errorf("WriteCGI:\n%s\nwant:\n%s", got, want)
	}
	if res.CGI.Spawn[0] != 3000 {
		t.Errorf("WriteCGI reordered the result's phases: %v", res.CGI.Spawn)
	}
}

func TestWriteCGINothingOutsideCGIMode(t *testing.T) {
	for _, res := range []*client.Result{{}, {CGI: &client.CGITimes{}}} {
		var buf bytes.Buffer
		if err := writeCGI(&buf, Summarize(res, Options{})); err != nil || buf.Len() != 0 {
			t.Errorf("WriteCGI(%+v) wrote %q, err %v; want nothing", res, buf.String(), err)
		}
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestWriteCGIReportsWriteError(t *testing.T) {
	res := &client.Result{CGI: &client.CGITimes{Spawn: []uint32{1}, FirstByte: []uint32{1},
		Output: []uint32{1}, Reap: []uint32{1}, ChildCPU: []uint32{1}}}
	if err := writeCGI(failingWriter{}, Summarize(res, Options{})); err == nil {
		t.Error("WriteCGI to a failing writer returned no error")
	}
}
