// JSON values, written to agree with Go's encoding/json byte for byte:
// objects are encoded with their keys sorted (as Go sorts map keys),
// numbers are f64 printed as Go prints a float64 (5, 12.5, 1e+21, 1e-7),
// strings are escaped as Go escapes them (<, >, &, U+2028 and U+2029 as
// \u....). The parser is strict RFC 8259, as Go's decoder is: the last of
// duplicate keys wins, and bad surrogates become U+FFFD.

export const enum Kind {
  Null = 0,
  Bool = 1,
  Number = 2,
  String = 3,
  Array = 4,
  Object = 5,
}

/** A JSON value. Missing members read as the shared null. */
export class Value {
  kind: Kind = Kind.Null;
  b: bool = false;
  n: f64 = 0;
  s: string = "";
  arr: Array<Value> = [];
  obj: Map<string, Value> = new Map<string, Value>();

  static null(): Value { return new Value(); }
  static bool(b: bool): Value { const v = new Value(); v.kind = Kind.Bool; v.b = b; return v; }
  static num(n: f64): Value { const v = new Value(); v.kind = Kind.Number; v.n = n; return v; }
  static str(s: string): Value { const v = new Value(); v.kind = Kind.String; v.s = s; return v; }
  static array(items: Array<Value> = []): Value { const v = new Value(); v.kind = Kind.Array; v.arr = items; return v; }
  static object(): Value { const v = new Value(); v.kind = Kind.Object; return v; }

  /** Parses JSON text; null and sets parseError when it is not JSON. */
  static parse(text: string): Value | null {
    const p = new Parser(text);
    p.ws();
    const v = p.value();
    if (v === null) return null;
    p.ws();
    if (p.i != text.length) { parseError = "data after the top-level value at " + p.i.toString(); return null; }
    return v;
  }

  get isNull(): bool { return this.kind == Kind.Null; }
  get isObject(): bool { return this.kind == Kind.Object; }

  /** The member key of an object, or null. */
  get(key: string): Value {
    if (this.kind == Kind.Object && this.obj.has(key)) return this.obj.get(key);
    return NULL;
  }
  has(key: string): bool { return this.kind == Kind.Object && this.obj.has(key); }
  /** Element i of an array, or null. */
  at(i: i32): Value {
    if (this.kind == Kind.Array && i >= 0 && i < this.arr.length) return this.arr[i];
    return NULL;
  }
  /** The value at a dotted path ("spec.field"), or null. */
  path(path: string): Value {
    let v: Value = this;
    const keys = path.split(".");
    for (let i = 0; i < keys.length; i++) {
      if (keys[i].length == 0) continue;
      v = v.get(keys[i]);
    }
    return v;
  }
  /** The string, or "". */
  get str(): string { return this.kind == Kind.String ? this.s : ""; }
  /** The string at a dotted path, or "". */
  strAt(path: string): string { return this.path(path).str; }
  /** The number at a dotted path, or 0. */
  numAt(path: string): f64 { return this.path(path).num; }
  /** The number at a dotted path as an integer (truncated), or 0. */
  intAt(path: string): i64 { const n = this.path(path).num; return isFinite(n) ? <i64>n : 0; }
  /** The bool at a dotted path, or false. */
  boolAt(path: string): bool { return this.path(path).bool; }
  /** The array's items at a dotted path, or an empty list. */
  listAt(path: string): Array<Value> { const v = this.path(path); return v.kind == Kind.Array ? v.arr : []; }
  /** Whether a dotted path names a member (null counts). */
  hasPath(path: string): bool {
    const keys = path.split(".");
    let v: Value = this;
    for (let i = 0; i < keys.length; i++) {
      if (keys[i].length == 0) continue;
      if (!v.has(keys[i])) return false;
      v = v.get(keys[i]);
    }
    return true;
  }
  /** The number, or 0. */
  get num(): f64 { return this.kind == Kind.Number ? this.n : 0; }
  /** The bool, or false. */
  get bool(): bool { return this.kind == Kind.Bool ? this.b : false; }
  get length(): i32 { return this.kind == Kind.Array ? this.arr.length : this.kind == Kind.Object ? this.obj.size : 0; }
  keys(): Array<string> { return this.kind == Kind.Object ? this.obj.keys() : []; }

