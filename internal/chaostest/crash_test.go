package chaostest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kopf-wasm/kopf-wasm/host/settings"
	"github.com/kopf-wasm/kopf-wasm/internal/testenv"
)

// crashPlan is the size of a crash loop.
type crashPlan struct {
	objects, kills int
	updates        int // spec.step changes per object
}

// The short version runs in `make test`; KOPF_WASM_CHAOS=long (`make
// chaos`) runs the long one.
var (
	shortCrash = crashPlan{objects: 200, kills: 30, updates: 2}
	longCrash  = crashPlan{objects: 600, kills: 100, updates: 2}
)

// A kill comes at a random moment: one in three while the process starts
// (up to startKill after its start: loading the module, listing), the
// others while it handles (up to handlingKill after its first handler
// call).
const (
	startKill    = 3 * time.Second
	handlingKill = 1500 * time.Millisecond
)

// killMoment is when to kill a process: its delay, and whether it counts
// from the first handler call rather than from the start.
type killMoment struct {
	delay    time.Duration
	handling bool
}

// killMoments draws the kills' moments.
func killMoments(rng *rand.Rand, n int) []killMoment {
	out := make([]killMoment, n)
	for i := range out {
		if rng.IntN(3) == 0 {
			out[i] = killMoment{delay: time.Duration(rng.Int64N(int64(startKill)))}
		} else {
			out[i] = killMoment{delay: time.Duration(rng.Int64N(int64(handlingKill))), handling: true}
		}
	}
	return out
}

