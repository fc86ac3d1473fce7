package reactor

import (
	"github.com/kopf-wasm/kopf-wasm/abi"
	"github.com/kopf-wasm/kopf-wasm/host/internal/engines/admission"
	"github.com/kopf-wasm/kopf-wasm/host/internal/execution"
	"github.com/kopf-wasm/kopf-wasm/host/internal/registry"
)

// Executor is the execution layer the operator calls every handler
// through, for the engines built beside it (admission, probing) to call
// the same modules.
func (o *Operator) Executor() *execution.Executor { return o.exec }

// Registry is the registry of the current module set; a swap replaces it.
func (o *Operator) Registry() *registry.Registry { return o.reg.Load() }

// ProbeHandlers are the probe handlers of the current module set (Kopf's
// @kopf.on.probe), for the probing engine.
func (o *Operator) ProbeHandlers() []*registry.Handler { return o.Registry().Activities(abi.KindProbe) }

// ServeWebhooks makes the operator serve its webhook handlers through e:
// from Run on, and after every swap of modules, e serves the handlers of
// the current set and keeps the managed configurations; when Run ends, e
// stops. Call it before Run; without it no webhook is served.
func (o *Operator) ServeWebhooks(e *admission.Engine) { o.admission = e }
