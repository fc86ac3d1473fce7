//! JSON values, written to agree with Go's `encoding/json` byte for byte:
//! objects are sorted by key (as Go sorts map keys), numbers are `f64`
//! printed as Go prints a `float64` (`5`, `12.5`, `1e+21`, `1e-7`), and
//! strings are escaped as Go escapes them (`<`, `>`, `&`, U+2028 and
//! U+2029 as `\u....`). The parser is strict RFC 8259, as Go's decoder is:
//! the last of duplicate keys wins, and bad surrogates become U+FFFD.

use std::collections::BTreeMap;
use std::fmt;

/// A JSON object: keys in sorted order.
pub type Map = BTreeMap<String, Value>;

/// A JSON value. Numbers are `f64`, as in Go's `any`.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Null,
    Bool(bool),
    Number(f64),
    String(String),
    Array(Vec<Value>),
    Object(Map),
}

/// The shared null that look-ups of missing members return.
pub static NULL: Value = Value::Null;

impl Default for Value {
    fn default() -> Self {
        Value::Null
    }
}

/// A JSON text that could not be parsed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    /// The byte offset where parsing stopped.
    pub offset: usize,
    pub message: &'static str,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid JSON at byte {}: {}", self.offset, self.message)
    }
}

impl std::error::Error for ParseError {}

/// A value that JSON cannot hold (NaN or an infinity, as in Go).
#[derive(Clone, Debug, PartialEq)]
pub struct EncodeError(pub f64);

impl fmt::Display for EncodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Go: "json: unsupported value: NaN"
        let v = if self.0.is_nan() {
            "NaN".to_string()
        } else if self.0 > 0.0 {
            "+Inf".to_string()
        } else {
            "-Inf".to_string()
        };
        write!(f, "json: unsupported value: {}", v)
    }
}

impl std::error::Error for EncodeError {}

impl Value {
    /// Parses a JSON text.
    pub fn parse(text: &str) -> Result<Value, ParseError> {
        Value::parse_bytes(text.as_bytes())
    }

    /// Parses JSON bytes.
    pub fn parse_bytes(bytes: &[u8]) -> Result<Value, ParseError> {
        let mut p = Parser { b: bytes, i: 0, depth: 0 };
        p.ws();
        let v = p.value()?;
        p.ws();
        if p.i != p.b.len() {
            return Err(p.err("data after the top-level value"));
        }
        Ok(v)
    }

    /// Encodes the value as compact JSON, as Go's json.Marshal does.
    pub fn to_json(&self) -> Result<String, EncodeError> {
        let mut out = String::new();
        write_value(&mut out, self)?;
        Ok(out)
    }

    /// A new empty object.
    pub fn object() -> Value {
        Value::Object(Map::new())
    }

    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Value::Number(n) => Some(*n),
            _ => None,
        }
    }

    /// The number as an integer, if it is one.
    pub fn as_i64(&self) -> Option<i64> {
        match self {
            Value::Number(n) if n.fract() == 0.0 && n.abs() < 9.3e18 => Some(*n as i64),
            _ => None,
        }
    }

    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Value::Bool(b) => Some(*b),
            _ => None,
        }
    }

    pub fn as_array(&self) -> Option<&Vec<Value>> {
        match self {
            Value::Array(a) => Some(a),
            _ => None,
        }
    }

    pub fn as_array_mut(&mut self) -> Option<&mut Vec<Value>> {
        match self {
            Value::Array(a) => Some(a),
            _ => None,
        }
    }

    pub fn as_object(&self) -> Option<&Map> {
        match self {
            Value::Object(m) => Some(m),
            _ => None,
        }
    }

    pub fn as_object_mut(&mut self) -> Option<&mut Map> {
        match self {
            Value::Object(m) => Some(m),
            _ => None,
        }
    }

    /// The member `key` of an object (None for other values).
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.as_object().and_then(|m| m.get(key))
    }

    /// The value at a dotted path ("spec.field"), as Kopf's field paths.
    pub fn path(&self, path: &str) -> Option<&Value> {
        let mut v = self;
        for key in split_path(path) {
            v = v.get(key)?;
        }
        Some(v)
    }

    /// The string at a dotted path, or "" (Go SDK's Object.String).
    pub fn str_at(&self, path: &str) -> &str {
        self.path(path).and_then(Value::as_str).unwrap_or("")
    }

    /// The object at `key`, made (replacing a non-object) if needed.
    pub fn entry_object(&mut self, key: &str) -> &mut Map {
        if !matches!(self, Value::Object(_)) {
            *self = Value::object();
        }
        let m = self.as_object_mut().unwrap();
        let slot = m.entry(key.to_string()).or_insert_with(Value::object);
        if !matches!(slot, Value::Object(_)) {
            *slot = Value::object();
        }
        slot.as_object_mut().unwrap()
    }

    /// Sets the member at a dotted path, making objects on the way.
    pub fn set_path(&mut self, path: &str, value: impl Into<Value>) {
        let keys: Vec<&str> = split_path(path).collect();
        set_keys(self, &keys, value.into());
    }
}

