// Package conformance is the Kopf conformance suite: end-to-end scenarios,
// each named after the Kopf behaviour it pins (the reference's kopf.md
// §1–§3 and §13), that run the host through its public API (host.Run) on a
// real kube-apiserver and etcd with the test module
// examples/testguests/conformance, and assert exactly which handlers were
// called (with their reason and retry), the progress records, the
// finalizer, the results and the API writes the host made (counted from
// the API server's audit log).
//
// The package holds no code; the scenarios are its tests:
//
//	go test -count=1 -run TestKopfConformance ./host/conformance
//
// docs/conformance.md lists every scenario with its Kopf reference and
// says where the project departs from Kopf on purpose; TestConformanceDoc
// keeps that table in step with the scenarios (-update rewrites it).
package conformance
