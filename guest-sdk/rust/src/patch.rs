//! The patch a handler makes to its object.

use crate::json::{self, write_string, write_value, EncodeError, Map, Value};

/// A handler's changes to its object: a JSON merge patch (RFC 7396) built
/// with [`Patch::set`], [`Patch::unset`] and [`Patch::merge`], and JSON
/// patch operations (RFC 6902) that the host applies after it. The host
/// applies it after every attempt, failed ones included, as Kopf does.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Patch {
    merge: Value,
    ops: Vec<Op>,
}

#[derive(Clone, Debug, PartialEq)]
struct Op {
    op: &'static str,
    path: String,
    from: String,
    value: Option<Value>,
}

impl Patch {
    /// Sets the value at a dotted path ("metadata.labels.x").
    pub fn set(&mut self, path: &str, value: impl Into<Value>) {
        let keys: Vec<&str> = json::split_path(path).collect();
        self.set_keys(&keys, value);
    }
    /// Sets the value at a path given as keys (for keys with dots).
    pub fn set_keys(&mut self, keys: &[&str], value: impl Into<Value>) {
        json::set_keys(&mut self.merge, keys, value.into());
    }
    /// Removes the field at a dotted path (a null in the merge patch).
    pub fn unset(&mut self, path: &str) {
        self.set(path, Value::Null);
    }
    /// Deep-merges an object into the merge patch.
    pub fn merge(&mut self, fragment: &Map) {
        if !matches!(self.merge, Value::Object(_)) {
            self.merge = Value::object();
        }
        merge_into(self.merge.as_object_mut().unwrap(), fragment);
    }
    /// The merge patch so far (null when empty).
    pub fn merge_patch(&self) -> &Value {
        &self.merge
    }
    /// Appends an RFC 6902 "add" at a JSON pointer ("/spec/items/-").
    pub fn add(&mut self, pointer: &str, value: impl Into<Value>) {
        self.op("add", pointer, "", Some(value.into()));
    }
    /// Appends an RFC 6902 "replace".
    pub fn replace(&mut self, pointer: &str, value: impl Into<Value>) {
        self.op("replace", pointer, "", Some(value.into()));
    }
    /// Appends an RFC 6902 "remove".
    pub fn remove(&mut self, pointer: &str) {
        self.op("remove", pointer, "", None);
    }
    /// Appends an RFC 6902 "test".
    pub fn test(&mut self, pointer: &str, value: impl Into<Value>) {
        self.op("test", pointer, "", Some(value.into()));
    }
    /// Appends an RFC 6902 "move".
    pub fn move_(&mut self, from: &str, pointer: &str) {
        self.op("move", pointer, from, None);
    }
    /// Appends an RFC 6902 "copy".
    pub fn copy(&mut self, from: &str, pointer: &str) {
        self.op("copy", pointer, from, None);
    }
    fn op(&mut self, op: &'static str, path: &str, from: &str, value: Option<Value>) {
        self.ops.push(Op { op, path: path.to_string(), from: from.to_string(), value });
    }
    /// Whether the patch changes nothing.
    pub fn is_empty(&self) -> bool {
        self.merge.as_object().map_or(true, |m| m.is_empty()) && self.ops.is_empty()
    }

    /// Writes the ABI's patch object ({"merge":...,"json":[...]}).
    pub(crate) fn write(&self, out: &mut String) -> Result<(), EncodeError> {
        out.push('{');
        let mut first = true;
        if self.merge.as_object().map_or(false, |m| !m.is_empty()) {
            out.push_str("\"merge\":");
            write_value(out, &self.merge)?;
            first = false;
        }
        if !self.ops.is_empty() {
            if !first {
                out.push(',');
            }
            out.push_str("\"json\":[");
            for (i, o) in self.ops.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str("{\"op\":");
                write_string(out, o.op);
                out.push_str(",\"path\":");
                write_string(out, &o.path);
                if !o.from.is_empty() {
                    out.push_str(",\"from\":");
                    write_string(out, &o.from);
                }
                if let Some(v) = &o.value {
                    out.push_str(",\"value\":");
                    write_value(out, v)?;
                }
                out.push('}');
            }
            out.push(']');
        }
        out.push('}');
        Ok(())
    }
}

fn merge_into(dst: &mut Map, src: &Map) {
    for (k, v) in src {
        match v {
            Value::Object(sub) => {
                let slot = dst.entry(k.clone()).or_insert_with(Value::object);
                if !matches!(slot, Value::Object(_)) {
                    *slot = Value::object();
                }
                merge_into(slot.as_object_mut().unwrap(), sub);
            }
            _ => {
                dst.insert(k.clone(), v.clone());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::obj;

    #[test]
    fn patch() {
        let mut p = Patch::default();
        assert!(p.is_empty());
        p.set("metadata.labels.handled", "yes");
        p.unset("spec.old");
        if let Value::Object(m) = obj! {"metadata" => obj!{"annotations" => obj!{"a" => "b"}}} {
            p.merge(&m);
        }
        p.add("/spec/items/-", "x");
        p.remove("/spec/gone");
        p.move_("/a", "/b");
        let mut s = String::new();
        p.write(&mut s).unwrap();
        assert_eq!(s, r#"{"merge":{"metadata":{"annotations":{"a":"b"},"labels":{"handled":"yes"}},"spec":{"old":null}},"json":[{"op":"add","path":"/spec/items/-","value":"x"},{"op":"remove","path":"/spec/gone"},{"op":"move","path":"/b","from":"/a"}]}"#);
    }
}
