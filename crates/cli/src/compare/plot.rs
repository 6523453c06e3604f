//! The SVG plots of `ragreedy report` (plotters, SVG backend only: text is written as SVG
//! `<text>` with a generic font family, so no system font is read at build or run time):
//! allocation time against function size on `scale` (log-log), the distribution of
//! per-function weighted-cost ratios against ion, and code speed per bench program.

use super::codespeed::ProgramSpeed;
use super::{CorpusResult, cost_ratio, speed_ratio};
use plotters::coord::Shift;
use plotters::prelude::*;
use ragreedy_jit::Allocator;
use ragreedy_wasm::bench::ModuleBench;
use std::path::Path;

type Res = Result<(), String>;

fn color(a: Allocator) -> RGBColor {
    match a {
        Allocator::Greedy => RGBColor(0xd6, 0x27, 0x28),
        Allocator::Basic => RGBColor(0x94, 0x67, 0xbd),
        Allocator::LinearScan => RGBColor(0x8c, 0x56, 0x4b),
        Allocator::Irc => RGBColor(0xe3, 0x77, 0xc2),
        Allocator::Ion => RGBColor(0x1f, 0x77, 0xb4),
        Allocator::Fastalloc => RGBColor(0x2c, 0xa0, 0x2c),
    }
}

/// Axis numbers without noise: 1k / 10k / 1M for sizes, up to 3 significant digits else.
fn short_num(x: f64) -> String {
    if x >= 1e6 {
        format!("{}M", x / 1e6)
    } else if x >= 1e3 {
        format!("{}k", x / 1e3)
    } else {
        let s = format!("{x:.3}");
        s.trim_end_matches('0').trim_end_matches('.').to_owned()
    }
}

/// The label of a horizontal-bar row: row i (from the top) of `names` is drawn at
/// y = len - 1 - i; positions between rows get no label.
fn row_label(names: &[String], y: f64) -> String {
    let i = y.round();
    if (y - i).abs() < 1e-6 && i >= 0.0 && (i as usize) < names.len() {
        names[names.len() - 1 - i as usize].clone()
    } else {
        String::new()
    }
}

fn err(e: impl std::fmt::Display) -> String {
    e.to_string()
}

fn finish(root: DrawingArea<SVGBackend<'_>, Shift>) -> Res {
    root.present().map_err(err)
}

/// Log-log plot of median allocation time (ms) against instructions, one line per allocator,
/// over the original shape of the corpus (`scale-N` functions).
pub fn scale_times(path: &Path, r: &CorpusResult, allocators: &[Allocator]) -> Res {
    let pts = |a: Allocator| -> Vec<(f64, f64)> {
        r.functions
            .iter()
            .filter(|f| f.name.starts_with("scale-"))
            .filter_map(|f| Some((f.insts as f64, f.get(a)?.time_ns? as f64 / 1e6)))
            .collect()
    };
    let all: Vec<(f64, f64)> = allocators.iter().flat_map(|&a| pts(a)).collect();
    if all.is_empty() {
        return Err("no scale measurements".into());
    }
    let (xmin, xmax) = all
        .iter()
        .fold((f64::MAX, 0f64), |(lo, hi), p| (lo.min(p.0), hi.max(p.0)));
    let (ymin, ymax) = all
        .iter()
        .fold((f64::MAX, 0f64), |(lo, hi), p| (lo.min(p.1), hi.max(p.1)));
    let root = SVGBackend::new(path, (760, 500)).into_drawing_area();
    root.fill(&WHITE).map_err(err)?;
    let mut chart = ChartBuilder::on(&root)
        .caption(
            "Allocation time vs function size (scale corpus)",
            ("sans-serif", 20),
        )
        .margin(15)
        .x_label_area_size(45)
        .y_label_area_size(65)
        .build_cartesian_2d(
            (xmin / 1.5..xmax * 1.5).log_scale(),
            (ymin / 2.0..ymax * 2.0).log_scale(),
        )
        .map_err(err)?;
    chart
        .configure_mesh()
        .light_line_style(TRANSPARENT)
        .x_desc("instructions")
        .y_desc("median time (ms)")
        .x_label_formatter(&|x| short_num(*x))
        .y_label_formatter(&|y| short_num(*y))
        .draw()
        .map_err(err)?;
    for &a in allocators {
        let p = pts(a);
        let c = color(a);
        chart
            .draw_series(LineSeries::new(p.clone(), c.stroke_width(2)))
            .map_err(err)?
            .label(a.name())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], c.stroke_width(2)));
        chart
            .draw_series(p.into_iter().map(|pt| Circle::new(pt, 4, c.filled())))
            .map_err(err)?;
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()
        .map_err(err)?;
    drop(chart);
    finish(root)
}

