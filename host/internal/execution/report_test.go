package execution_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/kopf-wasm/kopf-wasm/abi"
	"github.com/kopf-wasm/kopf-wasm/host/internal/execution"
	"github.com/kopf-wasm/kopf-wasm/host/internal/registry"
	"github.com/kopf-wasm/kopf-wasm/host/settings"
)

// An event handler's call is reported as Kopf reports it: "Handler 'x'
// succeeded." at info on every call, each kind of failure in Kopf's words
// at error, and never as a Kubernetes Event (Kopf keeps event handlers
// silent there).
func TestReportEventHandler(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want string // the one line logged: "LEVEL message"
	}{
		{"success", nil, "INFO Handler 'ev' succeeded."},
		{"arbitrary error", &execution.IgnoredError{Handler: "ev", Err: errors.New("boom")},
			"ERROR Handler 'ev' failed with an exception and will ignore it: boom"},
		{"temporary error", &execution.TemporaryError{Handler: "ev", Message: "later"},
			"ERROR Handler 'ev' failed temporarily: later"},
		{"permanent error", &execution.PermanentError{Handler: "ev", Message: "never"},
			"ERROR Handler 'ev' failed permanently: never"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var logs lines
			s := settings.Default()
			s.Posting.Level = settings.LevelInfo
			cluster := &fakeCluster{}
			exec := execution.New(execution.Options{Modules: func(string) execution.Module { return nil }, Settings: s,
				Cluster: cluster, Logger: slog.New(&logs)})
			h, _ := registry.NewHandler("m", abi.HandlerSpec{ID: "ev", Kind: abi.KindEvent}, ref)
			exec.Report(context.Background(), execution.NewSubject(ref, true, object()), h, execution.Step{Err: tt.err, Finished: true}, "")
			if got := strings.Join(logs.got, "\n"); got != tt.want {
				t.Errorf("logged %q, want %q", got, tt.want)
			}
			if len(cluster.events) != 0 {
				t.Errorf("posted Events %+v, want none", cluster.events)
			}
		})
	}
}

// lines is a slog handler that keeps "LEVEL message" of every record.
type lines struct{ got []string }

func (l *lines) Enabled(context.Context, slog.Level) bool { return true }
func (l *lines) Handle(_ context.Context, r slog.Record) error {
	l.got = append(l.got, r.Level.String()+" "+r.Message)
	return nil
}
func (l *lines) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *lines) WithGroup(string) slog.Handler      { return l }
