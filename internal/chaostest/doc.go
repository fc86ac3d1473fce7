// Package chaostest holds the fault tests of the host on the real control
// plane (internal/testenv), with real `kopf-wasm run` processes (the CLI,
// built once per test binary) serving the conformance test guest
// (examples/testguests/conformance), whose handlers log every call:
//
//   - TestCrashLoop: objects are created, updated and deleted while the
//     host process is SIGKILLed at random moments and started again; every
//     object ends with every handler completed, and a handler runs again
//     only if its success was not yet stored on the object when the process
//     died (in flight at the kill);
//   - TestAPIServerRestart: kube-apiserver stops and starts again on the
//     same etcd while the host runs and objects change, handlers among them
//     in flight: no change is lost and none is handled twice;
//   - TestWatchGone: the host's watch falls behind (the process paused, its
//     connections frozen by a proxy) while objects change and etcd is
//     compacted; the watch resumes, is answered 410 Gone, the host lists
//     again, loses no change and handles none twice.
//
// The tests are end-to-end tests in the `go test ./...` of `make test`, in
// their short version (TestCrashLoop: 30 kills). With KOPF_WASM_CHAOS=long
// (`make chaos`) TestCrashLoop kills 100 times with more objects. Random
// choices come from a seed that the tests log; KOPF_WASM_CHAOS_SEED=N
// replays a schedule.
//
// The package has no code of its own besides this comment: everything is in
// its _test files.
package chaostest
