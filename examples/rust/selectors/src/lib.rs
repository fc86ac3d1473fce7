//! A Rust test guest for resource selectors beyond one named resource
//! and callable filters, evaluated by the host on a real control plane
//! (internal/polyglottest, TestRustSelectors; the Go guest
//! testguests/scanning does the same for the Go SDK): a create handler of
//! every resource in the category "kopfselect", one of every resource of
//! the group select.kopf.dev (Kopf's kopf.EVERYTHING narrowed to it), one
//! of the resources a callable selector takes, and one with a callable
//! label filter (the label "tier" starts with "gold"). Each stores
//! {"by": ...} under its id.

use kopf::{obj, Module, EVERYTHING};

kopf::export!(register);

const GROUP: &str = "select.kopf.dev";

pub fn register(m: &mut Module) {
    m.module("selectors-rust", "0.1.0");
    m.on_create("", "", "", "category_fn", |_| Ok(obj! {"by" => "category"})).category("kopfselect");
    m.on_create(GROUP, "", EVERYTHING, "everything_fn", |_| Ok(obj! {"by" => "everything"}));
    m.on_create(GROUP, "", "", "selected_fn", |_| Ok(obj! {"by" => "callable selector"}))
        .select_resources(|r| r.plural == "gadgets" && r.preferred);
    m.on_create(GROUP, "v1", "gadgets", "gold_fn", |_| Ok(obj! {"by" => "gold"}))
        .label_fn("tier", |v, _| v.as_str().map_or(false, |s| s.starts_with("gold")));
}

#[cfg(test)]
mod tests {
    use super::*;
    use kopf::testing::Host;

    #[test]
    fn manifest() {
        let h = Host::new(kopf::module!(register));
        assert_eq!(h.spec("category_fn")["resource"], obj! {"name" => "", "category" => "kopfselect"});
        assert_eq!(h.spec("everything_fn")["resource"], obj! {"group" => GROUP, "name" => "", "everything" => true});
        assert_eq!(h.spec("selected_fn")["resource"], obj! {"group" => GROUP, "name" => "", "callback" => true});
    }
}
