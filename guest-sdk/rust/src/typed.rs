//! Typed access to objects, without dependencies: [`FromValue`] decodes a
//! [`Value`] into a Rust type (the Go SDK's `DecodeSpec`, `Decode[T]`),
//! and [`typed!`](crate::typed) declares a struct with its JSON names that
//! decodes from and encodes to a `Value`:
//!
//! ```ignore
//! kopf::typed! {
//!     /// The spec of a Database.
//!     #[derive(Clone, Debug, PartialEq)]
//!     pub struct DatabaseSpec {
//!         pub engine: String = "engine",
//!         pub replicas: Option<i64> = "replicas",
//!         pub storage_size: String = "storageSize",
//!     }
//! }
//!
//! fn create_fn(ctx: &mut Context) -> Result {
//!     let spec: DatabaseSpec = ctx.spec_as()?;   // a DecodeError is an arbitrary error
//!     ctx.patch().set("status.replicas", spec.replicas.unwrap_or(1));
//!     Ok(spec.into())                            // back to a Value
//! }
//! ```
//!
//! Numbers decode into any integer type when they are whole and in range,
//! and into f32/f64; an `Option` is None for a missing or null member;
//! unknown members are ignored, as Go's encoding/json does.

use std::collections::BTreeMap;
use std::fmt;

use crate::json::{Map, Value};

/// What did not decode, and where (a dotted path from the decoded value,
/// "" for the value itself).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DecodeError {
    pub path: String,
    pub message: String,
}

impl DecodeError {
    /// An error at the value itself.
    pub fn new(message: impl Into<String>) -> DecodeError {
        DecodeError { path: String::new(), message: message.into() }
    }
    /// The error, one level deeper: under `key`.
    pub fn within(mut self, key: &str) -> DecodeError {
        self.path = if self.path.is_empty() { key.to_string() } else { format!("{}.{}", key, self.path) };
        self
    }
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() {
            write!(f, "decode: {}", self.message)
        } else {
            write!(f, "decode {}: {}", self.path, self.message)
        }
    }
}

impl std::error::Error for DecodeError {}

