// Package metrics holds every Prometheus metric of the host, in one
// registry ([Registry]), and the small functions the other packages report
// through. Packages never touch a Prometheus vector themselves: they call
// [HandlerCall], [Reconcile], [WatchStalled] and the like, which keeps the
// metric names, labels and buckets in this one place (docs/metrics.md lists
// them).
//
// Three families share the registry:
//
//   - client-go's own: the workqueue metrics (workqueue_depth,
//     workqueue_adds_total, ...) through workqueue.SetProvider, and the REST
//     client's (rest_client_requests_total, rest_client_request_duration_seconds)
//     through client-go's tools/metrics, under the names controller-runtime
//     registers them, so that dashboards made for controller-runtime
//     operators work;
//   - controller-runtime's reconcile and webhook names where they mean the
//     same thing: a processing cycle is a reconcile, with the resource as the
//     controller label;
//   - kopf-wasm's own, prefixed kopf_wasm_: handler calls, retries,
//     throttled objects, wasm instances and memory, module loads, watch
//     stalls, API requests by verb and code.
//
// The hooks into client-go are process-wide and set once, when this package
// is initialised: a process has one host's worth of metrics. Reporting costs
// a label look-up and an atomic add; nothing is reported when nobody
// scrapes, beyond those adds.
package metrics
