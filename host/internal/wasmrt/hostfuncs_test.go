package wasmrt

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kopf-wasm/kopf-wasm/abi"
)

// recordingHost is a Host that records what the guest asked for.
type recordingHost struct {
	mu     sync.Mutex
	events []abi.EventRequest
	kube   []abi.KubeRequest
	sleeps []time.Duration
}

func (h *recordingHost) PostEvent(_ context.Context, ev abi.EventRequest) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.events = append(h.events, ev)
	return nil
}

func (h *recordingHost) Kube(_ context.Context, req abi.KubeRequest) abi.KubeResponse {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.kube = append(h.kube, req)
	return abi.KubeResponse{Body: json.RawMessage(`{"kind":"ConfigMap","data":{"answer":"42"}}`)}
}

func (h *recordingHost) IndexLookup(_ context.Context, req abi.IndexLookupRequest) abi.IndexLookupResponse {
	return abi.IndexLookupResponse{Values: []json.RawMessage{json.RawMessage(`"` + req.Index + `:` + strings.Trim(string(req.Key), `"`) + `"`)}}
}

func (h *recordingHost) SleepUntilStopped(_ context.Context, d time.Duration) abi.SleepResponse {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.sleeps = append(h.sleeps, d)
	return abi.SleepResponse{Stopped: true, Reason: "deleted"}
}

func (h *recordingHost) IsStopped(context.Context) abi.SleepResponse {
	return abi.SleepResponse{Stopped: true, Reason: "exiting"}
}

// hostcallsResult is the result of the hostcalls guest: the host's replies.
type hostcallsResult struct {
	Log        json.RawMessage         `json:"log"`
	Event      abi.HostReply           `json:"event"`
	Declared   abi.KubeResponse        `json:"declared"`
	Undeclared abi.KubeResponse        `json:"undeclared"`
	Index      abi.IndexLookupResponse `json:"index"`
	Sleep      abi.SleepResponse       `json:"sleep"`
	Stopped    abi.SleepResponse       `json:"stopped"`
}

func callHostcalls(t *testing.T, m *Module, host Host) hostcallsResult {
	t.Helper()
	resp, err := m.Handle(t.Context(), request("calls", 100), host)
	if err != nil {
		t.Fatal(err)
	}
	var res hostcallsResult
	if err := json.Unmarshal(resp.Result, &res); err != nil {
		t.Fatalf("result %s: %v", resp.Result, err)
	}
	return res
}

func TestHostFunctions(t *testing.T) {
	logs := &logRecorder{}
	r := newRuntime(t, Options{Logger: slog.New(logs)})
	m := load(t, r, "hostcalls")
	host := &recordingHost{}
	res := callHostcalls(t, m, host)

	if string(res.Log) != "null" {
		t.Errorf("log replied %s, want no reply", res.Log)
	}
	attrs, ok := logs.find("hello from the guest")
	if !ok {
		t.Fatal("the guest's log record did not reach the logger")
	}
	want := map[string]string{"level": "INFO", "module": "hostcalls", "handler": "calls",
		"namespace": "default", "name": "example", "uid": "0000-1111", "answer": "42"}
	for k, v := range want {
		if attrs[k] != v {
			t.Errorf("log attribute %s = %q, want %q (all: %v)", k, attrs[k], v, attrs)
		}
	}

	if res.Event.Error != nil || len(host.events) != 1 || host.events[0].Reason != "Testing" {
		t.Errorf("event: reply %+v, host saw %+v", res.Event, host.events)
	}
	if res.Declared.Error != nil || !strings.Contains(string(res.Declared.Body), `"answer":"42"`) {
		t.Errorf("declared request: %+v", res.Declared)
	}
	if len(host.kube) != 1 || host.kube[0].Resource != "configmaps" || host.kube[0].Name != "settings" {
		t.Errorf("the host saw %+v, want only the declared configmaps request", host.kube)
	}
	herr := res.Undeclared.Error
	if herr == nil || herr.Code != http.StatusForbidden || herr.Origin != abi.OriginHost ||
		!strings.Contains(herr.Message, `module "hostcalls" did not declare the permission to get secrets`) {
		t.Errorf("undeclared request: %+v, want a 403 from the host naming get secrets", herr)
	}
	if res.Index.Error != nil || len(res.Index.Values) != 1 || string(res.Index.Values[0]) != `"by-owner:alice"` {
		t.Errorf("index: %+v", res.Index)
	}
	if !res.Sleep.Stopped || res.Sleep.Reason != "deleted" || len(host.sleeps) != 1 || host.sleeps[0] != time.Millisecond {
		t.Errorf("sleep: %+v, host saw %v", res.Sleep, host.sleeps)
	}
	if !res.Stopped.Stopped || res.Stopped.Reason != "exiting" {
		t.Errorf("is_stopped: %+v", res.Stopped)
	}
}

