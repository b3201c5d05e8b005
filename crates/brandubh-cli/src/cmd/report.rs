//! `brandubh report opponents|colours|openings|compare|show REPORT.json...`: tables over
//! saved `brandubh match --json` reports.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use brandubh_eval::report::{self, SavedReport};

use crate::out;

/// Tables over saved match reports (the files of `brandubh match --json`), in Markdown.
///
/// The scripts of docs/guide/evaluation.md play their matches with `brandubh match --json`
/// and sum them up with these. A file that cannot be read or is not a match report ends
/// the command with an error naming it.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    table: Table,
}

/// Which table.
#[derive(Debug, clap::Subcommand)]
enum Table {
    /// One row per report, agent A against its opponent B: matches W/D/L, the games A won
    /// as White and as Black (and as Black without repetition wins), how each side won
    /// with each colour, unfinished games and seconds.
    Opponents(Files),
    /// One row per report, both players pooled: how often White and Black win and how,
    /// unfinished games and the mean game length (an agent against itself gives the
    /// game's White advantage at its level of play).
    Colours(Files),
    /// Which openings agent A wins as Black, over reports of the same seed and matches:
    /// each report's Black wins, the openings all or none of them won, and the best of
    /// them on each opening.
    Openings(Files),
    /// The reports side by side, one column each: agents, record, scores, Elo, wins by
    /// colour and how, length, time, CPU and the sequential test's verdict.
    Compare(Files),
    /// Each report as `brandubh match` prints it.
    Show(Files),
}

/// The reports.
#[derive(Debug, clap::Args)]
struct Files {
    /// `brandubh match --json` reports.
    #[arg(required = true, value_name = "REPORT.json")]
    reports: Vec<PathBuf>,
}

impl Table {
    fn files(&self) -> &Files {
        match self {
            Table::Opponents(f)
            | Table::Colours(f)
            | Table::Openings(f)
            | Table::Compare(f)
            | Table::Show(f) => f,
        }
    }
}

/// Runs the command.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let reports = args
        .table
        .files()
        .reports
        .iter()
        .map(|p| SavedReport::read(p))
        .collect::<Result<Vec<_>, _>>()?;
    let text = match args.table {
        Table::Opponents(_) => report::opponents(&reports),
        Table::Colours(_) => report::colours(&reports),
        Table::Openings(_) => report::openings(&reports)?,
        Table::Compare(_) => report::compare(&reports),
        Table::Show(_) => reports
            .iter()
            .map(|s| format!("{}\n", s.report))
            .collect::<Vec<_>>()
            .join("\n"),
    };
    let mut w = out::stdout();
    w.write_all(text.as_bytes())?;
    out::flush(&mut w)?;
    Ok(ExitCode::SUCCESS)
}