/// A type that decodes from a JSON [`Value`].
pub trait FromValue: Sized {
    /// Decodes `v`.
    fn from_value(v: &Value) -> Result<Self, DecodeError>;
    /// The value of a missing member: an error, but None for an `Option`.
    fn from_missing() -> Result<Self, DecodeError> {
        Err(DecodeError::new("missing"))
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn want(what: &str, v: &Value) -> DecodeError {
    DecodeError::new(format!("want {}, got {}", what, kind(v)))
}

impl FromValue for Value {
    fn from_value(v: &Value) -> Result<Self, DecodeError> {
        Ok(v.clone())
    }
    fn from_missing() -> Result<Self, DecodeError> {
        Ok(Value::Null)
    }
}

impl FromValue for bool {
    fn from_value(v: &Value) -> Result<Self, DecodeError> {
        v.as_bool().ok_or_else(|| want("a boolean", v))
    }
}

impl FromValue for String {
    fn from_value(v: &Value) -> Result<Self, DecodeError> {
        v.as_str().map(String::from).ok_or_else(|| want("a string", v))
    }
}

macro_rules! from_value_int {
    ($($t:ty),*) => {$(
        impl FromValue for $t {
            fn from_value(v: &Value) -> Result<Self, DecodeError> {
                let n = v.as_f64().ok_or_else(|| want("an integer", v))?;
                if n.fract() != 0.0 || n < <$t>::MIN as f64 || n > <$t>::MAX as f64 {
                    return Err(DecodeError::new(format!("{} is not a {}", n, stringify!($t))));
                }
                Ok(n as $t)
            }
        }
    )*};
}
from_value_int!(i8, i16, i32, i64, isize, u8, u16, u32, u64, usize);

impl FromValue for f64 {
    fn from_value(v: &Value) -> Result<Self, DecodeError> {
        v.as_f64().ok_or_else(|| want("a number", v))
    }
}

impl FromValue for f32 {
    fn from_value(v: &Value) -> Result<Self, DecodeError> {
        v.as_f64().map(|n| n as f32).ok_or_else(|| want("a number", v))
    }
}

impl<T: FromValue> FromValue for Option<T> {
    fn from_value(v: &Value) -> Result<Self, DecodeError> {
        if v.is_null() {
            return Ok(None);
        }
        T::from_value(v).map(Some)
    }
    fn from_missing() -> Result<Self, DecodeError> {
        Ok(None)
    }
}

impl<T: FromValue> FromValue for Vec<T> {
    fn from_value(v: &Value) -> Result<Self, DecodeError> {
        let items = v.as_array().ok_or_else(|| want("an array", v))?;
        items.iter().enumerate().map(|(i, x)| T::from_value(x).map_err(|e| e.within(&i.to_string()))).collect()
    }
}

impl<T: FromValue> FromValue for BTreeMap<String, T> {
    fn from_value(v: &Value) -> Result<Self, DecodeError> {
        let m: &Map = v.as_object().ok_or_else(|| want("an object", v))?;
        m.iter().map(|(k, x)| T::from_value(x).map(|t| (k.clone(), t)).map_err(|e| e.within(k))).collect()
    }
}

/// Decodes the member `key` of an object (a missing member as the type
/// says: an error, or None for an `Option`). The building block of
/// [`typed!`](crate::typed) and of hand-written [`FromValue`] impls.
pub fn member<T: FromValue>(obj: &Value, key: &str) -> Result<T, DecodeError> {
    match obj.get(key) {
        Some(v) => T::from_value(v),
        None => T::from_missing(),
    }
    .map_err(|e| e.within(key))
}

impl Value {
    /// Decodes the value into a Rust type ([`FromValue`]).
    pub fn decode<T: FromValue>(&self) -> Result<T, DecodeError> {
        T::from_value(self)
    }
}

impl<'h> crate::Context<'h> {
    /// The whole object decoded into `T` (the Go SDK's DecodeBody).
    pub fn body_as<T: FromValue>(&self) -> Result<T, DecodeError> {
        T::from_value(self.body())
    }
    /// The spec decoded into `T`: `let spec: MySpec = ctx.spec_as()?;`.
    pub fn spec_as<T: FromValue>(&self) -> Result<T, DecodeError> {
        T::from_value(self.spec()).map_err(|e| e.within("spec"))
    }
    /// The status decoded into `T`.
    pub fn status_as<T: FromValue>(&self) -> Result<T, DecodeError> {
        T::from_value(self.status()).map_err(|e| e.within("status"))
    }
    /// The handler's param decoded into `T`.
    pub fn param_as<T: FromValue>(&self) -> Result<T, DecodeError> {
        T::from_value(self.param()).map_err(|e| e.within("param"))
    }
}

impl<'c, 'h> crate::Client<'c, 'h> {
    /// Reads an object and decodes it into `T` (the Go SDK's GetInto).
    pub fn get_as<T: FromValue>(&self, name: &str) -> crate::Result<T> {
        Ok(T::from_value(&self.get(name)?)?)
    }
    /// Lists objects and decodes each into `T` (the Go SDK's ListInto).
    pub fn list_as<T: FromValue>(&self, label_selector: &str, field_selector: &str) -> crate::Result<Vec<T>> {
        let items = self.list(label_selector, field_selector)?;
        Ok(items.iter().enumerate().map(|(i, x)| T::from_value(x).map_err(|e| e.within(&format!("items.{}", i)))).collect::<Result<Vec<T>, DecodeError>>()?)
    }
}

/// Declares a struct whose fields are JSON members, with [`FromValue`]
/// (decode a `Value`) and `From<Struct> for Value` (encode; None members
/// are left out). Each field names its member: `name: Type = "jsonName"`.
/// Field types implement [`FromValue`] and `Into<Value>` (the SDK's do:
/// numbers, bool, String, Option, Vec, `Value`, and other `typed!` structs).
#[macro_export]
macro_rules! typed {
    (
        $(#[$meta:meta])*
        $vis:vis struct $name:ident {
            $( $(#[$fmeta:meta])* $fvis:vis $field:ident : $ty:ty = $key:literal ),* $(,)?
        }
    ) => {
        $(#[$meta])*
        $vis struct $name {
            $( $(#[$fmeta])* $fvis $field: $ty, )*
        }

        impl $crate::typed::FromValue for $name {
            fn from_value(v: &$crate::Value) -> ::std::result::Result<Self, $crate::typed::DecodeError> {
                if v.as_object().is_none() {
                    return Err($crate::typed::DecodeError::new(format!("want an object for {}, got {}", stringify!($name), v)));
                }
                Ok($name { $( $field: $crate::typed::member(v, $key)?, )* })
            }
        }

        impl ::std::convert::From<$name> for $crate::Value {
            fn from(s: $name) -> $crate::Value {
                let mut m = $crate::Map::new();
                $(
                    let v: $crate::Value = s.$field.into();
                    if !v.is_null() {
                        m.insert($key.to_string(), v);
                    }
                )*
                $crate::Value::Object(m)
            }
        }
    };
}
