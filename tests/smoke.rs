//! Proptest smoke versions of the fuzz targets (fuzz/fuzz_targets/): the four parsers that read
//! untrusted input never panic on arbitrary text, and every rejection carries a location inside
//! the input. They run in seconds in the normal suite; the fuzzers run for minutes.

use proptest::prelude::*;

/// Text built from the pieces the parsers care about, so random inputs reach their branches.
fn markdownish() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        Just("<!-- msd:section id=\"a\" when=\"always\" -->".to_string()),
        Just("<!-- msd:section id=\"gap-1\" when=\"flag:--prd\" shrink=\"head:2\" -->".to_string()),
        Just("<!-- /msd:section -->".to_string()),
        Just("<!-- msd:protected -->".to_string()),
        Just("<!-- msd:protected:start -->".to_string()),
        Just("<!-- msd:protected:end -->".to_string()),
        Just("<!--".to_string()),
        Just("-->".to_string()),
        Just("```".to_string()),
        Just("~~~~".to_string()),
        Just("- `RULE.a.b=value`".to_string()),
        Just("`X=`".to_string()),
        Just("`lower.case=x`".to_string()),
        Just("# Heading".to_string()),
        Just("---".to_string()),
        Just("name: msd:x".to_string()),
        Just("description: a: b".to_string()),
        Just("  - item".to_string()),
        Just("\u{feff}".to_string()),
        Just("\r".to_string()),
        "[ -~]{0,12}".prop_map(|s| s),
        any::<char>().prop_map(|c| c.to_string()),
    ];
    prop::collection::vec((piece, prop_oneof![Just("\n"), Just("\r\n"), Just(""), Just(" ")]), 0..24)
        .prop_map(|parts| parts.into_iter().map(|(p, sep)| format!("{p}{sep}")).collect())
}

fn lines(s: &str) -> usize {
    s.split('\n').count()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn smoke_marker_parser_never_panics_and_locates_errors(src in markdownish()) {
        match msd_core::markup::markers::parse("s.md", &src) {
            Ok(doc) => {
                if !doc.has_markers() {
                    prop_assert_eq!(doc.strip(), src);
                }
            }
            Err(e) => prop_assert!(e.line >= 1 && e.line <= lines(&src), "line {} of {}", e.line, lines(&src)),
        }
    }

    #[test]
    fn smoke_predicate_parser_never_panics_and_locates_lines(src in markdownish()) {
        let parsed = msd_core::installed::predicates::parse(&src);
        for p in &parsed.predicates {
            prop_assert!(p.line >= 1 && p.line <= lines(&src));
        }
        for m in &parsed.malformed {
            prop_assert!(m.line >= 1 && m.line <= lines(&src));
        }
    }

    #[test]
    fn smoke_frontmatter_reader_never_panics_and_locates_errors(src in markdownish()) {
        match msd_core::markup::frontmatter::split("s.md", &src) {
            Ok((Some(fm), body)) => {
                let again = fm.render() + body;
                prop_assert!(msd_core::markup::frontmatter::split("s.md", &again).is_ok(), "a rendered frontmatter parses");
            }
            Ok((None, body)) => prop_assert_eq!(body, src.as_str()),
            Err(e) => prop_assert!(e.line >= 1 && e.line <= lines(&src) + 1, "line {} of {}", e.line, lines(&src)),
        }
    }

    #[test]
    fn smoke_manifest_loader_never_panics_and_locates_errors(
        text in prop_oneof![
            "[ -~\n]{0,200}".prop_map(|s| s),
            // Mutations of a real manifest reach the semantic checks.
            (0usize..2000, "[ -~]{0,6}").prop_map(|(at, ins)| {
                let m = include_str!("../runtimes/windsurf/capability.json");
                let at = at.min(m.len());
                let at = (0..=at).rev().find(|i| m.is_char_boundary(*i)).unwrap_or(0);
                format!("{}{ins}{}", &m[..at], &m[at..])
            }),
        ]
    ) {
        let result = msd_core::manifest::capability::parse("rt/capability.json", &text)
            .map_err(msd_core::manifest::ManifestErrors::from)
            .and_then(|cap| msd_core::manifest::capability::validate("rt/capability.json", &text, &cap, "windsurf").map(|()| cap));
        if let Err(errs) = result {
            prop_assert!(!errs.0.is_empty());
            for e in &errs.0 {
                prop_assert!(e.line <= lines(&text) + 1, "line {} of {}", e.line, lines(&text));
                prop_assert!(!e.message.is_empty() && !e.hint.is_empty());
            }
        }
    }
}
