//go:build linux

package client

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unsafe"
)

// writeScript writes an executable /bin/sh CGI program into dir.
func writeScript(t *testing.T, dir, name, body string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// cgiConfig is a CGI run of prog for url with ab's defaults.
func cgiConfig(t *testing.T, prog, rawURL string, n, c int) Config {
	t.Helper()
	cfg := urlConfig(t, rawURL, n, c, CGI)
	cfg.CGIProgram = prog
	return cfg
}

func runCGI(t *testing.T, ctx context.Context, cfg Config) (*Result, error) {
	t.Helper()
	rn, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return rn.Run(ctx)
}

// readEnv parses `env` output into a map.
func readEnv(t *testing.T, path string) map[string]string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{}
	for _, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		k, v, _ := strings.Cut(line, "=")
		env[k] = v
	}
	return env
}

func TestCGIMetaVariablesArrive(t *testing.T) {
	dir := t.TempDir()
	prog := writeScript(t, dir, "printenv", `env > env.out
pwd > pwd.out
cat > body.out
printf 'Content-Type: text/plain\r\n\r\nok'
`)
	cfg := cgiConfig(t, prog, "http://localhost:8080/cgi-bin/printenv/extra/p%20x?a=1&b=%20", 1, 1)
	cfg.Spec.Method = "POST"
	cfg.Spec.HasBody = true
	cfg.Spec.Body = []byte("a=1&b=2")
	cfg.Spec.ContentType = "application/x-www-form-urlencoded"
	cfg.Spec.Cookie = "c=1"
	cfg.Spec.Auth = []string{
		"Authorization: Basic " + base64.StdEncoding.EncodeToString([]byte("alice:secret")),
		"Proxy-Authorization: Basic " + base64.StdEncoding.EncodeToString([]byte("proxy:pw")),
	}
	cfg.Spec.Headers = []string{"X-Test: one", "X-Test: two", "Accept: text/html"}
	cfg.CGIEnv = []string{"EXTRA=1", "PATH=/usr/bin:/bin"}
	res, err := runCGI(t, context.Background(), cfg)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if res.Complete != 1 || res.Failed.Total != 0 {
		t.Fatalf("complete %d, failed %+v; want 1 and none (errors %v)", res.Complete, res.Failed, res.FirstError)
	}
	got := readEnv(t, filepath.Join(dir, "env.out"))
	want := map[string]string{
		"GATEWAY_INTERFACE": "CGI/1.1",
		"SERVER_PROTOCOL":   "HTTP/1.0",
		"SERVER_SOFTWARE":   "gab",
		"SERVER_NAME":       "localhost",
		"SERVER_PORT":       "8080",
		"REQUEST_METHOD":    "POST",
		"SCRIPT_NAME":       "/cgi-bin/printenv",
		"PATH_INFO":         "/extra/p x",
		"QUERY_STRING":      "a=1&b=%20",
		"REMOTE_ADDR":       "127.0.0.1",
		"CONTENT_LENGTH":    "7",
		"CONTENT_TYPE":      "application/x-www-form-urlencoded",
		"AUTH_TYPE":         "Basic",
		"REMOTE_USER":       "alice",
		"HTTP_COOKIE":       "c=1",
		"HTTP_X_TEST":       "one, two",
		"HTTP_ACCEPT":       "text/html",
		"HTTP_HOST":         "localhost:8080",
		"HTTP_USER_AGENT":   "ApacheBench/2.3",
		"PATH":              "/usr/bin:/bin",
		"EXTRA":             "1",
	}
	shellOwn := map[string]bool{"PWD": true, "OLDPWD": true, "SHLVL": true, "_": true}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	for k, v := range got {
		if _, ok := want[k]; !ok && !shellOwn[k] {
			t.Errorf("unexpected variable %s=%q (the environment must be minimal)", k, v)
		}
	}
	pwd, err := os.ReadFile(filepath.Join(dir, "pwd.out"))
	if err != nil {
		t.Fatal(err)
	}
	realDir, _ := filepath.EvalSymlinks(dir)
	if d := strings.TrimSpace(string(pwd)); d != dir && d != realDir {
		t.Errorf("working directory %q, want the program's directory %q", d, dir)
	}
	body, err := os.ReadFile(filepath.Join(dir, "body.out"))
	if err != nil {
		t.Fatal(err)
	}
	if string(body) != "a=1&b=2" {
		t.Errorf("stdin = %q, want the body %q", body, "a=1&b=2")
	}
}

