// Package app is the kopf-wasm command line: [Run] parses the arguments,
// runs one command and returns the exit code, with every input and output
// passed in, so that tests call the whole CLI in-process. cmd/kopf-wasm's
// main only wires it to the process (os.Args, the standard streams, SIGINT
// and SIGTERM).
//
// One file per command: run.go, inspect.go, invoke.go, build.go, init.go,
// version.go (and cobra's completion). Flag groups shared between commands
// live in package option; errors that say what to do in package clierr.
// Every command calls package host (or, for build and init, the Go
// toolchain); none of them reaches below it.
//
// # Errors
//
// A failing command prints one line, "Error: what went wrong; what to do",
// to the error stream and exits with 2 for a mistake in the command line
// (unknown flags, flags that exclude each other, missing arguments) or 1
// for anything else. Panics are not expected; none is recovered.
package app
