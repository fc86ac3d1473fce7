package host_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kopf-wasm/kopf-wasm/host/settings"
	"github.com/kopf-wasm/kopf-wasm/internal/wasmtest"
)

// buildCLI builds the kopf-wasm command into a temporary folder.
func buildCLI(t testing.TB) string {
	t.Helper()
	root, err := wasmtest.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "kopf-wasm")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/kopf-wasm")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/kopf-wasm: %v\n%s", err, out)
	}
	return bin
}

// call is one handler success from a replica's JSON log.
type call struct {
	replica, handler, object string
	at                       time.Time
}

// jsonLog reads a replica's JSON log as it grows.
type jsonLog struct {
	replica string
	p       *hostProcess
	off     int
	calls   []call
}

// read parses the complete lines written since the last read.
func (l *jsonLog) read(t testing.TB) {
	b, _ := os.ReadFile(l.p.log)
	end := bytes.LastIndexByte(b, '\n') + 1
	if end <= l.off {
		return
	}
	sc := bufio.NewScanner(bytes.NewReader(b[l.off:end]))
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var rec struct {
			Time   time.Time `json:"time"`
			Msg    string    `json:"msg"`
			Object struct {
				Name string `json:"name"`
			} `json:"object"`
		}
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			continue // the Go runtime's or a library's plain line
		}
		id, ok := strings.CutPrefix(rec.Msg, "Handler '")
		if id, ok2 := strings.CutSuffix(id, "' succeeded."); ok && ok2 {
			l.calls = append(l.calls, call{replica: l.replica, handler: id, object: rec.Object.Name, at: rec.Time})
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("%s's log: %v", l.replica, err)
	}
	l.off = end
}

// shardProcs are `kopf-wasm run --shards` processes.
type shardProcs struct {
	e    *peerEnv
	dir  string // of the logs, kept when the test fails
	cli  string
	args []string
	logs map[string]*jsonLog
}

// start starts the replica id (its shard identity: POD_NAME).
func (s *shardProcs) start(id string) {
	s.e.t.Helper()
	log := filepath.Join(s.dir, id+".log")
	f, err := os.Create(log)
	if err != nil {
		s.e.t.Fatal(err)
	}
	cmd := exec.Command(s.cli, s.args...)
	cmd.Env = append(os.Environ(), "POD_NAME="+id, "KOPF_WASM_CACHE="+s.e.cache)
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		s.e.t.Fatal(err)
	}
	p := &hostProcess{cmd: cmd, log: log}
	s.e.t.Cleanup(func() {
		p.kill()
		_ = f.Close()
	})
	s.logs[id] = &jsonLog{replica: id, p: p}
}

// calls returns every handler success logged so far, by handler and object.
func (s *shardProcs) calls() map[string]map[string][]call {
	out := map[string]map[string][]call{}
	for _, l := range s.logs {
		l.read(s.e.t)
		for _, c := range l.calls {
			if out[c.handler] == nil {
				out[c.handler] = map[string][]call{}
			}
			out[c.handler][c.object] = append(out[c.handler][c.object], c)
		}
	}
	for _, byObject := range out {
		for _, cs := range byObject {
			slices.SortFunc(cs, func(a, b call) int { return a.at.Compare(b.at) })
		}
	}
	return out
}

// settled waits until every replica of ids logs a settled view of exactly
// them.
func (s *shardProcs) settled(ids ...string) {
	s.e.t.Helper()
	members := fmt.Sprintf("%d members (%s)", len(ids), strings.Join(slices.Sorted(slices.Values(ids)), ", "))
	for _, id := range ids {
		e2eWait(s.e.t, 120*time.Second, id+" settles on "+members, func() bool {
			return strings.Contains(s.logs[id].p.logs(), members)
		})
	}
}

