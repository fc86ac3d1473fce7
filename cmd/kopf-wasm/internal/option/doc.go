// Package option holds the CLI's flag groups: each is a struct that a
// command's options embed, with ApplyFlags to declare its flags on a flag
// set and, where flags can contradict each other, Validate to refuse that
// with a clear error. Env binds every flag of a command to a KOPF_WASM_*
// environment variable.
//
// Groups: Kube (kubectl's --kubeconfig and --context), Namespaces (Kopf's
// -n and -A), Peering (Kopf's --standalone, -P, -p, --dev), Logging (Kopf's
// -v, -d, -q, --log-format) and Output (-o table|json).
package option
