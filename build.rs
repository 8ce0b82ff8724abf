//! Builds the demo's fixture web (`seeds/web`) into the binary, so that `skillscout demo` works
//! wherever the binary is installed: writes `$OUT_DIR/demo_web.rs`, a sorted table of every
//! regular file below `seeds/web` (its path with `/` separators, and its bytes).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The fixture web, relative to the package root.
const WEB: &str = "seeds/web";

fn main() {
    println!("cargo::rerun-if-changed={WEB}");
    let root =
        PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("set by cargo")).join(WEB);
    let mut files = Vec::new();
    collect(&root, &root, &mut files);
    files.sort();
    let mut table = String::from(
        "/// Every file of the built-in fixture web: its path below the web's root (`site/path`,\n\
         /// `/`-separated), sorted, and its bytes.\n\
         pub(crate) static FILES: &[(&str, &[u8])] = &[\n",
    );
    for (relative, absolute) in &files {
        writeln!(table, "    ({relative:?}, include_bytes!({absolute:?})),")
            .expect("writing to a String");
    }
    table.push_str("];\n");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("set by cargo")).join("demo_web.rs");
    std::fs::write(&out, table)
        .unwrap_or_else(|error| panic!("cannot write {}: {error}", out.display()));
}

/// Adds the regular files below `dir` to `files` as (path relative to `root`, absolute path);
/// symbolic links and other special files are left out, as the folder server leaves them out.
fn collect(root: &Path, dir: &Path, files: &mut Vec<(String, String)>) {
    let entries = std::fs::read_dir(dir)
        .unwrap_or_else(|error| panic!("cannot read {}: {error}", dir.display()));
    for entry in entries {
        let entry = entry.unwrap_or_else(|error| panic!("cannot read {}: {error}", dir.display()));
        let path = entry.path();
        let kind = entry
            .file_type()
            .unwrap_or_else(|error| panic!("cannot read {}: {error}", path.display()));
        if kind.is_dir() {
            collect(root, &path, files);
        } else if kind.is_file() {
            let relative = path
                .strip_prefix(root)
                .expect("below the root")
                .components()
                .map(|part| part.as_os_str().to_str().expect("fixture paths are UTF-8"))
                .collect::<Vec<_>>()
                .join("/");
            let absolute = path.to_str().expect("fixture paths are UTF-8").to_owned();
            files.push((relative, absolute));
        }
    }
}