  /** Sets member key (making this an object if it is not one); returns this. */
  set(key: string, v: Value): Value {
    if (this.kind != Kind.Object) { this.kind = Kind.Object; this.obj = new Map<string, Value>(); }
    this.obj.set(key, v);
    return this;
  }
  setStr(key: string, s: string): Value { return this.set(key, Value.str(s)); }
  setNum(key: string, n: f64): Value { return this.set(key, Value.num(n)); }
  setBool(key: string, b: bool): Value { return this.set(key, Value.bool(b)); }
  delete(key: string): void { if (this.kind == Kind.Object) this.obj.delete(key); }
  push(v: Value): Value {
    if (this.kind != Kind.Array) { this.kind = Kind.Array; this.arr = []; }
    this.arr.push(v);
    return this;
  }
  /** The object at key, made (replacing a non-object) if needed. */
  entryObject(key: string): Value {
    if (this.kind != Kind.Object) { this.kind = Kind.Object; this.obj = new Map<string, Value>(); }
    if (!this.obj.has(key) || this.obj.get(key).kind != Kind.Object) this.obj.set(key, Value.object());
    return this.obj.get(key);
  }
  /** Sets the member at a dotted path, making objects on the way. */
  setPath(path: string, v: Value): void {
    const keys = path.split(".").filter((k: string): bool => k.length > 0);
    setKeys(this, keys, v);
  }

  equals(o: Value): bool { return this.toJSON() == o.toJSON(); }
  clone(): Value {
    const t = this.toJSON();
    return Value.parse(t) as Value;
  }

  /** Compact JSON as Go's json.Marshal writes it (NaN and infinities: null, see encodeError). */
  toJSON(): string {
    const out = new Array<string>();
    write(out, this);
    return out.join("");
  }
  toString(): string { return this.toJSON(); }
}

/** The shared null of missing members: do not change it. */
export const NULL = new Value();

/** Why the last Value.parse returned null. */
export let parseError = "";
/** Set when an encoded number was NaN or infinite (as Go's json.Marshal fails). */
export let encodeError = "";

export function setKeys(root: Value, keys: Array<string>, v: Value): void {
  if (keys.length == 0) return;
  let cur = root;
  for (let i = 0; i < keys.length - 1; i++) cur = cur.entryObject(keys[i]);
  cur.set(keys[keys.length - 1], v);
}

/** Builds an object from alternating keys and values: obj(["a", Value.str("x")]) is awkward in AS; use Value.object().setStr(...) chains. */

// ---- encoding ----

export function write(out: Array<string>, v: Value): void {
  switch (v.kind) {
    case Kind.Null: out.push("null"); break;
    case Kind.Bool: out.push(v.b ? "true" : "false"); break;
    case Kind.Number: out.push(formatNumber(v.n)); break;
    case Kind.String: out.push(quote(v.s)); break;
    case Kind.Array: {
      out.push("[");
      for (let i = 0; i < v.arr.length; i++) {
        if (i > 0) out.push(",");
        write(out, v.arr[i]);
      }
      out.push("]");
      break;
    }
    default: {
      out.push("{");
      const keys = sortedKeys(v.obj);
      for (let i = 0; i < keys.length; i++) {
        if (i > 0) out.push(",");
        out.push(quote(keys[i]));
        out.push(":");
        write(out, v.obj.get(keys[i]));
      }
      out.push("}");
    }
  }
}

/** Keys in Go's order (bytewise UTF-8, which is code point order). */
export function sortedKeys(m: Map<string, Value>): Array<string> {
  const keys = m.keys();
  keys.sort((a: string, b: string): i32 => compareCodePoints(a, b));
  return keys;
}

function compareCodePoints(a: string, b: string): i32 {
  const n = a.length < b.length ? a.length : b.length;
  for (let i = 0; i < n; i++) {
    let x = a.charCodeAt(i), y = b.charCodeAt(i);
    if (x == y) continue;
    // surrogates (U+10000 and up) sort after every BMP code point
    if (x >= 0xd800 && x < 0xe000) x += 0x2000; else if (x >= 0xe000) x -= 0x800;
    if (y >= 0xd800 && y < 0xe000) y += 0x2000; else if (y >= 0xe000) y -= 0x800;
    return x - y;
  }
  return a.length - b.length;
}

/** A float64 as Go's encoding/json writes it. */
export function formatNumber(n: f64): string {
  if (!isFinite(n)) {
    encodeError = "json: unsupported value: " + (isNaN(n) ? "NaN" : n > 0 ? "+Inf" : "-Inf");
    return "null";
  }
  if (n == 0) return 1 / n < 0 ? "-0" : "0";
  const s = n.toString(); // shortest, "5.0", "1e+21", "1.5e-7"
  if (s.endsWith(".0")) return s.slice(0, s.length - 2);
  return s;
}

const HEX = "0123456789abcdef";

