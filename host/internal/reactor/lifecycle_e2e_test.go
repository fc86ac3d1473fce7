package reactor_test

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/kopf-wasm/kopf-wasm/internal/e2etest"
)

// TestKopfLifecycleLines runs Kopf's own e2e protocol (its
// tests/e2e/test_examples.py) on an object: created, handled, deleted and
// gone, the log has Kopf's lifecycle lines in order, each once, each
// changing handler's success once, and the event handler's success once
// per call (Kopf's 08-events counts them).
func TestKopfLifecycleLines(t *testing.T) {
	c := startCluster(t)
	createNamespace(t, c, "lifecycle")
	logs := &logRecorder{}
	kc := newKube(t, c)
	rt := newRuntime(t)
	run(t, kc, newLoggedOperator(t, kc, "lifecycle", testSettings(), slog.New(logs), load(t, rt, "reactor", "testguests/reactor")))

	createExampleWith(t, c, "lifecycle", "k", map[string]string{"mode": "events"}, map[string]any{"field": "a"})
	e2etest.Eventually(t, 20*time.Second, "created", hasMessage(t, c, "lifecycle", "k", "create_fn", "created"))
	deleteExample(t, c, "lifecycle", "k")
	e2etest.Eventually(t, 20*time.Second, "the object gone", gone(t, c, "lifecycle", "k"))
	want := []string{
		"Adding the finalizer, thus preventing the actual deletion.",
		"Creation is in progress: {",
		"Handler 'create_fn' succeeded.",
		"Creation is processed: ",
		"Deletion is in progress: {",
		"Handler 'delete_fn' succeeded.",
		"Deletion is processed: 1 succeeded; 0 failed.",
		"Removing the finalizer, thus allowing the actual deletion.",
		"Deleted, really deleted, and we are notified.",
	}
	e2etest.Eventually(t, 20*time.Second, "the object's last line", func() error {
		if len(logs.about("k", want[len(want)-1])) == 0 {
			return errMissing
		}
		return nil
	})
	all := logs.about("k", "")
	at := -1
	for _, line := range want {
		found := logs.about("k", line)
		if len(found) != 1 {
			t.Errorf("%d lines with %q, want 1: %q", len(found), line, found)
			continue
		}
		i := indexOf(all, found[0])
		if i < at {
			t.Errorf("%q came before the line before it in %q", line, want)
		}
		at = i
	}
	if got := logs.about("k", "Handler 'event_fn' succeeded."); len(got) == 0 {
		t.Errorf("the event handler's successes are not logged")
	}
	if t.Failed() {
		t.Logf("the object's lines:\n%s", strings.Join(all, "\n"))
	}
}

var errMissing = e2etestError("not logged yet")

type e2etestError string

func (e e2etestError) Error() string { return string(e) }

func indexOf(lines []string, line string) int {
	for i, l := range lines {
		if l == line {
			return i
		}
	}
	return -1
}
