package host_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/kopf-wasm/kopf-wasm/host"
)

// TestPeeringPriorities runs two hosts of one peering: only the one of the
// higher priority handles; once it stops, the other takes over and handles
// every object afresh.
func TestPeeringPriorities(t *testing.T) {
	e := newPeerEnv(t)
	high := e.start("high", "testguests/reloadv1", 100, 10*time.Second, nil, "")
	low := e.start("low", "testguests/reloadv2", 0, 10*time.Second, nil, "")
	low.logged(t, "Pausing operations in favour of [<Peer high: priority=100")
	e.create("first")
	e.has("first", "create_fn", "v1")
	if v := e.version("first", "create_fn"); v != "v1" {
		t.Fatalf("first handled by %s", v)
	}
	if strings.Contains(high.logs.String(), "Pausing operations") {
		t.Fatalf("the host of the higher priority paused:\n%s", high.logs.String())
	}

	high.stop() // its record goes with it
	low.logged(t, "Resuming operations after the pause. Conflicting operators with the same priority are gone.")
	e.create("second")
	e.has("second", "create_fn", "v2")
	// Every object is seen again, and the one the other host handled is
	// not handled twice.
	e.wait("the resumed host caught up", func() bool { return strings.Contains(low.logs.String(), "objects queued") })
	if runs := e.annotation("first", "create-runs"); runs != "1" {
		t.Fatalf("first: create handler ran %s times", runs)
	}
}

// TestPeeringSamePriority: two hosts of the same priority both pause, with
// Kopf's warning; when one goes, the other resumes.
func TestPeeringSamePriority(t *testing.T) {
	e := newPeerEnv(t)
	a := e.start("twin-a", "testguests/reloadv1", 0, 10*time.Second, nil, "")
	b := e.start("twin-b", "testguests/reloadv2", 0, 10*time.Second, nil, "")
	for _, h := range []*peerHost{a, b} {
		h.logged(t, "Possibly conflicting operators with the same priority: [<Peer twin-")
		h.logged(t, "Pausing all operators, including self: [<Peer twin-")
	}
	e.create("nobody")
	e.untouched("nobody", 3*time.Second)
	b.stop()
	a.logged(t, "Resuming operations after the pause.")
	e.has("nobody", "create_fn", "v1")
}

// TestFreezeAndResume freezes a running host from outside (as kopf-wasm
// freeze does) and resumes it; a freeze also ends by itself when its
// lifetime has passed, as the record of a SIGKILLed peer does.
func TestFreezeAndResume(t *testing.T) {
	e := newPeerEnv(t)
	addr := freeAddr(t)
	h := e.start("worker", "testguests/reloadv1", 0, 10*time.Second, nil, "http://"+addr+"/healthz")
	if status, _ := getLiveness(e, "http://"+addr+"/healthz"); status != "kopf-wasm: handling" {
		t.Fatalf("Kopf-Wasm-Status %q before the freeze", status)
	}
	peer := host.PeerOptions{Kubeconfig: e.env.Kubeconfig, Peering: "default", Namespaces: []string{"default"},
		ID: "admin@laptop", Priority: 100, Lifetime: time.Hour, Message: "cluster upgrade"}
	if err := host.Freeze(context.Background(), peer); err != nil {
		t.Fatal(err)
	}
	h.logged(t, `Pausing operations in favour of [<Peer admin@laptop: priority=100, lifetime=3600`)
	h.logged(t, `cluster upgrade`)
	status, body := getLiveness(e, "http://"+addr+"/healthz")
	want := `kopf-wasm: paused: peering "default" in "default": paused in favour of admin@laptop (priority 100, cluster upgrade)`
	if status != want || !strings.Contains(body, `"kopf-wasm":`) {
		t.Fatalf("liveness while frozen: Kopf-Wasm-Status %q, body %s; want %q", status, body, want)
	}
	e.create("frozen")
	e.untouched("frozen", 2*time.Second)
	if err := host.Unfreeze(context.Background(), peer); err != nil {
		t.Fatal(err)
	}
	h.logged(t, "Resuming operations after the pause.")
	e.has("frozen", "create_fn", "v1")

	// A freeze of 4 s that nobody resumes.
	peer.Lifetime = 4 * time.Second
	if err := host.Freeze(context.Background(), peer); err != nil {
		t.Fatal(err)
	}
	frozenAt := time.Now()
	e.wait("paused again", func() bool { return strings.Count(h.logs.String(), "Pausing operations in favour of") == 2 })
	e.create("expiring")
	e.wait("resumed after the lifetime", func() bool {
		return strings.Count(h.logs.String(), "Resuming operations after the pause.") == 2
	})
	if took := time.Since(frozenAt); took < 3*time.Second {
		t.Fatalf("resumed %s after a freeze of 4s", took)
	}
	e.has("expiring", "create_fn", "v1")
	if _, gone := e.peers()["admin@laptop"]; gone {
		t.Fatal("the expired record was not cleaned")
	}
}

// TestSIGKILLedPeerBlocksUntilItsLifetime kills a host of a higher priority
// with SIGKILL (no goodbye): its record stays, and pauses the other host
// only until its lifetime has passed.
func TestSIGKILLedPeerBlocksUntilItsLifetime(t *testing.T) {
	e := newPeerEnv(t)
	const lifetime = 6 * time.Second
	p := e.startProcess("killed", "testguests/reloadv1", envProcPriority+"=100", envProcLifetime+"=6")
	e.wait("the process keeps alive", func() bool { return e.peers()["killed"] != nil })
	low := e.start("survivor", "testguests/reloadv2", 0, 10*time.Second, nil, "")
	low.logged(t, "Pausing operations in favour of [<Peer killed: priority=100")
	p.kill()
	killed := time.Now()
	e.create("after-kill")
	low.logged(t, "Resuming operations after the pause.")
	took := time.Since(killed)
	t.Logf("resumed %s after the SIGKILL (lifetime %s)", took, lifetime)
	if took > lifetime+5*time.Second {
		t.Fatalf("resumed %s after the SIGKILL, lifetime %s", took, lifetime)
	}
	e.has("after-kill", "create_fn", "v2")
}

func getLiveness(e *peerEnv, url string) (status, body string) {
	t := e.t
	t.Helper()
	var resp *http.Response
	e.wait("liveness answers", func() bool {
		var err error
		resp, err = http.Get(url)
		return err == nil && resp.StatusCode == http.StatusOK
	})
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.Header.Get("Kopf-Wasm-Status"), string(b)
}
