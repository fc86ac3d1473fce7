//! A Rust test guest whose handlers fail on purpose, one way each:
//! "loop" spins forever (only the host's loop checks can stop it), "oom"
//! allocates until the memory limit stops it, "trap" executes wasm's
//! unreachable, "panic" panics (a trap too: wasm has no unwinding; the SDK
//! logs the message and sets it as the call's error first), "fail" returns
//! an arbitrary error, "sleep" sleeps for an hour in std::thread::sleep
//! (only the host's sleep can end it), "nap" sleeps 10 ms and succeeds,
//! "flood" logs 100,000 records as fast as it can and succeeds,
//! and "ok" succeeds (to show that the module recovers
//! on a fresh instance).

// Natively (cargo test) nothing calls the handlers: export! wires them in wasm only.
#![cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]

use kopf::{obj, Context, Error, Module, Result};

kopf::export!(register);

fn register(m: &mut Module) {
    m.module("misbehave-rust", "0.1.0");
    for (id, f) in [("loop", spin as fn(&mut Context) -> Result), ("oom", oom), ("trap", trap), ("panic", panic), ("fail", fail), ("sleep", sleep), ("nap", nap), ("flood", flood), ("ok", ok)] {
        m.on_create("kopf.dev", "v1", "kopfexamples", id, f);
    }
}

fn spin(_: &mut Context) -> Result {
    let mut n: u64 = 0;
    loop {
        // volatile, so that the loop is neither removed nor folded
        unsafe { std::ptr::write_volatile(&mut n, n.wrapping_add(1)) };
    }
}

fn oom(_: &mut Context) -> Result {
    let mut hold: Vec<Vec<u8>> = Vec::new();
    loop {
        let mut chunk = vec![0u8; 8 << 20];
        let i = hold.len() % chunk.len();
        chunk[i] = 1;
        hold.push(chunk);
    }
}

fn trap(_: &mut Context) -> Result {
    #[cfg(target_arch = "wasm32")]
    core::arch::wasm32::unreachable();
    #[cfg(not(target_arch = "wasm32"))]
    std::process::abort();
}

fn panic(ctx: &mut Context) -> Result {
    panic!("misbehave: deliberate panic in {}", ctx.handler());
}

fn fail(_: &mut Context) -> Result {
    Err(Error::arbitrary("misbehave: deliberate failure"))
}

fn sleep(_: &mut Context) -> Result {
    std::thread::sleep(std::time::Duration::from_secs(3600));
    Ok(obj! {"message" => "woke up after an hour"})
}

fn nap(_: &mut Context) -> Result {
    std::thread::sleep(std::time::Duration::from_millis(10));
    Ok(obj! {"message" => "napped"})
}

fn flood(ctx: &mut Context) -> Result {
    for i in 0..100_000 {
        ctx.info("misbehave: flooding the log", obj! {"i" => i});
    }
    Ok(obj! {"message" => "flooded"})
}

fn ok(_: &mut Context) -> Result {
    Ok(obj! {"message" => "ok"})
}
