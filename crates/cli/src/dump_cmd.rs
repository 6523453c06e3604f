//! `ragreedy dump`: writes the regalloc2 input Cranelift produces for every function of the
//! given CLIF files, one JSON `SerializableFunction` per function, named
//! `<file-stem>.<func-name>.json` (the `cranelift` corpus of docs/metrics.md).

use clap::Args;
use ragreedy_testkit::corpus;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct DumpArgs {
    /// CLIF files to compile.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Directory for the JSON files (created if missing).
    #[arg(long)]
    pub out: PathBuf,
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
            let path = args.out.join(format!("{stem}.{}.json", c.func_name));
            match corpus::save_function(&path, &c.function) {
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
