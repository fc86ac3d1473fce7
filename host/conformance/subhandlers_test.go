package conformance_test

import (
	"encoding/json"
	"slices"
)

// subrefsWritten lists the subrefs of each write of a handler's record.
func (s *S) subrefsWritten(name, id string) [][]string {
	var out [][]string
	for _, ev := range s.suite.audit.events(s.ns, name) {
		var body struct {
			Metadata struct {
				Annotations map[string]*string `json:"annotations"`
			} `json:"metadata"`
		}
		if ev.ObjectRef.Subresource != "" || json.Unmarshal(ev.RequestObject, &body) != nil {
			continue
		}
		if v := body.Metadata.Annotations[prefix+id]; v != nil {
			var r struct{ Subrefs []string }
			_ = json.Unmarshal([]byte(*v), &r)
			out = append(out, r.Subrefs)
		}
	}
	return out
}

const subNote = "Sub-handlers run within their parent's call (a module keeps no closures between calls): the " +
	"parent is called in every cycle until they are all finished, all due sub-handlers in the same cycle " +
	"(Kopf's default lifecycle runs one per cycle)."

func subhandlerScenarios() []scenario {
	subs := func(behave map[string]behaviour) map[string]any {
		return specOf(behave, "subs", []any{"a", "b"})
	}
	return []scenario{{
		name: "subhandlers/retry-one",
		pins: "A create handler registers two sub-handlers (ids sub_fn/a, sub_fn/b); b fails with TemporaryError " +
			"once: each has its own record (sub_fn.a, sub_fn.b), the parent's record lists both in subrefs and waits " +
			"for b (an attempt counted, delayed as b); a is not called again; the parent runs again and its result " +
			"is stored once b is done; every result goes to status.<parent/child>; all records are purged.",
		ref:       "kopf.md §1.1 (@kopf.subhandler), §1.6 (sub-handlers), §3.2 (subrefs), §3.3",
		departure: subNote,
		run: func(s *S) {
			s.start()
			s.create("x", obj{annotations: on("subhandlers"), spec: subs(map[string]behaviour{"sub_fn-b": temporary(1, 1)})})
			s.waitHandled("x")
			s.quiet()
			s.wantCalls("x", "create_fn create 0", "sub_fn create 0", "sub_fn create 1",
				"sub_fn/a create 0", "sub_fn/b create 0", "sub_fn/b create 1")
			s.wantState("x", false, map[string]string{"create_fn": result("create", 0), "sub_fn": result("create", 1),
				"sub_fn/a": result("create", 0), "sub_fn/b": result("create", 1)})
			s.wantProgressWrites("x", "sub_fn", "create/1+delayed", "purged")
			s.wantProgressWrites("x", "sub_fn/a", "create/1+success", "purged")
			s.wantProgressWrites("x", "sub_fn/b", "create/1+delayed", "purged")
			if got := s.subrefsWritten("x", "sub_fn"); len(got) != 1 || !slices.Equal(got[0], []string{"sub_fn/a", "sub_fn/b"}) {
				s.Errorf("subrefs written: %v, want [[sub_fn/a sub_fn/b]]", got)
			}
			s.wantWrites("x", w(2, 2))
		},
	}, {
		name: "subhandlers/restart-continues",
		pins: "An operator restarted while a sub-handler waits for its retry: the new one calls the parent again, " +
			"which registers both sub-handlers, and runs only the unfinished one (at its retry count); the finished " +
			"one is not called again.",
		ref:       "kopf.md §1.6, §3.9",
		departure: subNote,
		run: func(s *S) {
			first := s.start()
			s.create("x", obj{annotations: on("subhandlers"), spec: subs(map[string]behaviour{"sub_fn-b": temporary(1, 3)})})
			s.waitRecord("x", "sub_fn/b", record{Purpose: "create", Retries: 1, Delayed: true})
			first.stop()
			s.start()
			s.waitHandled("x")
			s.quiet()
			s.wantCalls("x", "create_fn create 0", "sub_fn create 0", "sub_fn create 1",
				"sub_fn/a create 0", "sub_fn/b create 0", "sub_fn/b create 1")
			s.wantState("x", false, map[string]string{"create_fn": result("create", 0), "sub_fn": result("create", 1),
				"sub_fn/a": result("create", 0), "sub_fn/b": result("create", 1)})
		},
	}, {
		name: "subhandlers/permanent-failure-is-done",
		pins: "A sub-handler failing permanently is finished: the parent does not wait for it, succeeds, and the " +
			"failed one's record says failure until the cause's records are purged; it has no result.",
		ref:       "kopf.md §1.6, §2",
		departure: subNote,
		run: func(s *S) {
			s.start()
			s.create("x", obj{annotations: on("subhandlers"), spec: subs(map[string]behaviour{"sub_fn-a": permanent()})})
			s.waitHandled("x")
			s.quiet()
			s.wantCalls("x", "create_fn create 0", "sub_fn create 0", "sub_fn/a create 0", "sub_fn/b create 0")
			s.wantState("x", false, map[string]string{"create_fn": result("create", 0), "sub_fn": result("create", 0),
				"sub_fn/b": result("create", 0)})
			s.wantWrites("x", w(0, 1))
		},
	}}
}
