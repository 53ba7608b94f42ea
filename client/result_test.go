package client

import (
	"reflect"
	"testing"
)

// add sums every counter: a counter added to Counters is summed over the
// workers without another edit.
func TestCountersAddEveryField(t *testing.T) {
	var one Counters
	var set func(v reflect.Value)
	set = func(v reflect.Value) {
		for i := range v.NumField() {
			switch f := v.Field(i); f.Kind() {
			case reflect.Struct:
				set(f)
			case reflect.Int, reflect.Int64:
				f.SetInt(int64(i + 1))
			default:
				t.Fatalf("Counters holds a %s; add does not know it", f.Kind())
			}
		}
	}
	set(reflect.ValueOf(&one).Elem())
	var sum Counters
	sum.add(&one)
	sum.add(&one)
	var check func(path string, s, o reflect.Value)
	check = func(path string, s, o reflect.Value) {
		for i := range s.NumField() {
			name := path + s.Type().Field(i).Name
			if s.Field(i).Kind() == reflect.Struct {
				check(name+".", s.Field(i), o.Field(i))
			} else if got, want := s.Field(i).Int(), 2*o.Field(i).Int(); got != want {
				t.Errorf("%s: %d after adding %d twice", name, got, o.Field(i).Int())
			}
		}
	}
	check("", reflect.ValueOf(sum), reflect.ValueOf(one))
}

// The names other packages and the JSON document use for the engine's enums.
func TestEnumNames(t *testing.T) {
	for _, c := range []struct {
		got  interface{ String() string }
		want string
	}{
		{EndCompleted, "completed"}, {EndTimeLimit, "time_limit"}, {EndInterrupted, "interrupted"}, {EndFatal, "fatal"},
		{HTTP10, "http1.0"}, {HTTP11, "http1.1"}, {HTTP2, "http2"}, {CGI, "cgi"}, {HTTP3, "http3"},
		{FailureConnect, "connect"}, {FailureReceive, "receive"}, {FailureLength, "length"},
		{FailureExceptions, "exceptions"}, {FailureWrite, "write"},
		{PhaseTCP, "TCP connect"}, {PhaseTotal, "Total"},
		{Ending(9), "unknown"}, {Protocol(9), "unknown"}, {Failure(9), "unknown"},
	} {
		if s := c.got.String(); s != c.want {
			t.Errorf("%T(%d).String() = %q, want %q", c.got, c.got, s, c.want)
		}
	}
}
