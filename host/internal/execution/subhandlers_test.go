package execution_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kopf-wasm/kopf-wasm/abi"
	"github.com/kopf-wasm/kopf-wasm/host/internal/execution"
	"github.com/kopf-wasm/kopf-wasm/host/internal/persistence"
	"github.com/kopf-wasm/kopf-wasm/host/internal/registry"
)

func outcomeOf(status abi.OutcomeStatus, delay ...float64) *abi.Outcome {
	o := &abi.Outcome{Status: status, Message: string(status)}
	if len(delay) > 0 {
		o.Delay = &delay[0]
	}
	return o
}

// The sub-handlers a call reports are classified with their own options;
// the parent is due again while any is unfinished, and lists them all in
// its subrefs.
func TestSubhandlersSettle(t *testing.T) {
	clock := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	now := clock.Now()
	type child struct {
		finished, reported, deliver bool
		delay                       time.Duration
		retries                     int
	}
	tests := []struct {
		name     string
		parent   abi.OutcomeStatus
		subs     []abi.SubhandlerOutcome
		records  map[string]persistence.Record
		want     map[string]child
		finished bool // the parent
		delay    time.Duration
		subrefs  []string
	}{{
		name:   "all succeed: the parent succeeds",
		parent: abi.OutcomeSuccess,
		subs: []abi.SubhandlerOutcome{{ID: "p/a", Parent: "p", Outcome: outcomeOf(abi.OutcomeSuccess), Result: json.RawMessage(`1`)},
			{ID: "p/b", Parent: "p", Outcome: outcomeOf(abi.OutcomeSuccess)}},
		want:     map[string]child{"p/a": {true, true, true, 0, 1}, "p/b": {true, true, true, 0, 1}},
		finished: true, subrefs: []string{"p/a", "p/b"},
	}, {
		name:   "one retries: the parent waits for it (no result)",
		parent: abi.OutcomeChildren,
		subs: []abi.SubhandlerOutcome{{ID: "p/a", Parent: "p", Outcome: outcomeOf(abi.OutcomeSuccess)},
			{ID: "p/b", Parent: "p", Outcome: outcomeOf(abi.OutcomeTemporary, 7)}},
		want:  map[string]child{"p/a": {true, true, true, 0, 1}, "p/b": {false, true, false, 7 * time.Second, 1}},
		delay: 7 * time.Second, subrefs: []string{"p/a", "p/b"},
	}, {
		name:    "finished ones are left as they are; a sleeping one sets the delay",
		parent:  abi.OutcomeChildren,
		subs:    []abi.SubhandlerOutcome{{ID: "p/a", Parent: "p"}, {ID: "p/b", Parent: "p"}},
		records: map[string]persistence.Record{"p/a": {Retries: 1, Success: true}, "p/b": {Retries: 1, Delayed: now.Add(3 * time.Second)}},
		want:    map[string]child{"p/a": {true, false, false, 0, 1}, "p/b": {false, false, false, 3 * time.Second, 1}},
		delay:   3 * time.Second, subrefs: []string{"p/a", "p/b"},
	}, {
		name:     "retries used up: failed without a call",
		parent:   abi.OutcomeSuccess,
		subs:     []abi.SubhandlerOutcome{{ID: "p/a", Parent: "p", Options: abi.Options{Retries: 2}}},
		records:  map[string]persistence.Record{"p/a": {Retries: 2, Delayed: now.Add(-time.Second)}},
		want:     map[string]child{"p/a": {true, true, false, 0, 3}}, // the failure counts an attempt, as Kopf's
		finished: true, subrefs: []string{"p/a"},
	}, {
		name:   "errors mode of the sub-handler: ignored finishes it",
		parent: abi.OutcomeSuccess,
		subs:   []abi.SubhandlerOutcome{{ID: "p/a", Parent: "p", Options: abi.Options{Errors: abi.ErrorsIgnored}, Outcome: outcomeOf(abi.OutcomeError)}},
		want:   map[string]child{"p/a": {true, true, false, 0, 1}}, finished: true, subrefs: []string{"p/a"},
	}, {
		name:   "nested: the child waits for its own child, the parent for both",
		parent: abi.OutcomeChildren,
		subs: []abi.SubhandlerOutcome{{ID: "p/a", Parent: "p", Outcome: outcomeOf(abi.OutcomeChildren)},
			{ID: "p/a/x", Parent: "p/a", Outcome: outcomeOf(abi.OutcomeTemporary, 2)}},
		want:  map[string]child{"p/a": {false, true, false, 2 * time.Second, 1}, "p/a/x": {false, true, false, 2 * time.Second, 1}},
		delay: 2 * time.Second, subrefs: []string{"p/a", "p/a/x"},
	}, {
		name:   "the parent's own failure stands",
		parent: abi.OutcomePermanent,
		subs:   []abi.SubhandlerOutcome{{ID: "p/a", Parent: "p", Outcome: outcomeOf(abi.OutcomeTemporary, 2)}},
		want:   map[string]child{"p/a": {false, true, false, 2 * time.Second, 1}}, finished: true, subrefs: []string{"p/a"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mod := newFakeModule(func(req *abi.Request) (*abi.Response, error) {
				return &abi.Response{Outcome: abi.Outcome{Status: tt.parent}, Result: json.RawMessage(`"parent"`), Subhandlers: tt.subs}, nil
			})
			h, err := registry.NewHandler("m", abi.HandlerSpec{ID: "p", Kind: abi.KindCreate}, ref)
			if err != nil {
				t.Fatal(err)
			}
			cause := &registry.Cause{Reason: abi.ReasonCreate}
			in := execution.Input{Subject: execution.NewSubject(ref, true, object()), Cause: cause, Subrecords: tt.records}
			r, err := newExec(mod, nil, clock).Call(context.Background(), h, in, execution.CallOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if r.Step.Finished != tt.finished || r.Step.Delay != tt.delay || r.Step.Record.Retries != 1 {
				t.Errorf("parent step: finished %v delay %s retries %d, want %v %s 1", r.Step.Finished, r.Step.Delay, r.Step.Record.Retries, tt.finished, tt.delay)
			}
			if !slices.Equal(r.Step.Record.Subrefs, tt.subrefs) {
				t.Errorf("subrefs = %v, want %v", r.Step.Record.Subrefs, tt.subrefs)
			}
			if r.Step.Deliver && !tt.finished {
				t.Error("an unfinished parent delivers its result")
			}
			got := map[string]child{}
			for _, c := range r.Children {
				got[c.Handler.ID()] = child{c.Step.Finished || c.Step.Record.Finished(), c.Reported, c.Step.Deliver, c.Step.Delay, c.Step.Record.Retries}
				if _, known := tt.records[c.Handler.ID()]; c.Handler.Kind() != abi.KindCreate || (!known && c.Step.Record.Started.IsZero()) {
					t.Errorf("%s: kind %s, started %v", c.Handler.ID(), c.Handler.Kind(), c.Step.Record.Started)
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("children:\n got %v\nwant %v", got, tt.want)
			}
		})
	}
}

// The request carries the sub-handlers' progress.
func TestSubhandlersInTheRequest(t *testing.T) {
	clock := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	now := clock.Now()
	h, _ := registry.NewHandler("m", abi.HandlerSpec{ID: "p", Kind: abi.KindUpdate}, ref)
	req, err := execution.Request(h, execution.Input{Subject: execution.NewSubject(ref, true, object()), Cause: &registry.Cause{Reason: abi.ReasonUpdate},
		Now: now, Subrecords: map[string]persistence.Record{
			"p/b": {Started: now.Add(-time.Minute), Retries: 2, Delayed: now.Add(time.Second)},
			"p/a": {Started: now.Add(-time.Minute), Retries: 1, Success: true},
		}})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(req.Subhandlers)
	want := `[{"id":"p/a","retry":1,"started":"2025-12-31T23:59:00Z","runtime":60,"finished":true},{"id":"p/b","retry":2,"started":"2025-12-31T23:59:00Z","runtime":60,"sleeping":true}]`
	if string(got) != want {
		t.Errorf("subhandlers = %s\nwant %s", got, want)
	}
}
