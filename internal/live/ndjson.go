package live

import (
	"encoding/json"
	"io"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"

	"gab/client"
)

// This file is --live FILE: one JSON object per line (NDJSON) for each
// interval as it closes, and a last line with "final": true and the run's
// totals, written by hand (a line is a few flat fields).

// AppendInterval appends ev's interval line (without the newline); dropped
// is how many interval lines the sink lost before it.
func AppendInterval(b []byte, ev *Event, dropped int64) []byte {
	iv := &ev.Interval
	b = appendRunFields(append(b, '{'), ev)
	b = appendIntField(b, "interval", int64(ev.Index))
	b = appendIntField(b, "start_us", iv.Start.Microseconds())
	b = appendIntField(b, "length_us", iv.Length.Microseconds())
	b = appendIntField(b, "requests", iv.Requests)
	b = appendIntField(b, "failures", iv.Failures)
	b = appendClasses(b, iv.FailuresBy)
	b = appendStatus(b, iv.Status)
	b = appendIntField(b, "bytes", iv.Bytes)
	b = appendIntField(b, "sent_bytes", iv.Sent)
	b = appendLatency(b, &iv.Latency)
	if ev.Run.Rate {
		if secs := iv.Length.Seconds(); secs > 0 {
			b = appendFloatField(b, "target_per_s", iv.Due/secs)
			b = appendFloatField(b, "achieved_per_s", float64(iv.Requests)/secs)
		}
		b = append(b, `,"corrected":{`...)
		b = appendLatency(b, &iv.Corrected)
		b = append(b, '}')
	}
	b = appendIntField(b, "connections_open", iv.ConnsOpen)
	b = appendIntField(b, "complete", ev.Totals.Complete)
	b = appendIntField(b, "failed", ev.Totals.Failed)
	b = appendIntField(b, "dropped", dropped)
	return append(b, '}')
}

// AppendFinal appends ev's final line (without the newline): the run's
// totals as its report states them, its figures by key, and how many
// interval lines the sink lost.
func AppendFinal(b []byte, ev *Event, dropped int64) []byte {
	b = appendRunFields(append(b, `{"final":true,`...), ev)
	b = appendStringField(b, "ending", ev.Ending)
	t := &ev.Totals
	b = appendIntField(b, "complete", t.Complete)
	b = appendIntField(b, "failed", t.Failed)
	b = appendClasses(b, t.FailuresBy)
	b = appendStatus(b, t.Status)
	b = appendIntField(b, "bytes", t.Bytes)
	b = appendIntField(b, "sent_bytes", t.Sent)
	if r := ev.Report; r != nil && r.Report != nil {
		b = appendFloatField(b, "time_taken_s", r.Report.TimeTakenS)
		b = appendFloatField(b, "requests_per_second", r.Report.RequestsPerSecond)
		if fig, err := json.Marshal(r.Figures); err == nil && len(r.Figures) > 0 {
			b = append(b, `,"figures":`...)
			b = append(b, fig...)
		}
	}
	b = appendIntField(b, "dropped", dropped)
	return append(b, '}')
}

// appendRunFields appends the run's names and the event's time (after the
// object's opening or a comma).
func appendRunFields(b []byte, ev *Event) []byte {
	b = append(b, `"run_id":`...)
	b = appendString(b, ev.Run.ID)
	b = appendStringField(b, "target", ev.Run.Target)
	if ev.Run.Step != "" {
		b = appendStringField(b, "step", ev.Run.Step)
	}
	return appendStringField(b, "time", ev.Time.UTC().Format(time.RFC3339Nano))
}