func TestCGIEnvironmentVariants(t *testing.T) {
	tests := []struct {
		name string
		url  string
		edit func(*Config)
		want map[string]string // "" means: must be absent
	}{
		{"get no script segment", "http://127.0.0.1/a/b?x", nil, map[string]string{
			"REQUEST_METHOD": "GET", "SCRIPT_NAME": "/a/b", "PATH_INFO": "", "QUERY_STRING": "x",
			"SERVER_PORT": "80", "CONTENT_LENGTH": "", "CONTENT_TYPE": "", "AUTH_TYPE": "",
			"HTTP_HOST": "127.0.0.1", "HTTP_ACCEPT": "*/*",
		}},
		{"head, -H Host and User-Agent override", "http://localhost:81/prog", func(c *Config) {
			c.Spec.Method, c.Spec.HeadMethod = "HEAD", true
			c.Spec.Headers = []string{"Host: other", "user-agent: me", "NoColonLine"}
		}, map[string]string{
			"REQUEST_METHOD": "HEAD", "SCRIPT_NAME": "/prog", "HTTP_HOST": "other", "HTTP_USER_AGENT": "me",
		}},
		{"put with -m, fragment dropped, http1.1", "http://[::1]:9/x/prog/y/?q=1#frag", func(c *Config) {
			c.Spec.Method, c.Spec.HasBody, c.Spec.Body, c.Spec.ContentType = "PUT", true, nil, "text/plain"
			c.Spec.HTTP11 = true
			c.LocalAddr = "::1"
		}, map[string]string{
			"REQUEST_METHOD": "PUT", "SCRIPT_NAME": "/x/prog", "PATH_INFO": "/y/", "QUERY_STRING": "q=1",
			"SERVER_NAME": "::1", "CONTENT_LENGTH": "0", "CONTENT_TYPE": "text/plain",
			"SERVER_PROTOCOL": "HTTP/1.1", "REMOTE_ADDR": "::1",
		}},
		{"-H Authorization and Content-Type", "http://localhost/prog", func(c *Config) {
			c.Spec.Headers = []string{"Authorization: Bearer tok", "Content-Type: text/x"}
		}, map[string]string{
			"AUTH_TYPE": "Bearer", "REMOTE_USER": "", "HTTP_AUTHORIZATION": "", "CONTENT_TYPE": "text/x",
			"HTTP_CONTENT_TYPE": "",
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := cgiConfig(t, "/bin/true", tc.url, 1, 1)
			if tc.edit != nil {
				tc.edit(&cfg)
			}
			env := map[string]string{}
			for _, kv := range cgiEnvironment(&cfg, "prog") {
				k, v, _ := strings.Cut(kv, "=")
				if _, dup := env[k]; dup {
					t.Errorf("%s set twice", k)
				}
				env[k] = v
			}
			for k, v := range tc.want {
				got, ok := env[k]
				if v == "" && k != "PATH_INFO" {
					if ok {
						t.Errorf("%s = %q, want it absent", k, got)
					}
					continue
				}
				if got != v {
					t.Errorf("%s = %q, want %q", k, got, v)
				}
			}
		})
	}
}

func TestSplitScriptPath(t *testing.T) {
	tests := []struct{ path, base, script, info string }{
		{"/cgi-bin/prog/a/b", "prog", "/cgi-bin/prog", "/a/b"},
		{"/cgi-bin/prog", "prog", "/cgi-bin/prog", ""},
		{"/prog/prog/x", "prog", "/prog", "/prog/x"},
		{"/a/program/x", "prog", "/a/program/x", ""},
		{"/a/pr%6Fg/x", "prog", "/a/pr%6Fg", "/x"},
		{"/", "prog", "/", ""},
		{"//prog/", "prog", "//prog", "/"},
	}
	for _, tc := range tests {
		s, i := splitScriptPath(tc.path, tc.base)
		if s != tc.script || i != tc.info {
			t.Errorf("splitScriptPath(%q, %q) = %q, %q; want %q, %q", tc.path, tc.base, s, i, tc.script, tc.info)
		}
	}
}

func TestCGIPostBodyByteExact(t *testing.T) {
	for _, size := range []int{0, 7, 4096, 300 << 10} {
		t.Run(strconv.Itoa(size), func(t *testing.T) {
			dir := t.TempDir()
			// The program answers before it reads, so a large body must not deadlock.
			prog := writeScript(t, dir, "echo", `printf 'Content-Type: application/octet-stream\n\n'
head -c 100000 /dev/zero
cat > body.$$
echo $$ >> pids
`)
			body := make([]byte, size)
			for i := range body {
				body[i] = byte(i * 7 % 251)
			}
			cfg := cgiConfig(t, prog, "http://localhost/echo", 2, 1)
			cfg.Spec.Method, cfg.Spec.HasBody, cfg.Spec.Body = "POST", true, body
			res, err := runCGI(t, context.Background(), cfg)
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if res.Failed.Total != 0 || res.DocLength != 100000 {
				t.Fatalf("failed %+v, doc length %d; want none and 100000 (%v)", res.Failed, res.DocLength, res.FirstError)
			}
			if res.TotalSent != int64(2*size) {
				t.Errorf("TotalSent = %d, want %d", res.TotalSent, 2*size)
			}
			pids, _ := os.ReadFile(filepath.Join(dir, "pids"))
			for _, pid := range strings.Fields(string(pids)) {
				got, err := os.ReadFile(filepath.Join(dir, "body."+pid))
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, body) {
					t.Errorf("stdin of %s: %d bytes, differs from the %d-byte body", pid, len(got), len(body))
				}
			}
			if n := len(strings.Fields(string(pids))); n != 2 {
				t.Errorf("%d programs ran, want 2", n)
			}
		})
	}
}

