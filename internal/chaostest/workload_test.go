package chaostest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"
)

// seed is the tests' random seed: $KOPF_WASM_CHAOS_SEED, else the clock.
// It is logged, so that a failing schedule can be replayed.
func seed(t testing.TB) uint64 {
	t.Helper()
	s := uint64(time.Now().UnixNano())
	if env := os.Getenv("KOPF_WASM_CHAOS_SEED"); env != "" {
		v, err := strconv.ParseUint(env, 10, 64)
		if err != nil {
			t.Fatalf("KOPF_WASM_CHAOS_SEED=%q: %v", env, err)
		}
		s = v
	}
	t.Logf("seed %d (KOPF_WASM_CHAOS_SEED=%d replays this schedule)", s, s)
	return s
}

// stage is one change the workload made and when the host had handled it.
type stage struct {
	object, what string
	issued, done time.Time // done is zero while not handled
}

// workload creates objects, changes spec.step a number of times and
// deletes them, one object after another at a steady pace, each change
// after the host handled the previous one, and records every stage.
type workload struct {
	c       *cluster
	tr      *tracker
	seed    uint64
	updates int           // spec.step changes per object
	think   time.Duration // up to this long between an object's stages

	mu     sync.Mutex
	stages []*stage
	errs   []error
	wg     sync.WaitGroup
}

// start starts object i's lifecycle at the given time.
func (w *workload) start(ctx context.Context, i int, at time.Time) {
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		select {
		case <-time.After(time.Until(at)):
		case <-ctx.Done():
			return
		}
		if err := w.lifecycle(ctx, i); err != nil {
			w.mu.Lock()
			w.errs = append(w.errs, err)
			w.mu.Unlock()
		}
	}()
}

// lifecycle creates object i, updates it and deletes it, each change once
// the host handled the previous one.
func (w *workload) lifecycle(ctx context.Context, i int) error {
	name := objectName(i)
	rng := rand.New(rand.NewPCG(w.seed, uint64(i)+1))
	pause := func() {
		select {
		case <-time.After(time.Duration(rng.Int64N(int64(w.think) + 1))):
		case <-ctx.Done():
		}
	}
	if err := w.stage(ctx, name, "create", func() error { return w.c.create(ctx, name) },
		func() (time.Time, error) { return w.tr.handled(ctx, name, 0) }); err != nil {
		return err
	}
	for step := 1; step <= w.updates; step++ {
		pause()
		if err := w.stage(ctx, name, fmt.Sprintf("update to step %d", step), func() error { return w.c.setStep(ctx, name, step) },
			func() (time.Time, error) { return w.tr.handled(ctx, name, step) }); err != nil {
			return err
		}
	}
	pause()
	return w.stage(ctx, name, "delete", func() error { return w.c.remove(ctx, name) },
		func() (time.Time, error) { return w.tr.gone(ctx, name) })
}

// stage makes one change and waits until the host handled it.
func (w *workload) stage(ctx context.Context, name, what string, change func() error, handled func() (time.Time, error)) error {
	s := &stage{object: name, what: what, issued: time.Now()}
	w.mu.Lock()
	w.stages = append(w.stages, s)
	w.mu.Unlock()
	if err := change(); err != nil {
		return fmt.Errorf("%s: %s: %w", name, what, err)
	}
	done, err := handled()
	if err != nil {
		return fmt.Errorf("%s: %s never handled (lost): %w", name, what, err)
	}
	w.mu.Lock()
	s.done = done
	w.mu.Unlock()
	return nil
}

// wait waits for every lifecycle started so far to end and returns their
// errors.
func (w *workload) wait() []error {
	w.wg.Wait()
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.errs
}

// catchUp is, for a host process that ran from start to end (zero: it was
// not stopped), how long it took to handle every change made before it
// started and not handled yet; pending is how many there were, and ok is
// false when it ended first.
func (w *workload) catchUp(start, end time.Time) (d time.Duration, pending int, ok bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	var last time.Time
	for _, s := range w.stages {
		if !s.issued.Before(start) || (!s.done.IsZero() && s.done.Before(start)) {
			continue
		}
		pending++
		if s.done.IsZero() || (!end.IsZero() && s.done.After(end)) {
			return 0, pending, false
		}
		if s.done.After(last) {
			last = s.done
		}
	}
	if pending == 0 {
		return 0, 0, true
	}
	return last.Sub(start), pending, true
}

// durations summarises durations: median, 90th percentile and maximum.
func durations(ds []time.Duration) string {
	if len(ds) == 0 {
		return "none"
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	pick := func(q float64) time.Duration {
		return s[min(len(s)-1, int(q*float64(len(s))))].Round(10 * time.Millisecond)
	}
	return fmt.Sprintf("median %s, p90 %s, max %s (%d)", pick(0.5), pick(0.9), s[len(s)-1].Round(10*time.Millisecond), len(s))
}
