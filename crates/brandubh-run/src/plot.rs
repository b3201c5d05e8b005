//! Learning-curve plots of a run, redrawn from its metrics after every iteration.
//!
//! One PNG with four panels against the iteration: training losses; results (self-play
//! win rates of White and Black, the unfinished rate and the evaluation scores against the
//! previous network and the baseline); mean self-play game length; self-play network
//! evaluations per second. Text is drawn with a subset of DejaVu Sans embedded in the
//! binary (`assets/`), so no system font or library is needed. The image is rendered in
//! memory, encoded with the `png` crate and written with
//! [`brandubh_fs::write_atomic`].
//!
//! The font and the PNG plumbing are public for the other plots of the project (the
//! ladder's, in `brandubh-eval`): [`FONT_FAMILY`] names the embedded font and
//! [`render_png_with`] runs a drawing on an in-memory image and encodes it.

use std::path::Path;
use std::sync::OnceLock;

use plotters::coord::Shift;
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use plotters::style::{FontStyle, register_font};

use crate::metrics::{IterationMetrics, SprtVerdict};
use brandubh_fs::FsError;

/// Default image size, in pixels.
pub const PLOT_SIZE: (u32, u32) = (1600, 1000);

/// The embedded font (see `assets/LICENSE-DejaVu.txt`).
static FONT: &[u8] = include_bytes!("../assets/DejaVuSans-subset.ttf");
/// The font family to draw text with inside [`render_png_with`]: the embedded DejaVu Sans
/// subset.
pub const FONT_FAMILY: &str = "sans-serif";
const FAMILY: &str = FONT_FAMILY;

/// Rendering failed (plotters' or png's message).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("cannot draw plot: {0}")]
pub struct RenderError(pub String);

/// A plot that could not be drawn or written.
#[derive(Debug, thiserror::Error)]
pub enum PlotError {
    /// Drawing failed.
    #[error("{}: {cause}", file.display())]
    Draw {
        /// The file being drawn.
        file: std::path::PathBuf,
        /// Why.
        cause: RenderError,
    },
    /// Writing failed.
    #[error(transparent)]
    Write(#[from] FsError),
}

fn register() -> Result<(), String> {
    static REGISTERED: OnceLock<Result<(), String>> = OnceLock::new();
    REGISTERED
        .get_or_init(|| {
            register_font(FAMILY, FontStyle::Normal, FONT)
                .map_err(|_| "the embedded font is invalid".to_owned())
        })
        .clone()
}

/// One line of a panel.
struct Series<'a> {
    label: &'a str,
    color: RGBColor,
    points: Vec<(f64, f64)>,
    /// Points without a line joining them (values that are not a curve over iterations).
    points_only: bool,
}

impl<'a> Series<'a> {
    fn new(
        label: &'a str,
        color: RGBColor,
        records: &[IterationMetrics],
        value: impl Fn(&IterationMetrics) -> Option<f64>,
    ) -> Series<'a> {
        let points = records
            .iter()
            .filter_map(|r| value(r).map(|v| (f64::from(r.iteration), v)))
            .filter(|(_, v)| v.is_finite())
            .collect();
        Series {
            label,
            color,
            points,
            points_only: false,
        }
    }

    /// The same points, not joined by a line.
    fn points_only(self) -> Series<'a> {
        Series {
            points_only: true,
            ..self
        }
    }
}

const BLUE_: RGBColor = RGBColor(31, 119, 180);
const ORANGE: RGBColor = RGBColor(255, 127, 14);
const GREEN_: RGBColor = RGBColor(44, 160, 44);
const RED_: RGBColor = RGBColor(214, 39, 40);
const PURPLE: RGBColor = RGBColor(148, 103, 189);
const GREY: RGBColor = RGBColor(127, 127, 127);
const DARK: RGBColor = RGBColor(40, 40, 40);

/// Pads a range so that a single value or a flat line is visible.
fn padded(min: f64, max: f64, floor_zero: bool) -> (f64, f64) {
    let span = max - min;
    let pad = if span > 0.0 {
        span * 0.08
    } else {
        min.abs().max(1.0) * 0.1
    };
    let lo = if floor_zero && min >= 0.0 {
        (min - pad).max(0.0)
    } else {
        min - pad
    };
    (lo, max + pad)
}

