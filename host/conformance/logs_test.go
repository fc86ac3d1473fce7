package conformance_test

import "errors"

// logScenarios pin the lines Kopf users and Kopf's own e2e test
// (tests/e2e/test_examples.py) look for in an operator's log.
func logScenarios() []scenario {
	return []scenario{{
		name: "logs/kopf-lifecycle-lines",
		pins: "An object created, handled, deleted and gone gets Kopf's lifecycle lines, each once and in Kopf's " +
			"words (debug level unless said): \"Adding the finalizer, thus preventing the actual deletion.\", " +
			"\"Creation is in progress: <body>\", \"Handler 'create_fn' succeeded.\" (info), \"Creation is " +
			"processed: …\" (info), \"Deletion is in progress: <body>\", \"Removing the finalizer, thus allowing " +
			"the actual deletion.\", \"Deleted, really deleted, and we are notified.\".",
		ref: "kopf.md §1.4 (GONE), §3.8, §9 (logging), §11 (its e2e test's log lines)",
		run: func(s *S) {
			s.start()
			s.createHandled("x", obj{annotations: on("delete-required"), spec: specOf(nil)})
			s.del("x")
			s.waitGone("x")
			s.waitFor("the gone line", func() error {
				if len(s.rec.find("x", "Deleted, really deleted")) == 0 {
					return errors.New("not logged yet")
				}
				return nil
			})
			s.quiet()
			for _, line := range []string{
				"Adding the finalizer, thus preventing the actual deletion.",
				"Creation is in progress: {",
				"Handler 'create_fn' succeeded.",
				"Creation is processed: ",
				"Deletion is in progress: {",
				"Handler 'delete_fn' succeeded.",
				"Deletion is processed: 1 succeeded; 0 failed.",
				"Removing the finalizer, thus allowing the actual deletion.",
				"Deleted, really deleted, and we are notified.",
			} {
				s.wantLog("x", line, 1)
			}
		},
	}, {
		name: "logs/event-handler-success-per-call",
		pins: "An event handler's every call that succeeds is logged as \"Handler 'event_fn' succeeded.\" (info), " +
			"once per call (Kopf logs every event handler's success; kopf-wasm before issue 29 logged none).",
		ref: "kopf.md §1.1 (on.event), §9 (LocalObjectLogger: never posted); Kopf's 08-events example",
		run: func(s *S) {
			s.start()
			s.createHandled("x", obj{annotations: on("event"), spec: specOf(nil)})
			s.patch("x", `{"metadata":{"labels":{"seen":"yes"}}}`)
			s.waitHandled("x")
			s.quiet()
			n := s.eventCalls("x")
			if n < 2 {
				s.Errorf("the event handler was called %d times, want one per watch event (at least 2)", n)
			}
			s.wantLog("x", "Handler 'event_fn' succeeded.", n)
			s.wantLog("x", "Handler 'event_fn' failed", 0)
		},
	}, {
		name: "logs/event-handler-error-ignored",
		pins: "An event handler's arbitrary error is logged in Kopf's words, \"Handler 'event_fn' failed with an " +
			"exception and will ignore it: …\" (error), once per call, and is not retried: the next call comes " +
			"only with the next watch event.",
		ref: "kopf.md §1.1 (on.event: errors ignored), §2 (ErrorsMode.IGNORED)",
		run: func(s *S) {
			s.start()
			s.createHandled("x", obj{annotations: on("event"), spec: specOf(map[string]behaviour{"event_fn": arbitrary(0)})})
			s.quiet()
			n := s.eventCalls("x")
			if n < 1 {
				s.Errorf("the event handler was not called")
			}
			s.wantLog("x", "Handler 'event_fn' failed with an exception and will ignore it: event_fn fails", n)
			s.wantLog("x", "Handler 'event_fn' succeeded.", 0)
		},
	}}
}

// eventCalls counts the object's event handler calls.
func (s *S) eventCalls(name string) int {
	n := 0
	for _, c := range s.calls(name) {
		if c.handler == "event_fn" {
			n++
		}
	}
	return n
}
