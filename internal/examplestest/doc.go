// Package examplestest holds the end-to-end tests of the example operators
// in examples/NN-topic/: each test runs one example module with the host
// (host.Run) on a real local control plane (internal/testenv), in a
// namespace of its own, and checks what the example's README promises:
// statuses, child objects, Events and log lines.
//
// The control plane runs kube-controller-manager with testenv's default
// controllers, so the garbage collector deletes children whose parent is
// deleted and the tests watch them go; it has no scheduler, no kubelet and
// no workload controllers, so no Pod is ever made by a StatefulSet or ever
// runs, and the tests look at objects, not at running Pods. The package has
// tests only.
package examplestest
