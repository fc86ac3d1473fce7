//! Filter combinators, Kopf's kopf.all_, kopf.any_, kopf.none_ and
//! kopf.not_, over `when` callbacks:
//!
//! ```ignore
//! m.on_create("kopf.dev", "v1", "kopfexamples", "create_fn", create_fn)
//!     .when(kopf::any_of(vec![kopf::when(is_big), kopf::when(|ctx| ctx.name() == "special")]));
//! ```
//!
//! The parts run in order and no further than the verdict needs, as
//! Python's all() and any() do in Kopf's.

use crate::context::Context;

/// A `when` callback boxed for the combinators (see [`when`]).
pub type When = Box<dyn Fn(&Context) -> bool>;

/// Boxes a `when` callback (a function or a closure) for [`all_of`],
/// [`any_of`] and [`none_of`].
pub fn when(f: impl Fn(&Context) -> bool + 'static) -> When {
    Box::new(f)
}

/// Matches when every one of `fns` matches (true for none), Kopf's kopf.all_.
pub fn all_of(fns: Vec<When>) -> impl Fn(&Context) -> bool {
    move |ctx| fns.iter().all(|f| f(ctx))
}

/// Matches when at least one of `fns` matches (false for none), Kopf's kopf.any_.
pub fn any_of(fns: Vec<When>) -> impl Fn(&Context) -> bool {
    move |ctx| fns.iter().any(|f| f(ctx))
}

/// Matches when none of `fns` matches (true for none), Kopf's kopf.none_.
pub fn none_of(fns: Vec<When>) -> impl Fn(&Context) -> bool {
    move |ctx| !fns.iter().any(|f| f(ctx))
}

/// Matches when `f` does not, Kopf's kopf.not_.
pub fn not(f: impl Fn(&Context) -> bool) -> impl Fn(&Context) -> bool {
    move |ctx| !f(ctx)
}
