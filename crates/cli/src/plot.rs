//! `neardup eval --plot DIR`: precision/recall against k and the distance
//! histograms of both labels, as PNG and SVG, drawn with plotters.
//!
//! Text in the PNGs is drawn with a bundled subset of DejaVu Sans
//! (`assets/`), so plots look the same on machines without fonts. Each file
//! is drawn into a temporary file in DIR and renamed into place: a failed run
//! leaves no half-written plot.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Once;

use anyhow::{Context, Result};
use neardup::quality::{Counts, DistanceHistogram};
use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::prelude::*;

/// The font for text in bitmaps (ASCII, Latin-1 and a few punctuation marks).
static FONT: &[u8] = include_bytes!("../assets/DejaVuSans-subset.ttf");
const SIZE: (u32, u32) = (960, 600);

/// What the x axis of a configuration's plots measures.
#[derive(Clone, Copy, Debug)]
pub enum Axis {
    /// SimHash: the radius k up to `max_k`; Hamming distances up to `bits`.
    Radius { max_k: u32, bits: u32 },
    /// MinHash: the Jaccard threshold; estimated similarities in bins of
    /// width `1/bins`.
    Threshold { bins: u32 },
}

impl Axis {
    fn curve_caption(self) -> &'static str {
        match self {
            Axis::Radius { .. } => "precision and recall against k",
            Axis::Threshold { .. } => "precision and recall against the Jaccard threshold",
        }
    }

    fn curve_x(self) -> (&'static str, std::ops::Range<f64>) {
        match self {
            Axis::Radius { max_k, .. } => ("k (Hamming distance at most)", 0.0..f64::from(max_k.max(1))),
            Axis::Threshold { .. } => ("Jaccard threshold (estimated similarity at least)", 0.0..1.0),
        }
    }

    fn histogram_caption(self) -> &'static str {
        match self {
            Axis::Radius { .. } => "Hamming distance of labelled pairs",
            Axis::Threshold { .. } => "estimated Jaccard similarity of labelled pairs",
        }
    }

    fn histogram_x(self) -> (&'static str, std::ops::Range<f64>) {
        match self {
            Axis::Radius { bits, .. } => ("Hamming distance", -0.5..f64::from(bits) + 0.5),
            Axis::Threshold { .. } => ("estimated Jaccard similarity", 0.0..1.03),
        }
    }

    /// Where bin `i` starts on the histogram's axis, and its width.
    fn bin(self, i: usize) -> (f64, f64) {
        match self {
            Axis::Radius { .. } => (i as f64, 1.0),
            Axis::Threshold { bins } => (i as f64 / f64::from(bins), 1.0 / f64::from(bins)),
        }
    }

    /// Where a line for the rule at `x` is drawn on the histogram: between
    /// radius `k` and `k + 1`, or at the threshold.
    fn histogram_mark(self, x: f64) -> f64 {
        match self {
            Axis::Radius { .. } => x + 0.5,
            Axis::Threshold { .. } => x,
        }
    }

    fn format_x(self, x: f64) -> String {
        match self {
            Axis::Radius { .. } => format!("{x:.0}"),
            Axis::Threshold { .. } => format!("{x:.1}"),
        }
    }
}

/// What one configuration's plots show.
pub struct PlotInput<'a> {
    /// The configuration's name (a preset or a config file).
    pub name: &'a str,
    pub axis: Axis,
    /// The curve: (x, counts there), by x.
    pub points: Vec<(f64, Counts)>,
    pub histogram: DistanceHistogram,
    /// The rule in use, drawn as lines: (x, label), e.g. one per length step.
    pub marks: Vec<(f64, String)>,
    /// The point of the best F1: (x, counts).
    pub best: (f64, Counts),
}

/// Writes `<name>-pr.{png,svg}` and `<name>-distances.{png,svg}` into `dir`
/// (created if missing) for every configuration; returns the files written.
pub fn write_all(dir: &Path, inputs: &[&PlotInput<'_>]) -> Result<Vec<PathBuf>> {
    static REGISTER: Once = Once::new();
    REGISTER.call_once(|| {
        // The bundled font is known to parse; a failure would only cost text.
        let _ = plotters::style::register_font("sans-serif", FontStyle::Normal, FONT);
    });
    prepare_dir(dir)?;
    let mut written = Vec::new();
    let mut taken = HashSet::new();
    for input in inputs {
        let stem = unique(slug(input.name), &mut taken);
        for ext in ["png", "svg"] {
            let pr = dir.join(format!("{stem}-pr.{ext}"));
            render(&pr, Chart::PrecisionRecall, input)?;
            written.push(pr);
            let hist = dir.join(format!("{stem}-distances.{ext}"));
            render(&hist, Chart::Distances, input)?;
            written.push(hist);
        }
    }
    Ok(written)
}

/// Creates the plot directory (and its parents) if missing.
pub fn prepare_dir(dir: &Path) -> Result<()> {
    std::fs::create_dir_all(dir)
        .with_context(|| format!("{}: cannot create the plot directory", dir.display()))
}

/// A file-name stem for a configuration name: `configs/my.toml` → `my`.
fn slug(name: &str) -> String {
    let base = Path::new(name).file_stem().and_then(|s| s.to_str()).unwrap_or(name);
    let s: String = base
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '_' })
        .collect();
    if s.is_empty() {
        "config".into()
    } else {
        s
    }
}

