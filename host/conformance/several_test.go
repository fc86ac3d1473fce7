package conformance_test

// severalKindsScenarios pin one function under several of Kopf's changing
// decorators (@kopf.on.create, @kopf.on.update and @kopf.on.resume on
// multi_fn): one id, one progress record, one call per cause.
func severalKindsScenarios() []scenario {
	return []scenario{{
		name: "several-kinds/one-call-per-cause",
		pins: "One function registered as a create, an update and a resume handler (one id, multi_fn) is called " +
			"once per cause: on the creation (reason create), an update (reason update), a restart over the " +
			"unchanged object (reason resume) and a change made while no operator ran (reason update: its update " +
			"and resume entries are both due for an object of the initial listing, and it runs once, as Kopf " +
			"runs a function once per cause however many of its decorators match); its result is status.multi_fn.",
		ref: "kopf.md §1.3 (deduplication by function and id), §1.4 (cuckoo-style resume); Kopf's docs, Handlers: " +
			"Resuming handlers (@kopf.on.resume with @kopf.on.create), Kwargs: Causation",
		run: func(s *S) {
			first := s.start()
			s.createHandled("x", obj{annotations: on("multi"), spec: specOf(nil)})
			s.patch("x", `{"spec":{"step":2}}`)
			s.waitHandled("x")
			s.quiet()
			first.stop()
			second := s.start()
			s.waitCall("x", "multi_fn", "resume", 0)
			s.quiet()
			second.stop()
			s.patch("x", `{"spec":{"step":3}}`)
			s.start()
			s.waitHandled("x")
			s.quiet()
			s.wantCalls("x", "create_fn create 0", "update_fn update 0", "update_fn update 0",
				"multi_fn create 0", "multi_fn update 0", "multi_fn resume 0", "multi_fn update 0")
			s.wantState("x", false, map[string]string{"create_fn": result("create", 0),
				"update_fn": result("update", 0), "multi_fn": result("update", 0)})
			s.wantProgressWrites("x", "multi_fn")
		},
	}, {
		name: "several-kinds/one-progress-record",
		pins: "The create and update entries of one function keep one progress record under its id: a temporary " +
			"error on the creation is stored with purpose create and purged when the retry succeeds; the next " +
			"update starts at retry 0 with a record of purpose update.",
		ref:       "kopf.md §1.1 (id), §3.2 (progress per handler id, purpose)",
		departure: departureNoTouch,
		run: func(s *S) {
			s.start()
			s.createHandled("x", obj{annotations: on("multi"), spec: specOf(map[string]behaviour{"multi_fn": temporary(1, 0.5)})})
			s.patch("x", `{"spec":{"step":2}}`)
			s.waitCall("x", "multi_fn", "update", 1)
			s.waitHandled("x")
			s.quiet()
			s.wantCalls("x", "create_fn create 0", "update_fn update 0",
				"multi_fn create 0", "multi_fn create 1", "multi_fn update 0", "multi_fn update 1")
			s.wantProgressWrites("x", "multi_fn", "create/1+delayed", "purged", "update/1+delayed", "purged")
			s.wantState("x", false, map[string]string{"create_fn": result("create", 0),
				"update_fn": result("update", 0), "multi_fn": result("update", 1)})
		},
	}}
}

// memoScenarios pin Kopf's memo on objects (and the project's copy per
// object).
func memoScenarios() []scenario {
	return []scenario{{
		name: "memo/a-copy-per-object",
		pins: "Each object's memo starts as the operator memo that the startup handler filled (an empty list " +
			"under seen) and keeps what the object's handlers put there between their calls: memo_fn appends the " +
			"object's name on the creation and on an update (x sees [x] then [x, x]), and another object's memo " +
			"is its own (y sees [y]).",
		ref: "kopf.md §1.5 (memo), §10 (memo: per-object, from the operator memo); Kopf's docs, Memos",
		departure: "A memo is a copy per object, nested values included: Kopf's is a shallow copy of the " +
			"operator memo, so the list the startup handler put there is one list shared by every object (y " +
			"would see [x, x, y]); here y sees [y].",
		run: func(s *S) {
			s.start()
			s.createHandled("x", obj{annotations: on("memo"), spec: specOf(nil)})
			s.patch("x", `{"spec":{"step":2}}`)
			s.waitCall("x", "memo_fn", "update", 0)
			s.waitHandled("x")
			s.createHandled("y", obj{annotations: on("memo"), spec: specOf(nil)})
			s.quiet()
			s.wantCalls("x", "create_fn create 0", "update_fn update 0", "memo_fn create 0", "memo_fn update 0")
			s.wantState("x", false, map[string]string{"create_fn": result("create", 0), "update_fn": result("update", 0),
				"memo_fn": `{"seen":["x","x"]}`})
			s.wantState("y", false, map[string]string{"create_fn": result("create", 0), "memo_fn": `{"seen":["y"]}`})
		},
	}}
}
