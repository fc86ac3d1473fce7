package wasmrt

import "testing"

func TestCallErrorSummary(t *testing.T) {
	tests := []struct{ detail, want string }{
		{"panic: boom\ngoroutine 1", `module "m": trap: panic: boom`},
		{"Traceback (most recent call last):\n  File \"/bundle/h.py\", line 3, in <module>\n    import yaml\nModuleNotFoundError: No module named 'yaml'\n",
			`module "m": trap: ModuleNotFoundError: No module named 'yaml'`},
	}
	for _, tt := range tests {
		if got := (&CallError{Module: "m", Kind: KindTrap, Detail: tt.detail}).Error(); got != tt.want {
			t.Errorf("Error() = %q, want %q", got, tt.want)
		}
	}
}
