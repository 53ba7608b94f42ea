package testtool

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Nginx is an nginx that a test started: one process in the foreground, no
// master, its prefix in a temporary directory of the test.
type Nginx struct {
	Dir   string // the prefix: nginx.conf, www/ (the document root), logs/, tmp/
	Ports []int  // the loopback ports it listens on
	Cmd   *exec.Cmd
	done  chan struct{} // closed when Cmd has been waited for
}

// StartNginx starts nginx (see Need) with files in its document root and the
// directives http inside its http block, after the temporary paths (in tmp/)
// and default_type text/plain. http is a format in which %[1]s stands for
// the prefix and %[2]d, %[3]d, ... for nports free loopback ports. It
// returns once nginx has bound every port (it has written its PID file) and
// every port accepts a connection, with the error log in the failure when
// not; nginx is stopped (Stop) when the test ends. A port found free can be
// taken before nginx binds it (by another test's listener, or as a client's
// own port): nginx then exits, and it is started again on other ports, up to
// 5 times.
func StartNginx(t testing.TB, files map[string][]byte, nports int, http string) *Nginx {
	t.Helper()
	bin := Need(t, "nginx", "nginx-light")
	n := &Nginx{Dir: t.TempDir()}
	for _, d := range []string{"www", "logs", "tmp"} {
		if err := os.MkdirAll(filepath.Join(n.Dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(n.Dir, "www", name), body, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for attempt := 1; ; attempt++ {
		log, ok := n.start(t, bin, nports, http)
		if ok {
			return n
		}
		if attempt == 5 || !strings.Contains(log, "Address already in use") {
			t.Fatalf("nginx did not start listening on %v:\n%s", n.Ports, log)
		}
	}
}

// start starts nginx on nports fresh ports and waits until it has bound them
// and they accept connections (ok), or until it exits (not ok, with its error
// log); it stops nginx when the test ends.
func (n *Nginx) start(t testing.TB, bin string, nports int, http string) (errLog string, ok bool) {
	t.Helper()
	args := []any{n.Dir}
	n.Ports = n.Ports[:0]
	for range nports {
		port := freePort(t)
		n.Ports = append(n.Ports, port)
		args = append(args, port)
	}
	pidPath := filepath.Join(n.Dir, "nginx.pid")
	conf := fmt.Sprintf(`worker_processes 1;
daemon off;
master_process off;
pid %[1]s;
error_log %[2]s/logs/error.log warn;
events { worker_connections 1024; }
http {
    client_body_temp_path %[2]s/tmp/body;
    proxy_temp_path %[2]s/tmp/proxy;
    fastcgi_temp_path %[2]s/tmp/fcgi;
    uwsgi_temp_path %[2]s/tmp/uwsgi;
    scgi_temp_path %[2]s/tmp/scgi;
    default_type text/plain;
`, pidPath, n.Dir) + fmt.Sprintf(http, args...) + "\n}\n"
	confPath := filepath.Join(n.Dir, "nginx.conf")
	if err := os.WriteFile(confPath, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	errPath := filepath.Join(n.Dir, "logs", "error.log")
	_ = os.Remove(errPath) // a former attempt's
	n.Cmd = exec.Command(bin, "-c", confPath, "-p", n.Dir, "-e", errPath)
	if err := n.Cmd.Start(); err != nil {
		t.Fatal(err)
	}
	n.done = make(chan struct{})
	go func(cmd *exec.Cmd, done chan struct{}) { _ = cmd.Wait(); close(done) }(n.Cmd, n.done)
	readLog := func() string { b, _ := os.ReadFile(errPath); return string(b) }
	// nginx writes its PID file after it has bound every port, and exits when
	// it cannot bind one: a port that accepts before then may be another's.
	pid := strconv.Itoa(n.Cmd.Process.Pid)
	deadline := time.Now().Add(20 * time.Second)
	for {
		if b, _ := os.ReadFile(pidPath); strings.TrimSpace(string(b)) == pid {
			break
		}
		select {
		case <-n.done:
			return readLog(), false
		default:
		}
		if time.Now().After(deadline) {
			n.Stop()
			t.Fatalf("nginx did not write its PID file within 20 s\n%s", readLog())
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Cleanup(n.Stop)
	for _, port := range n.Ports {
		for {
			c, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(port))
			if err == nil {
				c.Close()
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("nginx did not start listening on %d: %v\n%s", port, err, readLog())
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	return "", true
}

// freePort is a loopback port free when it returns (a test of StartNginx
// replaces it).
var freePort = func(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// Stop ends nginx by its PID, SIGQUIT (finish the logs, then exit) or
// SIGKILL when it has not exited 5 s later, and waits for it. A second call
// returns at once.
func (n *Nginx) Stop() {
	_ = n.Cmd.Process.Signal(syscall.SIGQUIT) // if it already exited, done is or will be closed
	select {
	case <-n.done:
	case <-time.After(5 * time.Second):
		_ = n.Cmd.Process.Kill()
		<-n.done
	}
}
