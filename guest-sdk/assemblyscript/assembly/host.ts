// The one place that touches wasm: Extism's kernel (extism:host/env) and
// the ABI's host functions (kopf:host/v1). The guest owns both blocks of a
// host call: it frees the request after the call and the reply after
// reading it.

@external("extism:host/env", "input_length") declare function input_length(): u64;
@external("extism:host/env", "alloc") declare function kalloc(n: u64): u64;
@external("extism:host/env", "free") declare function kfree(offset: u64): void;
@external("extism:host/env", "length") declare function klength(offset: u64): u64;
@external("extism:host/env", "load_u8") declare function load_u8(offset: u64): u32;
@external("extism:host/env", "load_u64") declare function load_u64(offset: u64): u64;
@external("extism:host/env", "store_u8") declare function store_u8(offset: u64, v: u32): void;
@external("extism:host/env", "store_u64") declare function store_u64(offset: u64, v: u64): void;
@external("extism:host/env", "error_set") declare function error_set(offset: u64): void;
@external("extism:host/env", "http_request") declare function http_request(req: u64, body: u64): u64;
@external("extism:host/env", "http_status_code") declare function http_status_code(): i32;
@external("extism:host/env", "http_headers") declare function http_headers(): u64;

@external("kopf:host/v1", "input_read") declare function input_read(ptr: usize, len: u32): u32;
@external("kopf:host/v1", "output_write") declare function output_write(ptr: usize, len: u32): void;
@external("kopf:host/v1", "log") declare function h_log(req: u64): u64;
@external("kopf:host/v1", "post_event") declare function h_post_event(req: u64): u64;
@external("kopf:host/v1", "kube_request") declare function h_kube_request(req: u64): u64;
@external("kopf:host/v1", "index_lookup") declare function h_index_lookup(req: u64): u64;
@external("kopf:host/v1", "sleep_until_stopped") declare function h_sleep_until_stopped(req: u64): u64;
@external("kopf:host/v1", "is_stopped") declare function h_is_stopped(req: u64): u64;

/** Copies a string (as UTF-8) into a new kernel block. */
function toBlock(s: string): u64 {
  const buf = String.UTF8.encode(s);
  const n = buf.byteLength;
  const p = changetype<usize>(buf);
  const off = kalloc(<u64>n);
  let i = 0;
  for (; i + 8 <= n; i += 8) store_u64(off + <u64>i, load<u64>(p + <usize>i));
  for (; i < n; i++) store_u8(off + <u64>i, <u32>load<u8>(p + <usize>i));
  return off;
}

/** Copies a kernel block out as a string and frees it. */
function fromBlock(off: u64): string {
  const n = <i32>klength(off);
  const buf = new ArrayBuffer(n);
  const p = changetype<usize>(buf);
  let i = 0;
  for (; i + 8 <= n; i += 8) store<u64>(p + <usize>i, load_u64(off + <u64>i));
  for (; i < n; i++) store<u8>(p + <usize>i, <u8>load_u8(off + <u64>i));
  kfree(off);
  return String.UTF8.decode(buf);
}

/** Calls host function fn with a JSON request; "" when it has no reply. */
export function hostCall(fn: string, request: string): string {
  const req = toBlock(request);
  let reply: u64 = 0;
  if (fn == "log") reply = h_log(req);
  else if (fn == "post_event") reply = h_post_event(req);
  else if (fn == "kube_request") reply = h_kube_request(req);
  else if (fn == "index_lookup") reply = h_index_lookup(req);
  else if (fn == "sleep_until_stopped") reply = h_sleep_until_stopped(req);
  else if (fn == "is_stopped") reply = h_is_stopped(req);
  kfree(req);
  return reply == 0 ? "" : fromBlock(reply);
}

/** Sends an outbound HTTP request through Extism's http_request (the
 * request's JSON, {url, method, headers}, and the body, null for none):
 * the response's status, its headers' JSON ("" when none) and its body. A
 * host the module did not declare fails the call (the host's refusal). */
export function httpCall(request: string, body: string | null): HttpReply {
  const req = toBlock(request);
  const b: u64 = body === null ? 0 : toBlock(body as string);
  const out = http_request(req, b);
  kfree(req);
  if (b != 0) kfree(b);
  const reply = new HttpReply();
  reply.status = http_status_code();
  reply.body = out == 0 ? "" : fromBlock(out);
  const h = http_headers();
  reply.headers = h == 0 ? "" : fromBlock(h);
  return reply;
}

/** What httpCall got back. */
export class HttpReply {
  status: i32 = 0;
  headers: string = "";
  body: string = "";
}

/** The call's input, read with one host call. */
export function input(): string {
  const n = <i32>input_length();
  const buf = new ArrayBuffer(n);
  if (n > 0) input_read(changetype<usize>(buf), <u32>n);
  return String.UTF8.decode(buf);
}

/** Sets the call's output with one host call. */
export function output(s: string): void {
  const buf = String.UTF8.encode(s);
  output_write(changetype<usize>(buf), <u32>buf.byteLength);
}

/** Reports a failure of the module (Extism's error_set). */
export function setError(msg: string): void {
  error_set(toBlock(msg));
}

/** AssemblyScript's abort (asconfig: use abort=...): the message goes to
 * the host's log and as the call's error, then the call traps. */
export function kopfAbort(message: string | null, fileName: string | null, line: u32, column: u32): void {
  const msg = "abort: " + (message !== null ? message : "") + " at " + (fileName !== null ? fileName : "") + ":" + line.toString() + ":" + column.toString();
  hostCall("log", "{\"level\":\"error\",\"message\":\"handler aborted\",\"fields\":{\"abort\":" + quoteForAbort(msg) + "}}");
  setError(msg);
  unreachable();
}

function quoteForAbort(s: string): string {
  return "\"" + s.replaceAll("\\", "\\\\").replaceAll("\"", "\\\"").replaceAll("\n", "\\n") + "\"";
}
