//! The admission benchmark's module in Rust (as examples/testguests/
//! admissionbench in Go): a trivial validating handler that admits
//! everything, and a mutating one that adds a label, on objects labelled
//! bench-mutate=yes only. BenchmarkAdmission loads it with BENCH_GUEST=rust.
//!
//! Build: cargo build --release --target wasm32-wasi

use kopf::{Context, Module, Result, Value};

kopf::export!(register);

pub fn register(m: &mut Module) {
    m.module("admissionbench", "0.1.0");
    m.on_validate("kopf.dev", "v1", "kopfexamples", "allow", allow);
    m.on_mutate("kopf.dev", "v1", "kopfexamples", "label", label).label("bench-mutate", "yes");
}

fn allow(_: &mut Context) -> Result {
    Ok(Value::Null)
}

fn label(ctx: &mut Context) -> Result {
    ctx.patch().set("metadata.labels.mutated", "yes");
    Ok(Value::Null)
}

#[cfg(test)]
mod tests {
    use super::*;
    use kopf::obj;
    use kopf::testing::Host;

    #[test]
    fn allows_and_labels() {
        let h = Host::new(Module::build("admissionbench", "0.1.0", register));
        let o = obj! {"apiVersion" => "kopf.dev/v1", "kind" => "KopfExample", "metadata" => obj!{"name" => "x", "labels" => obj!{"bench-mutate" => "yes"}}};
        assert!(h.run("allow", &o, None).allowed());
        let res = h.run("label", &o, None);
        assert!(res.allowed());
        assert_eq!(res.merge().str_at("metadata.labels.mutated"), "yes");
    }
}
