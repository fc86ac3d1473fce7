// Command hog is the misbehaving module of the isolation tests: its create
// handlers on ConfigMaps take more than their share, one way each, chosen
// by the ConfigMap's "hog" label: "loop" spins until its call's timeout,
// "sleep" sleeps in time.Sleep for an hour (only the host's timeout ends
// it), "fail" fails at once with a TemporaryError of 0.1 s (so it is
// retried, and fails, again and again), "flood" gets the ConfigMap from
// the API server until its call's timeout (the module's request rate
// limit holds it back) and "grow" allocates memory until it is refused.
// Another module's objects must not wait for any of them.
package main

import (
	"errors"
	"time"

	kopf "github.com/kopf-wasm/kopf-wasm/guest-sdk"
)

func init() {
	kopf.Module("hog", "0.1.0")
	kopf.Permit("", "configmaps", "get")
	for mode, fn := range map[string]kopf.Handler{"loop": loopFn, "sleep": sleepFn, "fail": failFn, "flood": floodFn, "grow": growFn} {
		kopf.OnCreate("", "v1", "configmaps", fn, kopf.ID(mode), kopf.Labels(map[string]any{"hog": mode}))
	}
}

var (
	spins uint64   // written by loopFn so that its loop is not optimised away
	hold  [][]byte // kept by growFn so that the garbage collector cannot free it
)

func loopFn(*kopf.Context) (any, error) {
	for {
		spins++
	}
}

func sleepFn(*kopf.Context) (any, error) {
	time.Sleep(time.Hour)
	return nil, nil
}

func failFn(*kopf.Context) (any, error) {
	return nil, kopf.Temporary(errors.New("hog: failing on purpose"), 100*time.Millisecond)
}

func floodFn(ctx *kopf.Context) (any, error) {
	cms := ctx.Client("", "v1", "configmaps").Namespace(ctx.Namespace())
	for {
		if _, err := cms.Get(ctx.Name()); err != nil {
			return nil, err
		}
	}
}

func growFn(*kopf.Context) (any, error) {
	for {
		chunk := make([]byte, 4<<20)
		chunk[len(hold)%len(chunk)] = 1
		hold = append(hold, chunk)
	}
}

func main() {}
