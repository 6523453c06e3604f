//! Embeds the CLIF programs of `bench-programs/` into the `ragreedy` binary (the default corpus
//! of `ragreedy compare` and the code-speed programs), so that the binary works from any
//! directory. Writes `$OUT_DIR/bench_programs.rs`: a sorted `&[(stem, text)]`.

use std::path::PathBuf;

fn main() {
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap());
    let dir = manifest.join("../../bench-programs");
    println!("cargo:rerun-if-changed={}", dir.display());
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map(|rd| rd.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    files.retain(|p| p.extension().is_some_and(|e| e == "clif"));
    files.sort();
    let mut out = String::from("pub const BENCH_PROGRAMS: &[(&str, &str)] = &[\n");
    for f in &files {
        println!("cargo:rerun-if-changed={}", f.display());
        let stem = f.file_stem().unwrap().to_string_lossy();
        let path = f.canonicalize().unwrap();
        out.push_str(&format!(
            "    ({stem:?}, include_str!({:?})),\n",
            path.display().to_string()
        ));
    }
    out.push_str("];\n");
    let dest = PathBuf::from(std::env::var_os("OUT_DIR").unwrap()).join("bench_programs.rs");
    std::fs::write(dest, out).unwrap();
}
