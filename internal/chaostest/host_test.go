package chaostest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/kopf-wasm/kopf-wasm/internal/testenv"
)

// cli is the kopf-wasm binary the tests run, built once per test binary,
// and the compile cache its processes share (KOPF_WASM_CACHE), filled once.
var cli struct {
	once sync.Once
	dir  string
	path string
	err  error

	warm     sync.Once
	cache    string
	warmErr  error
	warmTime time.Duration
}

func TestMain(m *testing.M) {
	code := m.Run()
	if cli.dir != "" {
		_ = os.RemoveAll(cli.dir)
	}
	os.Exit(code)
}

// kopfWasm builds cmd/kopf-wasm (once) and returns the binary's path.
func kopfWasm(t testing.TB) string {
	t.Helper()
	testenv.SkipIfShort(t) // every caller then starts the control plane
	cli.once.Do(func() {
		root, err := testenv.RepoRoot()
		if err != nil {
			cli.err = err
			return
		}
		if cli.dir, err = os.MkdirTemp("", "chaostest-cli-"); err != nil {
			cli.err = err
			return
		}
		cli.path = filepath.Join(cli.dir, "kopf-wasm")
		cmd := exec.Command("go", "build", "-o", cli.path, "./cmd/kopf-wasm")
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			cli.err = fmt.Errorf("go build ./cmd/kopf-wasm: %w\n%s", err, out)
		}
	})
	if cli.err != nil {
		t.Fatal(cli.err)
	}
	return cli.path
}

// compileCache returns the hosts' KOPF_WASM_CACHE, with the module
// compiled into it (by `kopf-wasm inspect`, through the same cache) before
// the first host starts: a host killed while it compiles would leave the
// next one to compile again.
func compileCache(t testing.TB, module string) string {
	t.Helper()
	bin := kopfWasm(t)
	cli.warm.Do(func() {
		cli.cache = filepath.Join(cli.dir, "cache")
		begin := time.Now()
		cmd := exec.Command(bin, "inspect", module)
		cmd.Env = append(os.Environ(), "KOPF_WASM_CACHE="+cli.cache)
		if out, err := cmd.CombinedOutput(); err != nil {
			cli.warmErr = fmt.Errorf("kopf-wasm inspect %s: %w\n%s", module, err, out)
		}
		cli.warmTime = time.Since(begin)
	})
	if cli.warmErr != nil {
		t.Fatal(cli.warmErr)
	}
	return cli.cache
}

// hostProc is one `kopf-wasm run` process, its log (JSON lines) in a file.
type hostProc struct {
	n       int // its number in the test, from 0
	cmd     *exec.Cmd
	logPath string
	started time.Time
	exited  chan struct{} // closed when the process has ended
	err     error         // Wait's, once exited is closed
	killed  time.Time     // when the test SIGKILLed it (zero otherwise)
}

// startHost starts `kopf-wasm run` with args (the module last), logging
// JSON at the given level into a file of the test's.
func startHost(t testing.TB, n int, cache string, args ...string) *hostProc {
	t.Helper()
	p := &hostProc{n: n, logPath: filepath.Join(t.TempDir(), fmt.Sprintf("host-%03d.log", n)), exited: make(chan struct{})}
	f, err := os.Create(p.logPath)
	if err != nil {
		t.Fatal(err)
	}
	p.cmd = exec.Command(kopfWasm(t), append([]string{"run", "--standalone", "--log-format", "json"}, args...)...)
	p.cmd.Env = append(os.Environ(), "KOPF_WASM_CACHE="+cache)
	p.cmd.Stdout, p.cmd.Stderr = f, f
	p.started = time.Now()
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		p.err = p.cmd.Wait()
		_ = f.Close()
		close(p.exited)
	}()
	t.Cleanup(p.kill)
	return p
}

// running reports whether the process has not ended.
func (p *hostProc) running() bool {
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// kill SIGKILLs the process (if it still runs) and waits for its end.
func (p *hostProc) kill() {
	if p.running() {
		p.killed = time.Now()
		_ = p.cmd.Process.Signal(syscall.SIGKILL)
	}
	<-p.exited
}

// stop ends the process as SIGTERM does and waits up to d for it, then
// kills it; it reports Wait's error, or that it had to kill.
func (p *hostProc) stop(d time.Duration) error {
	if !p.running() {
		return p.err
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
		return p.err
	case <-time.After(d):
		p.kill()
		return fmt.Errorf("host %d did not stop within %s of SIGTERM", p.n, d)
	}
}

// signal sends sig (SIGSTOP, SIGCONT) to the process.
func (p *hostProc) signal(t testing.TB, sig syscall.Signal) {
	t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		t.Fatalf("host %d: %s: %v", p.n, sig, err)
	}
}

// firstCall waits up to d until the process logged its first handler call
// (or ended) and returns when it saw that.
func (p *hostProc) firstCall(d time.Duration) time.Time {
	return p.logged(`"msg":"call"`, nil, d)
}

// watching waits up to d until the process serves (it logged that it
// watches the resource).
func (p *hostProc) watching(d time.Duration) {
	p.logged(`"msg":"watching"`, nil, d)
}

// logged waits until the process's log has text (or the process ended,
// stop is closed or, unless zero, within passed) and returns when it saw
// that.
func (p *hostProc) logged(text string, stop <-chan struct{}, within time.Duration) time.Time {
	var deadline <-chan time.Time
	if within > 0 {
		deadline = time.After(within)
	}
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for !strings.Contains(p.logText(), text) {
		select {
		case <-tick.C:
		case <-p.exited:
			return time.Now()
		case <-stop:
			return time.Now()
		case <-deadline:
			return time.Now()
		}
	}
	return time.Now()
}

// logText is the process's log so far.
func (p *hostProc) logText() string {
	b, _ := os.ReadFile(p.logPath)
	return string(b)
}

// tail is the end of the process's log, for failure messages.
func (p *hostProc) tail(lines int) string {
	all := strings.Split(strings.TrimRight(p.logText(), "\n"), "\n")
	return strings.Join(all[max(0, len(all)-lines):], "\n")
}

// record is one JSON log record of a host.
type record struct {
	Time    time.Time `json:"time"`
	Level   string    `json:"level"`
	Msg     string    `json:"msg"`
	Handler string    `json:"handler"`
	Object  struct {
		Name string `json:"name"`
	} `json:"object"`
	Name string `json:"name"` // the object's, where it is not in the group "object"
	// The conformance guest's "call" records.
	Reason string   `json:"reason"`
	Retry  int      `json:"retry"`
	Step   *float64 `json:"step"`
	Error  string   `json:"error"`
}

// records parses the process's log. A line that is not JSON (a partial
// last line after a SIGKILL, or a Go runtime message) is skipped.
func (p *hostProc) records() []record {
	var out []record
	sc := bufio.NewScanner(bytes.NewReader([]byte(p.logText())))
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for sc.Scan() {
		var r record
		if json.Unmarshal(sc.Bytes(), &r) == nil && r.Msg != "" {
			if r.Object.Name == "" {
				r.Object.Name = r.Name
			}
			out = append(out, r)
		}
	}
	return out
}

// warnings are a process's records at level WARN and ERROR, one line each,
// with their time relative to since.
func warnings(recs []record, since time.Time) string {
	var out []string
	for _, r := range recs {
		if r.Level == "WARN" || r.Level == "ERROR" {
			out = append(out, fmt.Sprintf("%+.2fs %s %s %s", r.Time.Sub(since).Seconds(), r.Level, r.Msg, r.Error))
		}
	}
	return strings.Join(out, "\n")
}
