// Package testguests holds wasm modules that the host's tests load: one that
// behaves (for the call-overhead benchmarks) and several that misbehave on
// purpose (loop, run out of memory, panic, return bad JSON or huge output,
// lack an export, speak another ABI version, declare an invalid manifest),
// and one (extism) that uses go-pdk's logs, variables, config and HTTP.
//
// The runtime's guests (good, misbehave, hostcalls, extism, noexport,
// wrongabi, badmanifest, manifestjson) are written with raw go-pdk and the abi
// package, not the guest SDK, so that they exercise the runtime alone; the
// guests of the reactor's tests, of the Kopf conformance suite and of the
// benchmarks (reactor, conformance, spawning, spawnbench, reloadv1,
// reloadv2, admissionbench, typed, memos) and of the replay tests
// (replaychanged: reloadv1 with one more annotation on tier=gold objects), of
// the canary and shadow tests (canaryv1, canaryv2: every write names its
// version) and the isolation tests' hog (ConfigMap handlers that loop,
// sleep, flood the API server, fail or grow, by the object's "hog" label) use
// the SDK. Each sub-directory is a
// package main built with
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o bin/wasm/<name>.wasm ./testguests/<name>
//
// (the Makefile's wasm target, or internal/wasmtest from a test).
package testguests