/** A JSON string as Go's encoding/json writes it (HTML-safe). */
export function quote(s: string): string {
  let needs = false;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || c == 0x22 || c == 0x5c || c == 0x3c || c == 0x3e || c == 0x26 || c == 0x2028 || c == 0x2029) { needs = true; break; }
  }
  if (!needs) return "\"" + s + "\"";
  const out = new Array<string>();
  out.push("\"");
  let start = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    let esc = "";
    if (c == 0x22) esc = "\\\"";
    else if (c == 0x5c) esc = "\\\\";
    else if (c == 0x0a) esc = "\\n";
    else if (c == 0x0d) esc = "\\r";
    else if (c == 0x09) esc = "\\t";
    else if (c == 0x08) esc = "\\b";
    else if (c == 0x0c) esc = "\\f";
    else if (c < 0x20 || c == 0x3c || c == 0x3e || c == 0x26 || c == 0x2028 || c == 0x2029) {
      esc = "\\u" + HEX.charAt((c >> 12) & 15) + HEX.charAt((c >> 8) & 15) + HEX.charAt((c >> 4) & 15) + HEX.charAt(c & 15);
    } else continue;
    out.push(s.substring(start, i));
    out.push(esc);
    start = i + 1;
  }
  out.push(s.substring(start));
  out.push("\"");
  return out.join("");
}

/** Indents compact JSON as Go's json.Indent(dst, src, "", "  ") does. */
export function indent(compact: string): string {
  const out = new Array<string>();
  let depth = 0;
  let inStr = false;
  const nl = (d: i32): string => "\n" + "  ".repeat(d);
  for (let i = 0; i < compact.length; i++) {
    const c = compact.charAt(i);
    if (inStr) {
      if (c == "\\") { out.push(compact.substr(i, 2)); i++; continue; }
      if (c == "\"") inStr = false;
      out.push(c);
      continue;
    }
    if (c == "\"") { inStr = true; out.push(c); }
    else if (c == "{" || c == "[") {
      const close = c == "{" ? "}" : "]";
      if (i + 1 < compact.length && compact.charAt(i + 1) == close) { out.push(c + close); i++; continue; }
      depth++;
      out.push(c + nl(depth));
    } else if (c == "}" || c == "]") { depth--; out.push(nl(depth) + c); }
    else if (c == ",") out.push("," + nl(depth));
    else if (c == ":") out.push(": ");
    else if (c == " " || c == "\n" || c == "\t" || c == "\r") continue;
    else out.push(c);
  }
  return out.join("");
}

// ---- parsing ----

const MAX_DEPTH = 1000;

class Parser {
  i: i32 = 0;
  depth: i32 = 0;
  constructor(public t: string) {}

  fail(msg: string): Value | null { parseError = msg + " at " + this.i.toString(); return null; }

  ws(): void {
    while (this.i < this.t.length) {
      const c = this.t.charCodeAt(this.i);
      if (c != 0x20 && c != 0x09 && c != 0x0a && c != 0x0d) break;
      this.i++;
    }
  }

  peek(): i32 { return this.i < this.t.length ? this.t.charCodeAt(this.i) : -1; }

  literal(word: string, v: Value): Value | null {
    if (this.t.substr(this.i, word.length) != word) return this.fail("invalid literal");
    this.i += word.length;
    return v;
  }

  value(): Value | null {
    const c = this.peek();
    if (c == -1) return this.fail("unexpected end of input");
    if (c == 0x6e) return this.literal("null", Value.null());
    if (c == 0x74) return this.literal("true", Value.bool(true));
    if (c == 0x66) return this.literal("false", Value.bool(false));
    if (c == 0x22) { const s = this.string(); return s === null ? null : Value.str(s); }
    if (c == 0x5b) return this.array();
    if (c == 0x7b) return this.object();
    if (c == 0x2d || (c >= 0x30 && c <= 0x39)) return this.number();
    return this.fail("unexpected character");
  }

  array(): Value | null {
    if (++this.depth > MAX_DEPTH) return this.fail("nested too deeply");
    this.i++;
    const out = Value.array();
    this.ws();
    if (this.peek() == 0x5d) { this.i++; this.depth--; return out; }
    while (true) {
      this.ws();
      const v = this.value();
      if (v === null) return null;
      out.arr.push(v);
      this.ws();
      const c = this.peek();
      if (c == 0x2c) { this.i++; continue; }
      if (c == 0x5d) { this.i++; this.depth--; return out; }
      return this.fail("expected ',' or ']'");
    }
  }

