package conformance_test

import (
	"fmt"
	"strings"
)

// Departures the scenarios share (docs/conformance.md, DESIGN.md).
const (
	departureOneCycle = "All due handlers of a cause run in one processing cycle and their outcomes go out in " +
		"at most one PATCH per endpoint (Kopf's default `asap` lifecycle runs one handler per cycle: N handlers, N PATCHes)."
	departureDiffBase = "The diff-base is stored in `status.kopf.last-handled-configuration` " +
		"(`settings.Persistence.DiffBaseInStatus`, Kopf's `StatusDiffBaseStorage`), so it goes out with the results " +
		"in one `/status` PATCH; Kopf's default is the `last-handled-configuration` annotation (a body PATCH too)."
	departureNoTouch = "Retries wake on the host's own timers: one PATCH per attempt (the progress record), " +
		"no `touch-dummy` PATCHes (Kopf: a touch-dummy PATCH per delayed retry, §3.6)."
)

func creationScenarios() []scenario {
	return []scenario{{
		name: "create/handler-called-once-with-result",
		pins: "A new object (no diff-base) is a creation: the create handler is called once with reason create " +
			"and retry 0, its result goes to `status.create_fn`, the cause ends with \"Creation is processed: 1 " +
			"succeeded; 0 failed.\", no progress is left and nothing more is written.",
		ref:       "kopf.md §1.4 (4), §1.6, §2, §3.2, §3.8",
		departure: departureDiffBase + " Kopf: 2 PATCHes here; the project: 1.",
		run: func(s *S) {
			s.start()
			s.createHandled("x", obj{spec: specOf(nil)})
			s.quiet()
			s.wantCalls("x", "create_fn create 0")
			s.wantState("x", false, map[string]string{"create_fn": result("create", 0)})
			s.wantLog("x", "Creation is processed: 1 succeeded; 0 failed.", 1)
			s.wantWrites("x", w(0, 1))
			if c := s.callOf("x", "create_fn", "create", 0); c.finalized {
				s.Error("a finalizer was added although no handler needs one")
			}
		},
	}, {
		name: "create/all-due-handlers-in-one-cycle",
		pins: "Every handler due for the creation is called once: the create handlers, a field handler whose " +
			"field is set, a field handler on metadata.labels and a create handler whose label filter matches; " +
			"each result goes under `status.<id>` (a field handler's id is `fn/field`).",
		ref:       "kopf.md §1.1, §1.3, §1.6, §3.8; §13 (3, 6)",
		departure: departureOneCycle + " Here: 4 handlers, 1 PATCH (Kopf: 4 cycles, 4+ PATCHes).",
		run: func(s *S) {
			s.start()
			s.createHandled("x", obj{labels: map[string]string{"match": "yes"}, annotations: on("labels-fn"),
				spec: specOf(nil, "field", "a")})
			s.quiet()
			s.wantCalls("x", "create_fn create 0", "field_fn/spec.field create 0",
				"labels_fn/metadata.labels create 0", "matched_create_fn create 0")
			s.wantState("x", false, map[string]string{
				"create_fn": result("create", 0), "field_fn/spec.field": result("create", 0),
				"labels_fn/metadata.labels": result("create", 0), "matched_create_fn": result("create", 0)})
			s.wantLog("x", "Creation is processed: 4 succeeded; 0 failed.", 1)
			s.wantWrites("x", w(0, 1))
		},
	}, {
		name: "create/diff-base-is-the-essence",
		pins: "After handling, the stored diff-base is the essence: spec, labels and annotations, without " +
			"status, other metadata, Kopf-owned annotation prefixes (`kopf.zalando.org`, `*.kopf.zalando.org`) " +
			"and kubectl's last-applied-configuration; compact JSON.",
		ref:       "kopf.md §3.1, §3.3 (ping-pong protection), §3.4",
		departure: departureDiffBase,
		run: func(s *S) {
			s.start()
			s.createHandled("x", obj{labels: map[string]string{"app": "a"}, annotations: map[string]string{
				"note": "n", "other.kopf.zalando.org/state": "s", "kubectl.kubernetes.io/last-applied-configuration": "{}"},
				spec: specOf(nil)})
			s.quiet()
			u := s.mustGet("x")
			got, _, _ := nestedString(u.Object, "status", "kopf", "last-handled-configuration")
			want := `{"metadata":{"annotations":{"note":"n"},"labels":{"app":"a"}},"spec":{"step":1}}`
			if got != want {
				s.Errorf("status.kopf.last-handled-configuration:\n got  %s\n want %s", got, want)
			}
			if v, ok := u.GetAnnotations()[prefix+"last-handled-configuration"]; ok {
				s.Errorf("the diff-base is also in the annotation: %s", v)
			}
			s.wantWrites("x", w(0, 1))
		},
	}, {
		name: "create/label-filter-excludes-handler",
		pins: "A create handler whose label filter does not match (label absent, or another value) is not " +
			"called; the creation completes with the other handlers.",
		ref: "kopf.md §1.3; §13 (2)",
		run: func(s *S) {
			s.start()
			s.createHandled("other", obj{labels: map[string]string{"match": "no"}, spec: specOf(nil)})
			s.createHandled("none", obj{spec: specOf(nil)})
			s.quiet()
			for _, name := range []string{"other", "none"} {
				s.wantCalls(name, "create_fn create 0")
				s.wantState(name, false, map[string]string{"create_fn": result("create", 0)})
			}
		},
	}}
}

