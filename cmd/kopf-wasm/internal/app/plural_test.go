package app

import "testing"

// The CLI's counts agree with their number: "1 handler", not "1 handlers".
func TestCount(t *testing.T) {
	for _, tt := range []struct {
		n    int
		want string
	}{{0, "0 handlers"}, {1, "1 handler"}, {2, "2 handlers"}} {
		if got := count(tt.n, "handler"); got != tt.want {
			t.Errorf("count(%d) = %q, want %q", tt.n, got, tt.want)
		}
	}
}
