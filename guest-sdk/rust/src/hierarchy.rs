//! Hierarchies, as Kopf's kopf.adopt and friends: they prepare a child
//! object in place before the handler creates it, keeping what it already
//! has (Kopf's non-forced mode).

use std::collections::BTreeMap;

use crate::json::Value;
use crate::obj;

/// Makes `child` a child of `owner`: a controller owner reference, the
/// owner's namespace, the owner's labels, and a generateName from the
/// owner's name.
pub fn adopt(child: &mut Value, owner: &Value) {
    append_owner_reference(child, owner);
    adjust_namespace(child, owner.str_at("metadata.namespace"));
    let labels: BTreeMap<String, String> = owner["metadata"]["labels"]
        .as_object()
        .map(|m| m.iter().filter_map(|(k, v)| v.as_str().map(|s| (k.clone(), s.to_string()))).collect())
        .unwrap_or_default();
    label(child, &labels);
    harmonize(child, owner.str_at("metadata.name"));
}

/// A controller owner reference to `owner`, with blockOwnerDeletion.
pub fn owner_reference(owner: &Value) -> Value {
    obj! {
        "apiVersion" => owner.str_at("apiVersion"),
        "kind" => owner.str_at("kind"),
        "name" => owner.str_at("metadata.name"),
        "uid" => owner.str_at("metadata.uid"),
        "controller" => true,
        "blockOwnerDeletion" => true,
    }
}

/// Adds an owner reference to `owner` unless one with its uid is there.
pub fn append_owner_reference(child: &mut Value, owner: &Value) {
    let r = owner_reference(owner);
    let meta = child.entry_object("metadata");
    let refs = meta.entry("ownerReferences".to_string()).or_insert_with(|| Value::Array(Vec::new()));
    if !matches!(refs, Value::Array(_)) {
        *refs = Value::Array(Vec::new());
    }
    let refs = refs.as_array_mut().unwrap();
    if refs.iter().any(|x| x["uid"] == r["uid"]) {
        return;
    }
    refs.push(r);
}

/// Adds labels to the child, keeping the values it already has.
pub fn label(child: &mut Value, labels: &BTreeMap<String, String>) {
    if labels.is_empty() {
        return;
    }
    let meta = child.entry_object("metadata");
    let dst = meta.entry("labels".to_string()).or_insert_with(Value::object);
    if !matches!(dst, Value::Object(_)) {
        *dst = Value::object();
    }
    let dst = dst.as_object_mut().unwrap();
    for (k, v) in labels {
        dst.entry(k.clone()).or_insert_with(|| Value::from(v));
    }
}

/// Sets metadata.generateName to "<name>-" unless the child has a name
/// or a generateName.
pub fn harmonize(child: &mut Value, name: &str) {
    let meta = child.entry_object("metadata");
    if name.is_empty() || meta.contains_key("name") || meta.contains_key("generateName") {
        return;
    }
    meta.insert("generateName".into(), Value::from(format!("{}-", name)));
}

/// Puts the child into `namespace` unless it has one.
pub fn adjust_namespace(child: &mut Value, namespace: &str) {
    let meta = child.entry_object("metadata");
    if namespace.is_empty() || meta.contains_key("namespace") {
        return;
    }
    meta.insert("namespace".into(), Value::from(namespace));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adopt_child() {
        let owner = obj! {"apiVersion" => "kopf.dev/v1", "kind" => "KopfExample",
            "metadata" => obj!{"name" => "p", "namespace" => "ns", "uid" => "u1", "labels" => obj!{"team" => "a", "x" => "1"}}};
        let mut child = obj! {"metadata" => obj!{"labels" => obj!{"x" => "2"}}};
        adopt(&mut child, &owner);
        adopt(&mut child, &owner);
        assert_eq!(child.to_json().unwrap(), r#"{"metadata":{"generateName":"p-","labels":{"team":"a","x":"2"},"namespace":"ns","ownerReferences":[{"apiVersion":"kopf.dev/v1","blockOwnerDeletion":true,"controller":true,"kind":"KopfExample","name":"p","uid":"u1"}]}}"#);
        let mut named = obj! {"metadata" => obj!{"name" => "c", "namespace" => "other"}};
        adopt(&mut named, &owner);
        assert_eq!(named.str_at("metadata.namespace"), "other");
        assert!(named["metadata"]["generateName"].is_null());
    }
}
