//! OpenTafl Notation (OTN), as far as an engine for Brandubh needs it: rules strings,
//! position records and move records, translated to and from this project's types.
//!
//! **Coordinates.** OTN names squares as RULES.md does (files `a`–`g`, ranks `1`–`7`), so a
//! move `d5-f5` means the same thing in both. OpenTafl *draws* rank 1 at the top, and a
//! position record lists the ranks from 1 up to 7, the reverse of this project's
//! notation, which lists rank 7 first. Attackers are lower case (`t`), defenders upper case
//! (`T`), the King `K`. A position record says nothing about the side to move: the
//! protocol tells it separately (`side`, `play`).
//!
//! ```
//! use brandubh_agent::otn;
//! use brandubh_rules::{Position, Side};
//!
//! let pos: Position = "3A3/3A3/3D3/AADKDAA/3D3/3A3/3A3 w".parse().unwrap();
//! assert_eq!(otn::write_position(&pos), "/3t3/3t3/3T3/ttTKTtt/3T3/3t3/3t3/");
//! assert_eq!(otn::parse_position("/3t3/3t3/3T3/ttTKTtt/3T3/3t3/3t3/", Side::White).unwrap(), pos);
//! // Accepted; the two points OpenTafl cannot express are reported.
//! let differing: Vec<String> = otn::check_rules(otn::BRANDUBH_RULES).unwrap()
//!     .into_iter().map(|d| d.key).collect();
//! assert_eq!(differing, ["tfr", "ks"]);
//! ```

use std::fmt;

use brandubh_rules::{KingCapture, Move, Position, SIZE, Side};
use thiserror::Error;

/// The OTN rules string to configure in OpenTafl for Brandubh 2.5W: 7×7, the standard
/// start, White (the defenders) first, corner escape, the King armed, the Castle and
/// corners closed to every piece but the King, the empty Castle hostile to attackers and
/// defenders, the King strong on and next to the Castle and weak elsewhere (`ks:c`), and a
/// third repetition won by the player who makes it (`tfr:l` as OpenTafl 0.4.8.0b reads it).
///
/// Chosen by measurement (`scripts/opentafl-rules.sh`, docs/guide/opentafl.md): over 400
/// games of the shipped agent (11,020 positions) OpenTafl's own rules engine agrees with
/// RULES.md on every legal move and every capture but the King's under this string. No OTN
/// string says RULES.md exactly: a King strong in the Castle only (rule 7) and Black's win
/// at a fifth occurrence (rule 8.4) have no setting. So the engine plays to the host's
/// referee where the two differ: it searches with the host's King capture as well as rule
/// 7 ([`host_king_capture`], [`KingRule::guarded`](brandubh_rules::KingRule::guarded)) and
/// avoids a third repetition the host would judge against it. OpenTafl judges the King's
/// hostile squares by the defenders' letter `T`, so the empty Castle is hostile to the King
/// there whatever `cenhe` says about `K`.
pub const BRANDUBH_RULES: &str = "dim:7 name:Brandubh_2.5W atkf:n tfr:l ks:c cenp:K cenhe:tT start:/3t3/3t3/3T3/ttTKTtt/3T3/3t3/3t3/";

/// What OpenTafl 0.4.8.0b does at a position's third occurrence, from a rules string's
/// `tfr` (its source, not the OTN specification: `w` and `l` are the other way round from
/// the specification's words, and `i` is read as `d`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ThirdRepetition {
    /// `tfr:d` (the default, and any value but `w` and `l`): a draw.
    Draw,
    /// `tfr:w`: the player to move next wins; the one who made the repetition loses.
    MoverLoses,
    /// `tfr:l`: the player who made the repetition wins.
    MoverWins,
}

/// The host's third-repetition rule of `rules` (a string [`check_rules`] accepted); a
/// string that does not parse counts as the default.
#[must_use]
pub fn third_repetition(rules: &str) -> ThirdRepetition {
    let tfr = parse_rules(rules)
        .ok()
        .and_then(|s| s.into_iter().find(|(k, _)| k == "tfr").map(|(_, v)| v));
    match tfr.as_deref() {
        Some("w") => ThirdRepetition::MoverLoses,
        Some("l") => ThirdRepetition::MoverWins,
        _ => ThirdRepetition::Draw,
    }
}

