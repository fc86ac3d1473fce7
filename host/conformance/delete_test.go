package conformance_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Deletion modes: which delete handlers the object has.
var finalizerModes = []struct {
	name     string
	features []string
	handlers []string // the delete handlers that match
	required bool     // a non-optional one: the finalizer is needed
}{
	{"required", []string{"delete-required"}, []string{"delete_fn"}, true},
	{"optional", []string{"delete-optional"}, []string{"delete_optional_fn"}, false},
	{"both", []string{"delete-required", "delete-optional"}, []string{"delete_fn", "delete_optional_fn"}, true},
}

// Timers and daemons on the object.
var spawnModes = []struct {
	name, feature, handler, reason string
}{
	{"no-spawn", "", "", ""},
	{"timer", "timer", "timer_fn", "timer"},
	{"daemon", "daemon", "daemon_fn", "daemon"},
}

const spawnNote = "A timer or daemon on the object is stopped first; the finalizer is released once it has " +
	"stopped, in the cycle its stop wakes. The host may spend one more PATCH on such a deletion than without " +
	"a timer (the delete cycle's own write, such as the delete handlers' finished records, then the release), " +
	"so both counts are accepted; the delete handlers must still run exactly once."

// deletionWrites are the writes a deletion may cost after base ([patch,
// status] so far): one PATCH (progress purged and the finalizer released
// together), or, with a timer or daemon that is still stopping when the
// delete handlers are done, possibly two (what the delete cycle has to
// write, then the release). The delete handlers' results (results) are
// stored by the delete cycle when it does not release the object; in the
// releasing cycle they alone are not worth a /status PATCH (see
// departureDeleteResults).
func deletionWrites(spawned, results bool, base [2]int) []string {
	out := []string{w(base[0]+1, base[1])}
	if spawned && results {
		out = append(out, w(base[0]+2, base[1]+1))
	} else if spawned {
		out = append(out, w(base[0]+2, base[1]))
	}
	return out
}

const departureDeleteResults = "Results of delete handlers that finish in the cycle that releases the object are " +
	"not written when they are all that cycle would write to /status (one PATCH for an object about to go; " +
	"settings.Persistence.DeleteResultsOnRelease writes them, as Kopf does)."

// deleteOutcomeMatrix: every outcome of a required delete handler, with no
// timer, a timer or a daemon.
func deleteOutcomeMatrix() []scenario {
	type outcome struct {
		name, pins string
		behave     behaviour
		retries    []int
		progress   []string
		// kept is the record of a handler that finished in one attempt, which
		// the host may store while a timer or daemon is still stopping.
		kept string
	}
	outcomes := []outcome{
		{"success", "succeeds: called once", succeed(), []int{0}, nil, "delete/1+success"},
		{"temporary-error-retried", "fails with TemporaryError(delay=0.5) once: its record is stored (purpose delete), " +
			"it is retried, then the record is purged with the release", temporary(1, 0.5), []int{0, 1},
			[]string{"delete/1+delayed", "purged"}, ""},
		{"arbitrary-error-retried-after-backoff", "fails with an arbitrary error once: retried after the backoff",
			arbitrary(1), []int{0, 1}, []string{"delete/1+delayed", "purged"}, ""},
		{"permanent-error-releases", "fails with PermanentError: a permanent failure counts as done, so the " +
			"finalizer is released and the object goes", permanent(), []int{0}, nil, "delete/1+failure"},
	}
	var out []scenario
	for _, sp := range spawnModes {
		for _, oc := range outcomes {
			features := []string{"delete-required"}
			if sp.feature != "" {
				features = append(features, sp.feature)
			}
			pins := "Deleting an object whose delete handler " + oc.pins + "; no other handler runs for the deletion."
			dep := ""
			if sp.feature != "" {
				pins += " " + spawnNote
			}
			if len(oc.progress) > 0 {
				dep = departureNoTouch
			}
			out = append(out, scenario{
				name:      fmt.Sprintf("delete-outcome/%s/%s", oc.name, sp.name),
				pins:      pins,
				ref:       "kopf.md §1.1 (on.delete), §1.7, §2, §3.8; §13 (4, 5)",
				departure: dep,
				run: func(s *S) {
					s.start()
					s.createHandled("x", obj{annotations: on(features...), spec: specOf(map[string]behaviour{"delete_fn": oc.behave})})
					calls := []string{"create_fn create 0"}
					if sp.handler != "" {
						s.waitCall("x", sp.handler, sp.reason, 0)
						calls = append(calls, sp.handler+" "+sp.reason+" 0")
					}
					s.quiet()
					s.wantState("x", true, map[string]string{"create_fn": result("create", 0)})
					s.del("x")
					s.waitGone("x")
					s.quiet()
					for _, r := range oc.retries {
						calls = append(calls, fmt.Sprintf("delete_fn delete %d", r))
					}
					s.wantCalls("x", calls...)
					if oc.kept != "" && sp.handler != "" {
						s.wantProgressWritesOneOf("x", "delete_fn", nil, []string{oc.kept, "purged"})
					} else {
						s.wantProgressWrites("x", "delete_fn", oc.progress...)
					}
					base := [2]int{1, 1} // the finalizer, the creation's results
					if len(oc.progress) > 0 {
						s.wantWrites("x", w(base[0]+2, base[1])) // progress; release
					} else {
						s.wantWrites("x", deletionWrites(sp.handler != "", oc.name == "success", base)...)
					}
					if sp.handler == "daemon_fn" {
						s.wantDaemonStopped("x", "deleted")
					}
				},
			})
		}
	}
	return out
}

