// Command 09-admission shows admission webhooks, as Kopf's
// @kopf.on.validate and @kopf.on.mutate: a validating handler that rejects
// a KopfExample whose spec.field is "forbidden" (and warns about an empty
// one), a mutating handler that labels every new or changed KopfExample,
// and two validators that never return, to show that the host answers by
// their failure policy before the API server's timeout.
package main

import (
	kopf "github.com/kopf-wasm/kopf-wasm/guest-sdk"
)

func init() {
	kopf.Module("admission", "0.1.0")
	kopf.OnValidate("kopf.dev", "v1", "kopfexamples", checkField, kopf.ID("check_field"),
		kopf.Operations("CREATE", "UPDATE"))
	kopf.OnMutate("kopf.dev", "v1", "kopfexamples", addLabel, kopf.ID("add_label"),
		kopf.Operations("CREATE", "UPDATE"))
	// Only objects labelled loop=fail or loop=ignore reach these (the
	// label filter is also the webhook's objectSelector).
	kopf.OnValidate("kopf.dev", "v1", "kopfexamples", loop, kopf.ID("loop_fail"),
		kopf.Labels(map[string]any{"loop": "fail"}))
	kopf.OnValidate("kopf.dev", "v1", "kopfexamples", loop, kopf.ID("loop_ignore"),
		kopf.Labels(map[string]any{"loop": "ignore"}), kopf.IgnoreFailures())
}

// checkField denies spec.field "forbidden" with a 422 and the message the
// client shows; it warns about an empty field, and says when it sees a dry
// run.
func checkField(ctx *kopf.Context) (any, error) {
	adm := ctx.Admission()
	if adm.DryRun {
		adm.Warnings = append(adm.Warnings, "dry run: checked, nothing is stored")
	}
	field, _ := ctx.Spec().Get("field")
	switch field {
	case "forbidden":
		return nil, kopf.AdmissionError{Message: "spec.field must not be 'forbidden'", Code: 422}
	case nil, "":
		adm.Warnings = append(adm.Warnings, "spec.field is empty")
	}
	return nil, nil
}

// addLabel labels the object with who admitted it and the operation.
func addLabel(ctx *kopf.Context) (any, error) {
	ctx.Patch().Merge(map[string]any{"metadata": map[string]any{"labels": map[string]any{
		"admitted-by": "kopf-wasm",
		"admitted-on": ctx.Admission().Operation,
	}}})
	return nil, nil
}

// loop never returns: the host stops it when the review's time is up and
// answers by the handler's failure policy.
func loop(ctx *kopf.Context) (any, error) {
	n := 0
	for {
		n++
	}
}

func main() {}
