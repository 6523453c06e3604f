//! The modules a command line names: a path is a module file itself, or a folder searched
//! (recursively, in sorted order, so runs are reproducible) for `*.wasm` files.

use crate::FileError;
use std::path::{Path, PathBuf};

/// Every module under `paths`, in the order given, each folder's files sorted. A path that does
/// not exist, or a folder without any `.wasm` file, is an error naming it.
pub fn modules(paths: &[PathBuf]) -> Result<Vec<PathBuf>, FileError> {
    let mut out = Vec::new();
    for p in paths {
        if p.is_dir() {
            let before = out.len();
            walk(p, &mut out)?;
            if out.len() == before {
                return Err(FileError::new(p, "no .wasm file in this folder"));
            }
        } else if p.exists() {
            out.push(p.clone());
        } else {
            return Err(FileError::new(p, "no such file or folder"));
        }
    }
    Ok(out)
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), FileError> {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| FileError::new(dir, format!("cannot list: {e}")))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    entries.sort();
    for e in entries {
        if e.is_dir() {
            walk(&e, out)?;
        } else if e.extension().is_some_and(|x| x == "wasm") {
            out.push(e);
        }
    }
    Ok(())
}
