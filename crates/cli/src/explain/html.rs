//! The page `ragreedy explain --html` writes: one self-contained HTML file (inline SVG,
//! inline style, a few lines of inline script; nothing fetched) drawing each allocation
//! as a chart. Program points run across, with block boundaries marked and blocks shaded
//! by loop depth; the environment's registers run down, then any other register the
//! output uses, then the spill slots. Each piece of [`pieces::layout`] is one `<rect
//! class="piece">` in its location's row, labelled with its vreg; moves are marked where
//! they happen (store, reload, register move). Hovering a piece shows, in its `<title>`
//! and in the side box, the observer's decisions about the intervals of its vreg that
//! overlap it. Beside the page goes `<stem>.pieces.json`, the drawn pieces and the
//! output's operand allocations, for tools and tests.

use super::pieces::{self, Layout, MoveKind, Piece};
use super::{Allocated, Loaded};
use regalloc_greedy::Event;
use regalloc2::{Allocation, Function, MachineEnv, PReg, RegClass, VReg};
use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::Path;

const LEFT: f64 = 70.0;
const ROW_H: f64 = 14.0;
const HEADER_H: f64 = 34.0;
const PANEL_GAP: f64 = 24.0;
/// Decision lines shown per piece; the rest are counted.
const MAX_DECISIONS: usize = 60;

/// One row of a panel: a location and what kind of location it is.
struct Row {
    loc: Allocation,
    kind: &'static str,
}

/// The environment's allocatable registers, class by class, preferred first.
pub fn env_registers(env: &MachineEnv) -> Vec<PReg> {
    let mut regs = Vec::new();
    for class in [RegClass::Int, RegClass::Float, RegClass::Vector] {
        let c = class as usize;
        regs.extend(env.preferred_regs_by_class[c]);
        regs.extend(env.non_preferred_regs_by_class[c]);
    }
    regs
}

fn rows_for(env: &MachineEnv, layout: &Layout, out: &regalloc2::Output) -> Vec<Row> {
    let env_regs = env_registers(env);
    let mut rows: Vec<Row> = env_regs
        .iter()
        .map(|&r| Row {
            loc: Allocation::reg(r),
            kind: "reg",
        })
        .collect();
    let mut seen: Vec<Allocation> = layout
        .pieces
        .iter()
        .map(|p| p.loc)
        .chain(layout.moves.iter().flat_map(|m| [m.from, m.to]))
        .chain(out.allocs.iter().copied())
        .filter(|a| !a.is_none())
        .collect();
    seen.sort_by_key(|a| (a.is_stack(), a.bits()));
    seen.dedup();
    for a in seen {
        match a.as_reg() {
            Some(r) if !env_regs.contains(&r) => rows.push(Row {
                loc: a,
                kind: "other",
            }),
            Some(_) => {}
            None => rows.push(Row {
                loc: a,
                kind: "slot",
            }),
        }
    }
    rows
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

fn color(v: VReg) -> String {
    let hue = (v.vreg() * 47) % 360;
    format!("hsl({hue},55%,72%)")
}

/// The decisions about `p`: events on intervals of its vreg whose extent overlaps it.
struct Decisions<'e> {
    /// Interval → (vreg, first point, end point).
    extent: HashMap<u32, (VReg, u32, u32)>,
    events: &'e [Event],
}

impl<'e> Decisions<'e> {
    fn new(events: &'e [Event]) -> Self {
        let mut extent = HashMap::new();
        for e in events {
            match *e {
                Event::Dequeue {
                    interval,
                    vreg,
                    start,
                    end,
                    ..
                }
                | Event::SplitProduct {
                    interval,
                    vreg,
                    start,
                    end,
                    ..
                } => {
                    extent.insert(interval, (vreg, start, end));
                }
                Event::ReloadPiece {
                    interval,
                    vreg,
                    inst,
                    ..
                } => {
                    extent.insert(interval, (vreg, 2 * inst, 2 * inst + 2));
                }
                _ => {}
            }
        }
        Decisions { extent, events }
    }