func TestCGIUnreadBodyDoesNotHang(t *testing.T) {
	dir := t.TempDir()
	// The program answers and exits without reading its 1 MiB body.
	prog := writeScript(t, dir, "deaf", "printf 'Content-Type: text/plain\\n\\nok'\n")
	cfg := cgiConfig(t, prog, "http://localhost/deaf", 3, 1)
	cfg.Spec.Method, cfg.Spec.HasBody, cfg.Spec.Body = "POST", true, make([]byte, 1<<20)
	res, err := runCGI(t, context.Background(), cfg)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if res.Complete != 3 || res.Failed.Total != 0 || res.DocLength != 2 {
		t.Errorf("complete %d failed %+v doc length %d; want 3, none, 2", res.Complete, res.Failed, res.DocLength)
	}
	if res.TotalSent >= 3<<20 {
		t.Errorf("TotalSent = %d: the whole body cannot have been written to a program that never read it", res.TotalSent)
	}
}

func TestCGIStatusCountedAsAb(t *testing.T) {
	tests := []struct {
		name, out string
		status    int
		non2xx    bool
		doc       int64
	}{
		{"cgi-200", `printf 'Status: 200 OK\r\nContent-Type: text/plain\r\n\r\nhello'`, 200, false, 5},
		{"cgi-default", `printf 'Content-Type: text/plain\n\nhello!'`, 200, false, 6},
		{"cgi-302", `printf 'Location: http://localhost/elsewhere\n\n'`, 302, true, 0},
		{"cgi-404", `printf 'Status: 404 Not Found\nContent-Type: text/html\n\nnope'`, 404, true, 4},
		{"cgi-500", `printf 'Status: 500\nContent-Type: text/html\n\n'`, 500, true, 0},
		// The Server value is cut as ab cuts a server's: no control byte (here a
		// terminal's clipboard-write sequence) reaches the report.
		{"nph-201", `printf 'HTTP/1.0 201 Created\r\nServer: tiny/1\033]52;c;aGk=\007 x\r\n\r\nmade'`, 201, false, 4},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			prog := writeScript(t, dir, tc.name, tc.out+"\n")
			res, err := runCGI(t, context.Background(), cgiConfig(t, prog, "http://localhost/"+tc.name, 3, 2))
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			wantNon2xx := 0
			if tc.non2xx {
				wantNon2xx = 3
			}
			if res.Complete != 3 || res.Failed.Total != 0 || res.Non2xx != wantNon2xx {
				t.Errorf("complete %d failed %d non-2xx %d; want 3, 0, %d (%v)", res.Complete, res.Failed.Total, res.Non2xx, wantNon2xx, res.FirstError)
			}
			if !reflect.DeepEqual(res.StatusCounts, map[int]int{tc.status: 3}) {
				t.Errorf("status counts %v, want %d × 3", res.StatusCounts, tc.status)
			}
			if res.DocLength != tc.doc || res.BodyRead != 3*tc.doc {
				t.Errorf("doc length %d, body read %d; want %d and %d", res.DocLength, res.BodyRead, tc.doc, 3*tc.doc)
			}
			if strings.HasPrefix(tc.name, "nph-") && res.ServerSoftware != "tiny/1" {
				t.Errorf("server software %q, want tiny/1", res.ServerSoftware)
			}
		})
	}
}

func TestCGIFailureClasses(t *testing.T) {
	tests := []struct{ name, script, errPart string }{
		{"header-less", "echo just a body\n", "output ended before the blank line"},
		{"body-without-header", "printf 'hello world\\n\\nmore'\n", "malformed header"},
		{"malformed", "printf 'Content-Type text/plain\\n\\nx'\n", "malformed header"},
		{"empty-head", "printf '\\nbody'\n", "empty header block"},
		{"no-output", "exit 0\n", "no output"},
		{"bad-status", "printf 'Status: abc\\n\\n'\n", "malformed Status"},
		{"non-zero-exit", "printf 'Content-Type: text/plain\\n\\nx'; exit 3\n", "exited with status 3"},
		{"crash", "ulimit -c 0; printf 'Content-Type: text/plain\\n\\nx'; kill -SEGV $$\n", "signal 11"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			prog := writeScript(t, dir, "prog", tc.script)
			res, err := runCGI(t, context.Background(), cgiConfig(t, prog, "http://localhost/prog", 4, 2))
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			want := Failures{Total: 4, Exceptions: 4}
			if res.Complete != 4 || res.Failed != want {
				t.Errorf("complete %d, failed %+v; want 4 and %+v", res.Complete, res.Failed, want)
			}
			if msg := res.FirstError["exceptions"]; !strings.Contains(msg, tc.errPart) {
				t.Errorf("first exception %q, want it to mention %q", msg, tc.errPart)
			}
		})
	}
}

