use super::*;

fn file(uri: &str, bytes: &[u8]) -> Value {
    json!({ "uri": uri, "digest": Digest::of(bytes).to_string(), "size": bytes.len() })
}

fn entry(uri: &str, name: &str, resources: Value) -> Value {
    json!({
        "uri": uri,
        "frontmatter": { "name": name, "description": "d" },
        "resources": resources,
    })
}

#[test]
fn stateless_requests_carry_their_context() {
    let body = request_body(7, "skills/list", Map::new(), Era::Stateless);
    let body: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(body["id"], 7);
    assert_eq!(body["method"], "skills/list");
    let meta = &body["params"]["_meta"];
    assert_eq!(
        meta["io.modelcontextprotocol/protocolVersion"],
        "2026-07-28"
    );
    assert!(meta["io.modelcontextprotocol/clientCapabilities"].is_object());

    let legacy = request_body(8, "skills/list", Map::new(), Era::Legacy("2025-11-25"));
    let legacy: Value = serde_json::from_slice(&legacy).unwrap();
    assert!(legacy["params"].get("_meta").is_none());
    assert_eq!(Era::Legacy("2025-11-25").protocol_version(), "2025-11-25");
}

#[test]
fn responses_in_json_and_event_streams() {
    let json = br#"{"jsonrpc":"2.0","id":3,"result":{"skills":[]}}"#;
    assert_eq!(
        parse_response(json, Some("application/json"), 3),
        Ok(json!({"skills": []}))
    );
    assert!(matches!(
        parse_response(json, None, 4),
        Err(RpcError::Invalid(_))
    ));
    let stream = "id: 1\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}\n\n\
                  data: {\"jsonrpc\":\"2.0\",\r\ndata: \"id\":3,\"result\":{\"ok\":true}}\r\n\r\n";
    assert_eq!(
        parse_response(
            stream.as_bytes(),
            Some("text/event-stream; charset=utf-8"),
            3
        ),
        Ok(json!({"ok": true}))
    );
    let error = br#"{"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"Method not found"}}"#;
    assert_eq!(
        parse_response(error, Some("application/json"), 3),
        Err(RpcError::Server {
            code: -32601,
            message: "Method not found".to_owned()
        })
    );
    let anonymous = br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"bad"}}"#;
    assert!(matches!(
        parse_response(anonymous, None, 9),
        Err(RpcError::Server { code: -32600, .. })
    ));
    for junk in [
        &b"not json"[..],
        b"[1]",
        b"\xff",
        br#"{"jsonrpc":"2.0","id":3,"result":1}"#,
    ] {
        assert!(parse_response(junk, None, 3).is_err(), "{junk:?}");
    }
    assert!(parse_response(b"data: x\n\n", Some("text/event-stream"), 1).is_err());
}

#[test]
fn capabilities() {
    let both = json!({"capabilities": {"resources": {}, "extensions": {SKILLS_EXTENSION_ID: {}}}});
    assert_eq!(SkillsSupport::of(&both).problem(), None);
    let none = json!({"capabilities": {"tools": {}}});
    let problem = SkillsSupport::of(&none).problem().unwrap();
    assert_eq!(problem.code, Code::NoSkillsExtension);
    let no_resources = json!({"capabilities": {"extensions": {SKILLS_EXTENSION_ID: {}}}});
    assert!(SkillsSupport::of(&no_resources).problem().is_some());
}

#[test]
fn list_pages() {
    let page = parse_list_page(&json!({"skills": [{"uri": "x"}], "nextCursor": "2"})).unwrap();
    assert_eq!(page.skills.len(), 1);
    assert_eq!(page.next_cursor.as_deref(), Some("2"));
    assert_eq!(
        parse_list_page(&json!({"skills": []})).unwrap().next_cursor,
        None
    );
    assert!(parse_list_page(&json!({"items": []})).is_err());
    assert!(parse_list_page(&json!({"skills": [], "nextCursor": 2})).is_err());
}

#[test]
fn good_entries_list_skill_md_first() {
    let entries = [entry(
        "skill://tools/pdf/SKILL.md",
        "pdf",
        json!([
            file("skill://tools/pdf/scripts/run.py", b"print()"),
            file("skill://tools/pdf/SKILL.md", b"---"),
        ]),
    )];
    let listing = read_listing(&entries);
    assert_eq!(listing.diagnostics, []);
    let [skill] = listing.skills.as_slice() else {
        panic!("{listing:?}")
    };
    assert_eq!(skill.slug.as_str(), "pdf");
    assert_eq!(skill.folder, "pdf");
    assert!(!skill.refused);
    assert_eq!(skill.diagnostics, []);
    let ListedFiles::Files(files) = &skill.files else {
        panic!("{skill:?}")
    };
    let paths: Vec<&str> = files.iter().map(|file| file.path.as_str()).collect();
    assert_eq!(paths, ["SKILL.md", "scripts/run.py"]);
    assert_eq!(skill.skill_md().unwrap().size, 3);
}

