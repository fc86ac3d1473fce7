package conformance_test

import "fmt"

func spawningScenarios() []scenario {
	// only runs an object whose only finalizer need is a timer or daemon.
	only := func(feature, handler, reason string) func(s *S) {
		return func(s *S) {
			s.start()
			s.createHandled("x", obj{annotations: on(feature), spec: specOf(nil)})
			s.waitCall("x", handler, reason, 0)
			s.quiet()
			if !s.callOf("x", "create_fn", "create", 0).finalized {
				s.Error("create_fn ran before the finalizer was added")
			}
			s.wantState("x", true, map[string]string{"create_fn": result("create", 0)})
			s.del("x")
			s.waitGone("x")
			s.quiet()
			s.wantCalls("x", "create_fn create 0", handler+" "+reason+" 0")
			s.wantWrites("x", w(2, 1))
			if handler == "daemon_fn" {
				s.wantDaemonStopped("x", "deleted")
			}
		}
	}
	return []scenario{{
		name: "spawn/timer-holds-finalizer-until-stopped",
		pins: "A timer needs the finalizer (added first, in a cycle of its own); it runs at once (no initial " +
			"delay); deleting the object stops it and then releases the finalizer, and it is not run again.",
		ref: "kopf.md §1.1 (timer: finaliser), §1.7",
		run: only("timer", "timer_fn", "timer"),
	}, {
		name: "spawn/daemon-holds-finalizer-until-stopped",
		pins: "A daemon needs the finalizer; it is started once; deleting the object asks it to stop (reason: " +
			"deleted) and the finalizer is released once it has returned.",
		ref: "kopf.md §1.1 (daemon: finaliser), §1.5 (stopped), §1.7",
		run: only("daemon", "daemon_fn", "daemon"),
	}, {
		name: "spawn/daemon-stopped-when-filters-stop-matching",
		pins: "A daemon whose filters stop matching is stopped (reason: filters mismatch); the object needs no " +
			"finalizer any more, so it is released in the cycle of that change (an update: the update handler runs).",
		ref: "kopf.md §1.7 (FILTERS_MISMATCH)",
		run: func(s *S) {
			s.start()
			s.createHandled("x", obj{annotations: on("daemon"), spec: specOf(nil)})
			s.waitCall("x", "daemon_fn", "daemon", 0)
			s.quiet()
			s.patch("x", `{"metadata":{"annotations":{"conf/daemon":null}}}`)
			s.waitCall("x", "update_fn", "update", 0)
			s.waitHandled("x")
			s.quiet()
			s.wantDaemonStopped("x", "filters-mismatch")
			s.wantCalls("x", "create_fn create 0", "daemon_fn daemon 0", "update_fn update 0")
			s.wantState("x", false, map[string]string{"create_fn": result("create", 0), "update_fn": result("update", 0)})
			s.wantWrites("x", w(2, 2))
		},
	}, {
		name: "spawn/daemon-polled-while-it-ignores-the-stop",
		pins: "A daemon that keeps running after it is asked to stop, with no cancellation_timeout, is polled " +
			"every cancellation_polling seconds (1 s here) until it returns: each check says it still runs, its " +
			"instance is never closed, and the finalizer holds the object until the daemon returns, then goes.",
		ref: "kopf.md §1.1 (daemon: cancellation_polling), §1.7 (termination: without a cancellation_timeout " +
			"Kopf polls every cancellation_polling seconds and the finaliser stays)",
		departure: "The host learns of a daemon's exit at once, so a check only reports (an info line per " +
			"check) and the finalizer goes as soon as the daemon returns; Kopf re-runs the object's processing " +
			"at each check to see whether the daemon exited.",
		run: func(s *S) {
			s.start()
			s.createHandled("x", obj{annotations: on("stubborn"), spec: specOf(nil, "linger", 3.5)})
			s.waitCall("x", "stubborn_fn", "daemon", 0)
			s.del("x")
			s.waitGone("x")
			s.quiet()
			s.wantCalls("x", "create_fn create 0", "stubborn_fn daemon 0")
			s.wantDaemonStopped("x", "deleted")
			if n := len(s.rec.find("x", "Daemon 'stubborn_fn' is still running")); n < 1 {
				s.Errorf("no check said the daemon still ran:\n%s", s.rec.dump())
			}
			s.wantLog("x", "did not exit in time", 0)
		},
	}, {
		name: "spawn/callable-initial-delay",
		pins: "A timer whose initial delay is a function of the object (Kopf's initial_delay=fn) waits what the " +
			"function says for that object: an hour for x (it does not run within the scenario), nothing for y (it " +
			"runs at once); deleting x stops its timer during the delay and releases the finalizer.",
		ref: "kopf.md §1.1 (timer, daemon: initial_delay: float | callable), §1.7 (timer loop: optional initial_delay)",
		run: func(s *S) {
			s.start()
			s.createHandled("x", obj{annotations: on("delayed-timer"), spec: specOf(nil, "delay", 3600)})
			s.createHandled("y", obj{annotations: on("delayed-timer"), spec: specOf(nil, "delay", 0)})
			s.waitCall("y", "delayed_timer_fn", "timer", 0)
			s.quiet()
			s.wantCalls("x", "create_fn create 0")
			s.wantCalls("y", "create_fn create 0", "delayed_timer_fn timer 0")
			for _, name := range []string{"x", "y"} {
				s.del(name)
				s.waitGone(name)
				s.wantLog(name, "starts at once", 0)
			}
		},
	}}
}

