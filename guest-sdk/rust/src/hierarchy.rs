//! Hierarchies, as Kopf's kopf.adopt and friends: they prepare a child
//! object in place before the handler creates it, keeping what it already
//! has unless [`Hierarchy::forced`] says otherwise. The plain functions
//! use the defaults (Kopf's: not forced, not strict, a controller owner
//! reference that blocks the owner's deletion); the `_with` ones take a
//! [`Hierarchy`]:
//!
//! ```ignore
//! let opts = Hierarchy::default().strict().nested(&["spec.template"]);
//! kopf::hierarchy::adopt_with(&mut job, ctx.body(), &opts);
//! ```

use std::collections::BTreeMap;

use crate::json::{Map, Value};
use crate::obj;

/// The options of the hierarchy functions, Kopf's keyword arguments.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hierarchy {
    forced: bool,
    strict: bool,
    nested: Vec<String>,
    controller: bool,
    block_owner_deletion: bool,
}

impl Default for Hierarchy {
    fn default() -> Hierarchy {
        Hierarchy { forced: false, strict: false, nested: Vec::new(), controller: true, block_owner_deletion: true }
    }
}

impl Hierarchy {
    /// Overwrites what the child already has (its name or generateName,
    /// namespace, labels), Kopf's forced=True.
    pub fn forced(mut self) -> Hierarchy {
        self.forced = true;
        self
    }
    /// Names the child exactly as the owner (metadata.name) instead of a
    /// generateName "<owner>-", Kopf's strict=True.
    pub fn strict(mut self) -> Hierarchy {
        self.strict = true;
        self
    }
    /// Also labels the templates at these dotted paths of the child
    /// ("spec.template", "spec.jobTemplate.spec.template") when they
    /// exist, Kopf's nested=.
    pub fn nested(mut self, paths: &[&str]) -> Hierarchy {
        self.nested.extend(paths.iter().map(|p| p.to_string()));
        self
    }
    /// The owner reference's controller flag (default true).
    pub fn controller(mut self, v: bool) -> Hierarchy {
        self.controller = v;
        self
    }
    /// The owner reference's blockOwnerDeletion flag (default true).
    pub fn block_owner_deletion(mut self, v: bool) -> Hierarchy {
        self.block_owner_deletion = v;
        self
    }
}

/// Makes `child` a child of `owner`, Kopf's kopf.adopt: an owner
/// reference, a name after the owner's, the owner's namespace and labels.
pub fn adopt(child: &mut Value, owner: &Value) {
    adopt_with(child, owner, &Hierarchy::default())
}

/// [`adopt`] with options.
pub fn adopt_with(child: &mut Value, owner: &Value, opts: &Hierarchy) {
    append_owner_reference_with(child, owner, opts);
    harmonize_with(child, owner.str_at("metadata.name"), opts);
    adjust_namespace_with(child, owner.str_at("metadata.namespace"), opts);
    let labels: BTreeMap<String, String> = owner["metadata"]["labels"]
        .as_object()
        .map(|m| m.iter().filter_map(|(k, v)| v.as_str().map(|s| (k.clone(), s.to_string()))).collect())
        .unwrap_or_default();
    label_with(child, &labels, opts);
}

/// A controller owner reference to `owner`, with blockOwnerDeletion,
/// Kopf's build_owner_reference.
pub fn owner_reference(owner: &Value) -> Value {
    owner_reference_with(owner, &Hierarchy::default())
}

/// [`owner_reference`] with the flags of `opts`.
pub fn owner_reference_with(owner: &Value, opts: &Hierarchy) -> Value {
    obj! {
        "apiVersion" => owner.str_at("apiVersion"),
        "kind" => owner.str_at("kind"),
        "name" => owner.str_at("metadata.name"),
        "uid" => owner.str_at("metadata.uid"),
        "controller" => opts.controller,
        "blockOwnerDeletion" => opts.block_owner_deletion,
    }
}

/// The reference to `obj` that Events and other objects use, Kopf's
/// build_object_reference: apiVersion, kind, name, uid, and the namespace
/// when it has one.
pub fn build_object_reference(obj: &Value) -> Value {
    let mut r = obj! {
        "apiVersion" => obj.str_at("apiVersion"),
        "kind" => obj.str_at("kind"),
        "name" => obj.str_at("metadata.name"),
        "uid" => obj.str_at("metadata.uid"),
    };
    let ns = obj.str_at("metadata.namespace");
    if !ns.is_empty() {
        r.set_path("namespace", ns);
    }
    r
}

