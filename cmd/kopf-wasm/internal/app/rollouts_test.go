package app

import (
	"strings"
	"testing"

	"github.com/kopf-wasm/kopf-wasm/internal/wasmtest"
)

// TestRunRolloutFlags checks run's --canary and --shadow: a malformed
// share is a usage error that says what to give, a version of a module no
// argument serves is refused before the host connects, and good flags
// get as far as the (unreachable) cluster.
func TestRunRolloutFlags(t *testing.T) {
	t.Setenv("KOPF_WASM_CACHE", t.TempDir())
	v1, v2 := wasmtest.Path(t, "testguests/canaryv1"), wasmtest.Path(t, "testguests/canaryv2")
	other := wasmtest.Path(t, "kopfexample")
	kubeconfig := writeFile(t, t.TempDir(), "kubeconfig", unreachableKubeconfig)
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no share", []string{"--canary", v2, v1}, 2, "is not MODULE=PERCENT"},
		{"share above 100", []string{"--canary", v2 + "=150", v1}, 2, "0 to 100"},
		{"share not a number", []string{"--canary", v2 + "=half", v1}, 2, "e.g. --canary v2/handlers.wasm=10"},
		{"canary of no argument", []string{"--canary", v2 + "=10", other}, 2, `is module "canary", which no MODULE argument serves`},
		{"shadow of no argument", []string{"--shadow", v2, other}, 2, `is module "canary", which no MODULE argument serves`},
		{"canary and shadow", []string{"--canary", v2 + "=10%", "--shadow", v2, v1}, 1, "https://127.0.0.1:1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"run", "--kubeconfig", kubeconfig}, tt.args...)
			r := run(t.Context(), "", args...)
			if text := r.out + r.errOut; r.code != tt.code || !strings.Contains(text, tt.want) {
				t.Fatalf("kopf-wasm %s = %+v; want exit %d and %q", strings.Join(args, " "), r, tt.code, tt.want)
			}
		})
	}
}
