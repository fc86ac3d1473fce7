// Package settings holds the host's operator settings, grouped as Kopf's
// OperatorSettings are (persistence, execution, posting, queueing, watching,
// process) plus the groups Kopf has no need for (wasm, kube, modules).
//
// Every default of the host lives in [Default], and only there: the
// packages below the host (the wasm runtime, the Kubernetes client, the
// reactor) take their values from a Settings, and fall back to Default()
// when given none. Embedders start from Default(), change what they need and
// pass the result to the host; `kopf-wasm run --config FILE` reads the same
// fields from YAML ([ReadFile]), under the names of their JSON tags
// (docs/settings.md lists them all). [Settings.Validate] reports nonsense
// before anything starts. Nothing here talks to Kubernetes or wasm.
package settings

import (
	"fmt"
	"runtime"
	"strings"
	"time"
)

// Settings are the knobs of one host. The zero value is not meant to be
// used: start from [Default].
type Settings struct {
	// Persistence says where the host keeps its state on the objects.
	Persistence Persistence `json:"persistence"`
	// Execution tunes handler calls and their retries.
	Execution Execution `json:"execution"`
	// Posting tunes the Kubernetes Events the host posts about handlers.
	Posting Posting `json:"posting"`
	// Queueing tunes the per-object queues.
	Queueing Queueing `json:"queueing"`
	// Watching tunes the watch streams.
	Watching Watching `json:"watching"`
	// Wasm bounds every handler call.
	Wasm Wasm `json:"wasm"`
	// Kube tunes the host's Kubernetes client.
	Kube Kube `json:"kube"`
	// Modules tunes how module files and OCI tags are followed.
	Modules Modules `json:"modules"`
	// Process tunes the host's stop.
	Process Process `json:"process"`
	// Admission tunes the admission webhook server and the webhook
	// configurations the host manages.
	Admission Admission `json:"admission"`
	// Sharding tunes the membership of replicas that share the objects
	// (run --shards).
	Sharding Sharding `json:"sharding"`
	// Peering is Kopf's peering between hosts that share a peering object.
	Peering Peering `json:"peering"`
	// LeaderElection tunes `run --leader-elect` (one Lease, one leader).
	LeaderElection LeaderElection `json:"leaderElection"`
	// Observability tunes the metrics and health-probe servers.
	Observability Observability `json:"observability"`
}

// Persistence says where the host keeps its state on the objects. The
// defaults are Kopf's, so that objects handled by Kopf are not seen as new.
type Persistence struct {
	// Prefix of every annotation the host writes: progress records
	// ("<prefix>/<handler-id>") and the diff-base. A prefix not starting
	// with "kopf." also gets a "<prefix>/kopf-managed" marker, so other
	// Kopf-like operators ignore its annotations. Kopf's.
	Prefix string `json:"prefix"`
	// Finalizer added to objects that have non-optional delete handlers,
	// timers or daemons. Not derived from Prefix, as in Kopf. Kopf's.
	Finalizer string `json:"finalizer"`
	// DiffBaseKey is the name, under Prefix, of the annotation holding the
	// last handled essence. Kopf's.
	DiffBaseKey string `json:"diffBaseKey"`
	// V1Keys also writes Kopf's legacy V1 annotation keys when they differ
	// from the V2 ones (only for long handler ids), as Kopf does by default,
	// so an operator can move back to Kopf.
	V1Keys bool `json:"v1Keys"`
	// DiffBaseInStatus keeps the diff-base in the status (at
	// status.kopf.last-handled-configuration, Kopf's StatusDiffBaseStorage)
	// instead of the annotation. On resources with the status subresource an update then
	// costs one request instead of two (the diff-base goes with the
	// results). The annotation is still read, so objects Kopf handled are
	// not seen as new, but Kopf's default storage does not read the status:
	// set it to false before moving objects back to Kopf. On by default: the
	// host's own API load comes first.
	DiffBaseInStatus bool `json:"diffBaseInStatus"`
	// DiffBaseAnnotationBytes bounds the diff-base annotation (key plus
	// value; twice where a V1 key differs), and never more than the
	// object's other annotations leave of the API server's 256 KiB for them
	// all. A larger diff-base is stored gzip-compressed, or as its SHA-256
	// digest when even that is too large (update handlers then get
	// old=null), with a Warning Event: docs/diff-base.md. 128 KiB: half the
	// limit, the rest left to others' annotations.
	DiffBaseAnnotationBytes int `json:"diffBaseAnnotationBytes"`
	// DiffBaseObjectBytes bounds, with the diff-base in the status, the
	// object's size as JSON with it; a diff-base that would pass it is
	// stored reduced as above. 1280 KiB: etcd refuses objects over 1.5 MiB
	// by default (--max-request-bytes), and the rest is room for what the
	// host does not count (managedFields) and later status writes.
	DiffBaseObjectBytes int `json:"diffBaseObjectBytes"`
	// ConsistencyTimeout is the longest wait, after the host patched an
	// object, for the watch to deliver the patched version before the
	// object is processed again regardless. Kopf's.
	ConsistencyTimeout time.Duration `json:"consistencyTimeout"`
	// DeleteResultsOnRelease writes the results of delete handlers that
	// finish in the cycle that releases the object (removes the finalizer)
	// even when they are all that cycle would write to /status: one PATCH
	// more per deletion, for an object about to disappear (only its last
	// state, the watch's DELETED event, carries them). Kopf writes them.
	// false: such results are dropped; results of delete handlers are
	// stored whenever the object stays (another delete handler retrying,
	// a daemon stopping) or the write costs no extra request, as Kopf's.
	DeleteResultsOnRelease bool `json:"deleteResultsOnRelease"`
}

