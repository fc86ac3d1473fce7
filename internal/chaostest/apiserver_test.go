package chaostest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/kopf-wasm/kopf-wasm/internal/testenv"
)

// objects is a helper for tests that change a few objects by number and
// wait for the host.
type objects struct {
	t  testing.TB
	c  *cluster
	tr *tracker
}

// do applies change to each object of the numbers, failing the test on an
// error.
func (o objects) do(what string, nums []int, change func(ctx context.Context, name string) error) {
	o.t.Helper()
	for _, i := range nums {
		if err := change(context.Background(), objectName(i)); err != nil {
			o.t.Fatalf("%s %s: %v", what, objectName(i), err)
		}
	}
}

// handled waits until the host handled each object at the step, and
// returns when the last one was seen so.
func (o objects) handled(nums []int, step int, within time.Duration) time.Time {
	o.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	var last time.Time
	for _, i := range nums {
		at, err := o.tr.handled(ctx, objectName(i), step)
		if err != nil {
			o.t.Fatal(err)
		}
		last = at
	}
	return last
}

// gone waits until each object is deleted.
func (o objects) gone(nums []int, within time.Duration) time.Time {
	o.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	var last time.Time
	for _, i := range nums {
		at, err := o.tr.gone(ctx, objectName(i))
		if err != nil {
			o.t.Fatal(err)
		}
		last = at
	}
	return last
}

// span is the numbers from, from+1, ..., to-1.
func span(from, to int) []int {
	out := make([]int, 0, to-from)
	for i := from; i < to; i++ {
		out = append(out, i)
	}
	return out
}

// keys are the call keys of a handler for the objects of the numbers.
func keys(handler string, step int, nums ...[]int) []callKey {
	var out []callKey
	for _, ns := range nums {
		for _, i := range ns {
			out = append(out, callKey{object: objectName(i), handler: handler, step: step})
		}
	}
	return out
}

// TestAPIServerRestart stops kube-apiserver and starts it again on the same
// etcd while the host runs: some create handlers are running (they sleep
// 3 s) when it stops, so their results are written while it is down or
// coming back, and objects change just before the stop and just after the
// start. No change is lost and every handler runs exactly once.
func TestAPIServerRestart(t *testing.T) {
	kopfWasm(t)
	c := newCluster(t, testenv.Options{}, "")
	tr := track(t, c)
	o := objects{t: t, c: c, tr: tr}
	host := c.startHost(0, c.env.Kubeconfig)

	settled, blocking, late := span(0, 20), span(100, 110), span(200, 210)
	o.do("create", settled, c.create)
	o.handled(settled, 0, 2*time.Minute)
	o.do("create", blocking, func(ctx context.Context, name string) error { return c.createBlocking(ctx, name, 3) })
	if err := waitFor(time.Minute, func() error {
		if n := countCalls(calls(0, host.records()), "create_fn", blocking); n < len(blocking) {
			return fmt.Errorf("%d of %d blocking create handlers started", n, len(blocking))
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	o.do("update", settled[:10], func(ctx context.Context, name string) error { return c.setStep(ctx, name, 1) })

	stopping := time.Now()
	if err := c.env.StopAPIServer(); err != nil {
		t.Fatal(err)
	}
	stopped := time.Now()
	if err := c.env.StartAPIServer(); err != nil {
		t.Fatal(err)
	}
	up := time.Now()
	o.do("update", settled[10:], func(ctx context.Context, name string) error { return c.setStep(ctx, name, 1) })
	o.do("create", late, c.create)

	lastChange := o.handled(settled, 1, 3*time.Minute)
	lastChange = latest(lastChange, o.handled(blocking, 0, 3*time.Minute), o.handled(late, 0, 3*time.Minute))
	t.Logf("kube-apiserver stopped in %s, down %s; every change handled %s after it answered again",
		stopped.Sub(stopping).Round(10*time.Millisecond), up.Sub(stopped).Round(10*time.Millisecond), lastChange.Sub(up).Round(10*time.Millisecond))

	everything := [][]int{settled, blocking, late}
	for _, nums := range everything {
		o.do("delete", nums, c.remove)
	}
	for _, nums := range everything {
		o.gone(nums, 2*time.Minute)
	}
	if !host.running() {
		t.Fatalf("the host ended (%v); its log's end:\n%s", host.err, host.tail(40))
	}
	if err := host.stop(30 * time.Second); err != nil {
		t.Errorf("the host, stopped with SIGTERM: %v", err)
	}
	want := append(keys("create_fn", -1, everything...), keys("delete_fn", -1, everything...)...)
	want = append(want, keys("update_fn", 1, settled)...)
	exactlyOnce(t, calls(0, host.records()), want)
}

// countCalls counts the calls of a handler on the objects of the numbers.
func countCalls(cs []call, handler string, nums []int) int {
	in := map[string]bool{}
	for _, i := range nums {
		in[objectName(i)] = true
	}
	n := 0
	for _, c := range cs {
		if c.key.handler == handler && in[c.key.object] {
			n++
		}
	}
	return n
}

// latest is the latest of the times.
func latest(ts ...time.Time) time.Time {
	var out time.Time
	for _, t := range ts {
		if t.After(out) {
			out = t
		}
	}
	return out
}