pub(crate) fn set_keys(root: &mut Value, keys: &[&str], value: Value) {
    if keys.is_empty() {
        return;
    }
    let mut cur = root;
    for k in &keys[..keys.len() - 1] {
        if !matches!(cur, Value::Object(_)) {
            *cur = Value::object();
        }
        let slot = cur.as_object_mut().unwrap().entry(k.to_string()).or_insert_with(Value::object);
        if !matches!(slot, Value::Object(_)) {
            *slot = Value::object();
        }
        cur = slot;
    }
    // cur is now the parent of the last key; entry_object made it an object.
    if !matches!(cur, Value::Object(_)) {
        *cur = Value::object();
    }
    cur.as_object_mut().unwrap().insert(keys[keys.len() - 1].to_string(), value);
}

/// Splits a dotted path ("spec.field") into keys.
pub fn split_path(path: &str) -> impl Iterator<Item = &str> {
    path.split('.').filter(|k| !k.is_empty())
}

impl std::ops::Index<&str> for Value {
    type Output = Value;
    /// The member `key`, or null.
    fn index(&self, key: &str) -> &Value {
        self.get(key).unwrap_or(&NULL)
    }
}

impl std::ops::Index<usize> for Value {
    type Output = Value;
    /// The element `i`, or null.
    fn index(&self, i: usize) -> &Value {
        self.as_array().and_then(|a| a.get(i)).unwrap_or(&NULL)
    }
}

impl fmt::Display for Value {
    /// Compact JSON (NaN and infinities as null).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.to_json() {
            Ok(s) => f.write_str(&s),
            Err(_) => f.write_str("null"),
        }
    }
}

macro_rules! from_number {
    ($($t:ty),*) => {$(
        impl From<$t> for Value {
            fn from(n: $t) -> Value { Value::Number(n as f64) }
        }
    )*};
}
from_number!(f64, f32, i8, i16, i32, i64, isize, u8, u16, u32, u64, usize);

impl From<bool> for Value {
    fn from(b: bool) -> Value {
        Value::Bool(b)
    }
}
impl From<&str> for Value {
    fn from(s: &str) -> Value {
        Value::String(s.to_string())
    }
}
impl From<String> for Value {
    fn from(s: String) -> Value {
        Value::String(s)
    }
}
impl From<&String> for Value {
    fn from(s: &String) -> Value {
        Value::String(s.clone())
    }
}
impl From<&Value> for Value {
    fn from(v: &Value) -> Value {
        v.clone()
    }
}
impl From<()> for Value {
    fn from(_: ()) -> Value {
        Value::Null
    }
}
impl From<Map> for Value {
    fn from(m: Map) -> Value {
        Value::Object(m)
    }
}
impl<T: Into<Value>> From<Vec<T>> for Value {
    fn from(v: Vec<T>) -> Value {
        Value::Array(v.into_iter().map(Into::into).collect())
    }
}
impl<T: Into<Value>> From<Option<T>> for Value {
    fn from(v: Option<T>) -> Value {
        v.map_or(Value::Null, Into::into)
    }
}
impl From<BTreeMap<String, String>> for Value {
    fn from(m: BTreeMap<String, String>) -> Value {
        Value::Object(m.into_iter().map(|(k, v)| (k, Value::String(v))).collect())
    }
}