// Execution tunes handler calls and their retries.
type Execution struct {
	// DefaultBackoff is the retry delay after an arbitrary error when the
	// handler sets no backoff, and the delay of a temporary error that names
	// none (Kopf's TemporaryError default).
	DefaultBackoff time.Duration `json:"defaultBackoff"`
	// Workers is the number of objects processed at once (the bounded
	// worker pool).
	Workers int `json:"workers"`
	// MaxDaemons caps the daemons running at once per module; each holds a
	// wasm instance of its own. A daemon past the cap waits for a slot, and
	// a warning says so.
	MaxDaemons int `json:"maxDaemons"`
	// CancellationPolling is how often the host checks, and says in its
	// log, that a daemon asked to stop still runs, when the daemon sets no
	// cancellation timeout (which would close it) and no polling of its
	// own: Kopf's settings.background.cancellation_polling. The object
	// keeps its finalizer meanwhile.
	CancellationPolling time.Duration `json:"cancellationPolling"`
	// ProbeCache is how long the liveness endpoint reuses the results of
	// the probe handlers before calling them again; Kopf's fixed 10 s. 0:
	// every request calls them.
	ProbeCache time.Duration `json:"probeCache"`
	// IndexInline is the largest encoded index (in bytes) that every
	// request of its module's handlers carries whole; a larger index is
	// carried as null and the guest reads it through index look-ups (by
	// key, or whole once per call when a handler asks for all of it), so
	// that requests do not grow with the index. 0: never carried whole.
	IndexInline int `json:"indexInline"`
}

// Posting tunes the Kubernetes Events the host posts about handlers.
type Posting struct {
	// Enabled turns posting of any Event on or off, including those a guest
	// posts explicitly.
	Enabled bool `json:"enabled"`
	// Level is the minimum severity of the host's own handler-outcome
	// Events: "warning" posts failures only, "info" also successes. Events a
	// guest posts explicitly are not filtered by it. Kopf 1.44 no longer
	// posts success messages either by default; each Event is an API write.
	Level Level `json:"level"`
	// ReportingComponent is the Event's reportingComponent and
	// source.component.
	ReportingComponent string `json:"reportingComponent"`
	// ReportingInstance is the Event's reportingInstance. Empty: the host
	// name (the pod's name in a cluster).
	ReportingInstance string `json:"reportingInstance"`
	// EventNamePrefix is the Event's metadata.generateName: the API server
	// appends a random suffix. Kopf's.
	EventNamePrefix string `json:"eventNamePrefix"`
}

// Queueing tunes the per-object queues.
type Queueing struct {
	// ErrorDelays throttle an object after a framework or API error (not a
	// handler error): the n-th consecutive error waits ErrorDelays[n], and
	// the last value repeats. Kopf's Fibonacci series.
	ErrorDelays []time.Duration `json:"errorDelays"`
}

