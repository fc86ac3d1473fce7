// Package clierr is the error type of the kopf-wasm CLI: what went wrong
// and what to do about it, printed on one line. Commands return an *Error
// for mistakes they can explain; app.Run prints any error through
// [Message] and turns it into the exit code through [ExitCode].
package clierr

import (
	"errors"
	"strings"
)

// Exit codes of the CLI.
const (
	// ExitOK: the command did what it was asked.
	ExitOK = 0
	// ExitFailure: the command failed (a module, the cluster, a build).
	ExitFailure = 1
	// ExitUsage: the command line itself is wrong (unknown flags, flags
	// that exclude each other, a missing argument).
	ExitUsage = 2
)

// Error is a CLI error: Err says what went wrong, Recommendation what to do
// (empty when Err already says it). Usage marks a mistake in the command
// line.
type Error struct {
	Err            error
	Recommendation string
	Usage          bool
}

// Error returns the error and the recommendation on one line.
func (e *Error) Error() string {
	if e.Recommendation == "" {
		return e.Err.Error()
	}
	return e.Err.Error() + "; " + e.Recommendation
}

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }

// New is a failure with a recommendation.
func New(err error, recommendation string) *Error {
	return &Error{Err: err, Recommendation: recommendation}
}

// Usagef is a mistake in the command line with a recommendation.
func Usagef(err error, recommendation string) *Error {
	return &Error{Err: err, Recommendation: recommendation, Usage: true}
}

// ExitCode is the process exit code for err: ExitOK for nil, ExitUsage for
// an *Error marked Usage, ExitFailure otherwise.
func ExitCode(err error) int {
	var e *Error
	switch {
	case err == nil:
		return ExitOK
	case errors.As(err, &e) && e.Usage:
		return ExitUsage
	default:
		return ExitFailure
	}
}

// Message renders err as the one line the CLI prints: "Error: " and the
// error, with line breaks (from wrapped tool output) folded into spaces.
func Message(err error) string {
	return "Error: " + strings.Join(strings.Fields(err.Error()), " ")
}
