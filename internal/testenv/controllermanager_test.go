package testenv

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"
)

func TestControllerManagerArgs(t *testing.T) {
	// args are testenv's flags for the given controllers, with the given
	// flags replaced or added; sorted, as controllerManagerArgs returns them.
	args := func(controllers string, set map[string]string) []string {
		flags := map[string]string{
			"authentication-kubeconfig":        "/kc",
			"authorization-kubeconfig":         "/kc",
			"bind-address":                     "127.0.0.1",
			"cert-dir":                         "/certs",
			"controllers":                      controllers,
			"kubeconfig":                       "/kc",
			"leader-elect":                     "false",
			"secure-port":                      "10999",
			"service-account-private-key-file": "/sa.key",
		}
		for name, value := range set {
			flags[name] = value
		}
		var out []string
		for name, value := range flags {
			out = append(out, "--"+name+"="+value)
		}
		sort.Strings(out)
		return out
	}
	for _, tc := range []struct {
		name        string
		controllers []string
		extra       map[string]string
		want        []string
	}{
		{"defaults", nil, nil, args(strings.Join(DefaultControllers(), ","), nil)},
		{"all controllers", []string{"*"}, nil, args("*", nil)},
		{"all but one", []string{"*", "-ttl"}, nil, args("*,-ttl", nil)},
		{
			"extra flags, leading dashes tolerated",
			[]string{"garbagecollector"},
			map[string]string{"--concurrent-gc-syncs": "5", "v": "2"},
			args("garbagecollector", map[string]string{"concurrent-gc-syncs": "5", "v": "2"}),
		},
		{
			"extra flags replace testenv's",
			[]string{"namespace"},
			map[string]string{"leader-elect": "true", "service-account-private-key-file": "/mine.key"},
			args("namespace", map[string]string{"leader-elect": "true", "service-account-private-key-file": "/mine.key"}),
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := controllerManagerArgs("/kc", "/sa.key", "/certs", 10999, tc.controllers, tc.extra)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("controllerManagerArgs =\n  %q\nwant\n  %q", got, tc.want)
			}
		})
	}
	// Spot checks that the helper above does not hide a mistake.
	got := controllerManagerArgs("/kc", "/sa.key", "/certs", 10999, nil, map[string]string{"-leader-elect": "true"})
	for _, want := range []string{"--leader-elect=true", "--secure-port=10999", "--controllers=garbagecollector,namespace,"} {
		if !strings.Contains(strings.Join(got, " "), want) {
			t.Errorf("controllerManagerArgs = %q, want %s in it", got, want)
		}
	}
	if strings.Contains(strings.Join(got, " "), "--leader-elect=false") {
		t.Errorf("controllerManagerArgs = %q kept the replaced --leader-elect=false", got)
	}
}

func TestDefaultControllersHaveTheMustHaves(t *testing.T) {
	got := DefaultControllers()
	for _, want := range []string{"garbagecollector", "namespace", "pvc-protection", "serviceaccount-token"} {
		found := false
		for _, c := range got {
			found = found || c == want
		}
		if !found {
			t.Errorf("DefaultControllers() = %q, want %s in it", got, want)
		}
	}
	got[0] = "changed"
	if DefaultControllers()[0] == "changed" {
		t.Error("DefaultControllers returns a shared slice")
	}
}

// Asked for the controller manager, New checks for its binary before it
// starts anything; without the request the folder needs only two binaries.
func TestNewControllerManagerBinaryMissing(t *testing.T) {
	dir := t.TempDir()
	// Scripts that fail: reaching them would give a different error.
	write(t, filepath.Join(dir, "etcd"), "#!/bin/sh\nexit 3\n", 0o755)
	write(t, filepath.Join(dir, "kube-apiserver"), "#!/bin/sh\nexit 3\n", 0o755)
	t.Setenv(AssetsEnv, dir)
	if _, err := ResolveAssets(context.Background(), nil); err != nil {
		t.Fatalf("ResolveAssets without kube-controller-manager: %v", err)
	}

	env, err := New(context.Background(), Options{ControllerManager: true})
	if env != nil {
		_ = env.Stop()
	}
	assertOneLine(t, err)
	if !errors.Is(err, ErrMissingBinaries) {
		t.Errorf("error does not wrap ErrMissingBinaries: %v", err)
	}
	for _, want := range []string{ControllerManagerBinary, dir, AssetsEnv, BuildScript} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not mention %q: %v", want, err)
		}
	}
	if strings.Contains(err.Error(), "no executable etcd") {
		t.Errorf("error blames etcd, which is there: %v", err)
	}
}

// A controller manager that exits at once is one line with its last words.
func TestStartControllerManagerExits(t *testing.T) {
	assets, certDir := t.TempDir(), t.TempDir()
	write(t, filepath.Join(assets, ControllerManagerBinary),
		"#!/bin/sh\necho 'starting' >&2\necho 'Error: unknown flag: --bogus' >&2\nexit 1\n", 0o755)
	write(t, filepath.Join(certDir, saKeyFile), "not a key", 0o600)

	var out strings.Builder
	cm, err := startControllerManager(context.Background(), assets, []byte("apiVersion: v1\nkind: Config\n"), certDir,
		Options{Output: &out}, 10*time.Second)
	if cm != nil {
		_ = cm.stop(time.Second)
	}
	assertOneLine(t, err)
	for _, want := range []string{"exited while starting", "unknown flag: --bogus", "exit status 1"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not mention %q: %v", want, err)
		}
	}
	if !strings.Contains(out.String(), "starting") {
		t.Errorf("the process's output did not reach Options.Output: %q", out.String())
	}
}

func TestStartControllerManagerNoSigningKey(t *testing.T) {
	assets := t.TempDir()
	write(t, filepath.Join(assets, ControllerManagerBinary), "#!/bin/sh\nexit 1\n", 0o755)
	_, err := startControllerManager(context.Background(), assets, nil, t.TempDir(), Options{}, time.Second)
	assertOneLine(t, err)
	for _, want := range []string{saKeyFile, "service-account-private-key-file"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not mention %q: %v", want, err)
		}
	}
}

func TestWaitControllersStarted(t *testing.T) {
	for _, tc := range []struct {
		name    string
		status  int
		body    string
		exited  bool
		wantErr error // nil: started
	}{
		{"controllers listed", http.StatusOK, "[+]ping ok\n[+]garbage-collector-controller ok\nhealthz check passed\n", false, nil},
		{"only ping yet", http.StatusOK, "[+]ping ok\nhealthz check passed\n", false, context.DeadlineExceeded},
		{"unhealthy", http.StatusInternalServerError, "[-]garbage-collector-controller failed\n", false, context.DeadlineExceeded},
		{"process exited", http.StatusOK, "[+]ping ok\n", true, errExited},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path != "/healthz" || !r.URL.Query().Has("verbose") {
					http.NotFound(w, r)
					return
				}
				w.WriteHeader(tc.status)
				fmt.Fprint(w, tc.body)
			}))
			defer srv.Close()
			exited := make(chan struct{})
			if tc.exited {
				close(exited)
			}
			err := waitControllersStarted(context.Background(), srv.URL+"/healthz?verbose", 500*time.Millisecond, exited)
			if tc.wantErr == nil {
				if err != nil {
					t.Fatalf("waitControllersStarted: %v", err)
				}
				return
			}
			if !errors.Is(err, tc.wantErr) {
				t.Errorf("waitControllersStarted = %v, want %v", err, tc.wantErr)
			}
		})
	}
}