func restartScenarios() []scenario {
	return []scenario{{
		name: "restart/create-retry-continues",
		pins: "An operator restarted while the create handler waits for its retry: the new one continues the " +
			"creation from the record on the object (retry 1, then 2: no reset, no second first attempt), and does " +
			"not mix resume handlers into a creation.",
		ref:       "kopf.md §1.4 (4: creation never mixes with resume), §3.9; §13 (4)",
		departure: departureNoTouch,
		run: func(s *S) {
			first := s.start()
			s.create("x", obj{annotations: on("resume"), spec: specOf(map[string]behaviour{"create_fn": temporary(2, 2.5)})})
			s.waitRecord("x", "create_fn", record{Purpose: "create", Retries: 1, Delayed: true})
			first.stop()
			s.wantCalls("x", "create_fn create 0") // stopped mid-retry
			s.start()
			s.waitHandled("x")
			s.quiet()
			s.wantCalls("x", "create_fn create 0", "create_fn create 1", "create_fn create 2")
			s.wantProgressWrites("x", "create_fn", "create/1+delayed", "create/2+delayed", "purged")
			s.wantState("x", false, map[string]string{"create_fn": result("create", 2)})
			s.wantWrites("x", w(3, 1))
		},
	}, {
		name: "restart/update-retry-continues-with-resume",
		pins: "An operator restarted while the update handler waits for its retry: the new one continues the update " +
			"at its retry count; the object comes from the initial listing, so the resume handler is mixed into the " +
			"update once (reason update).",
		ref:       "kopf.md §1.4 (cuckoo-style resume), §3.9",
		departure: departureNoTouch,
		run: func(s *S) {
			first := s.start()
			s.createHandled("x", obj{annotations: on("resume"), spec: specOf(map[string]behaviour{"update_fn": temporary(2, 2.5)})})
			s.patch("x", `{"spec":{"step":2}}`)
			s.waitRecord("x", "update_fn", record{Purpose: "update", Retries: 1, Delayed: true})
			first.stop()
			s.wantCalls("x", "create_fn create 0", "update_fn update 0") // stopped mid-retry
			s.start()
			s.waitHandled("x")
			s.quiet()
			s.wantCalls("x", "create_fn create 0", "update_fn update 0", "update_fn update 1", "update_fn update 2",
				"resume_fn update 0")
			s.wantState("x", false, map[string]string{"create_fn": result("create", 0),
				"update_fn": result("update", 2), "resume_fn": result("update", 0)})
		},
	}, {
		name: "restart/resume-handler-runs-once",
		pins: "After a restart, an unchanged object from the initial listing gets the resume cause once: the resume " +
			"handler is called (reason resume), nothing else; its result is the only write.",
		ref: "kopf.md §1.1 (on.resume), §1.4 (5), §3.9",
		run: func(s *S) {
			first := s.start()
			s.createHandled("x", obj{annotations: on("resume"), spec: specOf(nil)})
			s.quiet()
			first.stop()
			s.start()
			s.waitCall("x", "resume_fn", "resume", 0)
			s.quiet()
			s.wantCalls("x", "create_fn create 0", "resume_fn resume 0")
			s.wantState("x", false, map[string]string{"create_fn": result("create", 0), "resume_fn": result("resume", 0)})
			s.wantWrites("x", w(0, 2))
		},
	}, {
		name: "restart/no-writes-over-handled-objects",
		pins: "A restart over an already handled object with no resume handler calls nothing and writes nothing.",
		ref:  "kopf.md §3.9; DESIGN.md (0 writes when a host restarts over handled objects)",
		run: func(s *S) {
			first := s.start()
			s.createHandled("x", obj{annotations: on("delete-required"), spec: specOf(nil, "field", "a")})
			s.quiet()
			first.stop()
			s.start()
			s.quiet()
			s.wantCalls("x", "create_fn create 0", "field_fn/spec.field create 0")
			s.wantWrites("x", w(1, 1))
		},
	}, {
		name: "restart/update-while-down",
		pins: "A change made while no operator runs is handled at the next start as an update (only the last state " +
			"counts), with the resume handler mixed in (reason update).",
		ref: "kopf.md §1.4, §3.9",
		run: func(s *S) {
			first := s.start()
			s.createHandled("x", obj{annotations: on("resume"), spec: specOf(nil)})
			s.quiet()
			first.stop()
			s.patch("x", `{"spec":{"step":2}}`)
			s.patch("x", `{"spec":{"step":3}}`)
			s.start()
			s.waitHandled("x")
			s.quiet()
			s.wantCalls("x", "create_fn create 0", "update_fn update 0", "resume_fn update 0")
			if c := s.callOf("x", "update_fn", "update", 0); c.step != "3" {
				s.Errorf("update_fn saw step %s, want 3", c.step)
			}
			s.wantWrites("x", w(0, 2))
		},
	}, {
		name: "restart/delete-while-down",
		pins: "An object marked for deletion while no operator runs is handled at the next start: the delete handler " +
			"and the resume handler with deleted=True run (reason delete), the plain resume handler does not, and " +
			"the finalizer is released.",
		ref: "kopf.md §1.1 (resume: deleted), §1.4, §3.9",
		run: func(s *S) {
			first := s.start()
			s.createHandled("x", obj{annotations: on("delete-required", "resume", "resume-deleted"), spec: specOf(nil)})
			s.quiet()
			first.stop()
			s.del("x")
			s.start()
			s.waitGone("x")
			s.quiet()
			s.wantCalls("x", "create_fn create 0", "delete_fn delete 0", "resume_deleted_fn delete 0")
			s.wantWrites("x", w(2, 1))
		},
	}, {
		name: "restart/delete-retry-continues",
		pins: "An operator restarted while the delete handler waits for its retry: the new one continues it at its " +
			"retry count and releases the finalizer when it succeeds.",
		ref:       "kopf.md §3.9, §12.3 (stuck finalizers)",
		departure: departureNoTouch,
		run: func(s *S) {
			first := s.start()
			s.createHandled("x", obj{annotations: on("delete-required"), spec: specOf(map[string]behaviour{"delete_fn": temporary(2, 2.5)})})
			s.del("x")
			s.waitRecord("x", "delete_fn", record{Purpose: "delete", Retries: 1, Delayed: true})
			first.stop()
			s.wantCalls("x", "create_fn create 0", "delete_fn delete 0") // stopped mid-retry
			s.start()
			s.waitGone("x")
			s.quiet()
			s.wantCalls("x", "create_fn create 0", "delete_fn delete 0", "delete_fn delete 1", "delete_fn delete 2")
			s.wantProgressWrites("x", "delete_fn", "delete/1+delayed", "delete/2+delayed", "purged")
			s.wantWrites("x", w(4, 1))
		},
	}, {
		name: "restart/daemon-restarted",
		pins: "A daemon is stopped when the operator exits (reason: exiting) and started again by the next " +
			"operator; the finalizer stays on the object meanwhile.",
		ref: "kopf.md §1.7 (OPERATOR_EXITING)",
		run: func(s *S) {
			first := s.start()
			s.createHandled("x", obj{annotations: on("daemon"), spec: specOf(nil)})
			s.waitCall("x", "daemon_fn", "daemon", 0)
			first.stop()
			s.wantDaemonStopped("x", "exiting")
			if !hasFinalizer(s.mustGet("x")) {
				s.Error("the finalizer was released when the operator stopped")
			}
			s.start()
			s.waitFor("the daemon started again", func() error {
				if n := len(s.calls("x")); n != 3 {
					return fmt.Errorf("calls %v", s.calls("x"))
				}
				return nil
			})
			s.quiet()
			s.wantCalls("x", "create_fn create 0", "daemon_fn daemon 0", "daemon_fn daemon 0")
			s.wantWrites("x", w(1, 1))
		},
	}}
}
