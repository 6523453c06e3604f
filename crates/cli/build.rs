//! Embeds the bench programs into the `ragreedy` binary so that it works from any directory:
//! the CLIF files of `bench-programs/` (code speed, and the `cranelift` corpus when no dump is
//! committed), the committed dump `bench-programs/dump/*.json` (the `cranelift` corpus of
//! docs/metrics.md) and `bench-programs/README.md` (its table of timing arguments). Writes
//! `$OUT_DIR/bench_programs.rs` with `BENCH_PROGRAMS` and `BENCH_DUMPS` (sorted
//! `&[(stem, text)]`) and `BENCH_README`.

use std::path::{Path, PathBuf};

fn files(dir: &Path, ext: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| rd.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    v.retain(|p| p.extension().is_some_and(|e| e == ext));
    v.sort();
    v
}

fn table(name: &str, files: &[PathBuf]) -> String {
    let mut out = format!("pub const {name}: &[(&str, &str)] = &[\n");
    for f in files {
        println!("cargo:rerun-if-changed={}", f.display());
        let stem = f.file_stem().unwrap().to_string_lossy();
        let path = f.canonicalize().unwrap();
        out.push_str(&format!(
            "    ({stem:?}, include_str!({:?})),\n",
            path.display().to_string()
        ));
    }
    out.push_str("];\n");
    out
}

fn main() {
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap());
    let dir = manifest.join("../../bench-programs");
    let dump = dir.join("dump");
    let readme = dir.join("README.md");
    for d in [&dir, &dump, &readme] {
        println!("cargo:rerun-if-changed={}", d.display());
    }
    let mut out = table("BENCH_PROGRAMS", &files(&dir, "clif"));
    out.push_str(&table("BENCH_DUMPS", &files(&dump, "json")));
    match readme.canonicalize() {
        Ok(p) => out.push_str(&format!(
            "pub const BENCH_README: &str = include_str!({:?});\n",
            p.display().to_string()
        )),
        Err(_) => out.push_str("pub const BENCH_README: &str = \"\";\n"),
    }
    let dest = PathBuf::from(std::env::var_os("OUT_DIR").unwrap()).join("bench_programs.rs");
    std::fs::write(dest, out).unwrap();
}
