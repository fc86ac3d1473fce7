package conformance_test

import (
	"fmt"
)

func updateScenarios() []scenario {
	// essential runs a change that must be an update.
	essential := func(change func(s *S)) func(s *S) {
		return func(s *S) {
			s.start()
			s.createHandled("x", obj{spec: specOf(nil)})
			change(s)
			s.waitHandled("x")
			s.waitCall("x", "update_fn", "update", 0)
			s.quiet()
			s.wantCalls("x", "create_fn create 0", "update_fn update 0")
			s.wantState("x", false, map[string]string{"create_fn": result("create", 0), "update_fn": result("update", 0)})
			s.wantLog("x", "Updating is processed: 1 succeeded; 0 failed.", 1)
			s.wantWrites("x", w(0, 2))
		}
	}
	// inessential runs a change that must be nothing.
	inessential := func(change func(s *S)) func(s *S) {
		return func(s *S) {
			s.start()
			s.createHandled("x", obj{spec: specOf(nil)})
			s.quiet()
			change(s)
			s.quiet()
			s.wantCalls("x", "create_fn create 0")
			s.wantWrites("x", w(0, 1))
		}
	}
	return []scenario{{
		name: "update/spec-change-calls-update-handler",
		pins: "A change of the spec against the diff-base is an update: the update handler is called once with " +
			"reason update and sees the new spec; its result is stored and the diff-base moves on.",
		ref:       "kopf.md §1.4 (7), §3.4",
		departure: departureDiffBase + " Kopf: 2 PATCHes per handled update; the project: 1.",
		run: essential(func(s *S) {
			s.patch("x", `{"spec":{"step":2}}`)
			s.waitCall("x", "update_fn", "update", 0)
			if c := s.callOf("x", "update_fn", "update", 0); c.step != "2" {
				s.Errorf("update_fn saw step %s, want 2", c.step)
			}
		}),
	}, {
		name: "update/label-change-is-essential",
		pins: "Labels are part of the essence: changing one is an update.",
		ref:  "kopf.md §3.4",
		run:  essential(func(s *S) { s.patch("x", `{"metadata":{"labels":{"tier":"x"}}}`) }),
	}, {
		name: "update/annotation-change-is-essential",
		pins: "Annotations (other than Kopf's own) are part of the essence: changing one is an update.",
		ref:  "kopf.md §3.4",
		run:  essential(func(s *S) { s.patch("x", `{"metadata":{"annotations":{"note":"x"}}}`) }),
	}, {
		name: "update/status-change-is-not-essential",
		pins: "A change of the status alone is no essential change (noop): no handler is called, nothing written.",
		ref:  "kopf.md §1.4 (6), §3.4",
		run:  inessential(func(s *S) { s.patchStatus("x", `{"status":{"other":{"x":1}}}`) }),
	}, {
		name: "update/kopf-owned-annotations-are-not-essential",
		pins: "Annotations under Kopf-owned prefixes (`*.kopf.zalando.org`) and kubectl's last-applied-configuration " +
			"are not part of the essence: changing them calls no handler (ping-pong protection).",
		ref: "kopf.md §3.3, §3.4",
		run: inessential(func(s *S) {
			s.patch("x", `{"metadata":{"annotations":{"other.kopf.zalando.org/state":"s","kubectl.kubernetes.io/last-applied-configuration":"{}"}}}`)
		}),
	}, {
		name: "update/during-update-retry",
		pins: "A new change while the update handler is retrying continues the same cause: the handler keeps its " +
			"record and retry count (no reset, no \"superseded\"), its next attempt sees the newest object, and when " +
			"it succeeds the diff-base becomes the newest essence: one \"Updating is processed\".",
		ref:       "kopf.md §1.4, §2, §3.2, §3.9 (only the last state counts)",
		departure: departureNoTouch,
		run: func(s *S) {
			s.start()
			s.createHandled("x", obj{spec: specOf(map[string]behaviour{"update_fn": temporary(2, 2.5)})})
			s.patch("x", `{"spec":{"step":2}}`)
			s.waitRecord("x", "update_fn", record{Purpose: "update", Retries: 1, Delayed: true, Message: "fails at retry 0"})
			s.patch("x", `{"spec":{"step":3}}`)
			s.waitHandled("x")
			s.quiet()
			s.wantCalls("x", "create_fn create 0", "update_fn update 0", "update_fn update 1", "update_fn update 2")
			if c := s.callOf("x", "update_fn", "update", 1); c.step != "3" {
				s.Errorf("the retry after the second change saw step %s, want 3", c.step)
			}
			s.wantProgressWrites("x", "update_fn", "update/1+delayed", "update/2+delayed", "purged")
			s.wantState("x", false, map[string]string{"create_fn": result("create", 0), "update_fn": result("update", 2)})
			s.wantLog("x", "Updating is processed: 1 succeeded; 0 failed.", 1)
			s.wantLog("x", "superseded", 0)
			s.wantWrites("x", w(3, 2))
		},
	}, {
		name: "update/during-create-retry",
		pins: "A change while the create handler is retrying is still the creation (there is no diff-base yet): " +
			"the create handler continues at its retry count and sees the newest object, the update handler is " +
			"never called, and the diff-base stored at the end is the newest essence.",
		ref:       "kopf.md §1.4 (4), §3.9",
		departure: departureNoTouch,
		run: func(s *S) {
			s.start()
			s.create("x", obj{spec: specOf(map[string]behaviour{"create_fn": temporary(2, 2.5)})})
			s.waitRecord("x", "create_fn", record{Purpose: "create", Retries: 1, Delayed: true})
			s.patch("x", `{"spec":{"step":2}}`)
			s.waitHandled("x")
			s.quiet()
			s.wantCalls("x", "create_fn create 0", "create_fn create 1", "create_fn create 2")
			if c := s.callOf("x", "create_fn", "create", 1); c.step != "2" {
				s.Errorf("the retry after the change saw step %s, want 2", c.step)
			}
			s.wantProgressWrites("x", "create_fn", "create/1+delayed", "create/2+delayed", "purged")
			s.wantState("x", false, map[string]string{"create_fn": result("create", 2)})
			s.wantWrites("x", w(3, 1))
		},
	}, {
		name: "update/resume-handlers-not-mixed-in-without-restart",
		pins: "Resume handlers run only for objects of the operator's initial listing: an object created and " +
			"changed while the operator runs never gets its resume handler called.",
		ref: "kopf.md §1.4 (5), §3.9",
		run: func(s *S) {
			s.start()
			s.createHandled("x", obj{annotations: on("resume"), spec: specOf(nil)})
			s.patch("x", `{"spec":{"step":2}}`)
			s.waitCall("x", "update_fn", "update", 0)
			s.waitHandled("x")
			s.quiet()
			s.wantCalls("x", "create_fn create 0", "update_fn update 0")
		},
	}}
}