// Watching tunes the watch streams, as Kopf's settings.watching does.
type Watching struct {
	// ServerTimeout is sent as timeoutSeconds on every watch request, so
	// the API server ends the stream after that long and the host resumes
	// it from the last resource version it saw (no new listing). Whole
	// seconds. 0: client-go's choice, a random 5 to 10 minutes per request,
	// which spreads the reconnections of many watches.
	ServerTimeout time.Duration `json:"serverTimeout"`
	// ReconnectBackoff is the pause between the end of a watch stream and
	// the request that resumes it, as Kopf's. A watch request that fails
	// also waits client-go's growing backoff (0.8 s up to 30 s). 0: no
	// pause.
	ReconnectBackoff time.Duration `json:"reconnectBackoff"`
	// InactivityTimeout ends a watch stream on which nothing arrived, not
	// even a bookmark, for this long; the host resumes it as after a server
	// timeout. Watches ask for bookmarks, which the API server sends about
	// every minute, so a stream silently dropped by a load balancer is
	// noticed within this time. Kopf's. 0: never.
	InactivityTimeout time.Duration `json:"inactivityTimeout"`
	// ScanCRDs watches the CustomResourceDefinitions, as Kopf's scanning
	// does: when one is created, changes or is removed, the handlers'
	// selectors are resolved again, and the resources they name start or
	// stop being watched without a restart or a module swap. Without
	// permission to list CRDs the host warns and serves what it found at
	// the start. false: resolve the selectors at the start (and on swaps)
	// only.
	ScanCRDs bool `json:"scanCRDs"`
	// ScanDelays are when, after a CRD changed, the selectors are resolved
	// again: discovery lists a new CRD's resources only some time after
	// the CRD is established, so each change is followed by a rescan after
	// each delay (counted from the previous one).
	ScanDelays []time.Duration `json:"scanDelays"`
	// MaxEventBytes caps one watch event, in bytes of JSON. A larger event
	// is skipped, not buffered: its object's change does not reach the
	// cache or the handlers, an error is logged and a Warning Event posted
	// on the object, and the stream goes on with the other objects. The
	// default is far above the largest object the API server can store
	// (etcd's 1.5 MiB value limit, the API server's 3 MiB request limit),
	// with room for JSON's growth of kinds stored as protobuf (base64 of
	// Secrets' data, escaped control characters), so only a runaway or
	// hostile stream meets it. 0: no cap.
	MaxEventBytes int `json:"maxEventBytes"`
	// MaxEventDepth caps the nesting of arrays and objects in one watch
	// event (the envelope is level 1, the object level 2). A deeper event
	// is skipped as a too large one is. Up to 10000, the API server's own
	// JSON limit and the default, so every stored object is decoded; lower
	// it to keep deeply nested objects from the handlers (the Rust SDK's
	// JSON decoder stops at 128 levels). 0: 10000.
	MaxEventDepth int `json:"maxEventDepth"`
	// WatchList streams the initial listing of a watched resource: one
	// watch request that sends every existing object as an event and then
	// a bookmark (the API server's WatchList, KEP 3157, on by default from
	// Kubernetes 1.34), instead of one LIST response, which the API server
	// builds whole (both are decoded one object at a time); the host is
	// synced when the bookmark arrives, as it is when the listing is. A
	// server that refuses it, or a stream that ends before the bookmark, is
	// listed the usual way (a refusal is remembered). false: always list.
	WatchList bool `json:"watchList"`
}

