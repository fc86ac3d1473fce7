package execution

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kopf-wasm/kopf-wasm/abi"
)

// A delete handler that keeps failing holds its object in Terminating: the
// host's finalizer stays until the handler succeeds or fails for good, as
// Kopf's does. Its failure reports therefore say how to let the object go
// by hand, and a final failure says that the object went anyway.

// deletionNote is what a failure report of handler kind adds about the
// subject's finalizer: for a delete handler of an object marked for
// deletion that holds finalizer, how to release it (the handler retries)
// or that it is released (the handler failed for good); "" otherwise.
func deletionNote(subj *Subject, kind abi.HandlerKind, finalizer string, finished bool) string {
	if subj == nil || subj.Object == nil || kind != abi.KindDelete || subj.Object.GetDeletionTimestamp() == nil {
		return ""
	}
	index := slices.Index(subj.Object.GetFinalizers(), finalizer)
	if index < 0 {
		return ""
	}
	if finished {
		return fmt.Sprintf(" The deletion goes on without it, as Kopf's does: the finalizer %s is removed once "+
			"no other delete handler is pending, and what this one should have cleaned up is left behind.", finalizer)
	}
	return fmt.Sprintf(" The finalizer %s holds the object until the handler succeeds; "+
		"to let it go without the handler: %s", finalizer, releaseCommand(subj, index, finalizer))
}

// releaseCommand is the kubectl command that removes the finalizer at
// index from the subject, if it is still there (a JSON patch that tests it
// first).
func releaseCommand(subj *Subject, index int, finalizer string) string {
	res := subj.Resource.Plural
	if subj.Resource.Group != "" {
		res += "." + subj.Resource.Group
	}
	var ns string
	if n := subj.Object.GetNamespace(); n != "" {
		ns = " -n " + n
	}
	path := fmt.Sprintf("/metadata/finalizers/%d", index)
	patch := fmt.Sprintf(`[{"op":"test","path":"%s","value":"%s"},{"op":"remove","path":"%s"}]`, path, finalizer, path)
	return fmt.Sprintf("kubectl patch %s %s%s --type=json -p '%s'", res, subj.Object.GetName(), ns,
		strings.ReplaceAll(patch, "'", `'\''`))
}