/// How the host captures the King under `rules` (a string [`check_rules`] accepted), as
/// OpenTafl 0.4.8.0b reads `ks`: `c` strong on and next to the Castle, `w` (or `n`) weak,
/// `m` middleweight (every neighbour on the board hostile), anything else, and no `ks` at
/// all, strong (OpenTafl's default). Checked against OpenTafl's own rules engine
/// (scripts/opentafl-king-check.sh).
#[must_use]
pub fn host_king_capture(rules: &str) -> KingCapture {
    let ks = parse_rules(rules)
        .ok()
        .and_then(|s| s.into_iter().find(|(k, _)| k == "ks").map(|(_, v)| v));
    king_capture_of(ks.as_deref().unwrap_or("s"))
}

/// OpenTafl's King strength `ks:VALUE` as a King capture.
fn king_capture_of(ks: &str) -> KingCapture {
    match ks {
        "c" => KingCapture::STRONG_NEAR_CASTLE,
        "w" | "n" => KingCapture::WEAK,
        "m" => KingCapture::ENCLOSED,
        _ => KingCapture::STRONG,
    }
}

/// The host's King capture in words, for the rules notice.
fn king_capture_words(ks: &str) -> &'static str {
    match king_capture_of(ks) {
        KingCapture::STRONG_NEAR_CASTLE => {
            "the host's King is strong on and next to the Castle, RULES.md's only on it \
             (rule 7): the engine's King captures count where both see them, and it guards \
             its King against both"
        }
        KingCapture::WEAK => {
            "the host's King is weak everywhere, the Castle included, RULES.md's strong on \
             it (rule 7): the engine's King captures count where both see them, and it \
             guards its King against both"
        }
        KingCapture::ENCLOSED => {
            "the host's King is taken when every neighbour is hostile, RULES.md's by two \
             off the Castle (rule 7): the engine's King captures count where both see them, \
             and it guards its King against both"
        }
        _ => {
            "the host's King is strong everywhere, RULES.md's only on the Castle (rule 7): \
             the engine's King captures count where both see them, and it guards its King \
             against both"
        }
    }
}

/// Longest OTN input accepted (a rules string is about 100 characters).
pub const MAX_LEN: usize = 4096;

/// What is wrong with an OTN record.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum OtnError {
    /// The record does not parse.
    #[error("malformed OTN {what} {input:?}: {problem}")]
    Malformed {
        /// `rules string`, `position record` or `move record`.
        what: &'static str,
        /// The input (at most 80 characters of it).
        input: String,
        /// What is wrong.
        problem: String,
    },
    /// The rules describe another game than RULES.md's Brandubh.
    #[error("rules refused: {key}:{value} {why}")]
    Refused {
        /// The setting.
        key: String,
        /// Its value (the default when not given).
        value: String,
        /// Why it cannot be played.
        why: &'static str,
    },
}

/// A setting of the rules string that differs from RULES.md: the engine plays RULES.md,
/// guarded against the host's judgement where it can be (the King's capture, a third
/// repetition), and says so.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Deviation {
    /// The setting.
    pub key: String,
    /// Its value.
    pub value: String,
    /// What RULES.md does instead.
    pub note: &'static str,
}

impl fmt::Display for Deviation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{} ({})", self.key, self.value, self.note)
    }
}

fn malformed(what: &'static str, input: &str, problem: impl Into<String>) -> OtnError {
    OtnError::Malformed {
        what,
        input: printable(input),
        problem: problem.into(),
    }
}

/// At most 80 characters of `text`, control characters shown as `?`.
pub(crate) fn printable(text: &str) -> String {
    text.chars()
        .take(80)
        .map(|c| if c.is_control() { '?' } else { c })
        .collect()
}