// Wasm bounds every handler call.
type Wasm struct {
	// CallTimeout is the longest one guest call may run, including the
	// Kubernetes requests it makes; when it passes the guest is stopped,
	// its instance discarded, and the call fails with an arbitrary error.
	// Daemons run outside it.
	CallTimeout time.Duration `json:"callTimeout"`
	// MaxMemoryPages caps a guest's linear memory, in 64 KiB pages (1 to
	// 65536). A standard-Go guest needs a few MiB.
	MaxMemoryPages uint32 `json:"maxMemoryPages"`
	// MaxOutputBytes caps the size of a guest's response (or manifest); a
	// larger one fails the call. Above the largest object the API server
	// stores.
	MaxOutputBytes int `json:"maxOutputBytes"`
	// PoolSize is the number of instances kept per module; an instance is
	// never shared by two calls at once. The default is one per CPU the Go
	// runtime uses (GOMAXPROCS), at least 2 and at most 4. A call is
	// CPU-bound unless it waits on the host (Kubernetes requests, sleeps),
	// and each instance holds 3-4 MB (a standard-Go guest), so more
	// instances than CPUs cost memory and rarely add throughput; raise it
	// for handlers that spend their time in Kubernetes requests.
	PoolSize int `json:"poolSize"`
	// CacheDir holds compiled modules across restarts; it must be private
	// to the host. Empty: compile in memory only (`kopf-wasm run` uses
	// $KOPF_WASM_CACHE/wasm, by default ~/.cache/kopf-wasm/wasm).
	CacheDir string `json:"cacheDir"`
	// CacheMaxBytes bounds CacheDir: when the runtime starts, the least
	// recently written compiled modules are removed until the folder holds
	// at most this many bytes (a compiled standard-Go module takes 10-15
	// MB, a Rust or AssemblyScript one well under 1 MB). `kopf-wasm cache
	// prune` applies the same bound on demand. 0: unbounded.
	CacheMaxBytes int64 `json:"cacheMaxBytes"`
	// GuestGOGC is the GOGC environment variable of every instance, which
	// the Go runtime of a standard-Go (or TinyGo) guest reads at start;
	// other guests ignore it. A guest's linear memory only grows, so a lower
	// GOGC keeps instances smaller: 50 keeps an instance of the kopfexample
	// module at 6.3 MiB instead of 8.3 MiB after 3,000 calls, at no
	// measurable CPU cost (25 costs about 10 %). -1 leaves GOGC unset (the
	// guest's default, 100).
	GuestGOGC int `json:"guestGOGC"`
	// LogRate bounds the log records one call may write, in records per
	// second after the first LogBurst: a guest that logs in a loop would
	// otherwise flood the host's log and its disk. Records past the bound
	// are dropped; the first drop of a call is logged once, and how many
	// were dropped when the call ends. A daemon, one long call, gets the
	// rate for all its life. 0 (with LogBurst 0): unbounded.
	LogRate float64 `json:"logRate"`
	// LogBurst is how many log records a call may write at once before
	// LogRate applies.
	LogBurst int `json:"logBurst"`
}

// Kube tunes the host's Kubernetes client.
type Kube struct {
	// QPS and Burst rate-limit requests to the API server (client-go's
	// token bucket) when QPS is above zero. QPS 0 or less: no client-side
	// limit, as in Kopf and controller-runtime; the API server's priority
	// and fairness protects it. A limit of 200 would cap a busy host at 200
	// writes per second (the kopfexamples benchmark's create phase needs
	// 4,000 in seconds).
	QPS float32 `json:"qps"`
	// Burst is the token bucket's size when QPS is above zero.
	Burst int `json:"burst"`
	// RequestTimeout bounds each attempt of a request that is not a watch
	// (reads, writes, Events, discovery; a handler's requests are also
	// bounded by wasm.callTimeout).
	RequestTimeout time.Duration `json:"requestTimeout"`
	// ConnProbeTimeout bounds the probe (GET /livez, which checks neither
	// etcd nor waits in priority and fairness: a live connection answers it
	// in milliseconds) sent when a request ran out of RequestTimeout
	// without an answer, or a watch stream was silent for
	// watching.inactivityTimeout: the client's connections are closed (and
	// every request on them cut) only when the probe gets no answer (on
	// the request's connection), not when the server was just slow or the
	// watched resource only quiet.
	ConnProbeTimeout time.Duration `json:"connProbeTimeout"`
	// ErrorBackoffs are the pauses between the attempts of a request that
	// failed transiently (connection errors, timeouts, 5xx, 429); their
	// number is the number of retries, so an empty list turns retries off.
	// Kopf's.
	ErrorBackoffs []time.Duration `json:"errorBackoffs"`
	// DiscoveryRefresh is the shortest time between two refreshes of the
	// API discovery triggered by a resource the cache does not know, so that
	// a module asking again and again for a kind the cluster does not serve
	// does not cost a discovery round each time.
	DiscoveryRefresh time.Duration `json:"discoveryRefresh"`
	// KeepManagedFields keeps metadata.managedFields in the watch cache and
	// in the objects passed to handlers. Off by default: they are often the
	// largest part of an object and handlers rarely need them.
	KeepManagedFields bool `json:"keepManagedFields"`
	// UserAgent is sent with every request.
	UserAgent string `json:"userAgent"`
	// FieldManager names the host in managedFields for its own writes and
	// for guest writes that name no manager.
	FieldManager string `json:"fieldManager"`
}