func TestCGICannotStartIsConnectFailure(t *testing.T) {
	dir := t.TempDir()
	prog := filepath.Join(dir, "broken")
	if err := os.WriteFile(prog, []byte("#!/nonexistent/interpreter\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	res, err := runCGI(t, context.Background(), cgiConfig(t, prog, "http://localhost/broken", 5, 1))
	var fe *FatalError
	if !errors.As(err, &fe) || !strings.Contains(fe.Message, "Test aborted after 10 failures") {
		t.Fatalf("err = %v, want ab's abort after 10 failures", err)
	}
	if res.Failed.Connect != 11 || res.Complete != 0 { // ab counts 11, aborts on the 12th
		t.Errorf("connect failures %d, complete %d; want 11 and 0", res.Failed.Connect, res.Complete)
	}
	if !errors.Is(fe, syscall.ENOENT) {
		t.Errorf("cause %v, want ENOENT from exec", fe.Err)
	}
}

func TestCGINewRejectsMissingOrPlainFile(t *testing.T) {
	dir := t.TempDir()
	plain := filepath.Join(dir, "plain")
	if err := os.WriteFile(plain, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, prog := range []string{filepath.Join(dir, "missing"), plain, dir} {
		cfg := cgiConfig(t, prog, "http://localhost/x", 1, 1)
		if _, err := New(cfg); err == nil {
			t.Errorf("New with --cgi %s: no error", prog)
		}
	}
}

// sleeper is a program that answers nothing for 30 s through a child of its
// own (sleep), and leaves its pid and the child's in pids.<pid>.
const sleeper = `sleep 30 &
echo $$ $! > pids.$$
wait
`

// groupsGone checks that no process of the sleeper runs recorded in dir is left.
func groupsGone(t *testing.T, dir string) {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "pids.*"))
	if len(files) == 0 {
		t.Fatal("no program ran")
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		fields := strings.Fields(string(data))
		if len(fields) != 2 {
			t.Fatalf("%s: %q", f, data)
		}
		leader, _ := strconv.Atoi(fields[0])
		if err := syscall.Kill(-leader, 0); err != syscall.ESRCH {
			t.Errorf("process group %d still exists (kill 0: %v)", leader, err)
		}
		for _, pid := range fields {
			if _, err := os.Stat("/proc/" + pid); err == nil {
				st, _ := os.ReadFile("/proc/" + pid + "/stat")
				t.Errorf("process %s is still there: %s", pid, st)
			}
		}
	}
}

func TestCGIRequestTimeoutKillsGroup(t *testing.T) {
	dir := t.TempDir()
	prog := writeScript(t, dir, "sleeper", sleeper)
	cfg := cgiConfig(t, prog, "http://localhost/sleeper", 2, 2)
	cfg.RequestTimeout = time.Second
	begin := time.Now()
	res, err := runCGI(t, context.Background(), cfg)
	took := time.Since(begin)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if res.Complete != 2 || res.Failed != (Failures{Total: 2, Exceptions: 2}) {
		t.Errorf("complete %d, failed %+v; want 2 requests failed as exceptions", res.Complete, res.Failed)
	}
	if !strings.Contains(res.FirstError["exceptions"], "request-timeout") {
		t.Errorf("first exception %q, want the request timeout", res.FirstError["exceptions"])
	}
	if took > 5*time.Second {
		t.Errorf("run took %v, want about 1 s", took)
	}
	groupsGone(t, dir)
}

func TestCGIIdleTimeoutExit119(t *testing.T) {
	dir := t.TempDir()
	prog := writeScript(t, dir, "sleeper", sleeper)
	cfg := cgiConfig(t, prog, "http://localhost/sleeper", 4, 3)
	cfg.Timeout = time.Second
	begin := time.Now()
	res, err := runCGI(t, context.Background(), cfg)
	took := time.Since(begin)
	var fe *FatalError
	if !errors.As(err, &fe) || fe.Exit != 119 || fe.Message != "apr_pollset_poll: The timeout specified has expired (70007)\n" {
		t.Fatalf("err = %v, want ab's -s timeout with exit 119", err)
	}
	if res.Complete != 0 || res.Ending != EndFatal {
		t.Errorf("complete %d ending %v; want 0, EndFatal", res.Complete, res.Ending)
	}
	if took > 5*time.Second {
		t.Errorf("run took %v, want about 1 s", took)
	}
	groupsGone(t, dir)
}

func TestCGIInterruptKillsAndReaps(t *testing.T) {
	dir := t.TempDir()
	prog := writeScript(t, dir, "sleeper", sleeper)
	cfg := cgiConfig(t, prog, "http://localhost/sleeper", 10, 2)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	var res *Result
	go func() {
		defer close(done)
		res, _ = runCGI(t, ctx, cfg)
	}()
	// Interrupt once both programs have started.
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if files, _ := filepath.Glob(filepath.Join(dir, "pids.*")); len(files) == 2 {
			break
		}
	}
	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after the interrupt")
	}
	if res.Ending != EndInterrupted || res.Complete != 0 || res.Failed.Total != 0 {
		t.Errorf("ending %v complete %d failed %d; want interrupted, nothing counted", res.Ending, res.Complete, res.Failed.Total)
	}
	groupsGone(t, dir)
	if kids := cgiChildren(t); len(kids) > 0 {
		t.Errorf("children left: %v", kids)
	}
}

