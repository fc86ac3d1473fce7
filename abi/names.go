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

// Copy functions in [HostNamespace]: they move a call's input and output
// between kernel memory and the guest's own memory in one call, where
// Extism's input_load_u64 and store_u64 take one call per 8 bytes. Their
// arguments are i32: a pointer into the guest's memory and a length.
const (
	// HostInputRead copies the call's input (up to len bytes) to ptr and
	// returns how many bytes it copied; the input's length is Extism's
	// input_length.
	HostInputRead = "input_read"
	// HostOutputWrite sets the call's output to the len bytes at ptr, as
	// Extism's output_set does with a kernel block.
	HostOutputWrite = "output_write"
)