/// Width of the legend column at the right of each panel, in pixels.
const LEGEND_WIDTH: u32 = 210;

/// One panel: its title, its y axis (fixed, or fitted to the data) and its lines.
struct Panel<'a> {
    title: &'a str,
    y_label: &'a str,
    fixed_y: Option<(f64, f64)>,
    series: Vec<Series<'a>>,
}

/// The panels of the learning curves of `records`: four, and a fifth when a sequential
/// test gated some iteration ([`gating_panel`]).
fn panels(records: &[IterationMetrics]) -> Vec<Panel<'static>> {
    let mut panels = Vec::from(curves(records));
    if records.iter().any(|r| gate_of(r).is_some()) {
        panels.push(gating_panel(records));
    }
    panels
}

/// The sequential test that gated iteration `r`, if one did.
fn gate_of(r: &IterationMetrics) -> Option<SprtVerdict> {
    r.vs_previous.as_ref()?.sprt.map(|t| t.verdict)
}

/// How many matches each gating decision took, a point per iteration coloured by the
/// verdict.
fn gating_panel(records: &[IterationMetrics]) -> Panel<'static> {
    let decided = |verdict: SprtVerdict| {
        move |r: &IterationMetrics| {
            (gate_of(r) == Some(verdict))
                .then(|| r.vs_previous.as_ref().map(|m| f64::from(m.matches)))
                .flatten()
        }
    };
    Panel {
        title: "Gating by SPRT: matches each decision took",
        y_label: "matches vs previous",
        fixed_y: None,
        series: vec![
            Series::new(
                "H1: new network kept",
                GREEN_,
                records,
                decided(SprtVerdict::H1),
            )
            .points_only(),
            Series::new("H0: previous kept", RED_, records, decided(SprtVerdict::H0)).points_only(),
            Series::new(
                "inconclusive (maximum)",
                GREY,
                records,
                decided(SprtVerdict::Inconclusive),
            )
            .points_only(),
        ],
    }
}

/// The four panels every run has.
fn curves(records: &[IterationMetrics]) -> [Panel<'static>; 4] {
    let mut results = vec![
        Series::new("self-play: White wins", BLUE_, records, |r| {
            Some(r.white_win_rate)
        }),
        Series::new("self-play: Black wins", DARK, records, |r| {
            Some(r.black_win_rate)
        }),
        Series::new("self-play: unfinished", PURPLE, records, |r| {
            Some(r.unfinished_rate)
        }),
        Series::new("score vs previous", ORANGE, records, |r| {
            r.vs_previous.as_ref().map(|m| m.score())
        }),
        Series::new("score vs baseline", GREEN_, records, |r| {
            r.vs_baseline.as_ref().map(|m| m.score())
        }),
    ];
    // Only runs with sparring games show Black's share of them (the self-play lines above
    // leave them out); iterations without any have no point.
    if records.iter().any(|r| r.sparring_games > 0) {
        results.push(Series::new("sparring: Black wins", RED_, records, |r| {
            (r.sparring_games > 0)
                .then(|| f64::from(r.sparring_black_wins) / f64::from(r.sparring_games))
        }));
    }
    let mut losses = vec![
        Series::new("total", GREY, records, |r| Some(r.total_loss)),
        Series::new("policy (cross-entropy)", BLUE_, records, |r| {
            Some(r.policy_loss)
        }),
        Series::new("value (MSE)", ORANGE, records, |r| Some(r.value_loss)),
    ];
    if records.iter().any(|r| r.moves_left_loss.is_some()) {
        losses.push(Series::new("moves left (MSE)", PURPLE, records, |r| {
            r.moves_left_loss
        }));
    }
    [
        Panel {
            title: "Training loss",
            y_label: "loss",
            fixed_y: None,
            series: losses,
        },
        Panel {
            title: "Results",
            y_label: "rate / score",
            fixed_y: Some((0.0, 1.05)),
            series: results,
        },
        Panel {
            title: "Self-play game length",
            y_label: "mean plies per game",
            fixed_y: None,
            series: vec![Series::new("mean game length", RED_, records, |r| {
                Some(r.mean_game_length)
            })],
        },
        Panel {
            title: "Self-play throughput",
            y_label: "network evaluations / s",
            fixed_y: None,
            series: vec![Series::new("evaluations/s", GREEN_, records, |r| {
                Some(r.evaluations_per_s)
            })],
        },
    ]
}

