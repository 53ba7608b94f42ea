package targets

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

func TestParseHTTPVegetaExample(t *testing.T) {
	in := "# vegeta's README example\n" +
		"GET http://goku:9090/path/to/dragon?item=ball\n" +
		"X-Account-ID: 8675309\n" +
		"\n" +
		"DELETE http://goku:9090/path/to/remove\r\n" +
		"Confirmation-Token: 90215\r\n" +
		"Authorization: Token DEADBEEF\r\n" +
		"\r\n\n" +
		"POST http://goku:9090/things\n" +
		"Content-Type: application/json\n" +
		"@/path/to/newthing.json\n"
	ts, err := ParseHTTP(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	got := fmt.Sprint(ts)
	want := "[{2 GET http://goku:9090/path/to/dragon?item=ball [{X-Account-ID 8675309}] []  0} " +
		"{5 DELETE http://goku:9090/path/to/remove [{Confirmation-Token 90215} {Authorization Token DEADBEEF}] []  0} " +
		"{10 POST http://goku:9090/things [{Content-Type application/json}] [] /path/to/newthing.json 12}]"
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

func TestParseHTTPErrors(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"GET\n", "1: a target starts with"},
		{"G@T http://h/\n", "1: a target starts with"},
		{"GET /relative\n", "1: not an absolute"},
		{"GET http://h/\nno colon here\n", "2: a header line is"},
		{"GET http://h/\nBad Name: v\n", "2: a header line is"},
		{"GET http://h/\nX: a\x01b\n", "2: a control character"},
		{"GET http://h/\n@\n", "2: \"@\" names no body file"},
		{"POST http://h/\n@body\nX: y\n", "3: a line after the body file"},
		{"GET http://h/a b\n", "1: a space or control character"},
	} {
		_, err := ParseHTTP(strings.NewReader(c.in))
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.in, err, c.want)
		}
	}
	_, err := ParseHTTP(strings.NewReader("GET http://h/\nX: " + strings.Repeat("v", MaxLine) + "\n"))
	if err == nil || !strings.HasPrefix(err.Error(), "2: a line longer than") {
		t.Errorf("a long line: %v", err)
	}
}

func TestParseJSON(t *testing.T) {
	in := `{"method":"POST","url":"http://h:1/p","header":{"X-B":["2"],"x-a":["1","1b"]},"body":"aGVsbG8="}` + "\n\n" +
		`{"method":"GET","url":"https://h/"}` + "\n"
	ts, err := ParseJSON(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprintf("%v|%s", ts, ts[0].Body); got != "[{1 POST http://h:1/p [{X-B 2} {x-a 1} {x-a 1b}] [104 101 108 108 111]  0} {3 GET https://h/ [] []  0}]|hello" {
		t.Errorf("got %s", got)
	}
	for _, c := range []struct{ in, want string }{
		{`{"method":"GET","url":"http://h/","body":"!!"}`, "1: the body is not base64"},
		{`{"method":"GET","url":"http://h/","extra":1}`, "1: not a JSON target"},
		{`{"method":"G T","url":"http://h/"}`, "1: the method"},
		{`{"method":"GET","url":"ftp://h/"}`, "1: not an absolute"},
		{"\n" + `{"method":"GET","url":"http://h/"} {}`, "2: more than one JSON value"},
		{`{"method":"GET","url":"http://h/","header":{"A B":["x"]}}`, "1: the header name"},
		{`[1]`, "1: not a JSON target"},
	} {
		_, err := ParseJSON(strings.NewReader(c.in))
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.in, err, c.want)
		}
	}
}

// checkTargets holds what every parsed target must satisfy.
func checkTargets(t *testing.T, ts []Target) {
	last := 0
	for _, tg := range ts {
		if !isToken(tg.Method) || checkURL(tg.URL) != nil || tg.Line <= last {
			t.Fatalf("a target the parser should have refused: %+v (previous line %d)", tg, last)
		}
		last = tg.Line
		for _, h := range tg.Header {
			if !isToken(h.Name) || !validValue(h.Value) {
				t.Fatalf("a bad header: %+v", h)
			}
		}
	}
}

// FuzzParseHTTP: no panic; every target has a token method, an absolute
// URL, valid headers, ascending lines; an error names a line of the input.
func FuzzParseHTTP(f *testing.F) {
	f.Add("GET http://h/a\nX: 1\n\nPOST https://h:8/b\n@body.json\n")
	f.Add("# c\n\n\nDELETE http://h/?q\r\nA: b\r\n")
	f.Add("GET http://h/\n@\n")
	f.Fuzz(func(t *testing.T, in string) {
		ts, err := ParseHTTP(strings.NewReader(in))
		if err != nil {
			var pe *Error
			if !errorAs(err, &pe) || pe.Line < 1 || pe.Line > strings.Count(in, "\n")+1 {
				t.Fatalf("error %v does not name a line of the input", err)
			}
			return
		}
		checkTargets(t, ts)
	})
}

