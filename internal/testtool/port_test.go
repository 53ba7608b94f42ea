package testtool

import (
	"net"
	"strconv"
	"strings"
	"testing"
)

// A connect to ClosedPort's port is refused, and a listener cannot take the
// port while it is reserved.
func TestClosedPortRefuses(t *testing.T) {
	port := ClosedPort(t)
	addr := "127.0.0.1:" + strconv.Itoa(port)
	c, err := net.Dial("tcp", addr)
	if err == nil {
		c.Close()
		t.Fatal("connect succeeded")
	}
	if !strings.Contains(err.Error(), "refused") {
		t.Fatalf("error %v, want connection refused", err)
	}
	if ln, err := net.Listen("tcp", addr); err == nil {
		ln.Close()
		t.Fatal("a listener took the reserved port")
	}
}