/// Per-function cost ratios against ion, sorted: x = fraction of functions, y = ratio (log
/// scale), one line per (corpus, allocator). A point below 1 is a function where the
/// allocator's allocation is cheaper than ion's.
pub fn cost_ratio_distribution(
    path: &Path,
    corpora: &[&CorpusResult],
    allocators: &[Allocator],
) -> Res {
    // (label, colour, corpus index for the line style, sorted points)
    type Series = (String, RGBColor, usize, Vec<(f64, f64)>);
    let dashes = [0usize, 1, 2];
    let mut series: Vec<Series> = Vec::new();
    for (ci, r) in corpora.iter().enumerate() {
        for &a in allocators.iter().filter(|&&a| a != Allocator::Ion) {
            let mut v: Vec<f64> = r
                .functions
                .iter()
                .filter_map(|f| cost_ratio(f, a))
                .collect();
            if v.is_empty() {
                continue;
            }
            v.sort_by(f64::total_cmp);
            let n = v.len() as f64;
            let pts = v
                .iter()
                .enumerate()
                .map(|(i, &y)| ((i as f64 + 0.5) / n, y))
                .collect();
            series.push((
                format!("{} / {}", a.name(), r.corpus),
                color(a),
                dashes[ci % 3],
                pts,
            ));
        }
    }
    if series.is_empty() {
        return Err("no cost ratios".into());
    }
    let ys = series.iter().flat_map(|s| s.3.iter().map(|p| p.1));
    let (ymin, ymax) = ys.fold((f64::MAX, 0f64), |(lo, hi), y| (lo.min(y), hi.max(y)));
    let root = SVGBackend::new(path, (760, 500)).into_drawing_area();
    root.fill(&WHITE).map_err(err)?;
    let mut chart = ChartBuilder::on(&root)
        .caption(
            "Per-function weighted-cost ratio vs ion (sorted)",
            ("sans-serif", 20),
        )
        .margin(15)
        .x_label_area_size(45)
        .y_label_area_size(65)
        .build_cartesian_2d(
            0f64..1f64,
            (ymin.min(0.9) / 1.2..ymax.max(1.1) * 1.2).log_scale(),
        )
        .map_err(err)?;
    chart
        .configure_mesh()
        .light_line_style(TRANSPARENT)
        .x_desc("fraction of functions")
        .y_desc("(cost + 1) / (ion cost + 1)")
        .y_label_formatter(&|y| short_num(*y))
        .draw()
        .map_err(err)?;
    chart
        .draw_series(LineSeries::new(
            vec![(0.0, 1.0), (1.0, 1.0)],
            BLACK.stroke_width(1),
        ))
        .map_err(err)?;
    for (label, c, dash, pts) in series {
        // Dashing by corpus: solid, then dotted (points), then sparse points.
        let style = c.stroke_width(2);
        match dash {
            0 => {
                chart
                    .draw_series(LineSeries::new(pts, style))
                    .map_err(err)?
                    .label(label)
                    .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], style));
            }
            _ => {
                let step = if dash == 1 { 1 } else { 3 };
                let size = if dash == 1 { 1 } else { 2 };
                let pts: Vec<_> = pts.into_iter().step_by(step).collect();
                chart
                    .draw_series(
                        pts.into_iter()
                            .map(move |p| Circle::new(p, size, c.filled())),
                    )
                    .map_err(err)?
                    .label(label)
                    .legend(move |(x, y)| Circle::new((x + 10, y), 3, c.filled()));
            }
        }
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()
        .map_err(err)?;
    drop(chart);
    finish(root)
}

