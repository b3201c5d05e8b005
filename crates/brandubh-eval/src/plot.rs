//! The ladder's plot: Elo (with 95 % intervals) of every checkpoint against its training
//! step, baselines as labelled horizontal lines. Drawn with plotters in
//! [`brandubh_run::plot::render_png_with`] (the embedded font and the PNG encoding of the
//! training curves) and written with [`brandubh_fs::write_atomic`].

use std::path::Path;

use brandubh_run::plot::{FONT_FAMILY as FAMILY, render_png_with};
use plotters::coord::Shift;
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;

use crate::error::EvalError;

/// Image size, in pixels.
pub const PLOT_SIZE: (u32, u32) = (1100, 700);

const BLUE_: RGBColor = RGBColor(31, 119, 180);
const BASELINE_COLORS: [RGBColor; 6] = [
    RGBColor(127, 127, 127),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
];

/// One point of the checkpoint curve: training step, Elo, interval.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CurvePoint {
    /// Training step (x).
    pub step: f64,
    /// Elo (y).
    pub elo: f64,
    /// Lower end of the 95 % interval.
    pub low: f64,
    /// Upper end.
    pub high: f64,
}

/// Renders the plot as PNG bytes.
pub fn render_png(
    title: &str,
    curve: &[CurvePoint],
    baselines: &[(String, f64)],
    size: (u32, u32),
) -> Result<Vec<u8>, String> {
    render_png_with(size, |buf| draw(title, curve, baselines, size, buf)).map_err(|e| e.0)
}

/// Draws the plot and writes it atomically to `path`.
pub fn write_plot(
    path: &Path,
    title: &str,
    curve: &[CurvePoint],
    baselines: &[(String, f64)],
) -> Result<(), EvalError> {
    let bytes =
        render_png(title, curve, baselines, PLOT_SIZE).map_err(|cause| EvalError::Plot {
            path: path.to_path_buf(),
            cause,
        })?;
    brandubh_fs::write_atomic(path, &bytes).map_err(|e| EvalError::Io {
        path: e.path.clone(),
        cause: format!("cannot {}: {}", e.action, e.cause),
    })
}

type Chart<'a, 'b> =
    ChartContext<'a, BitMapBackend<'b>, Cartesian2d<RangedCoordf64, RangedCoordf64>>;

fn err(e: &dyn std::fmt::Display) -> String {
    e.to_string()
}

/// The steps on the x axis: the curve's, padded by 3 %; widened around a single one.
fn x_range(curve: &[CurvePoint]) -> (f64, f64) {
    let (x0, x1) = curve
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), p| {
            (a.min(p.step), b.max(p.step))
        });
    if x0 > x1 {
        (0.0, 1.0)
    } else if x0 == x1 {
        (x0 - 1.0, x1 + 1.0)
    } else {
        let pad = (x1 - x0) * 0.03;
        (x0 - pad, x1 + pad)
    }
}

/// The Elo range showing 0, every point with its interval and every baseline, padded by
/// 8 % (at least 20).
fn y_range(curve: &[CurvePoint], baselines: &[&(String, f64)]) -> (f64, f64) {
    let ys = curve
        .iter()
        .flat_map(|p| [p.elo, p.low, p.high])
        .chain(baselines.iter().map(|b| b.1))
        .filter(|v| v.is_finite());
    let (y0, y1) = ys.fold((0.0f64, 0.0f64), |(a, b), v| (a.min(v), b.max(v)));
    let pad = ((y1 - y0) * 0.08).max(20.0);
    (y0 - pad, y1 + pad)
}

/// The caption, axes and grid.
fn draw_axes<'a, 'b>(
    root: &'a DrawingArea<BitMapBackend<'b>, Shift>,
    title: &str,
    (x0, x1): (f64, f64),
    (y0, y1): (f64, f64),
) -> Result<Chart<'a, 'b>, String> {
    let mut chart = ChartBuilder::on(root)
        .caption(title, (FAMILY, 24))
        .margin(16)
        .x_label_area_size(46)
        .y_label_area_size(70)
        .build_cartesian_2d(x0..x1, y0..y1)
        .map_err(|e| err(&e))?;
    chart
        .configure_mesh()
        .x_desc("training step")
        .y_desc("Elo (random = 0)")
        .label_style((FAMILY, 14))
        .axis_desc_style((FAMILY, 16))
        .x_label_formatter(&|x| format!("{x:.0}"))
        .y_label_formatter(&|y| format!("{y:.0}"))
        .light_line_style(WHITE.mix(0.0))
        .bold_line_style(BLACK.mix(0.12))
        .draw()
        .map_err(|e| err(&e))?;
    Ok(chart)
}