/// The y range that shows every point of `series`, padded; (0, 1) without points.
fn data_range(series: &[Series<'_>]) -> (f64, f64) {
    let values = series.iter().flat_map(|s| s.points.iter().map(|p| p.1));
    let (lo, hi) = values.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
        (lo.min(v), hi.max(v))
    });
    if lo <= hi {
        padded(lo, hi, true)
    } else {
        (0.0, 1.0)
    }
}

/// As many decimals as a fifth of the range needs, the same for every tick.
fn tick_decimals(y_range: (f64, f64)) -> usize {
    let step = (y_range.1 - y_range.0) / 5.0;
    if step > 0.0 {
        (-step.log10().floor()).clamp(0.0, 6.0) as usize
    } else {
        0
    }
}

type Chart<'a, DB> = ChartContext<'a, DB, Cartesian2d<RangedCoordf64, RangedCoordf64>>;

/// The panel's caption, axes and grid.
fn draw_axes<'a, DB: DrawingBackend>(
    area: &'a DrawingArea<DB, Shift>,
    panel: &Panel<'_>,
    x_range: (f64, f64),
    y_range: (f64, f64),
) -> Result<Chart<'a, DB>, String> {
    let err = |e: &dyn std::fmt::Display| e.to_string();
    let decimals = tick_decimals(y_range);
    let mut chart = ChartBuilder::on(area)
        .caption(panel.title, (FAMILY, 22))
        .margin(12)
        .x_label_area_size(42)
        .y_label_area_size(68)
        .build_cartesian_2d(x_range.0..x_range.1, y_range.0..y_range.1)
        .map_err(|e| err(&e))?;
    chart
        .configure_mesh()
        .x_desc("iteration")
        .y_desc(panel.y_label)
        .label_style((FAMILY, 14))
        .axis_desc_style((FAMILY, 16))
        .x_label_formatter(&|x| format!("{x:.0}"))
        .y_label_formatter(&|y| format!("{y:.decimals$}"))
        .light_line_style(BLACK.mix(0.03))
        .bold_line_style(BLACK.mix(0.12))
        .draw()
        .map_err(|e| err(&e))?;
    Ok(chart)
}

/// One line with its points, and its entry in the legend column at height `legend_y`.
fn draw_series<DB: DrawingBackend>(
    chart: &mut Chart<'_, DB>,
    legend_area: &DrawingArea<DB, Shift>,
    s: &Series<'_>,
    legend_y: i32,
) -> Result<(), String> {
    let err = |e: &dyn std::fmt::Display| e.to_string();
    let color = s.color;
    if !s.points_only {
        chart
            .draw_series(LineSeries::new(
                s.points.iter().copied(),
                color.stroke_width(2),
            ))
            .map_err(|e| err(&e))?;
    }
    let radius = if s.points_only { 5 } else { 3 };
    chart
        .draw_series(
            s.points
                .iter()
                .map(|&p| Circle::new(p, radius, color.filled())),
        )
        .map_err(|e| err(&e))?;
    legend_area
        .draw(&PathElement::new(
            vec![(4, legend_y), (30, legend_y)],
            color.stroke_width(3),
        ))
        .map_err(|e| err(&e))?;
    legend_area
        .draw(&Text::new(
            s.label,
            (36, legend_y - 8),
            (FAMILY, 15).into_font().color(&BLACK),
        ))
        .map_err(|e| err(&e))?;
    Ok(())
}

/// "no data yet" in the middle of an empty panel.
fn draw_no_data<DB: DrawingBackend>(plot_area: &DrawingArea<DB, Shift>) -> Result<(), String> {
    let (w, h) = plot_area.dim_in_pixel();
    plot_area
        .draw(&Text::new(
            "no data yet",
            (w as i32 / 2 - 40, h as i32 / 2),
            (FAMILY, 16).into_font().color(&GREY),
        ))
        .map_err(|e| e.to_string())?;
    Ok(())
}