fn unique(stem: String, taken: &mut HashSet<String>) -> String {
    let mut candidate = stem.clone();
    let mut n = 2;
    while !taken.insert(candidate.clone()) {
        candidate = format!("{stem}-{n}");
        n += 1;
    }
    candidate
}

#[derive(Clone, Copy)]
enum Chart {
    PrecisionRecall,
    Distances,
}

impl Chart {
    fn draw<DB: DrawingBackend>(
        self,
        area: &DrawingArea<DB, Shift>,
        input: &PlotInput<'_>,
    ) -> DrawResult<DB> {
        match self {
            Chart::PrecisionRecall => precision_recall(area, input),
            Chart::Distances => distances(area, input),
        }
    }
}

type DrawResult<DB> = std::result::Result<(), DrawingAreaErrorKind<<DB as DrawingBackend>::ErrorType>>;

/// Draws with the backend the extension names, into a temporary file that is
/// renamed to `path` only when drawing succeeded.
fn render(path: &Path, chart: Chart, input: &PlotInput<'_>) -> Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
    let tmp = crate::output::temp_file_in(dir, &format!(".{ext}"))?;
    let failed = |e: String| anyhow::anyhow!("{}: drawing failed: {e}", path.display());
    if ext == "svg" {
        let root = SVGBackend::new(tmp.path(), SIZE).into_drawing_area();
        chart.draw(&root, input).map_err(|e| failed(e.to_string()))?;
        root.present().map_err(|e| failed(e.to_string()))?;
    } else {
        let root = BitMapBackend::new(tmp.path(), SIZE).into_drawing_area();
        chart.draw(&root, input).map_err(|e| failed(e.to_string()))?;
        root.present().map_err(|e| failed(e.to_string()))?;
    }
    tmp.persist(path).map_err(|e| anyhow::anyhow!("{}: cannot write: {}", path.display(), e.error))?;
    Ok(())
}

const PRECISION: RGBColor = RGBColor(0x1f, 0x77, 0xb4);
const RECALL: RGBColor = RGBColor(0xd6, 0x27, 0x28);
const F1: RGBColor = RGBColor(0x2c, 0xa0, 0x2c);
/// The mark at the best F1 (not F1's own green: a line of its own).
const BEST: RGBColor = RGBColor(0x00, 0x00, 0x00);
/// Radius lines, one colour per length step (then repeating the last).
const RADIUS: [RGBColor; 4] = [
    RGBColor(0xff, 0x7f, 0x0e),
    RGBColor(0x55, 0x55, 0x55),
    RGBColor(0x94, 0x67, 0xbd),
    RGBColor(0x8c, 0x56, 0x4b),
];

/// Draws the legend box of a chart.
fn legend<'a, DB: DrawingBackend + 'a>(
    chart: &mut ChartContext<'a, DB, Cartesian2d<RangedCoordf64, RangedCoordf64>>,
    at: SeriesLabelPosition,
) -> DrawResult<DB> {
    chart
        .configure_series_labels()
        .position(at)
        .label_font(("sans-serif", 14))
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()
}

