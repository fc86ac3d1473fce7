//! Kopf's minimal example operator as a kopf-wasm module in Rust: create,
//! update and delete handlers for kopf.dev/v1 kopfexamples that log and
//! return a message, which the host stores under status.create_fn,
//! status.update_fn and status.delete_fn (as examples/kopfexample in Go).
//!
//! Build: cargo build --release --target wasm32-wasi

use kopf::{obj, Context, Module, Result};

kopf::export!(register);

pub fn register(m: &mut Module) {
    m.module("kopfexample", "0.1.0");
    m.on_create("kopf.dev", "v1", "kopfexamples", "create_fn", create_fn);
    m.on_update("kopf.dev", "v1", "kopfexamples", "update_fn", update_fn);
    m.on_delete("kopf.dev", "v1", "kopfexamples", "delete_fn", delete_fn);
}

fn create_fn(ctx: &mut Context) -> Result {
    ctx.info("And here we are! Creating", obj! {"spec" => ctx.spec()});
    Ok(obj! {"message" => "hello world"})
}

fn update_fn(ctx: &mut Context) -> Result {
    ctx.info("Updating", obj! {"diff" => ctx.diff().len()});
    Ok(obj! {"message" => "updated"})
}

fn delete_fn(ctx: &mut Context) -> Result {
    ctx.info("Deleting", obj! {"name" => ctx.name()});
    Ok(obj! {"message" => "deleted"})
}

#[cfg(test)]
mod tests {
    use super::*;
    use kopf::testing::Host;
    use kopf::Value;

    fn example(field: &str) -> Value {
        obj! {"apiVersion" => "kopf.dev/v1", "kind" => "KopfExample",
            "metadata" => obj!{"name" => "kopf-example-1", "namespace" => "default", "uid" => "u1"},
            "spec" => obj!{"field" => field}}
    }

    #[test]
    fn manifest() {
        let h = Host::new(kopf::module!(register));
        let m = h.manifest();
        assert_eq!(m.str_at("module.name"), "kopfexample");
        let hs = m["handlers"].as_array().unwrap();
        assert_eq!(hs.len(), 3);
        for (h, (id, kind)) in hs.iter().zip([("create_fn", "create"), ("update_fn", "update"), ("delete_fn", "delete")]) {
            assert_eq!((h.str_at("id"), h.str_at("kind")), (id, kind));
            assert_eq!(h["resource"], obj! {"group" => "kopf.dev", "version" => "v1", "name" => "kopfexamples"});
        }
    }

    #[test]
    fn handlers() {
        for (id, obj, old, message) in [
            ("create_fn", example("a"), None, "hello world"),
            ("update_fn", example("b"), Some(example("a")), "updated"),
            ("delete_fn", example("b"), None, "deleted"),
        ] {
            let h = Host::new(kopf::module!(register));
            let res = h.run(id, &obj, old.as_ref());
            assert_eq!(res.outcome, Ok(obj! {"message" => message}), "{}", id);
            let logs = h.logs();
            assert_eq!(logs.len(), 1, "{}", id);
            assert_eq!(logs[0].str_at("level"), "info");
            assert!(res.response["patch"].is_null() && h.kube_requests().is_empty());
        }
    }
}
