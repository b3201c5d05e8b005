//! Tables over saved match reports (`brandubh match --json`), for `brandubh report`: one
//! row per report against its opponent ([`opponents`]), who wins with which colour and how
//! ([`colours`]), which openings agent A wins as Black ([`openings`]), and reports side by
//! side ([`compare`]). Each table is Markdown; a "how" column is the text of a
//! [`WinsBy`](crate::WinsBy).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::error::EvalError;
use crate::runner::{MatchReport, signed};
use crate::scoring::Contestant;

/// A match report read from a file, with the file's name.
#[derive(Clone, Debug, PartialEq)]
pub struct SavedReport {
    /// The file it was read from.
    pub path: PathBuf,
    /// The report.
    pub report: MatchReport,
}

impl SavedReport {
    /// Reads the `brandubh match --json` report in `path`; the error names the file and
    /// what is wrong with it.
    pub fn read(path: &Path) -> Result<SavedReport, EvalError> {
        let err = |cause: String| EvalError::Io {
            path: path.to_owned(),
            cause,
        };
        let text = std::fs::read_to_string(path).map_err(|e| err(e.to_string()))?;
        let report: MatchReport = serde_json::from_str(&text).map_err(|e| {
            err(format!(
                "not a `brandubh match --json` report: {}",
                brandubh_fs::one_line(&e.to_string())
            ))
        })?;
        if report.match_records.len() != report.matches as usize {
            return Err(err(format!(
                "{} matches but {} match records",
                report.matches,
                report.match_records.len()
            )));
        }
        Ok(SavedReport {
            path: path.to_owned(),
            report,
        })
    }

    /// The openings (match indices) whose Black game agent A won, in index order, and the
    /// openings played.
    fn black_wins(&self) -> (Vec<u32>, Vec<u32>) {
        let mut won = Vec::new();
        let mut all = Vec::new();
        for m in &self.report.match_records {
            all.push(m.index);
            if m.games
                .iter()
                .any(|g| g.white == Contestant::B && g.winner == Some(Contestant::A))
            {
                won.push(m.index);
            }
        }
        won.sort_unstable();
        all.sort_unstable();
        (won, all)
    }
}

/// `n (p %)`.
fn with_share(n: u32, of: u32) -> String {
    if of == 0 {
        format!("{n}")
    } else {
        format!("{n} ({:.0} %)", 100.0 * f64::from(n) / f64::from(of))
    }
}

/// One row per report, agent A against opponent B: matches W/D/L, the games A won with
/// each colour (as Black also without repetition wins), how every game was won by each
/// side, unfinished games and the wall time.
#[must_use]
pub fn opponents(reports: &[SavedReport]) -> String {
    let mut t = String::from(
        "| agent | opponent | matches W/D/L | won as White | won as Black \
         | as Black without repetition | agent's wins as White | agent's wins as Black \
         | opponent's wins as White | opponent's wins as Black | unfinished | s |\n\
         |---|---|---|---|---|---|---|---|---|---|---|---|\n",
    );
    for SavedReport { report: r, .. } in reports {
        let (g, rec, n) = (&r.games, &r.record, r.matches);
        let _ = writeln!(
            t,
            "| {} | {} | {}/{}/{} | {}/{n} | {}/{n} | {}/{n} | {} | {} | {} | {} | {} | {:.0} |",
            r.a,
            r.b,
            rec.wins,
            rec.draws,
            rec.losses,
            g.a_wins_as_white,
            g.a_wins_as_black,
            g.a_wins_as_black_by.without_repetition(),
            g.a_wins_as_white_by,
            g.a_wins_as_black_by,
            g.b_wins_as_white_by,
            g.b_wins_as_black_by,
            g.unfinished,
            r.seconds
        );
    }
    t
}

/// One row per report, the players pooled: the games White won and Black won (Black also
/// without repetition wins), unfinished games, how each colour won and the mean length.
/// Between equal players (an agent against itself) White's share is the game's White
/// advantage at that level of play.
#[must_use]
pub fn colours(reports: &[SavedReport]) -> String {
    let mut t = String::from(
        "| players | games | White won | Black won | Black without repetition | unfinished \
         | how White won | how Black won | mean plies |\n\
         |---|---|---|---|---|---|---|---|---|\n",
    );
    for SavedReport { report: r, .. } in reports {
        let g = &r.games;
        let white = g.a_wins_as_white_by + g.b_wins_as_white_by;
        let black = g.a_wins_as_black_by + g.b_wins_as_black_by;
        let players = if r.a == r.b {
            format!("{} vs itself", r.a)
        } else {
            format!("{} vs {}", r.a, r.b)
        };
        let _ = writeln!(
            t,
            "| {players} | {} | {} | {} | {} | {} | {white} | {black} | {:.1} |",
            g.games,
            with_share(white.total(), g.games),
            with_share(black.total(), g.games),
            black.without_repetition(),
            g.unfinished,
            r.mean_game_plies
        );
    }
    t
}

