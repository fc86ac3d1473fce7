// Package persistence keeps a handler's state on the object itself, in the
// format and under the names Kopf uses, so an object handled by Kopf is not
// seen as new by kopf-wasm and back:
//
//   - progress records per handler in annotations "<prefix>/<handler-id>"
//     (Kopf's StorageKeyFormingConvention: V2 keys, V1 keys while they differ,
//     hashing of long names, the "-ofDRS" mark), read also from the legacy
//     status.kopf.progress and purged from both;
//   - the diff-base essence in "<prefix>/last-handled-configuration" (or
//     status.kopf.last-handled-configuration); one that has no room there
//     as JSON (the API server's 256 KiB for all annotations, etcd's 1.5 MiB
//     per object; Kopf #1087) is stored gzip-compressed or, when even that
//     does not fit, as its SHA-256 digest ([Form]; [fit] decides, the
//     patch notes it for a Warning Event). A digest tells only "changed or
//     not": a change is an update whose old essence is null and whose diff
//     is one change of the whole object from null (docs/diff-base.md).
//     After the API server refused a write of the object as too large
//     (the room misses metadata.managedFields), [Patch.DigestOnly] makes
//     it the digest whatever the room;
//   - the finalizer;
//   - a [Patch] that gathers one processing cycle's changes for the main
//     endpoint and for /status, so the reactor sends at most one request per
//     endpoint and none when nothing changes;
//   - [Classify], the one place that turns a handler's outcome into its new
//     progress record, finished flag and retry delay, with Kopf's errors
//     modes, retries, timeouts and backoff.
//
// The reactor calls it once per processing cycle: [Storage.Essence] and
// [Storage.FetchDiffBase] for cause detection, [Storage.LoadState] and
// [State.ForCause] before running handlers, [Check] and [Classify] around each
// call, [Storage.StoreState], [Patch.AddResult], [Patch.MergeHandlerPatch],
// [Storage.PurgeState], [Storage.StoreDiffBase] and the finalizer helpers
// after, then sends the [Patch.Requests] through the kube package.
// It builds patches only; it never talks to the API (kube applies them) and
// calls nothing but objects, abi, x/crypto's blake2b and the standard library.
//
// # Objects
//
// Objects are JSON-like values, map[string]any as apimachinery's unstructured
// holds them. Nothing here modifies a body it is given.
package persistence