/// Horizontal bars: code-speed ratio against ion per bench program (one bar per non-ion
/// allocator), with the 1.0 line.
pub fn code_speed(path: &Path, progs: &[ProgramSpeed], allocators: &[Allocator]) -> Res {
    let others: Vec<Allocator> = allocators
        .iter()
        .copied()
        .filter(|&a| a != Allocator::Ion)
        .collect();
    let rows: Vec<&ProgramSpeed> = progs.iter().filter(|p| p.skipped.is_none()).collect();
    if rows.is_empty() || others.is_empty() {
        return Err("no code-speed measurements".into());
    }
    let ratios: Vec<f64> = rows
        .iter()
        .flat_map(|p| others.iter().filter_map(|&a| speed_ratio(p, a)))
        .collect();
    // Log scale: fastalloc's ratios reach several times ion's, greedy's stay near 1.
    let lo = ratios.iter().copied().fold(1.0f64, f64::min).min(0.9) / 1.1;
    let hi = ratios.iter().copied().fold(1.0f64, f64::max).max(1.1) * 1.1;
    let n = rows.len();
    let height = 80 + 22 * n as u32;
    let root = SVGBackend::new(path, (760, height)).into_drawing_area();
    root.fill(&WHITE).map_err(err)?;
    let names: Vec<String> = rows.iter().map(|p| p.program.clone()).collect();
    let mut chart = ChartBuilder::on(&root)
        .caption(
            "Code speed vs ion (time per call; < 1 is faster)",
            ("sans-serif", 20),
        )
        .margin(15)
        .x_label_area_size(40)
        .y_label_area_size(130)
        .build_cartesian_2d((lo..hi).log_scale(), -0.5f64..(n as f64 - 0.5))
        .map_err(err)?;
    let names2 = names.clone();
    chart
        .configure_mesh()
        .disable_y_mesh()
        .y_labels(n + 1)
        .y_label_formatter(&move |y| row_label(&names2, *y))
        .light_line_style(TRANSPARENT)
        .x_label_formatter(&|x| short_num(*x))
        .x_desc("time ratio vs ion (log scale)")
        .draw()
        .map_err(err)?;
    let k = others.len() as f64;
    for (j, &a) in others.iter().enumerate() {
        let c = color(a);
        let bars: Vec<Rectangle<(f64, f64)>> = rows
            .iter()
            .enumerate()
            .filter_map(|(i, p)| {
                let r = speed_ratio(p, a)?;
                let y0 = (n - 1 - i) as f64 - 0.4 + 0.8 * j as f64 / k;
                let y1 = y0 + 0.8 / k;
                Some(Rectangle::new(
                    [(1.0f64.min(r), y0), (1.0f64.max(r), y1)],
                    c.filled(),
                ))
            })
            .collect();
        chart
            .draw_series(bars)
            .map_err(err)?
            .label(a.name())
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 15, y + 5)], c.filled()));
    }
    chart
        .draw_series(LineSeries::new(
            vec![(1.0, -0.5), (1.0, n as f64 - 0.5)],
            BLACK.stroke_width(1),
        ))
        .map_err(err)?;
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()
        .map_err(err)?;
    drop(chart);
    finish(root)
}