// cgiChildren lists this test process's children (zombies included) that
// come from the CGI programs of these tests, by command name; other tests'
// servers may be children too.
func cgiChildren(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, k := range childrenOf(t, os.Getpid()) {
		for _, name := range []string{"(tiny)", "(sleeper)", "(sleep)", "(sh)"} {
			if strings.Contains(k, name) {
				out = append(out, k)
			}
		}
	}
	return out
}

// childrenOf lists the processes (zombies included) whose parent is pid.
func childrenOf(t *testing.T, pid int) []string {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var kids []string
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue // gone meanwhile
		}
		// pid (comm) state ppid ...; comm may hold spaces, so cut at the last ')'.
		s := string(stat)
		rest := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(rest) >= 2 && rest[1] == strconv.Itoa(pid) {
			kids = append(kids, strings.TrimSpace(s[:strings.LastIndexByte(s, ')')+1])+" "+rest[0])
		}
	}
	sort.Strings(kids)
	return kids
}

// TestZombieDetectorSeesZombies checks the check: an unreaped child shows.
func TestZombieDetectorSeesZombies(t *testing.T) {
	pid, err := syscall.ForkExec("/bin/sleep", []string{"sleep", "0"}, &syscall.ProcAttr{})
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Wait4(pid, nil, 0, nil)
	var info [128]byte
	const pPID, wNOWAIT = 1, 0x1000000
	syscall.Syscall6(syscall.SYS_WAITID, pPID, uintptr(pid), uintptr(unsafe.Pointer(&info[0])), syscall.WEXITED|wNOWAIT, 0, 0)
	kids := cgiChildren(t)
	if len(kids) != 1 || !strings.HasPrefix(kids[0], strconv.Itoa(pid)+" (sleep) Z") {
		t.Errorf("children %v, want the zombie %d (sleep)", kids, pid)
	}
}

func TestCGIRunsLeaveNoZombie(t *testing.T) {
	runs, n := 100, 200
	if testing.Short() {
		runs = 10
	}
	dir := t.TempDir()
	prog := writeScript(t, dir, "tiny", "printf 'Content-Type: text/plain\\n\\nx'\n")
	for i := 0; i < runs; i++ {
		res, err := runCGI(t, context.Background(), cgiConfig(t, prog, "http://localhost/tiny", n, 8))
		if err != nil {
			t.Fatalf("run %d: %v", i, err)
		}
		if res.Complete != n || res.Failed.Total != 0 {
			t.Fatalf("run %d: complete %d failed %+v (%v)", i, res.Complete, res.Failed, res.FirstError)
		}
		if kids := cgiChildren(t); len(kids) > 0 {
			t.Fatalf("after run %d: children left: %v", i, kids)
		}
	}
}

// TestCGIPhasesAddUpToTotal holds for any scheduling: the program exits at
// its output's end and the wait for that exit (cgiLinger) is a minute here,
// so Reap is always part of Total; and the program sleeps 50 ms only after
// gab has read its first byte, so Output (first byte to EOF) is at least
// 50 ms however late gab's reads run. For that the header is followed by
// 300000 bytes, more than the pipe (64 KiB) and gab's read buffer (64 KiB)
// hold together: head's last write returns only once gab has read the
// rest, in two reads at least, so the first read (whose clock reading is
// FirstByte) came before the sleep began. An Output measured from any later
// read would be about 0.
func TestCGIPhasesAddUpToTotal(t *testing.T) {
	defer func(d time.Duration) { cgiLinger = d }(cgiLinger)
	cgiLinger = time.Minute
	dir := t.TempDir()
	prog := writeScript(t, dir, "busy", `i=0; while [ $i -lt 2000 ]; do i=$((i+1)); done
printf 'Content-Type: text/plain\n\n'; head -c 300000 /dev/zero; sleep 0.05; echo done
`)
	res, err := runCGI(t, context.Background(), cgiConfig(t, prog, "http://localhost/busy", 6, 3))
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	c := res.CGI
	if c == nil || len(c.Spawn) != 6 || len(c.ChildCPU) != 6 {
		t.Fatalf("CGI times %+v, want 6 entries per phase", c)
	}
	for i, s := range res.Samples.Exact() {
		sum := c.Spawn[i] + c.FirstByte[i] + c.Output[i] + c.Reap[i]
		// Each phase is truncated to µs on its own, so the sum may lose up to 3 µs.
		if sum > s.Total || s.Total-sum > 3 {
			t.Errorf("request %d: phases sum to %d µs, Total is %d µs", i, sum, s.Total)
		}
		if c.Spawn[i] != s.Connect {
			t.Errorf("request %d: Spawn %d µs, Connect %d µs; want equal", i, c.Spawn[i], s.Connect)
		}
		if c.Output[i] < 50_000 {
			t.Errorf("request %d: Output %d µs, want ≥ the 50 ms sleep after the first byte was read", i, c.Output[i])
		}
		if c.ChildCPU[i] == 0 {
			t.Errorf("request %d: no child CPU time for a busy loop", i)
		}
	}
}