// Modules tunes how module files and OCI tags are followed while the host
// runs.
type Modules struct {
	// ReloadInterval is how often module files are checked for a new
	// version, which is then loaded in the background and swapped in
	// between processing cycles; a version that does not load leaves the
	// old one serving. 0: never (modules are loaded once).
	ReloadInterval time.Duration `json:"reloadInterval"`
	// TagPollInterval is how often modules named by an OCI tag are
	// resolved again; a new digest is pulled and swapped in as a changed
	// file is. Digests are pinned and never polled. 0: never.
	TagPollInterval time.Duration `json:"tagPollInterval"`
}

// Process tunes the host's stop.
type Process struct {
	// ShutdownTimeout bounds the whole stop after SIGTERM or SIGINT: the
	// in-flight processing cycles, the daemons' stop and the cleanup
	// activities. Past it the host exits with an error and abandons them
	// (their objects are processed again at the next start). Below
	// Kubernetes' default terminationGracePeriodSeconds (30), so that the
	// host, not the kubelet's SIGKILL, decides.
	ShutdownTimeout time.Duration `json:"shutdownTimeout"`
	// CleanupTimeout bounds the daemons' stop, and then the cleanup
	// activities, once the processing cycles have finished. At most
	// ShutdownTimeout.
	CleanupTimeout time.Duration `json:"cleanupTimeout"`
}

// Peering is Kopf's settings.peering: how hosts that share a peering
// object (KopfPeering in each served namespace, ClusterKopfPeering for a
// cluster-wide host; kopf.dev/v1 or the legacy zalando.org/v1) see each
// other. The host with the highest priority handles; the others pause; hosts
// of the same priority all pause (docs/peering.md).
type Peering struct {
	// Name of the peering object. Kopf's "default".
	Name string `json:"name"`
	// Priority of this host among its peers (run -p; --dev sets 666).
	Priority int `json:"priority"`
	// Lifetime of this host's keep-alive record: the others count it as
	// alive until its lastseen plus this. Kopf's 60 s; whole seconds.
	Lifetime time.Duration `json:"lifetime"`
	// Mandatory pauses the host until the peering CRD and object exist
	// (run -P NAME sets it). Otherwise (auto) a missing CRD or object means
	// running as if standalone.
	Mandatory bool `json:"mandatory"`
	// Standalone runs with no peering at all (run --standalone).
	Standalone bool `json:"standalone"`
	// Clusterwide uses the ClusterKopfPeering even for a host that serves
	// namespaces (Kopf's settings.peering.clusterwide); a host run with -A
	// always does.
	Clusterwide bool `json:"clusterwide"`
	// Stealth keeps the keep-alives out of the log.
	Stealth bool `json:"stealth"`
	// SyncTimeout bounds the first listing of the peering objects: past
	// it an auto peering gives up and the host runs as if standalone (a
	// mandatory one stays paused until the listing succeeds).
	SyncTimeout time.Duration `json:"syncTimeout"`
	// CRDRetryInterval is how often a mandatory peering looks for its
	// CRD again while it is missing (the host stays paused meanwhile).
	CRDRetryInterval time.Duration `json:"crdRetryInterval"`
	// GoodbyeTimeout bounds the removal of this host's keep-alive records
	// when it exits; a record left behind blocks others until its
	// lifetime passes.
	GoodbyeTimeout time.Duration `json:"goodbyeTimeout"`
}

