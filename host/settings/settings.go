// Package settings holds the host's operator settings, grouped as Kopf's
// OperatorSettings are (persistence, execution, posting, queueing, watching,
// process, admission, peering) plus the groups Kopf has no need for (wasm,
// kube, modules, leader election, sharding, observability).
//
// Each group is one file: its type, its defaults (a function, so nothing
// here is shared between hosts) and its validation side by side;
// leader election and sharding share the [Lease] timing type. Every
// default of the host lives in [Default], and only there: the
// packages below the host (the wasm runtime, the Kubernetes client, the
// reactor) take their values from a Settings, and fall back to Default()
// when given none. Embedders start from Default(), change what they need and
// pass the result to the host; `kopf-wasm run --config FILE` reads the same
// fields from YAML ([ReadFile]), under the names of their JSON tags
// (docs/settings.md lists them all). [Settings.Validate] reports nonsense
// before anything starts. Nothing here talks to Kubernetes or wasm.
package settings

import "time"

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
	// Recording writes the handler calls to a file for kopf-wasm replay.
	Recording Recording `json:"recording"`
	// Isolation bounds what one module may take from the others.
	Isolation Isolation `json:"isolation"`
	// Rollouts tunes canary and shadow versions of modules.
	Rollouts Rollouts `json:"rollouts"`
}

// Default returns the settings with every default in place: each group's
// defaults are written once, by the function beside its type
// (defaultWatching in watching.go, ...), and Default returns a fresh copy
// of them all (no slice is shared between two calls).
func Default() Settings {
	return Settings{
		Persistence:    defaultPersistence(),
		Execution:      defaultExecution(),
		Posting:        defaultPosting(),
		Queueing:       defaultQueueing(),
		Watching:       defaultWatching(),
		Wasm:           defaultWasm(),
		Kube:           defaultKube(),
		Modules:        defaultModules(),
		Process:        defaultProcess(),
		Admission:      defaultAdmission(),
		Sharding:       defaultSharding(),
		Peering:        defaultPeering(),
		LeaderElection: defaultLeaderElection(),
		Observability:  defaultObservability(),
		Recording:      defaultRecording(),
		Isolation:      defaultIsolation(),
		Rollouts:       defaultRollouts(),
	}
}

// seconds is a list of whole-second durations.
func seconds(values ...int) []time.Duration {
	out := make([]time.Duration, len(values))
	for i, v := range values {
		out[i] = time.Duration(v) * time.Second
	}
	return out
}