/// The child's owner references, made a list when they are anything else.
fn owner_refs(child: &mut Value) -> &mut Vec<Value> {
    let meta = child.entry_object("metadata");
    let refs = meta.entry("ownerReferences".to_string()).or_insert_with(|| Value::Array(Vec::new()));
    if !matches!(refs, Value::Array(_)) {
        *refs = Value::Array(Vec::new());
    }
    refs.as_array_mut().unwrap()
}

/// Adds an owner reference to `owner` unless one with its uid is there,
/// Kopf's append_owner_reference.
pub fn append_owner_reference(child: &mut Value, owner: &Value) {
    append_owner_reference_with(child, owner, &Hierarchy::default())
}

/// [`append_owner_reference`] with the flags of `opts`.
pub fn append_owner_reference_with(child: &mut Value, owner: &Value, opts: &Hierarchy) {
    let r = owner_reference_with(owner, opts);
    let refs = owner_refs(child);
    if refs.iter().any(|x| x["uid"] == r["uid"]) {
        return;
    }
    refs.push(r);
}

/// Removes the child's owner references to `owner` (by its uid), Kopf's
/// remove_owner_reference.
pub fn remove_owner_reference(child: &mut Value, owner: &Value) {
    if !matches!(child["metadata"], Value::Object(_)) {
        return;
    }
    let uid = owner.str_at("metadata.uid").to_string();
    owner_refs(child).retain(|r| r.str_at("uid") != uid);
}

/// Adds labels to the child, keeping the values it already has, Kopf's
/// kopf.label.
pub fn label(child: &mut Value, labels: &BTreeMap<String, String>) {
    label_with(child, labels, &Hierarchy::default())
}

/// [`label`] with options: [`Hierarchy::forced`] overwrites, and
/// [`Hierarchy::nested`] labels the templates at those paths that exist.
pub fn label_with(child: &mut Value, labels: &BTreeMap<String, String>, opts: &Hierarchy) {
    if labels.is_empty() {
        return;
    }
    label_one(child, labels, opts.forced);
    for path in &opts.nested {
        if let Some(nested) = path_mut(child, path) {
            if matches!(nested, Value::Object(_)) {
                label_one(nested, labels, opts.forced);
            }
        }
    }
}

fn path_mut<'v>(v: &'v mut Value, path: &str) -> Option<&'v mut Value> {
    path.split('.').try_fold(v, |v, k| v.as_object_mut()?.get_mut(k))
}

fn label_one(obj: &mut Value, labels: &BTreeMap<String, String>, forced: bool) {
    let meta = obj.entry_object("metadata");
    let dst = meta.entry("labels".to_string()).or_insert_with(Value::object);
    if !matches!(dst, Value::Object(_)) {
        *dst = Value::object();
    }
    let dst: &mut Map = dst.as_object_mut().unwrap();
    for (k, v) in labels {
        if forced || !dst.contains_key(k) {
            dst.insert(k.clone(), Value::from(v));
        }
    }
}

/// Names the child after `name`, Kopf's harmonize_naming: a
/// metadata.generateName "<name>-", unless the child has a name or a
/// generateName.
pub fn harmonize(child: &mut Value, name: &str) {
    harmonize_with(child, name, &Hierarchy::default())
}

/// [`harmonize`] with options: [`Hierarchy::strict`] sets metadata.name =
/// name instead; [`Hierarchy::forced`] replaces what the child has (the
/// other of the two is then removed).
pub fn harmonize_with(child: &mut Value, name: &str, opts: &Hierarchy) {
    let meta = child.entry_object("metadata");
    let named = meta.contains_key("name") || meta.contains_key("generateName");
    if name.is_empty() || named && !opts.forced {
        return;
    }
    if opts.strict {
        meta.insert("name".into(), Value::from(name));
        meta.remove("generateName");
    } else {
        meta.insert("generateName".into(), Value::from(format!("{}-", name)));
        meta.remove("name");
    }
}

/// Puts the child into `namespace` unless it has one, Kopf's
/// adjust_namespace. An empty namespace (a cluster-scoped owner) changes
/// nothing.
pub fn adjust_namespace(child: &mut Value, namespace: &str) {
    adjust_namespace_with(child, namespace, &Hierarchy::default())
}

/// [`adjust_namespace`] with options: [`Hierarchy::forced`] replaces the
/// child's namespace.
pub fn adjust_namespace_with(child: &mut Value, namespace: &str, opts: &Hierarchy) {
    let meta = child.entry_object("metadata");
    if namespace.is_empty() || meta.contains_key("namespace") && !opts.forced {
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