// createOutcomeMatrix: every outcome of the create handler, with and
// without a finalizer.
func createOutcomeMatrix() []scenario {
	type outcome struct {
		name, pins string
		behave     behaviour
		retries    []int    // the retries the handler is called at
		result     bool     // the last call's result is stored
		progress   []string // the writes of its progress record
		events     int      // Warning Events posted
		departure  string
	}
	outcomes := []outcome{
		{name: "success", pins: "succeeds at once: called once, its result stored",
			behave: succeed(), retries: []int{0}, result: true},
		{name: "temporary-error-retried", pins: "fails with TemporaryError(delay=0.5) twice: called at retries 0, 1 and 2, " +
			"each failure stored as a progress record (purpose create, retries, delayed) and purged when it succeeds",
			behave: temporary(2, 0.5), retries: []int{0, 1, 2}, result: true,
			progress: []string{"create/1+delayed", "create/2+delayed", "purged"}, events: 2, departure: departureNoTouch},
		{name: "permanent-error-is-final", pins: "fails with PermanentError: called once, no result, the creation counts " +
			"as done (diff-base stored, \"1 failed\") and is not retried",
			behave: permanent(), retries: []int{0}, events: 1},
		{name: "arbitrary-error-retried-after-backoff", pins: "fails with an arbitrary error once (errors=TEMPORARY, the " +
			"default): retried after the backoff, then succeeds",
			behave: arbitrary(1), retries: []int{0, 1}, result: true,
			progress: []string{"create/1+delayed", "purged"}, events: 1, departure: departureNoTouch},
	}
	var out []scenario
	for _, fin := range []string{"no-finalizer", "finalizer"} {
		for _, oc := range outcomes {
			finalized := fin == "finalizer"
			var ann map[string]string
			pins := "The create handler " + oc.pins + "."
			if finalized {
				ann = on("delete-required")
				pins += " A delete handler needs the finalizer: it is added in a cycle of its own, before the " +
					"create handler runs (which sees it)."
			}
			out = append(out, scenario{
				name:      fmt.Sprintf("create-outcome/%s/%s", oc.name, fin),
				pins:      pins,
				ref:       "kopf.md §2, §3.2, §3.8; §13 (5)",
				departure: oc.departure,
				run: func(s *S) {
					s.start()
					s.create("x", obj{annotations: ann, spec: specOf(map[string]behaviour{"create_fn": oc.behave})})
					s.waitHandled("x")
					s.quiet()
					var calls []string
					for _, r := range oc.retries {
						calls = append(calls, fmt.Sprintf("create_fn create %d", r))
						if c := s.callOf("x", "create_fn", "create", r); c.finalized != finalized {
							s.Errorf("create_fn saw the finalizer: %v, want %v", c.finalized, finalized)
						}
					}
					s.wantCalls("x", calls...)
					results := map[string]string{}
					if oc.result {
						results["create_fn"] = result("create", oc.retries[len(oc.retries)-1])
					}
					s.wantState("x", finalized, results)
					s.wantProgressWrites("x", "create_fn", oc.progress...)
					patches := len(oc.progress)
					if finalized {
						patches++
						if first := s.firstWrite("x"); !strings.Contains(first, finalizer) || strings.Contains(first, "status") {
							s.Errorf("the first write is not the finalizer's own: %s", first)
						}
					}
					s.wantWrites("x", w(patches, 1))
					s.wantEvents(oc.events)
					failed := 0
					if !oc.result {
						failed = 1
					}
					s.wantLog("x", fmt.Sprintf("Creation is processed: %d succeeded; %d failed.", 1-failed, failed), 1)
				},
			})
		}
	}
	return out
}
