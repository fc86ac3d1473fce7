//! The SDK's own JSON against serde_json (the library it stands in for):
//! random values encode to text that serde_json reads back equal, and
//! random (often broken) texts are accepted or refused by both alike.

use kopf::json::{Map, Value};

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

const CHARS: &[char] = &['a', 'Z', '0', ' ', '"', '\\', '/', '\n', '\t', '\u{1}', '\u{1f}', '<', '>', '&', 'é', '€', '😀', '\u{2028}', '\u{2029}', '\u{7f}', '\u{fffd}'];

fn random_string(r: &mut Rng) -> String {
    (0..r.below(8)).map(|_| CHARS[r.below(CHARS.len() as u64) as usize]).collect()
}

fn random_number(r: &mut Rng) -> f64 {
    match r.below(5) {
        0 => r.below(1000) as f64,
        1 => -(r.below(1 << 53) as f64),
        2 => f64::from_bits(r.next()) % 1e30,
        3 => (r.below(1_000_000) as f64) * 10f64.powi(r.below(60) as i32 - 30),
        _ => (r.next() as f64) / 3.0,
    }
}

fn random_value(r: &mut Rng, depth: u32) -> Value {
    match r.below(if depth > 4 { 4 } else { 6 }) {
        0 => Value::Null,
        1 => Value::Bool(r.below(2) == 0),
        2 => {
            let n = random_number(r);
            Value::Number(if n.is_finite() { n } else { 0.0 })
        }
        3 => Value::String(random_string(r)),
        4 => Value::Array((0..r.below(4)).map(|_| random_value(r, depth + 1)).collect()),
        _ => Value::Object((0..r.below(4)).map(|_| (random_string(r), random_value(r, depth + 1))).collect::<Map>()),
    }
}

fn from_serde(v: &serde_json::Value) -> Value {
    match v {
        serde_json::Value::Null => Value::Null,
        serde_json::Value::Bool(b) => Value::Bool(*b),
        serde_json::Value::Number(n) => Value::Number(n.as_f64().unwrap()),
        serde_json::Value::String(s) => Value::String(s.clone()),
        serde_json::Value::Array(a) => Value::Array(a.iter().map(from_serde).collect()),
        serde_json::Value::Object(m) => Value::Object(m.iter().map(|(k, v)| (k.clone(), from_serde(v))).collect()),
    }
}

/// Equal, numbers within a few ulps: serde_json (without its
/// float_roundtrip feature) may read the last digit differently, where
/// the SDK uses the standard library's correctly rounded parse.
fn close(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x == y || ((x - y).abs() <= x.abs().max(y.abs()) * 1e-15),
        (Value::Array(x), Value::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(a, b)| close(a, b)),
        (Value::Object(x), Value::Object(y)) => x.len() == y.len() && x.iter().zip(y).all(|((ka, a), (kb, b))| ka == kb && close(a, b)),
        _ => a == b,
    }
}

#[test]
fn encode_agrees_with_serde_json() {
    let mut r = Rng(0x9e3779b97f4a7c15);
    for _ in 0..20000 {
        let v = random_value(&mut r, 0);
        let text = v.to_json().unwrap();
        let back: serde_json::Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {}", e, text));
        assert!(close(&from_serde(&back), &v), "{}", text);
        assert_eq!(Value::parse(&text).unwrap(), v, "{}", text);
    }
}

#[test]
fn parse_agrees_with_serde_json() {
    let mut r = Rng(0x1234_5678_9abc_def1);
    let pieces = ["{", "}", "[", "]", ",", ":", "\"a\"", "\"\\u00e9\"", "\"\\ud83d\\ude00\"", "\"\\x\"", "1", "-0", "01", "1.5e3", "1e", ".5", "true", "nul", "null", " ", "\"", "\\", "\u{1}", "é"];
    for _ in 0..100000 {
        let text: String = (0..r.below(10)).map(|_| pieces[r.below(pieces.len() as u64) as usize]).collect();
        let ours = Value::parse(&text);
        let theirs = serde_json::from_str::<serde_json::Value>(&text);
        match (&ours, &theirs) {
            (Ok(a), Ok(b)) => assert!(close(a, &from_serde(b)), "{:?}", text),
            (Err(_), Err(_)) => {}
            _ => panic!("{:?}: ours {:?}, serde_json {:?}", text, ours, theirs.map(|_| ())),
        }
    }
}