/// Each baseline as a horizontal line across the plot, labelled with its Elo.
fn draw_baselines(
    chart: &mut Chart<'_, '_>,
    baselines: &[&(String, f64)],
    (x0, x1): (f64, f64),
) -> Result<(), String> {
    for (i, (name, elo)) in baselines.iter().enumerate() {
        let color = BASELINE_COLORS[i % BASELINE_COLORS.len()];
        chart
            .draw_series(LineSeries::new(
                [(x0, *elo), (x1, *elo)],
                color.stroke_width(2),
            ))
            .map_err(|e| err(&e))?
            .label(format!("{name} ({elo:+.0})"))
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 22, y)], color.stroke_width(3))
            });
    }
    Ok(())
}

/// The checkpoints: interval bars (clipped to the plot), the line and its points.
fn draw_curve(
    chart: &mut Chart<'_, '_>,
    curve: &[CurvePoint],
    (y0, y1): (f64, f64),
) -> Result<(), String> {
    let bar_style = BLUE_.mix(0.55).stroke_width(1);
    chart
        .draw_series(curve.iter().map(|p| {
            let low = if p.low.is_finite() { p.low.max(y0) } else { y0 };
            let high = if p.high.is_finite() {
                p.high.min(y1)
            } else {
                y1
            };
            PathElement::new(vec![(p.step, low), (p.step, high)], bar_style)
        }))
        .map_err(|e| err(&e))?;
    chart
        .draw_series(LineSeries::new(
            curve.iter().map(|p| (p.step, p.elo)),
            BLUE_.stroke_width(2),
        ))
        .map_err(|e| err(&e))?
        .label("checkpoints (95% interval)")
        .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 22, y)], BLUE_.stroke_width(3)));
    chart
        .draw_series(
            curve
                .iter()
                .map(|p| Circle::new((p.step, p.elo), 3, BLUE_.filled())),
        )
        .map_err(|e| err(&e))?;
    Ok(())
}

/// Draws the plot of the finite points and baselines into an RGB buffer of `size`.
fn draw(
    title: &str,
    curve: &[CurvePoint],
    baselines: &[(String, f64)],
    size: (u32, u32),
    buf: &mut [u8],
) -> Result<(), String> {
    let curve: Vec<CurvePoint> = curve
        .iter()
        .filter(|p| p.step.is_finite() && p.elo.is_finite())
        .copied()
        .collect();
    let baselines: Vec<&(String, f64)> = baselines.iter().filter(|b| b.1.is_finite()).collect();
    let xs = x_range(&curve);
    let ys = y_range(&curve, &baselines);

    let root = BitMapBackend::with_buffer(buf, size).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(&e))?;
    let mut chart = draw_axes(&root, title, xs, ys)?;
    draw_baselines(&mut chart, &baselines, xs)?;
    if !curve.is_empty() {
        draw_curve(&mut chart, &curve, ys)?;
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .label_font((FAMILY, 14))
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK.mix(0.4))
        .draw()
        .map_err(|e| err(&e))?;
    root.present().map_err(|e| err(&e))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_a_png_even_from_degenerate_input() {
        let curve: Vec<CurvePoint> = (0..8)
            .map(|i| {
                let step = f64::from(i) * 100.0;
                let elo = f64::from(i) * 60.0;
                CurvePoint {
                    step,
                    elo,
                    low: elo - 40.0,
                    high: if i == 7 { f64::INFINITY } else { elo + 40.0 },
                }
            })
            .collect();
        let baselines = vec![("random".to_owned(), 0.0), ("greedy".to_owned(), 180.0)];
        let png = render_png("ladder of run test", &curve, &baselines, (640, 400)).unwrap();
        assert_eq!(&png[1..4], b"PNG");
        assert_eq!(
            &render_png("empty", &[], &[], (320, 200)).unwrap()[1..4],
            b"PNG"
        );
        let one = [CurvePoint {
            step: 5.0,
            elo: f64::NAN,
            low: 0.0,
            high: 1.0,
        }];
        assert_eq!(
            &render_png("nan", &one, &baselines, (320, 200)).unwrap()[1..4],
            b"PNG"
        );
    }
}
