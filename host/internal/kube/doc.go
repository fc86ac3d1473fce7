// Package kube is the host's one door to the Kubernetes API. Nothing else in
// the host imports client-go's rest, dynamic, watch or cache packages; everything that reads or writes the cluster goes through a
// [Client].
//
// # What it does
//
//   - Connects: [LoadConfig] reads a kubeconfig (or the in-cluster account),
//     [New] builds a [Client] with the project's own client-side rate limit
//     and user agent, and [Client.Ping] tells a reachable cluster from one
//     that is not.
//   - Resolves: [Client.Resolve] turns a handler's [abi.ResourceSelector]
//     into a [Resource] the way Kopf resolves selectors (plural, singular,
//     kind or short name; group optional with core v1 winning; preferred
//     version unless one is named; ambiguity is an error that names the
//     candidates). Discovery is cached and refreshed when a name is missing.
//     The documents are fetched by discover.go (aggregated discovery, else
//     the per-group documents), not client-go's discovery package, which
//     would link and register every built-in API type.
//   - Watches: [Client.Watch] lists and watches one resource in a
//     [Namespaces] scope with client-go informers (relisting after 410 Gone,
//     reconnecting with backoff), with Kopf's watching settings (bookmarks;
//     settings.Watching: serverTimeout as timeoutSeconds, a reconnect
//     pause, and an inactivity timeout that ends a stream on which nothing,
//     not even a bookmark, arrived, to be resumed from the last
//     resourceVersion), and calls the reactor's
//     [Handler] with every change and whether the object came from the
//     initial listing. The initial listing is streamed (watchlist.go: a
//     watch with sendInitialEvents, settings.Watching.WatchList) when the
//     API server allows, else listed (list.go). The watch streams and
//     lists are decoded by the one-pass decoders of package jsondecode
//     (watchdecode.go and list.go send the requests), one object at a
//     time, into the objects the dynamic client would build, without
//     metadata.managedFields unless settings.Kube.KeepManagedFields; an
//     event over settings.Watching's maxEventBytes or maxEventDepth is
//     skipped without being kept, logged and reported with a Warning Event
//     on its object, and the stream goes on (watchskip.go). When the scope is given by globs it follows
//     namespaces as they come and go. The informers' stores are the watch
//     cache: [Watch.Get] and [Watch.List] read from it, and so do guest reads
//     of a watched resource.
//   - Writes: [Client.Patch] sends one PATCH (merge or JSON patch, main
//     object or status) and returns the new object. [Client.PostEvent]
//     records a core/v1 Event about an object. [Client.Stats] counts the
//     requests that reached the API server, writes by verb.
//     [Client.GetSecret], [Client.CreateSecret] and [Client.UpdateSecret]
//     (at the resourceVersion read) keep the admission engine's shared
//     webhook certificate (secrets.go).
//   - Serves guests: [Client.Do] carries out a module's [abi.KubeRequest]
//     (get, list, create, update, patch, server-side apply, delete) and
//     answers with an [abi.KubeResponse].
//   - Elects: [Client.Elect] runs leader election on a coordination.k8s.io/v1
//     Lease with client-go's rules (acquire, renew, RenewDeadline, release,
//     leaseTransitions, expiry on the local clock since the record last
//     changed; elector.go lists them and the departures). It is written
//     here, about 340 lines of code, against the project's preference for a
//     well-kept library: client-go's tools/leaderelection reaches the Lease
//     through resourcelock, which imports the typed clientset
//     (k8s.io/client-go/kubernetes, every built-in API group's client and
//     scheme, kube-openapi, go-restful). Linking it made kopf-wasm 79.9 MB
//     instead of 52.7 (the benchmark operator 63.8 instead of 35.3) and
//     cost a one-module host 11 MB of resident binary pages
//     (docs/benchmarks/density.md, "The binary"). internal/archtest keeps
//     the clientset out of the host's dependency closure.
//
// # Errors
//
// Every error that comes from the API server is an [*APIError] and wraps one
// class from errors.go: [ErrGone] (404: the object was deleted, usually
// nothing to worry about), [ErrConflict] (409, or a JSON patch that does
// not apply), [ErrExists] (409 AlreadyExists), [ErrInvalid] (400, 422),
// [ErrForbidden] (401, 403), [ErrUnavailable] (429, 5xx, timeouts, lost
// connections), [ErrTooLarge] (a write refused for its size: 413, 422
// "Too long", etcd's "request is too large"; not retried) or [ErrRequest]
// (any other 4xx). Test them with errors.Is. Transient failures ([ErrUnavailable]) are
// retried after settings.Kube.ErrorBackoffs (Kopf's by default), waiting
// at least as long as a Retry-After header asks, within the caller's
// context; each attempt is bounded by settings.Kube.RequestTimeout. One
// that runs out of it without an answer (also a shard Lease's single
// attempt, or a leader election request's, which what is left of its
// renew deadline bounds too) sends a
// probe, GET /livez bounded by settings.Kube.ConnProbeTimeout; when that
// gets no answer on the attempt's connection, or none at all after a watch
// stream went silent, the client closes every connection of its requests other than
// watch streams, busy or idle, as the kubelet does after a failed
// heartbeat (conns.go, stall.go): once per generation of connections, so
// that attempts timing out together close them once, and one on a
// connection dialed after the last close closes again. A server only slow
// to answer keeps them. The requests still waiting on a silent connection fail at once
// with a lost connection (and are retried as such, on a new one), instead
// of waiting until HTTP/2's health check gives up on the connection (30 s +
// 15 s; client-go reads HTTP2_READ_IDLE_TIMEOUT_SECONDS and
// HTTP2_PING_TIMEOUT_SECONDS). A timed-out request leaves the watch streams
// alone: a silent one ends after settings.Watching.InactivityTimeout and
// takes its own connection with it.
// Within one attempt, client-go's rest client repeats a request whose 429 or 5xx
// answer carries Retry-After, as asked, up to 10 times; not a guest's
// create, which a 5xx may have carried out. Watches and the
// informers' lists are retried by the informers: after a 429 a watch is
// resumed from its last resourceVersion, after a 5xx the resource is
// listed again, each after a backoff of 0.8 s doubling to 30 s.
//
// # Settings
//
// The client takes every value from the settings.Settings of its [Options]
// (settings.Default() when none): the Kube group, Watching, and Posting
// (the Events' reportingComponent, reportingInstance and generateName). It
// has no defaults of its own.
//
// # Departures from Kopf
//
// Kopf keeps no copy of the objects it watches; this package keeps one per
// watched resource and namespace (without managedFields unless
// settings.Kube.KeepManagedFields), so that guest reads cost no request.
// Updates that carry no new resourceVersion (relists after 410 Gone) are not
// passed on. Kopf retries 403 Forbidden; this package does not, because a
// missing RBAC rule does not fix itself within a minute.
package kube
