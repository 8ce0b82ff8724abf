fn main() {
    println!("cargo:rerun-if-changed=vendor/mylib.c");
    println!("cargo:rerun-if-changed=vendor/mylib.h");
    cc::Build::new().file("vendor/mylib.c").warnings(true).compile("mylib");
    let out = std::path::PathBuf::from(std::env::var("OUT_DIR").unwrap());
    bindgen::Builder::default()
        .header("vendor/mylib.h")
        .allowlist_function("mylib_.*")
        .generate()
        .expect("bindgen")
        .write_to_file(out.join("bindings.rs"))
        .expect("write bindings");
}
