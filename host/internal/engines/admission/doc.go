// Package admission serves the modules' validating and mutating handlers
// (Kopf's @kopf.on.validate and @kopf.on.mutate) to the API server: an
// HTTPS server that answers AdmissionReviews (admission.k8s.io/v1, and
// v1beta1, whose shape is the same), its certificates, and the webhook
// configurations the host manages for it. Beyond Kopf, it also answers
// ConversionReviews (apiextensions.k8s.io/v1) for convert handlers on their
// paths and points their CRDs' spec.conversion at them (conversion.go).
//
// # Paths
//
// Every handler has a path of its own, "/<module>/<handler-id>" (the id's
// "/" stay path separators; other characters are escaped): Kopf's
// "/<handler-id>" qualified by the module, so that two modules' handlers
// with the same id cannot collide. The managed configurations point one
// webhook at each. "/validate" and "/mutate" serve every validating (or
// mutating) handler of every module at once, for configurations written
// by hand with one webhook. Through a Service, whose path segments the API
// server requires to be DNS-1123 names, a handler is reached on its
// [ServicePath] ("/admission/check-field" for "check_field"), which the
// server answers as well.
//
// # Semantics (Kopf's)
//
// The handlers of a path are selected by the request's resource
// (request.resource), operation (the handler's operations; none means
// all), subresource (none: the main resource only; "*": all; a name: that
// subresource), and the usual filters on the object (labels, annotations,
// field and value, and last the callback filter, asked of the guest);
// mutating handlers are skipped for DELETE unless they list DELETE in
// their operations. On DELETE the filters see the old object. All
// selected handlers run at once, each through the execution layer
// (execution.Executor.Call with the object as Subject and the review as
// Admission: operation, subresource, dryRun, userInfo, headers, and the old
// object), with the object's memo when the reactor has one.
//
// The review is allowed when every handler succeeded. A handler that
// fails denies it: with the code and message of its admission verdict
// (the SDKs' AdmissionError), otherwise code 500 and the failure's
// message, as Kopf; with several failures, one is reported, chosen as Kopf
// chooses (an AdmissionError, then a permanent error, then a temporary
// one, then any other). Warnings of all handlers are returned. The
// mutating handlers' patches (merge patch, then JSON patch operations) are
// applied one after the other, in registration order, to the request's
// object, and the result is returned as one JSONPatch against it. A
// validating handler's patch is ignored, with a warning in the log.
//
// # Time
//
// A review must be answered before the API server gives up (the timeout
// it sends in the URL, else settings.Admission.TimeoutSeconds). Handler
// calls get that time less settings.Admission.TimeoutMargin (at most half
// of it): a handler still running then is abandoned (its instance is
// discarded by the runtime) and answered by its failure policy — allowed
// with a warning when it ignores failures, denied with a 500 otherwise —
// so the API server never waits past its timeout. A handler whose call
// fails otherwise (a trap, its memory limit, output that is not a
// response) and a module that a swap removed meanwhile are answered the
// same way; an error the handler returns is a denial, as in Kopf.
//
// # Certificates
//
// The server serves one of three (certs.go): a CA and a certificate
// generated at start, in memory (each host its own); a folder's tls.crt
// and tls.key (settings.Admission.CertDir, a mounted Secret), read again
// when they change; or a generated one kept in a Secret shared by every
// replica (settings.Admission.CertSecret, sharedcert.go): the first
// replica creates it (a create is atomic: the others read the winner's),
// every replica serves it and writes its ca.crt as the caBundle, so the
// replicas behind one Service no longer overwrite each other's. Each
// replica reads it every CertCheckInterval and before it writes the
// configurations; one replaces it, with an update that carries the
// resourceVersion it read (a conflict: read the winner's), when it nears
// its end (CertRenewBefore) or does not name what this host needs (the new
// one names both). A replacement's ca.crt keeps the previous CA, and a
// replica writes the new bundle before it presents the new certificate,
// so that replicas that have not picked it up yet stay trusted. A Secret
// that holds no usable certificate is left alone: the host logs, once,
// that it should be deleted, serves no certificate meanwhile and leaves
// the configurations as they are (certsecret.go decides).
//
// # Safety
//
// Only POST with an AdmissionReview of at most
// settings.Admission.MaxRequestBytes is served; anything else gets a 4xx
// with a reason (400 for a body that is not an AdmissionReview, 404 for a
// handler or resource this server does not serve, 405, 413). TLS 1.2 is
// the least version; HTTP/2 and HTTP/1.1 are offered. During a dry run the Kubernetes writes of a handler
// that does not declare side effects are refused by the host.
package admission
