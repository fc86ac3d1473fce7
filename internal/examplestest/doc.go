// Package examplestest holds the end-to-end tests of the example operators
// in examples/NN-topic/: each test runs one example module with the host
// (host.Run) on a real local control plane (internal/testenv), in a
// namespace of its own, and checks what the example's README promises:
// statuses, child objects, Events and log lines.
//
// The control plane has no kube-controller-manager (it is too costly to
// build here) and no kubelet: nothing garbage-collects children and no Pod
// ever runs, so the tests assert owner references and objects, not their
// effects. The package has tests only.
package examplestest
