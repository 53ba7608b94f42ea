// Package slurm holds the test of gab-array.sbatch on a real one-node Slurm
// cluster: munged, slurmctld and slurmd started as root from a private
// slurm.conf in a temporary directory, the recipe submitted as a 4-task array
// against a loopback server, then gab merge as a dependent job, as the
// recipe's header says.
package slurm

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"gab/internal/testtool"
)

// daemon starts a program in the foreground and stops it, by its PID, when
// the test ends.
func daemon(t *testing.T, log string, name string, args ...string) {
	t.Helper()
	f, err := os.Create(log)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(name, args...)
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		f.Close()
		testtool.Missing(t, fmt.Sprintf("%s: %v", name, err))
	}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
			<-done
		}
		f.Close()
	})
}

func tail(path string) string {
	b, _ := os.ReadFile(path)
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return string(b)
}

const slurmConf = `ClusterName=gabtest
SlurmctldHost={{host}}
SlurmctldPort={{ctldport}}
SlurmdPort={{dport}}
AuthType=auth/munge
AuthInfo=socket={{dir}}/munge/sock
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
StateSaveLocation={{dir}}/state
SlurmdSpoolDir={{dir}}/spool
SlurmctldPidFile={{dir}}/slurmctld.pid
SlurmdPidFile={{dir}}/slurmd.pid
SlurmctldLogFile={{dir}}/slurmctld.log
SlurmdLogFile={{dir}}/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
SlurmdParameters=config_overrides
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
PlugStackConfig=/dev/null
NodeName={{host}} NodeAddr=127.0.0.1 CPUs=8 State=UNKNOWN
PartitionName=gab Nodes=ALL Default=YES MaxTime=INFINITE State=UP
`