/// Precision, recall and F1 along the axis, with the rule and the best
/// point marked.
fn precision_recall<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    input: &PlotInput<'_>,
) -> DrawResult<DB> {
    area.fill(&WHITE)?;
    let axis = input.axis;
    let (x_desc, x_range) = axis.curve_x();
    let mut chart = ChartBuilder::on(area)
        .caption(format!("{}: {}", input.name, axis.curve_caption()), ("sans-serif", 24))
        .margin(16)
        .x_label_area_size(44)
        .y_label_area_size(56)
        .build_cartesian_2d(x_range.clone(), 0f64..1.02f64)?;
    chart
        .configure_mesh()
        .x_label_formatter(&|x| axis.format_x(*x))
        .x_desc(x_desc)
        .y_desc("precision / recall / F1")
        .axis_desc_style(("sans-serif", 16))
        .label_style(("sans-serif", 14))
        .draw()?;
    let series = |f: fn(&Counts) -> f64| input.points.iter().map(|(x, c)| (*x, f(c))).collect::<Vec<_>>();
    for (name, color, values) in [
        ("precision", PRECISION, series(|c| c.precision())),
        ("recall", RECALL, series(|c| c.recall())),
        ("F1", F1, series(|c| c.f1())),
    ] {
        chart
            .draw_series(LineSeries::new(values.iter().copied(), color.stroke_width(2)))?
            .label(name)
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 20, y)], color.stroke_width(2)));
        chart.draw_series(values.iter().map(|&p| Circle::new(p, 3, color.filled())))?;
    }
    let (best_x, best) = input.best;
    let best_label = match axis {
        Axis::Radius { .. } => format!("best F1 {:.3} at k = {best_x}", best.f1()),
        Axis::Threshold { .. } => format!("best F1 {:.3} at threshold {best_x}", best.f1()),
    };
    let marks = input
        .marks
        .iter()
        .zip(RADIUS)
        .map(|((x, label), color)| (*x, label.clone(), color))
        .chain([(best_x, best_label, BEST)]);
    for (x, label, color) in marks {
        if !x_range.contains(&x) && x != x_range.end {
            continue;
        }
        chart
            .draw_series([PathElement::new([(x, 0.0), (x, 1.02)], color.stroke_width(2))])?
            .label(label)
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 20, y)], color.stroke_width(2)));
    }
    legend(&mut chart, SeriesLabelPosition::LowerRight)?;
    Ok(())
}

/// The share of label-1 and label-0 pairs at each Hamming distance.
fn distances<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, input: &PlotInput<'_>) -> DrawResult<DB> {
    area.fill(&WHITE)?;
    let h = &input.histogram;
    let (dups, others): (u64, u64) = (h.duplicates.iter().sum(), h.others.iter().sum());
    let share = |v: &[u64], n: u64| {
        v.iter().map(|&c| if n == 0 { 0.0 } else { c as f64 / n as f64 }).collect::<Vec<_>>()
    };
    let (a, b) = (share(&h.duplicates, dups), share(&h.others, others));
    let top = a.iter().chain(&b).copied().fold(0.0, f64::max).max(0.01) * 1.1;
    let axis = input.axis;
    let (x_desc, x_range) = axis.histogram_x();
    let mut chart = ChartBuilder::on(area)
        .caption(format!("{}: {}", input.name, axis.histogram_caption()), ("sans-serif", 24))
        .margin(16)
        .x_label_area_size(44)
        .y_label_area_size(56)
        .build_cartesian_2d(x_range, 0f64..top)?;
    chart
        .configure_mesh()
        .x_label_formatter(&|x| axis.format_x(*x))
        .x_desc(x_desc)
        .y_desc("share of the label's pairs")
        .axis_desc_style(("sans-serif", 16))
        .label_style(("sans-serif", 14))
        .draw()?;
    for (values, color, label, offset) in [
        (&a, RECALL, format!("near duplicates (label 1, {dups} pairs)"), -0.4),
        (&b, PRECISION, format!("others (label 0, {others} pairs)"), 0.0),
    ] {
        chart
            .draw_series(values.iter().enumerate().filter(|(_, &v)| v > 0.0).map(|(d, &v)| {
                let (start, width) = axis.bin(d);
                let x = start + offset * width;
                Rectangle::new([(x, 0.0), (x + 0.4 * width, v)], color.mix(0.8).filled())
            }))?
            .label(label)
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 12, y + 5)], color.mix(0.8).filled()));
    }
    for ((x, label), color) in input.marks.iter().zip(RADIUS) {
        let x = axis.histogram_mark(*x);
        chart
            .draw_series([PathElement::new([(x, 0.0), (x, top)], color.stroke_width(2))])?
            .label(label.clone())
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 20, y)], color.stroke_width(2)));
    }
    legend(&mut chart, SeriesLabelPosition::UpperRight)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_line_of_a_chart_has_its_own_colour() {
        let all = [PRECISION, RECALL, F1, BEST].into_iter().chain(RADIUS).collect::<Vec<_>>();
        let distinct: HashSet<(u8, u8, u8)> = all.iter().map(|c| (c.0, c.1, c.2)).collect();
        assert_eq!(distinct.len(), all.len());
    }

    #[test]
    fn slugs_are_file_names_and_unique() {
        let mut taken = HashSet::new();
        assert_eq!(unique(slug("default"), &mut taken), "default");
        assert_eq!(unique(slug("configs/my conf.toml"), &mut taken), "my_conf");
        assert_eq!(unique(slug("other/my conf.toml"), &mut taken), "my_conf-2");
        assert_eq!(unique(slug("默认"), &mut taken), "__");
    }
}
