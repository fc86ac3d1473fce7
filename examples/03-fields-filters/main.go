// Command 03-fields-filters is an example operator with a field handler and
// handlers narrowed by filters on labels, annotations and field values, on
// KopfExample objects.
package main

import (
	"fmt"

	kopf "github.com/kopf-wasm/kopf-wasm/guest-sdk"
)

const group, version, plural = "kopf.dev", "v1", "kopfexamples"

func init() {
	kopf.Module("fields-filters", "0.1.0")
	// Runs when spec.size changes (and on creation, from absent to a value).
	kopf.OnField(group, version, plural, resized, kopf.ID("resized"), kopf.Field("spec.size"))
	// Only objects labelled tier=gold and without the paused annotation.
	kopf.OnCreate(group, version, plural, gold, kopf.ID("gold"),
		kopf.Labels(map[string]any{"tier": "gold"}),
		kopf.Annotations(map[string]any{"example.kopf.dev/paused": kopf.Absent}))
	// Only objects that have a team label, whatever its value.
	kopf.OnCreate(group, version, plural, teamed, kopf.ID("teamed"), kopf.Labels(map[string]any{"team": kopf.Present}))
	// Only when spec.size becomes "large".
	kopf.OnField(group, version, plural, large, kopf.ID("large"), kopf.Field("spec.size"), kopf.New("large"))
	// A callback filter, run by the host before the handler.
	kopf.OnCreate(group, version, plural, named, kopf.ID("named"),
		kopf.When(func(ctx *kopf.Context) bool { return len(ctx.Name()) <= 5 }))
}

func resized(ctx *kopf.Context) (any, error) {
	ctx.Logger().Info("size changed", "old", ctx.Old(), "new", ctx.New())
	return map[string]any{"message": fmt.Sprintf("%v -> %v", orNone(ctx.Old()), orNone(ctx.New()))}, nil
}

func gold(ctx *kopf.Context) (any, error) {
	return map[string]any{"message": "gold tier, not paused"}, nil
}

func teamed(ctx *kopf.Context) (any, error) {
	return map[string]any{"message": "team " + ctx.Labels()["team"]}, nil
}

func large(ctx *kopf.Context) (any, error) {
	ctx.Logger().Info("became large", "name", ctx.Name())
	return map[string]any{"message": "now large"}, nil
}

func named(ctx *kopf.Context) (any, error) {
	return map[string]any{"message": "short name"}, nil
}

func orNone(v any) any {
	if v == nil {
		return "none"
	}
	return v
}

// main never runs: the host initialises the module through _initialize.
func main() {}