func TestSbatchArrayThenMerge(t *testing.T) {
	munged := testtool.Need(t, "munged", "munge")
	slurmctld := testtool.Need(t, "slurmctld", "slurmctld")
	slurmd := testtool.Need(t, "slurmd", "slurmd")
	sbatch := testtool.Need(t, "sbatch", "slurm-client")
	sinfo := testtool.Need(t, "sinfo", "slurm-client")
	if os.Geteuid() != 0 {
		testtool.Missing(t, "a one-node Slurm cluster needs root (slurmd)")
	}
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	recipe, err := filepath.Abs("gab-array.sbatch")
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "gab-slurm-") // short: the munge socket path has a length limit
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) }) // registered first, so it runs after the daemons stop
	for _, d := range []string{"munge", "state", "spool", "results"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	os.Chmod(dir, 0o755)

	gab := filepath.Join(dir, "gab")
	build := exec.Command("go", "build", "-o", gab, ".")
	build.Dir = "../.."
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}

	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Length", "64")
		io.WriteString(w, strings.Repeat("s", 64))
	}))
	defer srv.Close()

	key := make([]byte, 128)
	for i := range key {
		key[i] = byte(i*7 + 3)
	}
	if err := os.WriteFile(filepath.Join(dir, "munge/key"), key, 0o600); err != nil {
		t.Fatal(err)
	}
	daemon(t, filepath.Join(dir, "munged.out"), munged, "-F", "--force",
		"--key-file="+filepath.Join(dir, "munge/key"), "--socket="+filepath.Join(dir, "munge/sock"),
		"--pid-file="+filepath.Join(dir, "munge/pid"), "--seed-file="+filepath.Join(dir, "munge/seed"),
		"--log-file="+filepath.Join(dir, "munge/log"))
	for i := 0; ; i++ {
		if _, err := os.Stat(filepath.Join(dir, "munge/sock")); err == nil {
			break
		}
		if i == 100 {
			testtool.Missing(t, "munged did not start:\n"+tail(filepath.Join(dir, "munged.out"))+tail(filepath.Join(dir, "munge/log")))
		}
		time.Sleep(50 * time.Millisecond)
	}
	conf := strings.NewReplacer("{{host}}", host, "{{dir}}", dir,
		"{{ctldport}}", strconv.Itoa(testtool.FreePort(t)), "{{dport}}", strconv.Itoa(testtool.FreePort(t))).Replace(slurmConf)
	confPath := filepath.Join(dir, "slurm.conf")
	if err := os.WriteFile(confPath, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	daemon(t, filepath.Join(dir, "slurmctld.out"), slurmctld, "-D", "-i", "-f", confPath)
	daemon(t, filepath.Join(dir, "slurmd.out"), slurmd, "-D", "-f", confPath)
	env := append(os.Environ(), "SLURM_CONF="+confPath)
	for i := 0; ; i++ {
		cmd := exec.Command(sinfo, "-h", "-o", "%t")
		cmd.Env = env
		if out, err := cmd.Output(); err == nil && strings.TrimSpace(string(out)) == "idle" {
			break
		}
		if i == 100 {
			testtool.Missing(t, "Slurm did not start:\n"+tail(filepath.Join(dir, "slurmctld.log"))+tail(filepath.Join(dir, "slurmd.log"))+
				tail(filepath.Join(dir, "slurmctld.out"))+tail(filepath.Join(dir, "slurmd.out")))
		}
		time.Sleep(100 * time.Millisecond)
	}

	// The recipe, as its header says: the array, then gab merge as a job
	// that depends on it.
	const n, c = 400, 8
	results := filepath.Join(dir, "results")
	// Every shard must still find GAB_START_AT ahead when Slurm launches it,
	// or gab refuses it as a start in the past, the array fails and the
	// merge job never runs (sbatch --wait then waits for ctx). Slurm
	// allocates the tasks about 2 s after sbatch here (its scheduler's first
	// pass), more on a loaded machine, so the start is 10 s ahead, given
	// with milliseconds (the recipe takes fractional Unix seconds) rather
	// than truncated to a whole second, which took up to 1 s of the margin.
	startAt := time.Now().Add(10 * time.Second)
	startArg := fmt.Sprintf("%d.%03d", startAt.Unix(), startAt.Nanosecond()/1e6)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	submit := func(args ...string) string {
		t.Helper()
		cmd := exec.CommandContext(ctx, sbatch, args...)
		cmd.Dir = dir
		cmd.Env = append(env, "GAB="+gab, "GAB_URL="+srv.URL+"/", "GAB_OUT="+results,
			fmt.Sprintf("GAB_ARGS=-k -n %d -c %d", n, c),
			"GAB_START_AT="+startArg)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("sbatch %q: %v\n%s\n%s", args, err, out, tail(filepath.Join(dir, "slurmctld.log")))
		}
		return strings.TrimSpace(string(out))
	}
	job := submit("--parsable", "--array=0-3", "--output="+filepath.Join(dir, "gab-%A_%a.out"), recipe)
	job, _, _ = strings.Cut(job, ";")
	report := filepath.Join(results, "report.txt")
	submit("--wait", "--dependency=afterok:"+job, "--output="+report, "--wrap", gab+" merge "+results+"/shard-*.json")

	b, err := os.ReadFile(report)
	if err != nil {
		t.Fatal(err)
	}
	got := string(b)
	shardLogs := ""
	for i := 0; i < 4; i++ {
		shardLogs += tail(filepath.Join(dir, fmt.Sprintf("gab-%s_%d.out", job, i)))
	}
	for _, want := range []string{
		fmt.Sprintf("Complete requests:      %d\n", n), "Failed requests:        0\n",
		fmt.Sprintf("Concurrency Level:      %d\n", c), fmt.Sprintf("Keep-Alive requests:    %d\n", n),
		"Merged:                 4 shards of run " + job + "\n", "Start delays [ms]:",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("merged report lacks %q:\n%s\nshards:\n%s", want, got, shardLogs)
		}
	}
	if hits.Load() != n {
		t.Errorf("the server counted %d requests, the run was -n %d", hits.Load(), n)
	}
}
