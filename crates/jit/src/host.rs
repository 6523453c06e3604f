//! From a CLIF test file's header to ISAs that run on this host: the header rewrite that lets a
//! multi-target file parse with only the x86_64 backend compiled in, and the rebuild of each
//! x86_64 target of the file for the host with `regalloc_checker` on.
//!
//! A file is run on the host only for what it asked: its shared settings and its ISA flags are
//! copied, nothing is inferred from the host CPU, and a target whose flags the host lacks is
//! skipped with the reason (never counted as passed).

use cranelift_codegen::isa::{OwnedTargetIsa, TargetIsa};
use cranelift_codegen::settings::{self, Configurable, Flags};
use cranelift_reader::IsaSpec;
use std::collections::HashMap;
use target_lexicon::Architecture;

/// What the header rewrite found.
#[derive(Debug, Default, Clone)]
pub struct Header {
    /// Every `test` command name, in order.
    pub tests: Vec<String>,
    /// Architectures of the `target` lines, including the removed ones.
    pub targets: Vec<String>,
}

impl Header {
    pub fn has_test(&self, name: &str) -> bool {
        self.tests.iter().any(|t| t == name)
    }

    pub fn has_x86_target(&self) -> bool {
        self.targets.iter().any(|t| is_x86(t))
    }
}

fn is_x86(arch: &str) -> bool {
    arch == "x86_64" || arch.starts_with("x86_64-")
}

/// Blank out non-x86_64 `target` lines and the `set` lines after the last x86_64 target (they
/// configure only the removed targets, and the reader rejects a dangling `set`). Lines are
/// blanked, not removed, so that parse errors keep their line numbers.
pub fn rewrite_header(text: &str) -> (String, Header) {
    let lines: Vec<&str> = text.lines().collect();
    let header_end = lines
        .iter()
        .position(|l| l.trim_start().starts_with("function"))
        .unwrap_or(lines.len());
    let mut header = Header::default();
    let mut keep = vec![true; lines.len()];
    let mut last_x86 = None;
    for (i, line) in lines[..header_end].iter().enumerate() {
        let mut words = line.split_whitespace();
        match words.next() {
            Some("test") => header.tests.extend(words.next().map(str::to_owned)),
            Some("target") => {
                let arch = words.next().unwrap_or("").to_owned();
                if is_x86(&arch) {
                    last_x86 = Some(i);
                } else {
                    keep[i] = false;
                }
                header.targets.push(arch);
            }
            _ => {}
        }
    }
    if let Some(last) = last_x86 {
        for (i, line) in lines[..header_end].iter().enumerate().skip(last + 1) {
            if line.split_whitespace().next() == Some("set") {
                keep[i] = false;
            }
        }
    }
    let mut out = String::with_capacity(text.len());
    for (line, keep) in lines.iter().zip(keep) {
        if keep {
            out.push_str(line);
        }
        out.push('\n');
    }
    (out, header)
}

/// One ISA to run a file on, or the reason it is skipped.
pub enum Target {
    Run { label: String, isa: OwnedTargetIsa },
    Skip { label: String, reason: String },
}

/// The ISAs of the parsed file rebuilt for the host. With `baseline_without_target`, a file with
/// no `target` line at all gets a baseline x86_64 with its shared settings (for tools that
/// compile every file; the runner never compiles a file that names no x86_64 target).
pub fn host_targets(spec: &IsaSpec, header: &Header, baseline_without_target: bool) -> Vec<Target> {
    let host_flags = match host_isa_flags() {
        Ok(f) => f,
        Err(e) => {
            return vec![Target::Skip {
                label: "host".into(),
                reason: e,
            }];
        }
    };
    match spec {
        IsaSpec::Some(isas) => isas
            .iter()
            .filter(|isa| isa.triple().architecture == Architecture::X86_64)
            .map(|isa| rebuild(isa.flags(), Some(&**isa), &host_flags))
            .collect(),
        IsaSpec::None(flags) if baseline_without_target && header.targets.is_empty() => {
            vec![rebuild(flags, None, &host_flags)]
        }
        IsaSpec::None(_) => vec![Target::Skip {
            label: "file".into(),
            reason: if header.targets.is_empty() {
                "no target line".into()
            } else {
                format!("no x86_64 target (targets: {})", header.targets.join(", "))
            },
        }],
    }
}