    fn about(&self, p: &Piece) -> String {
        let mut s = String::new();
        let mut n = 0;
        for e in self.events {
            let relevant = self
                .extent
                .get(&e.interval())
                .is_some_and(|&(v, start, end)| v == p.vreg && start < p.end && p.start < end);
            if relevant {
                if n < MAX_DECISIONS {
                    let _ = writeln!(s, "{}", e.to_string().trim_start());
                }
                n += 1;
            }
        }
        if n > MAX_DECISIONS {
            let _ = writeln!(s, "... {} more", n - MAX_DECISIONS);
        }
        s
    }
}

struct Geometry {
    points: u32,
    px_per_point: f64,
}

impl Geometry {
    fn x(&self, p: u32) -> f64 {
        LEFT + f64::from(p) * self.px_per_point
    }
    /// Wide enough for the chart and for the panel titles.
    fn width(&self) -> f64 {
        (self.x(self.points) + 10.0).max(760.0)
    }
}

/// Draws one allocation at vertical offset `top`; returns the SVG and its height.
fn panel(
    s: &mut String,
    loaded: &Loaded,
    a: &Allocated,
    layout: &Layout,
    g: &Geometry,
    top: f64,
) -> f64 {
    let f = &loaded.func;
    let rows = rows_for(&loaded.env, layout, &a.out);
    let row_of: HashMap<Allocation, usize> =
        rows.iter().enumerate().map(|(k, r)| (r.loc, k)).collect();
    let body_top = top + HEADER_H;
    let height = HEADER_H + rows.len() as f64 * ROW_H + 14.0;
    let y = |k: usize| body_top + k as f64 * ROW_H;
    let _ = writeln!(s, r##"<g class="panel" data-allocator="{}">"##, a.allocator);
    let _ = writeln!(
        s,
        r##"<text x="4" y="{:.1}" class="panel-title">{}: weighted cost {} (moves {}, spills {}, reloads {}, callee-saved {})</text>"##,
        top + 13.0,
        a.allocator,
        a.cost.weighted,
        a.cost.parts.moves,
        a.cost.parts.spills,
        a.cost.parts.reloads,
        a.cost.parts.callee_saved
    );
    // Blocks: shaded by loop depth, boundaries marked and named.
    let depths = ragreedy_testkit::cost::loop_depths(f);
    for b in 0..f.num_blocks() {
        let r = f.block_insns(regalloc2::Block::new(b));
        if r.len() == 0 {
            continue;
        }
        let (x0, x1) = (
            g.x(2 * r.first().index() as u32),
            g.x(2 * r.last().index() as u32 + 2),
        );
        let depth = depths.get(b).copied().unwrap_or(0);
        if depth > 0 {
            let _ = writeln!(
                s,
                r##"<rect class="loop" data-depth="{depth}" x="{x0:.1}" y="{body_top:.1}" width="{:.1}" height="{:.1}" fill="#e8c070" fill-opacity="{:.2}"/>"##,
                x1 - x0,
                rows.len() as f64 * ROW_H,
                (0.3 * f64::from(depth)).min(0.8)
            );
        }
        let name = if depth > 0 {
            format!("b{b} (loop depth {depth})")
        } else {
            format!("b{b}")
        };
        let _ = writeln!(
            s,
            r##"<line class="block-boundary" x1="{x0:.1}" y1="{:.1}" x2="{x0:.1}" y2="{:.1}" stroke="#555" stroke-width="1"><title>{name}, inst{} to inst{}</title></line>"##,
            top + 18.0,
            body_top + rows.len() as f64 * ROW_H,
            r.first().index(),
            r.last().index()
        );
        // Names where they fit; narrow blocks are named by their boundary's tooltip.
        if x1 - x0 >= 16.0 {
            let _ = writeln!(
                s,
                r##"<text x="{:.1}" y="{:.1}" class="block-label">b{b}</text>"##,
                x0 + 2.0,
                top + 28.0,
            );
        }
    }
    // Instruction numbers under the chart.
    let step = [1u32, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000]
        .into_iter()
        .find(|&n| f64::from(2 * n) * g.px_per_point >= 40.0)
        .unwrap_or(10_000);
    let bottom = body_top + rows.len() as f64 * ROW_H;
    for i in (0..g.points / 2).step_by(step as usize) {
        let _ = writeln!(
            s,
            r##"<text x="{:.1}" y="{:.1}" class="tick">{i}</text>"##,
            g.x(2 * i),
            bottom + 11.0
        );
    }
    for (k, r) in rows.iter().enumerate() {
        let _ = writeln!(
            s,
            r##"<g class="row" data-loc="{}" data-kind="{}"><text x="4" y="{:.1}" class="row-label">{}</text><line x1="{LEFT}" y1="{:.1}" x2="{:.1}" y2="{:.1}" stroke="#ddd"/></g>"##,
            r.loc,
            r.kind,
            y(k) + ROW_H - 3.0,
            r.loc,
            y(k) + ROW_H,
            g.x(g.points),
            y(k) + ROW_H
        );
    }
    let decisions = a.events.as_deref().map(Decisions::new);
    for p in &layout.pieces {
        let Some(&k) = row_of.get(&p.loc) else {
            continue;
        };
        let (x0, x1) = (g.x(p.start), g.x(p.end));
        let mut title = format!(
            "{} in {}, points [{}, {}) (inst{} to inst{})\n",
            p.vreg,
            p.loc,
            p.start,
            p.end,
            p.start / 2,
            (p.end - 1) / 2
        );
        if let Some(d) = &decisions {
            let about = d.about(p);
            if about.is_empty() {
                title.push_str("no decision recorded for this stretch\n");
            } else {
                title.push_str(&about);
            }
        }
        let _ = write!(
            s,
            r##"<rect class="piece" data-vreg="{}" data-loc="{}" data-start="{}" data-end="{}" x="{x0:.1}" y="{:.1}" width="{:.1}" height="{:.1}" fill="{}" stroke="#333" stroke-width="0.5"><title>{}</title></rect>"##,
            p.vreg,
            p.loc,
            p.start,
            p.end,
            y(k) + 1.0,
            (x1 - x0).max(1.0),
            ROW_H - 2.0,
            color(p.vreg),
            escape(&title)
        );
        let label = p.vreg.to_string();
        if x1 - x0 >= 6.0 * label.len() as f64 + 2.0 {
            let _ = write!(
                s,
                r##"<text class="piece-label" x="{:.1}" y="{:.1}">{label}</text>"##,
                x0 + 2.0,
                y(k) + ROW_H - 3.5
            );
        }
        s.push('\n');
    }
    for m in &layout.moves {
        let (Some(&kf), Some(&kt)) = (row_of.get(&m.from), row_of.get(&m.to)) else {
            continue;
        };
        let x = g.x(m.point);
        let (class, colour) = match m.kind {
            MoveKind::Move => ("move", "#444"),
            MoveKind::Spill => ("spill", "#c0392b"),
            MoveKind::Reload => ("reload", "#2060c0"),
        };
        let (yf, yt) = (y(kf) + ROW_H / 2.0, y(kt) + ROW_H / 2.0);
        let v = m.vreg.map_or("?".to_string(), |v| v.to_string());
        let _ = writeln!(
            s,
            r##"<g class="marker {class}"><title>{class} {v}: {} -> {} at point {}</title><line x1="{x:.1}" y1="{yf:.1}" x2="{x:.1}" y2="{yt:.1}" stroke="{colour}" stroke-width="1.2"/><circle cx="{x:.1}" cy="{yf:.1}" r="2" fill="{colour}"/><path d="M{:.1},{:.1} l4,{} l-8,0 z" fill="{colour}"/></g>"##,
            m.from,
            m.to,
            m.point,
            x,
            yt,
            if yt >= yf { -6 } else { 6 },
        );
    }
    s.push_str("</g>\n");
    height
}

/// Writes the page to `path` and the pieces to `<stem>.pieces.json` beside it.
pub fn write(path: &Path, loaded: &Loaded, panels: &[&Allocated]) -> Result<(), String> {
    let f = &loaded.func;
    let fixed_stack = &loaded.env.fixed_stack_slots;
    let layouts: Vec<Layout> = panels
        .iter()
        .map(|a| pieces::layout(f, &a.out, fixed_stack))
        .collect();
    let points = 2 * f.num_insts() as u32;
    let g = Geometry {
        points,
        px_per_point: (1400.0 / f64::from(points.max(1))).clamp(2.0, 48.0),
    };
    let mut svg = String::new();
    let mut top = 0.0;
    for (a, layout) in panels.iter().zip(&layouts) {
        top += panel(&mut svg, loaded, a, layout, &g, top) + PANEL_GAP;
    }
    let page = format!(
        r##"<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>ragreedy explain: {name}</title>
<style>
body {{ font-family: sans-serif; margin: 12px; }}
svg text {{ font-family: monospace; font-size: 10px; }}
svg .panel-title {{ font-family: sans-serif; font-size: 12px; font-weight: bold; }}
svg .piece-label {{ pointer-events: none; font-size: 9px; }}
svg .piece:hover {{ stroke: #000; stroke-width: 2; }}
#info {{ position: sticky; top: 0; z-index: 1; max-width: 900px; height: 9em; overflow: auto; margin: 0 0 8px 0;
  background: #fffff0; border: 1px solid #999; padding: 6px; font-size: 11px; white-space: pre-wrap; }}
.legend span {{ margin-right: 14px; }}
</style></head><body>
<h3>{name}: {blocks} blocks, {insts} instructions, {vregs} vregs</h3>
<p class="legend"><span>bars: a vreg in a register or spill slot</span><span style="color:#c0392b">&#9660; spill (store)</span><span style="color:#2060c0">&#9650; reload</span><span style="color:#444">| register move</span><span style="background:#e8c070">&nbsp;loop&nbsp;</span> shading deepens with loop depth</p>
<pre id="info">Hover a bar to see the decisions that placed it.</pre>
<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0}" height="{top:.0}" viewBox="0 0 {width:.0} {top:.0}">
{svg}</svg>
<script>
// Shows a bar's decisions in the side box; `#piece=N` in the address preselects the N-th bar.
const info = document.getElementById('info');
const bars = document.querySelectorAll('rect.piece');
function show(r) {{ info.textContent = r.querySelector('title').textContent; }}
bars.forEach(r => r.addEventListener('mouseover', () => show(r)));
const m = location.hash.match(/piece=(\d+)/);
if (m && bars[+m[1]]) {{ show(bars[+m[1]]); bars[+m[1]].setAttribute('stroke-width', '2.5'); }}
</script>
</body></html>
"##,
        name = escape(&loaded.name),
        blocks = f.num_blocks(),
        insts = f.num_insts(),
        vregs = f.num_vregs(),
        width = g.width(),
    );
    std::fs::write(path, page).map_err(|e| format!("{}: {e}", path.display()))?;
    let sidecar = sidecar(loaded, panels, &layouts);
    let json_path = path.with_extension("pieces.json");
    std::fs::write(&json_path, sidecar).map_err(|e| format!("{}: {e}", json_path.display()))
}

/// The drawn pieces and, straight from each output, every operand's allocation.
fn sidecar(loaded: &Loaded, panels: &[&Allocated], layouts: &[Layout]) -> String {
    let f = &loaded.func;
    let panels: Vec<serde_json::Value> = panels
        .iter()
        .zip(layouts)
        .map(|(a, layout)| {
            let pieces: Vec<serde_json::Value> = layout
                .pieces
                .iter()
                .map(|p| {
                    serde_json::json!({
                        "vreg": p.vreg.to_string(), "loc": p.loc.to_string(),
                        "start": p.start, "end": p.end,
                    })
                })
                .collect();
            let mut operands = Vec::new();
            for i in 0..f.num_insts() {
                let inst = regalloc2::Inst::new(i);
                for (op, alloc) in f.inst_operands(inst).iter().zip(a.out.inst_allocs(inst)) {
                    if op.as_fixed_nonallocatable().is_none() {
                        operands.push(serde_json::json!({
                            "inst": i, "vreg": op.vreg().to_string(), "loc": alloc.to_string(),
                        }));
                    }
                }
            }
            serde_json::json!({
                "allocator": a.allocator.name(),
                "pieces": pieces,
                "operands": operands,
            })
        })
        .collect();
    let regs: Vec<String> = env_registers(&loaded.env)
        .iter()
        .map(|r| r.to_string())
        .collect();
    serde_json::json!({ "function": loaded.name, "registers": regs, "panels": panels }).to_string()
}
