package execution_test

import (
	"context"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kopf-wasm/kopf-wasm/abi"
	"github.com/kopf-wasm/kopf-wasm/host/internal/execution"
	"github.com/kopf-wasm/kopf-wasm/host/internal/registry"
	"github.com/kopf-wasm/kopf-wasm/host/settings"
)

// Kopf before 1.44 posted "Handler 'x' succeeded." as a Normal Event for
// every succeeded changing handler; 1.44 stopped by default. The host
// does the same: posting.level "info" posts them, the default "warning"
// only failures (TestFoldApplyReport); posting.enabled false posts none.
func TestSuccessEventsAtLevelInfo(t *testing.T) {
	tests := []struct {
		name    string
		posting func(*settings.Posting)
		kind    abi.HandlerKind
		want    []abi.EventRequest
	}{
		{"info posts successes", func(p *settings.Posting) { p.Level = settings.LevelInfo }, abi.KindCreate,
			[]abi.EventRequest{{Type: "Normal", Reason: "Success", Message: "Handler 'h' succeeded."}}},
		{"disabled posts nothing", func(p *settings.Posting) { p.Level, p.Enabled = settings.LevelInfo, false }, abi.KindCreate, nil},
		{"timers are not changing handlers", func(p *settings.Posting) { p.Level = settings.LevelInfo }, abi.KindTimer, nil},
	}
	for _, tt := range tests {
		s := settings.Default()
		tt.posting(&s.Posting)
		cluster := &fakeCluster{}
		exec := execution.New(execution.Options{Modules: func(string) execution.Module { return nil }, Settings: s,
			Clock: clocktesting.NewFakeClock(time.Now()), Cluster: cluster})
		h, _ := registry.NewHandler("m", abi.HandlerSpec{ID: "h", Kind: tt.kind}, ref)
		exec.Report(context.Background(), execution.NewSubject(ref, true, object()), h, execution.Step{}, "")
		if len(cluster.events) != len(tt.want) || len(tt.want) > 0 && cluster.events[0] != tt.want[0] {
			t.Errorf("%s: events %+v, want %+v", tt.name, cluster.events, tt.want)
		}
	}
}
