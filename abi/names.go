package abi

// Version is the major version of the ABI that this package describes.
const Version = 1

// HostNamespace is the wasm import module of the host functions of ABI v1.
const HostNamespace = "kopf:host/v1"

// Guest exports.
const (
	// ExportManifest returns the module's [Manifest]; its input is empty.
	ExportManifest = "kopf_manifest"
	// ExportHandle runs one handler: [Request] in, [Response] out.
	ExportHandle = "kopf_handle"
)

// Host functions in [HostNamespace]. Each takes the offset of a JSON request
// block (i64) and returns the offset of a JSON reply block (i64, 0 if none).
const (
	// HostLog writes a [LogRecord] to the host's log with the object's context.
	// It has no reply.
	HostLog = "log"
	// HostPostEvent posts a Kubernetes Event ([EventRequest]) about the object
	// being handled; the reply is a [HostReply].
	HostPostEvent = "post_event"
	// HostKubeRequest carries out a [KubeRequest]; the reply is a [KubeResponse].
	HostKubeRequest = "kube_request"
	// HostIndexLookup reads an index ([IndexLookupRequest]); the reply is an
	// [IndexLookupResponse].
	HostIndexLookup = "index_lookup"
	// HostSleepUntilStopped blocks a daemon or timer for up to the requested
	// time or until it is asked to stop ([SleepRequest] → [SleepResponse]).
	HostSleepUntilStopped = "sleep_until_stopped"
	// HostIsStopped tells whether the running daemon or timer is asked to
	// stop; its request is empty ({}), its reply a [SleepResponse].
	HostIsStopped = "is_stopped"
)