/// Builds a JSON object: `obj!{"message" => "hello", "count" => 3}`.
#[macro_export]
macro_rules! obj {
    () => { $crate::Value::Object($crate::Map::new()) };
    ($($k:expr => $v:expr),+ $(,)?) => {{
        let mut m = $crate::Map::new();
        $( m.insert(::std::string::String::from($k), $crate::Value::from($v)); )+
        $crate::Value::Object(m)
    }};
}

/// Builds a JSON array: `arr!["a", 1, true]`.
#[macro_export]
macro_rules! arr {
    ($($v:expr),* $(,)?) => { $crate::Value::Array(vec![$($crate::Value::from($v)),*]) };
}

// ---- encoding ----

pub(crate) fn write_value(out: &mut String, v: &Value) -> Result<(), EncodeError> {
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(true) => out.push_str("true"),
        Value::Bool(false) => out.push_str("false"),
        Value::Number(n) => write_number(out, *n)?,
        Value::String(s) => write_string(out, s),
        Value::Array(a) => {
            out.push('[');
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_value(out, x)?;
            }
            out.push(']');
        }
        Value::Object(m) => write_map(out, m)?,
    }
    Ok(())
}

/// The compact JSON of an object (Value::to_json without a copy).
pub(crate) fn map_json(m: &Map) -> Result<String, EncodeError> {
    let mut out = String::new();
    write_map(&mut out, m)?;
    Ok(out)
}

fn write_map(out: &mut String, m: &Map) -> Result<(), EncodeError> {
    out.push('{');
    for (i, (k, x)) in m.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        write_string(out, k);
        out.push(':');
        write_value(out, x)?;
    }
    out.push('}');
    Ok(())
}

/// Writes a float64 as Go's encoding/json does: the shortest text that
/// reads back the same, in 'f' form unless the magnitude is below 1e-6 or
/// at least 1e21, then in 'e' form with a sign and at least one exponent
/// digit ("1e+21", "1e-7").
pub fn write_number(out: &mut String, n: f64) -> Result<(), EncodeError> {
    use std::fmt::Write;
    if !n.is_finite() {
        return Err(EncodeError(n));
    }
    let abs = n.abs();
    if abs != 0.0 && (abs < 1e-6 || abs >= 1e21) {
        let s = format!("{:e}", n); // shortest digits: "1.5e-7", "1e21"
        let (mant, exp) = s.split_once('e').unwrap();
        out.push_str(mant);
        out.push('e');
        if let Some(digits) = exp.strip_prefix('-') {
            out.push('-');
            out.push_str(digits);
        } else {
            out.push('+');
            if exp.len() < 2 {
                out.push('0');
            }
            out.push_str(exp);
        }
    } else {
        let _ = write!(out, "{}", n);
    }
    Ok(())
}

/// Writes a JSON string as Go's encoding/json does (HTML-safe).
pub fn write_string(out: &mut String, s: &str) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.push('"');
    let bytes = s.as_bytes();
    let mut start = 0;
    for (i, c) in s.char_indices() {
        let esc: Option<&str> = match c {
            '"' => Some("\\\""),
            '\\' => Some("\\\\"),
            '\n' => Some("\\n"),
            '\r' => Some("\\r"),
            '\t' => Some("\\t"),
            '\u{8}' => Some("\\b"),
            '\u{c}' => Some("\\f"),
            _ => None,
        };
        let needs = esc.is_some() || (c as u32) < 0x20 || c == '<' || c == '>' || c == '&' || c == '\u{2028}' || c == '\u{2029}';
        if !needs {
            continue;
        }
        out.push_str(&s[start..i]);
        match esc {
            Some(e) => out.push_str(e),
            None => {
                let u = c as u32;
                out.push_str("\\u");
                for shift in [12, 8, 4, 0] {
                    out.push(HEX[((u >> shift) & 0xf) as usize] as char);
                }
            }
        }
        start = i + c.len_utf8();
    }
    out.push_str(std::str::from_utf8(&bytes[start..]).unwrap());
    out.push('"');
}

