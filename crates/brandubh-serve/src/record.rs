//! The game record the Play page shows, downloads and takes back: plain text in RULES.md
//! notation.
//!
//! ```text
//! # Brandubh game record (RULES.md notation)
//! # White: you, Black: brandubh-v1
//! start 3A3/3A3/3D3/AADKDAA/3D3/3A3/3A3 w
//! 1. d5-c5 c7-c6
//! 2. c4-c3
//! # White wins: the King escaped to a corner (rule 8.1)
//! ```
//!
//! Reading ([`parse_record`]): text after `#` is a comment; a `start POSITION` line (before
//! the first move) gives the start position, else the game starts from the start of the
//! game; every other word is a move, except move numbers (`1.`, `12...`) and `...`. Moves
//! are parsed and played only through the rules crate (`Move: FromStr`, `Game::play`), so
//! an error names the line or the move and says why in the rules' words.

use brandubh_rules::{Game, Move, Position, Side};

/// Longest record accepted, in bytes.
pub const MAX_RECORD_BYTES: usize = 32 * 1024;

/// The record of `game`: comment lines `header`, the start position, numbered move pairs,
/// and the result as a comment when the game is over.
#[must_use]
pub fn write_record(game: &Game, header: &[String]) -> String {
    let mut out = String::from("# Brandubh game record (RULES.md notation)\n");
    for line in header {
        out.push_str("# ");
        out.push_str(&brandubh_fs::one_line(line));
        out.push('\n');
    }
    out.push_str(&format!("start {}\n", game.start()));
    let mut number = 1;
    let mut line = String::new();
    for (i, mv) in game.moves().iter().enumerate() {
        let side = game.positions()[i].side_to_move();
        if line.is_empty() {
            line = format!("{number}.");
            if side == Side::Black {
                line.push_str(" ...");
            }
        }
        line.push(' ');
        line.push_str(&mv.to_string());
        if side == Side::Black {
            out.push_str(&line);
            out.push('\n');
            line.clear();
            number += 1;
        }
    }
    if !line.is_empty() {
        out.push_str(&line);
        out.push('\n');
    }
    if let Some(outcome) = game.outcome() {
        out.push_str(&format!("# {outcome}\n"));
    }
    out
}

/// The game a record describes, played through the rules; an error names the line or the
/// move and why it was refused.
pub fn parse_record(text: &str) -> Result<Game, String> {
    if text.len() > MAX_RECORD_BYTES {
        return Err(format!(
            "the record has {} bytes, at most {MAX_RECORD_BYTES} are accepted",
            text.len()
        ));
    }
    let mut start: Option<Position> = None;
    let mut moves: Vec<Move> = Vec::new();
    for (n, raw) in text.lines().enumerate() {
        let line = raw.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        if let Some(rest) = line
            .strip_prefix("start ")
            .or_else(|| line.strip_prefix("position "))
        {
            if start.is_some() || !moves.is_empty() {
                return Err(format!(
                    "record line {}: the start position must come once, before the moves",
                    n + 1
                ));
            }
            let position = rest
                .trim()
                .parse::<Position>()
                .map_err(|e| format!("record line {}: {e}", n + 1))?;
            start = Some(position);
            continue;
        }
        for word in line.split_whitespace() {
            if is_move_number(word) {
                continue;
            }
            let mv = word
                .parse::<Move>()
                .map_err(|e| format!("record line {}: {e}", n + 1))?;
            moves.push(mv);
        }
    }
    let mut game = Game::new(start.unwrap_or_default());
    for (i, &mv) in moves.iter().enumerate() {
        game.play(mv)
            .map_err(|e| format!("record move {} (ply {}): {e}", i + 1, i + 1))?;
    }
    Ok(game)
}

/// `1.`, `12...`, `...`: numbering, not moves.
fn is_move_number(word: &str) -> bool {
    let digits = word.trim_end_matches('.');
    word.ends_with('.') && digits.bytes().all(|b| b.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_written_record_reads_back_as_the_same_game() {
        let mut game = Game::default();
        for mv in ["d5-c5", "d6-e6", "c4-c3", "d7-d5"] {
            let _ = game.play(mv.parse().unwrap());
        }
        let text = write_record(&game, &["White: you".into()]);
        assert!(text.contains("1. d5-c5 d6-e6\n"), "{text}");
        assert!(text.contains("start 3A3/3A3/3D3/AADKDAA/3D3/3A3/3A3 w\n"));
        let back = parse_record(&text).unwrap();
        assert_eq!(back.moves(), game.moves());
        assert_eq!(back.position(), game.position());
    }

    #[test]
    fn a_record_from_a_black_to_move_position_numbers_from_an_ellipsis() {
        let start: Position = "3A3/3A3/2D4/AADKDAA/3D3/3A3/3A3 b".parse().unwrap();
        let mut game = Game::new(start);
        game.play("d6-e6".parse().unwrap()).unwrap();
        game.play("c5-c6".parse().unwrap()).unwrap();
        let text = write_record(&game, &[]);
        assert!(text.contains("1. ... d6-e6\n2. c5-c6\n"), "{text}");
        assert_eq!(parse_record(&text).unwrap().moves(), game.moves());
    }

    #[test]
    fn bare_moves_without_numbers_or_start_are_a_record() {
        let game = parse_record("d5-c5 d6e6").unwrap();
        assert_eq!(game.ply(), 2);
        assert_eq!(game.start(), &Position::start());
    }

    #[test]
    fn errors_name_the_line_or_move_and_give_the_rules_reason() {
        let e = parse_record("1. d5-c5\n2. zz-top").unwrap_err();
        assert!(
            e.starts_with("record line 2: malformed move \"zz-top\""),
            "{e}"
        );
        // Rule 2: pieces move along a rank or file.
        let e = parse_record("d5-c6").unwrap_err();
        assert_eq!(
            e,
            "record move 1 (ply 1): illegal move d5-c6: pieces move along a rank or file only (rule 2)"
        );
        let e = parse_record("start 3A3 w\n").unwrap_err();
        assert!(e.starts_with("record line 1: invalid position"), "{e}");
        let e = parse_record("d5-c5\nstart 3A3/3A3/3D3/AADKDAA/3D3/3A3/3A3 w").unwrap_err();
        assert!(e.contains("before the moves"), "{e}");
        let e = parse_record(&"d5-c5 ".repeat(10_000)).unwrap_err();
        assert!(e.contains("at most 32768"), "{e}");
    }
}