func TestCGIParserChunkingInvariant(t *testing.T) {
	tests := []struct {
		out    string
		nph    bool
		status int
		body   int64
		bad    bool
	}{
		{"Content-Type: text/plain\r\n\r\nhello", false, 200, 5, false},
		{"Content-Type: text/plain\n\nhello\n\n", false, 200, 7, false},
		{"Status: 404\nX: y\n z\n\n", false, 404, 0, false},
		{"Location: /x\n\nabc", false, 302, 3, false},
		{"Location: /x\nStatus: 301 Moved\n\n", false, 301, 0, false},
		{"HTTP/1.1 503 Busy\r\nServer: s\r\n\r\n12", true, 503, 2, false},
		{"Content-Type: text/plain\r\n\r\n", true, 0, 0, true},
		{" folded: first\n\n", false, 0, 0, true},
		{"Status: 20\n\n", false, 0, 0, true},
		{"a b: c\n\n", false, 0, 0, true},
		{":x\n\n", false, 0, 0, true},
		{"Content-Type: text/plain\n", false, 0, 0, true},
		{strings.Repeat("X-Long: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n", 300) + "\n", false, 0, 0, true},
	}
	for _, tc := range tests {
		for _, chunk := range []int{1, 2, 3, 7, 1 << 20} {
			var p cgiParser
			p.nph = tc.nph
			p.reset()
			for s := tc.out; len(s) > 0; {
				k := min(chunk, len(s))
				p.feed([]byte(s[:k]))
				s = s[k:]
			}
			p.finish()
			if (p.err != nil) != tc.bad {
				t.Errorf("%q in chunks of %d: err %v, want error %v", tc.out, chunk, p.err, tc.bad)
				continue
			}
			if !tc.bad && (p.status != tc.status || p.body != tc.body) {
				t.Errorf("%q in chunks of %d: status %d body %d; want %d %d", tc.out, chunk, p.status, p.body, tc.status, tc.body)
			}
		}
	}
}

func FuzzCGIParser(f *testing.F) {
	f.Add([]byte("Content-Type: text/plain\r\n\r\nhello"), false, 3)
	f.Add([]byte("HTTP/1.0 200 OK\r\n\r\n"), true, 1)
	f.Add([]byte("Status: 404\n\n"), false, 2)
	f.Fuzz(func(t *testing.T, out []byte, nph bool, chunk int) {
		if chunk <= 0 {
			chunk = 1
		}
		var whole, split cgiParser
		whole.nph, split.nph = nph, nph
		whole.reset()
		split.reset()
		whole.feed(out)
		whole.finish()
		for s := out; len(s) > 0; {
			k := min(chunk, len(s))
			split.feed(s[:k])
			s = s[k:]
		}
		split.finish()
		if (whole.err == nil) != (split.err == nil) || whole.status != split.status || whole.body != split.body {
			t.Fatalf("chunking changes the result: whole %v/%d/%d, split %v/%d/%d",
				whole.err, whole.status, whole.body, split.err, split.status, split.body)
		}
		if whole.err == nil && whole.body+int64(whole.headLen) != int64(len(out)) {
			t.Fatalf("head %d + body %d != %d bytes", whole.headLen, whole.body, len(out))
		}
	})
}

// noticeRecorder counts Notice events.
type noticeRecorder struct {
	nopEvents
	mu      sync.Mutex
	notices []string
}

func (n *noticeRecorder) Notice(msg string) {
	n.mu.Lock()
	n.notices = append(n.notices, msg)
	n.mu.Unlock()
}

func TestCGIKeepAliveNoticedOnce(t *testing.T) {
	dir := t.TempDir()
	prog := writeScript(t, dir, "tiny", "printf 'Content-Type: text/plain\\n\\nx'\n")
	cfg := cgiConfig(t, prog, "http://localhost/tiny", 5, 2)
	cfg.KeepAlive = true
	rec := &noticeRecorder{}
	cfg.Events = rec
	res, err := runCGI(t, context.Background(), cfg)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if len(rec.notices) != 1 || !strings.Contains(rec.notices[0], "-k has no meaning") {
		t.Errorf("notices %q, want one about -k", rec.notices)
	}
	if res.KeepAlive != 0 || res.Complete != 5 {
		t.Errorf("keep-alive requests %d, complete %d; want 0 and 5", res.KeepAlive, res.Complete)
	}
}

func TestCGIConcurrencyRunsCProcessesAtOnce(t *testing.T) {
	dir := t.TempDir()
	// Each program waits (up to 10 s) until four of them have started: the
	// run only succeeds if -c 4 really runs four at once.
	prog := writeScript(t, dir, "barrier", `touch started.$$
i=0
while [ "$(ls started.* | wc -l)" -lt 4 ]; do
	i=$((i+1)); [ $i -lt 200 ] || exit 1
	sleep 0.05
done
printf 'Content-Type: text/plain\n\nx'
`)
	res, err := runCGI(t, context.Background(), cgiConfig(t, prog, "http://localhost/barrier", 4, 4))
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if res.Complete != 4 || res.Failed.Total != 0 {
		t.Errorf("complete %d, failed %+v (%v); want 4 programs meeting at the barrier", res.Complete, res.Failed, res.FirstError)
	}
}

