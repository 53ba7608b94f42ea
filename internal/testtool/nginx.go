package testtool

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
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
// returns once every port accepts a connection, with the error log in the
// failure when one does not; nginx is stopped (Stop) when the test ends.
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
	args := []any{n.Dir}
	for range nports {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := ln.Addr().(*net.TCPAddr).Port
		ln.Close()
		n.Ports = append(n.Ports, port)
		args = append(args, port)
	}
	conf := fmt.Sprintf(`worker_processes 1;
daemon off;
master_process off;
pid %[1]s/nginx.pid;
error_log %[1]s/logs/error.log warn;
events { worker_connections 1024; }
http {
    client_body_temp_path %[1]s/tmp/body;
    proxy_temp_path %[1]s/tmp/proxy;
    fastcgi_temp_path %[1]s/tmp/fcgi;
    uwsgi_temp_path %[1]s/tmp/uwsgi;
    scgi_temp_path %[1]s/tmp/scgi;
    default_type text/plain;
`, n.Dir) + fmt.Sprintf(http, args...) + "\n}\n"
	confPath := filepath.Join(n.Dir, "nginx.conf")
	if err := os.WriteFile(confPath, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	errLog := filepath.Join(n.Dir, "logs", "error.log")
	n.Cmd = exec.Command(bin, "-c", confPath, "-p", n.Dir, "-e", errLog)
	if err := n.Cmd.Start(); err != nil {
		t.Fatal(err)
	}
	n.done = make(chan struct{})
	go func() { _ = n.Cmd.Wait(); close(n.done) }()
	t.Cleanup(n.Stop)
	deadline := time.Now().Add(10 * time.Second)
	for _, port := range n.Ports {
		for {
			c, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(port))
			if err == nil {
				c.Close()
				break
			}
			if time.Now().After(deadline) {
				log, _ := os.ReadFile(errLog)
				t.Fatalf("nginx did not start listening on %d: %v\n%s", port, err, log)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	return n
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