// TestShardingProcesses: three `kopf-wasm run --shards` processes (the CLI,
// default sharding settings) share 600 objects, 24 of them with a 0.5 s
// timer (the killed replica owns none of those once in ~16,000 runs). In
// the middle of the updates one replica is SIGKILLed (its Lease stays
// until it expires) and a fourth starts. From the processes' JSON logs:
// every object's create and update handlers ran on exactly one replica (a
// cycle the SIGKILL cut after the call, before its outcome was written,
// runs once more on the new owner: at most one per worker), none is lost,
// and each timer ticked on one replica at a time, resuming on the new
// owner of the killed replica's objects.
func TestShardingProcesses(t *testing.T) {
	e := newPeerEnv(t)
	cli := buildCLI(t)
	config := filepath.Join(t.TempDir(), "settings.yaml")
	if err := os.WriteFile(config, []byte("posting:\n  enabled: false\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "sharding-e2e-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the replicas' logs are kept in %s", dir)
			return
		}
		_ = os.RemoveAll(dir)
	})
	s := &shardProcs{e: e, cli: cli, dir: dir, logs: map[string]*jsonLog{},
		args: []string{"run", "--kubeconfig", e.env.Kubeconfig, "-n", "default", "--shards", "--shard-namespace", "default",
			"--log-format", "json", "-v", "--config", config,
			wasmtest.Path(t, "kopfexample"), wasmtest.Path(t, "testguests/spawning")}}
	for _, id := range []string{"r1", "r2", "r3"} {
		s.start(id)
	}
	s.settled("r1", "r2", "r3")

	const objects, timerEvery = 600, 25
	name := func(i int) string { return fmt.Sprintf("obj-%03d", i) }
	for i := range objects {
		obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "kopf.dev/v1", "kind": "KopfExample",
			"metadata": map[string]any{"name": name(i)}, "spec": map[string]any{"field": "v1"}}}
		if i%timerEvery == 0 {
			obj.SetLabels(map[string]string{"mode": "timer"})
		}
		if _, err := e.ex.Create(context.Background(), obj, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	e2eWait(t, 300*time.Second, "every object's create handler", func() bool { return len(s.calls()["create_fn"]) == objects })
	perReplica := map[string]int{}
	for _, cs := range s.calls()["create_fn"] {
		perReplica[cs[0].replica]++
	}
	t.Logf("created: objects per replica %v", perReplica)

	var killedAt time.Time
	for i := range objects {
		patch := []byte(`{"spec":{"field":"v2"}}`)
		if _, err := e.ex.Patch(context.Background(), name(i), types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
		if i == objects/2 {
			s.logs["r1"].p.kill()
			killedAt = time.Now()
			s.start("r4")
		}
	}
	e2eWait(t, 300*time.Second, "every object's update handler", func() bool { return len(s.calls()["update_fn"]) == objects })
	s.settled("r2", "r3", "r4")
	for i := range objects {
		if msg := statusMessage(e, name(i), "update_fn"); msg != "updated" {
			t.Errorf("%s: status.update_fn.message %q, want \"updated\"", name(i), msg)
		}
	}
	time.Sleep(3 * time.Second) // room for a second call to show
	calls := s.calls()
	checkOnce(t, calls, objects, name, killedAt)
	checkTimers(t, calls["tick"], objects, timerEvery, name, killedAt)
}

// statusMessage is status.<id>.message of the object.
func statusMessage(e *peerEnv, name, id string) string {
	obj, err := e.ex.Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		return ""
	}
	msg, _, _ := unstructured.NestedString(obj.Object, "status", id, "message")
	return msg
}

