//! The shared filter table (abi/testdata/filters.json; its format in
//! abi/testdata/filters.md): `kopf::testing` decides each case as the host
//! does, in the host's words. The module's callables are not in the table:
//! a case's "when" is their answer, asked last.

use kopf::testing::{callback_refusal, declared_why_not};
use kopf::Value;

#[test]
fn every_case_as_the_host_decides() {
    let path = format!("{}/../../abi/testdata/filters.json", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {}", path, e));
    let table = Value::parse(&text).unwrap_or_else(|e| panic!("{}: {}", path, e));
    let cases = table["cases"].as_array().expect("the table has cases");
    assert!(!cases.is_empty());
    let mut failures = Vec::new();
    for case in cases {
        let spec = &case["handler"];
        let opt = |v: &Value| if v.is_null() { None } else { Some(v.clone()) };
        let (obj, old) = (opt(&case["object"]), opt(&case["old"]));
        let mut why = declared_why_not(spec, obj.as_ref(), old.as_ref());
        if why.is_empty() && spec["filters"]["when"].as_bool() == Some(true) && case["when"].as_bool() == Some(false) {
            why = callback_refusal(&spec["filters"]);
        }
        assert_eq!(case["called"].as_bool(), Some(case.str_at("why").is_empty()), "{}: called and why disagree", case.str_at("name"));
        if why != case.str_at("why") {
            failures.push(format!("{}: kopf::testing: {:?}, the table: {:?}", case.str_at("name"), why, case.str_at("why")));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
