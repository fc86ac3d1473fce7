// Package peering is Kopf's peering between hosts that share a peering
// object (reference: Kopf's kopf/_core/engines/peering.py; docs/peering.md):
// KopfPeering in each served namespace, or ClusterKopfPeering for a
// cluster-wide host, of kopf.dev/v1 or the legacy zalando.org/v1.
//
// # What it writes
//
// Every host writes a keep-alive record under its identity in the peering
// object's status, in Kopf's format, so that Kopf operators and kopf-wasm
// hosts see each other:
//
//	status:
//	  "<identity>": {priority: 0, lifetime: 60, lastseen: "2026-01-02T03:04:05.123456+00:00"}
//
// The identity is $POD_ID when set (the downward API's metadata.name), else
// Kopf's "<user>@<host>/<YYYYmmddHHMMSS>/<3 random chars>" ([Identity]). The
// record is renewed every min(lifetime, max(1, lifetime − 5..10 s)) and set
// to null when the host stops. `kopf-wasm freeze` writes a record of its
// own ([Freeze]; identity "<user>@<host>" unless --id), which pauses every
// host of a lower priority until its lifetime passes or `kopf-wasm resume`
// removes it.
//
// # The decision (Kopf's protocol)
//
// On every watch event of the peering object and whenever a blocking
// peer's record expires, a host looks at the live peers (lastseen +
// lifetime in the future; a missing lifetime means 60 s) other than itself
// ([Decide]):
//
//   - a peer of a higher priority: INFO "Pausing operations in favour of
//     [...]", and the host pauses;
//   - a peer of the same priority: WARNING "Possibly conflicting operators
//     with the same priority: [...]" and "Pausing all operators, including
//     self: [...]"; every host of that priority pauses (Kopf #51);
//   - none of these while paused: INFO "Resuming operations after the
//     pause. Conflicting operators with the same priority are gone.".
//
// Records of dead peers are removed by whoever sees them. Better than
// Kopf: the host re-evaluates on its own timer when a blocking record
// expires, so a peer killed with SIGKILL (no goodbye) blocks the others
// only until its lifetime has passed, whether or not anything else writes
// to the object.
//
// # Pausing
//
// A host pauses through the host-wide gate (package gate), one blocker per
// peering object ("peering/<namespace>/<name>") and "peering-crd" while a
// mandatory peering's CRD is missing; the reactor then stops change
// handling, timers and daemons (reason "pausing") and resumes with a fresh
// view. Admission webhooks keep serving. Unlike Kopf, whose toggles pause
// the watch streams of one namespace, a pause in one namespace pauses the
// whole host.
//
// # Modes
//
//   - auto (default): the peering named settings.peering.name ("default")
//     if the CRD and the object exist; otherwise the host runs as if
//     standalone (logged once);
//   - mandatory (run -P NAME): paused until the CRD exists and, for each
//     namespace named plainly with -n (or the cluster object with -A), until
//     the object exists;
//   - standalone (run --standalone): no peering at all;
//   - dev (run --dev): priority 666, so a host on a laptop pauses the
//     deployed ones (priority 0) of the same peering.
//
// All requests go through host/internal/kube.
package peering
