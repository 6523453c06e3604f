//! On-disk corpora of regalloc2 inputs: one `SerializableFunction` per JSON file (as written by
//! `ragreedy dump`), so tools can load Cranelift's real allocation problems without building
//! Cranelift. The name of a function is its file name without `.json`.

use regalloc2::serialize::SerializableFunction;
use std::io;
use std::path::Path;

/// Write `f` to `path` as JSON.
pub fn save_function(path: &Path, f: &SerializableFunction) -> io::Result<()> {
    let file = io::BufWriter::new(std::fs::File::create(path)?);
    serde_json::to_writer(file, f).map_err(io::Error::other)
}

/// Read one function written by [`save_function`].
pub fn load_function(path: &Path) -> io::Result<SerializableFunction> {
    let file = io::BufReader::new(std::fs::File::open(path)?);
    serde_json::from_reader(file).map_err(|e| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("{}: {e}", path.display()),
        )
    })
}

/// Every `*.json` function in `dir`, sorted by name so that runs are reproducible.
pub fn load_dir(dir: &Path) -> io::Result<Vec<(String, SerializableFunction)>> {
    let mut paths: Vec<_> = std::fs::read_dir(dir)?
        .map(|e| e.map(|e| e.path()))
        .collect::<io::Result<_>>()?;
    paths.retain(|p| p.extension().is_some_and(|e| e == "json"));
    paths.sort();
    paths
        .into_iter()
        .map(|p| {
            let name = p
                .file_stem()
                .unwrap_or_default()
                .to_string_lossy()
                .into_owned();
            Ok((name, load_function(&p)?))
        })
        .collect()
}
