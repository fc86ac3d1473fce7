module github.com/kopf-wasm/kopf-wasm/abi

go 1.24.0
