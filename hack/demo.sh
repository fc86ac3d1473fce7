#!/usr/bin/env bash
# hack/demo.sh — kopf-wasm's first five minutes, non-interactively (`make demo`):
#   1. builds the CLI (bin/kopf-wasm), the devcluster command and, with
#      `kopf-wasm build`, the example module (bin/wasm/kopfexample.wasm);
#   2. starts the local control plane (etcd + kube-apiserver +
#      kube-controller-manager, built by hack/controlplane/build.sh) with the
#      KopfExample CRD in the background and waits for it;
#   3. runs `kopf-wasm run` with the example module in the background,
#      creates an example object;
#   4. prints the create handler's result from the object's status, gives the
#      object a child ConfigMap (an ownerReference to it), deletes the object
#      (the delete handler runs, the finalizer goes), watches the garbage
#      collector delete the child, prints the operator's log, and stops
#      everything, also on failure or Ctrl-C.
# Needs Go, kubectl and bash; the control plane build is cached after the
# first run (several minutes on two cores).
set -euo pipefail

cd "$(dirname "$0")/.."
GO=${GO:-go}
NS=default
work=$(mktemp -d "${TMPDIR:-/tmp}/kopf-wasm-demo.XXXXXX")
kubeconfig=$work/kubeconfig
cluster_pid=
operator_pid=

say() { printf '\n== %s\n' "$*"; }
fail() { printf 'demo: %s\n' "$*" >&2; exit 1; }

stop() {
  local pid=$1 what=$2
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 0
  kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 1 150); do kill -0 "$pid" 2>/dev/null || { wait "$pid" 2>/dev/null || true; return 0; }; sleep 0.2; done
  echo "demo: $what did not stop within 30s; killing it" >&2
  kill -KILL "$pid" 2>/dev/null || true
}
cleanup() {
  local status=$?
  trap - EXIT INT TERM
  if [ "$status" -ne 0 ] && [ -s "$work/operator.log" ]; then
    echo "demo: the operator's log:" >&2; sed 's/^/    /' "$work/operator.log" >&2
  fi
  stop "$operator_pid" "the operator"
  stop "$cluster_pid" "the control plane"
  rm -rf "$work"
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

command -v kubectl >/dev/null || fail "kubectl is not on PATH; install it and run make demo again"
k() { kubectl --kubeconfig "$kubeconfig" "$@"; }

say "build: the CLI, the dev control plane command, the example module"
$GO build -o bin/kopf-wasm ./cmd/kopf-wasm
$GO build -o bin/devcluster ./internal/cmd/devcluster
bin/kopf-wasm build examples/kopfexample -o bin/wasm/kopfexample.wasm
bin/kopf-wasm inspect bin/wasm/kopfexample.wasm

# The CRD is installed before kube-controller-manager starts, so that its
# garbage collector watches KopfExamples from the start (it picks up CRDs
# created later only on its 30-second resync).
say "start the local control plane (etcd + kube-apiserver + kube-controller-manager) with the KopfExample CRD"
bin/devcluster -kubeconfig "$kubeconfig" examples/crd.yaml >"$work/devcluster.out" 2>"$work/devcluster.log" &
cluster_pid=$!
for _ in $(seq 1 900); do
  [ -s "$work/devcluster.out" ] && break
  kill -0 "$cluster_pid" 2>/dev/null || { cat "$work/devcluster.log" >&2; fail "the control plane did not start (see above)"; }
  sleep 0.2
done
[ -s "$work/devcluster.out" ] || fail "no kubeconfig from the control plane after 180s"
k version 2>/dev/null | sed 's/^/   /' || true
sed 's/^/   /' "$work/devcluster.log"
k get crd kopfexamples.kopf.dev

say "run the operator: kopf-wasm run -n $NS bin/wasm/kopfexample.wasm (in the background)"
bin/kopf-wasm run --kubeconfig "$kubeconfig" -n "$NS" bin/wasm/kopfexample.wasm >"$work/operator.log" 2>&1 &
operator_pid=$!

say "create an object: kubectl apply -n $NS -f examples/kopfexample/obj.yaml"
k apply -n "$NS" -f examples/kopfexample/obj.yaml

say "wait for the create handler's result in status.create_fn"
result=
for _ in $(seq 1 300); do
  kill -0 "$operator_pid" 2>/dev/null || fail "the operator exited"
  result=$(k get -n "$NS" kopfexample kopf-example-1 -o jsonpath='{.status.create_fn}')
  [ -n "$result" ] && break
  sleep 0.2
done
[ -n "$result" ] || fail "no status.create_fn after 60s"
echo "kubectl get kopfexample kopf-example-1 -o jsonpath='{.status.create_fn}':"
echo "   $result"
k get -n "$NS" kopfexamples

say "give the object a child: a ConfigMap with an ownerReference to it"
uid=$(k get -n "$NS" kopfexample kopf-example-1 -o jsonpath='{.metadata.uid}')
k apply -n "$NS" -f - <<EOF
apiVersion: v1
kind: ConfigMap
metadata:
  name: kopf-example-1-child
  ownerReferences:
    - {apiVersion: kopf.dev/v1, kind: KopfExample, name: kopf-example-1, uid: "$uid"}
data:
  note: goes with its owner
EOF

say "delete the object (the delete handler runs, then the finalizer is released)"
k delete -n "$NS" kopfexample kopf-example-1 --timeout=60s

say "the garbage collector (kube-controller-manager) deletes the child ConfigMap"
k wait -n "$NS" --for=delete configmap/kopf-example-1-child --timeout=60s ||
  fail "the child ConfigMap is still there 60s after its owner was deleted"
echo "   configmap/kopf-example-1-child is gone"

say "stop the operator (SIGTERM) and show its log"
stop "$operator_pid" "the operator"
operator_pid=
sed 's/^/   /' "$work/operator.log"

say "stop the control plane"
stop "$cluster_pid" "the control plane"
cluster_pid=
echo "demo: done"
