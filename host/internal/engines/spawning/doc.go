// Package spawning runs the timers and daemons of objects, as Kopf's
// @kopf.timer and @kopf.daemon: one worker per object and handler, for as
// long as the object exists, is not marked for deletion, and matches the
// handler's filters. A daemon's worker is a goroutine; a timer's holds a
// goroutine only while it runs.
//
// # Who calls it, what it calls
//
// The reactor owns a [Spawner] and calls [Spawner.Adjust] in every
// processing cycle of an object with the timers and daemons that match it
// now; the spawner starts what is missing, stops what no longer matches,
// keeps the live body that the handlers see, and resets the idle clock on
// essential changes. When the object is marked for deletion the reactor
// asks it to stop everything and releases the finalizer only once
// [Spawner.Running] is zero; the spawner calls [Options.Wake] when the
// last worker of an object stopped. The handlers run in their modules
// through wasmrt; their results and patches go to the object through kube,
// one request per endpoint per run.
//
// # Timers
//
// A timer waits its initial delay, then (with idle) until the object has
// had no essential change for that long, runs, applies its result, and
// sleeps its interval (sharp: aligned to the interval, its run time
// subtracted). A failure's delay replaces the interval. A timer never
// overlaps itself. With neither interval nor idle it runs once.
//
// Between its runs a timer holds no goroutine: it schedules its next step
// with the clock's AfterFunc, whose callback starts a goroutine for that
// step (timer.go). A stop that finds it waiting cancels the callback and
// ends the worker there and then, so a deletion's cycle sees it gone; a
// stop during a run is seen when the run ends.
//
// # Daemons
//
// A daemon runs once, on an instance of its own (wasmrt's
// HandleDedicated), and is restarted only after a temporary error. Asked to
// stop, it sees the stop through the sleep-until-stopped and is-stopped host
// functions; after its cancellation backoff and cancellation timeout the
// spawner terminates it by closing its instance — which Kopf, with Python
// threads, cannot do — so a daemon never holds an object's finalizer for
// ever unless it has no cancellation timeout at all. At most
// [Options.MaxDaemons] run at once per module; a daemon past the cap waits
// for a slot, and that is logged.
//
// # Pausing
//
// [Spawner.Pause] (the host's gate closed: peering, leader election) stops
// every worker with the reason "pausing" — Kopf's OPERATOR_PAUSING — and
// spawns none until [Spawner.Resume]; a timer also runs each time only
// through the gate's Enter and Leave ([Options.Gate]), so none runs while
// the host is paused. The objects' cycles after the resume start them again.
package spawning