#[test]
fn entries_refused_before_anything_is_read() {
    let root = "skill://a/SKILL.md";
    let many: Vec<Value> = (0..=MAX_SKILL_FILES)
        .map(|n| file(&format!("skill://a/f{n}"), b"x"))
        .collect();
    let huge = json!([
        file(root, b"x"),
        {"uri": "skill://a/big.bin", "digest": Digest::of(b"").to_string(), "size": MAX_SKILL_BYTES},
    ]);
    let cases = [
        (json!(many), Code::TooManyEntries),
        (huge, Code::TooLarge),
        (
            json!([file(root, b"x"), file("skill://a/../b/x", b"x")]),
            Code::PathTraversal,
        ),
        (
            json!([file(root, b"x"), file("skill://b/x", b"x")]),
            Code::PathTraversal,
        ),
        (
            json!([file(root, b"x"), {"uri": "skill://a/x", "digest": "sha256:XYZ", "size": 1}]),
            Code::InvalidDigest,
        ),
        (json!([file("skill://a/x", b"x")]), Code::MissingSkillMd),
        (
            json!([file(root, b"x"), file(root, b"x")]),
            Code::InvalidField,
        ),
        (json!("static"), Code::InvalidField),
    ];
    for (resources, code) in cases {
        let listing = read_listing(&[entry(root, "a", resources)]);
        let skill = &listing.skills[0];
        assert!(skill.refused, "{code}");
        assert!(
            skill
                .diagnostics
                .iter()
                .any(|diagnostic| diagnostic.code == code),
            "{code}: {:?}",
            skill.diagnostics
        );
    }
    let dynamic = read_listing(&[entry(root, "a", json!("dynamic"))]);
    assert_eq!(dynamic.skills[0].files, ListedFiles::Dynamic);
    assert!(!dynamic.skills[0].refused);
}

#[test]
fn unusable_entries_and_names() {
    let listing = read_listing(&[
        json!(1),
        json!({"frontmatter": {}}),
        entry("skill://a/README.md", "a", json!("dynamic")),
        entry("skill://a/SKILL.md?x", "a", json!("dynamic")),
        json!({"uri": "skill://a/SKILL.md", "resources": "dynamic"}),
        entry("skill://x/a%2Fb/SKILL.md", "a/b", json!("dynamic")),
        entry("skill://Big/SKILL.md", "Big", json!("dynamic")),
        entry("skill://other/SKILL.md", "named", json!("dynamic")),
    ]);
    let codes: Vec<Code> = listing.diagnostics.iter().map(|d| d.code).collect();
    assert_eq!(
        codes,
        [
            Code::InvalidField,
            Code::MissingField,
            Code::InvalidField,
            Code::InvalidField,
            Code::MissingField,
            Code::InvalidName,
        ]
    );
    let [big, named] = listing.skills.as_slice() else {
        panic!("{listing:?}")
    };
    assert_eq!(big.diagnostics[0].code, Code::InvalidName);
    assert_eq!(named.slug.as_str(), "named");
    assert_eq!(named.diagnostics[0].code, Code::NameMismatch);
}

#[test]
fn skills_sharing_a_name_are_all_kept_in_uri_order() {
    let listed = |order: &[&str]| {
        let entries: Vec<Value> = order
            .iter()
            .map(|uri| entry(uri, "pdf", json!("dynamic")))
            .collect();
        read_listing(&entries)
    };
    let uris = [
        "skill://c/pdf/SKILL.md",
        "skill://a/pdf/SKILL.md",
        "skill://b/pdf/SKILL.md",
    ];
    let listing = listed(&uris);
    let keys: Vec<(&str, &str)> = listing
        .skills
        .iter()
        .map(|skill| (skill.uri.as_str(), skill.slug.as_str()))
        .collect();
    assert_eq!(
        keys,
        [
            ("skill://c/pdf/SKILL.md", "pdf~3"),
            ("skill://a/pdf/SKILL.md", "pdf"),
            ("skill://b/pdf/SKILL.md", "pdf~2"),
        ]
    );
    assert_eq!(listing.diagnostics.len(), 2);
    assert!(
        listing
            .diagnostics
            .iter()
            .all(|d| d.code == Code::DuplicateName)
    );
    assert_eq!(listing.skills[0].diagnostics[0].code, Code::DuplicateName);
    // The keys do not depend on the listing's order.
    let reversed = listed(&[uris[2], uris[1], uris[0]]);
    let mut before: Vec<(String, String)> = listing
        .skills
        .iter()
        .map(|s| (s.uri.clone(), s.slug.to_string()))
        .collect();
    let mut after: Vec<(String, String)> = reversed
        .skills
        .iter()
        .map(|s| (s.uri.clone(), s.slug.to_string()))
        .collect();
    before.sort();
    after.sort();
    assert_eq!(before, after);
}

