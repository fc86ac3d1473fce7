package clierr

import (
	"errors"
	"fmt"
	"testing"
)

func TestExitCodeAndMessage(t *testing.T) {
	base := errors.New("it broke")
	tests := []struct {
		name string
		err  error
		code int
		msg  string
	}{
		{name: "nil", err: nil, code: ExitOK},
		{name: "plain", err: base, code: ExitFailure, msg: "Error: it broke"},
		{name: "recommendation", err: New(base, "fix it"), code: ExitFailure, msg: "Error: it broke; fix it"},
		{name: "usage, wrapped", err: fmt.Errorf("run: %w", Usagef(base, "see --help")), code: ExitUsage,
			msg: "Error: run: it broke; see --help"},
		{name: "multi-line", err: errors.New("a\n  b\n"), code: ExitFailure, msg: "Error: a b"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ExitCode(tt.err); got != tt.code {
				t.Errorf("ExitCode = %d, want %d", got, tt.code)
			}
			if tt.err != nil && Message(tt.err) != tt.msg {
				t.Errorf("Message = %q, want %q", Message(tt.err), tt.msg)
			}
			if tt.err != nil && !errors.Is(tt.err, base) && tt.name != "multi-line" {
				t.Error("the error does not unwrap to its cause")
			}
		})
	}
}