/// Indents compact JSON as Go's json.Indent(dst, src, "", "  ") does
/// (empty objects and arrays stay "{}" and "[]").
pub fn indent(compact: &str) -> String {
    let b = compact.as_bytes();
    let mut out = String::with_capacity(b.len() * 2);
    let mut depth = 0usize;
    let mut in_str = false;
    let mut i = 0;
    let newline = |out: &mut String, depth: usize| {
        out.push('\n');
        for _ in 0..depth {
            out.push_str("  ");
        }
    };
    let start_of_char = |s: &str, i: usize| s.is_char_boundary(i);
    while i < b.len() {
        let c = b[i];
        if in_str {
            if c == b'\\' {
                out.push_str(&compact[i..i + 2]);
                i += 2;
                continue;
            }
            if c == b'"' {
                in_str = false;
            }
            // copy one whole character
            let mut j = i + 1;
            while j < b.len() && !start_of_char(compact, j) {
                j += 1;
            }
            out.push_str(&compact[i..j]);
            i = j;
            continue;
        }
        match c {
            b'"' => {
                in_str = true;
                out.push('"');
            }
            b'{' | b'[' => {
                let close = if c == b'{' { b'}' } else { b']' };
                if i + 1 < b.len() && b[i + 1] == close {
                    out.push(c as char);
                    out.push(close as char);
                    i += 2;
                    continue;
                }
                out.push(c as char);
                depth += 1;
                newline(&mut out, depth);
            }
            b'}' | b']' => {
                depth = depth.saturating_sub(1);
                newline(&mut out, depth);
                out.push(c as char);
            }
            b',' => {
                out.push(',');
                newline(&mut out, depth);
            }
            b':' => out.push_str(": "),
            b' ' | b'\t' | b'\n' | b'\r' => {}
            _ => out.push(c as char),
        }
        i += 1;
    }
    out
}

// ---- parsing ----

/// Whether none of eight bytes is '"', '\\' or below 0x20 (the bytes a
/// string's plain run stops at).
#[inline]
fn plain8(w: u64) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let zero = |v: u64| v.wrapping_sub(ONES) & !v & HIGH;
    let below_0x20 = w.wrapping_sub(ONES * 0x20) & !w & HIGH;
    (zero(w ^ (ONES * b'"' as u64)) | zero(w ^ (ONES * b'\\' as u64)) | below_0x20) == 0
}

const MAX_DEPTH: usize = 2000;

struct Parser<'a> {
    b: &'a [u8],
    i: usize,
    depth: usize,
}

impl<'a> Parser<'a> {
    fn err(&self, message: &'static str) -> ParseError {
        ParseError { offset: self.i, message }
    }

    fn ws(&mut self) {
        while self.i < self.b.len() && matches!(self.b[self.i], b' ' | b'\t' | b'\n' | b'\r') {
            self.i += 1;
        }
    }

    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    fn literal(&mut self, word: &'static [u8], v: Value) -> Result<Value, ParseError> {
        if self.b[self.i..].starts_with(word) {
            self.i += word.len();
            Ok(v)
        } else {
            Err(self.err("invalid literal"))
        }
    }

    fn value(&mut self) -> Result<Value, ParseError> {
        match self.peek() {
            None => Err(self.err("unexpected end of input")),
            Some(b'n') => self.literal(b"null", Value::Null),
            Some(b't') => self.literal(b"true", Value::Bool(true)),
            Some(b'f') => self.literal(b"false", Value::Bool(false)),
            Some(b'"') => Ok(Value::String(self.string()?)),
            Some(b'[') => self.array(),
            Some(b'{') => self.object(),
            Some(b'-') | Some(b'0'..=b'9') => self.number(),
            Some(_) => Err(self.err("unexpected character")),
        }
    }

