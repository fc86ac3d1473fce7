// Package goldentest holds only tests: a module registered with the SDK's
// public API whose manifest, responses and host calls must equal the ABI's
// golden fixtures (abi/testdata) byte for byte. It is a package of its own
// so that its test binary registers nothing else.
package goldentest
