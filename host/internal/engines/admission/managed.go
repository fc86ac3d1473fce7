package admission

import (
	"encoding/json"
	"maps"
	"slices"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kopf-wasm/kopf-wasm/abi"
	"github.com/kopf-wasm/kopf-wasm/host/internal/registry"
	"github.com/kopf-wasm/kopf-wasm/internal/webhookname"
)

// Webhooks are the entries of the managed configurations.
type Webhooks struct {
	Validating []admissionregistrationv1.ValidatingWebhook
	Mutating   []admissionregistrationv1.MutatingWebhook
}

// Endpoint says how the API server reaches the server.
type Endpoint struct {
	// URL is the server's base URL, "https://host:port"; used when Service
	// is nil.
	URL string
	// Service, when set, is how the API server reaches the server from
	// inside the cluster; each webhook gets its handler's path.
	Service *admissionregistrationv1.ServiceReference
	// CABundle is the PEM the API server trusts the server's certificate
	// with.
	CABundle []byte
	// TimeoutSeconds is every webhook's timeoutSeconds.
	TimeoutSeconds int32
}

// WebhooksOf builds one webhook per validating and mutating handler of
// reg, as Kopf's managed configurations have them: named
// "<id>.<module>.<managed>", with rules from the handler's resource,
// operations and subresource, an objectSelector from its label filters,
// failurePolicy Ignore when it ignores failures (else Fail), sideEffects
// NoneOnDryRun when it declares side effects (else None), matchPolicy
// Equivalent, and a client config to its path, by URL or by Service. keep, when set,
// selects the handlers to include (the persistent ones on a clean stop).
func WebhooksOf(reg *registry.Registry, managed string, ep Endpoint, keep func(*registry.Handler) bool) Webhooks {
	var out Webhooks
	if reg == nil {
		return out
	}
	equivalent := admissionregistrationv1.Equivalent
	for _, ref := range reg.Resources() {
		for _, h := range reg.Handlers(ref, abi.KindValidate, abi.KindMutate) {
			if keep != nil && !keep(h) {
				continue
			}
			opts := h.Spec.Options
			failure := admissionregistrationv1.Fail
			if opts.IgnoreFailures {
				failure = admissionregistrationv1.Ignore
			}
			sideEffects := admissionregistrationv1.SideEffectClassNone
			if opts.SideEffects {
				sideEffects = admissionregistrationv1.SideEffectClassNoneOnDryRun
			}
			timeout := ep.TimeoutSeconds
			name := webhookname.Name(h.Module, h.ID(), managed)
			cc := admissionregistrationv1.WebhookClientConfig{CABundle: ep.CABundle}
			if ep.Service != nil {
				svc := *ep.Service
				path := ServicePath(h.Module, h.ID())
				svc.Path = &path
				cc.Service = &svc
			} else {
				url := ep.URL + webhookname.Path(h.Module, h.ID())
				cc.URL = &url
			}
			rules := []admissionregistrationv1.RuleWithOperations{rule(h)}
			sel := objectSelector(h.Spec.Filters.Labels)
			versions := []string{"v1", "v1beta1"}
			if h.Kind() == abi.KindValidate {
				out.Validating = append(out.Validating, admissionregistrationv1.ValidatingWebhook{
					Name: name, ClientConfig: cc, Rules: rules, FailurePolicy: &failure, MatchPolicy: &equivalent,
					ObjectSelector: sel, SideEffects: &sideEffects, TimeoutSeconds: &timeout, AdmissionReviewVersions: versions,
				})
			} else {
				out.Mutating = append(out.Mutating, admissionregistrationv1.MutatingWebhook{
					Name: name, ClientConfig: cc, Rules: rules, FailurePolicy: &failure, MatchPolicy: &equivalent,
					ObjectSelector: sel, SideEffects: &sideEffects, TimeoutSeconds: &timeout, AdmissionReviewVersions: versions,
				})
			}
		}
	}
	return out
}

// rule is the handler's resource, operations and subresource.
func rule(h *registry.Handler) admissionregistrationv1.RuleWithOperations {
	ops := []admissionregistrationv1.OperationType{admissionregistrationv1.OperationAll}
	if len(h.Spec.Options.Operations) > 0 {
		ops = ops[:0]
		for _, op := range h.Spec.Options.Operations {
			ops = append(ops, admissionregistrationv1.OperationType(op))
		}
	}
	resources := []string{h.Resource.Plural}
	switch sub := h.Spec.Options.Subresource; sub {
	case "":
	case "*":
		resources = append(resources, h.Resource.Plural+"/*")
	default:
		resources = []string{h.Resource.Plural + "/" + sub}
	}
	scope := admissionregistrationv1.AllScopes
	return admissionregistrationv1.RuleWithOperations{
		Operations: ops,
		Rule: admissionregistrationv1.Rule{
			APIGroups: []string{h.Resource.Group}, APIVersions: []string{h.Resource.Version},
			Resources: resources, Scope: &scope,
		},
	}
}

// objectSelector turns label filters into match expressions: a value is
// In, present Exists, absent DoesNotExist.
func objectSelector(labels map[string]abi.MetaFilter) *metav1.LabelSelector {
	if len(labels) == 0 {
		return nil
	}
	sel := &metav1.LabelSelector{}
	for _, key := range slices.Sorted(maps.Keys(labels)) {
		f := labels[key]
		req := metav1.LabelSelectorRequirement{Key: key}
		switch {
		case f.Value != nil:
			req.Operator, req.Values = metav1.LabelSelectorOpIn, []string{*f.Value}
		case f.Present:
			req.Operator = metav1.LabelSelectorOpExists
		case f.Absent:
			req.Operator = metav1.LabelSelectorOpDoesNotExist
		default:
			continue
		}
		sel.MatchExpressions = append(sel.MatchExpressions, req)
	}
	return sel
}

// JSON encodes the entries of one configuration as the list under
// "webhooks".
func (w Webhooks) JSON(mutating bool) (json.RawMessage, error) {
	if mutating {
		if w.Mutating == nil {
			return json.RawMessage("[]"), nil
		}
		return json.Marshal(w.Mutating)
	}
	if w.Validating == nil {
		return json.RawMessage("[]"), nil
	}
	return json.Marshal(w.Validating)
}