  object(): Value | null {
    if (++this.depth > MAX_DEPTH) return this.fail("nested too deeply");
    this.i++;
    const out = Value.object();
    this.ws();
    if (this.peek() == 0x7d) { this.i++; this.depth--; return out; }
    while (true) {
      this.ws();
      if (this.peek() != 0x22) return this.fail("expected a string key");
      const k = this.string();
      if (k === null) return null;
      this.ws();
      if (this.peek() != 0x3a) return this.fail("expected ':'");
      this.i++;
      this.ws();
      const v = this.value();
      if (v === null) return null;
      out.obj.set(k, v);
      this.ws();
      const c = this.peek();
      if (c == 0x2c) { this.i++; continue; }
      if (c == 0x7d) { this.i++; this.depth--; return out; }
      return this.fail("expected ',' or '}'");
    }
  }

  digits(): void {
    while (this.peek() >= 0x30 && this.peek() <= 0x39) this.i++;
  }

  number(): Value | null {
    const start = this.i;
    if (this.peek() == 0x2d) this.i++;
    const c = this.peek();
    if (c == 0x30) this.i++;
    else if (c >= 0x31 && c <= 0x39) this.digits();
    else return this.fail("invalid number");
    if (this.peek() == 0x2e) {
      this.i++;
      if (!(this.peek() >= 0x30 && this.peek() <= 0x39)) return this.fail("invalid number");
      this.digits();
    }
    if (this.peek() == 0x65 || this.peek() == 0x45) {
      this.i++;
      if (this.peek() == 0x2b || this.peek() == 0x2d) this.i++;
      if (!(this.peek() >= 0x30 && this.peek() <= 0x39)) return this.fail("invalid number");
      this.digits();
    }
    const n = parseFloat(this.t.substring(start, this.i));
    if (!isFinite(n)) return this.fail("number out of range");
    return Value.num(n);
  }

  hex4(): i32 {
    if (this.i + 4 > this.t.length) return -1;
    let v = 0;
    for (let k = 0; k < 4; k++) {
      const c = this.t.charCodeAt(this.i + k);
      let d = 0;
      if (c >= 0x30 && c <= 0x39) d = c - 0x30;
      else if (c >= 0x61 && c <= 0x66) d = c - 0x61 + 10;
      else if (c >= 0x41 && c <= 0x46) d = c - 0x41 + 10;
      else return -1;
      v = v * 16 + d;
    }
    this.i += 4;
    return v;
  }

  string(): string | null {
    this.i++;
    const out = new Array<string>();
    let start = this.i;
    while (true) {
      if (this.i >= this.t.length) { this.fail("unterminated string"); return null; }
      const c = this.t.charCodeAt(this.i);
      if (c == 0x22) {
        out.push(this.t.substring(start, this.i));
        this.i++;
        return out.join("");
      }
      if (c < 0x20) { this.fail("control character in string"); return null; }
      if (c != 0x5c) {
        // a lone surrogate in the text itself becomes U+FFFD, as Go's decoder does
        if (c >= 0xd800 && c < 0xdc00 && this.i + 1 < this.t.length) {
          const d = this.t.charCodeAt(this.i + 1);
          if (d >= 0xdc00 && d < 0xe000) { this.i += 2; continue; }
        }
        if (c >= 0xd800 && c < 0xe000) {
          out.push(this.t.substring(start, this.i));
          out.push("\uFFFD");
          this.i++;
          start = this.i;
          continue;
        }
        this.i++;
        continue;
      }
      out.push(this.t.substring(start, this.i));
      this.i++;
      const e = this.peek();
      this.i++;
      if (e == 0x22) out.push("\"");
      else if (e == 0x5c) out.push("\\");
      else if (e == 0x2f) out.push("/");
      else if (e == 0x62) out.push("\b");
      else if (e == 0x66) out.push("\f");
      else if (e == 0x6e) out.push("\n");
      else if (e == 0x72) out.push("\r");
      else if (e == 0x74) out.push("\t");
      else if (e == 0x75) {
        const u = this.hex4();
        if (u < 0) { this.fail("invalid \\u escape"); return null; }
        if (u >= 0xd800 && u < 0xdc00) {
          const save = this.i;
          let lo = -1;
          if (this.t.substr(this.i, 2) == "\\u") { this.i += 2; lo = this.hex4(); }
          if (lo >= 0xdc00 && lo < 0xe000) out.push(String.fromCharCode(u, lo));
          else { this.i = save; out.push("\uFFFD"); }
        } else if (u >= 0xdc00 && u < 0xe000) out.push("\uFFFD");
        else out.push(String.fromCharCode(u));
      } else { this.i -= 1; this.fail("invalid escape"); return null; }
      start = this.i;
    }
  }
}
