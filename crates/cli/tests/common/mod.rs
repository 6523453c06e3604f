//! Running the `ragreedy` binary from the integration tests, each in a scratch folder of its
//! own under Cargo's target tmpdir.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// `ragreedy ARGS` run in `cwd`.
pub fn ragreedy(args: &[&str], cwd: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ragreedy"))
        .args(args)
        .current_dir(cwd)
        .output()
        .expect("ragreedy runs")
}

/// An empty folder named `name` (emptied if a previous run left it).
pub fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

pub fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// The standard output of a run that must have exited with 0 (the message shows both streams).
#[track_caller]
pub fn success_stdout(out: &Output) -> String {
    let stdout = text(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}\n{}",
        text(&out.stderr)
    );
    stdout
}
