package outfile

import (
	"errors"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"gab/internal/testtool"
)

const doc = `{"document":1}` + "\n"

func writeDoc(w io.Writer) error {
	_, err := io.WriteString(w, doc)
	return err
}

// names lists dir's entries, to show that nothing was left there (no
// temporary file) and nothing replaced.
func names(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}

func wantNames(t *testing.T, dir string, want ...string) {
	t.Helper()
	if got := names(t, dir); !slices.Equal(got, want) {
		t.Errorf("%s holds %q, want %q", dir, got, want)
	}
}

func wantLink(t *testing.T, name, target string) {
	t.Helper()
	got, err := os.Readlink(name)
	if err != nil || got != target {
		t.Errorf("%s: link to %q (%v), want a link to %q", name, got, err, target)
	}
}

// mode is name's type and permissions (of the link itself), 0 if it is gone.
func mode(name string) fs.FileMode {
	fi, err := os.Lstat(name)
	if err != nil {
		return 0
	}
	return fi.Mode()
}

func wantContent(t *testing.T, name, want string) {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil || string(b) != want {
		t.Errorf("%s holds %q (%v), want %q", name, b, err, want)
	}
}

// A symbolic link is followed to its file, which is replaced (keeping its
// permissions); the link stays.
func TestSymlinkFollowed(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "run-42.json")
	if err := os.WriteFile(target, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	os.Chmod(target, 0o600) // whatever the umask
	link := filepath.Join(dir, "latest.json")
	if err := os.Symlink("run-42.json", link); err != nil {
		t.Fatal(err)
	}
	if err := CheckWritable(link); err != nil {
		t.Fatal(err)
	}
	if err := WriteAtomic(link, writeDoc); err != nil {
		t.Fatal(err)
	}
	wantLink(t, link, "run-42.json")
	wantContent(t, target, doc)
	if m := mode(target); m != 0o600 {
		t.Errorf("%s: mode %v, want its own 0600", target, m)
	}
	wantNames(t, dir, "latest.json", "run-42.json")
}

// A chain of relative links across directories, ending at a file that does
// not exist yet: the file is made where the last link points, the
// temporary file beside it; every link stays.
func TestSymlinkChainToNewFile(t *testing.T) {
	dir := t.TempDir()
	for _, d := range []string{"a", "b", "c"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	first := filepath.Join(dir, "a", "latest.json")
	if err := os.Symlink("../b/next.json", first); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../c/run.json", filepath.Join(dir, "b", "next.json")); err != nil {
		t.Fatal(err)
	}
	if err := CheckWritable(first); err != nil {
		t.Fatal(err)
	}
	wantNames(t, filepath.Join(dir, "c")) // the check leaves nothing
	if err := WriteAtomic(first, writeDoc); err != nil {
		t.Fatal(err)
	}
	wantLink(t, first, "../b/next.json")
	wantLink(t, filepath.Join(dir, "b", "next.json"), "../c/run.json")
	wantContent(t, filepath.Join(dir, "c", "run.json"), doc)
	if m := mode(filepath.Join(dir, "c", "run.json")); m != 0o644 {
		t.Errorf("new file: mode %v, want 0644", m)
	}
	wantNames(t, filepath.Join(dir, "a"), "latest.json")
	wantNames(t, filepath.Join(dir, "b"), "next.json")
	wantNames(t, filepath.Join(dir, "c"), "run.json")
}

// Links that loop end in an error, not a loop.
func TestSymlinkLoop(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	if err := os.Symlink("b", a); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("a", b); err != nil {
		t.Fatal(err)
	}
	for what, err := range map[string]error{"CheckWritable": CheckWritable(a), "WriteAtomic": WriteAtomic(a, writeDoc)} {
		if err == nil || !strings.HasPrefix(err.Error(), a+": ") {
			t.Errorf("%s: error %v, want one naming %s", what, err, a)
		}
	}
	wantNames(t, dir, "a", "b")
}

// A FIFO is written through: its reader receives the whole document, and
// the FIFO stays. The check neither creates a file beside it nor opens it
// (without a reader, an open for writing blocks or fails).
func TestFIFOWrittenThrough(t *testing.T) {
	dir := t.TempDir()
	f := testtool.MakeFIFO(t, dir, "out.json")
	fifo := f.Path
	if err := CheckWritable(fifo); err != nil {
		t.Fatalf("CheckWritable without a reader: %v", err)
	}
	wantNames(t, dir, "out.json")
	f.Start()
	err := WriteAtomic(fifo, writeDoc)
	got := f.Read() // should the FIFO not have been opened, the reader gets nothing
	if err != nil {
		t.Fatal(err)
	}
	if got != doc {
		t.Errorf("the FIFO's reader got %q, want %q", got, doc)
	}
	if m := mode(fifo); m.Type() != fs.ModeNamedPipe {
		t.Errorf("%s is no longer a FIFO: %v", fifo, m)
	}
	wantNames(t, dir, "out.json")
}