// FuzzParseJSON: the same rules, and a target written back as JSON reads
// back the same.
func FuzzParseJSON(f *testing.F) {
	f.Add(`{"method":"POST","url":"http://h:1/p","header":{"X":["2"]},"body":"aGk="}` + "\n")
	f.Add(`{"method":"GET","url":"https://h/"}` + "\n\n" + `{"method":"GET","url":"http://h/x"}`)
	f.Fuzz(func(t *testing.T, in string) {
		ts, err := ParseJSON(strings.NewReader(in))
		if err != nil {
			var pe *Error
			if !errorAs(err, &pe) || pe.Line < 1 || pe.Line > strings.Count(in, "\n")+1 {
				t.Fatalf("error %v does not name a line of the input", err)
			}
			return
		}
		checkTargets(t, ts)
		for _, tg := range ts {
			jt := jsonTarget{Method: tg.Method, URL: tg.URL, Body: tg.Body, Header: map[string][]string{}}
			for _, h := range tg.Header {
				jt.Header[h.Name] = append(jt.Header[h.Name], h.Value)
			}
			b, err := json.Marshal(jt)
			if err != nil {
				t.Fatal(err)
			}
			back, err := ParseJSON(strings.NewReader(string(b)))
			if err != nil || len(back) != 1 || fmt.Sprint(back[0].Method, back[0].URL, back[0].Header, string(back[0].Body)) != fmt.Sprint(tg.Method, tg.URL, tg.Header, string(tg.Body)) {
				t.Fatalf("%s reads back as %+v, %v; want %+v", b, back, err, tg)
			}
		}
	})
}

func errorAs(err error, pe **Error) bool {
	e, ok := err.(*Error)
	*pe = e
	return ok
}

func TestParseAccessLog(t *testing.T) {
	in := `127.0.0.1 - frank [10/Oct/2000:13:55:36 -0700] "GET /apache_pb.gif HTTP/1.0" 200 2326` + "\n" +
		`10.0.0.1 - - [10/Oct/2000:13:55:37 -0700] "POST /form?a=b HTTP/1.1" 302 0 "http://ref/" "Mozilla/5.0 (X11)"` + "\n" +
		"\n" +
		`10.0.0.1 - - [10/Oct/2000:13:55:37 -0700] "-" 400 0 "-" "-"` + "\n" +
		`garbage` + "\n" +
		`10.0.0.1 - - [10/Oct/2000:13:55:38 -0700] "\x16\x03\x01 x" 400 0` + "\n" +
		`10.0.0.1 - - [10/Oct/2000:13:55:39 -0700] "GET http://other:8080/abs HTTP/1.1" 200 1` + "\n" +
		`10.0.0.1 - - [99/Oct/2000:13:55:39 -0700] "GET /bad-time HTTP/1.1" 200 1`
	es, bad, err := ParseAccessLog(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range es {
		got = append(got, fmt.Sprintf("%d %s %s %s", e.Line, e.Time.UTC().Format("15:04:05"), e.Method, e.Target))
	}
	if strings.Join(got, "; ") != "1 20:55:36 GET /apache_pb.gif; 2 20:55:37 POST /form?a=b; 7 20:55:39 GET http://other:8080/abs" {
		t.Errorf("entries %q", got)
	}
	if fmt.Sprint(bad) != "[4 5 6 8]" {
		t.Errorf("bad lines %v, want [4 5 6 8]", bad)
	}
}

// FuzzParseAccessLog: no panic; every entry has a token method and a path
// or absolute URL free of spaces and controls; entries and bad lines name
// distinct lines of the input.
func FuzzParseAccessLog(f *testing.F) {
	f.Add(`h - - [10/Oct/2000:13:55:36 -0700] "GET /a HTTP/1.0" 200 1` + "\n" + `x [y] "z"`)
	f.Add(`h - - [10/Oct/2000:13:55:36 +0000] "PUT http://h/x" 201 0 "-" "agent \"q\""`)
	f.Fuzz(func(t *testing.T, in string) {
		es, bad, err := ParseAccessLog(strings.NewReader(in))
		if err != nil {
			return
		}
		seen := map[int]bool{}
		lines := strings.Count(in, "\n") + 1
		for _, e := range es {
			if !isToken(e.Method) || checkURL("http://h"+e.Target) != nil && checkURL(e.Target) != nil || e.Line < 1 || e.Line > lines || seen[e.Line] {
				t.Fatalf("a bad entry: %+v", e)
			}
			seen[e.Line] = true
		}
		for _, n := range bad {
			if n < 1 || n > lines || seen[n] {
				t.Fatalf("bad line %d", n)
			}
			seen[n] = true
		}
	})
}
