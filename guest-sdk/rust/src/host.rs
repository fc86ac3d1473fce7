//! The host functions of the ABI, and the one place that touches wasm.

/// Calls the host functions of the ABI by name: the real host in wasm,
/// the fake one of [`crate::testing`] natively.
pub trait Host {
    /// Sends a JSON request to host function `func` (one of the `abi::HOST_*`
    /// names) and returns its JSON reply, or None when it has none.
    fn call(&mut self, func: &str, request: &[u8]) -> Option<Vec<u8>>;

    /// Sends an outbound HTTP request (Extism's http_request). A host that
    /// serves none answers with an error.
    fn http(&mut self, req: &crate::http::HttpRequest) -> Result<crate::http::HttpResponse, String> {
        let _ = req;
        Err("this host serves no outbound HTTP".into())
    }
}

#[cfg(target_arch = "wasm32")]
pub mod wasm {
    //! The Extism kernel (extism:host/env) and the ABI's host functions
    //! (kopf:host/v1), and the entry points that the `export!` macro wires.

    use super::Host;

    #[link(wasm_import_module = "extism:host/env")]
    extern "C" {
        fn input_length() -> u64;
        fn alloc(n: u64) -> u64;
        fn free(offset: u64);
        fn length(offset: u64) -> u64;
        fn load_u8(offset: u64) -> u32;
        fn load_u64(offset: u64) -> u64;
        fn store_u8(offset: u64, v: u32);
        fn store_u64(offset: u64, v: u64);
        fn error_set(offset: u64);
        fn http_request(request: u64, body: u64) -> u64;
        fn http_status_code() -> i32;
        fn http_headers() -> u64;
    }

    #[link(wasm_import_module = "kopf:host/v1")]
    extern "C" {
        fn input_read(ptr: *mut u8, len: u32) -> u32;
        fn output_write(ptr: *const u8, len: u32);
        fn log(request: u64) -> u64;
        fn post_event(request: u64) -> u64;
        fn kube_request(request: u64) -> u64;
        fn index_lookup(request: u64) -> u64;
        fn sleep_until_stopped(request: u64) -> u64;
        fn is_stopped(request: u64) -> u64;
    }

    /// Copies bytes into a new kernel block.
    fn to_block(b: &[u8]) -> u64 {
        unsafe {
            let off = alloc(b.len() as u64);
            let mut i = 0;
            while i + 8 <= b.len() {
                let mut w = [0u8; 8];
                w.copy_from_slice(&b[i..i + 8]);
                store_u64(off + i as u64, u64::from_le_bytes(w));
                i += 8;
            }
            while i < b.len() {
                store_u8(off + i as u64, b[i] as u32);
                i += 1;
            }
            off
        }
    }

    /// Copies a kernel block out and frees it.
    fn from_block(off: u64) -> Vec<u8> {
        unsafe {
            let n = length(off) as usize;
            let mut out = Vec::with_capacity(n);
            let mut i = 0;
            while i + 8 <= n {
                out.extend_from_slice(&load_u64(off + i as u64).to_le_bytes());
                i += 8;
            }
            while i < n {
                out.push(load_u8(off + i as u64) as u8);
                i += 1;
            }
            free(off);
            out
        }
    }

    /// The real host. The guest owns both blocks: it frees the request
    /// after the call and the reply after reading it.
    pub struct WasmHost;

    impl Host for WasmHost {
        fn call(&mut self, func: &str, request: &[u8]) -> Option<Vec<u8>> {
            let f: unsafe extern "C" fn(u64) -> u64 = match func {
                "log" => log,
                "post_event" => post_event,
                "kube_request" => kube_request,
                "index_lookup" => index_lookup,
                "sleep_until_stopped" => sleep_until_stopped,
                "is_stopped" => is_stopped,
                _ => return None,
            };
            let req = to_block(request);
            let reply = unsafe { f(req) };
            unsafe { free(req) };
            if reply == 0 {
                None
            } else {
                Some(from_block(reply))
            }
        }
    }

    /// Sends an outbound HTTP request through the kernel (Extism's
    /// http_request); a refused or failed request traps (the host ends
    /// the call).
    pub fn http(req: &crate::http::HttpRequest) -> Result<crate::http::HttpResponse, String> {
        let meta = to_block(req.to_json().as_bytes());
        let body = if req.body.is_empty() { 0 } else { to_block(&req.body) };
        let resp = unsafe { http_request(meta, body) };
        unsafe {
            free(meta);
            if body != 0 {
                free(body);
            }
        }
        let status = unsafe { http_status_code() };
        let body = if resp == 0 { Vec::new() } else { from_block(resp) };
        let headers = match unsafe { http_headers() } {
            0 => Default::default(),
            h => crate::http::headers_of(&from_block(h)),
        };
        Ok(crate::http::HttpResponse { status: status as u16, headers, body })
    }

    /// The call's input, read with one host call.
    pub fn input() -> Vec<u8> {
        let n = unsafe { input_length() } as usize;
        let mut buf = vec![0u8; n];
        if n > 0 {
            unsafe { input_read(buf.as_mut_ptr(), n as u32) };
        }
        buf
    }

    /// Sets the call's output with one host call.
    pub fn output(b: &[u8]) {
        unsafe { output_write(b.as_ptr(), b.len() as u32) };
    }

    /// Reports a failure of the module (Extism's error_set).
    pub fn set_error(msg: &str) {
        unsafe { error_set(to_block(msg.as_bytes())) };
    }

    /// Sends a panic's message to the host's log, as the call's error and
    /// to stderr before the trap that ends the call (wasm has no unwinding).
    pub fn install_panic_hook() {
        std::panic::set_hook(Box::new(|info| {
            let msg = format!("panic: {}", info);
            let mut rec = String::new();
            let mut w = crate::abi::ObjWriter::new(&mut rec);
            w.str("level", "error");
            w.str("message", "handler panicked");
            let mut fw = crate::abi::ObjWriter::new(w.key("fields"));
            fw.str("panic", &msg);
            fw.end();
            w.end();
            WasmHost.call("log", rec.as_bytes());
            set_error(&msg);
            // the host puts the guest's stderr into the trap's detail
            eprintln!("{}", msg);
        }));
    }
}
