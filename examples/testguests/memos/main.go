// Command memos is a test guest: Kopf's memos across handler kinds. The
// startup handler fills the operator memo; every handler about an object
// adds its own key to the object's memo (the index handler, the event
// handler, the create handler, a daemon that returns at once); the timer
// copies the memo it gets to status.tick, where the end-to-end test reads
// what all the others left.
package main

import (
	"time"

	kopf "github.com/kopf-wasm/kopf-wasm/guest-sdk"
)

const group, version, plural = "kopf.dev", "v1", "kopfexamples"

func init() {
	kopf.Module("memos", "0.1.0")
	kopf.OnStartup(mark("region", "eu-west"), kopf.ID("startup"))
	kopf.Index(group, version, plural, func(ctx *kopf.Context) (any, error) {
		ctx.Memo()["index"] = true
		return ctx.Name(), nil
	}, kopf.ID("names"))
	kopf.OnEvent(group, version, plural, mark("event", true), kopf.ID("seen"))
	kopf.OnCreate(group, version, plural, mark("create", true), kopf.ID("created"))
	kopf.Daemon(group, version, plural, mark("daemon", true), kopf.ID("once"))
	kopf.Timer(group, version, plural, func(ctx *kopf.Context) (any, error) {
		ctx.Patch().Set("status.tick", map[string]any(ctx.Memo()))
		return nil, nil
	}, kopf.ID("tick"), kopf.Interval(time.Second))
}

func mark(key string, value any) kopf.Handler {
	return func(ctx *kopf.Context) (any, error) {
		ctx.Memo()[key] = value
		return nil, nil
	}
}

func main() {}
