// Package hackscripts holds the tests of the shell scripts under hack/ that
// make test and CI rely on. It has no code of its own: each test runs a
// script in a scratch copy of the layout it expects, with a fake for the
// tool the script drives.
package hackscripts
