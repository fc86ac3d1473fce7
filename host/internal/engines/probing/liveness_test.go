package probing

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"testing"
)

// The liveness endpoint answers the probes' JSON with 200 when they all
// succeed, 500 when one failed, {} without a prober, and 503 while the
// operator does not run or the round could not be made.
func TestLivenessProbes(t *testing.T) {
	tests := []struct {
		name   string
		alive  bool
		prober prober
		code   int
		body   string
	}{
		{name: "not running", alive: false, code: http.StatusServiceUnavailable},
		{name: "no prober", alive: true, code: http.StatusOK, body: `{}`},
		{name: "probes succeeded", alive: true, code: http.StatusOK, body: `{"a":1,"b":{"x":"y"}}`,
			prober: func(context.Context) (Report, error) {
				return Report{Results: map[string]json.RawMessage{"a": json.RawMessage(`1`), "b": json.RawMessage(`{"x":"y"}`)}}, nil
			}},
		{name: "a probe failed", alive: true, code: http.StatusInternalServerError, body: `{"a":1,"b":{"error":"down"}}`,
			prober: func(context.Context) (Report, error) {
				return Report{Results: map[string]json.RawMessage{"a": json.RawMessage(`1`), "b": json.RawMessage(`{"error":"down"}`)},
					Failed: []string{"b"}}, nil
			}},
		{name: "round not made", alive: true, code: http.StatusServiceUnavailable,
			prober: func(context.Context) (Report, error) { return Report{}, errors.New("stopping") }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, err := StartLiveness("http://127.0.0.1:0/healthz", discardLogger)
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			l.SetAlive(tt.alive)
			if tt.prober != nil {
				l.SetProber(tt.prober)
			}
			resp, err := http.Get("http://" + l.addr + "/healthz")
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			_ = resp.Body.Close()
			if resp.StatusCode != tt.code {
				t.Errorf("status %d, want %d (%s)", resp.StatusCode, tt.code, body)
			}
			if tt.body != "" {
				if string(body) != tt.body {
					t.Errorf("body %s, want %s", body, tt.body)
				}
				if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
					t.Errorf("Content-Type %q, want application/json", ct)
				}
			}
		})
	}
}

func TestLiveness(t *testing.T) {
	l, err := StartLiveness("http://127.0.0.1:0/healthz", discardLogger)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	get := func() int {
		resp, err := http.Get("http://" + l.addr + "/healthz")
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
		return resp.StatusCode
	}
	if code := get(); code != http.StatusServiceUnavailable {
		t.Errorf("before start: %d, want 503", code)
	}
	l.SetAlive(true)
	if code := get(); code != http.StatusOK {
		t.Errorf("running: %d, want 200", code)
	}
	if _, err := StartLiveness("http://"+l.addr+"/healthz", discardLogger); err == nil {
		t.Error("a second endpoint on the same address: want an error")
	}
}

// discardLogger drops the tests' logs.
var discardLogger = slog.New(slog.NewTextHandler(io.Discard, nil))
