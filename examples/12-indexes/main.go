// Command 12-indexes shows Kopf's indexes and memos.
//
// The index "by_owner" maps each KopfExample's spec.owner to the names of
// the objects with that owner (Kopf's @kopf.index returning {owner: name});
// objects labelled "skip-index" are left out by a filter. The change
// handlers "report" (create, update and resume) write to status.report the
// other objects of the same owner, read by key with ctx.IndexLookup, and
// the number of owners, read from the whole index with ctx.Index. The host
// runs it only once every object is indexed, so even the first object
// handled after a start sees every other object.
//
// Memos: the startup handler puts the region into the operator memo; each
// object's memo starts as a copy of it, and every handler of the object
// adds to it: the index handler and the event handler count their calls,
// and report remembers the reason it saw last. Report shows the memo it
// got in status.report.memo.
package main

import (
	"slices"
	"time"

	kopf "github.com/kopf-wasm/kopf-wasm/guest-sdk"
)

const group, version, plural = "kopf.dev", "v1", "kopfexamples"

func init() {
	kopf.Module("indexes", "0.1.0")
	kopf.OnStartup(startup, kopf.ID("startup"))
	kopf.Index(group, version, plural, byOwner, kopf.ID("by_owner"), kopf.Labels(map[string]any{"skip-index": kopf.Absent}))
	kopf.OnEvent(group, version, plural, seen, kopf.ID("seen"))
	kopf.OnCreate(group, version, plural, report, kopf.ID("report"))
	kopf.OnUpdate(group, version, plural, report, kopf.ID("report_update"))
	kopf.OnResume(group, version, plural, report, kopf.ID("report_resume"))
}

// startup fills the operator memo.
func startup(ctx *kopf.Context) (any, error) {
	ctx.Memo()["region"] = "eu-west"
	return nil, nil
}

// byOwner indexes the object's name under its owner. spec.slowIndex (in
// milliseconds) makes it slow, to watch the host hold the change handlers
// until every object is indexed.
func byOwner(ctx *kopf.Context) (any, error) {
	count(ctx, "indexed")
	if ms, ok := ctx.Spec()["slowIndex"].(float64); ok {
		time.Sleep(time.Duration(ms) * time.Millisecond)
	}
	owner := ctx.Spec().String("owner")
	if owner == "" {
		return nil, kopf.PermanentError{Message: "spec.owner is missing"}
	}
	return map[string]any{owner: ctx.Name()}, nil
}

// seen counts the object's watch events.
func seen(ctx *kopf.Context) (any, error) {
	count(ctx, "events")
	return nil, nil
}

// report lists the other objects of the object's owner and the owners.
func report(ctx *kopf.Context) (any, error) {
	owner := ctx.Spec().String("owner")
	names, err := ctx.IndexLookup("by_owner", owner)
	if err != nil {
		return nil, err
	}
	var others []string
	for _, n := range names {
		if s, _ := n.(string); s != ctx.Name() {
			others = append(others, s)
		}
	}
	slices.Sort(others)
	memo := map[string]any{}
	for k, v := range ctx.Memo() {
		memo[k] = v
	}
	ctx.Memo()["reported"] = string(ctx.Reason())
	ctx.Patch().Set("status.report", map[string]any{
		"reason": string(ctx.Reason()), "owner": owner, "others": others, "owners": len(ctx.Index("by_owner")),
		"memo": memo,
	})
	return nil, nil
}

func count(ctx *kopf.Context, key string) {
	n, _ := ctx.Memo()[key].(float64)
	ctx.Memo()[key] = n + 1
}

func main() {}