// TestCrashLoop creates, updates and deletes objects while the host
// process is SIGKILLed at random moments (killMoments: while it starts and
// lists, or while it handles) and started again each time; the compile
// cache is warm, as a restarted pod's would be with a kept cache. Every object's every
// change is handled (the workload waits for each; nothing is lost), each
// handler the guest logged is one the objects needed, and a handler runs
// again only if the process that ran it before was killed before its
// success was stored on the object: repeats never exceed what was in
// flight at the kills.
func TestCrashLoop(t *testing.T) {
	plan := shortCrash
	if os.Getenv("KOPF_WASM_CHAOS") == "long" {
		plan = longCrash
	}
	s := seed(t)
	moments := killMoments(rand.New(rand.NewPCG(s, 0)), plan.kills)
	c := newCluster(t, testenv.Options{}, "")
	tr := track(t, c)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	w := &workload{c: c, tr: tr, seed: s, updates: plan.updates, think: 300 * time.Millisecond}
	begin := time.Now()
	// The objects start in batches, one with each killed process, so that
	// the workload spans the kills however fast the machine is.
	next := 0
	startBatch := func(k int) {
		for ; next < (k+1)*plan.objects/plan.kills; next++ {
			w.start(ctx, next, time.Now())
		}
	}
	startBatch(0)

	var procs []*hostProc
	var inFlightAt []map[callKey]bool
	var all []call
	maxInFlight, handling := 0, 0
	for k := range plan.kills {
		p := c.startHost(k, c.env.Kubeconfig)
		procs = append(procs, p)
		if k > 0 {
			startBatch(k)
		}
		from := p.started
		if moments[k].handling {
			from = p.firstCall(2 * time.Minute) // its batch, at least, is there to handle
		}
		select {
		case <-time.After(time.Until(from.Add(moments[k].delay))):
		case <-p.exited:
			t.Fatalf("host %d ended by itself (%v); its log's end:\n%s", k, p.err, p.tail(40))
		}
		p.kill()
		snap := snapshotNow(t, c)
		cs := calls(k, p.records())
		if len(cs) > 0 {
			handling++
		}
		all = append(all, cs...)
		inFlightAt = append(inFlightAt, inFlight(cs, snap))
		maxInFlight = max(maxInFlight, len(inFlightAt[k]))
	}
	killsDone := time.Now()
	finished := make(chan []error, 1)
	go func() { finished <- w.wait() }() // every lifecycle has started
	last := c.startHost(plan.kills, c.env.Kubeconfig)
	procs = append(procs, last)
	inFlightAt = append(inFlightAt, nil)

	var errs []error
	select {
	case errs = <-finished:
	case <-time.After(3 * time.Minute):
		cancel() // the waits end with what they last saw
		errs = append(<-finished, fmt.Errorf("the workload did not end within 3 minutes of the last kill"))
	case <-last.exited:
		t.Fatalf("the last host ended by itself (%v); its log's end:\n%s", last.err, last.tail(40))
	}
	drained := time.Now()
	last.watching(time.Minute) // a SIGTERM before it listens for signals would kill it
	if err := last.stop(30 * time.Second); err != nil {
		t.Errorf("the last host, stopped with SIGTERM: %v", err)
	}
	all = append(all, calls(plan.kills, last.records())...)
	for _, err := range errs {
		t.Error(err)
	}

	// Every change the objects needed was handled by a call of its handler.
	var want []callKey
	for i := range plan.objects {
		name := objectName(i)
		want = append(want, callKey{name, "create_fn", -1}, callKey{name, "delete_fn", -1})
		for step := 1; step <= plan.updates; step++ {
			want = append(want, callKey{name, "update_fn", step})
		}
	}
	if m := missing(all, want); len(m) > 0 {
		t.Errorf("%d handler calls missing: %s", len(m), strings.Join(m[:min(20, len(m))], ", "))
	}
	wanted := map[callKey]bool{}
	for _, k := range want {
		wanted[k] = true
	}
	for _, cl := range all {
		if !wanted[cl.key] {
			t.Errorf("host %d called %s, which no change asked for", cl.proc, cl.key)
		}
	}
	if left := snapshotNow(t, c); len(left) > 0 {
		t.Errorf("%d objects left after the workload (finalizers not released?)", len(left))
	}

	a := auditCalls(all, inFlightAt)
	for _, u := range a.unjust {
		t.Errorf("handled again after its success was stored: %s", u)
	}
	if workers := settings.Default().Execution.Workers; maxInFlight > workers {
		t.Errorf("%d calls in flight at one kill, more than the %d workers run at once", maxInFlight, workers)
	}
	t.Logf("%d kills (%d of processes that had called handlers), %d objects (%d changes); %d handler calls for %d needed: %d ran again after a kill, of %d in flight at the kills (at most %d at one)",
		plan.kills, handling, plan.objects, len(w.stages), a.calls, len(want), a.repeats, a.inFlight, maxInFlight)
	t.Logf("kills over %s, all handled %s after the last one", killsDone.Sub(begin).Round(time.Second), drained.Sub(killsDone).Round(100*time.Millisecond))
	reportRestarts(t, w, procs)
}

// snapshotNow lists the objects, retrying for a while.
func snapshotNow(t testing.TB, c *cluster) map[string]*unstructured.Unstructured {
	t.Helper()
	var snap map[string]*unstructured.Unstructured
	if err := waitFor(30*time.Second, func() (err error) {
		snap, err = c.snapshot(context.Background())
		return err
	}); err != nil {
		t.Fatalf("listing the objects: %v", err)
	}
	return snap
}

// reportRestarts logs how long each restarted process took to make its
// first handler call and to handle the changes left from before its start.
func reportRestarts(t testing.TB, w *workload, procs []*hostProc) {
	var first, caught []time.Duration
	behind := 0
	for i, p := range procs {
		if cs := calls(i, p.records()); len(cs) > 0 {
			first = append(first, cs[0].at.Sub(p.started))
		}
		d, pending, ok := w.catchUp(p.started, p.killed)
		switch {
		case pending == 0:
		case ok:
			caught = append(caught, d)
		default:
			behind++
		}
	}
	t.Logf("start to first handler call: %s", durations(first))
	t.Logf("start to every earlier change handled: %s; %d processes were killed before that", durations(caught), behind)
}