/// Which openings agent A wins as Black, over reports played from the same seeded openings
/// (the same seed and matches): per report its Black wins, then the openings all of them
/// won, those none of them won, and the best of them on each opening. Reports of other
/// openings are refused, naming the first that differs.
pub fn openings(reports: &[SavedReport]) -> Result<String, EvalError> {
    let Some(first) = reports.first() else {
        return Ok(String::new());
    };
    let (_, all) = first.black_wins();
    let mut won = Vec::with_capacity(reports.len());
    for s in reports {
        let (w, played) = s.black_wins();
        if s.report.seed != first.report.seed || played != all {
            return Err(EvalError::Io {
                path: s.path.clone(),
                cause: format!(
                    "seed {} with {} matches, but {} has seed {} with {}: not the same openings",
                    s.report.seed,
                    played.len(),
                    first.path.display(),
                    first.report.seed,
                    all.len()
                ),
            });
        }
        won.push(w);
    }
    let mut t = format!(
        "| report | agent (A) | opponent (B) | Black games won (of {}) |\n|---|---|---|---|\n",
        all.len()
    );
    for (s, w) in reports.iter().zip(&won) {
        let _ = writeln!(
            t,
            "| {} | {} | {} | {} |",
            s.path.display(),
            s.report.a,
            s.report.b,
            w.len()
        );
    }
    let by_all = all
        .iter()
        .filter(|&&i| won.iter().all(|w| w.binary_search(&i).is_ok()))
        .count();
    let by_none: Vec<String> = all
        .iter()
        .filter(|&&i| won.iter().all(|w| w.binary_search(&i).is_err()))
        .map(ToString::to_string)
        .collect();
    let _ = writeln!(
        t,
        "\nwon as Black by all {}: {by_all} openings",
        reports.len()
    );
    let _ = writeln!(
        t,
        "won as Black by none: {} openings: {}",
        by_none.len(),
        by_none.join(" ")
    );
    let _ = writeln!(
        t,
        "the best of them on each opening: {} Black games",
        all.len() - by_none.len()
    );
    Ok(t)
}

/// One cell of [`compare`]'s table: a report's figure as text.
type Cell = dyn Fn(&MatchReport) -> String;

/// The reports side by side, one column each: the agents, the series, the record and
/// scores, Elo, the games won by colour and how, length, time, the machine and the
/// sequential test's verdict.
#[must_use]
pub fn compare(reports: &[SavedReport]) -> String {
    let row = |name: &str, cell: &Cell| {
        let cells: Vec<String> = reports.iter().map(|s| cell(&s.report)).collect();
        format!("| {name} | {} |\n", cells.join(" | "))
    };
    let mut t = format!(
        "| report | {} |\n",
        reports
            .iter()
            .map(|s| s.path.display().to_string())
            .collect::<Vec<_>>()
            .join(" | ")
    );
    t.push_str(&format!("|---{}|\n", "|---".repeat(reports.len())));
    let rows: [(&str, &Cell); 17] = [
        ("agent (A)", &|r| r.a.clone()),
        ("opponent (B)", &|r| r.b.clone()),
        ("seed, ply cap", &|r| format!("{}, {}", r.seed, r.ply_cap)),
        ("matches", &|r| r.matches.to_string()),
        ("A's matches W/D/L", &|r| {
            format!("{}/{}/{}", r.record.wins, r.record.draws, r.record.losses)
        }),
        ("match score", &|r| format!("{:.3}", r.match_score)),
        ("game score", &|r| format!("{:.3}", r.game_score)),
        ("Elo A - B (95 %)", &|r| {
            format!(
                "{} ({} to {})",
                signed(r.elo.elo),
                signed(r.elo.low),
                signed(r.elo.high)
            )
        }),
        ("A won as White", &|r| r.games.a_wins_as_white.to_string()),
        ("A won as Black (without repetition)", &|r| {
            format!(
                "{} ({})",
                r.games.a_wins_as_black,
                r.games.a_wins_as_black_by.without_repetition()
            )
        }),
        ("how A won", &|r| {
            format!(
                "White: {}; Black: {}",
                r.games.a_wins_as_white_by, r.games.a_wins_as_black_by
            )
        }),
        ("how B won", &|r| {
            format!(
                "White: {}; Black: {}",
                r.games.b_wins_as_white_by, r.games.b_wins_as_black_by
            )
        }),
        ("unfinished", &|r| r.games.unfinished.to_string()),
        ("mean plies", &|r| format!("{:.1}", r.mean_game_plies)),
        ("seconds", &|r| format!("{:.0}", r.seconds)),
        ("CPU", &|r| {
            if r.cpu.is_empty() {
                "not recorded".to_owned()
            } else {
                r.cpu.clone()
            }
        }),
        ("SPRT", &|r| {
            r.sprt.as_ref().map_or_else(
                || "none".to_owned(),
                |t| {
                    format!(
                        "{} after {} matches (LLR {:.2}, bounds {:.2} and {:.2})",
                        t.verdict, t.matches, t.llr, t.lower, t.upper
                    )
                },
            )
        }),
    ];
    for (name, cell) in rows {
        t.push_str(&row(name, cell));
    }
    t
}
