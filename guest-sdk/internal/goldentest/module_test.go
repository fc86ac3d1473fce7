package goldentest

import (
	"errors"
	"fmt"
	"time"

	kopf "github.com/kopf-wasm/kopf-wasm/guest-sdk"
)

// The module of abi/testdata/manifest.json, registered as an author would.
func init() {
	kopf.Module("kopfexample", "1.0.0")
	kopf.OnCreate("kopf.dev", "v1", "kopfexamples", createFn, kopf.ID("create_fn"),
		kopf.Retries(3), kopf.Backoff(5*time.Second), kopf.Param(map[string]any{"greeting": "hello"}))
	kopf.OnUpdate("kopf.dev", "v1", "kopfexamples", updateFn, kopf.ID("update_fn"),
		kopf.Labels(map[string]any{"app": "demo", "skip": kopf.Absent}))
	kopf.OnDelete("kopf.dev", "v1", "kopfexamples", deleteFn, kopf.ID("delete_fn"),
		kopf.Errors(kopf.ErrorsPermanent), kopf.Timeout(time.Minute))
	kopf.OnField("kopf.dev", "v1", "kopfexamples", fieldFn, kopf.ID("field_fn"), kopf.Field("spec.field"),
		kopf.New(kopf.Present), kopf.Annotations(map[string]any{"owner": kopf.Present}))
	kopf.Timer("kopf.dev", "v1", "kopfexamples", ping, kopf.Interval(10*time.Second), kopf.Idle(5*time.Second), kopf.Sharp())
	kopf.Daemon("", "v1", "pods", monitor, kopf.When(isDemo), kopf.InitialDelay(time.Second), kopf.CancellationTimeout(3*time.Second))
	kopf.OnValidate("kopf.dev", "", "kopfexamples", check, kopf.Operations("CREATE", "UPDATE"))
	kopf.OnStartup(configure)
	kopf.Permit("", "pods", "get", "list", "create")
	kopf.AllowHosts("api.example.com")
}

// createFn gives response-success.json and log.json.
func createFn(ctx *kopf.Context) (any, error) {
	var param struct {
		Greeting string `json:"greeting"`
	}
	if err := ctx.DecodeParam(&param); err != nil {
		return nil, err
	}
	ctx.Logger().Info("child created", "child", ctx.Name()+"-child")
	ctx.Patch().Set("metadata.labels.handled", "yes")
	ctx.Patch().Add("/spec/items/-", "x")
	memo := ctx.Memo()
	seen, _ := memo["seen"].(float64)
	memo["seen"] = seen + 1
	return map[string]any{"message": param.Greeting}, nil
}

// updateFn gives response-temporary.json.
func updateFn(*kopf.Context) (any, error) {
	return nil, kopf.TemporaryError{Message: "not ready yet", Delay: 5 * time.Second}
}

// deleteFn makes the request refused in kube-response-forbidden.json.
func deleteFn(ctx *kopf.Context) (any, error) {
	err := ctx.Client("", "v1", "pods").Namespace(ctx.Namespace()).Delete(ctx.Name() + "-child")
	var apiErr *kopf.APIError
	if errors.Is(err, kopf.ErrForbidden) && errors.As(err, &apiErr) && apiErr.Origin == kopf.OriginHost {
		return nil, fmt.Errorf("refused by the host: %w", err)
	}
	return nil, err
}

func fieldFn(ctx *kopf.Context) (any, error) {
	return map[string]any{"old": ctx.Old(), "new": ctx.New()}, nil
}

func ping(*kopf.Context) (any, error) { return "pong", nil }

// monitor sleeps until the host stops it and counts its rounds.
func monitor(ctx *kopf.Context) (any, error) {
	rounds := 0
	for !ctx.SleepUntilStopped(2 * time.Second) {
		rounds++
	}
	return map[string]any{"rounds": rounds, "reason": ctx.StopReason()}, nil
}

func isDemo(ctx *kopf.Context) bool { return ctx.Labels()["app"] == "demo" }

// check gives response-validate.json.
func check(ctx *kopf.Context) (any, error) {
	if ctx.Spec().String("field") == "" {
		adm := ctx.Admission()
		adm.Warnings = append(adm.Warnings, "field is deprecated")
		return nil, kopf.AdmissionError{Message: "spec.field must not be empty", Code: 422}
	}
	return nil, nil
}

func configure(*kopf.Context) (any, error) { return nil, nil }
