module github.com/kopf-wasm/kopf-wasm/examples

go 1.24.0

require (
	github.com/extism/go-pdk v1.1.3
	github.com/kopf-wasm/kopf-wasm/abi v0.0.0
	github.com/kopf-wasm/kopf-wasm/guest-sdk v0.0.0
)

replace (
	github.com/kopf-wasm/kopf-wasm/abi => ../abi
	github.com/kopf-wasm/kopf-wasm/guest-sdk => ../guest-sdk
)
