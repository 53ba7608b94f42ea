package live

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/golang/snappy"
)

// This file is --remote-write: the series of metrics.go pushed with
// Prometheus's remote-write protocol 1.0 (a protobuf WriteRequest, snappy
// block-compressed, POSTed) after every interval and once at the run's end.
//
// The protobuf messages are four small ones (WriteRequest, TimeSeries,
// Label, Sample) of which gab writes only repeated fields of strings,
// doubles and varints: they are encoded by hand below rather than with
// generated code and a protobuf runtime. Snappy is github.com/golang/snappy
// (the block format Prometheus reads).

// RemoteWriter pushes a run's series to a remote-write receiver. It is a
// Hub handler: each event updates its own copy of the series, and the run's
// series are pushed at the event's time. A push that fails is tried again
// within a bound (remoteAttempts); an interval's push that still fails is
// given up (the next push carries the counters anyway), the final push's
// failure is reported by Err.
type RemoteWriter struct {
	url    string // as given (for messages: credentials hidden)
	target *url.URL
	client *http.Client
	agent  string
	m      Metrics

	// attempts and backoff bound the tries of one push (tests shorten them).
	attempts int
	backoff  time.Duration

	mu     sync.Mutex
	pushes int   // pushes that succeeded
	failed int   // pushes given up
	err    error // the last push's error (nil after a success)
}

// Bounds of a push: at most remoteAttempts tries, remoteBackoff apart and
// doubling, each within remoteTimeout.
const (
	remoteAttempts = 3
	remoteBackoff  = 250 * time.Millisecond
	remoteTimeout  = 5 * time.Second
)

// NewRemoteWriter checks rawURL (http or https, with a host) and returns a
// writer for it; agent is the User-Agent.
func NewRemoteWriter(rawURL, agent string) (*RemoteWriter, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, errors.New("not a URL")
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, errors.New("the URL must be http:// or https://")
	}
	if u.Host == "" {
		return nil, errors.New("the URL has no host")
	}
	return &RemoteWriter{url: u.Redacted(), target: u, agent: agent, attempts: remoteAttempts, backoff: remoteBackoff,
		client: &http.Client{Timeout: remoteTimeout}}, nil
}

// URL is the receiver's URL, its password hidden.
func (w *RemoteWriter) URL() string { return w.url }

// Handle is the Hub handler: it pushes the event's run.
func (w *RemoteWriter) Handle(ev *Event, dropped int64) {
	w.m.Handle(ev, dropped)
	body := w.encode(ev.Run, ev.Time)
	err := w.push(body)
	w.mu.Lock()
	defer w.mu.Unlock()
	if err != nil {
		w.failed++
	} else {
		w.pushes++
	}
	w.err = err
}

// Status is how many pushes succeeded and were given up, and the last
// push's error (nil if it succeeded).
func (w *RemoteWriter) Status() (pushed, failed int, last error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.pushes, w.failed, w.err
}

// encode is the WriteRequest of run's series at t, snappy-compressed.
func (w *RemoteWriter) encode(run *Run, t time.Time) []byte {
	var pb []byte
	ms := t.UnixMilli()
	for _, f := range w.m.snapshot() {
		for _, s := range f.samples {
			if s.labels[1] != run.ID || !sameRun(s.labels, run) {
				continue
			}
			pb = appendTimeSeries(pb, s, ms)
		}
	}
	return snappy.Encode(nil, pb)
}

// sameRun reports whether a sample's labels are run's (target and step too:
// a capacity search's steps share the run id).
func sameRun(labels []string, run *Run) bool {
	step := ""
	for i := 0; i+1 < len(labels); i += 2 {
		switch labels[i] {
		case "target":
			if labels[i+1] != run.Target {
				return false
			}
		case "step":
			step = labels[i+1]
		}
	}
	return step == run.Step
}

// push POSTs body, trying again after a network error, a 5xx or a 429.
func (w *RemoteWriter) push(body []byte) error {
	var err error
	wait := w.backoff
	for try := 0; try < w.attempts; try++ {
		if try > 0 {
			time.Sleep(wait)
			wait *= 2
		}
		var again bool
		again, err = w.post(body)
		if err == nil || !again {
			return err
		}
	}
	return err
}

// post sends body once; again says a failure may go away.
func (w *RemoteWriter) post(body []byte) (again bool, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), remoteTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.target.String(), bytes.NewReader(body))
	if err != nil {
		return false, err
	}
	req.Header.Set("Content-Encoding", "snappy")
	req.Header.Set("Content-Type", "application/x-protobuf")
	req.Header.Set("X-Prometheus-Remote-Write-Version", "0.1.0")
	req.Header.Set("User-Agent", w.agent)
	resp, err := w.client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // its text repeats the URL, password included
		}
		return true, err
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10)) // so that the connection is reused
	if resp.StatusCode/100 == 2 {
		return false, nil
	}
	err = fmt.Errorf("the receiver answered %s: %s", strconv.Quote(resp.Status), strconv.Quote(strings.TrimSpace(string(msg))))
	return resp.StatusCode/100 == 5 || resp.StatusCode == http.StatusTooManyRequests, err
}

// Protobuf wire format: a field's key is its number << 3 | its wire type.
const (
	wireVarint = 0
	wire64     = 1
	wireBytes  = 2
)

func appendKey(b []byte, field, wire int) []byte {
	return binary.AppendUvarint(b, uint64(field<<3|wire))
}

func appendBytesField(b []byte, field int, p []byte) []byte {
	b = appendKey(b, field, wireBytes)
	b = binary.AppendUvarint(b, uint64(len(p)))
	return append(b, p...)
}

func appendPBString(b []byte, field int, s string) []byte {
	b = appendKey(b, field, wireBytes)
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// appendTimeSeries appends WriteRequest.timeseries (field 1): a TimeSeries
// of s's labels, sorted by name with __name__ first among them, and one
// Sample (value, timestamp in ms).
func appendTimeSeries(b []byte, s sample, ms int64) []byte {
	type label struct{ name, value string }
	labels := []label{{"__name__", s.name}}
	for i := 0; i+1 < len(s.labels); i += 2 {
		labels = append(labels, label{s.labels[i], s.labels[i+1]})
	}
	slices.SortFunc(labels, func(a, b label) int { return strings.Compare(a.name, b.name) })
	var ts []byte
	for _, l := range labels {
		var lb []byte
		lb = appendPBString(lb, 1, l.name)
		lb = appendPBString(lb, 2, strings.ToValidUTF8(l.value, "\uFFFD"))
		ts = appendBytesField(ts, 1, lb) // TimeSeries.labels
	}
	var sm []byte
	sm = appendKey(sm, 1, wire64) // Sample.value
	sm = binary.LittleEndian.AppendUint64(sm, math.Float64bits(s.value))
	sm = appendKey(sm, 2, wireVarint) // Sample.timestamp
	sm = binary.AppendUvarint(sm, uint64(ms))
	ts = appendBytesField(ts, 2, sm) // TimeSeries.samples
	return appendBytesField(b, 1, ts)
}