// updateOutcomeMatrix: every outcome of the update handler.
func updateOutcomeMatrix() []scenario {
	type outcome struct {
		name, pins string
		behave     behaviour
		retries    []int
		result     bool
		progress   []string
		departure  string
	}
	outcomes := []outcome{
		{name: "success", pins: "succeeds: called once, result stored", behave: succeed(), retries: []int{0}, result: true},
		{name: "temporary-error-retried", pins: "fails with TemporaryError(delay=0.5) once: retried, its record stored and " +
			"then purged", behave: temporary(1, 0.5), retries: []int{0, 1}, result: true,
			progress: []string{"update/1+delayed", "purged"}, departure: departureNoTouch},
		{name: "arbitrary-error-retried-after-backoff", pins: "fails with an arbitrary error once: retried after the backoff",
			behave: arbitrary(1), retries: []int{0, 1}, result: true,
			progress: []string{"update/1+delayed", "purged"}, departure: departureNoTouch},
		{name: "permanent-error-is-final-for-this-change", pins: "fails with PermanentError: not retried for this change " +
			"(the diff-base moves on, \"1 failed\"), but called again for the next change",
			behave: permanent(), retries: []int{0}},
	}
	var out []scenario
	for _, oc := range outcomes {
		out = append(out, scenario{
			name:      "update-outcome/" + oc.name,
			pins:      "The update handler " + oc.pins + ".",
			ref:       "kopf.md §2, §3.2; §13 (5)",
			departure: oc.departure,
			run: func(s *S) {
				s.start()
				s.createHandled("x", obj{spec: specOf(map[string]behaviour{"update_fn": oc.behave})})
				s.patch("x", `{"spec":{"step":2}}`)
				s.waitCall("x", "update_fn", "update", oc.retries[len(oc.retries)-1])
				s.waitHandled("x")
				s.quiet()
				calls := []string{"create_fn create 0"}
				for _, r := range oc.retries {
					calls = append(calls, fmt.Sprintf("update_fn update %d", r))
				}
				s.wantCalls("x", calls...)
				s.wantProgressWrites("x", "update_fn", oc.progress...)
				results := map[string]string{"create_fn": result("create", 0)}
				failed := 1
				if oc.result {
					results["update_fn"] = result("update", oc.retries[len(oc.retries)-1])
					failed = 0
				}
				s.wantState("x", false, results)
				s.wantLog("x", fmt.Sprintf("Updating is processed: %d succeeded; %d failed.", 1-failed, failed), 1)
				s.wantWrites("x", w(len(oc.progress), 2))
				if oc.result {
					return
				}
				// The next change calls the permanently failed handler again.
				s.patch("x", `{"spec":{"step":3}}`)
				s.waitHandled("x")
				s.waitFor("update_fn called for the next change", func() error {
					if n := len(s.rec.find("x", "Updating is processed: 0 succeeded; 1 failed.")); n != 2 {
						return fmt.Errorf("%d updates processed", n)
					}
					return nil
				})
				s.quiet()
				s.wantCalls("x", append(calls, "update_fn update 0")...)
				s.wantWrites("x", w(0, 3))
			},
		})
	}
	return out
}
