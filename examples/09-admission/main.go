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

var examples = kopf.Resource{Group: "kopf.dev", Version: "v1", Plural: "kopfexamples"}

func init() {
	kopf.Module("admission", "0.1.0")
	examples.OnValidate(checkField, kopf.ID("check_field"), kopf.Operations("CREATE", "UPDATE"))
	examples.OnMutate(addLabel, kopf.ID("add_label"), kopf.Operations("CREATE", "UPDATE"))
	// Only objects labelled loop=fail or loop=ignore reach these (the
	// label filter is also the webhook's objectSelector).
	examples.OnValidate(loop, kopf.ID("loop_fail"), kopf.Labels(map[string]any{"loop": "fail"}))
	examples.OnValidate(loop, kopf.ID("loop_ignore"), kopf.Labels(map[string]any{"loop": "ignore"}), kopf.IgnoreFailures())
}

// checkField denies spec.field "forbidden" with a 422 and the message the
// client shows; it warns about an empty field, and says when it sees a dry
// run.
func checkField(ctx *kopf.AdmissionContext) error {
	if ctx.DryRun() {
		ctx.Warn("dry run: checked, nothing is stored")
	}
	switch ctx.Spec().String("field") {
	case "forbidden":
		return kopf.AdmissionError{Message: "spec.field must not be 'forbidden'", Code: 422}
	case "":
		ctx.Warn("spec.field is empty")
	}
	return nil
}

// addLabel labels the object with who admitted it and the operation.
func addLabel(ctx *kopf.AdmissionContext) error {
	ctx.Patch().Merge(map[string]any{"metadata": map[string]any{"labels": map[string]any{
		"admitted-by": "kopf-wasm",
		"admitted-on": ctx.Operation(),
	}}})
	return nil
}

// loop never returns: the host stops it when the review's time is up and
// answers by the handler's failure policy.
func loop(ctx *kopf.AdmissionContext) error {
	n := 0
	for {
		n++
	}
}

func main() {}
