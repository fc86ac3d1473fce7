// Package operator is a running kopf-wasm host: given a cluster client and
// the loaded modules, [Run] starts every engine in one place (spawn.go, the
// counterpart of Kopf's spawn_tasks), serves until its context ends and
// stops them in reverse order. The public package host (host.Run) checks
// the options, connects and loads the modules, then calls [Run]; this
// package calls the reactor, the engines, kube and wasmrt.
//
// Besides spawn it holds what a running host does around the engines: the
// metrics and health servers (observe.go, metricsauth.go), module reloads
// (reload.go), the Module resources' controller (moduleres.go) and the set
// of modules served (moduleset.go).
package operator