// A device is written through, not replaced, and a write error (ENOSPC) is
// returned, naming the file.
func TestDeviceWrittenThrough(t *testing.T) {
	full := testtool.FullDevice(t)
	dir := filepath.Dir(full)
	before := names(t, dir)
	if err := CheckWritable(full); err != nil {
		t.Fatalf("CheckWritable: %v", err)
	}
	err := WriteAtomic(full, writeDoc)
	if !errors.Is(err, syscall.ENOSPC) || !strings.HasPrefix(err.Error(), full+": ") {
		t.Errorf("error %v, want ENOSPC naming %s", err, full)
	}
	if m := mode(full); m.Type() != fs.ModeDevice|fs.ModeCharDevice {
		t.Errorf("%s is no longer a character device: %v", full, m)
	}
	if got := names(t, dir); !slices.Equal(got, before) {
		t.Errorf("%s holds %q, held %q", dir, got, before)
	}
}

// A directory or a socket is an error before anything is written.
func TestNotAFile(t *testing.T) {
	dir := t.TempDir()
	sock := filepath.Join(dir, "s")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	for _, fn := range []func(string) error{CheckWritable, func(n string) error { return WriteAtomic(n, writeDoc) }} {
		if err := fn(dir); err == nil || err.Error() != dir+": is a directory" {
			t.Errorf("directory: %v", err)
		}
		if err := fn(sock); err == nil || err.Error() != sock+": is a socket" {
			t.Errorf("socket: %v", err)
		}
	}
	wantNames(t, dir, "s")
}

// A new file, and a regular file replaced: the plain cases, with no
// temporary file left.
func TestRegularFileReplaced(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "r.json")
	for range 2 {
		if err := CheckWritable(name); err != nil {
			t.Fatal(err)
		}
		if err := WriteAtomic(name, writeDoc); err != nil {
			t.Fatal(err)
		}
		wantContent(t, name, doc)
		wantNames(t, dir, "r.json")
	}
	failing := errors.New("the writer failed")
	if err := WriteAtomic(name, func(io.Writer) error { return failing }); !errors.Is(err, failing) {
		t.Errorf("error %v, want the writer's", err)
	}
	wantContent(t, name, doc) // the file as it was
	wantNames(t, dir, "r.json")
}

// /dev/fd/N (as /dev/stdout) is written through descriptor N itself: what the
// process writes on N before and after comes before and after the document,
// in one file that stays where it was.
func TestOwnDescriptorWrittenThrough(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "stdout.txt")
	f, err := os.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fdName := "/dev/fd/" + strconv.Itoa(int(f.Fd()))
	if _, err := os.Stat(fdName); err != nil {
		t.Skipf("no %s: %v", fdName, err)
	}
	io.WriteString(f, "report\n")
	if err := CheckWritable(fdName); err != nil {
		t.Fatal(err)
	}
	if err := WriteAtomic(fdName, writeDoc); err != nil {
		t.Fatal(err)
	}
	io.WriteString(f, "after\n")
	wantContent(t, name, "report\n"+doc+"after\n")
	wantNames(t, dir, "stdout.txt")

	ro, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	roName := "/dev/fd/" + strconv.Itoa(int(ro.Fd()))
	if err := CheckWritable(roName); err == nil || !strings.HasPrefix(err.Error(), roName+": cannot write there: ") {
		t.Errorf("a descriptor open for reading: %v, want it cannot be written", err)
	}
}

// TestCreateIsWriteOnly: -e, -g, --hlog and sweep's tables open their files
// as ab's fopen("wb") does, write-only and truncated, so a path that may be
// written but not read (a write-only device or FIFO) works as with ab.
func TestCreateIsWriteOnly(t *testing.T) {
	name := filepath.Join(t.TempDir(), "out.csv")
	if err := os.WriteFile(name, []byte("old content, longer than the new"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := Create(name)
	if err != nil {
		t.Fatal(err)
	}
	flags, err := unix.FcntlInt(f.Fd(), unix.F_GETFL, 0)
	if err != nil {
		t.Fatal(err)
	}
	if flags&unix.O_ACCMODE != unix.O_WRONLY {
		t.Errorf("opened with access mode %#o, want O_WRONLY", flags&unix.O_ACCMODE)
	}
	if err := WriteClose(f, writeDoc); err != nil {
		t.Fatal(err)
	}
	var want strings.Builder
	writeDoc(&want)
	wantContent(t, name, want.String())
}