// wantStillRunning fails the scenario when the handler has already
// returned: what follows would not test what the scenario says.
func (s *S) wantStillRunning(name, handler string) {
	s.Helper()
	if done := s.rec.find(name, fmt.Sprintf("Handler '%s' ", handler)); len(done) > 0 {
		s.Fatalf("%s returned before the test could act (%s); the machine is too slow for this scenario's 4s", handler, done[0].msg)
	}
}

// wantDaemonStopped asserts the daemon was asked to stop once, for why.
func (s *S) wantDaemonStopped(name, why string) {
	s.Helper()
	var got []string
	for _, e := range s.rec.find(name, "stopped") {
		if e.attrs["module"] != "" && e.msg == "stopped" {
			got = append(got, e.attrs["why"])
		}
	}
	if fmt.Sprint(got) != fmt.Sprint([]string{why}) {
		s.Errorf("the daemon stopped for %v, want once for %q", got, why)
	}
}

// deleteDuringMatrix: a deletion arriving in every state of the object's
// handlers, for every deletion mode, with no timer, a timer or a daemon.
func deleteDuringMatrix() []scenario {
	type state struct {
		name, pins string
		// superseded is the tally of the superseded cause's records.
		superseded string
		// setup brings the object into the state and returns the calls so
		// far, the writes so far beside the finalizer ([patch, status]),
		// whether progress records are on the object and which handler
		// they belong to.
		setup func(s *S, o obj) (calls []string, writes [2]int, retrying string)
	}
	states := []state{{
		name: "settled",
		pins: "when every handler is done",
		setup: func(s *S, o obj) ([]string, [2]int, string) {
			o.spec = specOf(nil)
			s.createHandled("x", o)
			return []string{"create_fn create 0"}, [2]int{0, 1}, ""
		},
	}, {
		name: "create-failed",
		pins: "after the create handler failed permanently (the creation is done, \"1 failed\")",
		setup: func(s *S, o obj) ([]string, [2]int, string) {
			o.spec = specOf(map[string]behaviour{"create_fn": permanent()})
			s.createHandled("x", o)
			return []string{"create_fn create 0"}, [2]int{0, 1}, ""
		},
	}, {
		name:       "create-retry",
		superseded: "0 succeeded; 0 failed; 1 left to the moment.",
		pins:       "while the create handler is retrying (TemporaryError)",
		setup: func(s *S, o obj) ([]string, [2]int, string) {
			o.spec = specOf(map[string]behaviour{"create_fn": forever()})
			s.create("x", o)
			s.waitRecord("x", "create_fn", record{Purpose: "create", Retries: 1, Delayed: true})
			return []string{"create_fn create 0"}, [2]int{1, 0}, "create_fn"
		},
	}, {
		name:       "update-retry",
		superseded: "0 succeeded; 0 failed; 1 left to the moment.",
		pins:       "while the update handler is retrying",
		setup: func(s *S, o obj) ([]string, [2]int, string) {
			o.spec = specOf(map[string]behaviour{"update_fn": forever()})
			s.createHandled("x", o)
			s.patch("x", `{"spec":{"step":2}}`)
			s.waitRecord("x", "update_fn", record{Purpose: "update", Retries: 1, Delayed: true})
			return []string{"create_fn create 0", "update_fn update 0"}, [2]int{1, 1}, "update_fn"
		},
	}, {
		name:       "field-retry",
		superseded: "1 succeeded; 0 failed; 1 left to the moment.",
		pins: "while a field handler on metadata.labels is retrying on an update (the case a user reported: " +
			"\"Update is superseded by delete … 1 left to the moment\")",
		setup: func(s *S, o obj) ([]string, [2]int, string) {
			o.annotations["conf/labels-fn"] = "yes"
			o.spec = specOf(map[string]behaviour{"labels_fn": forever()})
			s.createHandled("x", o)
			s.patch("x", `{"metadata":{"labels":{"l":"1"}}}`)
			s.waitRecord("x", "labels_fn/metadata.labels", record{Purpose: "update", Retries: 1, Delayed: true})
			// The update handler succeeded in the same cycle: its record and
			// result went out with the field handler's record.
			return []string{"create_fn create 0", "update_fn update 0", "labels_fn/metadata.labels update 0"},
				[2]int{1, 2}, "labels_fn/metadata.labels"
		},
	}}
	var out []scenario
	for _, st := range states {
		for _, fm := range finalizerModes {
			for _, sp := range spawnModes {
				finalized := fm.required || sp.feature != ""
				var pins strings.Builder
				fmt.Fprintf(&pins, "Deleting the object %s, with %s delete handler", st.pins, map[string]string{
					"required": "a required", "optional": "an optional", "both": "a required and an optional"}[fm.name])
				if sp.feature != "" {
					fmt.Fprintf(&pins, " and a %s", sp.feature)
				}
				pins.WriteString(": ")
				switch {
				case !finalized:
					pins.WriteString("no finalizer is needed, so the object goes at once and no handler runs for the deletion.")
				case st.superseded != "":
					pins.WriteString("the deletion supersedes the unfinished cause (\"… is superseded by delete: " + st.superseded +
						"\"): the retrying handler's record is purged and it is never called again, every delete handler " +
						"(optional ones too) runs exactly once, and the finalizer is released.")
				default:
					pins.WriteString("every delete handler (optional ones too) runs exactly once, and the finalizer is released.")
					if sp.feature != "" {
						pins.WriteString(" " + spawnNote)
					}
				}
				out = append(out, scenario{
					name: fmt.Sprintf("delete-during/%s/%s/%s", st.name, fm.name, sp.name),
					pins: pins.String(),
					ref:  "kopf.md §1.1 (on.delete, optional), §1.4 (superseded causes), §1.7, §3.8; §13 (3, 4)",
					run: func(s *S) {
						features := append([]string{}, fm.features...)
						if sp.feature != "" {
							features = append(features, sp.feature)
						}
						s.start()
						calls, writes, retrying := st.setup(s, obj{annotations: on(features...)})
						if sp.handler != "" {
							s.waitCall("x", sp.handler, sp.reason, 0)
							calls = append(calls, sp.handler+" "+sp.reason+" 0")
						}
						s.quiet()
						before := s.mustGet("x")
						if hasFinalizer(before) != finalized {
							s.Fatalf("finalizers %v before the deletion, want ours: %v", before.GetFinalizers(), finalized)
						}
						if finalized {
							writes[0]++
						}
						s.wantWrites("x", w(writes[0], writes[1]))
						s.del("x")
						s.waitGone("x")
						s.quiet()
						if finalized {
							for _, h := range fm.handlers {
								calls = append(calls, h+" delete 0")
							}
						}
						s.wantCalls("x", calls...)
						for _, c := range s.calls("x") {
							if c.reason == "delete" && !c.finalized {
								s.Errorf("%s ran for the deletion without the finalizer", c.handler)
							}
						}
						superseded := 0
						if finalized && retrying != "" {
							superseded = 1
							s.wantLog("x", "superseded by delete: "+st.superseded, 1)
						}
						s.wantLog("x", "superseded by delete", superseded)
						if retrying != "" && finalized {
							// The retrying handler's record is purged by the deletion.
							got := s.progressWrites("x", retrying)
							if len(got) == 0 || got[len(got)-1] != "purged" {
								s.Errorf("the record of %s was not purged: %v", retrying, got)
							}
							for _, p := range got {
								if strings.HasPrefix(p, "delete/") {
									s.Errorf("the record of %s was taken over by the deletion: %v", retrying, got)
									break
								}
							}
						}
						if !finalized {
							s.wantWrites("x", w(writes[0], writes[1]))
						} else {
							s.wantWrites("x", deletionWrites(sp.handler != "", true, writes)...)
						}
						if sp.handler == "daemon_fn" {
							s.wantDaemonStopped("x", "deleted")
						}
					},
				})
			}
		}
	}
	return out
}