func appendLatency(b []byte, l *client.IntervalLatency) []byte {
	comma := len(b) > 0 && b[len(b)-1] != '{'
	for i, f := range [...]struct {
		k string
		v int64
	}{{"min_us", l.MinUs}, {"p50_us", l.P50Us}, {"p90_us", l.P90Us}, {"p99_us", l.P99Us}, {"p99_9_us", l.P999Us}, {"max_us", l.MaxUs}} {
		if i > 0 || comma {
			b = append(b, ',')
		}
		b = append(b, '"')
		b = append(b, f.k...)
		b = append(b, `":`...)
		b = strconv.AppendInt(b, f.v, 10)
	}
	return appendStringField(b, "histogram", l.Histogram)
}

func appendClasses(b []byte, by [client.FailuresUnclassified + 1]int64) []byte {
	return appendCounts(b, "failures_by_class", classLabels[:], by[:])
}

func appendStatus(b []byte, st [6]int64) []byte {
	return appendCounts(b, "status_classes", resultLabels[:len(st)], st[:])
}

// appendCounts appends the field key holding an object of labels[i]: vs[i].
func appendCounts(b []byte, key string, labels []string, vs []int64) []byte {
	b = append(b, ',', '"')
	b = append(b, key...)
	b = append(b, `":{`...)
	for i, v := range vs {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, labels[i])
		b = append(b, ':')
		b = strconv.AppendInt(b, v, 10)
	}
	return append(b, '}')
}

func appendIntField(b []byte, k string, v int64) []byte {
	b = append(b, ',', '"')
	b = append(b, k...)
	b = append(b, `":`...)
	return strconv.AppendInt(b, v, 10)
}

func appendFloatField(b []byte, k string, v float64) []byte {
	b = append(b, ',', '"')
	b = append(b, k...)
	b = append(b, `":`...)
	if v != v || v > 1e300 || v < -1e300 { // NaN, ±Inf: JSON has no such number
		return append(b, "null"...)
	}
	return strconv.AppendFloat(b, v, 'f', -1, 64)
}

func appendStringField(b []byte, k, v string) []byte {
	b = append(b, ',', '"')
	b = append(b, k...)
	b = append(b, `":`...)
	return appendString(b, v)
}

const hexDigits = "0123456789abcdef"

// appendString appends s as a JSON string: quotes, backslashes and control
// characters escaped, invalid UTF-8 as U+FFFD, and U+2028 and U+2029
// escaped (JavaScript's line terminators).
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c < 0x20 || c == 0x7f:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, `\u202`...)
			b = append(b, hexDigits[r&0xf])
		default:
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return append(b, '"')
}

// LineWriter is --live's sink: it writes each event's line to the writer
// open gives it, opened at the first event (a FIFO's open waits for its
// reader on the sink's goroutine, not the run's). After an error it writes
// nothing more; Err says what it was.
type LineWriter struct {
	open func() (io.Writer, error)
	w    io.Writer
	buf  []byte

	mu    sync.Mutex
	lines int64
	err   error
}

// NewLineWriter returns a sink that writes to what open returns.
func NewLineWriter(open func() (io.Writer, error)) *LineWriter { return &LineWriter{open: open} }

// Handle writes ev's line (a Hub handler).
func (l *LineWriter) Handle(ev *Event, dropped int64) {
	if l.Err() != nil {
		return
	}
	if l.w == nil {
		w, err := l.open()
		if err != nil {
			l.fail(err)
			return
		}
		l.w = w
	}
	b := l.buf[:0]
	if ev.Final {
		b = AppendFinal(b, ev, dropped)
	} else {
		b = AppendInterval(b, ev, dropped)
	}
	b = append(b, '\n')
	l.buf = b
	if _, err := l.w.Write(b); err != nil {
		l.fail(err)
		return
	}
	l.mu.Lock()
	l.lines++
	l.mu.Unlock()
}

func (l *LineWriter) fail(err error) {
	l.mu.Lock()
	l.err = err
	l.mu.Unlock()
}

// Err is the error that stopped the writer (nil if none).
func (l *LineWriter) Err() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.err
}

// Lines is how many lines were written.
func (l *LineWriter) Lines() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lines
}
