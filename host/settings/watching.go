package settings

import "time"

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

// defaultWatching is Kopf's reconnect backoff and inactivity timeout, with
// CRD scanning and streamed listings on.
func defaultWatching() Watching {
	return Watching{ReconnectBackoff: 100 * time.Millisecond, InactivityTimeout: 70 * time.Second,
		ScanCRDs: true, ScanDelays: []time.Duration{200 * time.Millisecond, time.Second, 3 * time.Second},
		MaxEventBytes: 16 << 20, MaxEventDepth: 10000, WatchList: true}
}

// validate reports timeouts the API server would refuse and caps below
// any real event.
func (w Watching) validate(v *validator) {
	if w.ServerTimeout < 0 || w.ServerTimeout%time.Second != 0 {
		v.fail("watching.serverTimeout", "must be whole seconds, 0 or more, got %s", w.ServerTimeout)
	}
	v.notNegative("watching.reconnectBackoff", w.ReconnectBackoff)
	if w.InactivityTimeout != 0 && w.InactivityTimeout < time.Second {
		v.fail("watching.inactivityTimeout", "must be 0 (never) or at least 1s, got %s", w.InactivityTimeout)
	}
	v.notNegativeList("watching.scanDelays", w.ScanDelays)
	if w.ScanCRDs && len(w.ScanDelays) == 0 {
		v.fail("watching.scanDelays", "must list at least one delay when watching.scanCRDs is on")
	}
	if w.MaxEventBytes != 0 && w.MaxEventBytes < 1024 {
		v.fail("watching.maxEventBytes", "must be 0 (no cap) or at least 1024, got %d", w.MaxEventBytes)
	}
	if w.MaxEventDepth < 0 || w.MaxEventDepth > 10000 {
		v.fail("watching.maxEventDepth", "must be 0 to 10000, got %d", w.MaxEventDepth)
	}
}
