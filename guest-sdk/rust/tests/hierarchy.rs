//! Hierarchies with Kopf's options (forced, strict, nested, the owner
//! reference's flags), removing owner references and object references:
//! the same cases as the Go SDK's TestHierarchies, with the same JSON.

use std::collections::BTreeMap;

use kopf::hierarchy::*;
use kopf::{obj, Value};

fn owner() -> Value {
    obj! {"apiVersion" => "kopf.dev/v1", "kind" => "KopfExample", "metadata" => obj!{
        "name" => "parent", "namespace" => "ns1", "uid" => "u1", "labels" => obj!{"app" => "demo", "tier" => "db"}}}
}

const OWNER_REF: &str = r#"{"apiVersion":"kopf.dev/v1","blockOwnerDeletion":true,"controller":true,"kind":"KopfExample","name":"parent","uid":"u1"}"#;

fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

#[test]
fn hierarchies() {
    let refs = |r: &str| format!(r#""ownerReferences":[{}]"#, r);
    let cases: Vec<(&str, Value, Box<dyn Fn(&mut Value)>, String)> = vec![
        ("adopt a bare child", obj! {"kind" => "Pod"}, Box::new(|c| adopt(c, &owner())),
            format!(r#"{{"kind":"Pod","metadata":{{"generateName":"parent-","labels":{{"app":"demo","tier":"db"}},"namespace":"ns1",{}}}}}"#, refs(OWNER_REF))),
        ("adopt keeps what the child has", obj! {"metadata" => obj!{"name" => "kid", "namespace" => "ns2", "labels" => obj!{"app" => "kid"}}},
            Box::new(|c| adopt(c, &owner())),
            format!(r#"{{"metadata":{{"labels":{{"app":"kid","tier":"db"}},"name":"kid","namespace":"ns2",{}}}}}"#, refs(OWNER_REF))),
        ("forced adopt overwrites", obj! {"metadata" => obj!{"name" => "kid", "namespace" => "ns2", "labels" => obj!{"app" => "kid"}}},
            Box::new(|c| adopt_with(c, &owner(), &Hierarchy::default().forced())),
            format!(r#"{{"metadata":{{"generateName":"parent-","labels":{{"app":"demo","tier":"db"}},"namespace":"ns1",{}}}}}"#, refs(OWNER_REF))),
        ("strict adopt names the child", Value::object(), Box::new(|c| adopt_with(c, &owner(), &Hierarchy::default().strict())),
            format!(r#"{{"metadata":{{"labels":{{"app":"demo","tier":"db"}},"name":"parent","namespace":"ns1",{}}}}}"#, refs(OWNER_REF))),
        ("strict keeps a generateName unless forced", obj! {"metadata" => obj!{"generateName" => "x-"}},
            Box::new(|c| harmonize_with(c, "parent", &Hierarchy::default().strict())), r#"{"metadata":{"generateName":"x-"}}"#.into()),
        ("strict and forced", obj! {"metadata" => obj!{"generateName" => "x-"}},
            Box::new(|c| harmonize_with(c, "parent", &Hierarchy::default().strict().forced())), r#"{"metadata":{"name":"parent"}}"#.into()),
        ("label nested templates that exist", obj! {"spec" => obj!{"template" => obj!{"spec" => Value::object()}}},
            Box::new(|c| label_with(c, &labels(&[("a", "b")]), &Hierarchy::default().nested(&["spec.template", "spec.jobTemplate.spec.template"]))),
            r#"{"metadata":{"labels":{"a":"b"}},"spec":{"template":{"metadata":{"labels":{"a":"b"}},"spec":{}}}}"#.into()),
        ("label keeps values unless forced", obj! {"metadata" => obj!{"labels" => obj!{"a" => "old"}}},
            Box::new(|c| label(c, &labels(&[("a", "new")]))), r#"{"metadata":{"labels":{"a":"old"}}}"#.into()),
        ("label forced", obj! {"metadata" => obj!{"labels" => obj!{"a" => "old"}}},
            Box::new(|c| label_with(c, &labels(&[("a", "new")]), &Hierarchy::default().forced())), r#"{"metadata":{"labels":{"a":"new"}}}"#.into()),
        ("namespace forced", obj! {"metadata" => obj!{"namespace" => "x"}},
            Box::new(|c| adjust_namespace_with(c, "y", &Hierarchy::default().forced())), r#"{"metadata":{"namespace":"y"}}"#.into()),
        ("owner reference, not a controller", Value::object(),
            Box::new(|c| append_owner_reference_with(c, &owner(), &Hierarchy::default().controller(false).block_owner_deletion(false))),
            r#"{"metadata":{"ownerReferences":[{"apiVersion":"kopf.dev/v1","blockOwnerDeletion":false,"controller":false,"kind":"KopfExample","name":"parent","uid":"u1"}]}}"#.into()),
        ("remove the owner reference", obj! {"metadata" => obj!{"ownerReferences" => Value::Array(vec![obj!{"uid" => "u0"}, obj!{"uid" => "u1"}])}},
            Box::new(|c| remove_owner_reference(c, &owner())), r#"{"metadata":{"ownerReferences":[{"uid":"u0"}]}}"#.into()),
        ("remove the last owner reference", obj! {"metadata" => obj!{"ownerReferences" => Value::Array(vec![obj!{"uid" => "u1"}])}},
            Box::new(|c| remove_owner_reference(c, &owner())), r#"{"metadata":{"ownerReferences":[]}}"#.into()),
        ("remove from a child without metadata", Value::object(), Box::new(|c| remove_owner_reference(c, &owner())), "{}".into()),
    ];
    for (name, mut child, apply, want) in cases {
        apply(&mut child);
        assert_eq!(child.to_json().unwrap(), want, "{}", name);
    }
}

#[test]
fn object_references() {
    assert_eq!(build_object_reference(&owner()).to_json().unwrap(), r#"{"apiVersion":"kopf.dev/v1","kind":"KopfExample","name":"parent","namespace":"ns1","uid":"u1"}"#);
    let node = obj! {"apiVersion" => "v1", "kind" => "Node", "metadata" => obj!{"name" => "n1", "uid" => "u2"}};
    assert_eq!(build_object_reference(&node).to_json().unwrap(), r#"{"apiVersion":"v1","kind":"Node","name":"n1","uid":"u2"}"#);
    assert_eq!(owner_reference(&owner()).to_json().unwrap(), OWNER_REF);
}
