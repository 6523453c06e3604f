//! Every input a fuzz target ever failed on stays here as a regression test: each file in
//! `tests/regressions/` (except `README.md`) is replayed through every check
//! (`check_all`). See `docs/fuzzing.md` for how a crash becomes such a file.

use std::path::Path;

#[test]
fn replay_regressions() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/regressions");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("tests/regressions exists")
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file() && p.file_name().is_some_and(|n| n != "README.md"))
        .collect();
    files.sort();
    for path in &files {
        let data = std::fs::read(path).unwrap();
        let r = std::panic::catch_unwind(|| ragreedy_fuzz_checks::check_all(&data));
        if let Err(e) = r {
            eprintln!("regression input {} fails", path.display());
            std::panic::resume_unwind(e);
        }
    }
    eprintln!("{} regression inputs replayed", files.len());
}
