//! Resource selectors beyond one named resource: EVERYTHING, a category,
//! and a callable selector (Kopf's kopf.EVERYTHING, category= and
//! callable resource selectors), and one function under several resources
//! of one kind (abi.Validate's rule for stacked registrations).

use kopf::testing::Host;
use kopf::{obj, Context, Module, Result, Value, EVERYTHING};

fn touch(ctx: &mut Context) -> Result {
    Ok(Value::from(ctx.resource().map(|r| r.plural.clone()).unwrap_or_default()))
}

fn module() -> Module {
    Module::build("selectors", "0.1.0", |m| {
        m.on_event("", "", EVERYTHING, "everything", |_| Ok(Value::Null));
        m.on_create("", "", "", "all", |_| Ok(Value::Null)).category("all");
        m.on_create("kopf.dev", "", "", "picked", |_| Ok(Value::Null)).select_resources(|r| r.namespaced && r.preferred && r.categories.iter().any(|c| c == "kopf"));
        m.on_create("", "v1", "configmaps", "touch", touch).param("cm");
        m.on_create("", "v1", "secrets", "touch", touch).param("secret");
    })
}

#[test]
fn the_manifest_declares_the_selectors() {
    let h = Host::new(module());
    let resources: Vec<Value> = h.manifest()["handlers"].as_array().unwrap().iter().map(|s| s["resource"].clone()).collect();
    assert_eq!(
        resources,
        [
            obj! {"name" => "", "everything" => true},
            obj! {"name" => "", "category" => "all"},
            obj! {"group" => "kopf.dev", "name" => "", "callback" => true},
            obj! {"version" => "v1", "name" => "configmaps"},
            obj! {"version" => "v1", "name" => "secrets"},
        ]
    );
}

#[test]
fn the_callable_selector_answers_the_hosts_select_call() {
    let h = Host::new(module());
    let mut req = h.request("picked", None, None);
    let m = req.as_object_mut().unwrap();
    m.insert("call".into(), "select".into());
    m.insert("body".into(), Value::Array(vec![
        obj! {"group" => "kopf.dev", "version" => "v1", "plural" => "kopfexamples", "categories" => Value::Array(vec!["kopf".into()]), "namespaced" => true, "preferred" => true},
        obj! {"group" => "kopf.dev", "version" => "v1alpha1", "plural" => "kopfexamples", "categories" => Value::Array(vec!["kopf".into()]), "namespaced" => true},
        obj! {"group" => "kopf.dev", "version" => "v1", "plural" => "kopfpeerings", "preferred" => true},
    ]));
    assert_eq!(h.call(&req).outcome, Ok(Value::Array(vec![true.into(), false.into(), false.into()])));
}

#[test]
fn one_function_under_several_resources_of_one_kind() {
    let h = Host::new(module());
    for (group, plural, want) in [("", "configmaps", "cm"), ("", "secrets", "secret")] {
        let mut req = h.request("touch", Some(&obj! {"apiVersion" => "v1", "kind" => "X", "metadata" => obj!{"name" => "x"}}), None);
        let m = req.as_object_mut().unwrap();
        m.insert("resource".into(), obj! {"group" => group, "version" => "v1", "plural" => plural});
        m.insert("param".into(), want.into());
        assert_eq!(h.call(&req).outcome, Ok(Value::from(plural)));
    }
}

#[test]
fn selector_mistakes() {
    let cases: Vec<(Box<dyn Fn(&mut Module)>, &str)> = vec![
        (Box::new(|m: &mut Module| {
            m.on_create("", "v1", "pods", "c", |_| Ok(Value::Null)).category("all");
        }), "option category of handler c: register the handler with \"\" as the plural (and no other category or selector)"),
        (Box::new(|m: &mut Module| {
            m.on_create("", "", "", "c", |_| Ok(Value::Null));
        }), "handler \"c\" has no resource (name a plural, or use EVERYTHING, category() or select_resources())"),
        (Box::new(|m: &mut Module| {
            m.on_validate("", "", "", "v", |_| Ok(Value::Null)).category("all");
        }), "option category does not apply to validate handlers (handler v)"),
        (Box::new(|m: &mut Module| {
            m.on_mutate("kopf.dev", "v1", EVERYTHING, "m", |_| Ok(Value::Null));
        }), "handler \"m\" is a mutate handler and must name its resource"),
        (Box::new(|m: &mut Module| {
            m.on_convert("kopf.dev", "v1", EVERYTHING, "conv", |_| Ok(Value::Null));
        }), "handler \"conv\" is a convert handler and must name its resource"),
        (Box::new(|m: &mut Module| {
            m.on_create("", "v1", "configmaps", "c", touch).label("a", "b");
            m.on_create("", "v1", "secrets", "c", touch);
        }), "is declared twice as a create handler with other filters or options"),
        (Box::new(|m: &mut Module| {
            m.on_create("", "v1", "configmaps", "c", touch);
            m.on_create("", "v1", "configmaps", "c", touch);
        }), "is declared twice"),
    ];
    for (register, want) in cases {
        let m = Module::build("bad", "0.1.0", |m| register(m));
        let problems = m.problems().join("; ");
        assert!(problems.contains(want), "{:?} does not say {:?}", problems, want);
    }
}