#[test]
fn contents_as_text_or_blob() {
    let uri = "skill://a/SKILL.md";
    let text = json!({"contents": [{"uri": uri, "text": "héllo"}]});
    assert_eq!(read_contents(&text, uri).unwrap(), "héllo".as_bytes());
    let blob = json!({"contents": [{"uri": uri, "blob": "AAEC/w=="}]});
    assert_eq!(read_contents(&blob, uri).unwrap(), [0, 1, 2, 255]);
    let unpadded = json!({"contents": [{"uri": uri, "blob": "aGk"}]});
    assert_eq!(read_contents(&unpadded, uri).unwrap(), b"hi");
    for bad in [
        json!({}),
        json!({"contents": []}),
        json!({"contents": [{"uri": uri}]}),
        json!({"contents": [{"uri": uri, "blob": "a"}]}),
        json!({"contents": [{"uri": uri, "blob": "a b="}]}),
    ] {
        assert!(read_contents(&bad, uri).is_err(), "{bad}");
    }
}

#[test]
fn files_are_checked_size_first() {
    let listed = ListedFile {
        uri: "skill://a/SKILL.md".to_owned(),
        path: "SKILL.md".to_owned(),
        digest: Digest::of(b"abc"),
        size: 3,
    };
    assert_eq!(check_file(&listed, b"abc"), Ok(()));
    assert_eq!(
        check_file(&listed, b"abcd").unwrap_err().code,
        Code::SizeMismatch
    );
    assert_eq!(
        check_file(&listed, b"abd").unwrap_err().code,
        Code::DigestMismatch
    );
}

#[test]
fn frontmatter_compared_field_by_field() {
    let listed = json!({"name": "a", "description": "d", "version": 1, "metadata": {"x": [1.0]}});
    let same = json!({"name": "a", "description": "d", "version": 1.0, "metadata": {"x": [1]}});
    let Value::Object(listed) = listed else {
        unreachable!()
    };
    let Value::Object(same) = same else {
        unreachable!()
    };
    assert_eq!(compare_frontmatter(&listed, &same), []);
    let other = json!({"name": "a", "description": "other", "license": "MIT"});
    let Value::Object(other) = other else {
        unreachable!()
    };
    let fields: Vec<Option<String>> = compare_frontmatter(&listed, &other)
        .into_iter()
        .map(|d| d.field)
        .collect();
    assert_eq!(
        fields,
        [
            Some("frontmatter.description".to_owned()),
            Some("frontmatter.license".to_owned()),
            Some("frontmatter.metadata".to_owned()),
            Some("frontmatter.version".to_owned()),
        ]
    );
}

mod properties {
    use proptest::prelude::*;

    use super::*;

    /// URIs, names and paths close to the real ones, with junk mixed in.
    fn text() -> impl Strategy<Value = String> {
        prop_oneof![
            "skill://[a-z]{0,3}(/[a-z.%~-]{0,4}){0,3}/SKILL\\.md",
            "skill://[a-z]{1,3}/[a-z.%/\\\\?#-]{0,8}",
            "\\PC{0,12}",
        ]
    }

    fn value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<u64>().prop_map(Value::from),
            text().prop_map(Value::from),
            "sha256:[0-9a-f]{64}".prop_map(Value::from),
        ];
        leaf.prop_recursive(3, 24, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                prop::collection::btree_map(
                    prop_oneof![
                        Just("uri".to_owned()),
                        Just("frontmatter".to_owned()),
                        Just("resources".to_owned()),
                        Just("name".to_owned()),
                        Just("digest".to_owned()),
                        Just("size".to_owned()),
                        "[a-z]{1,4}",
                    ],
                    inner,
                    0..5
                )
                .prop_map(|map| Value::Object(map.into_iter().collect())),
            ]
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        #[test]
        fn any_listing_is_read_without_panic(entries in prop::collection::vec(value(), 0..6)) {
            let listing = read_listing(&entries);
            let mut keys = BTreeSet::new();
            for skill in &listing.skills {
                prop_assert!(keys.insert(skill.slug.to_string()), "two skills keyed {}", skill.slug);
                prop_assert!(skill.uri.ends_with("/SKILL.md"));
                if let ListedFiles::Files(files) = &skill.files
                    && !skill.refused
                {
                    prop_assert_eq!(files[0].path.as_str(), SKILL_MD);
                    for file in files {
                        prop_assert!(!file.path.split('/').any(|s| s.is_empty() || s == ".."));
                    }
                }
            }
        }

        #[test]
        fn any_answer_is_read_without_panic(body in "\\PC{0,80}", stream in any::<bool>()) {
            let content_type = stream.then_some("text/event-stream");
            let _ = parse_response(body.as_bytes(), content_type, 1);
            let _ = read_contents(&json!({"contents": [{"uri": "u", "blob": body}]}), "u");
        }
    }
}
