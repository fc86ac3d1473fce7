package testenv

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
)

// Faults of the control plane, for the tests of what a client does when
// they happen (internal/chaostest).

// StopAPIServer stops kube-apiserver as a rolling restart does (SIGTERM,
// then it finishes the requests in flight and ends its watches, within 2 s:
// testenv runs it with --shutdown-watch-termination-grace-period=2s) and
// leaves etcd, and kube-controller-manager if any, running. Until
// [Env.StartAPIServer], connections to Config.Host are refused.
func (e *Env) StopAPIServer() error {
	if err := e.env.ControlPlane.GetAPIServer().Stop(); err != nil {
		return fmt.Errorf("testenv: stopping kube-apiserver: %w", oneLine(err))
	}
	return nil
}

// StartAPIServer starts kube-apiserver again after [Env.StopAPIServer], on
// the same address and etcd, with the same certificates and client CA, so
// that Config and Kubeconfig stay valid; it returns once the server answers
// /healthz. Its watch cache starts empty, as after any restart.
func (e *Env) StartAPIServer() error {
	if err := e.env.ControlPlane.GetAPIServer().Start(); err != nil {
		return fmt.Errorf("testenv: starting kube-apiserver again: %w", oneLine(err))
	}
	return nil
}

// CompactEtcd compacts etcd's history up to its current revision, as the
// API server's periodic compaction (--etcd-compaction-interval) does, and
// returns that revision. Afterwards a watch or list at an older
// resourceVersion is answered 410 Gone, unless the API server's watch cache
// still holds it (set APIServerFlags "watch-cache": "false" to make every
// such request reach etcd). It uses etcd's JSON gateway, so tests need no
// etcd client.
func (e *Env) CompactEtcd(ctx context.Context) (int64, error) {
	var status struct {
		Header struct {
			Revision string `json:"revision"`
		} `json:"header"`
	}
	if err := e.etcdCall(ctx, "/v3/maintenance/status", struct{}{}, &status); err != nil {
		return 0, err
	}
	rev, err := strconv.ParseInt(status.Header.Revision, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("testenv: etcd's revision %q: %w", status.Header.Revision, err)
	}
	compaction := map[string]any{"revision": strconv.FormatInt(rev, 10), "physical": true}
	if err := e.etcdCall(ctx, "/v3/kv/compaction", compaction, nil); err != nil {
		return 0, err
	}
	return rev, nil
}

// etcdCall posts a request to etcd's JSON gateway and decodes the answer
// into out (unless nil).
func (e *Env) etcdCall(ctx context.Context, path string, in, out any) error {
	body, err := json.Marshal(in)
	if err != nil {
		return fmt.Errorf("testenv: etcd %s: %w", path, err)
	}
	u := e.env.ControlPlane.Etcd.URL.JoinPath(path)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("testenv: etcd %s: %w", path, err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("testenv: etcd %s: %w", path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return fmt.Errorf("testenv: etcd %s: %w", path, err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("testenv: etcd %s: %s: %s", path, resp.Status, bytes.TrimSpace(data))
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("testenv: etcd %s: decoding %q: %w", path, data, err)
	}
	return nil
}