// checkOnce checks that each object's create and update handlers ran
// once, but for the calls the SIGKILL cut (the killed replica's last ones
// run again by the new owner), and reports how long the killed replica's
// objects waited.
func checkOnce(t *testing.T, calls map[string]map[string][]call, objects int, name func(int) string, killedAt time.Time) {
	t.Helper()
	var cut []string
	for _, handler := range []string{"create_fn", "update_fn"} {
		for i := range objects {
			cs := calls[handler][name(i)]
			switch {
			case len(cs) == 1:
			case len(cs) == 2 && handler == "update_fn" && cs[0].replica == "r1" && cs[1].replica != "r1" &&
				!cs[0].at.After(killedAt):
				cut = append(cut, name(i))
			default:
				t.Errorf("%s of %s: %d calls %v, want one", handler, name(i), len(cs), cs)
			}
		}
	}
	// The killed replica's objects wait for its Lease to expire: from
	// the kill to their update on another replica.
	owner := map[string]string{}
	for object, cs := range calls["create_fn"] {
		owner[object] = cs[0].replica
	}
	var waited, toR4 []time.Duration
	for object, cs := range calls["update_fn"] {
		last := cs[len(cs)-1]
		switch {
		case owner[object] == "r1" && last.replica != "r1":
			waited = append(waited, last.at.Sub(killedAt))
		case last.replica == "r4":
			toR4 = append(toR4, last.at.Sub(killedAt))
		}
	}
	for _, cs := range calls["update_fn"] {
		for _, c := range cs {
			if c.replica == "r1" && c.at.After(killedAt) {
				t.Errorf("the killed replica logged a call at %s, after its SIGKILL at %s", c.at, killedAt)
			}
		}
	}
	if workers := settings.Default().Execution.Workers; len(cut) > workers {
		t.Errorf("%d updates ran again after the SIGKILL (more than the %d cycles in flight): %v", len(cut), workers, cut)
	}
	t.Logf("SIGKILL of r1: %d updates cut and run again %v; %d of r1's objects updated elsewhere %s after the kill; "+
		"%d objects of r2 and r3 moved to r4 (started at the kill), updated there %s after it", len(cut), cut,
		len(waited), spread(waited), len(toR4), spread(toR4))
}

// spread is "first to last" of durations.
func spread(ds []time.Duration) string {
	if len(ds) == 0 {
		return "(none)"
	}
	slices.Sort(ds)
	return fmt.Sprintf("%s to %s", ds[0].Round(time.Millisecond), ds[len(ds)-1].Round(time.Millisecond))
}

// checkTimers checks that each timer ticked on one replica at a time (its
// ticks never go back to a replica they left, which two replicas ticking
// at once would show), never on the killed replica after its SIGKILL, and
// last on a live replica.
func checkTimers(t *testing.T, ticks map[string][]call, objects, every int, name func(int) string, killedAt time.Time) {
	t.Helper()
	var resumed []time.Duration
	for i := 0; i < objects; i += every {
		cs := ticks[name(i)]
		if len(cs) == 0 {
			t.Errorf("timer of %s never ticked", name(i))
			continue
		}
		var owners []string
		for j, c := range cs {
			if c.replica == "r1" && c.at.After(killedAt) {
				t.Errorf("timer of %s ticked on the killed replica at %s", name(i), c.at)
			}
			if len(owners) > 0 && owners[len(owners)-1] == c.replica {
				continue
			}
			if slices.Contains(owners, c.replica) {
				t.Errorf("timer of %s ticked on %v in turn: on two replicas at once", name(i), append(owners, c.replica))
			}
			if j > 0 && cs[j-1].replica == "r1" {
				resumed = append(resumed, c.at.Sub(killedAt))
			}
			owners = append(owners, c.replica)
		}
		last := cs[len(cs)-1]
		if last.replica == "r1" {
			t.Errorf("timer of %s ticked last on the killed replica", name(i))
		} else if time.Since(last.at) > 10*time.Second {
			t.Errorf("timer of %s stopped ticking: last tick on %s at %s", name(i), last.replica, last.at)
		}
	}
	if len(resumed) == 0 {
		t.Errorf("no timer of the killed replica resumed on another (it owned none? %d timers)", objects/every)
	}
	t.Logf("timers: %d of %d were the killed replica's; they resumed on their new owners %s after the kill",
		len(resumed), objects/every, spread(resumed))
}