// LeaderElection tunes `run --leader-elect`: replicas compete for one
// coordination.k8s.io/v1 Lease through client-go's leader election; only
// the holder handles changes, timers and daemons. The durations are
// client-go's (and controller-runtime's defaults).
type LeaderElection struct {
	// Enabled turns leader election on (run --leader-elect).
	Enabled bool `json:"enabled"`
	// Namespace of the Lease (run --leader-elect-namespace). Empty: the
	// namespace of the host's pod ($POD_NAMESPACE), else "default".
	Namespace string `json:"namespace"`
	// LeaseName names the Lease. Empty: the peering name (peering.name).
	LeaseName string `json:"leaseName"`
	// LeaseDuration: how long the others wait, after they last saw the
	// Lease renewed, before they take it. A killed leader is replaced
	// after about this long.
	LeaseDuration time.Duration `json:"leaseDuration"`
	// RenewDeadline: a leader that could not renew for this long stops
	// handling at once; LeaseDuration minus RenewDeadline is its margin to
	// stop before another replica may lead.
	RenewDeadline time.Duration `json:"renewDeadline"`
	// RetryPeriod: how often the leader renews and the others try to
	// acquire.
	RetryPeriod time.Duration `json:"retryPeriod"`
}

// Sharding tunes `run --shards`: replicas that share the objects, each
// object handled by exactly one live replica (a rendezvous hash of its UID
// over the members). Each replica keeps one coordination.k8s.io/v1 Lease,
// "<group>-<identity>", labelled kopf-wasm.dev/shard-group=<group>; a
// replica whose Lease nobody has seen renewed for LeaseDuration is no
// member. Objects move only after every member has acknowledged, on its
// Lease, that it stopped handling the objects the new membership takes
// from it (docs/sharding.md).
type Sharding struct {
	// Enabled shares the objects with the other replicas of Group (run
	// --shards). Off: the host handles every object it watches.
	Enabled bool `json:"enabled"`
	// Group names the set of replicas that share the objects: replicas of
	// one operator use one group; two operators on one cluster use two.
	Group string `json:"group"`
	// Namespace holds the membership Leases. Empty: the namespace of the
	// host's pod ($POD_NAMESPACE), else "default".
	Namespace string `json:"namespace"`
	// LeaseDuration is how long a replica stays a member after the others
	// last saw its Lease renewed (measured on their own clocks, as
	// client-go's leader election does). A replica killed without a
	// goodbye gives its objects away after it.
	LeaseDuration time.Duration `json:"leaseDuration"`
	// RenewDeadline: a replica that has not renewed its Lease for this
	// long stops handling every object (cycles, timers, daemons) and
	// rejoins afresh; LeaseDuration minus RenewDeadline is the time it has
	// to stop before the others may take its objects.
	RenewDeadline time.Duration `json:"renewDeadline"`
	// RenewInterval is how often each replica renews its Lease and reads
	// the others' at steady state: two requests per replica per interval,
	// whatever the number of objects.
	RenewInterval time.Duration `json:"renewInterval"`
	// SettleInterval is how often a replica reads the Leases while the
	// membership changes (until every member acknowledged it), so that
	// objects move in a few seconds rather than a few RenewIntervals.
	SettleInterval time.Duration `json:"settleInterval"`
}

// Observability tunes the metrics and health-probe servers (run
// --metrics-bind-address, --health-probe-bind-address).
type Observability struct {
	// ReadHeaderTimeout bounds reading a request's headers on either
	// server. Default 5s.
	ReadHeaderTimeout time.Duration `json:"readHeaderTimeout"`
	// StopTimeout is how long the servers wait for requests in flight when
	// the host stops. Default 2s.
	StopTimeout time.Duration `json:"stopTimeout"`
	// AuthCacheTTL is how long a metrics request's authentication and
	// authorization decision (TokenReview, SubjectAccessReview; run
	// --metrics-auth) is reused for the same token; Prometheus scrapes
	// every 15 to 60 s. Default 1m.
	AuthCacheTTL time.Duration `json:"authCacheTTL"`
	// AuthCacheSize is how many of those decisions are kept at most; past
	// it the least recently used goes (tokens come from anyone who can
	// reach the endpoint). Default 256.
	AuthCacheSize int `json:"authCacheSize"`
}

