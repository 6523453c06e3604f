//! `ragreedy dump`: writes the regalloc2 input Cranelift produces for every function of the
//! given CLIF files, one file per function named `<file-stem>.<func-name>.json`: a JSON
//! `SerializableFunction` (the `cranelift` corpus of docs/metrics.md), or with
//! `--format text` the text format of docs/text-format.md in `<file-stem>.<func-name>.txt`.

use clap::{Args, ValueEnum};
use ragreedy_testkit::{corpus, text};
use std::path::PathBuf;

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// regalloc2's `SerializableFunction`, read back by `compare --corpus DIR`.
    Json,
    /// The human-readable text format (docs/text-format.md), usable as a test case.
    Text,
}

#[derive(Args, Debug)]
pub struct DumpArgs {
    /// CLIF files to compile.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Directory for the files (created if missing).
    #[arg(long)]
    pub out: PathBuf,
    /// File format.
    #[arg(long, value_enum, default_value_t = Format::Json)]
    pub format: Format,
}

/// Exit code: 0 when every function of every file was captured and written.
pub fn main(args: DumpArgs) -> i32 {
    if let Err(e) = std::fs::create_dir_all(&args.out) {
        eprintln!("cannot create {}: {e}", args.out.display());
        return 1;
    }
    let (mut written, mut problems) = (0usize, 0usize);
    for file in &args.files {
        let stem = file
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let text = match std::fs::read_to_string(file) {
            Ok(t) => t,
            Err(e) => {
                eprintln!("{}: {e}", file.display());
                problems += 1;
                continue;
            }
        };
        let (captured, errors) = match ragreedy_jit::dump::dump_source(&text) {
            Ok(r) => r,
            Err(e) => {
                eprintln!("{}: {e}", file.display());
                problems += 1;
                continue;
            }
        };
        for e in errors {
            eprintln!("{}: {e}", file.display());
            problems += 1;
        }
        for c in captured {
            let ext = match args.format {
                Format::Json => "json",
                Format::Text => "txt",
            };
            let path = args.out.join(format!("{stem}.{}.{ext}", c.func_name));
            let saved = match args.format {
                Format::Json => corpus::save_function(&path, &c.function),
                Format::Text => {
                    std::fs::write(&path, text::print(&c.function, c.function.machine_env()))
                }
            };
            match saved {
                Ok(()) => written += 1,
                Err(e) => {
                    eprintln!("{}: {e}", path.display());
                    problems += 1;
                }
            }
        }
    }
    println!(
        "{} files, {written} functions written to {}, {problems} problems",
        args.files.len(),
        args.out.display()
    );
    i32::from(problems > 0)
}
