package wasmrt

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// hammer runs fn from p goroutines, n times each or until fn returns
// errStop, and returns the other errors.
func hammer(p, n int, fn func(g, i int) error) []error {
	var (
		mu   sync.Mutex
		errs []error
		wg   sync.WaitGroup
	)
	for g := range p {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range n {
				err := fn(g, i)
				if errors.Is(err, errStop) {
					return
				}
				if err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	return errs
}

func TestPoolNeverSharesAnInstance(t *testing.T) {
	const size = 2
	r := newRuntime(t, Options{PoolSize: size, Logger: discardLogger()})
	m := load(t, r, "good")
	var maxLive atomic.Int64
	errs := hammer(8, 25, func(g, i int) error {
		handler := [...]string{"ok", "decode", "echo"}[(g+i)%3]
		resp, err := m.Handle(context.Background(), request(handler, 2048), nil)
		if err == nil && resp.Outcome.Status != "success" {
			err = errors.New("not a success")
		}
		if live := int64(m.Stats().Live); live > maxLive.Load() {
			maxLive.Store(live)
		}
		return err
	})
	for _, err := range errs {
		t.Error(err) // a shared instance shows as KindInternal
	}
	s := m.Stats()
	if s.Created > size || s.Discarded != 0 || maxLive.Load() > size {
		t.Errorf("stats %+v, max live %d: want at most %d instances, none discarded", s, maxLive.Load(), size)
	}
	if s.MemoryBytes < int64(s.Live)*65536 || s.MemoryBytes%65536 != 0 {
		t.Errorf("stats %+v: want the live instances' memory, whole wasm pages of at least one each", s)
	}
}

// TestHostKeepsServing hammers a good module while misbehaving calls loop,
// sleep, trap, exit and run out of memory in another module at the same
// time: every good call must succeed, and every bad one fail with its kind.
// It runs until each bad kind failed twice and 50 good calls succeeded, so
// its verdict does not depend on the machine's speed; the kinds that must
// not time out run in a runtime with a patient timeout.
func TestHostKeepsServing(t *testing.T) {
	shortOpts, patientOpts := limits, patient
	shortOpts.Logger, patientOpts.Logger = discardLogger(), discardLogger()
	short, slow := newRuntime(t, shortOpts), newRuntime(t, patientOpts)
	good := load(t, short, "good")
	bad := map[*Runtime]*Module{short: load(t, short, "misbehave"), slow: load(t, slow, "misbehave")}

	stop := make(chan struct{})
	var badCalls sync.WaitGroup
	kinds := map[string]Kind{"loop": KindTimeout, "sleep": KindTimeout, "panic": KindTrap, "oom": KindOutOfMemory, "exit": KindExit}
	var badDone, kindsShown atomic.Int64
	for handler, kind := range kinds {
		m := bad[misbehaviour{kind: kind}.runtimeFor(short, slow)]
		badCalls.Add(1)
		go func() {
			defer badCalls.Done()
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				_, err := m.Handle(context.Background(), request(handler, 100), nil)
				var cerr *CallError
				if !errors.As(err, &cerr) || cerr.Kind != kind {
					t.Errorf("%s: %v, want %s", handler, err, kind)
					kindsShown.Add(1) // no more to show: let the test end
					return
				}
				badDone.Add(1)
				if n == 1 {
					kindsShown.Add(1)
				}
			}
		}()
	}

	var goodDone atomic.Int64
	giveUp := time.Now().Add(longAfter)
	errs := hammer(3, 1<<30, func(g, i int) error {
		if goodDone.Load() >= 50 && kindsShown.Load() == int64(len(kinds)) || time.Now().After(giveUp) {
			return errStop
		}
		_, err := good.Handle(context.Background(), request("decode", 1024), nil)
		if err == nil {
			goodDone.Add(1)
		}
		return err
	})
	close(stop)
	badCalls.Wait()
	for _, err := range errs {
		t.Error(err)
	}
	if goodDone.Load() < 50 || kindsShown.Load() < int64(len(kinds)) {
		t.Errorf("after %v: %d good calls, %d of %d bad kinds shown twice", longAfter, goodDone.Load(), kindsShown.Load(), len(kinds))
	}
	t.Logf("%d good calls succeeded while %d bad calls failed", goodDone.Load(), badDone.Load())
}

var errStop = errors.New("stop")
