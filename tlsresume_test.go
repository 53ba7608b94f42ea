package main

import (
	"crypto/tls"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
)

// ab makes a full TLS handshake on every connection (it never offers a
// session), and so does gab unless --tls-resume is given: the server counts
// the handshakes that resumed, for the real ab, gab and gab --tls-resume, at
// TLS 1.3 and TLS 1.2.
func TestTLSResumptionAsAB(t *testing.T) {
	ab := realAB(t)
	var handshakes, resumed atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		io.WriteString(w, strings.Repeat("r", 100))
	}))
	srv.TLS = &tls.Config{VerifyConnection: func(cs tls.ConnectionState) error {
		handshakes.Add(1)
		if cs.DidResume {
			resumed.Add(1)
		}
		return nil
	}}
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.StartTLS()
	t.Cleanup(srv.Close)
	count := func(run func()) (int64, int64) {
		handshakes.Store(0)
		resumed.Store(0)
		run()
		return handshakes.Load(), resumed.Load()
	}
	for _, proto := range []string{"TLS1.3", "TLS1.2"} {
		args := []string{"-q", "-n", "6", "-f", proto, srv.URL + "/"}
		n, r := count(func() {
			if out, err := exec.Command(ab, args...).CombinedOutput(); err != nil {
				t.Fatalf("ab %v: %v\n%s", args, err, out)
			}
		})
		if n != 6 || r != 0 {
			t.Errorf("%s: ab made %d handshakes, %d resumed; want 6 and 0", proto, n, r)
		}
		for _, resume := range []bool{false, true} {
			argv := append([]string{"ab"}, args...)
			if resume {
				argv = append([]string{"ab", "--tls-resume"}, args...)
			}
			n, r := count(func() {
				if status, _, stderr := runGab(t, argv...); status != 0 {
					t.Fatalf("%v: status %d\n%s", argv, status, stderr)
				}
			})
			want := int64(0)
			if resume {
				want = 5
			}
			if n != 6 || r != want {
				t.Errorf("%s: gab %v made %d handshakes, %d resumed; want 6 and %d", proto, argv[1:], n, r, want)
			}
		}
	}
}