/// Parses a position record (ranks 1 to 7, `/`-separated, leading and trailing `/`
/// optional) with `side` to move, checked like any position (one King, at most 8 attackers
/// and 4 defenders, none on a restricted square).
pub fn parse_position(record: &str, side: Side) -> Result<Position, OtnError> {
    let bad = |problem: String| malformed("position record", record, problem);
    if record.len() > MAX_LEN {
        return Err(bad(format!("longer than {MAX_LEN} bytes")));
    }
    let inner = record.strip_prefix('/').unwrap_or(record);
    let inner = inner.strip_suffix('/').unwrap_or(inner);
    let rows: Vec<&str> = inner.split('/').collect();
    if rows.len() != SIZE as usize {
        return Err(bad(format!("{} rows, expected {SIZE}", rows.len())));
    }
    let mut ours: Vec<String> = Vec::with_capacity(rows.len());
    for (i, row) in rows.iter().enumerate() {
        let rank = i + 1;
        let mut width = 0usize;
        let mut text = String::new();
        let mut digits = String::new();
        let flush = |digits: &mut String, width: &mut usize, text: &mut String| {
            if !digits.is_empty() {
                let n: usize = digits.parse().unwrap_or(usize::MAX);
                *width = width.saturating_add(n);
                if n <= SIZE as usize {
                    text.push_str(&n.to_string());
                }
                digits.clear();
            }
        };
        for c in row.chars() {
            if c.is_ascii_digit() {
                digits.push(c);
                continue;
            }
            flush(&mut digits, &mut width, &mut text);
            let piece = match c {
                't' => 'A',
                'T' => 'D',
                'K' => 'K',
                'c' | 'n' | 'm' | 'g' | 'k' | 'C' | 'N' | 'M' | 'G' => {
                    return Err(bad(format!(
                        "rank {rank}: piece {c:?} is not part of Brandubh (only t, T and K)"
                    )));
                }
                _ => return Err(bad(format!("rank {rank}: unknown character {c:?}"))),
            };
            text.push(piece);
            width += 1;
        }
        flush(&mut digits, &mut width, &mut text);
        if width != SIZE as usize {
            return Err(bad(format!(
                "rank {rank} is {width} squares wide, expected {SIZE}"
            )));
        }
        ours.push(text);
    }
    ours.reverse();
    let side = match side {
        Side::White => 'w',
        Side::Black => 'b',
    };
    let text = format!("{} {side}", ours.join("/"));
    text.parse::<Position>().map_err(|e| bad(e.to_string()))
}

/// The position record of `pos` (ranks 1 to 7; the side to move is not part of it).
#[must_use]
pub fn write_position(pos: &Position) -> String {
    let text = pos.to_string();
    let placement = text.split(' ').next().unwrap_or_default();
    let mut rows: Vec<String> = placement
        .split('/')
        .map(|row| {
            row.chars()
                .map(|c| match c {
                    'A' => 't',
                    'D' => 'T',
                    other => other,
                })
                .collect()
        })
        .collect();
    rows.reverse();
    format!("/{}/", rows.join("/"))
}

/// Parses a move record: simple (`d5-f5`) or full OTN, whose piece letter (`Kd4-d1`),
/// captures (`xe4/c4`) and threat or result marks (`+`, `-`, `++`, `--`) are accepted and
/// ignored (RULES.md implies the captures). Jumps and berserk moves are refused.
pub fn parse_move(record: &str) -> Result<Move, OtnError> {
    let bad = |problem: &str| malformed("move record", record, problem);
    if record.len() > 64 {
        return Err(bad("longer than 64 bytes"));
    }
    // A piece letter comes before a square's file letter (`Kd4-d1`); `c4-c3` has none,
    // although `c` is also OTN's commander.
    let r = record.as_bytes();
    let lettered = r.len() >= 2 && b"tcnkmgTCNKMG".contains(&r[0]) && r[1].is_ascii_lowercase();
    let body = if lettered { &record[1..] } else { record };
    let b = body.as_bytes();
    let square = |i: usize| -> Option<&str> {
        let ok = b.len() >= i + 2
            && (b'a'..=b'g').contains(&b[i])
            && (b'1'..=b'7').contains(&b[i + 1])
            && !b.get(i + 2).is_some_and(u8::is_ascii_digit);
        ok.then(|| &body[i..i + 2])
    };
    let from = square(0).ok_or_else(|| bad("expected a square a1-g7 first"))?;
    if b.get(2) != Some(&b'-') || b.get(3).is_some_and(|&c| c == b'^' || c == b'=') {
        return Err(bad(
            "expected '-' after the first square (jumps and berserk moves are not Brandubh)",
        ));
    }
    let to = square(3).ok_or_else(|| bad("expected a square a1-g7 after '-'"))?;
    let rest = &body[5..];
    let tail_ok = rest.is_empty()
        || rest.starts_with('x')
            && rest[1..]
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "/+-".contains(c))
        || rest.chars().all(|c| c == '+' || c == '-');
    if !tail_ok {
        return Err(bad("unexpected text after the move"));
    }
    format!("{from}-{to}")
        .parse::<Move>()
        .map_err(|e| bad(&e.to_string()))
}