    fn enter(&mut self) -> Result<(), ParseError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(self.err("nested too deeply"));
        }
        Ok(())
    }

    fn array(&mut self) -> Result<Value, ParseError> {
        self.enter()?;
        self.i += 1;
        let mut out = Vec::new();
        self.ws();
        if self.peek() == Some(b']') {
            self.i += 1;
            self.depth -= 1;
            return Ok(Value::Array(out));
        }
        loop {
            self.ws();
            out.push(self.value()?);
            self.ws();
            match self.peek() {
                Some(b',') => self.i += 1,
                Some(b']') => {
                    self.i += 1;
                    self.depth -= 1;
                    return Ok(Value::Array(out));
                }
                _ => return Err(self.err("expected ',' or ']'")),
            }
        }
    }

    fn object(&mut self) -> Result<Value, ParseError> {
        self.enter()?;
        self.i += 1;
        let mut out = Map::new();
        self.ws();
        if self.peek() == Some(b'}') {
            self.i += 1;
            self.depth -= 1;
            return Ok(Value::Object(out));
        }
        loop {
            self.ws();
            if self.peek() != Some(b'"') {
                return Err(self.err("expected a string key"));
            }
            let k = self.string()?;
            self.ws();
            if self.peek() != Some(b':') {
                return Err(self.err("expected ':'"));
            }
            self.i += 1;
            self.ws();
            let v = self.value()?;
            out.insert(k, v);
            self.ws();
            match self.peek() {
                Some(b',') => self.i += 1,
                Some(b'}') => {
                    self.i += 1;
                    self.depth -= 1;
                    return Ok(Value::Object(out));
                }
                _ => return Err(self.err("expected ',' or '}'")),
            }
        }
    }

    fn number(&mut self) -> Result<Value, ParseError> {
        let start = self.i;
        if self.peek() == Some(b'-') {
            self.i += 1;
        }
        match self.peek() {
            Some(b'0') => self.i += 1,
            Some(b'1'..=b'9') => self.digits(),
            _ => return Err(self.err("invalid number")),
        }
        if self.peek() == Some(b'.') {
            self.i += 1;
            if !matches!(self.peek(), Some(b'0'..=b'9')) {
                return Err(self.err("invalid number"));
            }
            self.digits();
        }
        if matches!(self.peek(), Some(b'e') | Some(b'E')) {
            self.i += 1;
            if matches!(self.peek(), Some(b'+') | Some(b'-')) {
                self.i += 1;
            }
            if !matches!(self.peek(), Some(b'0'..=b'9')) {
                return Err(self.err("invalid number"));
            }
            self.digits();
        }
        let text = std::str::from_utf8(&self.b[start..self.i]).unwrap();
        match text.parse::<f64>() {
            Ok(n) if n.is_finite() => Ok(Value::Number(n)),
            _ => Err(ParseError { offset: start, message: "number out of range" }),
        }
    }

    fn digits(&mut self) {
        while matches!(self.peek(), Some(b'0'..=b'9')) {
            self.i += 1;
        }
    }

    fn hex4(&mut self) -> Result<u32, ParseError> {
        if self.i + 4 > self.b.len() {
            return Err(self.err("short \\u escape"));
        }
        let mut v = 0u32;
        for k in 0..4 {
            let d = match self.b[self.i + k] {
                c @ b'0'..=b'9' => c - b'0',
                c @ b'a'..=b'f' => c - b'a' + 10,
                c @ b'A'..=b'F' => c - b'A' + 10,
                _ => return Err(self.err("invalid \\u escape")),
            };
            v = v * 16 + d as u32;
        }
        self.i += 4;
        Ok(v)
    }

    fn string(&mut self) -> Result<String, ParseError> {
        let mut out: Vec<u8> = Vec::new();
        self.string_into(Some(&mut out))?;
        Ok(match String::from_utf8(out) {
            Ok(s) => s,
            Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
        })
    }

    /// Reads a string (at its opening quote), validating it as `string`
    /// does; its decoded bytes go to `out` when there is one.
    fn string_into(&mut self, mut out: Option<&mut Vec<u8>>) -> Result<(), ParseError> {
        self.i += 1; // opening quote
        loop {
            let start = self.i;
            // eight bytes at a time while none of them ends the run
            // ('"', '\\' or a control character)
            while self.i + 8 <= self.b.len() {
                let mut w = [0u8; 8];
                w.copy_from_slice(&self.b[self.i..self.i + 8]);
                if !plain8(u64::from_le_bytes(w)) {
                    break;
                }
                self.i += 8;
            }
            while self.i < self.b.len() {
                let c = self.b[self.i];
                if c == b'"' || c == b'\\' || c < 0x20 {
                    break;
                }
                self.i += 1;
            }
            if let Some(o) = out.as_deref_mut() {
                o.extend_from_slice(&self.b[start..self.i]);
            }
            match self.peek() {
                None => return Err(self.err("unterminated string")),
                Some(b'"') => {
                    self.i += 1;
                    return Ok(());
                }
                Some(b'\\') => {
                    self.i += 1;
                    let c = self.peek().ok_or_else(|| self.err("unterminated string"))?;
                    self.i += 1;
                    let ch = match c {
                        b'"' => '"',
                        b'\\' => '\\',
                        b'/' => '/',
                        b'b' => '\u{8}',
                        b'f' => '\u{c}',
                        b'n' => '\n',
                        b'r' => '\r',
                        b't' => '\t',
                        b'u' => {
                            let u = self.hex4()?;
                            if (0xD800..0xDC00).contains(&u) {
                                // a high surrogate: a low one must follow
                                if self.b[self.i..].starts_with(b"\\u") {
                                    let save = self.i;
                                    self.i += 2;
                                    let lo = self.hex4()?;
                                    if (0xDC00..0xE000).contains(&lo) {
                                        char::from_u32(0x10000 + ((u - 0xD800) << 10) + (lo - 0xDC00)).unwrap_or('\u{FFFD}')
                                    } else {
                                        self.i = save;
                                        '\u{FFFD}'
                                    }
                                } else {
                                    '\u{FFFD}'
                                }
                            } else {
                                char::from_u32(u).unwrap_or('\u{FFFD}')
                            }
                        }
                        _ => {
                            self.i -= 1;
                            return Err(self.err("invalid escape"));
                        }
                    };
                    if let Some(o) = out.as_deref_mut() {
                        let mut buf = [0u8; 4];
                        o.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
                    }
                }
                Some(_) => return Err(self.err("control character in string")),
            }
        }
    }

    /// Steps over a value, checking it exactly as `value` would and
    /// failing at the same byte, without building it.
    fn skip(&mut self) -> Result<(), ParseError> {
        match self.peek() {
            None => Err(self.err("unexpected end of input")),
            Some(b'n') => self.literal(b"null", Value::Null).map(drop),
            Some(b't') => self.literal(b"true", Value::Null).map(drop),
            Some(b'f') => self.literal(b"false", Value::Null).map(drop),
            Some(b'"') => self.string_into(None),
            Some(b'[') => {
                self.enter()?;
                self.i += 1;
                self.ws();
                if self.peek() == Some(b']') {
                    self.i += 1;
                    self.depth -= 1;
                    return Ok(());
                }
                loop {
                    self.ws();
                    self.skip()?;
                    self.ws();
                    match self.peek() {
                        Some(b',') => self.i += 1,
                        Some(b']') => {
                            self.i += 1;
                            self.depth -= 1;
                            return Ok(());
                        }
                        _ => return Err(self.err("expected ',' or ']'")),
                    }
                }
            }
            Some(b'{') => {
                self.enter()?;
                self.i += 1;
                self.ws();
                if self.peek() == Some(b'}') {
                    self.i += 1;
                    self.depth -= 1;
                    return Ok(());
                }
                loop {
                    self.member_key()?;
                    self.skip()?;
                    self.ws();
                    match self.peek() {
                        Some(b',') => self.i += 1,
                        Some(b'}') => {
                            self.i += 1;
                            self.depth -= 1;
                            return Ok(());
                        }
                        _ => return Err(self.err("expected ',' or '}'")),
                    }
                }
            }
            Some(b'-') | Some(b'0'..=b'9') => self.number().map(drop),
            Some(_) => Err(self.err("unexpected character")),
        }
    }

    /// Steps over an object member's key and its colon (and the space
    /// after it); returns the key's raw bytes between the quotes.
    fn member_key(&mut self) -> Result<(usize, usize), ParseError> {
        self.ws();
        if self.peek() != Some(b'"') {
            return Err(self.err("expected a string key"));
        }
        let start = self.i + 1;
        self.string_into(None)?;
        let end = self.i - 1;
        self.ws();
        if self.peek() != Some(b':') {
            return Err(self.err("expected ':'"));
        }
        self.i += 1;
        self.ws();
        Ok((start, end))
    }
}

