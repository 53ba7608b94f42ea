package live

import (
	"testing"
	"time"

	"gab/client"
)

// TestHubOrderAndTotals: a sink sees every interval in order with the
// cumulative counts, then the final event.
func TestHubOrderAndTotals(t *testing.T) {
	var h Hub
	var got []*Event
	h.Attach("all", 100, func(ev *Event, dropped int64) {
		if dropped != 0 {
			t.Errorf("dropped %d with room to spare", dropped)
		}
		got = append(got, ev)
	})
	st := h.Begin(Run{ID: "x", Target: "http://127.0.0.1/"})
	for i := range 10 {
		iv := client.Interval{Start: time.Duration(i) * time.Second, Length: time.Second, Requests: int64(i), Failures: 1}
		iv.FailuresBy[client.FailureReceive] = 1
		iv.Status[2] = int64(i)
		st.OnInterval(iv)
	}
	res := &client.Result{Complete: 45}
	res.Failed.Total = 10
	st.Finish(nil, res)
	if late := h.Close(time.Minute); len(late) != 0 {
		t.Fatalf("%d sinks late", len(late))
	}
	if len(got) != 11 || !got[10].Final {
		t.Fatalf("%d events, want 10 intervals and the final one", len(got))
	}
	var sum int64
	for i, ev := range got[:10] {
		sum += int64(i)
		if ev.Index != i || ev.Interval.Requests != int64(i) || ev.Totals.Complete != sum || ev.Totals.Failed != int64(i+1) ||
			ev.Totals.FailuresBy[client.FailureReceive] != int64(i+1) || ev.Totals.Status[2] != sum {
			t.Errorf("event %d: index %d, totals %+v", i, ev.Index, ev.Totals)
		}
	}
	if f := got[10].Totals; f.Complete != 45 || f.Failed != 10 {
		t.Errorf("final totals %+v, want the result's 45 and 10", f)
	}
}

// TestHubBlockedSink: a sink that never returns loses the intervals past
// its queue, counted, while publishing never waits for it and another sink
// sees everything; Close gives up on it after its wait.
func TestHubBlockedSink(t *testing.T) {
	var h Hub
	block := make(chan struct{})
	defer close(block)
	entered := make(chan struct{}, 1)
	stuck := h.Attach("stuck", 4, func(ev *Event, dropped int64) {
		select {
		case entered <- struct{}{}:
		default:
		}
		<-block
	})
	var n int
	fineDone := make(chan struct{})
	h.Attach("fine", 1000, func(ev *Event, dropped int64) {
		if n++; ev.Final {
			close(fineDone)
		}
	})
	st := h.Begin(Run{ID: "x"})
	st.OnInterval(client.Interval{Requests: 1})
	<-entered // the stuck sink holds the first event
	for range 100 {
		st.OnInterval(client.Interval{Requests: 1})
	}
	st.Finish(nil, nil)
	if d := stuck.Dropped(); d != 100-4 {
		t.Errorf("the stuck sink dropped %d intervals, want %d (100 less its queue of 4)", d, 100-4)
	}
	<-fineDone
	late := h.Close(50 * time.Millisecond)
	if len(late) != 1 || late[0] != stuck {
		t.Errorf("late sinks %v, want the stuck one", late)
	}
	if n != 102 {
		t.Errorf("the other sink saw %d events, want 102", n)
	}
}
