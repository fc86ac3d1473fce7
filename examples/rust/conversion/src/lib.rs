//! examples/10-conversion in Rust: a conversion webhook (beyond Kopf) for
//! Widgets, served as v1alpha1 (spec.size, a string of digits) and v1
//! (spec.replicas, a number). The host answers the API server's
//! ConversionReviews with this handler and sets the apiVersion and the
//! metadata of what it returns.
//!
//! Build: cargo build --release --target wasm32-wasi

use kopf::{obj, Context, Error, Module, Result};

kopf::export!(register);

pub fn register(m: &mut Module) {
    m.module("conversion", "0.1.0");
    m.on_convert("kopf.dev", "v1", "widgets", "convert", convert).versions(&["v1alpha1", "v1"]);
}

/// Returns the widget in the desired version.
fn convert(ctx: &mut Context) -> Result {
    let to = ctx.conversion().map(|c| c.desired_api_version.clone()).unwrap_or_default();
    match to.as_str() {
        "kopf.dev/v1" => {
            let size = ctx.body().str_at("spec.size").to_string();
            if size.is_empty() {
                return Ok(obj! {"spec" => obj!{}});
            }
            let n: i64 = size.parse().map_err(|_| Error::permanent(format!("spec.size {:?} is not a number", size)))?;
            Ok(obj! {"spec" => obj!{"replicas" => n}})
        }
        "kopf.dev/v1alpha1" => match ctx.body()["spec"]["replicas"].as_i64() {
            Some(n) => Ok(obj! {"spec" => obj!{"size" => n.to_string()}}),
            None => Ok(obj! {"spec" => obj!{}}),
        },
        _ => Err(Error::permanent(format!("cannot convert to {}", to))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kopf::testing::Host;
    use kopf::Value;

    fn widget(version: &str, spec: Value) -> Value {
        obj! {"apiVersion" => format!("kopf.dev/{}", version), "kind" => "Widget", "metadata" => obj!{"name" => "w"}, "spec" => spec}
    }

    #[test]
    fn converts_both_ways() {
        let h = Host::new(Module::build("conversion", "0.1.0", register));
        assert_eq!(h.convert("convert", &widget("v1alpha1", obj! {"size" => "3"}), "kopf.dev/v1").outcome, Ok(obj! {"spec" => obj!{"replicas" => 3}}));
        assert_eq!(h.convert("convert", &widget("v1", obj! {"replicas" => 5}), "kopf.dev/v1alpha1").outcome, Ok(obj! {"spec" => obj!{"size" => "5"}}));
        assert_eq!(h.convert("convert", &widget("v1", obj! {}), "kopf.dev/v1alpha1").outcome, Ok(obj! {"spec" => obj!{}}));
    }

    #[test]
    fn refuses_a_size_that_is_no_number() {
        let h = Host::new(Module::build("conversion", "0.1.0", register));
        let err = h.convert("convert", &widget("v1alpha1", obj! {"size" => "many"}), "kopf.dev/v1").outcome.unwrap_err();
        assert!(err.to_string().contains(r#"spec.size "many" is not a number"#), "{}", err);
    }
}
