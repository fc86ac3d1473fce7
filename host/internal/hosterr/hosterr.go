// Package hosterr holds the classes of the host's errors, for errors.Is:
// the public package host re-exports them (host.ErrUsage, ...) and the
// packages under host/internal that find such a mistake wrap them. A leaf:
// it imports the standard library only.
package hosterr

import "errors"

// Classes of the host's errors.
var (
	// ErrUsage: options that cannot work together or cannot be parsed.
	ErrUsage = errors.New("usage")
	// ErrKubeconfig: the kubeconfig is missing, unreadable or lacks the
	// context.
	ErrKubeconfig = errors.New("kubeconfig")
	// ErrUnreachable: the API server did not answer, or refused the
	// credentials.
	ErrUnreachable = errors.New("cluster unreachable")
)

// Classify marks err with a class without changing its text.
func Classify(class, err error) error { return &classified{class: class, err: err} }

// classified is an error that also matches a class with errors.Is.
type classified struct {
	class, err error
}

func (c *classified) Error() string   { return c.err.Error() }
func (c *classified) Unwrap() []error { return []error{c.class, c.err} }