/// A panel: the chart on the left, the legend in a column at the right.
fn draw_panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    panel: &Panel<'_>,
    x_range: (f64, f64),
) -> Result<(), String> {
    let (width, _) = area.dim_in_pixel();
    let (plot_area, legend_area) = area.split_horizontally(width.saturating_sub(LEGEND_WIDTH));
    let y_range = panel.fixed_y.unwrap_or_else(|| data_range(&panel.series));
    let mut chart = draw_axes(&plot_area, panel, x_range, y_range)?;
    let mut legend_y = 60;
    for s in panel.series.iter().filter(|s| !s.points.is_empty()) {
        draw_series(&mut chart, &legend_area, s, legend_y)?;
        legend_y += 24;
    }
    if legend_y == 60 {
        draw_no_data(&plot_area)?;
    }
    Ok(())
}

/// The iterations on the x axis: first to last, widened around a single one.
fn iteration_range(records: &[IterationMetrics]) -> (f64, f64) {
    let (first, last) = records.iter().fold((u32::MAX, 0), |(a, b), r| {
        (a.min(r.iteration), b.max(r.iteration))
    });
    if records.is_empty() {
        (0.0, 1.0)
    } else if first == last {
        (f64::from(first) - 1.0, f64::from(last) + 1.0)
    } else {
        (f64::from(first), f64::from(last))
    }
}

/// Draws the learning curves of `records` into an RGB buffer of `size`: the title across
/// the top, then the four panels (two by two), and the gating panel, if there is one, across
/// the bottom third.
fn draw(
    records: &[IterationMetrics],
    title: &str,
    size: (u32, u32),
    buf: &mut [u8],
) -> Result<(), String> {
    let root = BitMapBackend::with_buffer(buf, size).into_drawing_area();
    let err = |e: &dyn std::fmt::Display| e.to_string();
    root.fill(&WHITE).map_err(|e| err(&e))?;
    let (header, body) = root.split_vertically(52);
    header
        .draw(&Text::new(
            title,
            (size.0 as i32 / 2, 12),
            (FAMILY, 28)
                .into_font()
                .color(&BLACK)
                .pos(Pos::new(HPos::Center, VPos::Top)),
        ))
        .map_err(|e| err(&e))?;
    let x_range = iteration_range(records);
    let mut panels = panels(records);
    let gating = (panels.len() > 4).then(|| panels.split_off(4));
    let (grid, bottom) = match &gating {
        Some(_) => {
            let (_, height) = body.dim_in_pixel();
            let (grid, bottom) = body.split_vertically(height * 2 / 3);
            (grid, Some(bottom))
        }
        None => (body, None),
    };
    for (area, panel) in grid.split_evenly((2, 2)).iter().zip(&panels) {
        draw_panel(area, panel, x_range)?;
    }
    if let (Some(area), Some(gating)) = (bottom, gating) {
        for panel in &gating {
            draw_panel(&area, panel, x_range)?;
        }
    }
    root.present().map_err(|e| err(&e))?;
    Ok(())
}

/// Renders the learning curves of `records` as a PNG of `size` pixels, titled `title`.
pub fn render_png(
    records: &[IterationMetrics],
    title: &str,
    size: (u32, u32),
) -> Result<Vec<u8>, RenderError> {
    render_png_with(size, |buf| draw(records, title, size, buf))
}

/// Runs `draw` on a white RGB image of `size` pixels (`size.0 × size.1 × 3` bytes, for
/// plotters' `BitMapBackend::with_buffer`) with [`FONT_FAMILY`] registered, and encodes
/// the result as PNG. `draw` reports failure as text (plotters' message).
pub fn render_png_with(
    size: (u32, u32),
    draw: impl FnOnce(&mut [u8]) -> Result<(), String>,
) -> Result<Vec<u8>, RenderError> {
    let (w, h) = size;
    register().map_err(RenderError)?;
    let mut buf = vec![255u8; w as usize * h as usize * 3];
    draw(&mut buf).map_err(RenderError)?;
    let mut png_bytes = Vec::new();
    let mut encoder = png::Encoder::new(&mut png_bytes, w, h);
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_depth(png::BitDepth::Eight);
    encoder.set_compression(png::Compression::Best);
    let mut writer = encoder
        .write_header()
        .map_err(|e| RenderError(e.to_string()))?;
    writer
        .write_image_data(&buf)
        .map_err(|e| RenderError(e.to_string()))?;
    writer.finish().map_err(|e| RenderError(e.to_string()))?;
    Ok(png_bytes)
}

