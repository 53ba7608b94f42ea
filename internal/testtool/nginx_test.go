package testtool

import (
	"io"
	"net"
	"net/http"
	"strconv"
	"testing"
)

// A port taken between its choice and nginx's bind (here by a listener that
// accepts connections) is not mistaken for nginx's: nginx is started again
// on another port, which serves the document root.
func TestStartNginxRetriesATakenPort(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	calls := 0
	orig := freePort
	freePort = func(t testing.TB) int {
		calls++
		if calls == 1 {
			return taken.Addr().(*net.TCPAddr).Port
		}
		return orig(t)
	}
	defer func() { freePort = orig }()
	n := StartNginx(t, map[string][]byte{"f.txt": []byte("nginx's")}, 1, "    access_log off;\n    server { listen 127.0.0.1:%[2]d; root %[1]s/www; }")
	if calls != 2 || n.Ports[0] == taken.Addr().(*net.TCPAddr).Port {
		t.Fatalf("%d ports chosen, nginx on %v; want a second port, not the taken one", calls, n.Ports)
	}
	resp, err := http.Get("http://127.0.0.1:" + strconv.Itoa(n.Ports[0]) + "/f.txt")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != "nginx's" {
		t.Fatalf("body %q", body)
	}
}