/// Run-time ratio against ion per Wasm benchmark: a point at the median ratio per non-ion
/// allocator, with a noise bar from its fastest to its slowest iteration (each over ion's
/// median), and ion's own spread drawn in grey around 1.0.
pub fn wasm_run_ratio(path: &Path, modules: &[ModuleBench], allocators: &[Allocator]) -> Res {
    let others: Vec<Allocator> = allocators
        .iter()
        .copied()
        .filter(|&a| a != Allocator::Ion)
        .collect();
    let ion_median = |m: &ModuleBench| -> Option<f64> {
        let r = m.get(Allocator::Ion).filter(|r| !r.failed())?;
        Some(r.run_spread()?.median.as_secs_f64())
    };
    // (ratio, lo, hi) of allocator `a` on module `m`.
    let bar = |m: &ModuleBench, a: Allocator| -> Option<(f64, f64, f64)> {
        let base = ion_median(m)?;
        let r = m.get(a).filter(|r| !r.failed())?.run_spread()?;
        Some((
            r.median.as_secs_f64() / base,
            r.min.as_secs_f64() / base,
            r.max.as_secs_f64() / base,
        ))
    };
    let rows: Vec<&ModuleBench> = modules.iter().filter(|m| ion_median(m).is_some()).collect();
    if rows.is_empty() {
        return Err("no Wasm run-time measurements".into());
    }
    let mut extent: Vec<f64> = vec![1.0];
    for m in &rows {
        for &a in allocators {
            if let Some((_, lo, hi)) = bar(m, a) {
                extent.extend([lo, hi]);
            }
        }
    }
    let lo = extent.iter().copied().fold(f64::MAX, f64::min).min(0.95) / 1.05;
    let hi = extent.iter().copied().fold(0.0, f64::max).max(1.05) * 1.05;
    let n = rows.len();
    let root = SVGBackend::new(path, (760, 80 + 22 * n as u32)).into_drawing_area();
    root.fill(&WHITE).map_err(err)?;
    let names: Vec<String> = rows.iter().map(|m| m.name.clone()).collect();
    let mut chart = ChartBuilder::on(&root)
        .caption(
            "Wasm run time vs ion (bench window; < 1 is faster)",
            ("sans-serif", 20),
        )
        .margin(15)
        .x_label_area_size(40)
        .y_label_area_size(190)
        .build_cartesian_2d(lo..hi, -0.5f64..(n as f64 - 0.5))
        .map_err(err)?;
    chart
        .configure_mesh()
        .disable_y_mesh()
        .y_labels(n + 1)
        .y_label_formatter(&move |y| row_label(&names, *y))
        .light_line_style(TRANSPARENT)
        .x_label_formatter(&|x| short_num(*x))
        .x_desc("run time / ion's median (bars: min..max of the iterations)")
        .draw()
        .map_err(err)?;
    let row_y = |i: usize| (n - 1 - i) as f64;
    let grey = RGBColor(0xaa, 0xaa, 0xaa);
    chart
        .draw_series(rows.iter().enumerate().filter_map(|(i, m)| {
            let (_, lo, hi) = bar(m, Allocator::Ion)?;
            let y = row_y(i) + 0.2;
            Some(PathElement::new(
                vec![(lo, y), (hi, y)],
                grey.stroke_width(3),
            ))
        }))
        .map_err(err)?
        .label("ion (spread)")
        .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 15, y)], grey.stroke_width(3)));
    let k = others.len().max(1) as f64;
    for (j, &a) in others.iter().enumerate() {
        let c = color(a);
        let y_of = move |i: usize| row_y(i) - 0.2 * j as f64 / k;
        chart
            .draw_series(rows.iter().enumerate().filter_map(|(i, m)| {
                let (_, lo, hi) = bar(m, a)?;
                Some(PathElement::new(
                    vec![(lo, y_of(i)), (hi, y_of(i))],
                    c.stroke_width(2),
                ))
            }))
            .map_err(err)?;
        chart
            .draw_series(rows.iter().enumerate().filter_map(|(i, m)| {
                let (r, _, _) = bar(m, a)?;
                Some(Circle::new((r, y_of(i)), 4, c.filled()))
            }))
            .map_err(err)?
            .label(a.name())
            .legend(move |(x, y)| Circle::new((x + 7, y), 4, c.filled()));
    }
    chart
        .draw_series(LineSeries::new(
            vec![(1.0, -0.5), (1.0, n as f64 - 0.5)],
            BLACK.stroke_width(1),
        ))
        .map_err(err)?;
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()
        .map_err(err)?;
    drop(chart);
    finish(root)
}