/// Draws the learning curves of `records` ([`PLOT_SIZE`]) and writes them atomically to
/// `path` (usually `runs/NAME/learning_curves.png`).
pub fn write_plot(path: &Path, records: &[IterationMetrics], title: &str) -> Result<(), PlotError> {
    let bytes = render_png(records, title, PLOT_SIZE).map_err(|source| PlotError::Draw {
        file: path.to_path_buf(),
        cause: source,
    })?;
    brandubh_fs::write_atomic(path, &bytes)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::tests::fake;

    const PNG_SIGNATURE: [u8; 8] = [0x89, b'P', b'N', b'G', b'\r', b'\n', 0x1a, b'\n'];

    #[test]
    fn writes_a_png_from_a_few_metrics_lines() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("learning_curves.png");
        let records: Vec<_> = (1..=12).map(fake).collect();
        write_plot(&path, &records, "run quick").unwrap();
        let bytes = std::fs::read(&path).unwrap();
        assert_eq!(bytes[..8], PNG_SIGNATURE);
        assert!(bytes.len() > 10_000, "{} bytes", bytes.len());
        if let Ok(out) = std::env::var("BRANDUBH_PLOT_OUT") {
            std::fs::copy(&path, out).unwrap();
        }
    }

    #[test]
    fn black_wins_in_sparring_games_are_a_line_of_their_own_where_there_are_any() {
        let line = |records: &[IterationMetrics]| {
            panels(records)[1]
                .series
                .iter()
                .find(|s| s.label == "sparring: Black wins")
                .map(|s| s.points.clone())
        };
        let mut records: Vec<_> = (1..=4).map(fake).collect();
        assert_eq!(line(&records), None);
        records[1].sparring_games = 80;
        records[1].sparring_black_wins = 20;
        records[3].sparring_games = 40;
        records[3].sparring_black_wins = 30;
        assert_eq!(line(&records), Some(vec![(2.0, 0.25), (4.0, 0.75)]));
    }

    #[test]
    fn gating_decisions_get_a_panel_of_their_own_where_there_are_any() {
        let mut records: Vec<_> = (1..=6).map(fake).collect();
        assert_eq!(panels(&records).len(), 4);
        let verdicts = [
            SprtVerdict::H0,
            SprtVerdict::H1,
            SprtVerdict::Inconclusive,
            SprtVerdict::H1,
        ];
        for (r, (verdict, matches)) in records
            .iter_mut()
            .zip(verdicts.iter().zip([40, 23, 200, 61]))
        {
            let vs = r.vs_previous.as_mut().unwrap();
            vs.matches = matches;
            vs.sprt = Some(crate::metrics::SprtSummary {
                verdict: *verdict,
                elo0: 0.0,
                elo1: 30.0,
                llr: 0.0,
                lower: -2.94,
                upper: 2.94,
            });
        }
        let all = panels(&records);
        assert_eq!(all.len(), 5);
        let points: Vec<_> = all[4]
            .series
            .iter()
            .map(|s| (s.label, s.points.clone()))
            .collect();
        assert_eq!(
            points,
            vec![
                ("H1: new network kept", vec![(2.0, 23.0), (4.0, 61.0)]),
                ("H0: previous kept", vec![(1.0, 40.0)]),
                ("inconclusive (maximum)", vec![(3.0, 200.0)]),
            ]
        );
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("learning_curves.png");
        write_plot(&path, &records, "gated by SPRT").unwrap();
        assert_eq!(std::fs::read(&path).unwrap()[..8], PNG_SIGNATURE);
        if let Ok(out) = std::env::var("BRANDUBH_GATE_PLOT_OUT") {
            std::fs::copy(&path, out).unwrap();
        }
    }

    #[test]
    fn degenerate_inputs_still_draw() {
        assert_eq!(
            render_png(&[], "empty", (640, 480)).unwrap()[..8],
            PNG_SIGNATURE
        );
        let mut one = fake(1);
        one.policy_loss = f64::NAN;
        one.vs_previous = None;
        assert_eq!(
            render_png(&[one], "one", (640, 480)).unwrap()[..8],
            PNG_SIGNATURE
        );
    }
}
