// Package instrument rewrites a WebAssembly binary so that the host can
// stop a guest that runs too long without wazero's
// WithCloseOnContextDone, whose check at every loop header leaves native
// code for Go and makes loop-heavy guests (standard Go decoding JSON)
// several times slower.
//
// host/internal/wasmrt calls [Interruptible] on a module's bytes before it
// compiles them. The result has two more globals, mutable i32s: the flag,
// which starts at 0 and is exported under a name the caller chooses, and
// the budget, which starts at [YieldPeriod]; and code that counts the
// budget down at every check and, each time it runs out, refills it, traps
// if the flag is set, and yields:
//
//	global.get <budget>; i32.const 1; i32.sub; global.set <budget>
//	global.get <budget>; i32.eqz
//	if
//	  i32.const 4096; global.set <budget>
//	  global.get <flag>
//	  if
//	    unreachable
//	  end
//	  i32.const 0; memory.grow 0; drop   ;; the yield
//	end
//
// When a call's deadline passes, the host sets the flag to 1 from another
// goroutine (api.MutableGlobal.Set) and the guest traps within 4096
// checks. The yield matters as much: wazero's native code has no point at
// which the Go scheduler can preempt it, and a stop-the-world of the
// garbage collector waits for every goroutine to reach one, so a guest
// that runs for a second without calling the host would stall the whole
// host (a looping guest would stall it for good, and the flag's timer
// could never fire). memory.grow leaves native code for Go, where the
// goroutine can be preempted; growing by 0 pages changes nothing. A module
// without a memory gets no yield. In a module built by the standard Go
// toolchain the fast path of a check is a load, a subtraction, a store and
// a branch; the slow path runs once per 4096 checks.
//
// In wasm only a branch to a loop goes backwards, so a call that keeps
// running either iterates, passing loop headers, or recurses, entering
// functions that call. The check therefore goes in two kinds of places:
//
//   - after the header of every loop of every function, for iteration:
//     loop <blocktype>, then the check, then the loop's instructions;
//   - at the entry of every function whose body has a call instruction
//     (call, call_indirect, return_call, return_call_indirect): after its
//     local declarations, before its first instruction, for recursion,
//     including the bounded but exponential kind such as a naive
//     recursive Fibonacci, which has no loop and does not exhaust the
//     call stack.
//
// A function with neither a loop nor a call (a leaf) runs a bounded number
// of instructions and cannot recurse, so it gets no check. In a module
// built by the standard Go toolchain nearly every body calls (2079 of the
// 2201 of a small test guest, 556 of them without a loop).
//
// The rewrite is a single pass over the binary. Sections other than the
// global, export and code sections are copied byte for byte, custom
// sections included and in their places; a global or export section that
// the module lacks is created in its place in the section order. Function
// bodies keep their local declarations and instructions; only the checks
// are inserted. Nothing is validated beyond what the walk needs: the
// compiler validates the result.
//
// The instruction walker knows the MVP, multi-value block types, sign
// extension, saturating truncation, bulk memory, reference types, tail
// calls, multi-memory and memory64 memory arguments, fixed-width SIMD and
// threads. A binary that uses anything else (exception handling, garbage
// collection types, function references, relaxed SIMD, an unknown opcode
// or section, a binary version other than 1) is refused with an
// [*UnsupportedError]; the caller then compiles the module as it is and
// relies on wazero's own checks. A binary that is not well formed
// gives an error wrapping [ErrMalformed], and an export name that the
// module already uses one wrapping [ErrExportName]. Interruptible never
// panics on bad input.
//
// The package also walks a module for the host before wazero decodes it:
// [Bounded] checks every count and size that wazero's decoder allocates by
// against the bytes that are there, for a malformed module must get an
// error, not a failed allocation that ends the host's process.
package instrument