/// The move record this engine sends: the simple notation, `d5-f5`.
#[must_use]
pub fn write_move(mv: Move) -> String {
    mv.to_string()
}

/// Parses a rules string into its `key:value` settings, in order (a key without `:` has
/// an empty value). `dim` must come first and `start`/`starti` must be present.
pub fn parse_rules(rules: &str) -> Result<Vec<(String, String)>, OtnError> {
    let bad = |problem: &str| malformed("rules string", rules, problem);
    if rules.len() > MAX_LEN {
        return Err(bad("longer than 4096 bytes"));
    }
    let mut settings: Vec<(String, String)> = Vec::new();
    for token in rules.split_ascii_whitespace() {
        let (key, value) = token.split_once(':').unwrap_or((token, ""));
        if key.is_empty() || !key.chars().all(|c| c.is_ascii_lowercase()) {
            return Err(bad("a setting is not key:value with a lower-case key"));
        }
        if settings.iter().any(|(k, _)| k == key) {
            return Err(bad("a setting is given twice"));
        }
        settings.push((key.to_owned(), value.to_owned()));
    }
    if settings.first().map(|(k, _)| k.as_str()) != Some("dim") {
        return Err(bad("the board size (dim:N) must come first"));
    }
    if !settings.iter().any(|(k, _)| k == "start" || k == "starti") {
        return Err(bad("no starting position (start: or starti:)"));
    }
    Ok(settings)
}