func deletedWhileRunningScenarios() []scenario {
	return []scenario{{
		name: "delete-results/stored-as-kopf",
		pins: "Results of delete handlers go to status.<handler-id>, as Kopf stores every changing handler's result: " +
			"while the finalizer still holds the object (its other delete handler retries) the finished one's result " +
			"is on the object; the last one finishes in the cycle that releases the object.",
		ref:       "kopf.md §1.6, §3.8",
		departure: departureNoTouch + " " + departureDeleteResults,
		run: func(s *S) {
			s.start()
			s.createHandled("x", obj{annotations: on("delete-required", "delete-optional"),
				spec: specOf(map[string]behaviour{"delete_optional_fn": temporary(1, 2)})})
			s.del("x")
			s.waitRecord("x", "delete_optional_fn", record{Purpose: "delete", Retries: 1, Delayed: true})
			// The cycle's records go first, its results to /status next.
			s.waitFor("delete_fn's result while the finalizer holds the object", func() error {
				u := s.get("x")
				if u == nil {
					return errors.New("the object is gone")
				}
				status, _ := u.Object["status"].(map[string]any)
				if got, _ := json.Marshal(status["delete_fn"]); string(got) != result("delete", 0) {
					return fmt.Errorf("status.delete_fn = %s, want %s", got, result("delete", 0))
				}
				return nil
			})
			s.waitGone("x")
			s.quiet()
			s.wantCalls("x", "create_fn create 0", "delete_fn delete 0", "delete_optional_fn delete 0", "delete_optional_fn delete 1")
			evs := s.suite.audit.events(s.ns, "x")
			if n := len(evs); n < 2 || evs[n-1].ObjectRef.Subresource != "" ||
				!strings.Contains(string(evs[n-1].RequestObject), `"finalizers":null`) ||
				strings.Contains(string(evs[n-2].RequestObject), `"delete_optional_fn":{`) {
				s.Errorf("want the finalizer released last, without a write of the last result alone; writes:\n%s", s.suite.audit.describe(s.ns))
			}
			s.wantWrites("x", w(3, 2))
		},
	}, {
		name: "deleted-while-running/create-handler/no-finalizer",
		pins: "An object without a finalizer deleted while its create handler runs: the handler's call finishes, " +
			"the write of its outcome finds the object gone (404) and is dropped quietly (no error, no retry), and " +
			"nothing runs again.",
		ref: "kopf.md §1.4 (GONE), §2 (a 404 on PATCH means \"object gone\")",
		run: func(s *S) {
			s.start()
			s.create("x", obj{spec: specOf(map[string]behaviour{"create_fn": blocking(4)})})
			s.waitCall("x", "create_fn", "create", 0)
			s.del("x")
			s.wantStillRunning("x", "create_fn")
			s.waitGone("x")
			s.waitFor("the outcome's write", func() error {
				if got := s.suite.audit.summary(s.ns, "x"); got != "patch/status!404=1" {
					return fmt.Errorf("writes %q", got)
				}
				return nil
			})
			s.quiet()
			s.wantCalls("x", "create_fn create 0")
			s.wantWrites("x", "patch/status!404=1")
		},
	}, {
		name: "deleted-while-running/create-handler/finalizer",
		pins: "An object with a finalizer deleted while its create handler runs: the creation's outcome is stored, " +
			"then the deletion is handled (delete handler once) and the object goes; the create handler is not " +
			"called again.",
		ref: "kopf.md §1.4, §3.9",
		run: func(s *S) {
			s.start()
			s.create("x", obj{annotations: on("delete-required"), spec: specOf(map[string]behaviour{"create_fn": blocking(4)})})
			s.waitCall("x", "create_fn", "create", 0)
			s.del("x")
			s.wantStillRunning("x", "create_fn")
			s.waitGone("x")
			s.quiet()
			s.wantCalls("x", "create_fn create 0", "delete_fn delete 0")
			s.wantWrites("x", w(2, 1))
		},
	}, {
		name: "deleted-while-running/update-handler/finalizer",
		pins: "An object with a finalizer deleted while its update handler runs: the update's outcome is stored, " +
			"then the deletion is handled and the object goes; the update handler is not called again.",
		ref: "kopf.md §1.4, §3.9",
		run: func(s *S) {
			s.start()
			s.createHandled("x", obj{annotations: on("delete-required"), spec: specOf(map[string]behaviour{"update_fn": blocking(4)})})
			s.patch("x", `{"spec":{"step":2}}`)
			s.waitCall("x", "update_fn", "update", 0)
			s.del("x")
			s.wantStillRunning("x", "update_fn")
			s.waitGone("x")
			s.quiet()
			s.wantCalls("x", "create_fn create 0", "update_fn update 0", "delete_fn delete 0")
			s.wantWrites("x", w(2, 2))
		},
	}}
}