/// Reads a JSON text whose top level should be an object without building
/// its members: `f` gets each member's key and the byte range of its value
/// in `bytes` (parse it with [`Value::parse_bytes`] when needed). The whole
/// text is checked as [`Value::parse_bytes`] checks it, with the same
/// errors. Returns Ok(false) for valid JSON that is not an object.
pub(crate) fn scan_object(bytes: &[u8], mut f: impl FnMut(&str, std::ops::Range<usize>)) -> Result<bool, ParseError> {
    let mut p = Parser { b: bytes, i: 0, depth: 0 };
    p.ws();
    if p.peek() != Some(b'{') {
        Value::parse_bytes(bytes)?;
        return Ok(false);
    }
    p.enter()?;
    p.i += 1;
    p.ws();
    if p.peek() == Some(b'}') {
        p.i += 1;
    } else {
        loop {
            let (ks, ke) = p.member_key()?;
            let start = p.i;
            p.skip()?;
            let raw = &bytes[ks..ke];
            match std::str::from_utf8(raw) {
                Ok(k) if !raw.contains(&b'\\') => f(k, start..p.i),
                _ => {
                    let k = Parser { b: bytes, i: ks - 1, depth: 0 }.string()?;
                    f(&k, start..p.i)
                }
            }
            p.ws();
            match p.peek() {
                Some(b',') => p.i += 1,
                Some(b'}') => {
                    p.i += 1;
                    break;
                }
                _ => return Err(p.err("expected ',' or '}'")),
            }
        }
    }
    p.ws();
    if p.i != p.b.len() {
        return Err(p.err("data after the top-level value"));
    }
    Ok(true)
}

