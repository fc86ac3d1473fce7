// Command swapmemo is a test guest for swaps that drop a resource and add
// it back: the create handler puts create=true into the object's memo, and
// a timer copies the memo it gets to status.tick, where the test reads
// it. It has no index handler: an index's fill would hold the cycles until
// the new watch has listed its objects.
package main

import (
	"time"

	kopf "github.com/kopf-wasm/kopf-wasm/guest-sdk"
)

const group, version, plural = "kopf.dev", "v1", "kopfexamples"

func init() {
	kopf.Module("swapmemo", "0.1.0")
	kopf.OnCreate(group, version, plural, func(ctx *kopf.Context) (any, error) {
		ctx.Memo()["create"] = true
		return nil, nil
	}, kopf.ID("created"))
	kopf.Timer(group, version, plural, func(ctx *kopf.Context) (any, error) {
		ctx.Patch().Set("status.tick", map[string]any(ctx.Memo()))
		return nil, nil
	}, kopf.ID("tick"), kopf.Interval(time.Second))
}

func main() {}