/// How one setting is judged.
enum Judge {
    /// Must be one of these values.
    OneOf(&'static [&'static str], &'static str),
    /// Any value; not our concern (pieces Brandubh has not, a name).
    Any,
    /// Any value is played under RULES.md anyway; a value other than these is reported.
    Anyway(&'static [&'static str], &'static str),
    /// The host's King capture (`ks`), which the engine plays to: reported with its words.
    HostKing,
    /// A piece-type list: the letters among `t`, `T`, `K` must be exactly `want`.
    Pieces(&'static str, &'static str),
    /// A piece-type list: `t` and `T` must be exactly as in `want`; a King letter is
    /// played under RULES.md anyway (reported when present).
    PiecesKingAnyway(&'static str, &'static str),
    /// A piece-type list that must contain `K` (other letters do not matter).
    HasKing(&'static str),
    /// A piece-type list that must not contain `T` (other letters do not matter).
    NoDefender(&'static str),
}

/// What each known setting must be, with its default (per the OTN specification), in the
/// order they are checked.
const SETTINGS: &[(&str, &str, Judge)] = {
    use Judge::*;
    &[
        ("dim", "", OneOf(&["7"], "(Brandubh is played on 7x7)")),
        ("name", "", Any),
        (
            "esc",
            "c",
            OneOf(&["c"], "(the King escapes to a corner, not an edge)"),
        ),
        (
            "atkf",
            "y",
            OneOf(&["n"], "(White, the defenders, moves first: set atkf:n)"),
        ),
        ("ka", "y", OneOf(&["y"], "(the King is armed)")),
        ("kj", "n", OneOf(&["n"], "(the King does not jump)")),
        ("nj", "n", Any),
        ("cj", "n", Any),
        ("mj", "n", Any),
        ("gj", "n", Any),
        ("spd", "-1", OneOf(&["-1"], "(pieces move any distance)")),
        (
            "cor",
            "default",
            OneOf(
                &[
                    "default",
                    "a1,a7,g1,g7,",
                    "a1,a7,g1,g7",
                    "a1,g1,a7,g7,",
                    "a1,g1,a7,g7",
                ],
                "(the corners are a1, a7, g1, g7)",
            ),
        ),
        (
            "cen",
            "default",
            OneOf(&["default", "d4", "d4,"], "(the Castle is d4)"),
        ),
        ("afor", "", OneOf(&[""], "(Brandubh has no fortresses)")),
        ("dfor", "", OneOf(&[""], "(Brandubh has no fortresses)")),
        ("sw", "n", OneOf(&["n"], "(no shieldwall captures)")),
        ("swf", "y", Any),
        ("efe", "n", OneOf(&["n"], "(no edge-fort escape)")),
        ("linc", "n", OneOf(&["n"], "(no Linnaean capture)")),
        ("ber", "n", OneOf(&["n"], "(no berserk moves)")),
        (
            "tfr",
            "d",
            Anyway(
                &[],
                "the host ends the game at a third repetition, RULES.md at the fifth, for \
                 Black (rule 8.4): the engine avoids a third one the host would judge \
                 against it",
            ),
        ),
        ("ks", "s", HostKing),
        (
            "surf",
            "y",
            Anyway(
                &["y"],
                "Black wins by encircling all white pieces (rule 8.3)",
            ),
        ),
        (
            "corh",
            "tcnkmTCNKM",
            Pieces("tTK", "(the corners are hostile to every piece)"),
        ),
        (
            "corp",
            "K",
            Pieces("K", "(only the King may pass a corner)"),
        ),
        (
            "cors",
            "K",
            Pieces("K", "(only the King may stop on a corner)"),
        ),
        (
            "corre",
            "tcnkmTCNKM",
            HasKing("(the King must be able to reach a corner)"),
        ),
        (
            "cenp",
            "tcnkmTCNKM",
            Pieces("K", "(only the King may pass the Castle: set cenp:K)"),
        ),
        (
            "cens",
            "K",
            Pieces("K", "(only the King may stop on the Castle)"),
        ),
        (
            "cenre",
            "tcnkmTCNKM",
            HasKing("(the King may return to the Castle)"),
        ),
        (
            "cenh",
            "tcnkm",
            NoDefender("(the King's Castle is not hostile to defenders)"),
        ),
        (
            "cenhe",
            "tcnkmTCNKM",
            PiecesKingAnyway(
                "tT",
                "(the empty Castle is hostile to attackers and defenders: cenhe:tT)",
            ),
        ),
        ("aforh", "", Any),
        ("dforh", "", Any),
        ("aforp", "", Any),
        ("dforp", "", Any),
        ("afors", "", Any),
        ("dfors", "", Any),
        ("aforre", "", Any),
        ("dforre", "", Any),
    ]
};

/// Whether `key` is a setting this engine knows.
fn is_known(key: &str) -> bool {
    SETTINGS.iter().any(|(k, _, _)| *k == key)
}

fn refused(key: &str, value: &str, why: &'static str) -> OtnError {
    OtnError::Refused {
        key: key.to_owned(),
        value: value.to_owned(),
        why,
    }
}

impl Judge {
    /// Judges `key`'s `value`: refused, accepted, or accepted with a deviation to report.
    fn check(&self, key: &str, value: &str) -> Result<Option<Deviation>, OtnError> {
        let refuse = |why| Err(refused(key, value, why));
        let report = |note| {
            Ok(Some(Deviation {
                key: key.to_owned(),
                value: value.to_owned(),
                note,
            }))
        };
        match *self {
            Judge::OneOf(values, why) if !values.contains(&value) => refuse(why),
            Judge::Anyway(values, note) if !values.contains(&value) => report(note),
            Judge::HostKing => report(king_capture_words(value)),
            Judge::Pieces(want, why) if core_pieces(value, "tTK") != want => refuse(why),
            Judge::PiecesKingAnyway(want, why) if core_pieces(value, "tT") != want => refuse(why),
            Judge::PiecesKingAnyway(..) if value.contains('K') => {
                report("the empty Castle is not hostile to the King (rule 7)")
            }
            Judge::HasKing(why) if !value.contains('K') => refuse(why),
            Judge::NoDefender(why) if value.contains('T') => refuse(why),
            _ => Ok(None),
        }
    }
}

/// The letters of `list` among `t`, `T` and `K`, in that order.
fn core_pieces(list: &str, among: &str) -> String {
    among.chars().filter(|&c| list.contains(c)).collect()
}

/// Checks that `rules` describes Brandubh 2.5W closely enough to play under RULES.md.
/// Returns the settings that differ from RULES.md (the host judges those points its own
/// way; [`Deviation`]), or the first setting that makes it another game.
pub fn check_rules(rules: &str) -> Result<Vec<Deviation>, OtnError> {
    let settings = parse_rules(rules)?;
    let mut deviations = Vec::new();
    for (key, default, rule) in SETTINGS {
        let value = settings
            .iter()
            .find(|(k, _)| k == key)
            .map_or(*default, |(_, v)| v.as_str());
        deviations.extend(rule.check(key, value)?);
    }
    deviations.extend(check_start_and_unknown(&settings)?);
    Ok(deviations)
}

/// The start position must be Brandubh's; settings this engine does not know are reported.
fn check_start_and_unknown(settings: &[(String, String)]) -> Result<Vec<Deviation>, OtnError> {
    let mut deviations = Vec::new();
    for (key, value) in settings {
        if key == "start" || key == "starti" {
            let start = parse_position(value, Side::White)
                .map_err(|_| refused(key, value, "(not a 7x7 Brandubh position)"))?;
            if start != Position::start() {
                return Err(refused(
                    key,
                    value,
                    "(Brandubh starts from the standard position)",
                ));
            }
        } else if !is_known(key) {
            deviations.push(Deviation {
                key: key.clone(),
                value: value.clone(),
                note: "unknown to this engine; ignored",
            });
        }
    }
    Ok(deviations)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_translate_both_ways_with_ranks_reversed() {
        // White to move; King on a2, attackers on d7 (rank 7) and d1 (rank 1).
        let ours: Position = "3A3/7/2AD3/A3DAA/7/K2A3/3A3 w".parse().unwrap();
        let record = write_position(&ours);
        // Rank 1 comes first in OTN.
        assert_eq!(record, "/3t3/K2t3/7/t3Ttt/2tT3/7/3t3/");
        assert_eq!(parse_position(&record, Side::White).unwrap(), ours);
        let black = parse_position(&record, Side::Black).unwrap();
        assert_eq!(black.side_to_move(), Side::Black);
        // Without the slashes around it, too.
        assert_eq!(
            parse_position("3t3/K2t3/7/t3Ttt/2tT3/7/3t3", Side::White).unwrap(),
            ours
        );
    }

    #[test]
    fn bad_positions_are_refused() {
        for (record, words) in [
            ("/3t3/3t3/3T3/ttTKTtt/3T3/3t3/", "6 rows"),
            ("/3t3/3t3/3T3/ttTKTtt/3T3/3t3/3t4/", "8 squares"),
            ("/3t3/3t3/3T3/ttTKTtt/3T3/3t3/3n3/", "not part of Brandubh"),
            ("/3t3/3t3/3T3/ttTKTtt/3T3/3t3/3x3/", "unknown character"),
            ("/3t3/3t3/3T3/ttTTTtt/3T3/3t3/3t3/", "King"),
            ("/99999999999999999999t/7/7/7/7/7/7/", "wide"),
            ("", "rows"),
        ] {
            let e = parse_position(record, Side::White).unwrap_err().to_string();
            assert!(e.contains(words), "{record}: {e}");
        }
    }

    #[test]
    fn moves_parse_in_simple_and_full_notation() {
        let d5f5: Move = "d5-f5".parse().unwrap();
        for text in [
            "d5-f5",
            "Td5-f5",
            "d5-f5xf4",
            "d5-f5xf4/tg5",
            "d5-f5+",
            "Kd5-f5--",
        ] {
            assert_eq!(parse_move(text).unwrap(), d5f5, "{text}");
        }
        // Files that are also OTN piece letters (c, g).
        for (text, ours) in [("c4-c3", "c4-c3"), ("g4-g2", "g4-g2"), ("tc4-c3", "c4-c3")] {
            assert_eq!(
                parse_move(text).unwrap(),
                ours.parse::<Move>().unwrap(),
                "{text}"
            );
        }
        for text in [
            "",
            "d5",
            "d5f5",
            "d5^f5",
            "d5-h5",
            "d5-f55",
            "d5-f5 junk",
            "a10-a1",
            "d5-f5?",
            "KKd4-d1",
        ] {
            assert!(parse_move(text).is_err(), "{text}");
        }
        assert_eq!(write_move(d5f5), "d5-f5");
    }

    #[test]
    fn the_documented_rules_string_is_accepted_exactly() {
        let keys = |r: &str| -> Vec<String> {
            check_rules(r).unwrap().into_iter().map(|d| d.key).collect()
        };
        // Repetition and the King's strength cannot be said in OTN: reported.
        assert_eq!(keys(BRANDUBH_RULES), ["tfr", "ks"]);
        // The inverted start is the same (symmetric) position.
        let starti = BRANDUBH_RULES.replace("start:", "starti:");
        assert_eq!(keys(&starti), ["tfr", "ks"]);
    }

    #[test]
    fn the_hosts_king_capture_is_read_as_opentafl_reads_it() {
        let with = |ks: &str| BRANDUBH_RULES.replace("ks:c", ks);
        assert_eq!(
            host_king_capture(BRANDUBH_RULES),
            KingCapture::STRONG_NEAR_CASTLE
        );
        for (ks, want) in [
            ("ks:w", KingCapture::WEAK),
            ("ks:n", KingCapture::WEAK),
            ("ks:m", KingCapture::ENCLOSED),
            ("ks:s", KingCapture::STRONG),
            ("ks:y", KingCapture::STRONG),
            ("ks:x", KingCapture::STRONG),
            ("", KingCapture::STRONG),
        ] {
            assert_eq!(host_king_capture(&with(ks)), want, "{ks}");
        }
        // The notice says what the host does, then what RULES.md does.
        let note = check_rules(BRANDUBH_RULES).unwrap()[1].to_string();
        assert!(
            note.starts_with("ks:c (the host's King is strong on and next to"),
            "{note}"
        );
    }

    #[test]
    fn the_hosts_third_repetition_rule_is_read_as_opentafl_reads_it() {
        assert_eq!(third_repetition(BRANDUBH_RULES), ThirdRepetition::MoverWins);
        let with = |tfr: &str| BRANDUBH_RULES.replace("tfr:l", tfr);
        assert_eq!(
            third_repetition(&with("tfr:w")),
            ThirdRepetition::MoverLoses
        );
        assert_eq!(third_repetition(&with("tfr:d")), ThirdRepetition::Draw);
        assert_eq!(third_repetition(&with("tfr:i")), ThirdRepetition::Draw);
        assert_eq!(third_repetition(&with("")), ThirdRepetition::Draw);
    }

    #[test]
    fn settings_rules_md_cannot_match_are_played_anyway() {
        let rules = "dim:7 atkf:n ks:c tfr:d surf:n cenp:K cenhe:tTK start:/3t3/3t3/3T3/ttTKTtt/3T3/3t3/3t3/ zzz:1";
        let keys: Vec<String> = check_rules(rules)
            .unwrap()
            .into_iter()
            .map(|d| d.key)
            .collect();
        assert_eq!(keys, ["tfr", "ks", "surf", "cenhe", "zzz"]);
        // OpenTafl's built-in Brandub (ks:n, the centre open to all) is another game.
        let builtin = "dim:7 name:Brandub surf:n atkf:y ks:n cenh: cenhe: start:/3t3/3t3/3T3/ttTKTtt/3T3/3t3/3t3/";
        assert!(
            matches!(check_rules(builtin), Err(OtnError::Refused { key, .. }) if key == "atkf")
        );
    }

    #[test]
    fn other_games_are_refused() {
        let base = "dim:7 atkf:n ks:w cenp:K cenhe:tT";
        let start = "start:/3t3/3t3/3T3/ttTKTtt/3T3/3t3/3t3/";
        for (extra, key) in [
            ("esc:e", "esc"),
            ("ka:n", "ka"),
            ("sw:s", "sw"),
            ("ber:c", "ber"),
            ("spd:2", "spd"),
            ("cens:tTK", "cens"),
            ("corp:tK", "corp"),
            ("efe:y", "efe"),
            ("cor:a1,", "cor"),
        ] {
            let rules = format!("{base} {extra} {start}");
            match check_rules(&rules) {
                Err(OtnError::Refused { key: k, .. }) => assert_eq!(k, key, "{rules}"),
                other => panic!("{rules}: {other:?}"),
            }
        }
        let eleven = "dim:11 atkf:n start:/3ttttt3/5t5/11/t4T4t/t3TTT3t/tt1TTKTT1tt/t3TTT3t/t4T4t/11/5t5/3ttttt3/";
        assert!(matches!(check_rules(eleven), Err(OtnError::Refused { key, .. }) if key == "dim"));
        let other_start = format!("{base} start:/3t3/3t3/3T3/ttTK1tt/3T3/3t3/3t3/");
        assert!(
            matches!(check_rules(&other_start), Err(OtnError::Refused { key, .. }) if key == "start")
        );
        for bad in [
            "",
            "atkf:n dim:7 start:/7/",
            "dim:7 atkf:n",
            "dim:7 dim:7 start:x",
            "dim:7 A:b start:x",
        ] {
            assert!(
                matches!(check_rules(bad), Err(OtnError::Malformed { .. })),
                "{bad:?}"
            );
        }
    }
}