/// The first of [`host_targets`] that runs on this host: one ISA for tools that compile a file
/// once rather than per target.
pub fn first_runnable(
    spec: &IsaSpec,
    header: &Header,
    baseline_without_target: bool,
) -> Result<OwnedTargetIsa, String> {
    host_targets(spec, header, baseline_without_target)
        .into_iter()
        .find_map(|t| match t {
            Target::Run { isa, .. } => Some(isa),
            Target::Skip { .. } => None,
        })
        .ok_or_else(|| "no x86_64 target runnable on this host".to_owned())
}

/// Boolean ISA flags the host supports, as cranelift-native infers them.
fn host_isa_flags() -> Result<HashMap<&'static str, bool>, String> {
    let builder = cranelift_native::builder_with_options(true).map_err(str::to_owned)?;
    let isa = builder
        .finish(Flags::new(settings::builder()))
        .map_err(|e| format!("host ISA: {e}"))?;
    Ok(isa
        .isa_flags()
        .iter()
        .filter_map(|v| Some((v.name, v.as_bool()?)))
        .collect())
}

fn rebuild(
    shared: &Flags,
    file_isa: Option<&dyn TargetIsa>,
    host_flags: &HashMap<&'static str, bool>,
) -> Target {
    let requested: Vec<settings::Value> = file_isa.map(|i| i.isa_flags()).unwrap_or_default();
    let label = {
        let on: Vec<&str> = requested
            .iter()
            .filter(|v| v.as_bool() == Some(true))
            .map(|v| v.name)
            .collect();
        if on.is_empty() {
            "x86_64".to_owned()
        } else {
            format!("x86_64 {}", on.join(" "))
        }
    };
    let missing: Vec<&str> = requested
        .iter()
        .filter(|v| v.as_bool() == Some(true) && host_flags.get(v.name) != Some(&true))
        .map(|v| v.name)
        .collect();
    if !missing.is_empty() {
        return Target::Skip {
            label,
            reason: format!("host lacks {}", missing.join(", ")),
        };
    }
    match build(shared, &requested) {
        Ok(isa) => Target::Run { label, isa },
        Err(reason) => Target::Skip { label, reason },
    }
}

fn build(shared: &Flags, requested: &[settings::Value]) -> Result<OwnedTargetIsa, String> {
    let mut fb = settings::builder();
    for v in shared.iter() {
        fb.set(v.name, &v.value_string())
            .map_err(|e| format!("setting {}: {e}", v.name))?;
    }
    fb.set("regalloc_checker", "true")
        .map_err(|e| format!("regalloc_checker: {e}"))?;
    let mut ib = cranelift_native::builder_with_options(false).map_err(str::to_owned)?;
    for v in requested {
        ib.set(v.name, &v.value_string())
            .map_err(|e| format!("ISA setting {}: {e}", v.name))?;
    }
    ib.finish(Flags::new(fb))
        .map_err(|e| format!("building the ISA: {e}"))
}

/// The host ISA with default shared settings and `regalloc_checker` on: what the CLI uses for
/// CLIF that it compiles outside a test file's own settings.
pub fn default_host_isa() -> Result<OwnedTargetIsa, String> {
    let mut fb = settings::builder();
    fb.set("opt_level", "speed").map_err(|e| e.to_string())?;
    fb.set("regalloc_checker", "true")
        .map_err(|e| e.to_string())?;
    cranelift_native::builder()
        .map_err(str::to_owned)?
        .finish(Flags::new(fb))
        .map_err(|e| e.to_string())
}
