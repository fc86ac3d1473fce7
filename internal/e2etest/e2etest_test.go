package e2etest

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"
)

func TestEventually(t *testing.T) {
	n := 0
	Eventually(t, time.Second, "third try", func() error {
		if n++; n < 3 {
			return errors.New("not yet")
		}
		return nil
	})
	if n != 3 {
		t.Errorf("cond ran %d times, want 3", n)
	}
}

func TestLogBufferConcurrentWrites(t *testing.T) {
	var b LogBuffer
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			fmt.Fprintf(&b, "%d\n", i)
		}()
	}
	wg.Wait()
	if got := len(b.String()); got != 16 {
		t.Errorf("wrote %d bytes, want 16", got)
	}
}