// Admission tunes the HTTPS server that answers the API server's
// AdmissionReviews for the modules' validating and mutating handlers, and
// the webhook configurations the host keeps for them (Kopf's
// settings.admission). The server starts once a loaded module declares a
// webhook handler.
type Admission struct {
	// Listen is the server's address, host:port; an empty host listens on
	// every interface, port 0 on a free port (logged).
	Listen string `json:"listen"`
	// Host is the name or IP address under which the API server reaches
	// the server: the host of the managed configurations' URLs, and a name
	// of the generated certificate. Empty: the listen address's host, or
	// "localhost" when that is empty or unspecified.
	Host string `json:"host"`
	// ExtraSANs are more names and IP addresses for the generated
	// certificate.
	ExtraSANs []string `json:"extraSANs"`
	// CertDir holds tls.crt and tls.key (a Secret or cert-manager's
	// output); they are served instead of a generated certificate and read
	// again when they change. Empty: a CA and a serving certificate are
	// generated at start, in memory.
	CertDir string `json:"certDir"`
	// CADump is a file the generated CA certificate (PEM) is written to,
	// for clients that must trust it. Empty: not written.
	CADump string `json:"caDump"`
	// CertCheckInterval is how often CertDir's files, or CertSecret, are
	// checked for a change. Kopf checks every 60 s.
	CertCheckInterval time.Duration `json:"certCheckInterval"`
	// CertSecret, "namespace/name", is a Secret (kubernetes.io/tls:
	// tls.crt, tls.key, ca.crt) that holds the generated CA and serving
	// certificate, shared by every replica: the first one creates it, all
	// serve it and write its CA as the caBundle, so that replicas behind
	// one Service do not overwrite each other's. One replica replaces it
	// when it nears its end (CertRenewBefore) or lacks a name this host
	// needs; the others pick that up within CertCheckInterval. Empty:
	// each host generates its own, in memory. Excludes CertDir.
	CertSecret string `json:"certSecret"`
	// CertValidity is how long a generated certificate (and its CA) is
	// valid. Default 8760h (a year).
	CertValidity time.Duration `json:"certValidity"`
	// CertRenewBefore is how long before its end the certificate of
	// CertSecret is replaced by a new one. Less than CertValidity.
	// Default 720h (30 days).
	CertRenewBefore time.Duration `json:"certRenewBefore"`
	// Managed is the name of the ValidatingWebhookConfiguration and
	// MutatingWebhookConfiguration the host creates and keeps up to date,
	// one webhook per handler (Kopf's settings.admission.managed, e.g.
	// "auto.kopf.dev"). Empty: none; configure the webhooks yourself.
	Managed string `json:"managed"`
	// Service, "namespace/name", makes the managed webhooks reach the
	// server through that Service (a host inside the cluster) instead of
	// by URL; the generated certificate then also names
	// name.namespace.svc and name.namespace.svc.cluster.local. Empty: by
	// URL, https://<host>:<port>.
	Service string `json:"service"`
	// ServicePort is the Service's port that forwards to the server.
	ServicePort int `json:"servicePort"`
	// TimeoutSeconds is the managed webhooks' timeoutSeconds (1 to 30),
	// and the time a review may take when the API server names none.
	TimeoutSeconds int `json:"timeoutSeconds"`
	// TimeoutMargin is kept free of handler calls before the review's
	// timeout passes, so that a handler that loops or runs late is
	// answered by its failure policy before the API server gives up. At
	// most half the timeout is taken.
	TimeoutMargin time.Duration `json:"timeoutMargin"`
	// MaxRequestBytes caps an AdmissionReview's size; a larger one gets a
	// 413. Above twice the largest object the API server accepts (an
	// update carries the object and the old object).
	MaxRequestBytes int `json:"maxRequestBytes"`
	// ReadHeaderTimeout bounds reading a webhook request's headers.
	// Default 10s.
	ReadHeaderTimeout time.Duration `json:"readHeaderTimeout"`
	// ReadTimeout bounds reading a whole webhook request. Default 1m.
	ReadTimeout time.Duration `json:"readTimeout"`
	// IdleTimeout closes a kept-alive webhook connection with nothing to
	// do. Default 2m.
	IdleTimeout time.Duration `json:"idleTimeout"`
	// StopTimeout is how long the server waits for reviews in flight when
	// the host stops. Default 5s.
	StopTimeout time.Duration `json:"stopTimeout"`
}