func TestHostFunctionsWithoutHost(t *testing.T) {
	r := newRuntime(t, Options{Logger: discardLogger()})
	m := load(t, r, "hostcalls")
	res := callHostcalls(t, m, nil)
	for name, herr := range map[string]*abi.HostError{
		"event": res.Event.Error, "declared": res.Declared.Error, "index": res.Index.Error,
	} {
		if herr == nil || herr.Code != http.StatusNotImplemented || !strings.Contains(herr.Message, "not available") {
			t.Errorf("%s without a host: %+v, want 501 not available", name, herr)
		}
	}
	// The permission check comes first, host or not.
	if herr := res.Undeclared.Error; herr == nil || herr.Code != http.StatusForbidden {
		t.Errorf("undeclared without a host: %+v, want 403", herr)
	}
	if res.Sleep.Stopped || res.Stopped.Stopped {
		t.Errorf("without a host nothing is stopped: %+v %+v", res.Sleep, res.Stopped)
	}
}

// panickingHost fails in every way a buggy host could.
type panickingHost struct{ NoHost }

func (panickingHost) Kube(context.Context, abi.KubeRequest) abi.KubeResponse { panic("host bug") }

func (panickingHost) PostEvent(context.Context, abi.EventRequest) error {
	return errors.New("the API server is down")
}

func TestHostFunctionsHostFailures(t *testing.T) {
	r := newRuntime(t, Options{Logger: discardLogger()})
	m := load(t, r, "hostcalls")
	res := callHostcalls(t, m, panickingHost{})
	if herr := res.Declared.Error; herr == nil || herr.Code != http.StatusInternalServerError || !strings.Contains(herr.Message, "host bug") {
		t.Errorf("a panicking host: %+v, want a 500 to the guest", herr)
	}
	if herr := res.Event.Error; herr == nil || herr.Code != http.StatusInternalServerError || herr.Message != "the API server is down" {
		t.Errorf("a failing host: %+v, want its error as a 500", herr)
	}
}

// TestHostSleepEndsTheCall: sleep_until_stopped replies when its sleep
// ends by itself, and ends the call (as a WASI sleep does) when the call's
// context ends first, whatever the guest would do on waking. Outside a
// daemon ([NoHost]) nothing else ends an hour's sleep.
func TestHostSleepEndsTheCall(t *testing.T) {
	serve := serveHostFunc(abi.HostSleepUntilStopped, hostSleepUntilStopped)
	c := &call{host: NoHost{}, kernel: newKernel(1 << 20)}
	sleep := func(ctx context.Context, seconds string) (reply string, ended bool) {
		defer func() {
			if v := recover(); v != nil {
				if v != any(errSleepInterrupted) {
					t.Fatalf("panic %v, want errSleepInterrupted", v)
				}
				ended = true
			}
		}()
		stack := []uint64{c.kernel.write([]byte(`{"seconds":` + seconds + `}`))}
		serve(ctx, c, stack)
		b, err := c.kernel.bytes(stack[0])
		if err != nil {
			t.Fatalf("no reply: %v", err)
		}
		return string(b), false
	}

	if reply, ended := sleep(t.Context(), "0.001"); ended || reply != `{"stopped":false}` {
		t.Errorf("a short sleep: reply %q, ended %v; want a reply", reply, ended)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Millisecond)
	defer cancel()
	if reply, ended := sleep(ctx, "3600"); !ended {
		t.Errorf("an hour's sleep past the call's timeout: reply %q, want the call ended", reply)
	}
}

// slowKubeHost answers Kubernetes requests only after a delay, ignoring
// the call's context, as a request that was on the wire when the call's
// timeout passed.
type slowKubeHost struct {
	NoHost
	delay time.Duration
}

func (h slowKubeHost) Kube(context.Context, abi.KubeRequest) abi.KubeResponse {
	time.Sleep(h.delay)
	return abi.KubeResponse{Body: json.RawMessage(`{}`)}
}

// TestCallPastItsTimeout: a call whose context ended while it ran is ended
// by its timeout even when the guest, given a host call's late reply,
// returns a success before any loop check sees the flag: the outcome of a
// call that overran its timeout is not taken.
func TestCallPastItsTimeout(t *testing.T) {
	opts := limits
	opts.Timeout = 100 * time.Millisecond
	r := newRuntime(t, opts)
	m := load(t, r, "hostcalls")
	resp, err := m.Handle(t.Context(), request("calls", 10), slowKubeHost{delay: 500 * time.Millisecond})
	var cerr *CallError
	if !errors.As(err, &cerr) || cerr.Kind != KindTimeout {
		t.Fatalf("%+v, %v; want a timeout", resp, err)
	}
}
