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
// trap, exit and run out of memory in another module at the same time:
// every good call must succeed, and every bad one fail with its kind.
func TestHostKeepsServing(t *testing.T) {
	opts := limits
	opts.Timeout = 2 * time.Second
	opts.Logger = discardLogger()
	r := newRuntime(t, opts)
	good := load(t, r, "good")
	bad := load(t, r, "misbehave")

	stop := make(chan struct{})
	var badCalls sync.WaitGroup
	kinds := map[string]Kind{"loop": KindTimeout, "panic": KindTrap, "oom": KindOutOfMemory, "exit": KindExit}
	var badDone atomic.Int64
	for handler, kind := range kinds {
		badCalls.Add(1)
		go func() {
			defer badCalls.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				_, err := bad.Handle(context.Background(), request(handler, 100), nil)
				var cerr *CallError
				if !errors.As(err, &cerr) || cerr.Kind != kind {
					t.Errorf("%s: %v, want %s", handler, err, kind)
					return
				}
				badDone.Add(1)
			}
		}()
	}

	var goodDone atomic.Int64
	deadline := time.Now().Add(3 * time.Second)
	errs := hammer(3, 1<<30, func(g, i int) error {
		if time.Now().After(deadline) {
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
	if goodDone.Load() < 10 || badDone.Load() < 4 {
		t.Errorf("%d good and %d bad calls: too few to show anything", goodDone.Load(), badDone.Load())
	}
	t.Logf("%d good calls succeeded while %d bad calls failed", goodDone.Load(), badDone.Load())
}

var errStop = errors.New("stop")