// Default returns the settings with every default in place. It is the one
// place where the host's defaults are written.
func Default() Settings {
	return Settings{
		Persistence: Persistence{
			Prefix:             "kopf.zalando.org",
			Finalizer:          "kopf.zalando.org/KopfFinalizerMarker",
			DiffBaseKey:        "last-handled-configuration",
			V1Keys:             true,
			DiffBaseInStatus:   true,
			ConsistencyTimeout: 5 * time.Second,

			DiffBaseAnnotationBytes: 128 << 10,
			DiffBaseObjectBytes:     1280 << 10,
		},
		Execution: Execution{DefaultBackoff: 60 * time.Second, Workers: 16, MaxDaemons: 100, CancellationPolling: 60 * time.Second, ProbeCache: 10 * time.Second, IndexInline: 4096},
		Posting: Posting{
			Enabled:            true,
			Level:              LevelWarning,
			ReportingComponent: "kopf-wasm",
			EventNamePrefix:    "kopf-event-",
		},
		Queueing: Queueing{ErrorDelays: seconds(1, 1, 2, 3, 5, 8, 13, 21, 34, 55, 89, 144, 233, 377, 610)},
		Watching: Watching{ReconnectBackoff: 100 * time.Millisecond, InactivityTimeout: 70 * time.Second,
			ScanCRDs: true, ScanDelays: []time.Duration{200 * time.Millisecond, time.Second, 3 * time.Second},
			MaxEventBytes: 16 << 20, MaxEventDepth: 10000, WatchList: true},
		Wasm: Wasm{
			CallTimeout:    30 * time.Second,
			MaxMemoryPages: 1024,
			MaxOutputBytes: 4 << 20,
			PoolSize:       min(4, max(2, runtime.GOMAXPROCS(0))),
			GuestGOGC:      50,
			LogRate:        100,
			LogBurst:       1000,
			CacheMaxBytes:  1 << 30,
		},
		Kube: Kube{
			QPS: -1, Burst: 400, RequestTimeout: 30 * time.Second, ConnProbeTimeout: 2 * time.Second,
			ErrorBackoffs:    seconds(1, 1, 2, 3, 5, 8, 13, 21),
			DiscoveryRefresh: 2 * time.Second,
			UserAgent:        "kopf-wasm",
			FieldManager:     "kopf-wasm",
		},
		Modules: Modules{ReloadInterval: time.Second, TagPollInterval: 30 * time.Second},
		Process: Process{ShutdownTimeout: 25 * time.Second, CleanupTimeout: 10 * time.Second},
		Admission: Admission{
			Listen:            ":9443",
			CertCheckInterval: 10 * time.Second,
			CertValidity:      365 * 24 * time.Hour,
			CertRenewBefore:   30 * 24 * time.Hour,
			ServicePort:       443,
			TimeoutSeconds:    30,
			TimeoutMargin:     500 * time.Millisecond,
			MaxRequestBytes:   16 << 20,
			ReadHeaderTimeout: 10 * time.Second,
			ReadTimeout:       time.Minute,
			IdleTimeout:       2 * time.Minute,
			StopTimeout:       5 * time.Second,
		},
		Sharding: Sharding{
			Group: "kopf-wasm", LeaseDuration: 15 * time.Second, RenewDeadline: 10 * time.Second,
			RenewInterval: 5 * time.Second, SettleInterval: time.Second,
		},
		Peering:        defaultPeering(),
		LeaderElection: defaultLeaderElection(),
		Observability:  defaultObservability,
	}
}

func seconds(values ...int) []time.Duration {
	out := make([]time.Duration, len(values))
	for i, v := range values {
		out[i] = time.Duration(v) * time.Second
	}
	return out
}

// Level is the severity of a posted Event. In YAML and JSON it is "info" or
// "warning".
type Level int

// Levels, in increasing severity.
const (
	LevelInfo Level = iota
	LevelWarning
)

var levelNames = map[Level]string{LevelInfo: "info", LevelWarning: "warning"}

func (l Level) String() string {
	if name, ok := levelNames[l]; ok {
		return name
	}
	return fmt.Sprintf("Level(%d)", int(l))
}

// MarshalText writes the level's name.
func (l Level) MarshalText() ([]byte, error) {
	if _, ok := levelNames[l]; !ok {
		return nil, fmt.Errorf("unknown level %d", int(l))
	}
	return []byte(l.String()), nil
}

// UnmarshalText reads a level's name, in any case.
func (l *Level) UnmarshalText(text []byte) error {
	for level, name := range levelNames {
		if strings.EqualFold(string(text), name) {
			*l = level
			return nil
		}
	}
	return fmt.Errorf("want info or warning, got %q", text)
}
