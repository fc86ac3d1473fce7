// Command 02-errors is an example operator that shows, from a handler
// author's side, what each kind of error does. Every handler handles the
// KopfExample objects labelled mode=<its mode>:
//
//   - temporary: kopf.TemporaryError with a 1s delay, twice, then success;
//   - permanent: kopf.PermanentError, never retried;
//   - arbitrary: any other error, retried after the backoff, 3 tries;
//   - unserved: reads a resource the cluster does not serve, and gets
//     kopf.ErrNotFound rather than a crash;
//   - forbidden: creates a Secret without having declared the permission,
//     and gets kopf.ErrForbidden from the host naming the permission.
package main

import (
	"errors"
	"fmt"
	"time"

	kopf "github.com/kopf-wasm/kopf-wasm/guest-sdk"
)

const group, version, plural = "kopf.dev", "v1", "kopfexamples"

func mode(m string) kopf.Option { return kopf.Labels(map[string]any{"mode": m}) }

func init() {
	kopf.Module("errors", "0.1.0")
	kopf.OnCreate(group, version, plural, temporary, mode("temporary"))
	kopf.OnCreate(group, version, plural, permanent, mode("permanent"))
	kopf.OnCreate(group, version, plural, arbitrary, mode("arbitrary"), kopf.Retries(3))
	kopf.OnCreate(group, version, plural, unserved, mode("unserved"))
	kopf.OnCreate(group, version, plural, forbidden, mode("forbidden"))
	// Declared, so that the host lets the request through to the cluster,
	// which does not serve it.
	kopf.Permit("example.com", "nonexistents", "get")
}

// temporary asks to be retried in a second until its third try.
func temporary(ctx *kopf.Context) (any, error) {
	if ctx.Retry() < 2 {
		return nil, kopf.TemporaryError{Message: fmt.Sprintf("not ready yet (try %d)", ctx.Retry()+1), Delay: time.Second}
	}
	return map[string]any{"message": fmt.Sprintf("succeeded at retry %d", ctx.Retry())}, nil
}

// permanent gives up at once: the host posts a Warning Event and stops.
func permanent(*kopf.Context) (any, error) {
	return nil, kopf.PermanentError{Message: "this object cannot ever work"}
}

// arbitrary fails with a plain error: retried after the backoff, 3 tries.
func arbitrary(ctx *kopf.Context) (any, error) {
	return nil, fmt.Errorf("something unexpected on try %d", ctx.Retry()+1)
}

// unserved reads a kind that no CRD defines.
func unserved(ctx *kopf.Context) (any, error) {
	_, err := ctx.Client("example.com", "v1", "nonexistents").Namespace(ctx.Namespace()).Get("x")
	if errors.Is(err, kopf.ErrNotFound) {
		ctx.Logger().Warn("the cluster does not serve it", "error", err.Error())
		return nil, kopf.PermanentError{Message: "unserved: " + err.Error()}
	}
	return nil, err
}

// forbidden creates a Secret, which the module did not declare (Permit).
func forbidden(ctx *kopf.Context) (any, error) {
	secret := kopf.Object{"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": ctx.Name()}}
	_, err := ctx.Client("", "v1", "secrets").Namespace(ctx.Namespace()).Create(secret)
	var apiErr *kopf.APIError
	if errors.Is(err, kopf.ErrForbidden) && errors.As(err, &apiErr) {
		ctx.Logger().Warn("refused", "origin", apiErr.Origin, "error", err.Error())
		return nil, kopf.PermanentError{Message: "forbidden by the " + apiErr.Origin + ": " + apiErr.Message}
	}
	return nil, err
}

// main never runs: the host initialises the module through _initialize.
func main() {}
