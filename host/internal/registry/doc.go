// Package registry turns the manifests of loaded modules into the handlers
// the host serves, and answers the reactor's questions about them with
// Kopf's semantics:
//
//   - which handlers a resource has, by kind and in registration order
//     (modules in load order, handlers in manifest order);
//   - the cause of a change ([DetectCause]: gone, free, delete, create,
//     resume, noop, update), from the watch event, the body and the
//     diff-base essences;
//   - which changing handlers are due for a cause ([Registry.Due]): the
//     cause's own kind, field handlers whose field changed on any cause,
//     resume handlers mixed into the causes of objects from the initial
//     listing (on deletion only with the deleted option), filtered by
//     labels, annotations, field values and old/new exactly as Kopf filters;
//   - whether an object is served at all ([Registry.Prematch], Kopf's
//     "stealth mode") and whether it needs the finalizer
//     ([Registry.RequiresFinalizer]);
//   - the extra fields the diff-base essence must keep.
//
// Callback filters (Kopf's when=) run in the guest: the registry cannot
// evaluate them, so every question that filters takes a [WhenFunc] with
// which the reactor asks the guest, and [Handler.NeedsWhen] tells which
// handlers have one.
//
// The reactor builds one Registry per set of loaded modules with [New],
// resolving each resource selector through discovery (kube) beforehand or
// through the [ResolveFunc] it passes. The package is pure: it calls only
// objects, abi and the standard library.
package registry