func TestCGITimeLimit(t *testing.T) {
	dir := t.TempDir()
	prog := writeScript(t, dir, "tiny", "printf 'Content-Type: text/plain\\n\\nx'\n")
	cfg := cgiConfig(t, prog, "http://localhost/tiny", 50000, 2) // ab's -t sets n to 50000
	// Long enough for a loaded machine to start and reap a few programs
	// (each a fork and exec of a shell) before the limit.
	cfg.TimeLimit = time.Second
	res, err := runCGI(t, context.Background(), cfg)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if res.Ending != EndTimeLimit || res.Complete == 0 || res.Complete == 50000 || res.Failed.Total != 0 {
		t.Errorf("ending %v complete %d failed %d; want the time limit after some requests, no failures",
			res.Ending, res.Complete, res.Failed.Total)
	}
	if len(res.CGI.Spawn) != res.Complete {
		t.Errorf("%d CGI samples for %d requests", len(res.CGI.Spawn), res.Complete)
	}
	if kids := cgiChildren(t); len(kids) > 0 {
		t.Errorf("children left: %v", kids)
	}
}

func TestCGILengthFailureAsAb(t *testing.T) {
	for _, variable := range []bool{false, true} {
		dir := t.TempDir()
		// The first run answers 3 bytes, every later one 5.
		prog := writeScript(t, dir, "grow", `printf 'Content-Type: text/plain\n\n'
if [ -e seen ]; then printf 12345; else touch seen; printf 123; fi
`)
		cfg := cgiConfig(t, prog, "http://localhost/grow", 3, 1)
		cfg.VariableLength = variable
		res, err := runCGI(t, context.Background(), cfg)
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
		want := Failures{Total: 2, Length: 2}
		if variable {
			want = Failures{}
		}
		if res.Failed != want || res.DocLength != 3 || res.Complete != 3 {
			t.Errorf("-l %v: failed %+v doc length %d complete %d; want %+v, 3, 3", variable, res.Failed, res.DocLength, res.Complete, want)
		}
	}
}

func BenchmarkCGIParser(b *testing.B) {
	head := []byte("Status: 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 65536\r\nX-A: b\r\n\r\n")
	body := make([]byte, 64<<10)
	var p cgiParser
	b.ReportAllocs()
	b.SetBytes(int64(len(head) + len(body)))
	for b.Loop() {
		p.reset()
		p.feed(head)
		p.feed(body)
		p.finish()
		if p.err != nil || p.status != 200 {
			b.Fatalf("err %v status %d", p.err, p.status)
		}
	}
}

// BenchmarkCGIRequest is one request per iteration: spawn, read, reap.
func BenchmarkCGIRequest(b *testing.B) {
	dir := b.TempDir()
	prog := filepath.Join(dir, "tiny")
	if err := os.WriteFile(prog, []byte("#!/bin/sh\nprintf 'Content-Type: text/plain\\n\\nx'\n"), 0o755); err != nil {
		b.Fatal(err)
	}
	target, err := ParseURL("http://localhost/tiny")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	rn, err := New(Config{Target: target, Requests: b.N, Concurrency: 1, Timeout: 30 * time.Second,
		Spec: RequestSpec{Method: "GET", Target: target.Path, Host: target.HostField()}, Protocol: CGI, CGIProgram: prog})
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	res, err := rn.Run(context.Background())
	if err != nil || res.Complete != b.N || res.Failed.Total != 0 {
		b.Fatalf("complete %d of %d, failed %+v, err %v", res.Complete, b.N, res.Failed, err)
	}
}

// A program that writes header lines for ever, never the blank line: the head
// limit ends each request as an Exception, the group is killed and reaped,
// and the run goes on (it does not read until -t).
func TestCGIEndlessHeadIsExceptionAndKilled(t *testing.T) {
	dir := t.TempDir()
	prog := writeScript(t, dir, "flood", `echo $$ $$ > pids.$$
exec yes 'X-Flood: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa'
`)
	cfg := cgiConfig(t, prog, "http://localhost/flood", 4, 2)
	cfg.TimeLimit = 20 * time.Second
	begin := time.Now()
	res, err := runCGI(t, context.Background(), cfg)
	took := time.Since(begin)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if res.Complete != 4 || res.Failed != (Failures{Total: 4, Exceptions: 4}) || res.Ending != EndCompleted {
		t.Errorf("complete %d, failed %+v, ending %v; want 4 Exceptions and a completed run", res.Complete, res.Failed, res.Ending)
	}
	if msg := res.FirstError["exceptions"]; !strings.Contains(msg, "no blank line within 8192 bytes") {
		t.Errorf("first exception %q, want the head limit", msg)
	}
	// Per request: the head limit, one read past it and what the pipe held.
	if res.TotalRead > 4*(cgiMaxHead+64<<10+1<<20) {
		t.Errorf("read %d bytes for 4 requests: the head was not bounded", res.TotalRead)
	}
	if took > 5*time.Second {
		t.Errorf("run took %v, want well under -t", took)
	}
	groupsGone(t, dir)
}

