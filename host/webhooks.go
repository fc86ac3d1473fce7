package host

import "github.com/kopf-wasm/kopf-wasm/host/internal/engines/admission"

// WebhookPath is the path at which the host serves a validating or
// mutating handler: "/<module>/<handler-id>".
func WebhookPath(module, handlerID string) string { return admission.HandlerPath(module, handlerID) }

// WebhookName is the name of a handler's webhook in the configurations
// the host manages under the name managed (settings admission.managed).
func WebhookName(module, handlerID, managed string) string {
	return admission.WebhookName(module, handlerID, managed)
}
