// Package objects holds the pure helpers for Kubernetes objects kept as
// JSON-like values (map[string]any, []any, string, bool, numbers, nil), as
// k8s.io/apimachinery's unstructured holds them.
//
// It offers field paths ("spec.field" and back), reading and writing values
// at a path, deep copies, JSON-semantic equality (an int64 from a watch equals
// the float64 decoded from an annotation), Kopf's diff between two essences
// and its reduction to one field, and JSON merge patches (RFC 7396).
//
// Callers: host/internal/persistence (diff-base essences, patches),
// host/internal/registry (filters, causes) and the reactor (old/new/diff for
// field handlers). It calls only the standard library and abi.
package objects