// A program that prints its whole response, closes stdout and goes on
// running: the response ends at the EOF, as a web server ends it, the run
// goes on, and the program's Reap is filled in when it exits (or is killed
// at the end of the run, leaving nothing behind).
//
// "exits-later": each program exits once the next one has started (the
// last never does, and is killed at the end of the run). With -c 1 the next
// program starts only after this request has ended, so the exit comes after
// the request's end by order, whatever the machine's load: gab must not
// have waited for it (Total ends at the EOF), and Reap, filled in later,
// reaches past the next request's start. (A program that slept 150 ms
// against the 100 ms linger was reaped within the request when gab, on a
// loaded machine, saw its EOF or began the linger 50 ms late: a Total of
// 225 ms, its EOF at 7.6 ms.)
func TestCGIProgramOutlivingItsOutput(t *testing.T) {
	defer func(d time.Duration) { cgiLinger = d }(cgiLinger)
	cgiLinger = 100 * time.Millisecond
	for _, tc := range []struct {
		name      string
		after     string // the program's work after its output, in the background
		exitsNext bool   // each program exits once the next has started
	}{
		{"exits-later", `set -- started.*
if [ -e "$1" ]; then n=$#; else n=0; fi
: > started.$n
while [ ! -e started.$((n + 1)) ]; do sleep 0.01; done`, true},
		{"keeps-running", "sleep 30", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			prog := writeScript(t, dir, "linger", `printf 'Content-Type: text/plain\n\nhello'
exec >&-
{
`+tc.after+`
} &
echo $$ $! > pids.$$
wait
`)
			cfg := cgiConfig(t, prog, "http://localhost/linger", 3, 1)
			cfg.Timeout = 3 * time.Second
			begin := time.Now()
			res, err := runCGI(t, context.Background(), cfg)
			took := time.Since(begin)
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if res.Complete != 3 || res.Failed.Total != 0 || res.BodyRead != 15 {
				t.Errorf("complete %d failed %+v body %d; want 3 responses of 5 bytes", res.Complete, res.Failed, res.BodyRead)
			}
			if took > 2500*time.Millisecond {
				t.Errorf("run took %v; a response must not wait for its program's exit", took)
			}
			c := res.CGI
			smp := res.Samples.Exact()
			for i, s := range smp {
				if sum := c.Spawn[i] + c.FirstByte[i] + c.Output[i]; sum > s.Total || s.Total-sum > 3 {
					t.Errorf("request %d: Total %d µs, want it to end at the EOF (%d µs)", i, s.Total, sum)
				}
				if c.Reap[i] == 0 {
					t.Errorf("request %d: Reap 0 µs, want the exit's", i)
				}
				// The exit (start + Total + Reap) is at or after the next
				// request's start; Start is whole ms, so ±1 ms each.
				if tc.exitsNext && i+1 < len(smp) {
					if exit, next := int64(s.Start)*1000+int64(s.Total)+int64(c.Reap[i]), int64(smp[i+1].Start)*1000; exit+2000 < next {
						t.Errorf("request %d: its program exited at %d µs, before the next request started (%d µs)", i, exit, next)
					}
				}
			}
			groupsGone(t, dir)
		})
	}
}

// TestCGITimeLimitedStoreFollowsItsRequests: a -t CGI run's phase store
// grows with the programs run instead of setting aside five columns of the
// 10,000,000-request limit (200 MB) at the start, and still holds every
// request's phases. The limit is a second, as TestCGITimeLimit's: the test
// needs at least one complete request, and a loaded -race machine can take
// hundreds of ms to fork and exec the first program's shell; the store's
// growth is what it bounds, and a second's programs are still a few hundred
// rows against the 10,000,000 set aside before.
func TestCGITimeLimitedStoreFollowsItsRequests(t *testing.T) {
	const most = 16 << 20
	prog := writeScript(t, t.TempDir(), "ok", `printf 'Content-Type: text/plain\r\n\r\nok'`)
	cfg := cgiConfig(t, prog, "http://localhost/ok", math.MaxInt32, 1)
	cfg.TimeLimit = time.Second
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	res, err := runCGI(t, context.Background(), cfg)
	runtime.ReadMemStats(&after)
	if err != nil || res.Complete == 0 || res.CGI == nil {
		t.Fatalf("run: %v, %d complete", err, res.Complete)
	}
	if c := res.CGI; len(c.Spawn) != res.Complete || len(c.Reap) != res.Complete || len(c.ChildCPU) != res.Complete || c.Spawn[0] == 0 {
		t.Errorf("%d requests complete; CGI phases of %d (reap %d, cpu %d), first spawn %d µs", res.Complete, len(c.Spawn), len(c.Reap), len(c.ChildCPU), c.Spawn[0])
	}
	if grew := int64(after.HeapInuse) - int64(before.HeapInuse); grew > most {
		t.Errorf("a CGI run of %d requests holds %.1f MB of heap, want at most %d MB", res.Complete, float64(grew)/1e6, most>>20)
	}
	runtime.KeepAlive(res)
}