/// The string of a JSON value's bytes ("" when it is not a string),
/// without copying through a parser when it has no escapes.
pub(crate) fn raw_str(raw: &[u8]) -> String {
    if raw.len() >= 2 && raw[0] == b'"' && !raw.contains(&b'\\') {
        if let Ok(s) = std::str::from_utf8(&raw[1..raw.len() - 1]) {
            return s.to_string();
        }
    }
    match Value::parse_bytes(raw) {
        Ok(Value::String(s)) => s,
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round(s: &str) -> String {
        Value::parse(s).unwrap().to_json().unwrap()
    }

    #[test]
    fn numbers_as_go() {
        for (n, want) in [
            (5.0, "5"),
            (12.5, "12.5"),
            (1e21, "1e+21"),
            (1e20, "100000000000000000000"),
            (1e-6, "0.000001"),
            (1e-7, "1e-7"),
            (1.5e-7, "1.5e-7"),
            (123456789012345678.0, "123456789012345680"),
            (1e300, "1e+300"),
            (-2.5e-10, "-2.5e-10"),
            (0.1, "0.1"),
            (0.0, "0"),
        ] {
            let mut s = String::new();
            write_number(&mut s, n).unwrap();
            assert_eq!(s, want, "{}", n);
        }
        assert!(Value::Number(f64::NAN).to_json().is_err());
    }

    #[test]
    fn strings_as_go() {
        let v = Value::from("a\u{8}\u{c}\n\u{1}<>&\u{2028}\u{2029}\u{7f} é\"\\/");
        assert_eq!(v.to_json().unwrap(), concat!(r#""a\b\f\n\u0001\u003c\u003e\u0026\u2028\u2029"#, "\u{7f}", r#" é\"\\/""#));
    }

    #[test]
    fn parse_and_sort() {
        assert_eq!(round(r#" {"b":1, "a":[true,false,null,"x\u00e9\ud83d\ude00"], "a":2} "#), r#"{"a":2,"b":1}"#);
        assert_eq!(round(r#""\ud800x""#), "\"\u{FFFD}x\"");
        for bad in ["", "[1,]", "{\"a\"1}", "01", "1.", "-", "tru", "\"\t\"", "[1] x", "\"\\x\"", "{,}", "1e", "1e999"] {
            assert!(Value::parse(bad).is_err(), "{:?} parsed", bad);
        }
        let deep = "[".repeat(MAX_DEPTH + 1) + &"]".repeat(MAX_DEPTH + 1);
        assert!(Value::parse(&deep).is_err());
    }

    #[test]
    fn paths_and_macros() {
        let mut v = obj! {"spec" => obj!{"field" => "x"}, "n" => 3};
        assert_eq!(v.str_at("spec.field"), "x");
        assert_eq!(v["spec"]["field"], Value::from("x"));
        assert_eq!(v["missing"]["deeper"], Value::Null);
        v.set_path("metadata.labels.a", "b");
        assert_eq!(v.to_json().unwrap(), r#"{"metadata":{"labels":{"a":"b"}},"n":3,"spec":{"field":"x"}}"#);
        assert_eq!(arr![1, "a"].to_json().unwrap(), r#"[1,"a"]"#);
    }

    /// scan_object checks a text exactly as parse_bytes does (the same
    /// error at the same byte), and finds the members parse_bytes keeps.
    #[test]
    fn scan_agrees_with_parse() {
        let base = br#" {"call":"handle","handler":"h\u00e9","body":{"a":[1,2.5e3,-0,true,null,"x\"y\ud83d\ude00"],"b":{}},"k\u0065y":"v","retry":2,"retry":3,"e":[]} "#;
        let mut texts: Vec<Vec<u8>> = vec![base.to_vec(), b"{}".to_vec(), b" [1] ".to_vec(), b"3".to_vec()];
        let mut r: u64 = 0x9e3779b97f4a7c15;
        let mut next = || {
            r ^= r << 13;
            r ^= r >> 7;
            r ^= r << 17;
            r
        };
        const BYTES: &[u8] = b"{}[]\",: \t\\u0aZe-+.9ntfl\xff";
        for _ in 0..20000 {
            let mut t = base.to_vec();
            for _ in 0..1 + next() % 3 {
                let at = (next() % t.len() as u64) as usize;
                match next() % 3 {
                    0 => t[at] = BYTES[(next() % BYTES.len() as u64) as usize],
                    1 => drop(t.remove(at)),
                    _ => t.insert(at, BYTES[(next() % BYTES.len() as u64) as usize]),
                }
            }
            texts.push(t);
        }
        let mut valid = 0;
        for t in &texts {
            let mut members = Map::new();
            let scanned = scan_object(t, |k, at| {
                members.insert(k.to_string(), Value::parse_bytes(&t[at]).expect("a member's bytes parse"));
            });
            match (Value::parse_bytes(t), scanned) {
                (Ok(Value::Object(m)), Ok(true)) => {
                    assert_eq!(m, members, "{}", String::from_utf8_lossy(t));
                    valid += 1;
                }
                (Ok(_), Ok(false)) => {}
                (Err(a), Err(b)) => assert_eq!(a, b, "{}", String::from_utf8_lossy(t)),
                (a, b) => panic!("{}: parse {:?}, scan {:?}", String::from_utf8_lossy(t), a, b),
            }
        }
        assert!(valid > 100, "{} valid texts", valid);
        assert_eq!(raw_str(br#""a\u0041""#), "aA");
        assert_eq!(raw_str(b"\"plain\""), "plain");
        assert_eq!(raw_str(b"12"), "");
    }

    #[test]
    fn plain_runs() {
        for fill in [b'a', 0x7f, 0x80, 0xff, b' ', b'!', b'#', b'[', b']'] {
            for at in 0..8 {
                for c in 0..=255u8 {
                    let mut w = [fill; 8];
                    w[at] = c;
                    let want = w.iter().all(|&b| b != b'"' && b != b'\\' && b >= 0x20);
                    assert_eq!(plain8(u64::from_le_bytes(w)), want, "{:?}", w);
                }
            }
        }
        let long = format!("\"{}\\n{}\u{1}\"", "é".repeat(9), "x".repeat(17));
        assert!(Value::parse(&long).is_err());
        assert_eq!(Value::parse(&long[..long.len() - 2].replace('\u{1}', "")).ok(), None);
        assert_eq!(round(&format!("\"{}\\\"{}\"", "a".repeat(11), "b".repeat(13))), format!("\"{}\\\"{}\"", "a".repeat(11), "b".repeat(13)));
    }

    #[test]
    fn indent_as_go() {
        assert_eq!(indent(r#"{"a":[],"b":{},"c":[1,{"d":"x,{y}:"}]}"#), "{\n  \"a\": [],\n  \"b\": {},\n  \"c\": [\n    1,\n    {\n      \"d\": \"x,{y}:\"\n    }\n  ]\n}");
    }
}
