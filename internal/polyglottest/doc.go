// Package polyglottest holds the end-to-end tests of the example operators
// written in other languages than Go (examples/rust, examples/assemblyscript,
// examples/python), and of the Go examples built with TinyGo:
// each runs the module with the host (host.Run) on the real local control
// plane (internal/testenv), in a namespace of its own, beside the Go
// example it mirrors, and asserts the same outcomes for every language.
// The package has tests only.
package polyglottest
